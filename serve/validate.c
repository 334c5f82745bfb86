/* Scoring measured serving rows: each row of a CSV with serve's columns
 * (python3 -m wattlas.measure serve writes them) simulated as 'wattlas
 * serve' would run it, on its GPU's preset, and written beside its
 * measurement; the MAPE of the ITL, power, energy per token and rate. */
#include "serve_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int wl_serve_is_measurement(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[8192];
    int yes = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#')
            continue;
        /* serve's columns, or the ML.ENERGY leaderboard's (energy_per_token_joules) */
        yes = strstr(line, "max_num_seqs") && strstr(line, "energy_per_token_j");
        break;
    }
    fclose(f);
    return yes;
}

enum {
    V_GPU, V_MODEL, V_DTYPE, V_WORKLOAD, V_SEQS, V_CLOCK, V_LIMIT, V_ITL50, V_PITL50, V_ITL90,
    V_PITL90, V_TPS, V_PTPS, V_POWER, V_PPOWER, V_EPT, V_PEPT, V_BATCH, V_PBATCH, NV
};

static const wl_results_col vcols[NV] = {
    [V_GPU] = WL_RESULTS_COL("gpu", WL_COL_TEXT, 0, 0),
    [V_MODEL] = WL_RESULTS_COL("model", WL_COL_TEXT, 0, 0),
    [V_DTYPE] = WL_RESULTS_COL("dtype", WL_COL_TEXT, 0, 0),
    [V_WORKLOAD] = WL_RESULTS_COL("workload", WL_COL_TEXT, 0, 0),
    [V_SEQS] = WL_RESULTS_COL("max_num_seqs", WL_COL_INT, 0, 0),
    [V_CLOCK] = WL_RESULTS_COL("sm_clock_mhz", WL_COL_NUM, 1, 0),
    [V_LIMIT] = WL_RESULTS_COL("power_limit_w", WL_COL_NUM, 1, 0),
    [V_ITL50] = WL_RESULTS_COL("median_itl_ms", WL_COL_NUM, 3, 0),
    [V_PITL50] = WL_RESULTS_COL("predicted_median_itl_ms", WL_COL_NUM, 3, 0),
    [V_ITL90] = WL_RESULTS_COL("p90_itl_ms", WL_COL_NUM, 3, 0),
    [V_PITL90] = WL_RESULTS_COL("predicted_p90_itl_ms", WL_COL_NUM, 3, 0),
    [V_TPS] = WL_RESULTS_COL_SIG("output_tokens_per_s", 6),
    [V_PTPS] = WL_RESULTS_COL_SIG("predicted_output_tokens_per_s", 6),
    [V_POWER] = WL_RESULTS_COL("power_w", WL_COL_NUM, 1, 0),
    [V_PPOWER] = WL_RESULTS_COL("predicted_power_w", WL_COL_NUM, 1, 0),
    [V_EPT] = WL_RESULTS_COL("energy_per_token_j", WL_COL_NUM, 5, 0),
    [V_PEPT] = WL_RESULTS_COL("predicted_energy_per_token_j", WL_COL_NUM, 5, 0),
    [V_BATCH] = WL_RESULTS_COL("avg_batch", WL_COL_NUM, 2, 0),
    [V_PBATCH] = WL_RESULTS_COL("predicted_avg_batch", WL_COL_NUM, 2, 0),
};

const wl_results_col *wl_serve_validate_cols(size_t *n)
{
    *n = NV;
    return vcols;
}

/* The row's settings as serve's options: the column, the option, and
 * whether the row must have it. */
static const struct {
    const char *col, *key;
    int required;
} keys[] = {
    {"model", "model", 1},
    {"dtype", "dtype", 0},
    {"max_num_seqs", "max_num_seqs", 1},
    {"sm_clock_mhz", "clock", 1},
    {"prompt_tokens", "prompt_tokens", 0},
    {"output_tokens", "output_tokens", 0},
    {"requests", "requests", 0},
    {"seed", "seed", 0},
    {"max_num_batched_tokens", "max_num_batched_tokens", 0},
    {"async_scheduling", "async_scheduling", 0},
    {"temperature", "temperature", 0},
    {"top_p", "top_p", 0},
    {"top_k", "top_k", 0},
    {"repetition_penalty", "repetition_penalty", 0},
    {"sampler", "sampler", 0},
    {"gpu_memory_utilization", "gpu_memory_utilization", 0},
    {"rate_rps", "rate", 0},
    {"prefill_clock_mhz", "prefill_clock", 0},
    {"output_mean_tokens", "output_mean_tokens", 0},
    {"tp", "tp", 0},
    {"ep", "ep", 0},
    {"dp", "dp", 0},
    {"system", "system", 0},
};
#define NKEYS (sizeof keys / sizeof *keys)

/* A number that is a whole one printed as a real ("16.0") is given to the
 * integer options as the integer. */
static const char *whole(const char *v, char *buf, size_t n)
{
    char *end;
    double x = strtod(v, &end);
    if (end != v && !*end && x == floor(x) && fabs(x) < 1e15 && strchr(v, '.')) {
        snprintf(buf, n, "%.0f", x);
        return buf;
    }
    return v;
}

/* Row r's cell of a column, "" when the table has no such column. */
static const char *row_cell(const wl_results_table *t, size_t r, const char *col)
{
    int c = wl_results_table_col(t, col);
    return c >= 0 ? wl_results_table_cell(t, r, c) : "";
}

/* Simulates row r; WL_OK with res filled, else err says why. */
static int predict_row(const wl_results_table *t, size_t r, const char *gpu, const char *host,
                       wl_serve_result *res, wl_error *err)
{
    const char *src = wl_results_table_source(t);
    int line = wl_results_table_line(t, r);
    wl_serve_job *j = wl_serve_job_create();
    if (!j) {
        wl_error_set(err, src, line, "", "out of memory");
        return WL_ENOMEM;
    }
    /* the files the row's cells name (a preset, a request CSV) resolved
     * under the data's folder; the options' own are the user's */
    char named[4][4096] = {"", "", "", ""};
    int rc = WL_OK;
    const char *g = gpu ? gpu : row_cell(t, r, "gpu");
    if (!g[0]) {
        wl_error_set(err, src, line, "gpu", "no gpu column and no --gpu");
        rc = WL_EINVAL;
    }
    if (!rc && !gpu && !(rc = wl_results_row_path(src, line, "gpu", g, named[0], sizeof named[0], err)))
        g = named[0];
    if (!rc)
        rc = wl_serve_job_set(j, "gpu", g, src, err);
    const char *h = host ? host : row_cell(t, r, "host");
    if (!rc && !host && h[0] &&
        !(rc = wl_results_row_path(src, line, "host", h, named[1], sizeof named[1], err)))
        h = named[1];
    if (!rc && h[0])
        rc = wl_serve_job_set(j, "host", h, src, err);
    int fixed = row_cell(t, r, "prompt_tokens")[0] != 0;
    for (size_t k = 0; !rc && k < NKEYS; k++) {
        const char *v = row_cell(t, r, keys[k].col);
        if (!v[0]) {
            if (keys[k].required) {
                wl_error_set(err, src, line, keys[k].col, "empty or missing");
                rc = WL_EINVAL;
            }
            continue;
        }
        if (!strcmp(keys[k].col, "model")) {
            if ((rc = wl_results_row_path(src, line, "model", v, named[2], sizeof named[2], err)))
                break;
            v = named[2];
        }
        char buf[32];
        rc = wl_serve_job_set(j, keys[k].key, whole(v, buf, sizeof buf), src, err);
    }
    const char *w = row_cell(t, r, "workload");
    if (!rc && !fixed && w[0] &&
        !(rc = wl_results_row_path(src, line, "workload", w, named[3], sizeof named[3], err)))
        w = named[3];
    if (!rc && !fixed && w[0])
        rc = wl_serve_job_set(j, "workload", w, src, err);
    const char *lim = row_cell(t, r, "power_limit_w");
    if (!rc && lim[0]) {
        char set[64];
        snprintf(set, sizeof set, "power_limit_w=%.30s", lim);
        rc = wl_serve_job_set(j, "set", set, src, err);
    }
    /* the row's other --set values, "KEY=VALUE KEY=VALUE" */
    const char *sv = row_cell(t, r, "set");
    while (!rc && *sv) {
        size_t l = strcspn(sv, " ");
        char one[128];
        if (l >= sizeof one) {
            wl_error_set(err, src, line, "set", "expected KEY=VALUE pairs, got '%.60s'", sv);
            rc = WL_EINVAL;
            break;
        }
        snprintf(one, sizeof one, "%.*s", (int)l, sv);
        if (l)
            rc = wl_serve_job_set(j, "set", one, src, err);
        sv += l + (sv[l] == ' ');
    }
    if (!rc)
        rc = wl_serve_job_result(j, res, err);
    /* an error inside a file the row named is told by its place, not its
     * text: the text may be the file's own (issue 77: "root: unknown
     * section" from /etc/passwd) */
    static const char *const col[4] = {"gpu", "host", "model", "workload"};
    for (int k = 0; rc && k < 4; k++)
        if (named[k][0] && !strcmp(err->source, named[k])) {
            char at[32] = "";
            if (err->line)
                snprintf(at, sizeof at, " (its line %d)", err->line);
            wl_error_set(err, src, line, col[k], "the %s file %s does not load%s; "
                         "'wattlas serve --%s %s' says why", col[k], named[k], at, col[k],
                         named[k]);
        }
    if (rc)
        wl_error_locate(err, src, line);
    wl_serve_job_free(j);
    return rc;
}

/* ---- rows of the ML.ENERGY leaderboard ---------------------------------------------
 * Its schema (ml-energy/leaderboard v3.0 public/data/tasks/TASK.json rows, as
 * ../shared/data/public/ml-energy/ keeps them): model_id (a Hugging Face
 * id), gpu_model, num_gpus, tensor/expert/data_parallel, max_num_seqs, and
 * measured avg_batch_size, median_itl_ms, p90_itl_ms, avg_power_watts,
 * energy_per_token_joules, output_throughput_tokens_per_sec (the steady
 * state, power summed over the run's GPUs); optionally avg_output_len,
 * n_requests_in_hist and the per-run histogram of generated lengths
 * (out_len_hist_counts, out_len_hist_edges). Each row runs as the
 * benchmark ran it (ml-energy/benchmark c1d6557f,
 * configs/vllm/lm-arena-chat/.../monolithic.config.yaml and benchmark.py):
 * vLLM 0.11.1 with --async-scheduling and --max-num-batched-tokens 8192,
 * every request sent at once, at stock clocks and power limit; the
 * lm-arena-chat requests (the workload preset: the benchmark's sampling,
 * temperature 0.8, top-p 0.95); the answers drawn from the row's own
 * histogram, else scaled to its avg_output_len: the served model's
 * behaviour, an input, not a fit. */

static const struct {
    const char *name, *preset;
} lb_gpus[] = {
    /* the leaderboard's H100 is the SXM 80 GB (its v2 rows name "NVIDIA
     * H100 80GB HBM3"); its B200 the 180 GB SXM of a DGX B200 */
    {"H100", "h100-sxm-80gb"},
    {"B200", "b200"},
};

int wl_serve_is_leaderboard(const wl_results_table *t)
{
    return wl_results_table_col(t, "model_id") >= 0 && wl_results_table_col(t, "gpu_model") >= 0 &&
           wl_results_table_col(t, "energy_per_token_joules") >= 0;
}

/* A list of numbers separated by spaces (the histogram's cells) into v;
 * the count, or -1 when one is not a finite number or there are more than cap. */
static long parse_list(const char *s, double *v, size_t cap)
{
    size_t n = 0;
    while (*s) {
        while (*s == ' ')
            s++;
        if (!*s)
            break;
        char *end;
        double x = strtod(s, &end);
        if (end == s || !isfinite(x) || n == cap || (*end && *end != ' '))
            return -1;
        v[n++] = x;
        s = end;
    }
    return (long)n;
}

#define LB_BINS 4096
static int predict_lb_row(const wl_results_table *t, size_t r, const char *gpu, const char *host,
                          wl_serve_result *res, const char **gpu_id, int *guessed,
                          wl_error *err)
{
    const char *src = wl_results_table_source(t);
    int line = wl_results_table_line(t, r);
    const char *g = gpu, *gm = row_cell(t, r, "gpu_model");
    for (size_t i = 0; !g && i < sizeof lb_gpus / sizeof *lb_gpus; i++)
        if (!strcmp(gm, lb_gpus[i].name))
            g = lb_gpus[i].preset;
    *gpu_id = g ? g : gm;
    if (!g) {
        wl_error_set(err, src, line, "gpu_model", "no preset for the leaderboard's '%.40s' "
                     "(H100, B200; or --gpu)", gm);
        return WL_EUNSUPPORTED;
    }
    /* the layout: the harness runs vLLM with --tensor-parallel-size
     * num_gpus (and --enable-expert-parallel for the MoE rows, whose
     * tensor_parallel the leaderboard gives as 1 and expert_parallel as
     * num_gpus); on the GPU's system preset (dgx-h100, dgx-b200) */
    static const char *const par[] = {"num_gpus", "tensor_parallel", "expert_parallel",
                                      "data_parallel"};
    double pv[4];
    for (size_t i = 0; i < 4; i++) {
        const char *v = row_cell(t, r, par[i]);
        pv[i] = v[0] ? strtod(v, NULL) : 1;
        if (!(pv[i] >= 1 && pv[i] <= 4096 && pv[i] == floor(pv[i]))) {
            wl_error_set(err, src, line, par[i], "expected a whole number of GPUs, got '%.20s'", v);
            return WL_EINVAL;
        }
    }
    /* data parallelism: num_gpus over data_parallel engines of tp GPUs;
     * with expert parallelism over all of them (vLLM's DP attention and
     * wide EP) it is not modelled */
    int ep = pv[2] > 1;
    if (pv[3] > 1 && (ep || pv[1] * pv[3] != pv[0])) {
        wl_error_set(err, src, line, "data_parallel", "data_parallel %.0f with tensor_parallel "
                     "%.0f, expert_parallel %.0f on %.0f GPUs: %s", pv[3], pv[1], pv[2], pv[0],
                     ep ? "data-parallel attention with experts over every replica (wide EP) "
                          "is not modelled"
                        : "a layout serve does not run");
        return WL_EUNSUPPORTED;
    }
    if (ep && (pv[2] != pv[0] || pv[1] != 1)) {
        wl_error_set(err, src, line, "expert_parallel", "expert_parallel %.0f with "
                     "tensor_parallel %.0f on %.0f GPUs: a layout serve does not run", pv[2],
                     pv[1], pv[0]);
        return WL_EUNSUPPORTED;
    }
    if (!ep && pv[1] * pv[3] != pv[0]) {
        wl_error_set(err, src, line, "tensor_parallel", "tensor_parallel %.0f on %.0f GPUs: "
                     "a layout serve does not run", pv[1], pv[0]);
        return WL_EUNSUPPORTED;
    }
    char tp[16], dp[16];
    snprintf(tp, sizeof tp, "%.0f", ep ? pv[0] : pv[1]);
    snprintf(dp, sizeof dp, "%.0f", pv[3]);
    const char *task = row_cell(t, r, "task");
    if (strcmp(task, "lm-arena-chat")) {
        wl_error_set(err, src, line, "task", "no workload preset for the task '%.40s' "
                     "(lm-arena-chat only)", task);
        return WL_EUNSUPPORTED;
    }
    wl_serve_job *j = wl_serve_job_create();
    if (!j) {
        wl_error_set(err, src, line, "", "out of memory");
        return WL_ENOMEM;
    }
    char seqs[32], reqs[32];
    const char *sv = row_cell(t, r, "max_num_seqs");
    double s_ = strtod(sv, NULL);
    snprintf(seqs, sizeof seqs, "%.0f", s_);
    /* requests: 1024 a repeat (sweeps.yaml's num_request_repeats), the
     * histogram's total; without it the smallest multiple of 1024 that
     * is four max_num_seqs or more (the 8B runs' repeats within one: 2 at
     * 256-512 and 3 at 768 on the H100) */
    const char *nh = row_cell(t, r, "n_requests_in_hist");
    *guessed = !nh[0];
    if (nh[0])
        snprintf(reqs, sizeof reqs, "%.0f", strtod(nh, NULL));
    else
        snprintf(reqs, sizeof reqs, "%.0f", 1024 * fmax(1, ceil(4 * s_ / 1024)));
    const char *prec = row_cell(t, r, "weight_precision");
    const char *kv[][2] = {{"gpu", g}, {"model", row_cell(t, r, "model_id")},
                           {"dtype", prec[0] ? prec : "bf16"}, {"workload", "lm-arena-chat"},
                           {"max_num_seqs", seqs}, {"requests", reqs},
                           {"max_num_batched_tokens", "8192"}, {"async_scheduling", "on"},
                           {"tp", tp}, {"ep", ep ? tp : ""}, {"dp", pv[3] > 1 ? dp : ""},
                           {"host", host ? host : ""}};
    int rc = WL_OK;
    for (size_t i = 0; !rc && i < sizeof kv / sizeof *kv; i++)
        if (kv[i][1][0])
            rc = wl_serve_job_set(j, kv[i][0], kv[i][1], src, err);
    const char *hc = row_cell(t, r, "out_len_hist_counts"), *he = row_cell(t, r, "out_len_hist_edges");
    if (!rc && hc[0] && he[0]) {
        double *buf = malloc((2 * LB_BINS + 1) * sizeof *buf);
        long nc = buf ? parse_list(hc, buf + LB_BINS + 1, LB_BINS) : -1;
        long ne = buf ? parse_list(he, buf, LB_BINS + 1) : -1;
        if (!buf) {
            wl_error_set(err, src, line, "", "out of memory");
            rc = WL_ENOMEM;
        } else if (nc < 1 || ne != nc + 1) {
            wl_error_set(err, src, line, nc < 1 ? "out_len_hist_counts" : "out_len_hist_edges",
                         "expected counts and one edge more, as numbers separated by spaces");
            rc = WL_EINVAL;
        } else {
            rc = wl_serve_job_output_hist(j, buf, buf + LB_BINS + 1, (size_t)nc, err);
        }
        free(buf);
    } else if (!rc && row_cell(t, r, "avg_output_len")[0]) {
        rc = wl_serve_job_set(j, "output_mean_tokens", row_cell(t, r, "avg_output_len"), src, err);
    }
    if (!rc)
        rc = wl_serve_job_result(j, res, err);
    if (rc == WL_ENOTFOUND && !strcmp(err->field, "model")) {
        wl_error_set(err, src, line, "model_id", "no model preset answers to '%.80s' "
                     "(see 'wattlas presets list')", row_cell(t, r, "model_id"));
        rc = WL_EUNSUPPORTED;
    }
    if (rc)
        wl_error_locate(err, src, line);
    wl_serve_job_free(j);
    return rc;
}

int wl_serve_validate(const char *path, const char *gpu, const char *host, wl_results_writer *w,
                      void (*note)(void *, const char *), void *user, wl_serve_validation *out,
                      wl_error *err)
{
    memset(out, 0, sizeof *out);
    wl_results_table *t = NULL;
    int rc = wl_results_table_load(path, &t, err);
    if (rc)
        return rc;
    int lb = wl_serve_is_leaderboard(t), guesses = 0;
    static const char *const measured[2][6] = {
        {"median_itl_ms", "p90_itl_ms", "output_tokens_per_s", "power_w", "energy_per_token_j",
         "avg_batch"},
        {"median_itl_ms", "p90_itl_ms", "output_throughput_tokens_per_sec", "avg_power_watts",
         "energy_per_token_joules", "avg_batch_size"}};
    int mc[6];
    for (int i = 0; i < 5 && !rc; i++)
        if ((mc[i] = wl_results_table_need(t, measured[lb][i], err)) < 0)
            rc = WL_EPARSE;
    mc[5] = wl_results_table_col(t, measured[lb][5]);
    double ape[4] = {0};
    size_t n = wl_results_table_rows(t);
    for (size_t r = 0; !rc && r < n; r++) {
        wl_results_cell c[NV];
        for (size_t i = 0; i < NV; i++)
            c[i] = (wl_results_cell){NULL, NAN};
        static const char *const text[2][4] = {{"gpu", "model", "dtype", "workload"},
                                               {"gpu_model", "model_id", "weight_precision", "task"}};
        for (int i = 0; i < 4; i++)
            c[V_GPU + i].s = row_cell(t, r, text[lb][i]);
        if (gpu)
            c[V_GPU].s = gpu;
        static const struct {
            const char *col;
            int at;
        } nums[] = {{"max_num_seqs", V_SEQS}, {"sm_clock_mhz", V_CLOCK},
                    {"power_limit_w", V_LIMIT}};
        wl_error ignore;
        for (size_t i = 0; i < sizeof nums / sizeof *nums; i++) {
            int col = wl_results_table_col(t, nums[i].col);
            if (col >= 0 && wl_results_table_num(t, r, col, &c[nums[i].at].v, &ignore))
                c[nums[i].at].v = NAN;
        }
        double m[6];
        const int at[6] = {V_ITL50, V_ITL90, V_TPS, V_POWER, V_EPT, V_BATCH};
        for (int i = 0; i < 6 && !rc; i++) {
            m[i] = NAN;
            if (mc[i] < 0)
                continue;
            rc = wl_results_table_num(t, r, mc[i], &m[i], err);
            if (rc == WL_ENOTFOUND) { /* empty: a run without a steady state */
                m[i] = NAN;
                rc = WL_OK;
            }
            c[at[i]].v = m[i];
        }
        if (rc)
            break;
        out->rows++;
        wl_serve_result res;
        wl_error why = {0};
        const char *gid = NULL;
        int guessed = 0;
        int prc = lb ? predict_lb_row(t, r, gpu, host, &res, &gid, &guessed, &why)
                     : predict_row(t, r, gpu, host, &res, &why);
        if (lb) {
            c[V_GPU].s = gid;
            c[V_CLOCK].v = NAN;
            guesses += guessed && !prc;
        }
        if (prc == WL_ENOMEM) {
            *err = why;
            rc = prc;
            break;
        }
        if (prc) {
            char buf[600];
            wl_error_format(&why, buf, sizeof buf);
            wl_core_say(note, user, "not modelled: %s", buf);
        } else {
            const double p[6] = {res.median_itl_ms, res.p90_itl_ms, res.output_tokens_per_s,
                                 res.power_w, res.energy_per_token_j, res.avg_batch};
            for (int i = 0; i < 6; i++)
                c[at[i] + 1].v = p[i];
            /* scored: ITL (median), power, energy per token, rate */
            const int score[4] = {0, 3, 4, 2};
            int ok = 1;
            for (int i = 0; i < 4; i++)
                ok &= isfinite(m[score[i]]) && m[score[i]] > 0;
            if (ok && res.steady_why[0]) {
                /* the columns are the steady state's: a prediction without
                 * one has nothing to compare */
                wl_core_say(note, user, "%s:%d: predicted but not scored: %s", path,
                            wl_results_table_line(t, r), res.steady_why);
            } else if (ok) {
                for (int i = 0; i < 4; i++)
                    ape[i] += fabs(p[score[i]] - m[score[i]]) / m[score[i]];
                out->scored++;
            } else {
                wl_core_say(note, user, "%s:%d: predicted but not scored: a measured value is "
                            "missing or not positive", path, wl_results_table_line(t, r));
            }
        }
        if (wl_results_writer_row(w, c)) {
            wl_error_set(err, path, 0, "", "out of memory");
            rc = WL_ENOMEM;
        }
    }
    if (guesses)
        wl_core_say(note, user, "%d leaderboard rows state no request count "
                    "(n_requests_in_hist): each ran 1024 a repeat, the fewest repeats giving 4 "
                    "max_num_seqs or more", guesses);
    if (out->scored) {
        double k = 100.0 / (double)out->scored;
        out->mape_itl = ape[0] * k;
        out->mape_power = ape[1] * k;
        out->mape_energy = ape[2] * k;
        out->mape_rate = ape[3] * k;
    }
    wl_results_table_free(t);
    return rc;
}
