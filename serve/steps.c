/* Step costs: a step's kernels (wl_core_build_serve_step) evaluated once
 * per distinct bucket and operating point, and kept.
 *
 * Buckets: the decode batch is exact (it also sets the CUDA graph's
 * padding); contexts and prompt chunks above 64 tokens fall on a grid of
 * 16 points an octave (4.4% apart). A decode step's time is affine in its
 * context between the attention kernel's tile and split steps, so the
 * context is interpolated linearly between the two grid points around it
 * (exact at every grid point and below 64); chunks and their keys take the
 * nearest point (a 2.2% error at most on those tokens' own work). A
 * generation of 400 tokens at 128 running then costs a few hundred
 * evaluations, not one per step. */
#include "serve_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GRID_LINEAR 64
#define GRID_PER_OCTAVE 16.0

typedef struct {
    uint64_t k[2];
    wl_serve_i_cost cost;
    int used;
} entry;

struct wl_serve_i_costs {
    const wl_core_gpu *gpu;
    const wl_core_model *model;
    wl_core_shape shape;
    wl_serve_engine engine;
    wl_cluster_group tp; /* the tensor-parallel group's links (n 1: none) */
    entry *tab;
    size_t cap, n;
    wl_core_op ops[64];
    size_t nops;
};

/* vLLM's capture sizes (compilation/config.py): 1, 2, 4, then every 8. */
long long wl_serve_capture_size(long long n, long long max_capture_size)
{
    if (n < 1 || n > max_capture_size)
        return 0;
    if (n <= 2)
        return n;
    if (n <= 4)
        return 4;
    long long s = (n + 7) / 8 * 8;
    return s <= max_capture_size ? s : 0;
}

static long long grid_value(long long idx)
{
    if (idx <= GRID_LINEAR)
        return idx;
    return (long long)floor(GRID_LINEAR * exp2((double)(idx - GRID_LINEAR) / GRID_PER_OCTAVE) + 0.5);
}

/* The grid index at or below x (x >= 1). */
static long long grid_floor(double x)
{
    if (x <= GRID_LINEAR)
        return (long long)floor(x);
    long long i = GRID_LINEAR + (long long)floor(GRID_PER_OCTAVE * log2(x / GRID_LINEAR));
    while ((double)grid_value(i + 1) <= x) /* rounding at the edges */
        i++;
    while (i > GRID_LINEAR && (double)grid_value(i) > x)
        i--;
    return i;
}

static long long grid_nearest(double x)
{
    long long f = grid_floor(x);
    return x - (double)grid_value(f) <= (double)grid_value(f + 1) - x ? f : f + 1;
}

int wl_serve_i_costs_create(const wl_core_gpu *gpu, const wl_core_model *model, wl_dtype dtype,
                            const wl_serve_engine *e, wl_serve_i_costs **out)
{
    wl_serve_i_costs *c = calloc(1, sizeof *c);
    if (!c)
        return WL_ENOMEM;
    c->cap = 4096;
    c->tab = calloc(c->cap, sizeof *c->tab);
    if (!c->tab) {
        free(c);
        return WL_ENOMEM;
    }
    c->gpu = gpu;
    c->model = model;
    c->shape = wl_serve_i_step_shape(dtype);
    c->engine = *e;
    if (e->tp > 1 && e->system)
        wl_cluster_group_of(e->system, e->tp, 1, &c->tp);
    else
        c->tp = (wl_cluster_group){.n = 1};
    *out = c;
    return WL_OK;
}

void wl_serve_i_costs_free(wl_serve_i_costs *c)
{
    if (!c)
        return;
    free(c->tab);
    free(c);
}

static int same_op(const wl_core_op *a, const wl_core_op *b)
{
    return a->sm_clock_mhz == b->sm_clock_mhz && a->voltage_mv == b->voltage_mv &&
           a->voltage_offset_mv == b->voltage_offset_mv &&
           a->ignore_power_limit == b->ignore_power_limit && a->power_limit_w == b->power_limit_w;
}

static int find_op(const wl_serve_i_costs *c, const wl_core_op *op, size_t *slot)
{
    for (size_t i = 0; i < c->nops; i++)
        if (same_op(&c->ops[i], op)) {
            *slot = i;
            return 1;
        }
    return 0;
}

void wl_serve_i_slots(wl_serve_i_costs *c, const wl_core_op *prefill_op,
                      const wl_core_op *decode_op, size_t *prefill_slot, size_t *decode_slot)
{
    size_t sp, sd;
    int need = !find_op(c, prefill_op, &sp) + !find_op(c, decode_op, &sd);
    if (need && c->nops + 2 > sizeof c->ops / sizeof *c->ops) { /* a long search: start over */
        memset(c->tab, 0, c->cap * sizeof *c->tab);
        c->n = 0;
        c->nops = 0;
    }
    if (!find_op(c, prefill_op, &sp)) {
        c->ops[c->nops] = *prefill_op;
        sp = c->nops++;
    }
    if (!find_op(c, decode_op, &sd)) {
        c->ops[c->nops] = *decode_op;
        sd = c->nops++;
    }
    *prefill_slot = sp;
    *decode_slot = sd;
}

static int grow(wl_serve_i_costs *c)
{
    size_t cap = c->cap * 2;
    entry *t = calloc(cap, sizeof *t);
    if (!t)
        return WL_ENOMEM;
    for (size_t i = 0; i < c->cap; i++)
        if (c->tab[i].used) {
            size_t h = (size_t)(wl_serve_i_mix64(c->tab[i].k[0] ^ wl_serve_i_mix64(c->tab[i].k[1])) & (cap - 1));
            while (t[h].used)
                h = (h + 1) & (cap - 1);
            t[h] = c->tab[i];
        }
    free(c->tab);
    c->tab = t;
    c->cap = cap;
    return WL_OK;
}

wl_core_shape wl_serve_i_step_shape(wl_dtype dtype)
{
    return (wl_core_shape){.batch = 1, .seq = 1, .dtype = dtype, .attention = WL_ATTN_FLASH,
                           .mode = WL_MODE_DECODE, .gen = 2, .launch = WL_LAUNCH_GRAPHS,
                           .impl = WL_IMPL_FUSED};
}

/* vLLM's all-reduce of `bytes` over the tensor-parallel group (vLLM 0.11,
 * distributed/device_communicators/cuda_communicator.py all_reduce): its
 * custom all-reduce for tensors under 8 MB on fully connected NVLink
 * (custom_all_reduce.py should_custom_ar, max_size 8 MB), whose kernel
 * (csrc/custom_all_reduce.cuh) is one-shot (each rank reads every peer's
 * whole buffer over its links: alpha + (n - 1) S / B) for two ranks, under
 * 512 KB at four or fewer and under 256 KB at eight or fewer, else two-shot
 * (a reduce-scatter and an all-gather through the peers' buffers: 2 alpha
 * + 2 (n - 1) / n S / B); larger tensors go to NCCL, whose ring and tree
 * cost is cluster/'s (wl_cluster_coll_time; its symmetric-memory path,
 * where enabled, is taken at NCCL's cost). A PCIe fabric is not fully
 * connected: NCCL at every size. alpha is the fabric's latency, B the
 * bandwidth collectives reach on it. */
#define CUSTOM_AR_MAX_BYTES (8.0 * 1024 * 1024)
static double all_reduce_s(const wl_cluster_group *g, const wl_cluster_system *sys, double bytes)
{
    double n = g->n, a = g->alpha_us * 1e-6, B = g->bw_gbs * 1e9;
    if (g->n <= 1 || bytes <= 0)
        return 0;
    int nvlink = sys && strcmp(sys->fabric, "pcie") != 0 && g->per_node >= g->n;
    if (!nvlink || bytes >= CUSTOM_AR_MAX_BYTES)
        return wl_cluster_coll_time(g, WL_COLL_ALL_REDUCE, bytes);
    int one = g->n == 2 || (g->n <= 4 && bytes < 512.0 * 1024) || (g->n <= 8 && bytes < 256.0 * 1024);
    return one ? a + (n - 1) * bytes / B : 2 * a + 2 * (n - 1) / n * bytes / B;
}

/* A step's tensor-parallel collectives (vLLM's model code): the
 * vocabulary-parallel embedding's all-reduce, then per layer the
 * row-parallel o_proj's and down projection's (2 layers + 1 all-reduces of
 * the step's tokens x d_model, the CUDA graph's padded tokens when it runs
 * one), and the LM head's logits gathered (LogitsProcessor: an all-gather
 * under V1) for the sampled rows over the padded vocabulary. */
static double tp_comm_s(const wl_serve_i_costs *c, long long tokens, long long sampled)
{
    const wl_cluster_group *g = &c->tp;
    if (g->n <= 1)
        return 0;
    const wl_core_model *m = c->model;
    double eb = wl_dtype_bytes(wl_core_serve_act_dtype(c->shape.dtype));
    double ar = all_reduce_s(g, c->engine.system, (double)tokens * m->d_model * eb);
    double vocab = (double)wl_core_serve_vocab(m);
    double gather = sampled > 0 ? wl_cluster_coll_time(g, WL_COLL_ALL_GATHER,
                                                       (double)sampled * vocab * eb)
                                : 0;
    return (2.0 * m->layers + 1) * ar + gather;
}

/* One grid point: decode sequences at ctx keys, a chunk of prompt tokens at
 * cc keys. */
static int point(wl_serve_i_costs *c, size_t slot, long long decode, long long ctx,
                 long long chunk, long long cc, long long prefills, long long finishing,
                 wl_serve_i_cost *out, wl_error *err)
{
    uint64_t k0 = (uint64_t)slot | (uint64_t)decode << 8 | (uint64_t)ctx << 36;
    uint64_t k1 = (uint64_t)chunk | (uint64_t)cc << 24 | (uint64_t)prefills << 48 |
                  (uint64_t)(finishing > 15 ? 15 : finishing) << 60;
    size_t h = (size_t)(wl_serve_i_mix64(k0 ^ wl_serve_i_mix64(k1)) & (c->cap - 1));
    while (c->tab[h].used) {
        if (c->tab[h].k[0] == k0 && c->tab[h].k[1] == k1) {
            *out = c->tab[h].cost;
            return WL_OK;
        }
        h = (h + 1) & (c->cap - 1);
    }
    const wl_serve_engine *e = &c->engine;
    long long pad = chunk == 0 ? wl_serve_capture_size(decode, e->max_capture_size) : 0;
    wl_core_serve_step st = {
        .decode = decode, .context = ctx, .chunk = chunk, .chunk_context = cc,
        .prefills = prefills, .padded = pad, .sampled = decode + finishing,
        .seqs = decode + prefills, .graph = pad > 0, .host_step = !e->async_scheduling,
        .sampler = e->sampler, .penalties = e->penalties, .tp = e->tp, .ep = e->ep};
    wl_core_workload *wl = NULL;
    wl_core_evaluator *ev = NULL;
    wl_core_result r;
    int rc = wl_core_build_serve_step(c->model, &c->shape, &st, &wl, err);
    if (!rc && (rc = wl_core_evaluator_create(c->gpu, wl, NULL, &ev)))
        wl_error_set(err, c->model->id, 0, "step", "out of memory for a step's evaluator");
    if (!rc)
        rc = wl_core_evaluator_run(ev, &c->ops[slot], &r);
    wl_core_evaluator_free(ev);
    wl_core_workload_free(wl);
    if (rc) {
        if (!err->text[0])
            wl_error_set(err, c->model->id, 0, "step", "a step could not be evaluated");
        return rc;
    }
    /* the collectives in the step, on the GPU between its kernels at the
     * GPU's idle power (cluster/'s rule for collectives) */
    double comm = tp_comm_s(c, pad > 0 ? pad : decode + chunk, decode + finishing);
    *out = (wl_serve_i_cost){
        .time_s = r.time_ms / 1e3 + comm,
        .energy_j = r.energy_j + comm * wl_core_gpu_idle_w(c->gpu, r.effective_clock_mhz),
        .clock_mhz = r.effective_clock_mhz, .comm_s = comm, .throttled = r.throttled};
    if (2 * (c->n + 1) > c->cap && grow(c))
        return WL_OK; /* not kept: the next ask evaluates again */
    h = (size_t)(wl_serve_i_mix64(k0 ^ wl_serve_i_mix64(k1)) & (c->cap - 1));
    while (c->tab[h].used)
        h = (h + 1) & (c->cap - 1);
    c->tab[h] = (entry){.k = {k0, k1}, .cost = *out, .used = 1};
    c->n++;
    return WL_OK;
}

int wl_serve_i_step(wl_serve_i_costs *c, size_t slot, const wl_serve_i_shape *sh,
                    wl_serve_i_cost *out, wl_error *err)
{
    long long chunk = 0, cc = 0, pre = sh->prefills > 4095 ? 4095 : sh->prefills;
    if (sh->chunk > 0) {
        chunk = grid_value(grid_nearest((double)sh->chunk));
        cc = grid_value(grid_nearest(sh->chunk_context));
        long long least = (chunk + pre - 1) / (pre > 0 ? pre : 1);
        if (cc < least)
            cc = least;
    } else {
        pre = 0;
    }
    if (sh->decode == 0)
        return point(c, slot, 0, 0, chunk, cc, pre, sh->finishing, out, err);
    double x = sh->context < 1 ? 1 : sh->context;
    long long f = grid_floor(x), lo = grid_value(f), hi = grid_value(f + 1);
    wl_serve_i_cost a, b;
    int rc = point(c, slot, sh->decode, lo, chunk, cc, pre, sh->finishing, &a, err);
    if (rc || x == (double)lo) {
        *out = a;
        return rc;
    }
    rc = point(c, slot, sh->decode, hi, chunk, cc, pre, sh->finishing, &b, err);
    double w = (x - (double)lo) / (double)(hi - lo);
    *out = (wl_serve_i_cost){.time_s = a.time_s + w * (b.time_s - a.time_s),
                             .energy_j = a.energy_j + w * (b.energy_j - a.energy_j),
                             .clock_mhz = a.clock_mhz + w * (b.clock_mhz - a.clock_mhz),
                             .comm_s = a.comm_s + w * (b.comm_s - a.comm_s),
                             .throttled = a.throttled || b.throttled};
    return rc;
}
