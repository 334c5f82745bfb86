/* A serving study from options, as 'wattlas serve' and Python's
 * wattlas.serve give them (one key vocabulary: the CLI's option names with
 * '_' for '-'), resolved into GPUs, a model, requests and engines, then run. */
#include "serve_internal.h"

#include "../presets/wattlas_presets.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SETS 8
#define MAX_VARIANTS 4096

struct wl_serve_job {
    wl_core_strlist gpus;
    char *model, *host, *workload, *dtype;
    wl_core_numlist clocks, seqs, tp, dp;
    char *system;
    wl_cluster_system sys; /* resolved when some tp > 1 */
    char *set_key[MAX_SETS];
    wl_core_numlist set_val[MAX_SETS];
    size_t nset;
    long long requests, prompt_tokens, output_tokens, max_num_batched_tokens, ep;
    double gpu_memory_utilization, rate, max_itl_ms, max_ttft_ms, prefill_clock;
    double temperature, top_p, top_k, repetition_penalty; /* NaN: the requests' own */
    double output_mean_tokens;        /* NaN: the requests' own */
    double *hist;                     /* the answers' histogram: nb + 1 edges, nb counts */
    size_t hist_bins;
    unsigned long long seed;
    int async_scheduling, optimize, phase_clocks, all, flashinfer;
    wl_serve_sampling sampling; /* resolved */
    /* resolved by wl_serve_job_finish */
    wl_core_gpu *gv;
    char *gset; /* per variant: its set values other than power_limit_w */
    size_t ngv;
    wl_core_model m;
    wl_dtype dt;
    wl_serve_requests *req;
    wl_serve_engine *eng;
    size_t neng;
    wl_results_writer *steps; /* the step log's, or NULL */
    int finished;
};

wl_serve_job *wl_serve_job_create(void)
{
    wl_serve_job *j = calloc(1, sizeof *j);
    if (j) {
        j->max_itl_ms = NAN;
        j->max_ttft_ms = NAN;
        j->prefill_clock = NAN;
        j->temperature = j->top_p = j->top_k = j->repetition_penalty = NAN;
        j->output_mean_tokens = NAN;
    }
    return j;
}

void wl_serve_job_free(wl_serve_job *j)
{
    if (!j)
        return;
    wl_core_strlist_free(&j->gpus);
    free(j->model);
    free(j->host);
    free(j->workload);
    free(j->dtype);
    wl_core_numlist_free(&j->clocks);
    wl_core_numlist_free(&j->seqs);
    wl_core_numlist_free(&j->tp);
    wl_core_numlist_free(&j->dp);
    free(j->system);
    for (size_t i = 0; i < j->nset; i++) {
        free(j->set_key[i]);
        wl_core_numlist_free(&j->set_val[i]);
    }
    free(j->gv);
    free(j->gset);
    wl_serve_requests_free(j->req);
    free(j->eng);
    free(j->hist);
    free(j);
}

static int dup_to(char **dst, const char *v, const char *source, const char *key, wl_error *err)
{
    free(*dst);
    *dst = strdup(v);
    if (!*dst) {
        wl_error_set(err, source, 0, key, "out of memory");
        return WL_ENOMEM;
    }
    return WL_OK;
}

static int onoff(const char *v, int *out, const char *source, const char *key, wl_error *err)
{
    if (!strcmp(v, "on") || !strcmp(v, "1") || !strcmp(v, "true"))
        *out = 1;
    else if (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "false"))
        *out = 0;
    else {
        wl_error_set(err, source, 0, key, "expected on or off, got '%.40s'", v);
        return WL_EINVAL;
    }
    return WL_OK;
}

static const char *const keys[] = {
    "gpu", "model", "dtype", "host", "set", "power_limit_w", "clock", "workload", "requests", "prompt_tokens",
    "output_tokens", "seed", "rate", "temperature", "top_p", "top_k", "repetition_penalty",
    "sampler",
    "max_num_seqs", "max_num_batched_tokens", "tp", "ep", "dp", "system",
    "gpu_memory_utilization", "async_scheduling", "optimize", "max_itl_ms", "max_ttft_ms",
    "prefill_clock", "output_mean_tokens",
    "phase_clocks", "all"};
#define NKEYS (sizeof keys / sizeof *keys)

static const char *key_of(void *user, size_t i)
{
    (void)user;
    return keys[i];
}

int wl_serve_job_set(wl_serve_job *j, const char *key, const char *v, const char *source,
                     wl_error *err)
{
    double x;
    long long n;
    j->finished = 0;
    if (!strcmp(key, "gpu"))
        return wl_core_parse_names(v, source, 0, key, &j->gpus, err);
    if (!strcmp(key, "model"))
        return dup_to(&j->model, v, source, key, err);
    if (!strcmp(key, "dtype"))
        return dup_to(&j->dtype, v, source, key, err);
    if (!strcmp(key, "host"))
        return dup_to(&j->host, v, source, key, err);
    if (!strcmp(key, "workload"))
        return dup_to(&j->workload, v, source, key, err);
    if (!strcmp(key, "clock"))
        return wl_core_parse_axis(v, 1, 100000, 0, source, 0, key, &j->clocks, err);
    if (!strcmp(key, "max_num_seqs"))
        return wl_core_parse_axis(v, 1, 1000000, 1, source, 0, key, &j->seqs, err);
    if (!strcmp(key, "tp"))
        return wl_core_parse_axis(v, 1, 4096, 1, source, 0, key, &j->tp, err);
    if (!strcmp(key, "dp"))
        return wl_core_parse_axis(v, 1, 4096, 1, source, 0, key, &j->dp, err);
    if (!strcmp(key, "system"))
        return dup_to(&j->system, v, source, key, err);
    if (!strcmp(key, "power_limit_w")) { /* --power-limit-w LIST: --set power_limit_w=LIST */
        char kv[600];
        if (snprintf(kv, sizeof kv, "power_limit_w=%s", v) >= (int)sizeof kv) {
            wl_error_set(err, source, 0, key, "too long a list");
            return WL_EINVAL;
        }
        return wl_serve_job_set(j, "set", kv, source, err);
    }
    if (!strcmp(key, "set")) {
        const char *eq = strchr(v, '=');
        if (!eq || eq == v) {
            wl_error_set(err, source, 0, key, "expected KEY=LIST, got '%.60s'", v);
            return WL_EINVAL;
        }
        if (j->nset == MAX_SETS) {
            wl_error_set(err, source, 0, key, "at most %d --set keys", MAX_SETS);
            return WL_EINVAL;
        }
        size_t i = j->nset;
        j->set_key[i] = strndup(v, (size_t)(eq - v));
        if (!j->set_key[i]) {
            wl_error_set(err, source, 0, key, "out of memory");
            return WL_ENOMEM;
        }
        j->set_val[i] = (wl_core_numlist){0};
        j->nset++;
        int rc = wl_core_parse_axis(eq + 1, -1e15, 1e15, 0, source, 0, j->set_key[i], &j->set_val[i], err);
        return rc;
    }
    struct {
        const char *k;
        long long *dst;
        long long lo, hi;
    } ints[] = {{"requests", &j->requests, 1, 10000000},
                {"prompt_tokens", &j->prompt_tokens, 1, WL_MAX_SEQ},
                {"output_tokens", &j->output_tokens, 1, WL_MAX_SEQ},
                {"max_num_batched_tokens", &j->max_num_batched_tokens, 1, 1000000},
                {"ep", &j->ep, 1, 4096}};
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
        if (!strcmp(key, ints[i].k)) {
            int rc = wl_core_parse_int(v, ints[i].lo, ints[i].hi, source, 0, key, &n, err);
            if (!rc)
                *ints[i].dst = n;
            return rc;
        }
    if (!strcmp(key, "top_k")) {
        int rc = wl_core_parse_int(v, 0, 1000000000, source, 0, key, &n, err);
        if (!rc)
            j->top_k = (double)n;
        return rc;
    }
    if (!strcmp(key, "sampler")) {
        if (strcmp(v, "native") && strcmp(v, "flashinfer")) {
            wl_error_set(err, source, 0, key, "expected native or flashinfer, got '%.40s'", v);
            return WL_EINVAL;
        }
        j->flashinfer = !strcmp(v, "flashinfer");
        return WL_OK;
    }
    if (!strcmp(key, "seed")) {
        int rc = wl_core_parse_int(v, 0, 4000000000000000000LL, source, 0, key, &n, err);
        if (!rc)
            j->seed = (unsigned long long)n;
        return rc;
    }
    struct {
        const char *k;
        double *dst;
        double lo, hi;
    } reals[] = {{"rate", &j->rate, 0, 1e6},
                 {"gpu_memory_utilization", &j->gpu_memory_utilization, 0.01, 1},
                 {"temperature", &j->temperature, 0, 100},
                 {"top_p", &j->top_p, 1e-6, 1},
                 {"repetition_penalty", &j->repetition_penalty, 0.01, 100},
                 {"max_itl_ms", &j->max_itl_ms, 1e-3, 1e9},
                 {"prefill_clock", &j->prefill_clock, 1, 100000},
                 {"output_mean_tokens", &j->output_mean_tokens, 1, (double)WL_MAX_SEQ},
                 {"max_ttft_ms", &j->max_ttft_ms, 1e-3, 1e12}};
    for (size_t i = 0; i < sizeof reals / sizeof *reals; i++)
        if (!strcmp(key, reals[i].k)) {
            int rc = wl_core_parse_real(v, reals[i].lo, reals[i].hi, source, 0, key, &x, err);
            if (!rc)
                *reals[i].dst = x;
            return rc;
        }
    if (!strcmp(key, "async_scheduling"))
        return onoff(v, &j->async_scheduling, source, key, err);
    if (!strcmp(key, "phase_clocks"))
        return onoff(v, &j->phase_clocks, source, key, err);
    if (!strcmp(key, "all"))
        return onoff(v, &j->all, source, key, err);
    if (!strcmp(key, "optimize")) {
        if (strcmp(v, "energy")) {
            wl_error_set(err, source, 0, key, "expected energy, got '%.40s'", v);
            return WL_EINVAL;
        }
        j->optimize = 1;
        return WL_OK;
    }
    char hint[160];
    wl_core_name_hint(key_of, NULL, NKEYS, key, hint, sizeof hint);
    wl_error_set(err, source, 0, key, "unknown serve option '%.60s'%s", key, hint);
    return WL_EINVAL;
}

/* GPUs x the cartesian product of the --set lists. */
static int gpus(wl_serve_job *j, wl_error *err)
{
    /* a --system without --gpu: the system's GPU (system_of loaded it) */
    const char *sys_gpu = j->system ? j->sys.gpu : "";
    size_t names = j->gpus.n ? j->gpus.n : 1, per = 1;
    for (size_t i = 0; i < j->nset; i++) {
        per *= j->set_val[i].n;
        if (per > MAX_VARIANTS)
            break;
    }
    if (names * per > MAX_VARIANTS) {
        wl_error_set(err, "--set", 0, "set", "more than %d GPU variants", MAX_VARIANTS);
        return WL_EINVAL;
    }
    j->gv = calloc(names * per, sizeof *j->gv);
    j->gset = calloc(names * per, WL_SERVE_SET_LEN);
    if (!j->gv || !j->gset) {
        wl_error_set(err, "serve", 0, "gpu", "out of memory");
        return WL_ENOMEM;
    }
    for (size_t g = 0; g < names; g++) {
        wl_core_gpu base;
        const char *name = j->gpus.n ? j->gpus.v[g] : sys_gpu[0] ? sys_gpu : "h100-sxm-80gb";
        int rc = wl_preset_gpu_load(name, &base, err);
        if (!rc && j->host)
            rc = wl_preset_gpus_set_host(j->host, &base, 1, err);
        if (rc)
            return rc;
        for (size_t k = 0; k < per; k++) {
            char *st = j->gset + j->ngv * WL_SERVE_SET_LEN;
            wl_core_gpu *out = &j->gv[j->ngv++];
            *out = base;
            size_t r = k;
            const char *kk[MAX_SETS];
            double v[MAX_SETS];
            for (size_t i = 0; i < j->nset; i++) {
                v[i] = j->set_val[i].v[r % j->set_val[i].n];
                r /= j->set_val[i].n;
                kk[i] = j->set_key[i];
                size_t at = strlen(st);
                if (strcmp(kk[i], "power_limit_w") && at < WL_SERVE_SET_LEN)
                    snprintf(st + at, WL_SERVE_SET_LEN - at, "%s%s=%.17g", at ? " " : "", kk[i],
                             v[i]);
            }
            /* every key at once, then their relations (wl_preset_gpu_apply),
             * as predict and sweep take them */
            size_t failed;
            if (j->nset && (rc = wl_preset_gpu_apply(out, kk, v, j->nset, &failed, err))) {
                wl_error_locate(err, "--set", 0);
                return rc;
            }
        }
    }
    return WL_OK;
}

/* The system whose links join a tensor-parallel run's GPUs: --system
 * (loaded before the GPUs, whose default it gives), or the system preset
 * built of the first GPU (dgx-h100 for h100-sxm-80gb), asked only when some
 * --tp is above 1. */
static int named_system(wl_serve_job *j, wl_error *err)
{
    memset(&j->sys, 0, sizeof j->sys);
    int rc = j->system ? wl_cluster_system_load(j->system, &j->sys, err) : WL_OK;
    if (rc)
        wl_error_locate(err, "--system", 0);
    return rc;
}

static int system_of(wl_serve_job *j, wl_error *err)
{
    int multi = 0;
    for (size_t i = 0; i < j->tp.n; i++)
        multi |= j->tp.v[i] > 1;
    if (j->system || !multi)
        return WL_OK;
    const char *gpu = j->gv[0].id;
    for (size_t i = 0; i < wl_preset_count(WL_PRESET_SYSTEM); i++) {
        wl_cluster_system s;
        wl_error e = {0};
        if (!wl_cluster_system_load(wl_preset_id(WL_PRESET_SYSTEM, i), &s, &e) &&
            !strcmp(s.gpu, gpu)) {
            j->sys = s;
            return WL_OK;
        }
    }
    wl_error_set(err, "--tp", 0, "system", "no system preset is built of %s: name the GPUs' links "
                 "with --system (wattlas presets list shows them)", gpu);
    return WL_EINVAL;
}

int wl_serve_job_finish(wl_serve_job *j, wl_error *err)
{
    free(j->gv);
    free(j->gset);
    j->gv = NULL;
    j->gset = NULL;
    j->ngv = 0;
    wl_serve_requests_free(j->req);
    j->req = NULL;
    free(j->eng);
    j->eng = NULL;
    int rc = named_system(j, err);
    if (!rc)
        rc = gpus(j, err);
    if (!rc)
        rc = wl_preset_model_load(j->model ? j->model : "llama-3-8b", &j->m, err);
    j->dt = WL_DT_BF16;
    if (!rc && j->dtype && wl_dtype_parse(j->dtype, &j->dt)) {
        wl_error_set(err, "--dtype", 0, "dtype", "unknown precision '%.40s'", j->dtype);
        rc = WL_EINVAL;
    }
    if (!rc && (j->prompt_tokens > 0) != (j->output_tokens > 0)) {
        wl_error_set(err, j->prompt_tokens ? "--prompt-tokens" : "--output-tokens", 0,
                     j->prompt_tokens ? "output_tokens" : "prompt_tokens",
                     "fixed lengths need both --prompt-tokens and --output-tokens");
        rc = WL_EINVAL;
    }
    if (!rc && j->prompt_tokens > 0 && j->workload) {
        wl_error_set(err, "--workload", 0, "workload",
                     "give a workload or fixed --prompt-tokens/--output-tokens, not both");
        rc = WL_EINVAL;
    }
    if (!rc) {
        const char *w = j->workload ? j->workload : "lm-arena-chat";
        size_t len = strlen(w);
        if (j->prompt_tokens > 0)
            rc = wl_serve_requests_fixed(j->requests ? j->requests : 1024, j->prompt_tokens,
                                         j->output_tokens, &j->req, err);
        else if (len > 4 && !strcmp(w + len - 4, ".csv"))
            rc = wl_serve_requests_csv(w, j->requests, &j->req, err);
        else
            rc = wl_serve_requests_preset(w, j->requests, j->seed, &j->req, err);
    }
    if (!rc && j->prompt_tokens > 0 && (j->hist || !isnan(j->output_mean_tokens))) {
        wl_error_set(err, "--output-mean-tokens", 0, "output_mean_tokens",
                     "fixed lengths have one output length: give it with --output-tokens");
        rc = WL_EINVAL;
    }
    if (!rc && j->hist)
        rc = wl_serve_requests_output_hist(j->req, j->hist, j->hist + j->hist_bins + 1,
                                           j->hist_bins, j->seed, "the output histogram", err);
    if (!rc && !isnan(j->output_mean_tokens))
        rc = wl_serve_requests_output_mean(j->req, j->output_mean_tokens, "--output-mean-tokens",
                                           err);
    if (!rc) { /* the options' sampling over the requests' own */
        wl_serve_requests_sampling(j->req, &j->sampling);
        if (!isnan(j->temperature))
            j->sampling.temperature = j->temperature;
        if (!isnan(j->top_p))
            j->sampling.top_p = j->top_p;
        if (!isnan(j->top_k))
            j->sampling.top_k = (long long)j->top_k;
        if (!isnan(j->repetition_penalty))
            j->sampling.repetition_penalty = j->repetition_penalty;
    }
    /* --ep N: vLLM's --enable-expert-parallel, whose expert-parallel group
     * spans tp x dp GPUs (and serve's data-parallel engines are dense-only):
     * N is --tp's, or gives it */
    if (!rc && j->ep > 1 && !j->tp.n) {
        char n[24];
        snprintf(n, sizeof n, "%lld", j->ep);
        rc = wl_core_parse_axis(n, 1, 4096, 1, "--ep", 0, "tp", &j->tp, err);
    }
    for (size_t i = 0; !rc && j->ep > 1 && i < j->tp.n; i++)
        if (j->tp.v[i] != (double)j->ep) {
            wl_error_set(err, "--ep", 0, "ep", "expert parallelism %lld on tensor parallelism "
                         "%g: vLLM's expert-parallel group spans the tp x dp GPUs and serve's "
                         "data-parallel engines are dense-only, so --ep is --tp's", j->ep,
                         j->tp.v[i]);
            rc = WL_EINVAL;
        }
    if (!rc)
        rc = system_of(j, err);
    if (!rc) {
        /* max_num_seqs within tp within dp: a list of each, every triple */
        size_t ns = j->seqs.n ? j->seqs.n : 1, nt = j->tp.n ? j->tp.n : 1;
        size_t nd = j->dp.n ? j->dp.n : 1;
        j->neng = ns * nt * nd;
        j->eng = calloc(j->neng, sizeof *j->eng);
        if (!j->eng) {
            wl_error_set(err, "serve", 0, "", "out of memory");
            rc = WL_ENOMEM;
        }
        for (size_t i = 0; !rc && i < j->neng; i++)
            j->eng[i] = (wl_serve_engine){
                .max_num_seqs = j->seqs.n ? (long long)j->seqs.v[i % ns] : 0,
                .tp = j->tp.n ? (int)j->tp.v[i / ns % nt] : 1, .ep = j->ep > 1,
                .dp = j->dp.n ? (int)j->dp.v[i / ns / nt] : 1,
                .system = j->system || j->sys.id[0] ? &j->sys : NULL,
                .max_num_batched_tokens = j->max_num_batched_tokens,
                .gpu_memory_utilization = j->gpu_memory_utilization,
                .async_scheduling = j->async_scheduling, .rate_rps = j->rate, .seed = j->seed,
                .sampler = wl_serve_sampler(&j->sampling, j->flashinfer),
                .penalties = j->sampling.repetition_penalty != 1};
    }
    if (!rc && j->clocks.n && !j->optimize) /* each clock must be some GPU's */
        for (size_t c = 0; c < j->clocks.n && !rc; c++) {
            int ok = 0;
            for (size_t g = 0; g < j->ngv && !ok; g++)
                ok = wl_core_gpu_clock_in_range(&j->gv[g], j->clocks.v[c]);
            if (!ok) {
                wl_error_set(err, "--clock", 0, "clock", "%g MHz is outside every GPU's clock range",
                             j->clocks.v[c]);
                rc = WL_EINVAL;
            }
        }
    if (!rc && !isnan(j->prefill_clock)) {
        int ok = 0;
        for (size_t g = 0; g < j->ngv && !ok; g++)
            ok = wl_core_gpu_clock_in_range(&j->gv[g], j->prefill_clock);
        if (!ok || j->phase_clocks) {
            wl_error_set(err, "--prefill-clock", 0, "prefill_clock", ok ?
                         "--phase-clocks searches the prefill clock itself; give one or the other"
                         : "%g MHz is outside every GPU's clock range", j->prefill_clock);
            rc = WL_EINVAL;
        }
    }
    if (!rc && !j->optimize && (!isnan(j->max_itl_ms) || !isnan(j->max_ttft_ms) ||
                                j->phase_clocks || j->all)) {
        /* the option given is the one named (issue 77: --all alone was
         * taken, and did nothing) */
        const char *opt = !isnan(j->max_itl_ms)    ? "--max-itl-ms"
                          : !isnan(j->max_ttft_ms) ? "--max-ttft-ms"
                          : j->phase_clocks        ? "--phase-clocks"
                                                   : "--all";
        wl_error_set(err, opt, 0, "optimize",
                     "an SLO, --phase-clocks and --all apply to --optimize energy");
        rc = WL_EINVAL;
    }
    /* what cannot run is said before any row is written: each GPU (one
     * of its power-limit variants: they share its memory) with each engine
     * holds the model and the longest request */
    for (size_t g = 0; !rc && g < j->ngv; g++) {
        if (g > 0 && !strcmp(j->gv[g].id, j->gv[g - 1].id))
            continue;
        for (size_t e = 0; !rc && e < j->neng; e++) {
            wl_serve_sim *sim = NULL; /* it fills in vLLM's defaults */
            rc = wl_serve_sim_create(&j->gv[g], &j->m, j->dt, &j->eng[e], &sim, err);
            if (!rc)
                rc = wl_serve_sim_check(sim, j->req, err);
            wl_serve_sim_free(sim);
        }
    }
    j->finished = !rc;
    return rc;
}

void wl_serve_job_describe(const wl_serve_job *j, char *buf, size_t n)
{
    double p = 0, o = 0;
    if (j->req)
        wl_serve_requests_means(j->req, &p, &o);
    static const char *const how[] = {"greedy", "temperature alone", "top-k/top-p by a full sort",
                                      "top-k/top-p by FlashInfer"};
    const wl_serve_sampling *s = &j->sampling;
    wl_core_sampler k = wl_serve_sampler(s, j->flashinfer);
    char samp[128];
    if (k == WL_SAMPLER_GREEDY)
        snprintf(samp, sizeof samp, "greedy");
    else
        snprintf(samp, sizeof samp, "temperature %g, top-p %g, top-k %lld: %s", s->temperature,
                 s->top_p, s->top_k, how[k]);
    snprintf(buf, n, "%s %s, %zu requests of %s (mean prompt %.0f, output %.0f tokens; %s), %s",
             j->m.id, wl_dtype_name(j->dt), j->req ? wl_serve_requests_count(j->req) : 0,
             j->req ? wl_serve_requests_name(j->req) : "", p, o, samp,
             j->rate > 0 ? "Poisson arrivals" : "all at once (saturated)");
}

int wl_serve_job_run(wl_serve_job *j, wl_results_writer *w, void (*note)(void *, const char *),
                     void *user, wl_error *err)
{
    if (!j->finished) {
        int rc = wl_serve_job_finish(j, err);
        if (rc)
            return rc;
    }
    wl_serve_grid g = {.gpus = j->gv, .n_gpus = j->ngv, .gpu_set = j->gset, .model = &j->m, .dtype = j->dt,
                       .requests = j->req, .engines = j->eng, .n_engines = j->neng,
                       .clocks = j->clocks.n ? j->clocks.v : NULL, .n_clocks = j->clocks.n,
                       .optimize = j->optimize, .max_itl_ms = j->max_itl_ms,
                       .max_ttft_ms = j->max_ttft_ms, .phase_clocks = j->phase_clocks,
                       .all = j->all, .sampling = j->sampling, .flashinfer = j->flashinfer,
                       .prefill_clock_mhz = isnan(j->prefill_clock) ? 0 : j->prefill_clock,
                       .output_mean_tokens = j->output_mean_tokens,
                       .steps = j->steps, .note = note, .user = user};
    return wl_serve_grid_run(&g, w, err);
}

int wl_serve_job_output_hist(wl_serve_job *j, const double *edges, const double *counts,
                             size_t nb, wl_error *err)
{
    free(j->hist);
    j->hist = malloc((2 * nb + 1) * sizeof *j->hist);
    j->hist_bins = 0;
    j->finished = 0;
    if (!j->hist) {
        wl_error_set(err, "serve", 0, "output_tokens", "out of memory");
        return WL_ENOMEM;
    }
    memcpy(j->hist, edges, (nb + 1) * sizeof *j->hist);
    memcpy(j->hist + nb + 1, counts, nb * sizeof *j->hist);
    j->hist_bins = nb;
    return WL_OK;
}

void wl_serve_job_step_log(wl_serve_job *j, wl_results_writer *w)
{
    j->steps = w;
}

int wl_serve_job_result(wl_serve_job *j, wl_serve_result *res, wl_error *err)
{
    if (!j->finished) {
        int rc = wl_serve_job_finish(j, err);
        if (rc)
            return rc;
    }
    if (j->ngv != 1 || j->neng != 1 || j->clocks.n > 1 || j->optimize) {
        wl_error_set(err, "serve", 0, "", "one run needs one GPU, one max_num_seqs and one clock");
        return WL_EINVAL;
    }
    const wl_core_gpu *g = &j->gv[0];
    double clock = j->clocks.n ? j->clocks.v[0] : g->sm_clock_max_mhz;
    if (!wl_core_gpu_clock_in_range(g, clock)) {
        wl_error_set(err, "serve", 0, "clock", "%g MHz is outside %s's clock range", clock, g->id);
        return WL_EINVAL;
    }
    wl_serve_sim *sim = NULL;
    int rc = wl_serve_sim_create(g, &j->m, j->dt, &j->eng[0], &sim, err);
    if (!rc)
        rc = wl_serve_sim_check(sim, j->req, err);
    /* prefill at --prefill-clock where given, as the grid runs it */
    wl_core_op op = {.sm_clock_mhz = clock},
               pop = {.sm_clock_mhz = isnan(j->prefill_clock) ? clock : j->prefill_clock};
    if (!rc)
        rc = wl_serve_sim_run(sim, j->req, &pop, &op, res, err);
    wl_serve_sim_free(sim);
    return rc;
}

const wl_serve_requests *wl_serve_job_requests(const wl_serve_job *j)
{
    return j->req;
}

void wl_serve_job_sampling(const wl_serve_job *j, wl_serve_sampling *out)
{
    *out = j->sampling;
}
