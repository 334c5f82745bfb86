/* Shared helpers for the cmocka tests (header-only, tests only). */
#ifndef WATTLAS_TEST_UTIL_H
#define WATTLAS_TEST_UTIL_H

#define _XOPEN_SOURCE 700 /* realpath, mkdtemp */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/wattlas_core.h"

/* ../shared/data, or $WATTLAS_SHARED/data, as an absolute path (resolved
 * on the first call, so a test may chdir afterwards); NULL when absent. */
static inline const char *test_shared_data(void)
{
    static char buf[4096];
    static int done;
    if (!done) {
        char rel[1024];
        const char *env = getenv("WATTLAS_SHARED");
        snprintf(rel, sizeof rel, "%s/data", env && *env ? env : "../shared");
        struct stat st;
        if (!(stat(rel, &st) == 0 && S_ISDIR(st.st_mode) && realpath(rel, buf)))
            buf[0] = 0;
        done = 1;
    }
    return buf[0] ? buf : NULL;
}

/* A directory of this test binary's own (mkdtemp), removed at exit, so
 * that make check and make asan can run side by side. */
static char test_dir_buf[512];

static inline void test_dir_cleanup(void)
{
    if (!test_dir_buf[0] || getenv("WATTLAS_KEEP_TEST_DIR"))
        return;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", test_dir_buf);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", test_dir_buf);
}

static inline const char *test_dir(void)
{
    if (!test_dir_buf[0]) {
        const char *base = getenv("TMPDIR");
        snprintf(test_dir_buf, sizeof test_dir_buf, "%s/wattlas-test-XXXXXX",
                 base && *base ? base : "/tmp");
        if (!mkdtemp(test_dir_buf)) {
            perror("mkdtemp");
            exit(1);
        }
        atexit(test_dir_cleanup);
    }
    return test_dir_buf;
}

/* NAME inside test_dir() (eight rotating buffers). */
static inline const char *test_path(const char *name)
{
    static char buf[8][600];
    static int k;
    char *p = buf[k++ % 8];
    snprintf(p, sizeof buf[0], "%s/%s", test_dir(), name);
    return p;
}

/* One kernel's time on g at mhz, evaluated alone (lat NULL: tiled). */
static inline double one_kernel_us(const wl_core_gpu *g, const wl_kernel *k, double mhz,
                                   const wl_core_latency_type *lat)
{
    wl_core_workload *wl = wl_core_workload_create("one");
    assert_non_null(wl);
    assert_int_equal(wl_core_workload_add(wl, k), WL_OK);
    wl_core_evaluator *ev = NULL;
    assert_int_equal(wl_core_evaluator_create(g, wl, lat, &ev), WL_OK);
    double t = wl_core_evaluator_kernel_us(ev, 0, mhz);
    wl_core_evaluator_free(ev);
    wl_core_workload_free(wl);
    return t;
}

/* Writes text to path (test fixtures). */
static inline void test_write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Skips the current test with a visible reason when shared data is absent. */
#define REQUIRE_SHARED(dir)                                                          \
    const char *dir = test_shared_data();                                            \
    if (!dir) {                                                                      \
        fprintf(stderr, "SKIP %s: ../shared/data not found (set WATTLAS_SHARED)\n",   \
                __func__);                                                           \
        skip();                                                                      \
    }

/* Double-precision closeness (cmocka's assert_float_equal works in float). */
#define assert_close(a, b, tol)                                                        \
    do {                                                                               \
        double a_ = (a), b_ = (b), t_ = (tol);                                         \
        if (!(fabs(a_ - b_) <= t_))                                                    \
            fail_msg("%s = %.10g, expected %s = %.10g within %.3g", #a, a_, #b, b_, t_); \
    } while (0)

/* A synthetic Ampere-like GPU with round numbers, independent of presets. */
static inline void test_gpu(wl_core_gpu *g)
{
    memset(g, 0, sizeof *g);
    snprintf(g->id, sizeof g->id, "test-gpu");
    g->sms = 108;
    g->sm_clock_min_mhz = 210;
    g->sm_clock_max_mhz = 1410;
    g->sm_clock_step_mhz = 15;
    g->tc_flop_per_clk_sm[WL_DT_BF16] = 2048;
    g->tc_flop_per_clk_sm[WL_DT_FP16] = 2048;
    g->tc_flop_per_clk_sm[WL_DT_TF32] = 1024;
    g->cuda_flop_per_clk_sm[WL_DT_FP32] = 128;
    g->sfu_op_per_clk_sm = 16;
    g->l2_size_mb = 40;
    g->l2_bytes_per_clk = 5120;
    snprintf(g->dram_type, sizeof g->dram_type, "HBM2");
    g->dram_bw_gbs = 1555;
    g->mem_clock_mhz = 1215;
    g->smem_per_sm_kb = 164;
    g->smem_bytes_per_clk_sm = 128;
    g->max_warps_per_sm = 64;
    g->power_limit_w = 1000;
    g->v_ref_mv = 900;
    /* V-f: flat 700 mV to 1000 MHz, then +0.5 mV/MHz; idle 40 W + 20 W/GHz */
    const double clk[] = {210, 1000, 1410};
    const double mv[] = {700, 700, 905};
    const double idle[] = {44.2, 60, 68.2};
    g->vf.n = 3;
    for (int i = 0; i < 3; i++) {
        g->vf.clock_mhz[i] = clk[i];
        g->vf.voltage_mv[i] = mv[i];
        g->vf.idle_w[i] = idle[i];
    }
    wl_core_coeffs_default(&g->coef);
}

static inline wl_kernel test_gemm(long long m, long long n, long long k, long long batch)
{
    wl_kernel kk;
    memset(&kk, 0, sizeof kk);
    kk.kind = WL_K_GEMM;
    kk.in_dtype = WL_DT_BF16;
    kk.acc_dtype = WL_DT_BF16;
    kk.tensor_core = 1;
    kk.m = m;
    kk.n = n;
    kk.k = k;
    kk.batch = batch;
    return kk;
}

static inline wl_kernel test_ew(wl_ew_op op, long long n, wl_dtype dt)
{
    wl_kernel kk;
    memset(&kk, 0, sizeof kk);
    kk.kind = WL_K_ELEMENTWISE;
    kk.op = op;
    kk.n = n;
    kk.batch = 1;
    kk.in_dtype = dt;
    kk.acc_dtype = WL_DT_FP32;
    return kk;
}

#endif
