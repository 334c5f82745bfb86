/* make bench: speed of whole-model predictions (no allocation in the loop).
 * Prints microseconds per evaluator run at one clock, unthrottled and at the
 * power limit (which bisects on the clock), and the one-off build cost. */
#include "../core/wattlas_core.h"
#include "../presets/wattlas_presets.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A 25k-kernel PyTorch profile (the H200 Llama-3-8B generation, 65 MB of
 * JSON): its one-off import, then a prediction per clock of the anchored
 * workload with its host timeline. Skipped without ../shared/data. */
static int bench_profile(void)
{
    const char *env = getenv("WATTLAS_SHARED");
    char path[1024];
    snprintf(path, sizeof path,
             "%s/data/profiles/h200-sxm-141gb/llama-3-8b_decode_b8_s1024_bf16_sdpa_1980mhz.json.gz",
             env && *env ? env : "../shared");
    wl_core_gpu gpu;
    wl_error err;
    if (wl_preset_gpu_load("h200-sxm-141gb", &gpu, &err))
        return 1;
    double t0 = now_s();
    wl_core_workload *wl = NULL;
    if (wl_core_trace_load(path, &wl, &err)) {
        printf("profile: skipped (%s: %s)\n", path, err.text);
        return 0;
    }
    double load_s = now_s() - t0;
    wl_core_evaluator *ev = NULL;
    t0 = now_s();
    if (wl_core_evaluator_create(&gpu, wl, NULL, &ev))
        return 1;
    double create_ms = (now_s() - t0) * 1e3;
    wl_core_result res;
    double sink = 0, start = now_s(), el;
    int reps = 0;
    do {
        for (int k = 0; k < 10; k++) {
            wl_core_op op = {.sm_clock_mhz = 510.0 + 147.0 * (k % 10)};
            wl_core_evaluator_run(ev, &op, &res);
            sink += res.energy_j;
        }
        reps += 10;
        el = now_s() - start;
    } while (el < 0.5);
    printf("profile: %zu launches (%zu distinct), import %.2f s, evaluator %.1f ms (anchoring), "
           "%.3f ms per clock\n", wl_core_workload_launches(wl), wl_core_workload_unique_count(wl),
           load_s, create_ms, el / reps * 1e3);
    if (sink < 0)
        printf("%g\n", sink);
    wl_core_evaluator_free(ev);
    wl_core_workload_free(wl);
    return 0;
}

/* A million-token generation (Llama-3-8B, eager, batch 1, prompt 128):
 * built in blocks of steps (core/build_gen.c), the build and a prediction
 * at one unthrottled and one throttled clock. Goal: under 2 s in all
 * (issue 44; every step built would take about 127 GB). */
static int bench_long_decode(const wl_core_gpu *gpu)
{
    wl_core_model m;
    wl_error err;
    if (wl_preset_model_load("llama-3-8b", &m, &err))
        return 1;
    wl_core_shape sh = {.batch = 1, .seq = 128, .dtype = WL_DT_BF16, .mode = WL_MODE_DECODE,
                        .gen = WL_MAX_GEN, .attention = WL_ATTN_FLASH};
    double t0 = now_s();
    wl_core_workload *wl = NULL;
    if (wl_core_build(&m, &sh, &wl, &err))
        return 1;
    double build_s = now_s() - t0;
    wl_core_result r[2];
    double t_run[2];
    for (int lim = 0; lim < 2; lim++) {
        wl_core_op op = {.sm_clock_mhz = lim ? 1410.0 : 900.0};
        t0 = now_s();
        if (wl_core_predict(gpu, wl, &op, &r[lim]))
            return 1;
        t_run[lim] = now_s() - t0;
    }
    printf("decode of %lld tokens: %zu launches built for %zu, build %.2f s, predict %.3f s "
           "(900 MHz), %.3f s (1410 MHz, %s), %.2f s in all (goal 2 s)\n",
           (long long)WL_MAX_GEN, wl_core_workload_count(wl), wl_core_workload_launches(wl),
           build_s, t_run[0], t_run[1], r[1].throttled ? "throttled" : "unthrottled",
           build_s + t_run[0] + t_run[1]);
    wl_core_workload_free(wl);
    return 0;
}

int main(void)
{
    wl_core_gpu gpu;
    wl_error err;
    if (wl_preset_gpu_load("a100-pcie-40gb", &gpu, &err)) {
        fprintf(stderr, "bench: %s\n", err.text);
        return 1;
    }
    const struct {
        const char *model;
        long long b, s;
    } cases[] = {{"gpt2", 8, 128}, {"gpt3-1.3b", 1, 1024}, {"llama-3-8b", 1, 2048},
                 {"gpt3-175b", 1, 2048}};
    printf("%-12s %6s %6s %8s %8s %14s %14s %12s\n", "model", "batch", "seq", "kernels", "unique",
           "run_us", "throttled_us", "build_us");
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        wl_core_model m;
        if (wl_preset_model_load(cases[i].model, &m, &err))
            return 1;
        wl_core_shape sh = {.batch = cases[i].b, .seq = cases[i].s, .dtype = WL_DT_BF16, .attention = WL_ATTN_EAGER};
        double t0 = now_s();
        wl_core_workload *wl = NULL;
        wl_core_evaluator *ev = NULL;
        int reps_build = 20;
        for (int r = 0; r < reps_build; r++) {
            wl_core_evaluator_free(ev);
            wl_core_workload_free(wl);
            if (wl_core_build(&m, &sh, &wl, &err) ||
                wl_core_evaluator_create(&gpu, wl, NULL, &ev))
                return 1;
        }
        double build_us = (now_s() - t0) / reps_build * 1e6;
        wl_core_result res;
        double sink = 0;
        double t_run[2];
        for (int lim = 0; lim < 2; lim++) {
            /* 900 MHz is below the limit; 1410 MHz throttles this board */
            wl_core_op op = {.sm_clock_mhz = lim ? 1410.0 : 900.0};
            int reps = 0;
            double start = now_s(), el;
            do {
                for (int k = 0; k < 100; k++) {
                    wl_core_evaluator_run(ev, &op, &res);
                    sink += res.energy_j;
                }
                reps += 100;
                el = now_s() - start;
            } while (el < 0.5);
            t_run[lim] = el / reps * 1e6;
        }
        printf("%-12s %6lld %6lld %8zu %8zu %14.2f %14.2f %12.1f\n", cases[i].model, cases[i].b,
               cases[i].s, wl_core_workload_count(wl), wl_core_workload_unique_count(wl),
               t_run[0], t_run[1], build_us);
        if (sink < 0)
            printf("%g\n", sink);
        wl_core_evaluator_free(ev);
        wl_core_workload_free(wl);
    }
    if (bench_long_decode(&gpu))
        return 1;
    return bench_profile();
}
