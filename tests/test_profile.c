/* PyTorch profiler import (core/profile.c): the mapping of aten ops to
 * kernels, anchoring to measured times, the host's timeline, and one
 * profile predicting another clock on the shared H200 pairs. */
#include "test_util.h"
#include "../presets/wattlas_presets.h"

#ifndef WATTLAS_BIN_PATH
#define WATTLAS_BIN_PATH "bin/wattlas"
#endif

#include <unistd.h>
#include <zlib.h>

/* A hand-made profile at 1000 MHz (its name says so). The host: the mm
 * launched at 101 us, the add at 131 (two recorded views between, at 105
 * and 110), the unknown op at 161 (the profiler's 10 us stall at 140 in
 * between), a stream sync at 200-250, the backward thread's mul at 310,
 * a memset at 320. */
static const char *const PROFILE =
    "{\"schemaVersion\": 1, \"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 10, "
    "\"ts\": 100, \"dur\": 20, \"args\": {\"External id\": 1, \"Input Dims\": [[64, 128], "
    "[128, 256]], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::view\", \"pid\": 1, \"tid\": 10, "
    "\"ts\": 105, \"dur\": 1, \"args\": {\"External id\": 5, \"Input Dims\": [[64, 256], []], "
    "\"Input type\": [\"c10::BFloat16\", \"ScalarList\"]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::view\", \"pid\": 1, \"tid\": 10, "
    "\"ts\": 110, \"dur\": 1, \"args\": {\"External id\": 6}},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"pid\": 1, \"tid\": 10, "
    "\"ts\": 130, \"dur\": 10, \"args\": {\"External id\": 2, \"Input Dims\": [[1000], [1000], "
    "[]], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"Scalar\"]}},\n"
    "{\"ph\": \"X\", \"cat\": \"overhead\", \"name\": \"Activity Buffer Request\", \"pid\": 1, "
    "\"tid\": 10, \"ts\": 140, \"dur\": 10},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::weird_op\", \"pid\": 1, \"tid\": 10, "
    "\"ts\": 160, \"dur\": 5, \"args\": {\"External id\": 3, \"Input Dims\": [[10]], "
    "\"Input type\": [\"float\"]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mul\", \"pid\": 1, \"tid\": 20, "
    "\"ts\": 300, \"dur\": 15, \"args\": {\"External id\": 4, \"Input Dims\": [[1000], []], "
    "\"Input type\": [\"c10::BFloat16\", \"double\"]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, "
    "\"tid\": 10, \"ts\": 101, \"dur\": 3, \"args\": {\"correlation\": 11}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, "
    "\"tid\": 10, \"ts\": 131, \"dur\": 3, \"args\": {\"correlation\": 12}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, "
    "\"tid\": 10, \"ts\": 161, \"dur\": 3, \"args\": {\"correlation\": 13}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaStreamSynchronize\", \"pid\": 1, "
    "\"tid\": 10, \"ts\": 200, \"dur\": 50, \"args\": {\"correlation\": 99}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, "
    "\"tid\": 20, \"ts\": 310, \"dur\": 3, \"args\": {\"correlation\": 14}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMemsetAsync\", \"pid\": 1, "
    "\"tid\": 20, \"ts\": 320, \"dur\": 2, \"args\": {\"correlation\": 15}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"nvjet_gemm\", \"pid\": 0, \"tid\": 7, "
    "\"ts\": 110, \"dur\": 20, \"args\": {\"External id\": 1, \"correlation\": 11}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"vectorized_add\", \"pid\": 0, \"tid\": 7, "
    "\"ts\": 135, \"dur\": 5, \"args\": {\"External id\": 2, \"correlation\": 12}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"weird_kernel\", \"pid\": 0, \"tid\": 7, "
    "\"ts\": 170, \"dur\": 8, \"args\": {\"External id\": 3, \"correlation\": 13}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"vectorized_mul\", \"pid\": 0, \"tid\": 7, "
    "\"ts\": 315, \"dur\": 4, \"args\": {\"External id\": 4, \"correlation\": 14}},\n"
    "{\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset (Device)\", \"pid\": 0, "
    "\"tid\": 7, \"ts\": 325, \"dur\": 1, \"args\": {\"External id\": 4, \"correlation\": 15}},\n"
    "{\"ph\": \"f\", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"id\": 1, \"ts\": 1, \"pid\": 0}\n"
    "], \"traceName\": \"x\"}\n";

static wl_core_workload *load_text(const char *name, const char *text, int *rc, wl_error *err)
{
    const char *path = test_path(name);
    test_write_file(path, text);
    wl_core_workload *wl = NULL;
    *rc = wl_core_trace_load(path, &wl, err);
    return wl;
}

/* The launches of a workload that are not host gaps, in order. */
static size_t device_kernels(const wl_core_workload *wl, const wl_kernel **out, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < wl_core_workload_count(wl); i++) {
        const wl_kernel *k = wl_core_workload_kernel(wl, i);
        if (k->kind != WL_K_GAP && n < max)
            out[n++] = k;
    }
    return n;
}

static void test_mapping(void **state)
{
    (void)state;
    wl_error err = {0};
    int rc;
    wl_core_workload *wl = load_text("step_1000mhz.json", PROFILE, &rc, &err);
    assert_int_equal(rc, WL_OK);
    const wl_kernel *k[8];
    assert_int_equal(device_kernels(wl, k, 8), 5);
    assert_int_equal(wl_core_workload_launches(wl), 5);
    /* mm(a[64,128], b[128,256]): output features (N = 256) in M, the 64
     * rows in N, K = 128 */
    assert_int_equal(k[0]->kind, WL_K_GEMM);
    assert_int_equal(k[0]->m, 256);
    assert_int_equal(k[0]->n, 64);
    assert_int_equal(k[0]->k, 128);
    assert_int_equal(k[0]->in_dtype, WL_DT_BF16);
    assert_true(k[0]->tensor_core);
    assert_close(k[0]->measured_us, 20.0, 1e-9);
    assert_close(k[0]->measured_mhz, 1000.0, 0);
    assert_int_equal(k[0]->phase, WL_PHASE_FORWARD);
    /* add of two tensors; the unknown op keeps its time */
    assert_int_equal(k[1]->kind, WL_K_ELEMENTWISE);
    assert_int_equal(k[1]->op, WL_EW_ADD);
    assert_int_equal(k[1]->n, 1000);
    assert_int_equal(k[2]->kind, WL_K_MEASURED);
    assert_close(k[2]->measured_us, 8.0, 1e-9);
    /* a tensor times a scalar, on the autograd thread: backward */
    assert_int_equal(k[3]->op, WL_EW_SCALAR_MUL);
    assert_int_equal(k[3]->phase, WL_PHASE_BACKWARD);
    /* the memset keeps its measured time */
    assert_int_equal(k[4]->kind, WL_K_MEASURED);
    assert_close(k[4]->measured_us, 1.0, 1e-9);
    assert_int_equal(wl_core_kernel_class(k[4]), WL_CLASS_OTHER);
    /* what was kept unmapped is said */
    const char *note = wl_core_workload_note(wl);
    assert_non_null(strstr(note, "4 kernels (0.037 ms busy), 3 mapped by their aten op, 1 kept at their measured time"));
    assert_non_null(strstr(note, "aten::weird_op x1"));
    assert_non_null(strstr(note, "1 memsets"));
    assert_true(wl_core_workload_host_timed(wl));
    /* a profile's times belong to its precision */
    wl_core_workload *r = NULL;
    assert_int_equal(wl_core_workload_retype(wl, WL_DT_FP32, &r, &err), WL_EUNSUPPORTED);
    assert_null(r);
    wl_core_workload_free(wl);
}

/* At the profile's own clock the kernels take their measured times and the
 * host its measured gaps less the profiler's 4 us per recorded op and its
 * stall: gaps 18 (30 - the two views and the add, recorded before its
 * launch, x 4), 16 (30 - the 10 us stall - the unknown op x 4), 39, then
 * the sync and 56 (60 - the mul x 4), 10. Timeline: mm 0-20, add 20-25
 * (issued at 18), unknown 34-42, host at 73 waits for the GPU (done at
 * 42), mul 129-133, memset 139-140: 140 us, 38 us busy. */
static void test_own_clock(void **state)
{
    (void)state;
    wl_error err = {0};
    int rc;
    wl_core_workload *wl = load_text("own_1000mhz.json", PROFILE, &rc, &err);
    assert_int_equal(rc, WL_OK);
    wl_core_gpu g;
    test_gpu(&g);
    wl_core_op op = {.sm_clock_mhz = 1000};
    wl_core_result r;
    assert_int_equal(wl_core_predict(&g, wl, &op, &r), WL_OK);
    assert_int_equal(r.throttled, 0);
    assert_close(r.busy_ms, 0.038, 1e-9);
    assert_close(r.time_ms, 0.140, 1e-9);
    assert_close(r.cls[WL_CLASS_OTHER].busy_ms, 0.009, 1e-12);
    wl_core_workload_free(wl);
}

/* A profile kernel's time on g at mhz by the model alone: an unanchored
 * copy of it, evaluated by itself. */
static double model_us(const wl_core_gpu *g, const wl_kernel *k, double mhz)
{
    wl_kernel plain = *k;
    plain.measured_us = plain.measured_mhz = 0;
    return one_kernel_us(g, &plain, mhz, NULL);
}

/* At another clock a mapped kernel's time is its measurement times the
 * model's ratio of the two clocks, computed here on an unanchored copy of
 * the same kernel; a kernel known only by its time does not move. */
static void test_other_clock(void **state)
{
    (void)state;
    wl_error err = {0};
    int rc;
    wl_core_workload *wl = load_text("other_1000mhz.json", PROFILE, &rc, &err);
    assert_int_equal(rc, WL_OK);
    wl_core_gpu g;
    test_gpu(&g);
    const wl_kernel *k[8];
    device_kernels(wl, k, 8);
    double expect = 8.0 + 1.0;
    const int mapped[] = {0, 1, 3};
    for (int i = 0; i < 3; i++) {
        double t500 = model_us(&g, k[mapped[i]], 500), t1000 = model_us(&g, k[mapped[i]], 1000);
        assert_true(t500 > t1000);
        expect += k[mapped[i]]->measured_us * t500 / t1000;
    }
    wl_core_op op = {.sm_clock_mhz = 500};
    wl_core_result r;
    assert_int_equal(wl_core_predict(&g, wl, &op, &r), WL_OK);
    assert_close(r.busy_ms * 1e3, expect, 1e-9);
    assert_close(r.cls[WL_CLASS_OTHER].busy_ms, 0.009, 1e-12);
    assert_true(r.busy_ms > 0.038);
    wl_core_workload_free(wl);
}

/* The same profile gzipped, as torch.profiler writes *.json.gz. */
static void test_gzip(void **state)
{
    (void)state;
    const char *path = test_path("zipped_1000mhz.json.gz");
    gzFile z = gzopen(path, "wb");
    assert_non_null(z);
    assert_int_equal(gzputs(z, PROFILE), (int)strlen(PROFILE));
    assert_int_equal(gzclose(z), Z_OK);
    wl_error err = {0};
    wl_core_workload *wl = NULL;
    assert_int_equal(wl_core_trace_load(path, &wl, &err), WL_OK);
    assert_int_equal(wl_core_workload_launches(wl), 5);
    wl_core_gpu g;
    test_gpu(&g);
    wl_core_op op = {.sm_clock_mhz = 1000};
    wl_core_result r;
    assert_int_equal(wl_core_predict(&g, wl, &op, &r), WL_OK);
    assert_close(r.time_ms, 0.140, 1e-9);
    wl_core_workload_free(wl);
}

/* A text for the windows test: n aten::add ops with their launches and
 * kernels, a 3 MiB run of white space after the first event, and an op
 * whose name is 3 MiB long (larger than the reader's window, which grows
 * for it). */
static char *window_text(size_t n, size_t *len)
{
    size_t cap = n * 600 + (7u << 20), at = 0;
    char *t = malloc(cap);
    assert_non_null(t);
    at += (size_t)snprintf(t + at, cap - at, "{\"traceEvents\": [\n");
    for (size_t i = 0; i < n; i++) {
        long long ts = 10 * (long long)i;
        at += (size_t)snprintf(
            t + at, cap - at,
            "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::add\", \"pid\": 1, "
            "\"tid\": 10, \"ts\": %lld, \"dur\": 2, \"args\": {\"External id\": %zu, "
            "\"Input Dims\": [[%zu], [%zu], []], \"Input type\": [\"c10::BFloat16\", "
            "\"c10::BFloat16\", \"Scalar\"]}},\n"
            "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
            "\"pid\": 1, \"tid\": 10, \"ts\": %lld, \"dur\": 1, \"args\": {\"correlation\": "
            "%zu}},\n"
            "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"vectorized_add\", \"pid\": 0, "
            "\"tid\": 7, \"ts\": %lld, \"dur\": %zu, \"args\": {\"External id\": %zu, "
            "\"correlation\": %zu}},\n",
            ts, i + 1, 1024 * (1 + i % 7), 1024 * (1 + i % 7), ts + 1, i + 1, ts + 3, 2 + i % 3,
            i + 1, i + 1);
        if (i == 0) {
            memset(t + at, ' ', 3u << 20);
            at += 3u << 20;
        }
    }
    at += (size_t)snprintf(t + at, cap - at, "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"");
    memset(t + at, 'x', 3u << 20);
    at += 3u << 20;
    at += (size_t)snprintf(t + at, cap - at, "\", \"pid\": 1, \"tid\": 10, \"ts\": 1, \"dur\": 1, "
                                             "\"args\": {\"External id\": 999999999}}\n], "
                                             "\"wattlas\": {\"sm_clock_mhz\": 1000}}\n");
    assert_true(at < cap);
    *len = at;
    return t;
}

/* A profile is read through a window that moves over the file (core/
 * profile.c): events across its edges, white space longer than it, an
 * event larger than it, and a gzip file of three members split at no
 * event's edge read as the same text in memory does. */
static void test_stream_windows(void **state)
{
    (void)state;
    size_t len = 0, n = 20000;
    char *t = window_text(n, &len);
    wl_error err = {0};
    wl_core_workload *mem = NULL, *plain = NULL, *gz = NULL;
    assert_int_equal(wl_core_profile_parse(t, len, "mem.json", NULL, &mem, &err), WL_OK);
    const char *ppath = test_path("win.json");
    FILE *f = fopen(ppath, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(t, 1, len, f), len);
    fclose(f);
    assert_int_equal(wl_core_trace_load(ppath, &plain, &err), WL_OK);
    const char *zpath = test_path("win.json.gz");
    unlink(zpath);
    size_t cut[4] = {0, len / 3 + 17, 2 * len / 3 + 5, len};
    for (int m = 0; m < 3; m++) {
        gzFile z = gzopen(zpath, "ab"); /* each opening appends a member */
        assert_non_null(z);
        assert_int_equal(gzwrite(z, t + cut[m], (unsigned)(cut[m + 1] - cut[m])),
                         (int)(cut[m + 1] - cut[m]));
        assert_int_equal(gzclose(z), Z_OK);
    }
    assert_int_equal(wl_core_trace_load(zpath, &gz, &err), WL_OK);
    wl_core_gpu g;
    test_gpu(&g);
    wl_core_workload *w[3] = {mem, plain, gz};
    double want[2] = {0, 0};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(wl_core_workload_launches(w[i]), n);
        assert_int_equal(wl_core_workload_count(w[i]), wl_core_workload_count(mem));
        assert_int_equal(wl_core_workload_unique_count(w[i]), wl_core_workload_unique_count(mem));
        for (int c = 0; c < 2; c++) {
            wl_core_op op = {.sm_clock_mhz = c ? 1400 : 1000};
            wl_core_result r;
            assert_int_equal(wl_core_predict(&g, w[i], &op, &r), WL_OK);
            if (i == 0)
                want[c] = r.time_ms;
            assert_true(r.time_ms == want[c]);
        }
    }
    /* at its own clock the host sets the pace: launches 10 us apart, less
     * the profiler's default 4 us for the one op recorded before each
     * (two before the second: the long-named op is at 1 us), longer than
     * any kernel (2-4 us); then the last kernel's 3 us */
    assert_close(want[0], (6.0 * (double)(n - 2) + 2.0 + 3.0) * 1e-3, 1e-6);
    for (int i = 0; i < 3; i++)
        wl_core_workload_free(w[i]);
    free(t);
}

/* A profile's own clock and unprofiled wall time. With the wall time
 * 0.145 ms the profiler's cost c per op solves 160 - 5c = 145 (the
 * timeline above with c free: gaps 30 - 3c, 20 - c, 39, 60 - c after the
 * sync, 10; the add waits for its issue while c <= 10/3), c = 3 us. */
static char *with_meta(const char *meta)
{
    const char *at = strstr(PROFILE, "\"traceName\"");
    size_t head = (size_t)(at - PROFILE);
    size_t n = strlen(PROFILE) + strlen(meta) + 8;
    char *t = malloc(n);
    assert_non_null(t);
    memcpy(t, PROFILE, head);
    snprintf(t + head, n - head, "%s, %s", meta, at);
    return t;
}

/* PROFILE with the metadata meta, loaded as name. */
static wl_core_workload *load_meta(const char *name, const char *meta)
{
    wl_error err = {0};
    int rc;
    char *t = with_meta(meta);
    wl_core_workload *wl = load_text(name, t, &rc, &err);
    free(t);
    assert_int_equal(rc, WL_OK);
    return wl;
}

static void test_metadata(void **state)
{
    (void)state;
    wl_core_workload *wl = load_meta(
        "meta_1000mhz.json", "\"wattlas\": {\"sm_clock_mhz\": 1500, \"wall_ms_per_step\": 0.145}");
    const wl_kernel *k[8];
    device_kernels(wl, k, 8);
    assert_close(k[0]->measured_mhz, 1500.0, 0); /* the stated clock, not the name's */
    assert_non_null(strstr(wl_core_workload_note(wl), "3.00 us per recorded op"));
    wl_core_gpu g;
    test_gpu(&g);
    g.sm_clock_max_mhz = 1500;
    wl_core_op op = {.sm_clock_mhz = 1500};
    wl_core_result r;
    assert_int_equal(wl_core_predict(&g, wl, &op, &r), WL_OK);
    assert_close(r.time_ms, 0.145, 2e-6);
    wl_core_workload_free(wl);
}

/* A profile taken on another board (issue 59): anchored there, so each
 * mapped kernel takes measured x model(target, f) / model(recorded, f_m)
 * on the GPU asked about, computed here on unanchored copies of the same
 * kernels; on the recorded board itself nothing changes. */
static void test_recorded_board(void **state)
{
    (void)state;
    wl_core_workload *wl =
        load_meta("board_1000mhz.json", "\"wattlas\": {\"sm_clock_mhz\": 1000, \"gpu\": \"board-a\"}");
    assert_string_equal(wl_core_workload_recorded_gpu_id(wl), "board-a");
    wl_core_gpu rec, tgt;
    test_gpu(&rec);
    tgt = rec;
    tgt.sms = rec.sms / 2; /* half the SMs: its GEMM slower than the record */
    tgt.dram_bw_gbs = rec.dram_bw_gbs * 0.5;
    wl_core_op op = {.sm_clock_mhz = 800, .ignore_power_limit = 1};
    wl_core_result same, r;
    assert_int_equal(wl_core_predict(&rec, wl, &op, &same), WL_OK);
    assert_int_equal(wl_core_workload_set_recorded_gpu(wl, &rec), WL_OK);
    assert_int_equal(wl_core_predict(&rec, wl, &op, &r), WL_OK);
    assert_close(r.busy_ms, same.busy_ms, 1e-12); /* on its own board: as before */
    const wl_kernel *k[8];
    device_kernels(wl, k, 8);
    double expect = 8.0 + 1.0; /* the unmapped kernel and the memset keep their times */
    const int mapped[] = {0, 1, 3};
    for (int i = 0; i < 3; i++)
        expect += k[mapped[i]]->measured_us * model_us(&tgt, k[mapped[i]], 800) /
                  model_us(&rec, k[mapped[i]], 1000);
    assert_int_equal(wl_core_predict(&tgt, wl, &op, &r), WL_OK);
    assert_close(r.busy_ms * 1e3, expect, 1e-9);
    /* without the board the target's own model was anchored to the record */
    assert_int_equal(wl_core_workload_set_recorded_gpu(wl, NULL), WL_OK);
    wl_core_result mine;
    assert_int_equal(wl_core_predict(&tgt, wl, &op, &mine), WL_OK);
    fprintf(stderr, "on the other board: %.4f us anchored there, %.4f us anchored on itself\n",
            expect, mine.busy_ms * 1e3);
    assert_true(fabs(mine.busy_ms * 1e3 - expect) > 1e-3 * expect);
    wl_core_workload_free(wl);
}

/* s with its n bytes from pre on replaced by ins (malloc'd, lengths
 * counted: every copy is bounded). */
static char *splice(const char *s, size_t pre, size_t n, const char *ins)
{
    size_t ls = strlen(s), li = strlen(ins);
    assert_true(pre + n <= ls);
    char *b = malloc(ls - n + li + 1);
    assert_non_null(b);
    memcpy(b, s, pre);
    memcpy(b + pre, ins, li);
    memcpy(b + pre + li, s + pre + n, ls - pre - n + 1);
    return b;
}

/* text is refused as a profile, naming field; the error, for more checks */
static wl_error refused(const char *text, const char *field)
{
    wl_error err;
    memset(&err, 0, sizeof err);
    int rc;
    wl_core_workload *wl = load_text("refused_1000mhz.json", text, &rc, &err);
    assert_int_equal(rc, WL_EPARSE);
    assert_null(wl);
    assert_string_equal(err.field, field);
    return err;
}

static void test_errors(void **state)
{
    (void)state;
    wl_error err = {0};
    int rc;
    /* no clock anywhere */
    wl_core_workload *wl = load_text("noclock.json", PROFILE, &rc, &err);
    assert_int_equal(rc, WL_EPARSE);
    assert_null(wl);
    assert_string_equal(err.field, "sm_clock_mhz");
    assert_non_null(strstr(err.source, "noclock.json"));
    /* a negative dimension: the file, its line and the field */
    char *bad = strdup(PROFILE);
    char *at = strstr(bad, "[[1000], [1000]");
    memcpy(at, "[[-100], [1000]", 15);
    memset(&err, 0, sizeof err);
    wl = load_text("bad_1000mhz.json", bad, &rc, &err);
    free(bad);
    assert_int_equal(rc, WL_EPARSE);
    assert_string_equal(err.field, "Input Dims");
    assert_int_equal(err.line, 5);
    /* an id or a dimension no integer holds (converting it was undefined
     * behaviour): the id is an error naming its field, the dimension an
     * absurd one */
    static const struct {
        const char *from, *to, *field;
    } huge[] = {{"\"External id\": 2, \"Input Dims\"", "\"External id\": 1e300, \"Input Dims\"",
                 "External id"},
                {"\"correlation\": 12}", "\"correlation\": -1e300}", "correlation"},
                {"[[1000], [1000]", "[[1e300], [1000]", "Input Dims"}};
    for (size_t h = 0; h < sizeof huge / sizeof *huge; h++) {
        const char *hit = strstr(PROFILE, huge[h].from);
        assert_non_null(hit);
        char *b = splice(PROFILE, (size_t)(hit - PROFILE), strlen(huge[h].from), huge[h].to);
        err = refused(b, huge[h].field);
        free(b);
        assert_true(err.line > 0);
    }
    /* what a JSON object is not: a second traceEvents list (its kernels
     * were added to the first's), a missing closing brace, text after it,
     * two keys without a comma between them */
    const char *tail = strstr(PROFILE, "], \"traceName\"");
    assert_non_null(tail);
    size_t body = (size_t)(tail - PROFILE) + 1; /* through the list's ] */
    static const struct {
        const char *end, *field, *text;
    } shapes[] = {{", \"traceEvents\": []}\n", "traceEvents", "second traceEvents"},
                  {", \"traceName\": \"x\"\n", "", "does not close"},
                  {", \"traceName\": \"x\"}\n{}\n", "", "after the profile"},
                  {" \"traceName\": \"x\"}\n", "traceEvents", "expected , or }"}};
    for (size_t h = 0; h < sizeof shapes / sizeof *shapes; h++) {
        char *b = splice(PROFILE, body, strlen(PROFILE) - body, shapes[h].end);
        err = refused(b, shapes[h].field);
        free(b);
        if (!strstr(err.text, shapes[h].text))
            fail_msg("case %zu: %s", h, err.text);
    }
    /* a UTF-8 byte order mark is ignored (RFC 8259 allows it): the same
     * profile with one reads as without (it fails only for its clock) */
    char *bom = splice(PROFILE, 0, 0, "\xEF\xBB\xBF");
    memset(&err, 0, sizeof err);
    wl = load_text("bom.json", bom, &rc, &err);
    free(bom);
    assert_int_equal(rc, WL_EPARSE);
    assert_string_equal(err.field, "sm_clock_mhz");
    /* truncated */
    char half[400];
    memcpy(half, PROFILE, sizeof half - 1);
    half[sizeof half - 1] = '\0';
    memset(&err, 0, sizeof err);
    wl = load_text("cut_1000mhz.json", half, &rc, &err);
    assert_int_equal(rc, WL_EPARSE);
    assert_null(wl);
    /* an object that is not a trace, a trace with no kernels */
    wl = load_text("empty_1000mhz.json", "{\"a\": 1}", &rc, &err);
    assert_int_equal(rc, WL_EPARSE);
    assert_string_equal(err.field, "traceEvents");
    wl = load_text("none_1000mhz.json", "{\"traceEvents\": []}", &rc, &err);
    assert_int_equal(rc, WL_EPARSE);
    assert_non_null(strstr(err.text, "no GPU kernels"));
    /* an absurd clock in the metadata */
    char *t = with_meta("\"wattlas\": {\"sm_clock_mhz\": 1e9}");
    wl = load_text("absurd_1000mhz.json", t, &rc, &err);
    free(t);
    assert_int_equal(rc, WL_EPARSE);
    assert_string_equal(err.field, "sm_clock_mhz");
    /* a gzip file that is cut short */
    const char *zpath = test_path("cut.json.gz");
    gzFile z = gzopen(zpath, "wb");
    gzputs(z, PROFILE);
    gzclose(z);
    FILE *f = fopen(zpath, "r+b");
    assert_non_null(f);
    assert_int_equal(ftruncate(fileno(f), 60), 0);
    fclose(f);
    assert_int_not_equal(wl_core_trace_load(zpath, &wl, &err), WL_OK);
    assert_null(wl);
    /* the whole profile, flushed but never finished: every byte inflates,
     * and the stream still has no end (a file cut at a flush point) */
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
    size_t cap = strlen(PROFILE) + 1024;
    unsigned char *zbuf = malloc(cap);
    assert_non_null(zbuf);
    zs.next_in = (unsigned char *)(uintptr_t)PROFILE;
    zs.avail_in = (unsigned)strlen(PROFILE);
    zs.next_out = zbuf;
    zs.avail_out = (unsigned)cap;
    assert_int_equal(deflate(&zs, Z_SYNC_FLUSH), Z_OK);
    size_t zn = cap - zs.avail_out;
    deflateEnd(&zs);
    f = fopen(zpath, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(zbuf, 1, zn, f), zn);
    fclose(f);
    free(zbuf);
    memset(&err, 0, sizeof err);
    assert_int_equal(wl_core_trace_load(zpath, &wl, &err), WL_EIO);
    assert_null(wl);
    assert_non_null(strstr(err.text, "cut short"));
}

/* ---- the shared H200 profiles ------------------------------------------------ */

typedef struct {
    char workload[96];
    double clock, kernels, busy_ms, memsets, memset_ms, memcpys, memcpy_ms, wall_ms;
} summary_row;

/* PROFILES/summary.csv, as 'wattlas.measure profile' writes it */
static size_t read_summary(const char *profiles, summary_row *rows, size_t max)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/summary.csv", profiles);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    char line[512];
    size_t n = 0;
    if (!fgets(line, sizeof line, f)) {
        fclose(f);
        return 0;
    }
    while (n < max && fgets(line, sizeof line, f)) {
        summary_row *r = &rows[n];
        double ev, gb;
        /* workload,sm_clock_mhz,wall_ms_per_step,device_events,gpu_busy_ms,
         * kernel_launches,kernel_busy_ms,memcpy,memcpy_ms,memset,memset_ms */
        if (sscanf(line, "%95[^,],%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf,%lf", r->workload,
                   &r->clock, &r->wall_ms, &ev, &gb, &r->kernels, &r->busy_ms, &r->memcpys,
                   &r->memcpy_ms, &r->memsets, &r->memset_ms) == 11)
            n++;
    }
    fclose(f);
    return n;
}

static const summary_row *find_row(const summary_row *rows, size_t n, const char *w, double clock)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(rows[i].workload, w) && rows[i].clock == clock)
            return &rows[i];
    return NULL;
}

/* PROFILES/<workload>_<MHz>mhz.json.gz of a summary row, loaded, with the
 * launches the summary counts (kernels, memsets, memcpys) */
static wl_core_workload *load_row(const char *profiles, const summary_row *src)
{
    wl_error err = {0};
    char *path = wl_core_strprintf("%s/%s_%.0fmhz.json.gz", profiles, src->workload, src->clock);
    assert_non_null(path);
    wl_core_workload *wl = NULL;
    assert_int_equal(wl_core_trace_load(path, &wl, &err), WL_OK);
    free(path);
    assert_int_equal((double)wl_core_workload_launches(wl),
                     src->kernels + src->memsets + src->memcpys);
    return wl;
}

/* Kernel busy time of a profile predicted at a clock (memsets and memcpys,
 * which keep their times, taken off). */
static double kernel_busy(const wl_core_gpu *g, const wl_core_workload *wl, double clock,
                          const summary_row *src)
{
    wl_core_op op = {.sm_clock_mhz = clock};
    wl_core_result r;
    assert_int_equal(wl_core_predict(g, wl, &op, &r), WL_OK);
    return r.busy_ms - src->memset_ms - src->memcpy_ms;
}

/* Every shared profile: its launches as the summary counts them; at its
 * own clock its measured kernel busy time exactly (anchored, throttled or
 * not); at the other clock the measured busy time within 15% on the
 * preset, whose H100 board power throttles the Llama prefill at 1980 MHz
 * harder than this board did (12% short), and within 7% on the board
 * calibrated from the H200 kernel database (the goal is 5%: the GPT-2 and
 * Qwen2 prefills reach 5-6%; README, "Profiles"). */
static void test_shared_pairs(void **state)
{
    (void)state;
    REQUIRE_SHARED(dir);
    summary_row rows[64];
    char profiles[4200];
    snprintf(profiles, sizeof profiles, "%s/profiles/h200-sxm-141gb", dir);
    size_t n = read_summary(profiles, rows, 64);
    if (!n) {
        fprintf(stderr, "SKIP %s: no profiles/h200-sxm-141gb/summary.csv\n", __func__);
        skip();
    }
    wl_core_gpu g, cal;
    wl_error err = {0};
    assert_int_equal(wl_preset_gpu_load("h200-sxm-141gb", &g, &err), WL_OK);
    /* the board's own calibration, as the H200's held-out rows are scored:
     * few-shot on the shared H200 kernel database */
    const char *ini = test_path("h200-board.ini");
    char *cmd = wl_core_strprintf("%s calibrate --gpu h200-sxm-141gb "
                                  "%s/measurements/h200-sxm-141gb-kernels.csv --traces %s/traces "
                                  "-o %s --quiet 2>/dev/null",
                                  WATTLAS_BIN_PATH, dir, dir, ini);
    assert_non_null(cmd);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    assert_int_equal(wl_preset_gpu_load(ini, &cal, &err), WL_OK);
    double worst = 0, worst_cal = 0;
    for (size_t i = 0; i < n; i++) {
        const summary_row *src = &rows[i];
        /* the 25k-kernel decode profile takes a second to read: the pairs
         * of the shorter workloads are enough here */
        if (strstr(src->workload, "decode"))
            continue;
        const summary_row *dst = find_row(rows, n, src->workload, src->clock == 1980 ? 990 : 1980);
        assert_non_null(dst);
        wl_core_workload *wl = load_row(profiles, src);
        assert_close(kernel_busy(&g, wl, src->clock, src), src->busy_ms, 1e-3 * src->busy_ms);
        double other = kernel_busy(&g, wl, dst->clock, src);
        double e = other / dst->busy_ms - 1;
        fprintf(stderr, "%-42s %4.0f -> %4.0f MHz: kernel busy %8.2f ms, measured %8.2f (%+.1f%%)\n",
                src->workload, src->clock, dst->clock, other, dst->busy_ms, 100 * e);
        if (fabs(e) > worst)
            worst = fabs(e);
        assert_true(fabs(e) < 0.15);
        double oc = kernel_busy(&cal, wl, dst->clock, src), ec = oc / dst->busy_ms - 1;
        fprintf(stderr, "%42s calibrated board: %8.2f ms (%+.1f%%)\n", "", oc, 100 * ec);
        if (fabs(ec) > worst_cal)
            worst_cal = fabs(ec);
        assert_true(fabs(ec) < 0.05); /* the bar */
        wl_core_workload_free(wl);
    }
    fprintf(stderr, "worst %.1f%% on the preset, %.1f%% on the calibrated board\n", 100 * worst,
            100 * worst_cal);
}


/* A profile keeps the limit it ran under (issue 59). The shared Llama-3-8B
 * prefill ran at 1980 MHz under the H200's 700 W with its GEMMs held by
 * the governor; anchored at the limit a prediction asked for, its held
 * kernels took their recorded times for the clocks the lower limit
 * allowed, and a lower limit ran faster (990 MHz: 169 ms at 700 W, 121 ms
 * at 400 W). Now: a lower limit is never faster at any clock; the
 * default limit gives the same as the recorded 700 W stated outright;
 * and a profile stated as recorded under a lower limit predicts that
 * limit's run at its own clock as measured, kernel for kernel (the
 * anchoring's fixed point). */
static void test_recorded_limit(void **state)
{
    (void)state;
    REQUIRE_SHARED(dir);
    char *path = wl_core_strprintf(
        "%s/profiles/h200-sxm-141gb/llama-3-8b_prefill_b2_s2048_bf16_sdpa_1980mhz.json.gz", dir);
    assert_non_null(path);
    wl_core_gpu g;
    wl_error err = {0};
    assert_int_equal(wl_preset_gpu_load("h200-sxm-141gb", &g, &err), WL_OK);
    wl_core_workload *wl = NULL, *at700 = NULL, *at450 = NULL;
    assert_int_equal(wl_core_trace_load(path, &wl, &err), WL_OK);
    wl_core_recorded r700 = {.power_limit_w = 700}, r450 = {.power_limit_w = 450};
    assert_int_equal(wl_core_trace_load_as(path, &r700, &at700, &err), WL_OK);
    assert_int_equal(wl_core_trace_load_as(path, &r450, &at450, &err), WL_OK);
    assert_close(wl_core_workload_recorded_limit(at450), 450, 0);
    assert_close(wl_core_workload_recorded_clock(at450), 1980, 0);
    const double clocks[] = {990, 1485, 1980}, limits[] = {700, 600, 500, 400, 300, 200};
    for (size_t c = 0; c < 3; c++) {
        double prev = 0;
        for (size_t l = 0; l < 6; l++) {
            /* the limit as --set power_limit_w gives it (the GPU's) and
             * as a point's (nvidia-smi -pl on the same board) */
            wl_core_gpu gl = g;
            gl.power_limit_w = limits[l];
            wl_core_op op = {.sm_clock_mhz = clocks[c]};
            wl_core_op op_l = {.sm_clock_mhz = clocks[c], .power_limit_w = limits[l]};
            wl_core_result r, r7, rl;
            assert_int_equal(wl_core_predict(&gl, wl, &op, &r), WL_OK);
            assert_int_equal(wl_core_predict(&gl, at700, &op, &r7), WL_OK);
            assert_int_equal(wl_core_predict(&g, wl, &op_l, &rl), WL_OK);
            assert_close(r.time_ms, r7.time_ms, 0);
            assert_close(r.time_ms, rl.time_ms, 0);
            /* within the governor's solve tolerance (1e-4 of the cap) */
            assert_true(r.time_ms >= prev * (1 - 1e-6));
            /* under the cap, unless the lowest clock draws more */
            assert_true(r.power_w <= limits[l] * g.coef.power_cap_frac * (1 + 2e-4) ||
                        r.effective_clock_mhz < g.sm_clock_min_mhz + 0.05);
            prev = r.time_ms;
        }
    }
    /* its own clock under its own limit: the measured busy time */
    double measured = 0;
    for (size_t i = 0; i < wl_core_workload_count(at450); i++) {
        const wl_kernel *k = wl_core_workload_kernel(at450, i);
        if (k->kind != WL_K_GAP)
            measured += k->measured_us * (double)wl_core_workload_repeat(at450, i);
    }
    wl_core_op own = {.sm_clock_mhz = 1980, .power_limit_w = 450};
    wl_core_result r;
    assert_int_equal(wl_core_predict(&g, at450, &own, &r), WL_OK);
    fprintf(stderr, "recorded under 450 W, predicted there: busy %.3f ms, measured %.3f\n",
            r.busy_ms, measured * 1e-3);
    assert_close(r.busy_ms, measured * 1e-3, 2e-3 * measured * 1e-3);
    wl_core_workload_free(wl);
    wl_core_workload_free(at700);
    wl_core_workload_free(at450);
    free(path);
}

/* The profiles of this repository's H200 (data/h200-vm-2026-11, measured
 * by 'wattlas.measure profile'): GPT-2 prefill and AdamW step and Qwen2-1.5B
 * prefill at 510, 990 and 1980 MHz, Qwen2-1.5B's eager AdamW step at 510
 * and 990. Between 510 and 990 MHz, where no kernel meets the power limit,
 * each profile predicts the other clock's kernel busy time within 6% on
 * the preset (measured 2.1-4.4%, and 5.4% from the Qwen2 step's 510 MHz
 * profile, whose fp32 softmaxes and elementwise kernels scale 1.57x and
 * 1.66x to 510 MHz where the model has 1.41x and 1.54x). From
 * 1980 MHz the Qwen2 prefill is 9-14% short: that board's GEMMs at 1980
 * MHz are held at a higher power than the preset's governor allows (README
 * of the data), which the anchoring reads as a less throttled clock; the
 * pairs from 1980 are printed, not asserted. */
static void test_own_board_pairs(void **state)
{
    (void)state;
    const char *profiles = "data/h200-vm-2026-11/profiles";
    summary_row rows[32];
    size_t n = read_summary(profiles, rows, 32);
    if (!n) {
        fprintf(stderr, "SKIP %s: %s not found (run from the repository root)\n", __func__,
                profiles);
        skip();
    }
    wl_core_gpu g;
    wl_error err = {0};
    assert_int_equal(wl_preset_gpu_load("h200-sxm-141gb", &g, &err), WL_OK);
    size_t pairs = 0;
    for (size_t i = 0; i < n; i++) {
        const summary_row *src = &rows[i];
        wl_core_workload *wl = load_row(profiles, src);
        for (size_t j = 0; j < n; j++) {
            const summary_row *dst = &rows[j];
            if (j == i || strcmp(dst->workload, src->workload))
                continue;
            double e = kernel_busy(&g, wl, dst->clock, src) / dst->busy_ms - 1;
            int held = src->clock > 1500 || dst->clock > 1500;
            fprintf(stderr, "%-42s %4.0f -> %4.0f MHz: kernel busy %+.1f%%%s\n", src->workload,
                    src->clock, dst->clock, 100 * e, held ? " (not asserted)" : "");
            if (!held) {
                assert_true(fabs(e) < 0.06);
                pairs++;
            }
        }
        wl_core_workload_free(wl);
    }
    assert_true(pairs >= 6);
}

/* ---- the transformers 5.x graphs (--stack hf5) ----------------------------------
 * Kernel counts by hand, from the modules' source (see core/builder.c's
 * hf5 section), for L layers:
 *  GPT-2 prefill, eager: 14 before the layers (the two gathers, the
 *    positions' arange and add, the embeddings' add, the causal mask's
 *    nine), 25 a layer (ln, c_attn, the cache's two cats, the query's
 *    copy, QK^T, scaling, mask add, softmax, PV, the output's copy,
 *    c_proj, residual add, ln, c_fc, NewGELU's eight, c_proj, residual
 *    add), the final ln: 14 + 25 L + 1.
 *  Llama-style prefill, eager: 21 before (gather, arange, add, the mask's
 *    nine, the rotary table's nine), 50 a layer (RMSNorm 8, q/k/v 3,
 *    rotary 5 + 5, cats 2, repeat_kv 2, query copy, QK^T, scaling, mask,
 *    the fp32 casts and softmax 3, PV, output copy, o_proj, add, RMSNorm
 *    8, gate, SiLU, up, mul, down, add), the final RMSNorm 8:
 *    21 + 50 L + 8; with SDPA 12 + 40 L + 8 (no mask, no repeat_kv, no
 *    copies, one attention kernel).
 *  BERT prefill: 8 before (the position ids' slice, three gathers, the
 *    token types' copy, two adds, LayerNorm), 19 a layer (q/k/v, the three
 *    copies of q, k^T and v, QK^T, scaling, softmax, PV, the output copy,
 *    the output dense, add, ln, fc1, GELU, fc2, add, ln), the pooler's
 *    dense and tanh: 8 + 19 L + 2.
 *  A Llama-style decode step with SDPA at batch b: 7 input kernels and 9
 *    of the rotary table, 46 a layer (the prefill's 40 plus a split-K
 *    reduction after each of the 4096-wide q/k/v, o and down projections
 *    and cuDNN's split-KV reduction), the final RMSNorm 8, the LM head,
 *    37 of generate's sampling and stopping criteria: 7 + 9 + 46 L + 9 + 37.
 */
static long long count_built(const char *model, wl_mode mode, long long b, long long s,
                             wl_attention at, long long gen)
{
    wl_core_model m;
    wl_error err;
    assert_int_equal(wl_preset_model_load(model, &m, &err), WL_OK);
    wl_core_shape sh = {.batch = b, .seq = s, .dtype = WL_DT_BF16, .attention = at,
                        .mode = mode, .gen = gen, .master_none = 1};
    wl_core_workload *wl = NULL;
    assert_int_equal(wl_core_build(&m, &sh, &wl, &err), WL_OK);
    long long n = (long long)wl_core_workload_launches(wl);
    wl_core_workload_free(wl);
    return n;
}

/* Upcasts and masks by stack: on the current stack (hf5) every bf16 ->
 * fp32 cast is ATen's dynamic-casting copy (strided 4) and every causal
 * softmax carries its mask; EnergAIzer's stack (hf4) keeps its casts on the
 * vectorized path (its A100 rows fit better so; core/latency.c). A loaded
 * trace is marked as the stack it is scored on runs it. */
static void count_paths(const char *model, wl_stack stack, long long *dyn, long long *plain,
                        long long *masked)
{
    wl_core_model m;
    wl_error err;
    assert_int_equal(wl_preset_model_load(model, &m, &err), WL_OK);
    wl_core_shape sh = {.batch = 2, .seq = 512, .dtype = WL_DT_BF16, .mode = WL_MODE_TRAIN,
                        .master_none = 1, .stack = stack};
    wl_core_workload *wl = NULL;
    assert_int_equal(wl_core_build(&m, &sh, &wl, &err), WL_OK);
    *dyn = *plain = *masked = 0;
    for (size_t i = 0; i < wl_core_workload_count(wl); i++) {
        const wl_kernel *k = wl_core_workload_kernel(wl, i);
        if (k->kind == WL_K_ELEMENTWISE && k->op == WL_EW_CAST_FP32 &&
            k->in_dtype == WL_DT_BF16) {
            *dyn += k->strided == 4;
            *plain += k->strided == 0;
        }
        if (k->kind == WL_K_SOFTMAX && k->causal) {
            assert_int_equal(k->m, 512);
            assert_false(k->bwd);
            (*masked)++;
        }
    }
    wl_core_workload_free(wl);
}

static void test_stack_paths(void **state)
{
    (void)state;
    long long dyn, plain, masked;
    /* Qwen2 (28 layers): an upcast in each of 57 RMSNorms and 28 softmaxes
     * (dtype=float32), and the loss's logits */
    count_paths("qwen2-1.5b", WL_STACK_HF5, &dyn, &plain, &masked);
    assert_true(dyn >= 57 + 28 + 1);
    assert_int_equal(plain, 0);
    assert_int_equal(masked, 28);
    count_paths("opt-1.3b", WL_STACK_HF4, &dyn, &plain, &masked);
    assert_int_equal(dyn, 0);
    assert_true(plain >= 24);
    assert_int_equal(masked, 24);
    /* a trace's plain upcast, marked by the stack it is scored on */
    wl_kernel k = {.kind = WL_K_ELEMENTWISE, .op = WL_EW_CAST_FP32, .in_dtype = WL_DT_BF16,
                   .acc_dtype = WL_DT_FP32, .batch = 1, .n = 4096};
    wl_kernel add = k;
    add.op = WL_EW_ADD;
    wl_core_workload *wl = wl_core_workload_create("t");
    assert_int_equal(wl_core_workload_add(wl, &k), WL_OK);
    assert_int_equal(wl_core_workload_add(wl, &add), WL_OK);
    assert_int_equal(wl_core_workload_add(wl, &k), WL_OK);
    assert_int_equal(wl_core_workload_set_stack(wl, WL_STACK_HF4), WL_OK);
    assert_int_equal(wl_core_workload_kernel(wl, 0)->strided, 0);
    assert_int_equal(wl_core_workload_set_stack(wl, WL_STACK_HF5), WL_OK);
    assert_int_equal(wl_core_workload_count(wl), 3);
    assert_int_equal(wl_core_workload_unique_count(wl), 2);
    assert_int_equal(wl_core_workload_kernel(wl, 0)->strided, 4);
    assert_int_equal(wl_core_workload_kernel(wl, 1)->strided, 0);
    assert_int_equal(wl_core_workload_kernel(wl, 2)->strided, 4);
    wl_core_workload_free(wl);
}

static void test_hf5_counts(void **state)
{
    (void)state;
    assert_int_equal(count_built("gpt2", WL_MODE_PREFILL, 4, 1024, WL_ATTN_EAGER, 0), 14 + 25 * 12 + 1);
    assert_int_equal(count_built("qwen2-1.5b", WL_MODE_PREFILL, 4, 1024, WL_ATTN_EAGER, 0),
                     21 + 50 * 28 + 8);
    assert_int_equal(count_built("llama-3-8b", WL_MODE_PREFILL, 2, 2048, WL_ATTN_FLASH, 0),
                     12 + 40 * 32 + 8);
    assert_int_equal(count_built("bert-large", WL_MODE_PREFILL, 8, 256, WL_ATTN_EAGER, 0),
                     8 + 19 * 24 + 2);
    /* two generations differing by one decode step differ by one step */
    long long g16 = count_built("llama-3-8b", WL_MODE_DECODE, 8, 1024, WL_ATTN_FLASH, 16);
    long long g17 = count_built("llama-3-8b", WL_MODE_DECODE, 8, 1024, WL_ATTN_FLASH, 17);
    assert_int_equal(g17 - g16, 7 + 9 + 46 * 32 + 9 + 37);
    /* EnergAIzer's stack keeps its 242-kernel GPT-2 (test_core) */
    wl_core_model m;
    wl_error err;
    assert_int_equal(wl_preset_model_load("gpt2", &m, &err), WL_OK);
    wl_core_shape sh = {.batch = 8, .seq = 128, .dtype = WL_DT_BF16, .stack = WL_STACK_HF4};
    wl_core_workload *wl = NULL;
    assert_int_equal(wl_core_build(&m, &sh, &wl, &err), WL_OK);
    assert_int_equal(wl_core_workload_launches(wl), 242);
    wl_core_workload_free(wl);
    /* and so does a fused implementation on any stack */
    sh.stack = WL_STACK_HF5;
    sh.impl = WL_IMPL_FUSED;
    assert_int_equal(wl_core_build(&m, &sh, &wl, &err), WL_OK);
    assert_int_equal(wl_core_workload_launches(wl), 242);
    wl_core_workload_free(wl);
    /* an unknown stack is an error naming it */
    sh.stack = (wl_stack)7;
    assert_int_equal(wl_core_build(&m, &sh, &wl, &err), WL_EINVAL);
    assert_string_equal(err.field, "stack");
}

/* Every shared profile against the builder on its stack: the launches
 * within 5% of the profile's kernels (the goal; the prefills and two
 * training steps match exactly), the busy time within 15% on the H200
 * preset at both clocks (the goal is 10%: two of the sixteen points miss
 * it, README "Profiles"). */
static void test_builder_vs_profiles(void **state)
{
    (void)state;
    REQUIRE_SHARED(dir);
    summary_row rows[64];
    char profiles[4200];
    snprintf(profiles, sizeof profiles, "%s/profiles/h200-sxm-141gb", dir);
    size_t n = read_summary(profiles, rows, 64);
    if (!n) {
        fprintf(stderr, "SKIP %s: no profiles/h200-sxm-141gb/summary.csv\n", __func__);
        skip();
    }
    static const struct {
        const char *workload, *model;
        wl_mode mode;
        long long b, s;
        wl_attention at;
        long long gen;
    } cases[] = {
        {"gpt2_prefill_b4_s1024_bf16_eager", "gpt2", WL_MODE_PREFILL, 4, 1024, WL_ATTN_EAGER, 0},
        {"qwen2-1.5b_prefill_b4_s1024_bf16_eager", "qwen2-1.5b", WL_MODE_PREFILL, 4, 1024, WL_ATTN_EAGER, 0},
        {"bert-large_prefill_b8_s256_bf16_eager", "bert-large", WL_MODE_PREFILL, 8, 256, WL_ATTN_EAGER, 0},
        {"llama-3-8b_prefill_b2_s2048_bf16_sdpa", "llama-3-8b", WL_MODE_PREFILL, 2, 2048, WL_ATTN_FLASH, 0},
        {"gpt2_train_b4_s1024_bf16_eager", "gpt2", WL_MODE_TRAIN, 4, 1024, WL_ATTN_EAGER, 0},
        {"qwen2-1.5b_train_b4_s512_bf16_sdpa", "qwen2-1.5b", WL_MODE_TRAIN, 4, 512, WL_ATTN_FLASH, 0},
        {"opt-1.3b_train_b8_s256_bf16_eager", "opt-1.3b", WL_MODE_TRAIN, 8, 256, WL_ATTN_EAGER, 0},
        {"llama-3-8b_decode_b8_s1024_bf16_sdpa", "llama-3-8b", WL_MODE_DECODE, 8, 1024, WL_ATTN_FLASH, 16},
    };
    wl_core_gpu g;
    wl_error err = {0};
    assert_int_equal(wl_preset_gpu_load("h200-sxm-141gb", &g, &err), WL_OK);
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        wl_core_model m;
        assert_int_equal(wl_preset_model_load(cases[c].model, &m, &err), WL_OK);
        wl_core_shape sh = {.batch = cases[c].b, .seq = cases[c].s, .dtype = WL_DT_BF16,
                            .attention = cases[c].at, .mode = cases[c].mode, .gen = cases[c].gen,
                            .master_none = 1, .grad_accum = 1};
        wl_core_workload *wl = NULL;
        assert_int_equal(wl_core_build(&m, &sh, &wl, &err), WL_OK);
        for (int k = 0; k < 2; k++) {
            double clock = k ? 990 : 1980;
            const summary_row *r = find_row(rows, n, cases[c].workload, clock);
            assert_non_null(r);
            double launches = (double)wl_core_workload_launches(wl);
            wl_core_op op = {.sm_clock_mhz = clock};
            wl_core_result res;
            assert_int_equal(wl_core_predict(&g, wl, &op, &res), WL_OK);
            fprintf(stderr, "%-40s %4.0f MHz: launches %6.0f / %6.0f (%+.1f%%), busy %8.2f / %8.2f ms "
                    "(%+.1f%%)\n", cases[c].workload, clock, launches, r->kernels,
                    100 * (launches / r->kernels - 1), res.busy_ms, r->busy_ms,
                    100 * (res.busy_ms / r->busy_ms - 1));
            assert_true(fabs(launches / r->kernels - 1) <= 0.05);
            assert_true(fabs(res.busy_ms / r->busy_ms - 1) <= 0.15);
        }
        wl_core_workload_free(wl);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mapping),     cmocka_unit_test(test_own_clock),
        cmocka_unit_test(test_other_clock), cmocka_unit_test(test_gzip),
        cmocka_unit_test(test_stream_windows),
        cmocka_unit_test(test_metadata),    cmocka_unit_test(test_errors),
        cmocka_unit_test(test_recorded_board),
        cmocka_unit_test(test_shared_pairs),
        cmocka_unit_test(test_recorded_limit),
        cmocka_unit_test(test_own_board_pairs),
        cmocka_unit_test(test_stack_paths),
        cmocka_unit_test(test_hf5_counts),
        cmocka_unit_test(test_builder_vs_profiles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
