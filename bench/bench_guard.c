/* make check's speed guard: each benchmark's time over a fixed reference
 * loop's, measured in one run (so the machine's own speed cancels), against
 * the ratios in bench/baselines.ini. One that is more than 1.5 times its
 * baseline fails, named; one under half of it asks for a new baseline
 * (make bench-baseline writes the file). Every time is the best of five
 * (a shared machine is noisy), on one thread, the reference's the best of
 * all its runs, one before each. Benchmarks that need
 * ../shared/data (learn, validate) are skipped, saying so, without it.
 *
 *   bench_guard [--write FILE] [BASELINES]  */
#define _XOPEN_SOURCE 700 /* mkstemp */
#include "../cluster/wattlas_cluster.h"
#include "../learn/wattlas_learn.h"
#include "../presets/wattlas_presets.h"
#include "../sweep/wattlas_sweep.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define SLACK 1.5 /* slower than this times the baseline fails */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static volatile double sink;

/* The reference: what the model's evaluation does most, in fixed amounts:
 * pow, exp and log on a spread of arguments, and a walk over a 4 MB array
 * (a workload's launches). About 0.1 s. */
static int reference(void *user, double *secs)
{
    (void)user;
    size_t n = 1 << 19;
    double *a = malloc(n * sizeof *a);
    if (!a)
        return 1;
    for (size_t i = 0; i < n; i++)
        a[i] = 1.0 + (double)(i % 977) * 1e-3;
    double t0 = now_s(), s = 0;
    for (int rep = 0; rep < 8; rep++)
        for (size_t i = 0; i < n; i++) {
            double x = a[i];
            s += pow(x, 2.3) + exp(-x) + log(x + rep);
            a[i] = x * 0.999999 + 1e-6;
        }
    *secs = now_s() - t0;
    sink = s;
    free(a);
    return 0;
}

/* A sweep of 10,935 points (GPT-3 1.3B prefill on 9 A100 variants x 5
 * power limits x 3 dtypes x 81 clocks), CSV to a file: time per point. */
static int sweep(void *user, double *secs)
{
    (void)user;
    wl_sweep_spec *s = wl_sweep_spec_create();
    wl_error err;
    const char *kv[] = {"gpu", "a100-pcie-40gb", "model", "gpt3-1.3b", "batch", "1", "seq", "1024",
                        "dtype", "bf16,fp16,fp32", "clock", "210:1410:15", "set", "sms=84,108,138",
                        "set", "dram_bw_gbs=1555,2039,3352",
                        "set", "power_limit_w=200,250,300,400,700"};
    int rc = !s;
    for (size_t i = 0; !rc && i < sizeof kv / sizeof *kv; i += 2)
        rc = wl_sweep_spec_set(s, kv[i], kv[i + 1], "bench", 0, &err);
    if (!rc)
        rc = wl_sweep_spec_finish(s, &err);
    char path[] = "/tmp/wattlas-guard-XXXXXX";
    int fd = rc ? -1 : mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    wl_sweep_stats st = {0};
    if (f) {
        wl_sweep_options o = {.format = WL_FMT_CSV, .threads = 1};
        double t0 = now_s();
        rc = wl_sweep_run(s, &o, f, NULL, &st, &err);
        *secs = (now_s() - t0) / (double)(st.points ? st.points : 1);
        fclose(f);
        remove(path);
    } else {
        rc = 1;
    }
    wl_sweep_spec_free(s);
    return rc;
}

/* One evaluator of GPT-3 1.3B prefill (b1 s1024) on the A100 PCIe. */
static int evaluator(wl_core_evaluator **ev, wl_core_workload **wl)
{
    wl_core_gpu g;
    wl_core_model m;
    wl_error err;
    wl_core_shape sh = {.batch = 1, .seq = 1024, .dtype = WL_DT_BF16, .attention = WL_ATTN_EAGER};
    return wl_preset_gpu_load("a100-pcie-40gb", &g, &err) ||
           wl_preset_model_load("gpt3-1.3b", &m, &err) || wl_core_build(&m, &sh, wl, &err) ||
           wl_core_evaluator_create(&g, *wl, NULL, ev);
}

static int run_at(double mhz, double *secs)
{
    wl_core_evaluator *ev = NULL;
    wl_core_workload *wl = NULL;
    int rc = evaluator(&ev, &wl);
    wl_core_op op = {.sm_clock_mhz = mhz};
    wl_core_result r;
    double t0 = now_s();
    for (int i = 0; !rc && i < 200; i++) {
        rc = wl_core_evaluator_run(ev, &op, &r);
        sink += r.energy_j;
    }
    *secs = (now_s() - t0) / 200;
    wl_core_evaluator_free(ev);
    wl_core_workload_free(wl);
    return rc;
}

/* A prediction at 1410 MHz, where the board's 250 W limit holds kernels
 * and solves for the clock, and one at 900 MHz, where it does not. */
static int throttled(void *user, double *secs)
{
    (void)user;
    return run_at(1410, secs);
}

static int unthrottled(void *user, double *secs)
{
    (void)user;
    return run_at(900, secs);
}

/* A generation of 100,000 tokens (Llama-3-8B, batch 1), built and
 * predicted at a held clock: time per token. */
static int decode(void *user, double *secs)
{
    (void)user;
    wl_core_gpu g;
    wl_core_model m;
    wl_error err;
    wl_core_shape sh = {.batch = 1, .seq = 128, .dtype = WL_DT_BF16, .mode = WL_MODE_DECODE,
                        .gen = 100000, .attention = WL_ATTN_FLASH};
    if (wl_preset_gpu_load("a100-pcie-40gb", &g, &err) || wl_preset_model_load("llama-3-8b", &m, &err))
        return 1;
    wl_core_workload *wl = NULL;
    wl_core_op op = {.sm_clock_mhz = 1410};
    wl_core_result r;
    double t0 = now_s();
    int rc = wl_core_build(&m, &sh, &wl, &err) || wl_core_predict(&g, wl, &op, &r);
    *secs = (now_s() - t0) / 100000;
    wl_core_workload_free(wl);
    return rc;
}

/* cluster search: GPT-3 175B on 1024 A100s, every configuration. */
static int search(void *user, double *secs)
{
    (void)user;
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model m;
    wl_error err = {0};
    wl_cluster_inputs in = {.system = "dgx-a100-80gb", .model = "gpt3-175b", .nodes = 128};
    if (wl_cluster_load(&in, &sys, &gpu, &m, &err))
        return 1;
    wl_cluster_search_spec s;
    wl_cluster_search_default(&s);
    s.base.global_batch = 1536;
    double t0 = now_s();
    wl_cluster_config *cfgs = NULL;
    size_t n = 0;
    int rc = wl_cluster_search_configs(&s, &m, sys.nodes * sys.gpus_per_node, sys.gpus_per_node,
                                       &cfgs, &n, &err);
    wl_cluster_search_row *rows = rc ? NULL : calloc(n ? n : 1, sizeof *rows);
    rc = rc || !rows ||
         wl_cluster_search_eval(&sys, &gpu, &m, cfgs, n, gpu.sm_clock_max_mhz, 0, 1, rows, NULL,
                                NULL, &err);
    *secs = now_s() - t0;
    free(cfgs);
    free(rows);
    return rc;
}

/* The A100 DVFS measurements: 176 rows of ../shared. */
static const char *dvfs(void)
{
    static char path[1024];
    const char *env = getenv("WATTLAS_SHARED");
    snprintf(path, sizeof path, "%s/data/measurements/a100-pcie-40gb-dvfs.csv",
             env && *env ? env : "../shared");
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    fclose(f);
    return path;
}

/* validate: every row of the DVFS set predicted and scored. */
static int validate(void *user, double *secs)
{
    const char *path = user;
    wl_calib_validation_options o = {0};
    wl_calib_validation *v = NULL;
    wl_error err;
    double t0 = now_s();
    int rc = wl_calib_validation_create(path, &o, &v, &err);
    size_t n = rc ? 0 : wl_calib_count(wl_calib_validation_set(v));
    for (size_t i = 0; !rc && i < n; i++) {
        const wl_core_gpu *g;
        wl_core_result r;
        int scored;
        if (wl_calib_validation_predict(v, i, &g, &r, &scored) == WL_OK)
            sink += r.time_ms;
    }
    *secs = now_s() - t0;
    wl_calib_validation_free(v);
    return rc;
}

/* learn: a random forest on the DVFS set's rows (their features loaded,
 * then trained once). */
static int learn(void *user, double *secs)
{
    const char *path = user;
    wl_calib_validation_options vo = {0};
    wl_learn_data d = {0};
    wl_learn_options o;
    wl_learn_options_default(&o);
    o.kind = WL_LEARN_RF;
    wl_learn_model *m = NULL;
    wl_error err;
    double t0 = now_s();
    int rc = wl_learn_data_load(path, &vo, &d, &err) || wl_learn_train(&d, NULL, &o, &m, &err);
    *secs = now_s() - t0;
    wl_learn_model_free(m);
    wl_learn_data_free(&d);
    return rc;
}

/* refit: a cross-validation's refit (scoring) of the DVFS set without
 * OPT-1.3B's rows, one reweighting round: what learn's and validate's
 * leave-one-model-out folds repeat. On one thread, as the reference loop
 * runs: a neighbour's load on one core then slows both alike. */
static int refit(void *user, double *secs)
{
    const char *path = user;
    wl_calib_validation_options vo = {0};
    wl_calib_validation *v = NULL;
    unsigned char *mask = NULL;
    wl_error err;
    int rc = wl_calib_validation_create(path, &vo, &v, &err);
    if (!rc && !wl_calib_validation_gpus(v))
        rc = WL_EINVAL;
    const wl_calib_set *set = rc ? NULL : wl_calib_validation_set(v);
    size_t n = set ? wl_calib_count(set) : 0;
    if (!rc && !(mask = malloc(n + 1)))
        rc = WL_ENOMEM;
    for (size_t i = 0; !rc && i < n; i++)
        mask[i] = strcmp(wl_calib_row_at(set, i)->model, "opt-1.3b") != 0;
#ifdef _OPENMP
    int threads = omp_get_max_threads();
    omp_set_num_threads(1);
#endif
    double t0 = now_s();
    if (!rc) {
        wl_calib_fit_options fo;
        wl_calib_fit_options_default(&fo);
        fo.scoring = 1;
        fo.irls_rounds = 1;
        wl_core_gpu fitted;
        wl_calib_fit_info info;
        rc = wl_calib_fit(wl_calib_validation_problem(v, 0), mask, &fo, &fitted, &info);
    }
    *secs = now_s() - t0;
#ifdef _OPENMP
    omp_set_num_threads(threads);
#endif
    free(mask);
    wl_calib_validation_free(v);
    return rc;
}

/* profile_import: a PyTorch profile of 20,000 kernels launched by ops of
 * 10,000 distinct names, with 20,000 optimizer-step ranges, read and
 * mapped. Linear in the events: name interning, the unmapped-op counts
 * and the optimizer ranges were scans (issue 64: 3x10^5 kernels of 10^5
 * names took 62 s), which this size makes about 100 times slower. */
static int profile_import(void *user, double *secs)
{
    (void)user;
    enum { N = 20000, NAMES = 10000, OPT = 20000 };
    static char *text;
    static size_t len;
    if (!text) {
        size_t cap = (size_t)N * 420 + (size_t)OPT * 140 + 256, at = 0;
        if (!(text = malloc(cap)))
            return 1;
        at += (size_t)snprintf(text + at, cap - at, "{\"traceEvents\": [\n");
        for (int i = 0; i < N; i++) {
            double t = 3.0 * i;
            at += (size_t)snprintf(text + at, cap - at,
                                   "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::op%d\","
                                   "\"pid\":1,\"tid\":10,\"ts\":%.1f,\"dur\":2,\"args\":"
                                   "{\"External id\":%d}},\n{\"ph\":\"X\",\"cat\":\"cuda_runtime\","
                                   "\"name\":\"cudaLaunchKernel\",\"pid\":1,\"tid\":10,\"ts\":%.1f,"
                                   "\"dur\":1,\"args\":{\"correlation\":%d}},\n{\"ph\":\"X\",\"cat\":"
                                   "\"kernel\",\"name\":\"k\",\"pid\":0,\"tid\":7,\"ts\":%.1f,"
                                   "\"dur\":1,\"args\":{\"External id\":%d,\"correlation\":%d}},\n",
                                   i % NAMES, t, i + 1, t + 0.5, i + 1, t + 1, i + 1, i + 1);
        }
        for (int j = 0; j < OPT; j++)
            at += (size_t)snprintf(text + at, cap - at,
                                   "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":"
                                   "\"Optimizer.step#AdamW.step\",\"pid\":1,\"tid\":10,"
                                   "\"ts\":%.1f,\"dur\":1}%s\n", 3.0 * j, j + 1 < OPT ? "," : "");
        at += (size_t)snprintf(text + at, cap - at, "], \"wattlas\": {\"sm_clock_mhz\": 1980}}\n");
        len = at;
    }
    wl_core_workload *wl = NULL;
    wl_error err;
    double t0 = now_s();
    int rc = wl_core_profile_parse(text, len, "bench.json", NULL, &wl, &err);
    *secs = now_s() - t0;
    if (rc)
        fprintf(stderr, "bench_guard: profile_import: %s\n", err.text);
    sink += (double)wl_core_workload_count(wl);
    wl_core_workload_free(wl);
    return rc;
}

typedef struct {
    const char *name, *what;
    int (*fn)(void *user, double *secs);
    int needs_data;
} bench;

static const bench benches[] = {
    {"sweep_point", "a sweep point (10,935-point grid, one thread, CSV)", sweep, 0},
    {"throttled_run", "a throttled prediction (GPT-3 1.3B at 1410 MHz, 250 W)", throttled, 0},
    {"unthrottled_run", "an unthrottled prediction (the same at 900 MHz)", unthrottled, 0},
    {"decode_token", "a generated token (Llama-3-8B, 100,000 tokens, held clock)", decode, 0},
    {"cluster_search", "cluster search (GPT-3 175B, 1024 GPUs)", search, 0},
    {"validate", "validate the A100 DVFS set (176 rows)", validate, 1},
    {"learn", "learn a random forest on the A100 DVFS set", learn, 1},
    {"refit", "a cross-validation refit of the A100 DVFS set (one round, one thread)", refit, 1},
    {"profile_import", "a PyTorch profile: 20,000 kernels of 10,000 op names, 20,000 optimizer "
                       "steps", profile_import, 0},
};
#define NB (sizeof benches / sizeof *benches)

/* The best of five runs of fn, each after a run of the reference loop
 * (whose best of all runs is *ref): a machine whose speed drifts during
 * the guard (a neighbour's load, frequency steps) drifts both alike. */
static int best_of(int (*fn)(void *, double *), void *user, double *best, double *ref)
{
    *best = HUGE_VAL;
    for (int k = 0; k < 5; k++) {
        double s, r;
        if (reference(NULL, &r) || fn(user, &s))
            return 1;
        *ref = r < *ref ? r : *ref;
        *best = s < *best ? s : *best;
    }
    return 0;
}

/* One run of every benchmark: its best time over the reference's (ran:
 * which ran, not skipped). */
static int measure(const char *data, double *ratio, int *ran)
{
    double ref = HUGE_VAL, best[NB];
    for (size_t b = 0; b < NB; b++) {
        ratio[b] = NAN;
        if (benches[b].needs_data && !data) {
            printf("bench guard: %-16s skipped: no ../shared/data (WATTLAS_SHARED)\n",
                   benches[b].name);
            continue;
        }
        if (best_of(benches[b].fn, (void *)data, &best[b], &ref)) {
            fprintf(stderr, "bench guard: %s failed to run\n", benches[b].name);
            return 1;
        }
        ran[b] = 1;
    }
    for (size_t b = 0; b < NB; b++)
        if (ran[b])
            ratio[b] = best[b] / ref;
    printf("bench guard: reference loop %.3f s\n", ref);
    return 0;
}

/* The baseline ratio of name in the file's "name = ratio" lines; NAN when
 * it has none. */
static double baseline(const char *file, const char *name)
{
    FILE *f = fopen(file, "r");
    char line[256];
    double v = NAN;
    size_t n = strlen(name);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, name, n) == 0 && (line[n] == ' ' || line[n] == '='))
            if (sscanf(line + n, " = %lf", &v) != 1)
                v = NAN;
    if (f)
        fclose(f);
    return v;
}

int main(int argc, char **argv)
{
    const char *write = NULL, *file = "bench/baselines.ini";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--write") == 0 && i + 1 < argc)
            write = argv[++i];
        else
            file = argv[i];
    }
    const char *data = dvfs();
    double ratio[NB];
    int ran[NB] = {0};
    /* a baseline is the median of three whole runs: one run's ratios move
     * by up to a fifth on a shared machine */
    double rounds[3][NB];
    int nround = write ? 3 : 1;
    for (int rd = 0; rd < nround; rd++) {
        if (measure(data, rounds[rd], ran))
            return 1;
    }
    for (size_t b = 0; b < NB; b++) {
        if (nround == 1 || !ran[b]) {
            ratio[b] = rounds[0][b];
            continue;
        }
        double x = rounds[0][b], y = rounds[1][b], z = rounds[2][b];
        ratio[b] = x > y ? (y > z ? y : (x > z ? z : x)) : (x > z ? x : (y > z ? z : y));
    }
    if (write) {
        FILE *f = fopen(write, "w");
        if (!f) {
            fprintf(stderr, "bench guard: cannot write %s\n", write);
            return 1;
        }
        fprintf(f, "; make bench-baseline: each benchmark's best-of-5 time over the reference\n"
                   "; loop's (bench/bench_guard.c), measured in one run; make check fails\n"
                   "; when one is more than %.1f times its ratio here\n", SLACK);
        for (size_t b = 0; b < NB; b++)
            if (ran[b])
                fprintf(f, "%s = %.4g ; %s\n", benches[b].name, ratio[b], benches[b].what);
        fclose(f);
        printf("bench guard: baselines written to %s\n", write);
        return 0;
    }
    int bad = 0;
    printf("bench guard: each benchmark's time over the reference's, against %s\n", file);
    printf("  (a throttled prediction takes %.0f unthrottled ones; issue 62's goal: 2)\n",
           ratio[1] / ratio[2]);
    for (size_t b = 0; b < NB; b++) {
        if (!ran[b])
            continue;
        double base = baseline(file, benches[b].name), x = ratio[b] / base;
        const char *verdict = !(base > 0)       ? "no baseline"
                              : x > SLACK       ? "SLOWER"
                              : x < 1.0 / SLACK ? "faster: make bench-baseline"
                                                : "ok";
        printf("  %-16s %10.4g (baseline %-10.4g x%.2f) %s: %s\n", benches[b].name, ratio[b], base,
               x, verdict, benches[b].what);
        if (!(base > 0) || x > SLACK) {
            fprintf(stderr, "bench guard: %s is %s (%.2f times its baseline; the limit is %.1f)\n",
                    benches[b].name, base > 0 ? "slower" : "without a baseline", x, SLACK);
            bad = 1;
        }
    }
    return bad;
}
