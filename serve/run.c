/* A grid of serving runs (GPUs with their power limits, engine settings,
 * clocks) as rows, and the lowest-energy operating point that meets a
 * latency SLO. */
#include "serve_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The columns: the run's settings, then the steady state (the ML.ENERGY
 * benchmark's window, see wl_serve_result), the client's latencies over the
 * whole run, the whole run (run_), the engine's state, and every other
 * setting that changes a row (issue 77: validate could not run serve's own
 * rows again), in serve's option names. A steady column is empty when the
 * run has none, never the whole run's figure under its name (issue 78:
 * energy_per_token_j had silently become the run's at max_num_seqs 320). */
enum {
    C_GPU, C_SYSTEM, C_GPUS, C_TP, C_EP, C_DP, C_MODEL, C_DTYPE, C_WORKLOAD, C_REQUESTS, C_SEQS, C_TOKENS, C_RATE, C_CLOCK, C_PCLOCK,
    C_DCLOCK, C_LIMIT, C_ECLOCK, C_THROTTLED,
    C_BATCH, C_TPS, C_POWER, C_EPT, C_EPR, C_STEADY, C_STEADY0, C_STEADY1, C_STABLE,
    C_ITL50, C_ITL90, C_ITL99, C_TTFT50, C_TTFT90,
    C_RBATCH, C_RTPS, C_RPOWER, C_REPT, C_REPR, C_TIME, C_ENERGY,
    C_PREEMPT, C_KV, C_SLO, C_HOST, C_GMU, C_ASYNC,
    C_SEED, C_TEMP, C_TOPP, C_TOPK, C_REP, C_SAMPLER, C_OUTMEAN, C_SET, NCOLS
};

static const wl_results_col cols[NCOLS] = {
    [C_GPU] = WL_RESULTS_COL("gpu", WL_COL_TEXT, 0, 0),
    /* the GPUs a run takes (every energy and power column is their sum),
     * their parallelism and the system whose links join them (empty on one) */
    [C_SYSTEM] = WL_RESULTS_COL("system", WL_COL_TEXT, 0, 0),
    [C_GPUS] = WL_RESULTS_COL("gpus", WL_COL_INT, 0, 0),
    [C_TP] = WL_RESULTS_COL("tp", WL_COL_INT, 0, 0),
    [C_EP] = WL_RESULTS_COL("ep", WL_COL_INT, 0, 0), /* the experts' ranks: tp, or 1 */
    [C_DP] = WL_RESULTS_COL("dp", WL_COL_INT, 0, 0), /* data-parallel engines of tp GPUs */
    [C_MODEL] = WL_RESULTS_COL("model", WL_COL_TEXT, 0, 0),
    [C_DTYPE] = WL_RESULTS_COL("dtype", WL_COL_TEXT, 0, 0),
    [C_WORKLOAD] = WL_RESULTS_COL("workload", WL_COL_TEXT, 0, 0),
    [C_REQUESTS] = WL_RESULTS_COL("requests", WL_COL_INT, 0, 0),
    [C_SEQS] = WL_RESULTS_COL("max_num_seqs", WL_COL_INT, 0, 0),
    [C_TOKENS] = WL_RESULTS_COL("max_num_batched_tokens", WL_COL_INT, 0, 0),
    [C_RATE] = WL_RESULTS_COL("rate_rps", WL_COL_NUM, -1, 0),
    [C_CLOCK] = WL_RESULTS_COL("sm_clock_mhz", WL_COL_NUM, 1, 0),
    [C_PCLOCK] = WL_RESULTS_COL("prefill_clock_mhz", WL_COL_NUM, 1, 0),
    [C_DCLOCK] = WL_RESULTS_COL("decode_clock_mhz", WL_COL_NUM, 1, 0),
    [C_LIMIT] = WL_RESULTS_COL("power_limit_w", WL_COL_NUM, 1, 0),
    [C_ECLOCK] = WL_RESULTS_COL("effective_clock_mhz", WL_COL_NUM, 1, 0),
    [C_THROTTLED] = WL_RESULTS_COL("throttled", WL_COL_BOOL, 0, 0),
    [C_BATCH] = WL_RESULTS_COL("avg_batch", WL_COL_NUM, 2, 0),
    /* significant digits: a slow rate (16.3 tokens/s) lost 0.3% to one decimal */
    [C_TPS] = WL_RESULTS_COL_SIG("output_tokens_per_s", 6),
    [C_POWER] = WL_RESULTS_COL("power_w", WL_COL_NUM, 1, 0),
    [C_EPT] = WL_RESULTS_COL("energy_per_token_j", WL_COL_NUM, 5, 0),
    [C_EPR] = WL_RESULTS_COL("energy_per_request_j", WL_COL_NUM, 3, 0),
    [C_STEADY] = WL_RESULTS_COL("steady_s", WL_COL_NUM, 3, 0),
    [C_STEADY0] = WL_RESULTS_COL("steady_start_s", WL_COL_NUM, 3, 0),
    [C_STEADY1] = WL_RESULTS_COL("steady_end_s", WL_COL_NUM, 3, 0),
    [C_STABLE] = WL_RESULTS_COL("stable", WL_COL_BOOL, 0, 0),
    [C_ITL50] = WL_RESULTS_COL("median_itl_ms", WL_COL_NUM, 3, 0),
    [C_ITL90] = WL_RESULTS_COL("p90_itl_ms", WL_COL_NUM, 3, 0),
    [C_ITL99] = WL_RESULTS_COL("p99_itl_ms", WL_COL_NUM, 3, 0),
    [C_TTFT50] = WL_RESULTS_COL("median_ttft_ms", WL_COL_NUM, 2, 0),
    [C_TTFT90] = WL_RESULTS_COL("p90_ttft_ms", WL_COL_NUM, 2, 0),
    [C_RBATCH] = WL_RESULTS_COL("run_avg_batch", WL_COL_NUM, 2, 0),
    [C_RTPS] = WL_RESULTS_COL_SIG("run_output_tokens_per_s", 6),
    [C_RPOWER] = WL_RESULTS_COL("run_power_w", WL_COL_NUM, 1, 0),
    [C_REPT] = WL_RESULTS_COL("run_energy_per_token_j", WL_COL_NUM, 5, 0),
    [C_REPR] = WL_RESULTS_COL("run_energy_per_request_j", WL_COL_NUM, 3, 0),
    [C_TIME] = WL_RESULTS_COL("time_s", WL_COL_NUM, 3, 0),
    [C_ENERGY] = WL_RESULTS_COL("energy_j", WL_COL_NUM, 1, 0),
    [C_PREEMPT] = WL_RESULTS_COL("preemptions", WL_COL_INT, 0, 0),
    [C_KV] = WL_RESULTS_COL("kv_cache_tokens", WL_COL_INT, 0, 0),
    [C_SLO] = WL_RESULTS_COL("meets_slo", WL_COL_BOOL, 0, 0),
    [C_HOST] = WL_RESULTS_COL("host", WL_COL_TEXT, 0, 0),
    [C_GMU] = WL_RESULTS_COL("gpu_memory_utilization", WL_COL_NUM, -1, 0),
    [C_ASYNC] = WL_RESULTS_COL("async_scheduling", WL_COL_BOOL, 0, 0),
    [C_SEED] = WL_RESULTS_COL("seed", WL_COL_TEXT, 0, 0), /* 64 bits: as text, not a double */
    [C_TEMP] = WL_RESULTS_COL("temperature", WL_COL_NUM, -1, 0),
    [C_TOPP] = WL_RESULTS_COL("top_p", WL_COL_NUM, -1, 0),
    [C_TOPK] = WL_RESULTS_COL("top_k", WL_COL_INT, 0, 0),
    [C_REP] = WL_RESULTS_COL("repetition_penalty", WL_COL_NUM, -1, 0),
    [C_SAMPLER] = WL_RESULTS_COL("sampler", WL_COL_TEXT, 0, 0),
    [C_OUTMEAN] = WL_RESULTS_COL("output_mean_tokens", WL_COL_NUM, -1, 0),
    [C_SET] = WL_RESULTS_COL("set", WL_COL_TEXT, 0, 0), /* --set other than power_limit_w */
};

const wl_results_col *wl_serve_cols(size_t *n)
{
    *n = NCOLS;
    return cols;
}

typedef struct {
    const wl_core_gpu *gpu;
    const wl_serve_engine *engine;
    double pclock, dclock;
    wl_serve_result r;
    int meets, emit;
    int own; /* the benchmark's rule on this run alone */
} point;

static int meets_slo(const wl_serve_grid *g, const wl_serve_result *r)
{
    return (isnan(g->max_itl_ms) || r->p90_itl_ms <= g->max_itl_ms) &&
           (isnan(g->max_ttft_ms) || r->p90_ttft_ms <= g->max_ttft_ms);
}

static int row(const wl_serve_grid *g, const point *p, wl_results_writer *w)
{
    wl_results_cell c[NCOLS];
    for (size_t i = 0; i < NCOLS; i++)
        c[i] = (wl_results_cell){NULL, NAN};
    const wl_serve_result *r = &p->r;
    c[C_GPU].s = p->gpu->id;
    int tp = p->engine->tp > 1 ? p->engine->tp : 1, dp = p->engine->dp > 1 ? p->engine->dp : 1;
    c[C_SYSTEM].s = tp > 1 && p->engine->system ? p->engine->system->id : NULL;
    c[C_GPUS].v = (double)tp * dp;
    c[C_DP].v = dp;
    c[C_TP].v = tp;
    c[C_EP].v = p->engine->ep ? tp : 1;
    c[C_MODEL].s = g->model->id;
    c[C_DTYPE].s = wl_dtype_name(g->dtype);
    c[C_WORKLOAD].s = wl_serve_requests_name(g->requests);
    c[C_REQUESTS].v = (double)wl_serve_requests_count(g->requests);
    c[C_SEQS].v = (double)p->engine->max_num_seqs;
    c[C_TOKENS].v = (double)p->engine->max_num_batched_tokens;
    c[C_RATE].v = p->engine->rate_rps;
    c[C_CLOCK].v = p->dclock;
    c[C_PCLOCK].v = p->pclock;
    c[C_DCLOCK].v = p->dclock;
    c[C_LIMIT].v = p->gpu->power_limit_w;
    c[C_ECLOCK].v = r->effective_clock_mhz;
    c[C_THROTTLED].v = r->throttled;
    const double v[] = {
        [C_BATCH] = r->avg_batch, [C_TPS] = r->output_tokens_per_s, [C_POWER] = r->power_w,
        [C_EPT] = r->energy_per_token_j, [C_EPR] = r->energy_per_request_j,
        [C_STEADY] = r->steady_s, [C_STEADY0] = r->steady_start_s, [C_STEADY1] = r->steady_end_s,
        [C_STABLE] = r->stable, [C_ITL50] = r->median_itl_ms, [C_ITL90] = r->p90_itl_ms,
        [C_ITL99] = r->p99_itl_ms, [C_TTFT50] = r->median_ttft_ms, [C_TTFT90] = r->p90_ttft_ms,
        [C_RBATCH] = r->run_avg_batch, [C_RTPS] = r->run_output_tokens_per_s,
        [C_RPOWER] = r->run_power_w, [C_REPT] = r->run_energy_per_token_j,
        [C_REPR] = r->run_energy_per_request_j, [C_TIME] = r->time_s, [C_ENERGY] = r->energy_j,
        [C_PREEMPT] = (double)r->preemptions, [C_KV] = (double)r->kv_cache_tokens};
    for (size_t i = C_BATCH; i <= C_KV; i++)
        c[i].v = v[i];
    c[C_SLO].v = g->optimize ? (double)p->meets : NAN;
    char seed[24];
    snprintf(seed, sizeof seed, "%llu", p->engine->seed);
    c[C_HOST].s = p->gpu->host_id;
    c[C_GMU].v = p->engine->gpu_memory_utilization;
    c[C_ASYNC].v = p->engine->async_scheduling;
    c[C_SEED].s = seed;
    c[C_TEMP].v = g->sampling.temperature;
    c[C_TOPP].v = g->sampling.top_p;
    c[C_TOPK].v = (double)g->sampling.top_k;
    c[C_REP].v = g->sampling.repetition_penalty;
    c[C_SAMPLER].s = g->flashinfer ? "flashinfer" : "native";
    c[C_OUTMEAN].v = g->output_mean_tokens;
    const char *set = g->gpu_set ? g->gpu_set + (size_t)(p->gpu - g->gpus) * WL_SERVE_SET_LEN : "";
    c[C_SET].s = set[0] ? set : NULL; /* none: an empty cell, None in Python */
    return wl_results_writer_row(w, c);
}

/* ---- the step log ----------------------------------------------------------------- */

enum {
    S_GPU, S_TP, S_DP, S_REPLICA, S_SEQS, S_CLOCK, S_PCLOCK, S_LIMIT, S_STEP, S_START, S_TIME, S_ENERGY, S_RUNNING,
    S_DECODE, S_PREFILL, S_SAMPLED, S_CACHE, S_COMM, S_STARTED, S_FINISHED, S_WAITING, S_IN, NSTEPCOLS
};

static const wl_results_col step_cols[NSTEPCOLS] = {
    [S_GPU] = WL_RESULTS_COL("gpu", WL_COL_TEXT, 0, 0),
    [S_TP] = WL_RESULTS_COL("tp", WL_COL_INT, 0, 0),
    [S_DP] = WL_RESULTS_COL("dp", WL_COL_INT, 0, 0),
    [S_REPLICA] = WL_RESULTS_COL("replica", WL_COL_INT, 0, 0), /* the engine of dp it is of */
    [S_SEQS] = WL_RESULTS_COL("max_num_seqs", WL_COL_INT, 0, 0),
    [S_CLOCK] = WL_RESULTS_COL("sm_clock_mhz", WL_COL_NUM, 1, 0),
    [S_PCLOCK] = WL_RESULTS_COL("prefill_clock_mhz", WL_COL_NUM, 1, 0),
    [S_LIMIT] = WL_RESULTS_COL("power_limit_w", WL_COL_NUM, 1, 0),
    [S_STEP] = WL_RESULTS_COL("step", WL_COL_INT, 0, 0),
    [S_START] = WL_RESULTS_COL_SIG("start_s", 12),
    [S_TIME] = WL_RESULTS_COL_SIG("time_ms", 12),
    [S_ENERGY] = WL_RESULTS_COL_SIG("energy_j", 12),
    [S_RUNNING] = WL_RESULTS_COL("running", WL_COL_INT, 0, 0),
    [S_DECODE] = WL_RESULTS_COL("decode_seqs", WL_COL_INT, 0, 0),
    [S_PREFILL] = WL_RESULTS_COL("prefill_tokens", WL_COL_INT, 0, 0),
    [S_SAMPLED] = WL_RESULTS_COL("sampled_tokens", WL_COL_INT, 0, 0),
    [S_CACHE] = WL_RESULTS_COL("cache_tokens", WL_COL_INT, 0, 0),
    [S_COMM] = WL_RESULTS_COL_SIG("comm_ms", 12), /* of time_ms: tensor-parallel collectives */
    [S_STARTED] = WL_RESULTS_COL("started", WL_COL_INT, 0, 0),
    [S_FINISHED] = WL_RESULTS_COL("finished", WL_COL_INT, 0, 0),
    [S_WAITING] = WL_RESULTS_COL("waiting", WL_COL_INT, 0, 0),
    [S_IN] = WL_RESULTS_COL("steady", WL_COL_BOOL, 0, 0),
};

const wl_results_col *wl_serve_step_cols(size_t *n)
{
    *n = NSTEPCOLS;
    return step_cols;
}

typedef struct {
    wl_results_writer *w;
    const point *p;
    int failed;
} step_log;

static void log_step(void *user, const wl_serve_step_rec *rec)
{
    step_log *l = user;
    if (l->failed)
        return;
    wl_results_cell c[NSTEPCOLS];
    for (size_t i = 0; i < NSTEPCOLS; i++)
        c[i] = (wl_results_cell){NULL, NAN};
    c[S_GPU].s = l->p->gpu->id;
    c[S_SEQS].v = (double)l->p->engine->max_num_seqs;
    c[S_TP].v = l->p->engine->tp > 1 ? l->p->engine->tp : 1;
    c[S_DP].v = l->p->engine->dp > 1 ? l->p->engine->dp : 1;
    c[S_REPLICA].v = rec->replica;
    c[S_CLOCK].v = l->p->dclock;
    c[S_PCLOCK].v = l->p->pclock;
    c[S_LIMIT].v = l->p->gpu->power_limit_w;
    const double v[] = {
        [S_STEP] = (double)rec->step, [S_START] = rec->start_s, [S_TIME] = rec->time_s * 1e3,
        [S_ENERGY] = rec->energy_j, [S_RUNNING] = (double)rec->running,
        [S_DECODE] = (double)rec->decode_seqs, [S_PREFILL] = (double)rec->prefill_tokens,
        [S_SAMPLED] = (double)rec->sampled_tokens, [S_CACHE] = (double)rec->cache_tokens,
        [S_COMM] = rec->comm_s * 1e3,
        [S_STARTED] = (double)rec->started,
        [S_FINISHED] = (double)rec->finished, [S_WAITING] = (double)rec->waiting,
        [S_IN] = rec->steady};
    for (size_t i = S_STEP; i < NSTEPCOLS; i++)
        c[i].v = v[i];
    l->failed = wl_results_writer_row(l->w, c) != 0;
}

/* The leaderboard's rule across a group: a run is stable when it passes
 * the benchmark's rule (wl_serve_result.stable) and so does every run of
 * the same GPU, clocks and engine settings at a smaller max_num_seqs
 * ("and all larger max_num_seqs of the same group", mlenergy_data
 * records/runs.py). */
static int same_group(const point *a, const point *b)
{
    const wl_serve_engine *x = a->engine, *y = b->engine;
    return a->gpu == b->gpu && a->pclock == b->pclock && a->dclock == b->dclock &&
           x->max_num_batched_tokens == y->max_num_batched_tokens &&
           x->gpu_memory_utilization == y->gpu_memory_utilization &&
           x->block_size == y->block_size && x->max_capture_size == y->max_capture_size &&
           x->async_scheduling == y->async_scheduling && x->sampler == y->sampler &&
           x->rate_rps == y->rate_rps && x->seed == y->seed && x->tp == y->tp && x->ep == y->ep && x->dp == y->dp &&
           x->system == y->system;
}

static void group_stability(point *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < n && p[i].r.stable; k++)
            if (!p[k].own && p[k].engine->max_num_seqs < p[i].engine->max_num_seqs &&
                same_group(&p[i], &p[k]))
                p[i].r.stable = 0;
}

/* The clocks a GPU runs at: those asked for within its range, or its
 * maximum; when optimizing without a list, up to 24 of its own clocks
 * evenly spread. */
static size_t clocks_of(const wl_serve_grid *g, const wl_core_gpu *gpu, double *out, size_t cap)
{
    size_t n = 0;
    if (g->clocks && g->n_clocks) {
        for (size_t i = 0; i < g->n_clocks && n < cap; i++)
            if (wl_core_gpu_clock_in_range(gpu, g->clocks[i]))
                out[n++] = g->clocks[i];
        return n;
    }
    if (!g->optimize) {
        out[0] = gpu->sm_clock_max_mhz;
        return 1;
    }
    size_t k = wl_core_gpu_clock_count(gpu);
    size_t want = k < 24 ? k : 24;
    for (size_t i = 0; i < want && n < cap; i++) {
        size_t at = want > 1 ? i * (k - 1) / (want - 1) : k - 1;
        double c = wl_core_gpu_clock(gpu, at);
        if (n == 0 || c != out[n - 1])
            out[n++] = c;
    }
    if (n == 0)
        out[n++] = gpu->sm_clock_max_mhz;
    return n;
}

static int keep(point **pts, size_t *n, size_t *cap, const point *p)
{
    if (*n == *cap) {
        size_t nc = *cap ? 2 * *cap : 64;
        point *np = realloc(*pts, nc * sizeof *np);
        if (!np)
            return WL_ENOMEM;
        *pts = np;
        *cap = nc;
    }
    (*pts)[(*n)++] = *p;
    return WL_OK;
}

int wl_serve_grid_run(const wl_serve_grid *g, wl_results_writer *w, wl_error *err)
{
    int rc = WL_OK;
    size_t cap = g->n_clocks > 64 ? g->n_clocks : 64;
    double *clk = malloc(cap * sizeof *clk);
    wl_serve_engine *full = calloc(g->n_engines ? g->n_engines : 1, sizeof *full);
    /* every run is kept until the grid ends: a row's stable depends on the
     * runs of its group at smaller max_num_seqs */
    point *pts = NULL;
    size_t npts = 0, ptcap = 0;
    if (!clk || !full) {
        free(clk);
        free(full);
        wl_error_set(err, "serve", 0, "", "out of memory");
        return WL_ENOMEM;
    }
    for (size_t ei = 0; ei < g->n_engines && !rc; ei++) {
        /* the engine as it runs, vLLM's defaults filled in: what the rows print */
        full[ei] = g->engines[ei];
        wl_serve_engine_defaults(&full[ei]);
        const wl_serve_engine *eng = &full[ei];
        int said = 0;
        /* optimizing: the best point of each GPU id (over its power limits) */
        size_t gi = 0;
        while (gi < g->n_gpus && !rc) {
            size_t gj = gi + 1;
            while (gj < g->n_gpus && g->optimize && !strcmp(g->gpus[gj].id, g->gpus[gi].id))
                gj++;
            size_t best = 0;
            int have = 0;
            size_t tried = 0;
            for (size_t k = gi; k < gj && !rc; k++) {
                const wl_core_gpu *gpu = &g->gpus[k];
                wl_serve_sim *sim = NULL;
                if ((rc = wl_serve_sim_create(gpu, g->model, g->dtype, eng, &sim, err)))
                    break;
                size_t nc = clocks_of(g, gpu, clk, cap);
                if (nc == 0)
                    wl_core_say(g->note, g->user, "%s: none of the clocks asked for is in its range",
                                gpu->id);
                size_t np = g->optimize && g->phase_clocks ? nc : 1;
                for (size_t a = 0; a < np && !rc; a++)
                    for (size_t b = 0; b < nc && !rc; b++) {
                        double pc = g->optimize && g->phase_clocks ? clk[a]
                                    : g->prefill_clock_mhz > 0         ? g->prefill_clock_mhz
                                                                       : clk[b];
                        point p = {.gpu = gpu, .engine = eng, .pclock = pc, .dclock = clk[b]};
                        wl_core_op po = {.sm_clock_mhz = p.pclock},
                                   dop = {.sm_clock_mhz = p.dclock};
                        step_log lg = {.w = g->steps, .p = &p};
                        wl_serve_sim_log(sim, g->steps ? log_step : NULL, &lg);
                        rc = wl_serve_sim_run(sim, g->requests, &po, &dop, &p.r, err);
                        if (!rc && lg.failed) {
                            wl_error_set(err, "serve", 0, "steps", "could not write the step log");
                            rc = WL_EIO;
                        }
                        if (rc)
                            break;
                        tried++;
                        if (p.r.steady_why[0] && !said) {
                            wl_core_say(g->note, g->user, "%s, max_num_seqs %lld: %s; its steady "
                                        "columns are empty, the run_ columns cover the whole run",
                                        gpu->id, eng->max_num_seqs, p.r.steady_why);
                            said = 1;
                        }
                        p.meets = meets_slo(g, &p.r);
                        p.emit = !g->optimize || g->all;
                        p.own = p.r.stable;
                        if ((rc = keep(&pts, &npts, &ptcap, &p))) {
                            wl_error_set(err, "serve", 0, "", "out of memory");
                            break;
                        }
                        /* the lowest whole-run energy a request: defined for every run */
                        if (g->optimize && p.meets &&
                            (!have || p.r.run_energy_per_request_j <
                                          pts[best].r.run_energy_per_request_j)) {
                            best = npts - 1;
                            have = 1;
                        }
                    }
                wl_serve_sim_free(sim);
            }
            if (!rc && g->optimize && !g->all) {
                if (have) {
                    pts[best].emit = 1;
                } else if (tried) {
                    char slo[96], itl[40] = "", ttft[40] = "";
                    if (!isnan(g->max_itl_ms))
                        snprintf(itl, sizeof itl, "p90 ITL <= %g ms", g->max_itl_ms);
                    if (!isnan(g->max_ttft_ms))
                        snprintf(ttft, sizeof ttft, "p90 TTFT <= %g ms", g->max_ttft_ms);
                    snprintf(slo, sizeof slo, "%s%s%s", itl, itl[0] && ttft[0] ? ", " : "", ttft);
                    wl_core_say(g->note, g->user, "%s, max_num_seqs %lld: no clock or power "
                                "limit meets the SLO (%s); see --all for the points",
                                g->gpus[gi].id, eng->max_num_seqs, slo);
                }
            }
            gi = gj;
        }
    }
    if (!rc) {
        group_stability(pts, npts);
        for (size_t i = 0; i < npts && !rc; i++)
            if (pts[i].emit)
                rc = row(g, &pts[i], w) ? WL_ENOMEM : WL_OK;
    }
    free(pts);
    free(full);
    free(clk);
    return rc;
}
