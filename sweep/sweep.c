/* Sweep plans: columns, fingerprints, the rows a slice writes, shard
 * lines, tallies, and the evaluation of a chunk into formatted rows (the
 * combinations as cases are in combo.c, what a thread keeps across chunks
 * in scratch.c, the threads and the writer in run.c). */
#include "sweep_internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- columns ------------------------------------------------------------------- */

/* Parameter columns, then the results: one vocabulary for predict, sweep
 * and everything that reads them. */
enum { R_CLOCK, R_EFF, R_VOLT, R_FEAS, R_THR, R_TIME, R_POWER, R_ENERGY, R_DYNC, R_DYNM,
       R_STATIC, R_LAUNCH, R_MEM, R_FITS, R_COUNT };
static const wl_results_col result_cols[R_COUNT] = {
    WL_RESULTS_COL("sm_clock_mhz", WL_COL_NUM, 1, 0),        WL_RESULTS_COL("effective_clock_mhz", WL_COL_NUM, 1, 0),
    WL_RESULTS_COL("voltage_mv", WL_COL_NUM, 1, 0),          WL_RESULTS_COL("feasible", WL_COL_BOOL, 0, 0),
    WL_RESULTS_COL("throttled", WL_COL_BOOL, 0, 0),          WL_RESULTS_COL("time_ms", WL_COL_NUM, 5, 0),
    WL_RESULTS_COL("power_w", WL_COL_NUM, 3, 0),             WL_RESULTS_COL("energy_j", WL_COL_NUM, 6, 0),
    WL_RESULTS_COL("energy_dyn_compute_j", WL_COL_NUM, 6, 0), WL_RESULTS_COL("energy_dyn_memory_j", WL_COL_NUM, 6, 0),
    WL_RESULTS_COL("energy_static_j", WL_COL_NUM, 6, 0),     WL_RESULTS_COL("launch_bound_pct", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("memory_gb", WL_COL_NUM, 3, 0),           WL_RESULTS_COL("fits", WL_COL_BOOL, 0, 0)};
static const wl_results_col iv_cols[6] = {
    WL_RESULTS_COL("time_lo_ms", WL_COL_NUM, 5, 0),  WL_RESULTS_COL("time_hi_ms", WL_COL_NUM, 5, 0),
    WL_RESULTS_COL("power_lo_w", WL_COL_NUM, 3, 0),  WL_RESULTS_COL("power_hi_w", WL_COL_NUM, 3, 0),
    WL_RESULTS_COL("energy_lo_j", WL_COL_NUM, 6, 0), WL_RESULTS_COL("energy_hi_j", WL_COL_NUM, 6, 0)};
/* Training and generation results, present when the sweep has the mode. */
enum { T_FWD, T_BWD, T_OPT, T_EFWD, T_EBWD, T_EOPT, T_MICRO, T_MODEL, T_HW, T_MFU, T_WEIGHTS,
       T_MASTER, T_GRADS, T_OPTST, T_ACT, T_TRAINABLE, T_COUNT };
static const wl_results_col train_cols[T_COUNT] = {
    WL_RESULTS_COL("time_fwd_ms", WL_COL_NUM, 5, 0),     WL_RESULTS_COL("time_bwd_ms", WL_COL_NUM, 5, 0),
    WL_RESULTS_COL("time_opt_ms", WL_COL_NUM, 5, 0),     WL_RESULTS_COL("energy_fwd_j", WL_COL_NUM, 6, 0),
    WL_RESULTS_COL("energy_bwd_j", WL_COL_NUM, 6, 0),    WL_RESULTS_COL("energy_opt_j", WL_COL_NUM, 6, 0),
    WL_RESULTS_COL("micro_batches", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("model_tflop", WL_COL_NUM, 6, 0),     WL_RESULTS_COL("hardware_tflop", WL_COL_NUM, 6, 0),
    WL_RESULTS_COL("mfu", WL_COL_NUM, 4, 0),             WL_RESULTS_COL("weights_gb", WL_COL_NUM, 3, 0),
    WL_RESULTS_COL("master_gb", WL_COL_NUM, 3, 0),       WL_RESULTS_COL("grads_gb", WL_COL_NUM, 3, 0),
    WL_RESULTS_COL("optimizer_gb", WL_COL_NUM, 3, 0),    WL_RESULTS_COL("activations_gb", WL_COL_NUM, 3, 0),
    WL_RESULTS_COL("trainable_params_m", WL_COL_NUM, 3, 0)};
enum { D_TTFT, D_TPOT, D_EPT, D_KV, D_EPRE, D_EDEC, D_COUNT };
static const wl_results_col decode_cols[D_COUNT] = {
    WL_RESULTS_COL("ttft_ms", WL_COL_NUM, 5, 0),           WL_RESULTS_COL("tpot_ms", WL_COL_NUM, 5, 0),
    WL_RESULTS_COL("energy_per_token_j", WL_COL_NUM, 6, 0), WL_RESULTS_COL("kv_cache_gb", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("energy_prefill_j", WL_COL_NUM, 6, 0),   WL_RESULTS_COL("energy_decode_j", WL_COL_NUM, 6, 0)};

int wl_sweep_spec_has_mode(const wl_sweep_spec *s, wl_mode m)
{
    for (size_t i = 0; i < s->nmode; i++)
        if (s->modes[i] == m)
            return 1;
    return 0;
}

static const wl_results_col class_cols[7] = {
    WL_RESULTS_COL("kernel_class", WL_COL_TEXT, 0, 15),    WL_RESULTS_COL("class_launches", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("class_time_ms", WL_COL_NUM, 6, 0),     WL_RESULTS_COL("class_dyn_energy_j", WL_COL_NUM, 7, 0),
    WL_RESULTS_COL("class_energy_j", WL_COL_NUM, 7, 0),    WL_RESULTS_COL_SIG("class_gflop", 3),
    WL_RESULTS_COL("class_dram_gb", WL_COL_NUM, 6, 0)};

/* ---- plans ----------------------------------------------------------------------- */

/* A chunk, the unit a thread evaluates and the writer takes in order, is
 * one outer combination's voltages x clocks, cut in pieces of at most
 * this many points: its rows are formatted in memory before they are
 * written, and a million clocks would make one chunk of 300 MB. */
#define PIECE_POINTS 4096ULL

struct wl_sweep_plan {
    const wl_sweep_spec *s;
    wl_sweep_options o;
    wl_results_col *cols;
    size_t ncols, nparam;  /* columns before sm_clock_mhz */
    wl_results_writer *w;
    size_t train_at, decode_at;    /* first training / decode column (0: none) */
    size_t ept_at;                 /* energy_per_token_j (0: none) */
    unsigned long long lo, hi;     /* points of this slice */
    unsigned long long o_lo, o_hi; /* outer combinations touching it */
    unsigned long long pieces;     /* chunks per outer combination (PIECE_POINTS) */
    unsigned long long rows;       /* rows this slice writes */
    uint64_t fingerprint;
    volatile sig_atomic_t *stop;   /* polled between points (NULL: none) */
    FILE *out;                     /* the stream begun on */
};

void wl_sweep_plan_set_stop(wl_sweep_plan *p, volatile sig_atomic_t *stop) { p->stop = stop; }

static uint64_t fnv_str(uint64_t h, const char *s) { return wl_sweep_hash(h, s, strlen(s) + 1); }

static uint64_t fnv_nums(uint64_t h, const wl_core_numlist *l)
{
    for (size_t i = 0; i < l->n; i++) {
        char t[40];
        snprintf(t, sizeof t, "%.17g", l->v[i]);
        h = fnv_str(h, t);
    }
    return fnv_str(h, "|");
}

/* Everything that decides the output, so that shards of different sweeps
 * are never merged. */
static uint64_t fingerprint(const wl_sweep_plan *p)
{
    const wl_sweep_spec *s = p->s;
    uint64_t h = fnv_str(WL_SWEEP_HASH_BASIS, "wattlas " WL_VERSION);
    for (size_t i = 0; i < p->ncols; i++)
        h = fnv_str(h, p->cols[i].name);
    const wl_core_strlist *names[5] = {&s->gpus, &s->models, &s->traces, &s->idle, &s->host};
    for (int k = 0; k < 5; k++) {
        for (size_t i = 0; i < names[k]->n; i++)
            h = fnv_str(h, names[k]->v[i]);
        h = fnv_str(h, "|");
    }
    const wl_core_numlist *nums[5] = {&s->batch, &s->seq, &s->clocks, &s->voff, &s->vfix};
    for (int k = 0; k < 5; k++)
        h = fnv_nums(h, nums[k]);
    for (size_t k = 0; k < s->nset; k++)
        h = fnv_nums(fnv_str(h, s->set[k].key), &s->set[k].vals);
    h = wl_sweep_hash(h, s->dtypes, s->ndt * sizeof *s->dtypes);
    h = wl_sweep_hash(h, s->attn, s->nattn * sizeof *s->attn);
    h = wl_sweep_hash(h, s->modes, s->nmode * sizeof *s->modes);
    long long topts[12] = {s->opts.optimizer, s->opts.master_none, s->opts.recompute,
                           s->opts.grad_accum, s->opts.gen, s->opts.launch,
                           s->opts.stack, s->opts.impl, s->opts.finetune, s->opts.lora_rank,
                           s->opts.lora_targets, s->opts.freeze};
    h = wl_sweep_hash(h, topts, sizeof topts);
    int opts[5] = {(int)s->scope, s->classes, s->no_power_limit, (int)p->o.format,
                   (int)lround(s->level * 1e6)};
    h = wl_sweep_hash(h, opts, sizeof opts);
    h = wl_sweep_hash(h, &s->learned_hash, sizeof s->learned_hash);
    return fnv_str(h, wl_core_latency_name(s->lat));
}

static int make_columns(wl_sweep_plan *p)
{
    const wl_sweep_spec *s = p->s;
    size_t n = 1 + s->nset + 8 + 1 + R_COUNT + (s->level > 0 ? 6 : 0) + T_COUNT + D_COUNT + 1 +
               (s->classes ? 7 : 0);
    p->cols = calloc(n, sizeof *p->cols);
    if (!p->cols)
        return WL_ENOMEM;
    size_t k = 0;
    p->cols[k++] = (wl_results_col)WL_RESULTS_COL("gpu", WL_COL_TEXT, 0, 14);
    for (size_t i = 0; i < s->nset; i++)
        p->cols[k++] = (wl_results_col)WL_RESULTS_COL(s->set[i].key, WL_COL_NUM, -1, 0);
    p->cols[k++] = (wl_results_col)WL_RESULTS_COL("model", WL_COL_TEXT, 0, 10);
    p->cols[k++] = (wl_results_col)WL_RESULTS_COL("batch", WL_COL_INT, 0, 0);
    p->cols[k++] = (wl_results_col)WL_RESULTS_COL("seq", WL_COL_INT, 0, 0);
    p->cols[k++] = (wl_results_col)WL_RESULTS_COL("dtype", WL_COL_TEXT, 0, 5);
    p->cols[k++] = (wl_results_col)WL_RESULTS_COL("attention", WL_COL_TEXT, 0, 0);
    p->cols[k++] = (wl_results_col)WL_RESULTS_COL("mode", WL_COL_TEXT, 0, 0);
    p->cols[k++] = (wl_results_col)WL_RESULTS_COL("scope", WL_COL_TEXT, 0, 0);
    p->cols[k++] = s->vfix.n ? (wl_results_col)WL_RESULTS_COL("fixed_voltage_mv", WL_COL_NUM, 1, 0)
                             : (wl_results_col)WL_RESULTS_COL("voltage_offset_mv", WL_COL_NUM, 1, 0);
    p->nparam = k;
    for (size_t i = 0; i < R_COUNT; i++)
        p->cols[k++] = result_cols[i];
    for (size_t i = 0; s->level > 0 && i < 6; i++)
        p->cols[k++] = iv_cols[i];
    p->train_at = p->decode_at = 0;
    if (wl_sweep_spec_has_mode(s, WL_MODE_TRAIN)) {
        p->train_at = k;
        for (size_t i = 0; i < T_COUNT; i++)
            p->cols[k++] = train_cols[i];
    }
    p->ept_at = 0;
    if (wl_sweep_spec_has_mode(s, WL_MODE_DECODE)) {
        p->decode_at = k;
        p->ept_at = k + D_EPT;
        for (size_t i = 0; i < D_COUNT; i++)
            p->cols[k++] = decode_cols[i];
    } else if (wl_sweep_spec_has_mode(s, WL_MODE_PREFILL)) {
        /* a prompt's energy per token decides between GPUs as decode's does */
        p->ept_at = k;
        p->cols[k++] = decode_cols[D_EPT];
    }
    for (size_t i = 0; s->classes && i < 7; i++)
        p->cols[k++] = class_cols[i];
    p->ncols = k;
    /* a table shows only the parameters that vary (a title names the rest) */
    if (p->o.format == WL_FMT_TABLE) {
        static const char *const axis[8] = {"model", "batch", "seq", "dtype", "attention", "mode",
                                            "scope", "voltage"};
        size_t j = 0;
        p->cols[j++].table_hide = s->gpus.n == 1;
        for (size_t i = 0; i < s->nset; i++)
            p->cols[j++].table_hide = s->set[i].vals.n == 1;
        for (int i = 0; i < 8; i++)
            p->cols[j++].table_hide = wl_sweep_spec_axis_count(s, axis[i]) <= 1;
        /* a row per kernel class: the point's clock, time, power and
         * energy (on its first class row only) beside the class's columns,
         * so that the table fits a terminal; the rest is in csv */
        for (size_t i = p->nparam; s->classes && i + 7 < p->ncols; i++) {
            size_t r = i - p->nparam;
            p->cols[i].table_hide = !(r == R_CLOCK || r == R_EFF || r == R_TIME ||
                                      r == R_POWER || r == R_ENERGY);
        }
    }
    return WL_OK;
}

/* Kernel classes present in a workload (rows per point at kernel scope). */
static int classes_present(const wl_core_workload *wl, int *present)
{
    int n = 0;
    memset(present, 0, WL_CLASS_COUNT * sizeof *present);
    for (size_t i = 0; i < wl_core_workload_count(wl); i++) {
        int c = wl_core_kernel_class(wl_core_workload_kernel(wl, i));
        if (!present[c])
            present[c] = 1, n++;
    }
    return n;
}

/* Points of outer combination oi with an index in [lo, hi) that exist: the
 * first gclk[gpu].n of each voltage's stride of maxclk. */
static unsigned long long present_points(const wl_sweep_spec *s, unsigned long long oi,
                                         size_t gpu, unsigned long long lo, unsigned long long hi)
{
    unsigned long long n = 0, base = oi * wl_sweep_i_n_inner(s);
    for (size_t vi = 0; vi < wl_sweep_i_volts(s)->n; vi++) {
        unsigned long long a = base + vi * s->maxclk, b = a + s->gclk[gpu].n;
        if (a < lo)
            a = lo;
        if (b > hi)
            b = hi;
        n += b > a ? b - a : 0;
    }
    return n;
}

/* Outer combinations o in [lo, hi) with o % m == r. */
static unsigned long long count_mod(unsigned long long lo, unsigned long long hi,
                                    unsigned long long m, unsigned long long r)
{
    /* those below x: (x - r - 1) / m + 1 when x > r */
    unsigned long long a = lo > r ? (lo - r - 1) / m + 1 : 0, b = hi > r ? (hi - r - 1) / m + 1 : 0;
    return b > a ? b - a : 0;
}

/* Rows the slice writes: points, or points x classes at kernel scope. In
 * closed form, not combination by combination (a --set grid may have 10^10
 * of them): the GPU is the outermost index, so a GPU's combinations are
 * one range, each with voltages x that GPU's clocks, but for the slice's
 * first and last, which may be cut; at kernel scope each shape (the
 * innermost index, shared by every GPU and variant) has its own classes. */
static int count_rows(wl_sweep_plan *p, wl_error *err)
{
    const wl_sweep_spec *s = p->s;
    unsigned long long per_gpu = wl_sweep_i_n_outer_per_gpu(s);
    unsigned long long m = s->classes ? per_gpu / wl_sweep_i_n_variants(s) : 1;
    unsigned long long nvolt = wl_sweep_i_volts(s)->n;
    p->rows = 0;
    for (unsigned long long r = 0; r < m; r++) {
        unsigned long long ncls = 1;
        if (s->classes) {
            combo c;
            wl_sweep_i_decode(s, r, &c);
            wl_core_workload *wl = NULL;
            int own = 0, present[WL_CLASS_COUNT];
            int rc = wl_sweep_i_shape_workload(s, &c, &wl, &own, err);
            if (rc)
                return rc;
            ncls = (unsigned long long)classes_present(wl, present);
            if (own)
                wl_core_workload_free(wl);
        }
        for (size_t g = 0; g < s->gpus.n; g++) {
            unsigned long long a = g * per_gpu, b = a + per_gpu;
            if (a < p->o_lo)
                a = p->o_lo;
            if (b > p->o_hi)
                b = p->o_hi;
            if (a >= b)
                continue;
            unsigned long long pts = 0;
            if (a % m == r)
                pts += present_points(s, a, g, p->lo, p->hi);
            if (b - 1 > a && (b - 1) % m == r)
                pts += present_points(s, b - 1, g, p->lo, p->hi);
            if (b - a > 2)
                pts += count_mod(a + 1, b - 1, m, r) * nvolt * s->gclk[g].n;
            p->rows += pts * ncls;
        }
    }
    return WL_OK;
}

int wl_sweep_plan_create(const wl_sweep_spec *s, const wl_sweep_options *o,
                         wl_sweep_plan **out, wl_error *err)
{
    *out = NULL;
    if (!s->finished) {
        wl_error_set(err, "sweep", 0, "", "the spec is not finished");
        return WL_EINVAL;
    }
    unsigned sc = o->shard_count ? o->shard_count : 1;
    if (o->shard_index > sc || (o->shard_count && !o->shard_index)) {
        wl_error_set(err, "sweep", 0, "shard", "shard %u/%u: expected 1 <= I <= N", o->shard_index,
                     o->shard_count);
        return WL_EINVAL;
    }
    if (o->shard_count && (o->format == WL_FMT_JSON || o->format == WL_FMT_TABLE)) {
        wl_error_set(err, "sweep", 0, "shard", "shards are written as csv or ndjson, not %s",
                     wl_results_format_name(o->format));
        return WL_EINVAL;
    }
    wl_sweep_plan *p = calloc(1, sizeof *p);
    if (!p)
        return WL_ENOMEM;
    p->s = s;
    p->o = *o;
    int rc = make_columns(p);
    if (!rc)
        rc = wl_results_writer_create(NULL, o->format, p->cols, p->ncols, &p->w);
    if (rc) {
        wl_sweep_plan_free(p);
        return rc;
    }
    unsigned long long total = wl_sweep_spec_points(s), ni = wl_sweep_i_n_inner(s);
    unsigned idx = o->shard_count ? o->shard_index - 1 : 0;
    /* contiguous slices, so shard outputs concatenate to the full run */
    p->lo = (unsigned long long)((long double)total * idx / sc);
    p->hi = (unsigned long long)((long double)total * (idx + 1) / sc);
    p->o_lo = p->lo / ni;
    p->o_hi = p->hi > p->lo ? (p->hi - 1) / ni + 1 : p->o_lo;
    p->pieces = ni > PIECE_POINTS ? (ni + PIECE_POINTS - 1) / PIECE_POINTS : 1;
    p->fingerprint = fingerprint(p);
    if ((rc = count_rows(p, err))) {
        wl_sweep_plan_free(p);
        return rc;
    }
    *out = p;
    return WL_OK;
}

void wl_sweep_plan_free(wl_sweep_plan *p)
{
    if (!p)
        return;
    wl_results_writer_free(p->w);
    free(p->cols);
    free(p);
}

unsigned long long wl_sweep_plan_chunks(const wl_sweep_plan *p)
{
    return (p->o_hi - p->o_lo) * p->pieces;
}
unsigned long long wl_sweep_plan_points(const wl_sweep_plan *p) { return p->hi - p->lo; }
wl_results_writer *wl_sweep_plan_writer(wl_sweep_plan *p) { return p->w; }

void wl_sweep_plan_finish(wl_sweep_plan *p)
{
    unsigned long long lines = 0;
    uint64_t h = p->w ? wl_results_writer_rows_hash(p->w, &lines) : 0;
    wl_results_writer_finish(p->w);
    p->w = NULL;
    if (p->o.shard_count && p->out && lines == p->rows)
        wl_sweep_shard_end(p->out, lines, h);
}

void wl_sweep_shard_end(FILE *out, unsigned long long rows, uint64_t hash)
{
    fprintf(out, SHARD_TAG "-end rows=%llu fnv1a64=%016llx\n", rows, (unsigned long long)hash);
}

void wl_sweep_shard_line(FILE *out, unsigned index, unsigned count, uint64_t fingerprint,
                         unsigned long long lo, unsigned long long hi, unsigned long long total,
                         unsigned long long rows, wl_results_format format)
{
    fprintf(out, SHARD_TAG " %u/%u sweep=%016llx points=%llu-%llu/%llu rows=%llu format=%s\n", index,
            count, (unsigned long long)fingerprint, lo, hi, total, rows, wl_results_format_name(format));
}

static void param_cells(const wl_sweep_plan *p, const combo *c, const wl_core_gpu *g,
                        wl_results_cell *cells);

/* A table leaves out the parameters that do not vary: one line names them
 * and their values, as the first combination's cells give them ("# gpu
 * a100-pcie-40gb, model gpt2, batch 1, ..."). */
static void constants_line(const wl_sweep_plan *p, FILE *out)
{
    const wl_sweep_spec *s = p->s;
    wl_results_cell cells[MAX_SET + 16];
    if (p->nparam > sizeof cells / sizeof *cells)
        return;
    combo c;
    wl_sweep_i_decode(s, 0, &c);
    wl_core_gpu g;
    wl_error e = {0};
    if (wl_sweep_i_variant_gpu(s, c.gpu, c.variant, &g, &e))
        return;
    param_cells(p, &c, &g, cells);
    cells[p->nparam - 1] = (wl_results_cell){NULL, wl_sweep_i_volts(s)->v[0]};
    wl_results_buf b = {0};
    for (size_t i = 0; i < p->nparam; i++) {
        char t[WL_RESULTS_NUM_MAX];
        const char *v = cells[i].s;
        if (!v && !isnan(cells[i].v) &&
            wl_results_fmt(t, sizeof t, cells[i].v, p->cols[i].decimals < 0 ? 0 : p->cols[i].decimals) > 0)
            v = t;
        if (!p->cols[i].table_hide || !v) /* shown, or empty (a vision model's seq) */
            continue;
        wl_results_buf_puts(&b, b.n ? ", " : "# ");
        wl_results_buf_puts(&b, p->cols[i].name);
        wl_results_buf_put(&b, " ", 1);
        wl_results_buf_puts(&b, v);
    }
    if (b.n && !b.oom) {
        wl_results_buf_put(&b, "\n", 1);
        fwrite(b.p, 1, b.n, out);
    }
    wl_results_buf_free(&b);
}

void wl_sweep_plan_begin(wl_sweep_plan *p, FILE *out)
{
    wl_results_writer_set_stream(p->w, out);
    p->out = out;
    if (p->o.shard_count)
        wl_sweep_shard_line(out, p->o.shard_index, p->o.shard_count, p->fingerprint, p->lo, p->hi,
                            wl_sweep_spec_points(p->s), p->rows, p->o.format);
    if (p->o.format == WL_FMT_TABLE && !p->o.no_constants_line)
        constants_line(p, out);
    wl_results_writer_header(p->w);
    if (p->o.shard_count)
        wl_results_writer_hash_rows(p->w);
}

/* ---- tallies -------------------------------------------------------------------------- */

void wl_sweep_tally_init(wl_sweep_tally *t)
{
    memset(t, 0, sizeof *t);
    t->best_energy_j = t->best_time_ms = t->best_clock_mhz = NAN;
}

void wl_sweep_tally_add(wl_sweep_tally *t, const wl_sweep_tally *part)
{
    t->points += part->points;
    t->throttled += part->throttled;
    t->unfit += part->unfit;
    t->learned_outside += part->learned_outside;
    /* the first point of least energy: later ties do not replace it */
    if (!isnan(part->best_energy_j) &&
        (isnan(t->best_energy_j) || part->best_energy_j < t->best_energy_j)) {
        t->best_energy_j = part->best_energy_j;
        t->best_time_ms = part->best_time_ms;
        t->best_clock_mhz = part->best_clock_mhz;
    }
}

/* ---- evaluating a chunk ------------------------------------------------------------ */


/* The parameter cells of a combination (the first p->nparam columns, less
 * the voltage, which the caller fills). */
static void param_cells(const wl_sweep_plan *p, const combo *c, const wl_core_gpu *g,
                        wl_results_cell *cells)
{
    const wl_sweep_spec *s = p->s;
    size_t k = 0;
    cells[k++] = (wl_results_cell){g->id, NAN};
    for (size_t i = 0; i < s->nset; i++)
        cells[k++] = (wl_results_cell){NULL, s->set[i].vals.v[c->setidx[i]]};
    cells[k++] = (wl_results_cell){wl_sweep_i_workload_name(s, c), NAN};
    int traced = s->traces.n > 0;
    int vision = !traced && wl_core_model_is_vision(&s->model[c->wl]);
    cells[k++] = (wl_results_cell){NULL, traced ? NAN : s->batch.v[c->b]};
    cells[k++] = (wl_results_cell){NULL, traced || vision ? NAN : s->seq.v[c->sq]};
    cells[k++] = (wl_results_cell){wl_dtype_name(wl_sweep_i_combo_dtype(s, c)), NAN};
    cells[k++] = (wl_results_cell){traced ? NULL : wl_attention_name(s->attn[c->at]), NAN};
    cells[k++] = (wl_results_cell){wl_mode_name(wl_sweep_i_combo_mode(s, c)), NAN};
    /* what one row's time and energy cover: the whole pass, one decoder
     * layer (a ResNet has no such layer: the whole pass), or the pass with
     * a row per kernel class */
    cells[k++] = (wl_results_cell){s->classes ? "kernel"
                                   : wl_sweep_core_scope(s->scope) != WL_SCOPE_MODEL && !traced &&
                                           s->model[c->wl].style != WL_STYLE_RESNET
                                       ? (s->scope == WL_SWEEP_LAYER ? "layer" : "layer-in-model")
                                       : "model",
                                   NAN};
}

static void result_cells(const wl_core_result *r, int feasible, double memory_gb, int fits,
                         wl_results_cell *cells)
{
    const double v[R_COUNT] = {r->requested_clock_mhz, r->effective_clock_mhz, r->voltage_mv,
                               feasible, r->throttled, r->time_ms, r->power_w, r->energy_j,
                               r->energy_dyn_compute_j, r->energy_dyn_memory_j,
                               r->energy_static_j, 100.0 * r->launch_bound_frac,
                               memory_gb, fits < 0 ? NAN : (double)fits};
    for (int i = 0; i < R_COUNT; i++)
        cells[i] = (wl_results_cell){NULL, v[i]};
}

/* A training step's split and accounting (empty for other modes). MFU is
 * the model's FLOPs over the time at the GPU's dense peak for the dtype at
 * its maximum clock (the datasheet figure, as MFU is quoted). */
static void train_cells(const wl_core_result *r, int on, const wl_core_shape *sh,
                        const wl_core_build_info *info, const wl_core_memory *mem, double peak,
                        wl_results_cell *cells)
{
    double hw = 0;
    for (int k = 0; k < WL_PHASE_COUNT; k++)
        hw += r->phase[k].flops;
    const double v[T_COUNT] = {
        r->phase[WL_PHASE_FORWARD].time_ms, r->phase[WL_PHASE_BACKWARD].time_ms,
        r->phase[WL_PHASE_OPTIMIZER].time_ms, r->phase[WL_PHASE_FORWARD].energy_j,
        r->phase[WL_PHASE_BACKWARD].energy_j, r->phase[WL_PHASE_OPTIMIZER].energy_j,
        sh->grad_accum > 1 ? (double)sh->grad_accum : 1.0, info->model_flop * 1e-12, hw * 1e-12,
        peak > 0 ? info->model_flop / (r->time_ms * 1e-3) / peak : NAN,
        mem->weights_gb, mem->master_gb, mem->grads_gb, mem->optimizer_gb, mem->activations_gb,
        /* what the optimizer steps: all but a fine-tuning's frozen part */
        info->trainable_params > 0 ? info->trainable_params * 1e-6 : NAN};
    for (int i = 0; i < T_COUNT; i++)
        cells[i] = (wl_results_cell){NULL, on ? v[i] : NAN};
}

/* A generation: time to the first token (the prefill and its sampling),
 * mean time per further token, energy per generated token (batch x gen of
 * them), the cache at the last token, and the energy of the two phases. */
/* Energy per token a row processes: a prompt's tokens (prefill), or a
 * training step's (every micro-batch's); NaN where the workload has no
 * tokens (vision models, traces). Decode's is per generated token
 * (decode_cells). */
static double token_energy(const wl_core_result *r, const wl_core_shape *sh)
{
    double micro = sh->mode == WL_MODE_TRAIN && sh->grad_accum > 1 ? sh->grad_accum : 1;
    double tokens = (double)sh->batch * (double)sh->seq * micro;
    return tokens > 0 ? r->energy_j / tokens : NAN;
}

static void decode_cells(const wl_core_result *r, int on, const wl_core_shape *sh,
                         const wl_core_build_info *info, wl_results_cell *cells)
{
    double g = (double)sh->gen;
    const double v[D_COUNT] = {
        r->phase[WL_PHASE_FORWARD].time_ms,
        sh->gen > 1 ? r->phase[WL_PHASE_DECODE].time_ms / (g - 1) : NAN,
        r->energy_j / ((double)sh->batch * g), info->kv_cache_gb,
        r->phase[WL_PHASE_FORWARD].energy_j, r->phase[WL_PHASE_DECODE].energy_j};
    for (int i = 0; i < D_COUNT; i++)
        cells[i] = (wl_results_cell){NULL, on ? v[i] : NAN};
}

/* The points [lo, hi) of outer combination oi (decoded: c). */
static int chunk(const wl_sweep_plan *p, unsigned long long oi, combo c, unsigned long long lo,
                 unsigned long long hi, wl_sweep_scratch *sc, wl_results_buf *b,
                 wl_sweep_tally *tally, wl_error *err)
{
    const wl_sweep_spec *s = p->s;
    wl_core_gpu g;
    int rc = wl_sweep_i_variant_gpu(s, c.gpu, c.variant, &g, err); /* validated in finish */
    if (rc)
        return rc;
    wl_core_workload *wl = NULL;
    int own = 0;
    size_t ak = c.at + s->nattn * c.md; /* attention and mode: the shape's last keys */
    if ((rc = wl_sweep_i_scratch_workload(sc, s, &c, ak, &wl, &own, err)))
        return rc;
    wl_core_evaluator *ev = NULL;
    if ((rc = wl_core_evaluator_create(&g, wl, s->lat, &ev))) {
        if (own)
            wl_core_workload_free(wl);
        return rc;
    }
    /* a precision the GPU has no math for (fp8 on an A100, bf16 on a V100)
     * runs nowhere: its rows are empty and feasible = 0, as compare's */
    wl_error no_math = {0};
    int runs = wl_core_gpu_runs(&g, wl, &no_math) == WL_OK;
    wl_results_cell cells[64 + MAX_SET];
    param_cells(p, &c, &g, cells);
    wl_core_memory mem;
    int fits;
    wl_sweep_i_combo_memory(s, &c, &g, &mem, &fits);
    wl_core_shape sh = {0};
    wl_core_build_info info = {0};
    if (!s->traces.n) {
        wl_sweep_i_combo_shape(s, &c, &sh);
        wl_error e2 = {0};
        if (sh.mode != WL_MODE_PREFILL &&
            wl_core_build_info_of(&s->model[c.wl], &sh,
                                  wl_sweep_core_scope(s->scope) != WL_SCOPE_MODEL, &info, &e2))
            info.model_flop = NAN;
    }
    /* MFU against the datasheet's dense peak, as papers count it */
    double peak = wl_core_gpu_datasheet_peak_flops(&g, wl_sweep_i_combo_dtype(s, &c));
    /* the learned model's case, once per chunk; the clock is set per point */
    wl_learn_use lu = {0};
    if (s->learned)
        wl_sweep_i_learned_use(s, &c, &lu);
    const wl_core_numlist *vl = wl_sweep_i_volts(s);
    const wl_core_numlist *clk = &s->gclk[c.gpu];
    size_t m = s->maxclk;
    curve *cv = wl_sweep_i_curve_for(sc, &g, wl_core_workload_recorded_clock(wl) > 0, c.wl, c.b,
                                     c.sq, c.dt, ak, vl->n * m);
    unsigned long long ni = wl_sweep_i_n_inner(s), base = oi * ni;
    size_t vi0 = base >= lo ? 0 : (size_t)((lo - base) / m);
    for (size_t vi = vi0; vi < vl->n && base + vi * m < hi; vi++) {
        double vv = vl->v[vi];
        cells[p->nparam - 1] = (wl_results_cell){NULL, vv};
        /* the parameter cells are the same for every clock: format once */
        wl_results_buf prefix = {0};
        wl_results_writer_format_cols(p->w, cells, 0, p->nparam, &prefix);
        wl_core_throttle_cache tc = {.targets = wl_sweep_i_scratch_targets(sc)};
        for (size_t ci = 0; ci < clk->n && !tally->cut; ci++) {
            unsigned long long pi = base + vi * m + ci;
            if (pi < lo || pi >= hi)
                continue;
            /* a stop ends the chunk at this point: a point can take
             * seconds (a million generated tokens), a chunk minutes */
            if ((p->stop && *p->stop) || wl_stop_requested()) {
                tally->cut = 1;
                break;
            }
            /* clock = max is each variant's own top clock (a --set
             * sm_clock_max_mhz lowers it) */
            double f = s->clock_max ? g.sm_clock_max_mhz : clk->v[ci];
            wl_core_op op = {.sm_clock_mhz = f,
                             .voltage_mv = s->vfix.n ? vv : 0,
                             .voltage_offset_mv = s->vfix.n ? 0 : vv,
                             .ignore_power_limit = s->no_power_limit};
            wl_core_result r;
            size_t idx = vi * m + ci;
            int erc;
            if (!runs) {
                erc = WL_EUNSUPPORTED;
            } else if (cv && !wl_core_throttle_cache_covers(ev, &tc, &op)) {
                if (!cv->have[idx]) {
                    wl_core_op free_op = op;
                    free_op.ignore_power_limit = 1;
                    if (wl_core_evaluator_run(ev, &free_op, &cv->res[idx]) == WL_OK)
                        cv->have[idx] = 1;
                }
                erc = cv->have[idx] ? wl_core_evaluator_limit(ev, &op, &cv->res[idx], &tc, &r)
                                    : WL_EINVAL;
            } else {
                erc = wl_core_evaluator_run_cached(ev, &op, &tc, &r);
            }
            if (erc != WL_OK) {
                /* a voltage at or below zero: nothing runs */
                memset(&r, 0, sizeof r);
                r.requested_clock_mhz = r.effective_clock_mhz = f;
                r.time_ms = r.power_w = r.energy_j = NAN;
                r.energy_dyn_compute_j = r.energy_dyn_memory_j = r.energy_static_j = NAN;
                r.launch_bound_frac = NAN;
                r.voltage_mv = s->vfix.n ? vv : wl_core_gpu_voltage_mv(&g, f) + vv;
            }
            if (s->learned && erc == WL_OK) {
                /* the learned model: a hybrid's correction, or a plain
                 * model's prediction; no allocation */
                tally->learned_outside += wl_learn_use_apply(&lu, &g, f, &r) < 1;
            }
            int feasible = isfinite(r.time_ms) &&
                           (s->vfix.n || wl_core_gpu_clock_in_range(&g, f)) &&
                           wl_core_gpu_feasible(&g, r.effective_clock_mhz, r.voltage_mv);
            size_t k = p->nparam;
            result_cells(&r, feasible, mem.total_gb, fits, cells + k);
            k += R_COUNT;
            if (s->level > 0) {
                wl_calib_iv iv = {0};
                int ok = isfinite(r.time_ms) &&
                         wl_calib_interval(ev, &g, &s->unc[c.gpu], &op, s->level, &r, &iv) == WL_OK;
                const double w[6] = {iv.time_lo_ms, iv.time_hi_ms, iv.power_lo_w, iv.power_hi_w,
                                     iv.energy_lo_j, iv.energy_hi_j};
                for (int i = 0; i < 6; i++)
                    cells[k++] = (wl_results_cell){NULL, ok ? w[i] : NAN};
            }
            if (p->train_at)
                train_cells(&r, sh.mode == WL_MODE_TRAIN, &sh, &info, &mem, peak,
                            cells + p->train_at);
            if (p->decode_at)
                decode_cells(&r, sh.mode == WL_MODE_DECODE, &sh, &info, cells + p->decode_at);
            if (p->ept_at && sh.mode != WL_MODE_DECODE)
                cells[p->ept_at] = (wl_results_cell){NULL, token_energy(&r, &sh)};
            tally->points++;
            tally->throttled += (unsigned long long)r.throttled;
            tally->unfit += fits == 0;
            if (feasible && fits != 0 && isfinite(r.energy_j) &&
                (isnan(tally->best_energy_j) || r.energy_j < tally->best_energy_j)) {
                tally->best_energy_j = r.energy_j;
                tally->best_time_ms = r.time_ms;
                tally->best_clock_mhz = r.requested_clock_mhz;
            }
            if (!s->classes) {
                wl_results_buf_put(b, prefix.p, prefix.n);
                wl_results_writer_format_cols(p->w, cells, p->nparam, p->ncols, b);
                continue;
            }
            double static_w = r.time_ms > 0 ? r.energy_static_j / (r.time_ms * 1e-3) : 0;
            int first = 1;
            for (int cl = 0; cl < WL_CLASS_COUNT; cl++) {
                const wl_core_class_stats *cs = &r.cls[cl];
                if (!cs->launches)
                    continue;
                /* a table gives the point's totals once, on its first row */
                if (!first && p->o.format == WL_FMT_TABLE)
                    for (size_t q = p->nparam + 1; q + 7 < p->ncols; q++)
                        cells[q] = (wl_results_cell){NULL, NAN};
                first = 0;
                size_t j = p->ncols - 7; /* the class columns come last */
                cells[j++] = (wl_results_cell){wl_core_class_name(cl), NAN};
                cells[j++] = (wl_results_cell){NULL, (double)cs->launches};
                cells[j++] = (wl_results_cell){NULL, cs->busy_ms};
                cells[j++] = (wl_results_cell){NULL, cs->energy_j};
                cells[j++] = (wl_results_cell){NULL, cs->energy_j + static_w * cs->busy_ms * 1e-3};
                cells[j++] = (wl_results_cell){NULL, cs->flops * 1e-9};
                cells[j++] = (wl_results_cell){NULL, cs->dram_bytes * 1e-9};
                wl_results_buf_put(b, prefix.p, prefix.n);
                wl_results_writer_format_cols(p->w, cells, p->nparam, p->ncols, b);
            }
        }
        int oom = prefix.oom;
        wl_results_buf_free(&prefix);
        if (oom)
            b->oom = 1;
        if (tally->cut)
            break;
    }
    wl_core_evaluator_free(ev);
    if (own)
        wl_core_workload_free(wl);
    if (b->oom) {
        wl_error_set(err, "sweep", 0, "", "out of memory");
        return WL_ENOMEM;
    }
    return WL_OK;
}

int wl_sweep_plan_chunk(const wl_sweep_plan *p, unsigned long long i, wl_sweep_scratch *sc,
                        wl_results_buf *b, wl_sweep_tally *tally, wl_error *err)
{
    wl_sweep_tally_init(tally);
    if (i >= wl_sweep_plan_chunks(p)) {
        wl_error_set(err, "sweep", 0, "", "no chunk %llu", i);
        return WL_EINVAL;
    }
    unsigned long long oi = p->o_lo + i / p->pieces, ni = wl_sweep_i_n_inner(p->s);
    unsigned long long lo = oi * ni + i % p->pieces * PIECE_POINTS, hi = lo + PIECE_POINTS;
    if (hi > oi * ni + ni)
        hi = oi * ni + ni;
    if (lo < p->lo)
        lo = p->lo;
    if (hi > p->hi)
        hi = p->hi;
    combo c;
    wl_sweep_i_decode(p->s, oi, &c);
    if (lo >= hi || present_points(p->s, oi, c.gpu, lo, hi) == 0)
        return WL_OK; /* a piece outside the slice, or clocks past this GPU's grid */
    return chunk(p, oi, c, lo, hi, sc, b, tally, err);
}
