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
 * once every row is done (*copy set). */
static int eval_one(const wl_cluster_system *sys, const wl_core_gpu *gpu, const wl_core_model *m,
                    const wl_cluster_config *cfg, const wl_cluster_config *uniform, double clock,
                    int front_only, wl_cluster_sim *sim, wl_cluster_search_row *row, int *copy,
                    wl_error *err)
{
    memset(row, 0, sizeof *row);
    *copy = 0;
    wl_cluster *c = NULL;
    int rc = wl_cluster_create(sys, gpu, m, cfg, &c, err);
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
    if (over) {
        /* cannot fit whatever the schedule: not worth its simulation */
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
    } else {
        wl_cluster_sim *own = sim ? wl_cluster_swap_sim(c, sim) : NULL;
        rc = wl_cluster_run(c, clock, NULL, &row->r, err);
        if (sim)
            wl_cluster_swap_sim(c, own);
        row->evaluated = rc == WL_OK;
    }
    wl_cluster_free(c);
    return rc;
}

int wl_cluster_search_eval(const wl_cluster_system *sys, const wl_core_gpu *gpu,
                           const wl_core_model *m, const wl_cluster_config *cfgs, size_t n,
                           double clock_mhz, int threads, int front_only,
                           wl_cluster_search_row *rows, wl_cluster_progress progress, void *user,
                           wl_error *err)
{
    unsigned long long done = 0;
    int rc = WL_OK;
    long long bad = -1;
    wl_error first = {0};
#ifdef _OPENMP
    int nt = threads > 0 ? threads : omp_get_max_threads();
#else
    (void)threads;
    int nt = 1;
#endif
    /* a simulator per thread (wl_cluster_swap_sim); NULL: each
     * configuration's own */
    int *copy = calloc(n ? n : 1, sizeof *copy);
    wl_cluster_sim **sims = calloc((size_t)nt, sizeof *sims);
    if (!copy || !sims) {
        free(copy);
        free(sims);
        wl_error_set(err, "cluster", 0, "", "out of memory");
        return WL_ENOMEM;
    }
    for (int k = 0; k < nt; k++)
        sims[k] = wl_cluster_sim_create();
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 8) num_threads(nt)
#endif
    for (long long i = 0; i < (long long)n; i++) {
        wl_error e = {0};
        const wl_cluster_config *u = i > 0 && cfgs[i - 1].partition == WL_CLUSTER_PART_UNIFORM &&
                                             other_partition_of(&cfgs[i], &cfgs[i - 1])
                                         ? &cfgs[i - 1]
                                         : NULL;
#ifdef _OPENMP
        wl_cluster_sim *sim = sims[omp_get_thread_num()];
#else
        wl_cluster_sim *sim = sims[0];
#endif
        int r = eval_one(sys, gpu, m, &cfgs[i], u, clock_mhz, front_only, sim, &rows[i], &copy[i], &e);
        unsigned long long now;
#ifdef _OPENMP
#pragma omp atomic capture
#endif
        now = ++done;
        /* the caller's callback from one thread only */
#ifdef _OPENMP
        if (progress && omp_get_thread_num() == 0)
#else
        if (progress)
#endif
            progress(user, now, n);
        if (r) {
#ifdef _OPENMP
#pragma omp critical(wl_cluster_search_err)
#endif
            {
                /* the first failing configuration in order, whatever the
                 * thread that met it */
                if (bad < 0 || i < bad) {
                    bad = i;
                    rc = r;
                    first = e;
                }
            }
        }
    }
    if (rc)
        *err = first;
    else if (progress)
        progress(user, n, n);
    for (size_t i = 0; !rc && i < n; i++)
        if (copy[i]) {
            rows[i] = rows[i - 1];
            rows[i].same_as_uniform = 1;
        }
    free(copy);
    for (int k = 0; k < nt; k++)
        wl_cluster_sim_free(sims[k]);
    free(sims);
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
