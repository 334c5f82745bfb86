/* wattlas cluster search: every parallel configuration of a model on a
 * system, evaluated in parallel, and the fastest, the least-energy and the
 * time-energy front among those that fit.
 *
 * The space is Megatron-LM's: tensor x pipeline x data parallel sizes that
 * multiply to the GPUs, micro-batch sizes (powers of two dividing a
 * replica's share of the global batch), virtual stages for the interleaved
 * schedule, the schedules, recomputation, sequence parallelism, ZeRO-1 and
 * the split of layers over stages (uniform, and balanced, which also takes
 * pipeline depths the layers do not divide by).
 * Enumeration is cheap and deterministic (its order is the output's), so a
 * shard is a contiguous slice of it and shards concatenate to the whole. */
#include "cluster_internal.h"
#include "../pareto/wattlas_pareto.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

void wl_cluster_search_default(wl_cluster_search_spec *s)
{
    memset(s, 0, sizeof *s);
    wl_cluster_config_default(&s->base);
    s->max_vp = 8;
    s->max_micro_batch = 16;
}

/* Whether bit i is set in mask (0: every value allowed). */
static int allowed(unsigned mask, int i)
{
    return !mask || (mask >> i) & 1u;
}

/* Appends c when the configuration is possible; grows the array. */
static int push(wl_cluster_config **v, size_t *n, size_t *cap, const wl_cluster_config *c,
                const wl_core_model *m, int gpus)
{
    wl_error e = {0};
    if (wl_cluster_config_check(c, m, gpus, &e))
        return WL_OK; /* not a configuration of this model: skipped */
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 256;
        wl_cluster_config *nv = realloc(*v, nc * sizeof *nv);
        if (!nv)
            return WL_ENOMEM;
        *v = nv;
        *cap = nc;
    }
    (*v)[(*n)++] = *c;
    return WL_OK;
}

int wl_cluster_search_configs(const wl_cluster_search_spec *s, const wl_core_model *m, int gpus,
                              int gpus_per_node, wl_cluster_config **out, size_t *n, wl_error *err)
{
    *out = NULL;
    *n = 0;
    const wl_cluster_config *b = &s->base;
    if (gpus < 1 || b->global_batch < 1) {
        wl_error_set(err, "cluster", 0, "global_batch", "search needs GPUs and a global batch");
        return WL_EINVAL;
    }
    if (b->ep_overlap && !wl_core_model_is_moe(m)) {
        wl_error_set(err, "cluster", 0, "ep_overlap", "all-to-all overlap hides a mixture-of-"
                     "experts layer's token exchange; %s has no experts", m->id);
        return WL_EINVAL;
    }
    int train = b->mode == WL_MODE_TRAIN;
    int max_tp = s->max_tp > 0 ? s->max_tp : gpus_per_node;
    size_t cap = 0;
    wl_cluster_config *v = NULL;
    int rc = WL_OK;
    for (int tp = 1; tp <= gpus && tp <= max_tp && !rc; tp++) {
        if (gpus % tp)
            continue;
        for (int pp = 1; pp <= gpus / tp && !rc; pp++) {
            if ((gpus / tp) % pp || (s->max_pp > 0 && pp > s->max_pp) || m->layers < pp)
                continue;
            int dp = gpus / (tp * pp);
            if (b->global_batch % dp)
                continue;
            long long share = b->global_batch / dp;
            for (long long mb = 1; mb <= share && mb <= s->max_micro_batch && !rc; mb *= 2) {
                if (share % mb)
                    continue;
                /* the schedules in their table order, interleaving with
                 * each number of chunks per GPU */
                for (int si = 0; wl_cluster_schedule_at(si) && !rc; si++) {
                    const wl_cluster_schedule_type *t = wl_cluster_schedule_at(si);
                    if (!allowed(s->schedules, si))
                        continue;
                    /* forward-only passes: gpipe, 1f1b and zb-h1 are one
                     * schedule */
                    if (!train && t != wl_cluster_1f1b && t != wl_cluster_interleaved)
                        continue;
                    int inter = wl_cluster_schedule_interleaves(t);
                    for (int vp = inter ? 2 : 1; vp <= (inter ? s->max_vp : 1) && !rc; vp++) {
                        if (m->layers < pp * vp)
                            continue;
                        for (int r = 0; r < 3 && !rc; r++) {
                            if (!allowed(s->recomputes, r) || (!train && r))
                                continue;
                            for (int sp = 0; sp < 2 && !rc; sp++) {
                                if (!allowed(s->sequence_parallel, sp) || (sp && tp == 1))
                                    continue;
                                for (int z = 0; z < 2 && !rc; z++) {
                                    if (!allowed(s->zero, z) || (z && (dp == 1 || !train)))
                                        continue;
                                    /* expert parallelism: powers of two
                                     * dividing dp and the experts */
                                    for (int ep = 1; ep <= dp && !rc; ep *= 2) {
                                    if (dp % ep || (ep > 1 && (m->experts < 1 || m->experts % ep)))
                                        continue;
                                    /* one stage has nothing to split;
                                     * uniform needs the layers to divide
                                     * (config_check) */
                                    for (int pa = 0; pa < WL_CLUSTER_PART_LIST && !rc; pa++) {
                                        if (pp == 1 ? pa != WL_CLUSTER_PART_UNIFORM
                                                    : !(s->partitions ? (s->partitions >> pa) & 1u
                                                                      : pa != WL_CLUSTER_PART_PARAMETERS))
                                            continue;
                                        wl_cluster_config c = *b;
                                        c.tp = tp, c.pp = pp, c.dp = dp, c.vp = vp;
                                        c.micro_batch = mb;
                                        c.schedule = t;
                                        c.recompute = (wl_recompute)r;
                                        c.sequence_parallel = sp;
                                        c.zero = z;
                                        c.partition = (wl_cluster_partition)pa;
                                        c.ep = ep;
                                        c.tp_comm_overlap = b->tp_comm_overlap && sp && tp > 1;
                                        c.stage_layers = NULL;
                                        c.nstage_layers = 0;
                                        rc = push(&v, n, &cap, &c, m, gpus);
                                    }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    if (rc) {
        free(v);
        *n = 0;
        wl_error_set(err, "cluster", 0, "", "out of memory");
        return rc;
    }
    *out = v;
    return WL_OK;
}

/* Memory a configuration needs before its activations: weights, gradients,
 * optimizer state and workspace of its largest stage. */
static double static_memory_gb(const wl_cluster *c)
{
    double worst = 0;
    for (int i = 0; i < wl_cluster_stages(c); i++) {
        wl_cluster_memory mm;
        wl_cluster_stage_memory(c, i, &mm);
        double st = mm.total_gb - mm.activations_gb;
        if (st > worst)
            worst = st;
    }
    return worst;
}

/* Whether a is b with another partition (the enumeration puts a
 * configuration's partitions side by side). */
static int other_partition_of(const wl_cluster_config *a, const wl_cluster_config *b)
{
    wl_cluster_config x = *a;
    x.partition = b->partition;
    return memcmp(&x, b, sizeof x) == 0;
}

/* One configuration: built, its memory floor checked, simulated. A split
 * that comes out uniform beside its uniform configuration (uniform: the
 * row before it) is not simulated again: its row is copied from that one
 * once every row is done (*copy set). With bound (two doubles), one that
 * may fit is not simulated but bounded instead (wl_cluster_bound: its time
 * and energy bounds, the energy's -inf where it does not hold), left
 * evaluated 0 with bound[0] >= 0; the others get bound[0] = -1. */
static int eval_one(const wl_cluster_system *sys, const wl_core_gpu *gpu, const wl_core_model *m,
                    const wl_cluster_config *cfg, const wl_cluster_config *uniform, double clock,
                    int front_only, wl_cluster_sim *sim, wl_cluster_piece_cache *cache,
                    wl_cluster_search_row *row, int *copy, double *bound, wl_error *err)
{
    memset(row, 0, sizeof *row);
    *copy = 0;
    if (bound)
        bound[0] = -1;
    wl_cluster *c = NULL;
    int rc = wl_cluster_create_cached(sys, gpu, m, cfg, cache, &c, err);
    if (rc)
        return rc;
    row->same_as_uniform = cfg->partition != WL_CLUSTER_PART_UNIFORM && wl_cluster_split_is_uniform(c);
    if (row->same_as_uniform && uniform) {
        *copy = 1;
        wl_cluster_free(c);
        return WL_OK;
    }
    double floor_gb = static_memory_gb(c);
    int over = gpu->mem_capacity_gb > 0 && floor_gb > gpu->mem_capacity_gb;
    if (!over && front_only && cfg->mode == WL_MODE_TRAIN && gpu->mem_capacity_gb > 0) {
        /* the activations its schedule holds at the peak do not fit either:
         * off the front whatever its time */
        double act_gb = wl_cluster_memory_floor_gb(c);
        if (act_gb > gpu->mem_capacity_gb) {
            over = 1;
            floor_gb = act_gb;
            row->activations_over = 1;
        }
    }
    if (over || bound) {
        /* cannot fit whatever the schedule: not worth its simulation; or
         * bounded first (its row stays this unless it is simulated) */
        wl_cluster_result *r = &row->r;
        r->time_s = r->energy_j = r->power_w = r->energy_gpu_j = r->energy_network_j = NAN;
        r->energy_node_j = r->tflops_per_gpu = r->mfu = r->bubble_s = NAN;
        r->tp_comm_exposed_s = r->pp_comm_exposed_s = r->dp_comm_exposed_s = r->compute_s = NAN;
        r->ep_comm_exposed_s = NAN;
        r->tokens_per_s = r->energy_per_token_j = r->ttft_s = r->tpot_s = NAN;
        r->memory_gb = floor_gb;
        r->fits = 0;
        r->gpus = sys->nodes * sys->gpus_per_node;
        r->nodes = sys->nodes;
        row->evaluated = 0;
    }
    if (!over && bound) {
        int valid = 0;
        if (wl_cluster_bound(c, clock, &bound[0], &bound[1], &valid))
            bound[0] = 0, valid = 0; /* not a training run: no bound, simulated first */
        if (!valid)
            bound[1] = -INFINITY;
    } else if (!over) {
        wl_cluster_sim *own = sim ? wl_cluster_swap_sim(c, sim) : NULL;
        rc = wl_cluster_run(c, clock, NULL, &row->r, err);
        if (sim)
            wl_cluster_swap_sim(c, own);
        row->evaluated = rc == WL_OK;
    }
    wl_cluster_free(c);
    return rc;
}

/* What the evaluation of a list of configurations shares across threads. */
typedef struct {
    const wl_cluster_system *sys;
    const wl_core_gpu *gpu;
    const wl_core_model *m;
    const wl_cluster_config *cfgs;
    double clock;
    int front_only, nt;
    wl_cluster_search_row *rows;
    int *copy;
    wl_cluster_sim **sims;
    wl_cluster_piece_cache **caches;
    wl_cluster_progress progress;
    void *user;
    unsigned long long done, total;
    long long bad;               /* the first failing configuration, -1: none */
    int rc;
    wl_error first;
} search_job;

/* Evaluates (bounds: bounds) the configurations idx[0..k) in parallel. */
static void eval_list(search_job *j, const size_t *idx, size_t k, double *bounds)
{
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 4) num_threads(j->nt)
#endif
    for (long long q = 0; q < (long long)k; q++) {
        size_t i = idx[q];
        wl_error e = {0};
        /* a stop asked for (wl_stop_watch): the rest are skipped */
        if (wl_stop_requested())
            continue;
        const wl_cluster_config *cfgs = j->cfgs;
        const wl_cluster_config *u = i > 0 && cfgs[i - 1].partition == WL_CLUSTER_PART_UNIFORM &&
                                             other_partition_of(&cfgs[i], &cfgs[i - 1])
                                         ? &cfgs[i - 1]
                                         : NULL;
#ifdef _OPENMP
        int th = omp_get_thread_num();
#else
        int th = 0;
#endif
        int r = eval_one(j->sys, j->gpu, j->m, &cfgs[i], u, j->clock, j->front_only, j->sims[th],
                         j->caches[th], &j->rows[i], &j->copy[i], bounds ? bounds + 2 * i : NULL, &e);
        /* a bounded configuration's fate is decided later */
        if (!bounds || bounds[2 * i] < 0) {
            unsigned long long now;
#ifdef _OPENMP
#pragma omp atomic capture
#endif
            now = ++j->done;
            /* the caller's callback from one thread only */
#ifdef _OPENMP
            if (j->progress && omp_get_thread_num() == 0)
#else
            if (j->progress)
#endif
                j->progress(j->user, now, j->total);
        }
        if (r) {
#ifdef _OPENMP
#pragma omp critical(wl_cluster_search_err)
#endif
            {
                /* the first failing configuration in order, whatever the
                 * thread that met it */
                if (j->bad < 0 || (long long)i < j->bad) {
                    j->bad = (long long)i;
                    j->rc = r;
                    j->first = e;
                }
            }
        }
    }
}

typedef struct {
    double t;
    size_t i;
} by_time;

static int cmp_time(const void *a, const void *b)
{
    const by_time *x = a, *y = b;
    if (x->t != y->t)
        return x->t < y->t ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* Branch and bound for the front: the configurations that may fit, in the
 * order of their time bounds, simulated a block at a time; before each
 * block, one whose bounds a simulated configuration beats in both time and
 * energy (by more than rounding) is left out: it can be neither on the
 * front nor the fastest nor the least energy. Blocks of a fixed size make
 * what is left out the same whatever the threads. */
enum { BOUND_BLOCK = 16 };

static int bound_and_run(search_job *j, size_t n, double *bounds)
{
    size_t *idx = malloc(sizeof *idx * (n ? n : 1));
    by_time *order = malloc(sizeof *order * (n ? n : 1));
    double *pts = malloc(sizeof *pts * 2 * (n ? n : 1));
    int rc = WL_OK;
    if (!idx || !order || !pts) {
        rc = WL_ENOMEM;
        goto done;
    }
    for (size_t i = 0; i < n; i++)
        idx[i] = i;
    eval_list(j, idx, n, bounds);
    if (j->rc)
        goto done;
    size_t k = 0, np = 0;
    for (size_t i = 0; i < n; i++)
        if (!j->copy[i] && bounds[2 * i] >= 0)
            order[k++] = (by_time){.t = bounds[2 * i], .i = i};
    qsort(order, k, sizeof *order, cmp_time);
    for (size_t b0 = 0; b0 < k && !j->rc; b0 += BOUND_BLOCK) {
        size_t b1 = b0 + BOUND_BLOCK < k ? b0 + BOUND_BLOCK : k, run = 0;
        for (size_t q = b0; q < b1; q++) {
            size_t i = order[q].i;
            double tl = bounds[2 * i] * (1 - 1e-9), el = bounds[2 * i + 1] * (1 - 1e-9);
            int beaten = 0;
            for (size_t r = 0; r < np && !beaten; r++)
                beaten = pts[2 * r] <= tl && pts[2 * r + 1] <= el;
            if (beaten) {
                j->rows[i].bounded = 1;
                j->done++;
                if (j->progress)
                    j->progress(j->user, j->done, j->total);
            } else {
                idx[run++] = i;
            }
        }
        eval_list(j, idx, run, NULL);
        for (size_t q = 0; q < run; q++) {
            const wl_cluster_search_row *r = &j->rows[idx[q]];
            if (r->evaluated && r->r.fits) {
                pts[2 * np] = r->r.time_s;
                pts[2 * np + 1] = r->r.energy_j;
                np++;
            }
        }
    }
done:
    free(idx);
    free(order);
    free(pts);
    return rc;
}

int wl_cluster_search_eval(const wl_cluster_system *sys, const wl_core_gpu *gpu,
                           const wl_core_model *m, const wl_cluster_config *cfgs, size_t n,
                           double clock_mhz, int threads, int front_only,
                           wl_cluster_search_row *rows, wl_cluster_progress progress, void *user,
                           wl_error *err)
{
#ifdef _OPENMP
    int nt = threads > 0 ? threads : omp_get_max_threads();
#else
    (void)threads;
    int nt = 1;
#endif
    search_job j = {.sys = sys, .gpu = gpu, .m = m, .cfgs = cfgs, .clock = clock_mhz,
                    .front_only = front_only, .nt = nt, .rows = rows, .progress = progress,
                    .user = user, .total = n, .bad = -1};
    /* a simulator and a cache of pieces per thread (wl_cluster_swap_sim;
     * NULL: each configuration's own) */
    j.copy = calloc(n ? n : 1, sizeof *j.copy);
    j.sims = calloc((size_t)nt, sizeof *j.sims);
    j.caches = calloc((size_t)nt, sizeof *j.caches);
    /* the front alone of training runs: branch and bound (bounds: two per
     * configuration) */
    int bnb = front_only && n > 0 && cfgs[0].mode == WL_MODE_TRAIN;
    double *bounds = bnb ? malloc(sizeof *bounds * 2 * n) : NULL;
    size_t *idx = bnb ? NULL : malloc(sizeof *idx * (n ? n : 1));
    int rc = WL_OK;
    if (!j.copy || !j.sims || !j.caches || (bnb ? !bounds : !idx)) {
        rc = WL_ENOMEM;
        goto done;
    }
    for (int k = 0; k < nt; k++) {
        j.sims[k] = wl_cluster_sim_create();
        j.caches[k] = wl_cluster_piece_cache_create();
    }
    if (bnb) {
        rc = bound_and_run(&j, n, bounds);
    } else {
        for (size_t i = 0; i < n; i++)
            idx[i] = i;
        eval_list(&j, idx, n, NULL);
    }
    if (!rc)
        rc = j.rc;
    if (!rc && wl_stop_requested()) {
        wl_error_set(&j.first, "cluster", 0, "", "stopped");
        rc = WL_ESTOPPED;
    }
    if (rc)
        goto done;
    if (progress)
        progress(user, n, n);
    for (size_t i = 0; i < n; i++)
        if (j.copy[i]) {
            rows[i] = rows[i - 1];
            rows[i].same_as_uniform = 1;
        }
done:
    if (rc == WL_ENOMEM)
        wl_error_set(err, "cluster", 0, "", "out of memory");
    else if (rc)
        *err = j.first;
    free(j.copy);
    for (int k = 0; j.sims && k < nt; k++)
        wl_cluster_sim_free(j.sims[k]);
    for (int k = 0; j.caches && k < nt; k++)
        wl_cluster_piece_cache_free(j.caches[k]);
    free(j.sims);
    free(j.caches);
    free(bounds);
    free(idx);
    return rc;
}

int wl_cluster_search_pick(const wl_cluster_search_row *rows, size_t n, unsigned char *on_front,
                           long *fastest, long *least_energy)
{
    *fastest = *least_energy = -1;
    double *pts = malloc(sizeof(double) * 2 * (n ? n : 1));
    if (!pts)
        return WL_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const wl_cluster_result *r = &rows[i].r;
        int ok = rows[i].evaluated && r->fits && !rows[i].same_as_uniform;
        pts[2 * i] = ok ? r->time_s : NAN;
        pts[2 * i + 1] = ok ? r->energy_j : NAN;
        if (!ok)
            continue;
        /* ties go to the first in enumeration order; energy ties to the
         * faster */
        if (*fastest < 0 || r->time_s < rows[*fastest].r.time_s ||
            (r->time_s == rows[*fastest].r.time_s && r->energy_j < rows[*fastest].r.energy_j))
            *fastest = (long)i;
        if (*least_energy < 0 || r->energy_j < rows[*least_energy].r.energy_j ||
            (r->energy_j == rows[*least_energy].r.energy_j && r->time_s < rows[*least_energy].r.time_s))
            *least_energy = (long)i;
    }
    int rc = wl_pareto_front(pts, n, 2, on_front);
    free(pts);
    return rc;
}

/* ---- rows: what cluster and cluster search print ---------------------------------- */

static const wl_results_col row_cols[] = {
    WL_RESULTS_COL("system", WL_COL_TEXT, 0, 0), WL_RESULTS_COL("model", WL_COL_TEXT, 0, 0),
    WL_RESULTS_COL("mode", WL_COL_TEXT, 0, 0), WL_RESULTS_COL("gpus", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("tp", WL_COL_INT, 0, 0), WL_RESULTS_COL("pp", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("dp", WL_COL_INT, 0, 0), WL_RESULTS_COL("vp", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("sequence_parallel", WL_COL_BOOL, 0, 0), WL_RESULTS_COL("zero", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("ep", WL_COL_INT, 0, 0), WL_RESULTS_COL("cp", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("schedule", WL_COL_TEXT, 0, 0), WL_RESULTS_COL("recompute", WL_COL_TEXT, 0, 0),
    WL_RESULTS_COL("partition", WL_COL_TEXT, 0, 0),
    WL_RESULTS_COL("micro_batch", WL_COL_INT, 0, 0), WL_RESULTS_COL("global_batch", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("seq", WL_COL_INT, 0, 0), WL_RESULTS_COL("sm_clock_mhz", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("time_s", WL_COL_NUM, 4, 0), WL_RESULTS_COL("energy_j", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("power_w", WL_COL_NUM, 0, 0), WL_RESULTS_COL("tflops_per_gpu", WL_COL_NUM, 1, 0),
    WL_RESULTS_COL("mfu", WL_COL_NUM, 4, 0), WL_RESULTS_COL("bubble_s", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("imbalance_pct", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("tp_comm_exposed_s", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("pp_comm_exposed_s", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("dp_comm_exposed_s", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("ep_comm_exposed_s", WL_COL_NUM, 4, 0), WL_RESULTS_COL("memory_gb", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("fits", WL_COL_BOOL, 0, 0), WL_RESULTS_COL("energy_gpu_j", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("energy_network_j", WL_COL_NUM, 0, 0), WL_RESULTS_COL("energy_node_j", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("tokens_per_s", WL_COL_NUM, 0, 0), WL_RESULTS_COL("energy_per_token_j", WL_COL_NUM, 6, 0),
    WL_RESULTS_COL("train_time_s", WL_COL_NUM, 0, 0), WL_RESULTS_COL("train_energy_j", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("gen", WL_COL_INT, 0, 0), WL_RESULTS_COL("ttft_s", WL_COL_NUM, 4, 0),
    WL_RESULTS_COL("tpot_ms", WL_COL_NUM, 3, 0),
    /* --optimize */
    WL_RESULTS_COL("energy_saving_pct", WL_COL_NUM, 2, 0), WL_RESULTS_COL("slowdown_pct", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("best_fixed_clock_mhz", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("saving_vs_fixed_pct", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("balanced_fixed_clock_mhz", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("saving_vs_balanced_pct", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("computation_saving_pct", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("computation_slowdown_pct", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("energy_scope", WL_COL_TEXT, 0, 0),
};
_Static_assert(sizeof row_cols / sizeof *row_cols == WL_CLUSTER_ROW_COLS, "WL_CLUSTER_ROW_COLS");

const wl_results_col *wl_cluster_row_cols(void)
{
    return row_cols;
}

/* The cells of a configuration's row, all but --optimize's (clock NaN: a
 * plan's clocks, which --stages lists). */
void wl_cluster_row_cells(wl_results_cell *c, const char *sys_id, const char *model_id,
                      const wl_cluster_config *cfg, const wl_cluster_result *r, double clock,
                      double tokens, const char *part_text)
{
    int train = cfg->mode == WL_MODE_TRAIN;
    double iters = train && tokens > 0 && r->tokens > 0 ? tokens / r->tokens : NAN;
    const wl_cluster_schedule_type *t = cfg->schedule ? cfg->schedule
                                        : cfg->vp > 1 ? wl_cluster_interleaved : wl_cluster_1f1b;
    wl_results_cell v[WL_CLUSTER_ROW_COLS - WL_CLUSTER_ROW_NOPT] = {
        {.s = sys_id}, {.s = model_id}, {.s = wl_mode_name(cfg->mode)}, {.v = r->gpus},
        {.v = cfg->tp}, {.v = cfg->pp}, {.v = cfg->dp}, {.v = cfg->vp},
        {.v = cfg->sequence_parallel}, {.v = cfg->zero}, {.v = cfg->ep > 0 ? cfg->ep : 1},
        {.v = cfg->cp > 0 ? cfg->cp : 1},
        {.s = wl_cluster_schedule_name(t)},
        {.s = wl_recompute_name(cfg->recompute)},
        {.s = cfg->partition == WL_CLUSTER_PART_LIST && part_text ? part_text
                                                                  : wl_cluster_partition_name(cfg->partition)},
        {.v = (double)cfg->micro_batch},
        {.v = (double)cfg->global_batch}, {.v = (double)cfg->seq}, {.v = clock},
        {.v = r->time_s}, {.v = r->energy_j}, {.v = r->power_w}, {.v = r->tflops_per_gpu},
        {.v = r->mfu}, {.v = r->bubble_s}, {.v = r->imbalance_pct}, {.v = r->tp_comm_exposed_s},
        {.v = r->pp_comm_exposed_s},
        {.v = r->dp_comm_exposed_s}, {.v = r->ep_comm_exposed_s}, {.v = r->memory_gb}, {.v = r->fits}, {.v = r->energy_gpu_j},
        {.v = r->energy_network_j}, {.v = r->energy_node_j}, {.v = r->tokens_per_s},
        {.v = r->energy_per_token_j}, {.v = iters * r->time_s}, {.v = iters * r->energy_j},
        {.v = cfg->mode == WL_MODE_DECODE ? (double)cfg->gen : NAN}, {.v = r->ttft_s},
        {.v = r->tpot_s * 1e3}};
    memcpy(c, v, sizeof v);
}
