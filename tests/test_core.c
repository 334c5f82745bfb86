/* Tests of core/: interpolation, latency physics, power limit, builder. */
#include "test_util.h"
#include <dirent.h>
#include "../presets/wattlas_presets.h"

static double one_kernel_us(const wl_core_gpu *g, const wl_kernel *k, double mhz,
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

static void test_vf_interpolation(void **state)
{
    (void)state;
    wl_core_gpu g;
    test_gpu(&g);
    /* at knots, between knots (linear), clamped outside */
    assert_close(wl_core_gpu_voltage_mv(&g, 1000), 700, 1e-9);
    assert_close(wl_core_gpu_voltage_mv(&g, 1205), 802.5, 1e-9);
    assert_close(wl_core_gpu_voltage_mv(&g, 100), 700, 1e-9);
    assert_close(wl_core_gpu_voltage_mv(&g, 2000), 905, 1e-9);
    assert_close(wl_core_gpu_idle_w(&g, 605), 52.1, 1e-9);
    assert_close(wl_core_gpu_idle_w(&g, 1410), 68.2, 1e-9);
    assert_close(wl_core_gpu_idle_w(&g, 5000), 68.2, 1e-9);
}

static wl_kernel flash(long long bh, long long sq, long long sk, long long d)
{
    wl_kernel k;
    memset(&k, 0, sizeof k);
    k.kind = WL_K_ATTN_FLASH;
    k.in_dtype = WL_DT_BF16;
    k.acc_dtype = WL_DT_FP32;
    k.tensor_core = 1;
    k.batch = bh;
    k.m = sq;
    k.n = sk;
    k.k = d;
    return k;
}

/* Fused attention has fixed 128-row tiles: 4 per head at 512 queries. Time
 * is flat while the tiles fit in one wave over the 108 SMs (27 heads), steps
 * at 28 heads, stays flat to 54, steps again at 55. Below 22 heads the
 * 64-row blocks (8 per head) fill less than 80% of 2 x 108 CTA slots and
 * FlashAttention-2 splits the keys: fewer heads are then faster than one
 * wave of unsplit tiles. */
static void test_wave_quantization(void **state)
{
    (void)state;
    wl_core_gpu g;
    test_gpu(&g);
    wl_kernel k = flash(22, 512, 4096, 128);
    double base = one_kernel_us(&g, &k, 1410, NULL);
    for (long long bh = 23; bh <= 27; bh++) {
        k.batch = bh;
        assert_close(one_kernel_us(&g, &k, 1410, NULL), base, base * 0.02);
    }
    k.batch = 28;
    double two = one_kernel_us(&g, &k, 1410, NULL);
    assert_close(two / base, 2.0, 0.1);
    for (long long bh = 29; bh <= 54; bh++) {
        k.batch = bh;
        assert_close(one_kernel_us(&g, &k, 1410, NULL), two, two * 0.03);
    }
    k.batch = 55;
    assert_close(one_kernel_us(&g, &k, 1410, NULL) / base, 3.0, 0.15);
    k.batch = 1; /* split over the keys: well under one full wave's time */
    assert_true(one_kernel_us(&g, &k, 1410, NULL) < 0.5 * base);
    /* GEMMs: 108 vs 109 tiles of 128x128. The tile heuristic softens the
     * second wave with smaller tiles, but a step remains. */
    wl_kernel gm = test_gemm(128 * 108, 128, 8192, 1);
    double full = one_kernel_us(&g, &gm, 1410, NULL);
    gm.m = 128 * 109;
    assert_true(one_kernel_us(&g, &gm, 1410, NULL) > full * 1.15);
    /* roofline has no quantisation: the same change costs ~1% */
    gm.m = 128 * 108;
    double r108 = one_kernel_us(&g, &gm, 1410, wl_core_latency_roofline);
    gm.m = 128 * 109;
    double r109 = one_kernel_us(&g, &gm, 1410, wl_core_latency_roofline);
    assert_true(r109 / r108 < 1.02);
}

/* Golden value derived by hand (roofline, default coefficients): 1e9-element
 * fp32 add moves 12e9 B. DRAM: 12e9 / (1555e3 B/us * 0.85) = 9078.8 us;
 * L2 2391 us and math 146.6 us overlap under the smooth max (+0.5 us);
 * fixed 2.5 us + 2000 clk / 1410 MHz = 1.418 us. Total 9083.2 us. */
static void test_golden_elementwise(void **state)
{
    (void)state;
    wl_core_gpu g;
    test_gpu(&g);
    wl_kernel k = test_ew(WL_EW_ADD, 1000000000LL, WL_DT_FP32);
    double t = one_kernel_us(&g, &k, 1410, wl_core_latency_roofline);
    assert_close(t, 9083.2, 9083.2 * 1e-3);
}

/* Memory-bound kernels do not care about the SM clock (HBM clock fixed)
 * while the miss path keeps up; compute-bound ones scale with 1/f. */
static void test_memory_bound_flat_compute_scales(void **state)
{
    (void)state;
    wl_core_gpu g;
    test_gpu(&g);
    g.coef.mem_bytes_per_clk = 1e6; /* miss path never binding */
    g.coef.mem_path_gbs = 1e6;
    wl_kernel ew = test_ew(WL_EW_ADD, 500000000LL, WL_DT_FP32);
    double lo = one_kernel_us(&g, &ew, 800, NULL), hi = one_kernel_us(&g, &ew, 1410, NULL);
    assert_close(lo / hi, 1.0, 0.01);
    wl_kernel gm = test_gemm(8192, 8192, 8192, 1);
    double glo = one_kernel_us(&g, &gm, 600, NULL), ghi = one_kernel_us(&g, &gm, 1200, NULL);
    assert_close(glo / ghi, 2.0, 0.05);
}

/* The builders' graphs on EnergAIzer's stack (transformers 4.x), which
 * shared/data/traces records kernel by kernel; the transformers 5.x graphs
 * are checked against the H200 profiles in test_profile. */
static wl_core_workload *build(const char *model, long long b, long long s, wl_dtype dt)
{
    wl_core_model m;
    wl_error err;
    assert_int_equal(wl_preset_model_load(model, &m, &err), WL_OK);
    wl_core_shape sh = {.batch = b, .seq = s, .dtype = dt, .attention = WL_ATTN_EAGER,
                        .stack = WL_STACK_HF4};
    wl_core_workload *wl = NULL;
    assert_int_equal(wl_core_build(&m, &sh, &wl, &err), WL_OK);
    return wl;
}

/* Whole-model time never rises with clock (power limit off). */
static void test_time_nonincreasing(void **state)
{
    (void)state;
    wl_core_gpu g;
    wl_error err;
    assert_int_equal(wl_preset_gpu_load("a100-pcie-40gb", &g, &err), WL_OK);
    const char *models[] = {"gpt2", "opt-1.3b", "llama-3-8b", "bert-large"};
    const long long shapes[][2] = {{1, 128}, {8, 512}, {2, 2048}};
    for (size_t mi = 0; mi < 4; mi++)
        for (size_t si = 0; si < 3; si++) {
            wl_core_workload *wl = build(models[mi], shapes[si][0], shapes[si][1], WL_DT_BF16);
            wl_core_evaluator *ev;
            assert_int_equal(wl_core_evaluator_create(&g, wl, NULL, &ev), WL_OK);
            double prev = INFINITY;
            for (double f = 210; f <= 1410; f += 15) {
                wl_core_op op = {.sm_clock_mhz = f, .ignore_power_limit = 1};
                wl_core_result r;
                assert_int_equal(wl_core_evaluator_run(ev, &op, &r), WL_OK);
                assert_true(r.time_ms <= prev * (1 + 1e-9));
                prev = r.time_ms;
                /* energy parts add up; energy = power x time */
                assert_close(r.energy_dyn_compute_j + r.energy_dyn_memory_j +
                                       r.energy_static_j, r.energy_j, r.energy_j * 1e-9);
                assert_close(r.power_w * r.time_ms * 1e-3, r.energy_j, r.energy_j * 1e-9);
            }
            wl_core_evaluator_free(ev);
            wl_core_workload_free(wl);
        }
}

/* Small workloads are launch-bound: time is set by the host and flat. */
static void test_launch_bound(void **state)
{
    (void)state;
    wl_core_gpu g;
    test_gpu(&g);
    g.coef.host_launch_us = 30;
    g.coef.launch_clk = 0;
    wl_core_workload *wl = wl_core_workload_create("tiny");
    wl_kernel k = test_ew(WL_EW_ADD, 4096, WL_DT_BF16);
    for (int i = 0; i < 100; i++)
        assert_int_equal(wl_core_workload_add(wl, &k), WL_OK);
    assert_int_equal(wl_core_workload_unique_count(wl), 1);
    wl_core_evaluator *ev;
    assert_int_equal(wl_core_evaluator_create(&g, wl, NULL, &ev), WL_OK);
    double tk = wl_core_evaluator_kernel_us(ev, 0, 510);
    assert_true(tk < 30);
    wl_core_op op = {.sm_clock_mhz = 510, .ignore_power_limit = 1};
    wl_core_result r;
    assert_int_equal(wl_core_evaluator_run(ev, &op, &r), WL_OK);
    /* the host issues 100 kernels 30 us apart; the last one then runs */
    assert_close(r.time_ms, (100 * 30 + tk) * 1e-3, 1e-9);
    assert_true(r.launch_bound_frac > 0.5);
    op.sm_clock_mhz = 1410;
    wl_core_result r2;
    assert_int_equal(wl_core_evaluator_run(ev, &op, &r2), WL_OK);
    assert_close(r2.time_ms, r.time_ms, r.time_ms * 0.01);
    /* front-end cycles per launch stretch the issue interval at low clocks:
     * 30 us + 510 cycles / 510 MHz = 31 us */
    g.coef.launch_clk = 510;
    wl_core_evaluator_set_gpu(ev, &g);
    op.sm_clock_mhz = 510;
    assert_int_equal(wl_core_evaluator_run(ev, &op, &r2), WL_OK);
    assert_close(r2.time_ms, (100 * 31 + tk) * 1e-3, 1e-9);
    wl_core_evaluator_free(ev);
    wl_core_workload_free(wl);
}

/* The timeline (with its early exit once the host cannot catch up) equals a
 * plain queue simulation: start_i = max(issue_i, end_{i-1}). */
static void test_timeline_matches_simulation(void **state)
{
    (void)state;
    wl_core_gpu g;
    test_gpu(&g);
    g.coef.host_launch_us = 20;
    g.coef.launch_clk = 1000;
    wl_core_workload *wl = wl_core_workload_create("mix");
    const wl_kernel kinds[] = {test_ew(WL_EW_ADD, 4096, WL_DT_BF16),
                               test_ew(WL_EW_GELU, 1 << 22, WL_DT_BF16),
                               test_gemm(2048, 2048, 2048, 1), test_gemm(128, 128, 64, 64)};
    unsigned seed = 12345;
    size_t seq[600];
    for (size_t i = 0; i < 600; i++) {
        seed = seed * 1103515245u + 12345u;
        /* GEMM-heavy start, launch-bound tail */
        seq[i] = i < 300 ? (seed >> 16) % 4 : (seed >> 16) % 2;
        assert_int_equal(wl_core_workload_add(wl, &kinds[seq[i]]), WL_OK);
    }
    wl_core_evaluator *ev;
    assert_int_equal(wl_core_evaluator_create(&g, wl, NULL, &ev), WL_OK);
    for (double f = 300; f <= 1410; f += 370) {
        double tk[4];
        for (size_t u = 0; u < 4; u++) {
            /* distinct kernels are indexed in order of first appearance */
            size_t first = 0;
            while (seq[first] != u)
                first++;
            size_t uidx = 0;
            for (size_t j = 0; j < first; j++) {
                int seen = 0;
                for (size_t q = 0; q < j; q++)
                    seen |= seq[q] == seq[j];
                uidx += !seen;
            }
            tk[u] = wl_core_evaluator_kernel_us(ev, uidx, f);
        }
        double h = 20 + 1000 / f, issue = 0, end = 0;
        for (size_t i = 0; i < 600; i++) {
            issue += h;
            end = (issue > end ? issue : end) + tk[seq[i]];
        }
        wl_core_op op = {.sm_clock_mhz = f, .ignore_power_limit = 1};
        wl_core_result r;
        assert_int_equal(wl_core_evaluator_run(ev, &op, &r), WL_OK);
        assert_close(r.time_ms, end * 1e-3, end * 1e-12);
    }
    wl_core_evaluator_free(ev);
    wl_core_workload_free(wl);
}

/* Above the board limit the clock throttles until power meets the cap. */
static void test_power_limit(void **state)
{
    (void)state;
    wl_core_gpu g;
    test_gpu(&g);
    g.power_limit_w = 150;
    g.coef.power_cap_frac = 1.0;
    wl_core_workload *wl = wl_core_workload_create("gemms");
    wl_kernel k = test_gemm(8192, 8192, 8192, 1);
    for (int i = 0; i < 20; i++)
        wl_core_workload_add(wl, &k);
    wl_core_evaluator *ev;
    assert_int_equal(wl_core_evaluator_create(&g, wl, NULL, &ev), WL_OK);
    wl_core_op free_op = {.sm_clock_mhz = 1410, .ignore_power_limit = 1},
               op = {.sm_clock_mhz = 1410};
    wl_core_result unl, r;
    assert_int_equal(wl_core_evaluator_run(ev, &free_op, &unl), WL_OK);
    assert_true(unl.power_w > 150);
    assert_int_equal(wl_core_evaluator_run(ev, &op, &r), WL_OK);
    assert_true(r.throttled);
    assert_true(r.effective_clock_mhz < 1410 && r.effective_clock_mhz > 210);
    assert_close(r.power_w, 150, 0.5);
    assert_true(r.time_ms > unl.time_ms);
    assert_close(r.requested_clock_mhz, 1410, 1e-9);
    /* a clock below the throttle point is not affected */
    wl_core_op low = {.sm_clock_mhz = r.effective_clock_mhz - 50};
    wl_core_result rl;
    assert_int_equal(wl_core_evaluator_run(ev, &low, &rl), WL_OK);
    assert_false(rl.throttled);
    assert_true(rl.power_w < 150);
    wl_core_evaluator_free(ev);
    wl_core_workload_free(wl);
}

/* Dynamic power ~ V^a f: at a fixed clock, raising the voltage raises power
 * and leaves time alone. */
static void test_voltage_override(void **state)
{
    (void)state;
    wl_core_gpu g;
    test_gpu(&g);
    wl_core_workload *wl = wl_core_workload_create("g");
    wl_kernel k = test_gemm(4096, 4096, 4096, 1);
    wl_core_workload_add(wl, &k);
    wl_core_evaluator *ev;
    assert_int_equal(wl_core_evaluator_create(&g, wl, NULL, &ev), WL_OK);
    wl_core_op a = {.sm_clock_mhz = 900, .ignore_power_limit = 1},
               b = {.sm_clock_mhz = 900, .voltage_offset_mv = 100, .ignore_power_limit = 1};
    wl_core_result ra, rb;
    assert_int_equal(wl_core_evaluator_run(ev, &a, &ra), WL_OK);
    assert_int_equal(wl_core_evaluator_run(ev, &b, &rb), WL_OK);
    assert_close(ra.voltage_mv, 700, 1e-9);
    assert_close(rb.voltage_mv, 800, 1e-9);
    assert_close(ra.time_ms, rb.time_ms, 1e-12);
    double ratio = rb.energy_dyn_compute_j / ra.energy_dyn_compute_j;
    assert_close(ratio, pow(800.0 / 700.0, g.coef.v_exponent), 1e-6);
    wl_core_op bad = {.sm_clock_mhz = -5};
    assert_int_equal(wl_core_evaluator_run(ev, &bad, &ra), WL_EINVAL);
    wl_core_evaluator_free(ev);
    wl_core_workload_free(wl);
}

/* One trace name: <model>_<dtype>_b<batch>[_s<seq>]_<mode>.json */
static int parse_trace_name(const char *name, char *model, size_t cap, wl_dtype *dt,
                            long long *b, long long *s)
{
    const char *u = strchr(name, '_');
    if (!u || (size_t)(u - name) >= cap)
        return 0;
    memcpy(model, name, (size_t)(u - name));
    model[u - name] = '\0';
    char dts[16];
    int used = 0;
    *s = 1;
    if (sscanf(u + 1, "%15[a-z0-9]_b%lld%n", dts, b, &used) != 2)
        return 0;
    const char *rest = u + 1 + used;
    if (strncmp(rest, "_s", 2) == 0 && sscanf(rest, "_s%lld", s) != 1)
        return 0;
    return wl_dtype_parse(dts, dt) == WL_OK;
}

/* ResNet-101: every convolution's implicit-GEMM shape (M = b oh ow, N = cout,
 * K = cin r^2, filter taps, stride) and the fc equal the traces' GEMMs in
 * order. The traces leave out BatchNorm, the residual add and the pools,
 * which eager PyTorch launches and the builder keeps. */
static void compare_gemms(const char *name, const wl_core_workload *wl, const wl_core_workload *tr)
{
    size_t a = 0, t = 0, na = wl_core_workload_count(wl), nt = wl_core_workload_count(tr);
    int gemms = 0;
    for (;;) {
        while (a < na && wl_core_workload_kernel(wl, a)->kind != WL_K_GEMM)
            a++;
        while (t < nt && wl_core_workload_kernel(tr, t)->kind != WL_K_GEMM)
            t++;
        if (a == na || t == nt)
            break;
        const wl_kernel *x = wl_core_workload_kernel(wl, a), *y = wl_core_workload_kernel(tr, t);
        if (!wl_kernel_equal(x, y))
            fail_msg("%s GEMM %d: built %lldx%lldx%lld taps %d/%d, trace %lldx%lldx%lld taps %d/%d",
                     name, gemms, x->m, x->n, x->k, x->conv_taps, x->conv_stride, y->m, y->n, y->k,
                     y->conv_taps, y->conv_stride);
        gemms++;
        a++;
        t++;
    }
    if (a != na || t != nt)
        fail_msg("%s: %zu GEMMs left over in the build, %zu in the trace", name, na - a, nt - t);
    assert_int_equal(gemms, 104 + 1); /* 104 convolutions + fc */
    /* by hand: stem 4 + 33 blocks x 10 + 4 downsamples x 2 + pool + fc */
    assert_int_equal(na, 4 + 33 * 10 + 4 * 2 + 2);
}

/* The native builder against every trace in shared/data/traces, kernel for
 * kernel (count, kind, op, shape, precision, order), so that no family can
 * drift from what eager PyTorch launched. ResNet is compared GEMM for GEMM
 * (see compare_gemms); a traced family without a model preset is named. */
/* Footprints against hand counts. Parameters: the HF models' published
 * totals (GPT2Model 124,439,808; Qwen2-1.5B 1,543,714,304 with tied
 * embeddings; BertModel large 335,141,888; OPT-1.3B 1,315,758,080;
 * torchvision resnet101 44,549,160). Activations of one eager layer, by hand:
 *  GPT-2 b1 s1024: T = 1024, S = h s^2 = 12,582,912 scores; residual and
 *   normed input 2 T d = 1,572,864; c_attn output 3 T d = 2,359,296; scale,
 *   mask and softmax hold two score matrices, 2 S = 25,165,824; MLP 2 T ff =
 *   6,291,456 is smaller: 29,097,984 elements x 2 B = 58,195,968 B.
 *  Qwen2-1.5B b1 s2048: T = 2048, S = 12 x 2048^2 = 50,331,648; 2 T d =
 *   6,291,456; q, k, v = T (1536 + 2 x 256) = 4,194,304 plus repeat_kv's k, v
 *   copies 2 T d = 6,291,456; masked scores (bf16) + fp32 softmax + bf16 copy
 *   = S (1 + 2 + 1) = 201,326,592; MLP 3 T ff = 55,050,240 is smaller:
 *   218,103,808 x 2 B = 436,207,616 B. KV cache 2 x 28 x 2048 x 2 x 128 x 2 B
 *   = 58,720,256 B. */
static void test_memory_footprint(void **state)
{
    (void)state;
    wl_error err = {0};
    static const struct {
        const char *id;
        double params;
    } counts[] = {{"gpt2", 124439808.0},      {"qwen2-1.5b", 1543714304.0},
                  {"bert-large", 335141888.0}, {"opt-1.3b", 1315758080.0},
                  {"resnet-101", 44549160.0}};
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
        wl_core_model m;
        assert_int_equal(wl_preset_model_load(counts[i].id, &m, &err), WL_OK);
        double p = 0;
        assert_int_equal(wl_core_model_params(&m, &p), WL_OK);
        if (p != counts[i].params)
            fail_msg("%s: %.0f parameters, expected %.0f", counts[i].id, p, counts[i].params);
    }
    wl_core_model gpt2, qwen;
    assert_int_equal(wl_preset_model_load("gpt2", &gpt2, &err), WL_OK);
    assert_int_equal(wl_preset_model_load("qwen2-1.5b", &qwen, &err), WL_OK);
    wl_core_memory mem;
    wl_core_shape sh = {.batch = 1, .seq = 1024, .dtype = WL_DT_BF16, .attention = WL_ATTN_EAGER};
    assert_int_equal(wl_core_memory_estimate(&gpt2, &sh, &mem, &err), WL_OK);
    assert_close(mem.weights_gb, 124439808.0 * 2 / 1e9, 1e-12);
    assert_close(mem.activations_gb, 58195968.0 / 1e9, 1e-12);
    assert_close(mem.kv_cache_gb, 2.0 * 12 * 1024 * 768 * 2 / 1e9, 1e-12);
    assert_close(mem.total_gb,
                        mem.weights_gb + mem.activations_gb + mem.kv_cache_gb + mem.workspace_gb,
                        1e-12);
    /* fp32 doubles every byte; flash attention has no score matrices */
    wl_core_memory m32, mfl;
    sh.dtype = WL_DT_FP32;
    assert_int_equal(wl_core_memory_estimate(&gpt2, &sh, &m32, &err), WL_OK);
    assert_close(m32.weights_gb, 2 * mem.weights_gb, 1e-12);
    assert_close(m32.activations_gb, 2 * mem.activations_gb, 1e-12);
    sh.dtype = WL_DT_BF16;
    sh.attention = WL_ATTN_FLASH;
    assert_int_equal(wl_core_memory_estimate(&gpt2, &sh, &mfl, &err), WL_OK);
    /* 2 T d + max(3 T d + T d, 2 T ff) = 1,572,864 + 6,291,456 elements */
    assert_close(mfl.activations_gb, (1572864.0 + 6291456.0) * 2 / 1e9, 1e-12);

    sh = (wl_core_shape){.batch = 1, .seq = 2048, .dtype = WL_DT_BF16, .attention = WL_ATTN_EAGER};
    assert_int_equal(wl_core_memory_estimate(&qwen, &sh, &mem, &err), WL_OK);
    assert_close(mem.weights_gb, 1543714304.0 * 2 / 1e9, 1e-12);
    assert_close(mem.activations_gb, 436207616.0 / 1e9, 1e-12);
    assert_close(mem.kv_cache_gb, 58720256.0 / 1e9, 1e-12);

    /* fits: GPT-3 175B at batch 8 is 350 GB of weights alone, not an A30 */
    wl_core_gpu a30, a100;
    assert_int_equal(wl_preset_gpu_load("a30-24gb", &a30, &err), WL_OK);
    assert_int_equal(wl_preset_gpu_load("a100-pcie-40gb", &a100, &err), WL_OK);
    assert_int_equal(wl_core_memory_fits(&a100, &mem), 1);
    wl_core_model g3;
    assert_int_equal(wl_preset_model_load("gpt3-175b", &g3, &err), WL_OK);
    sh = (wl_core_shape){.batch = 8, .seq = 128, .dtype = WL_DT_BF16, .attention = WL_ATTN_EAGER};
    assert_int_equal(wl_core_memory_estimate(&g3, &sh, &mem, &err), WL_OK);
    assert_true(mem.weights_gb > 349 && mem.weights_gb < 351);
    assert_int_equal(wl_core_memory_fits(&a30, &mem), 0);
    a30.mem_capacity_gb = 0; /* not given: unknown */
    assert_int_equal(wl_core_memory_fits(&a30, &mem), -1);
    /* a vision model has no KV cache; buffers (BN running stats) count */
    wl_core_model rn;
    assert_int_equal(wl_preset_model_load("resnet-101", &rn, &err), WL_OK);
    sh = (wl_core_shape){.batch = 1, .dtype = WL_DT_BF16};
    assert_int_equal(wl_core_memory_estimate(&rn, &sh, &mem, &err), WL_OK);
    assert_close(mem.kv_cache_gb, 0, 0);
    assert_true(mem.weights_gb > 44549160.0 * 2 / 1e9);
}

static void test_builder_matches_every_trace(void **state)
{
    (void)state;
    REQUIRE_SHARED(dir);
    char *tdir = wl_core_strprintf("%s/traces", dir);
    assert_non_null(tdir);
    DIR *d = opendir(tdir);
    if (!d) {
        fprintf(stderr, "SKIP %s: %s not found\n", __func__, tdir);
        free(tdir);
        skip();
    }
    int exact = 0, by_gemm = 0, no_builder = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json"))
            continue;
        char model[128];
        wl_dtype dt;
        long long b, s;
        if (!parse_trace_name(e->d_name, model, sizeof model, &dt, &b, &s))
            fail_msg("trace name not understood: %s", e->d_name);
        wl_core_model m;
        wl_error err;
        if (wl_preset_model_load(model, &m, &err) != WL_OK) {
            fprintf(stderr, "NOTE %s: no model preset for %s, trace not compared\n",
                    __func__, e->d_name);
            no_builder++;
            continue;
        }
        char *path = wl_core_strprintf("%s/%s", tdir, e->d_name);
        assert_non_null(path);
        wl_core_workload *tr = NULL, *wl = NULL;
        if (wl_core_trace_load(path, &tr, &err) != WL_OK)
            fail_msg("%s: %s", path, err.text);
        wl_core_shape sh = {.batch = b, .seq = s, .dtype = dt, .attention = WL_ATTN_EAGER,
                            .stack = WL_STACK_HF4};
        if (wl_core_build(&m, &sh, &wl, &err) != WL_OK)
            fail_msg("%s: build failed: %s", e->d_name, err.text);
        if (strncmp(wl_core_workload_name(wl), e->d_name, len - 5) ||
            wl_core_workload_name(wl)[len - 5])
            fail_msg("built workload named %s for %s", wl_core_workload_name(wl), e->d_name);
        if (m.style == WL_STYLE_RESNET) {
            compare_gemms(e->d_name, wl, tr);
            by_gemm++;
        } else {
            size_t nw = wl_core_workload_count(wl), nt = wl_core_workload_count(tr);
            for (size_t i = 0; i < nw && i < nt; i++) {
                const wl_kernel *x = wl_core_workload_kernel(wl, i), *t = wl_core_workload_kernel(tr, i);
                if (!wl_kernel_equal(x, t))
                    fail_msg("%s kernel %zu differs: built %s %lldx%lldx%lld b%lld op %d dt %d, "
                             "trace %s %lldx%lldx%lld b%lld op %d dt %d", e->d_name, i,
                             wl_kernel_kind_name(x->kind), x->m, x->n, x->k, x->batch, x->op,
                             x->in_dtype, wl_kernel_kind_name(t->kind), t->m, t->n, t->k,
                             t->batch, t->op, t->in_dtype);
            }
            if (nw != nt)
                fail_msg("%s: built %zu kernels, the trace has %zu", e->d_name, nw, nt);
            exact++;
        }
        wl_core_workload_free(wl);
        wl_core_workload_free(tr);
        free(path);
    }
    closedir(d);
    free(tdir);
    fprintf(stderr, "NOTE %s: %d traces equal kernel for kernel, %d GEMM for GEMM, "
            "%d without a model preset\n", __func__, exact, by_gemm, no_builder);
    assert_true(exact > 0);
}

/* GEMM DRAM traffic on a small L2 (A10: 6 MB) follows the wave footprint,
 * not the capacity blocking. 8192^3 bf16 on 72 SMs: the 128x128 tile wins
 * (8192 tiles / 72 SMs quantise to 114 per SM, 256x128 tiles to 29 of
 * 28.4), two CTAs per SM fit 100 KB of shared memory (3 x 32 x 256 x 2 B
 * = 48 KB each), so a wave is 144 tiles, a 12 x 12 block of C: 29 waves
 * each read 12 x 128 rows of A and as many columns of B over K = 8192,
 * 29 x 2 x 1536 x 8192 x 2 B = 1,459,617,792 B, plus C once (134,217,728 B).
 * Holding a 3 MB chunk of B in L2 and re-streaming A for each chunk
 * would read 44 x 134 MB = 5.9 GB. */
static void test_gemm_wave_traffic(void **state)
{
    (void)state;
    wl_error err;
    wl_core_gpu g;
    assert_int_equal(wl_preset_gpu_load("a10-24gb", &g, &err), WL_OK);
    wl_kernel k = {.kind = WL_K_GEMM, .in_dtype = WL_DT_BF16, .acc_dtype = WL_DT_BF16,
                   .tensor_core = 1, .batch = 1, .m = 8192, .n = 8192, .k = 8192};
    wl_core_op op = {.sm_clock_mhz = 900, .ignore_power_limit = 1};
    wl_core_result r;
    wl_core_workload *w = wl_core_workload_create("gemm");
    assert_int_equal(wl_core_workload_add(w, &k), WL_OK);
    assert_int_equal(wl_core_predict(&g, w, &op, &r), WL_OK);
    assert_close(r.cls[WL_CLASS_GEMM].dram_bytes, 1459617792.0 + 134217728.0, 1.0);
    wl_core_workload_free(w);
    /* an operand that fits in L2 is read once: 4096 x 1024 weights (8 MB)
     * against the A100's 20 MB, so the traffic is compulsory */
    assert_int_equal(wl_preset_gpu_load("a100-pcie-40gb", &g, &err), WL_OK);
    k.m = 16384, k.n = 4096, k.k = 1024;
    w = wl_core_workload_create("gemm");
    assert_int_equal(wl_core_workload_add(w, &k), WL_OK);
    assert_int_equal(wl_core_predict(&g, w, &op, &r), WL_OK);
    assert_close(r.cls[WL_CLASS_GEMM].dram_bytes, 2.0 * (16384.0 * 1024 + 1024.0 * 4096 + 16384.0 * 4096), 1.0);
    wl_core_workload_free(w);
}

/* The Hopper rules, each against what it must give by construction. */
static void test_hopper_rules(void **state)
{
    (void)state;
    wl_error err;
    wl_core_gpu g;
    assert_int_equal(wl_preset_gpu_load("h100-sxm-80gb", &g, &err), WL_OK);
    wl_core_op op = {.ignore_power_limit = 1};
    wl_core_result r1, r2;
    /* ALU work issues at the INT32 rate: 64 per SM per clock on both GA100
     * and GH100 whatever the FP32 lanes; without the key half the FP32 rate,
     * at most 64 */
    assert_close(wl_core_gpu_alu_rate(&g), 64.0, 0);
    wl_core_gpu d = g;
    d.cuda_int32_op_per_clk_sm = 0;
    assert_close(wl_core_gpu_alu_rate(&d), 64.0, 0);
    d.cuda_flop_per_clk_sm[WL_DT_FP32] = 64;
    assert_close(wl_core_gpu_alu_rate(&d), 32.0, 0);
    /* below the L2 clock floor a memory-bound kernel takes the floor's time */
    wl_kernel add = {.kind = WL_K_ELEMENTWISE, .op = WL_EW_ADD, .in_dtype = WL_DT_BF16,
                     .acc_dtype = WL_DT_BF16, .batch = 1, .n = 268435456};
    wl_core_workload *w = wl_core_workload_create("add");
    assert_int_equal(wl_core_workload_add(w, &add), WL_OK);
    wl_core_evaluator *ev;
    assert_int_equal(wl_core_evaluator_create(&g, w, NULL, &ev), WL_OK);
    assert_true(g.l2_clock_min_mhz > 600);
    double t_floor = wl_core_evaluator_kernel_us(ev, 0, g.l2_clock_min_mhz);
    double t_low = wl_core_evaluator_kernel_us(ev, 0, 510);
    double t_high = wl_core_evaluator_kernel_us(ev, 0, g.l2_clock_min_mhz + 200);
    /* the ALU part still follows the SM clock: no faster than at the floor */
    assert_true(t_low >= t_floor && t_low < t_floor * 1.05);
    assert_true(t_high < t_floor);
    wl_core_evaluator_free(ev);
    /* one launch measured back to back: max(host, GPU), not their sum; the
     * same kernel as one run from an idle queue pays both */
    wl_kernel tiny = add;
    tiny.n = 1024;
    wl_core_workload *t = wl_core_workload_create("tiny");
    assert_int_equal(wl_core_workload_add(t, &tiny), WL_OK);
    op.sm_clock_mhz = 1410;
    assert_int_equal(wl_core_predict(&g, t, &op, &r1), WL_OK);
    wl_core_workload_set_repeated(t, 1);
    assert_int_equal(wl_core_predict(&g, t, &op, &r2), WL_OK);
    /* launch-bound: the host's pace, a bare op's issue cost in a loop; one
     * run from an idle queue is a model's kernel */
    assert_true(g.coef.host_op_launch_us > 0 &&
                g.coef.host_op_launch_us < g.coef.host_launch_us);
    double h_op = g.coef.host_op_launch_us + g.coef.launch_clk / 1410.0;
    double h_model = g.coef.host_launch_us + g.coef.launch_clk / 1410.0;
    assert_close(r2.time_ms, h_op * 1e-3, 1e-9);
    assert_close(r1.time_ms, h_model * 1e-3 + r1.busy_ms, 1e-9);
    wl_core_gpu same = g; /* a bare op's cost unstated (0): the model's */
    same.coef.host_op_launch_us = 0;
    assert_int_equal(wl_core_predict(&same, t, &op, &r2), WL_OK);
    assert_close(r2.time_ms, h_model * 1e-3, 1e-9);
    wl_core_workload_set_repeated(w, 1); /* GPU-bound: the kernel's time */
    assert_int_equal(wl_core_predict(&g, w, &op, &r2), WL_OK);
    assert_close(r2.time_ms, r2.busy_ms, 1e-12);
    wl_core_workload_free(t);
    wl_core_workload_free(w);
    /* stream-K: 320 tiles of 256x128 on 132 SMs lose no last wave; the same
     * GEMM without it runs ceil(320/132) = 3 tiles per SM, 2.42 with it */
    wl_kernel gemm = {.kind = WL_K_GEMM, .in_dtype = WL_DT_BF16, .acc_dtype = WL_DT_BF16,
                      .tensor_core = 1, .batch = 1, .m = 512, .n = 20480, .k = 5120};
    w = wl_core_workload_create("gemm");
    assert_int_equal(wl_core_workload_add(w, &gemm), WL_OK);
    op.sm_clock_mhz = 1305;
    assert_int_equal(wl_core_predict(&g, w, &op, &r1), WL_OK);
    d = g;
    d.gemm_stream_k = 0;
    assert_int_equal(wl_core_predict(&d, w, &op, &r2), WL_OK);
    assert_true(r2.busy_ms > r1.busy_ms * 1.1);
    /* a 64-row GEMM never runs 256-row tiles: at the lowest clock it is no
     * slower than its weight read at the floor's miss-path rate plus math */
    gemm.m = 64, gemm.n = 12288, gemm.k = 12288;
    wl_core_workload_free(w);
    w = wl_core_workload_create("gemv");
    assert_int_equal(wl_core_workload_add(w, &gemm), WL_OK);
    op.sm_clock_mhz = 510;
    assert_int_equal(wl_core_predict(&g, w, &op, &r1), WL_OK);
    op.sm_clock_mhz = g.l2_clock_min_mhz;
    assert_int_equal(wl_core_predict(&g, w, &op, &r2), WL_OK);
    assert_true(r1.busy_ms < r2.busy_ms * 1.1);
    wl_core_workload_free(w);
}

static void test_conv_traffic(void **state)
{
    (void)state;
    /* conv A-operand traffic: a 3x3 stride-1 conv reads its input once, not 9x */
    wl_error err;
    wl_core_gpu g;
    assert_int_equal(wl_preset_gpu_load("a100-pcie-40gb", &g, &err), WL_OK);
    wl_kernel k = {0};
    k.kind = WL_K_GEMM;
    k.in_dtype = k.acc_dtype = WL_DT_BF16;
    k.tensor_core = 1;
    k.batch = 1;
    k.m = 64 * 56 * 56;
    k.n = 64;
    k.k = 576;
    wl_core_result r1, r2;
    wl_core_op op = {.sm_clock_mhz = 1410, .ignore_power_limit = 1};
    wl_core_workload *w1 = wl_core_workload_create("gemm"), *w2 = wl_core_workload_create("conv");
    assert_int_equal(wl_core_workload_add(w1, &k), WL_OK);
    k.conv_taps = 9;
    k.conv_stride = 1;
    assert_int_equal(wl_core_workload_add(w2, &k), WL_OK);
    assert_int_equal(wl_core_predict(&g, w1, &op, &r1), WL_OK);
    assert_int_equal(wl_core_predict(&g, w2, &op, &r2), WL_OK);
    /* DRAM: A 200704x576 bf16 (231 MB) -> its input, 1/9 of that; but a
     * bf16 convolution also transposes its input (25.7 MB) to NHWC and its
     * output (200704x64 bf16, 25.7 MB) back, reading and writing each */
    double a_bytes = 200704.0 * 576 * 2, out_bytes = 200704.0 * 64 * 2;
    double nhwc = 2.0 * (a_bytes / 9.0 + out_bytes);
    assert_close(r1.cls[WL_CLASS_GEMM].dram_bytes - r2.cls[WL_CLASS_GEMM].dram_bytes,
                 a_bytes * 8.0 / 9.0 - nhwc, 1e-6 * a_bytes);
    wl_core_workload_free(w1);
    wl_core_workload_free(w2);
    /* TF32 (fp32 data) reads NCHW directly: only the 1/9 saving */
    k.in_dtype = k.acc_dtype = WL_DT_TF32;
    w1 = wl_core_workload_create("gemm");
    w2 = wl_core_workload_create("conv");
    assert_int_equal(wl_core_workload_add(w2, &k), WL_OK);
    k.conv_taps = 0;
    k.conv_stride = 0;
    assert_int_equal(wl_core_workload_add(w1, &k), WL_OK);
    assert_int_equal(wl_core_predict(&g, w1, &op, &r1), WL_OK);
    assert_int_equal(wl_core_predict(&g, w2, &op, &r2), WL_OK);
    assert_close(r1.cls[WL_CLASS_GEMM].dram_bytes - r2.cls[WL_CLASS_GEMM].dram_bytes,
                 2.0 * a_bytes * 8.0 / 9.0, 2e-6 * a_bytes);
    wl_core_workload_free(w1);
    wl_core_workload_free(w2);
}

/* gpt2 by hand: 12 layers x 20 kernels + embedding add + final LayerNorm. */
static void test_builder_counts(void **state)
{
    (void)state;
    wl_core_workload *wl = build("gpt2", 8, 128, WL_DT_BF16);
    assert_int_equal(wl_core_workload_count(wl), 242);
    /* identical layers: the distinct kernels are few */
    assert_true(wl_core_workload_unique_count(wl) <= 20);
    /* GEMM FLOPs: 2 T (4 d^2 + 2 d ff) per layer + attention 4 b h s^2 hd */
    double T = 1024, d = 768, ff = 3072;
    double expect = 12 * (2 * T * (4 * d * d + 2 * d * ff) + 4.0 * 8 * 12 * 128 * 128 * 64);
    assert_close(wl_core_workload_flops(wl), expect, 1);
    wl_core_workload_free(wl);
    /* GQA llama: K/V projections are kv_heads wide; repeat_kv is a view.
     * By hand (HF LlamaModel eager, the generation of the qwen2 traces):
     * rotary 3 + per layer (RMSNorm 5, q/k/v 3, rotary 3 + 3, QK^T, scale,
     * mask, two casts, softmax, PV, o_proj, add, RMSNorm 5, gate, silu, up,
     * mul, down, add = 34) + final RMSNorm 5 */
    wl = build("llama-3-8b", 1, 256, WL_DT_BF16);
    assert_int_equal(wl_core_workload_count(wl), 3 + 32 * 34 + 5);
    int kv_proj = 0;
    for (size_t i = 0; i < wl_core_workload_count(wl); i++) {
        const wl_kernel *k = wl_core_workload_kernel(wl, i);
        if (k->kind == WL_K_GEMM && k->m == 1024 && k->k == 4096)
            kv_proj++;
    }
    assert_int_equal(kv_proj, 2 * 32);
    wl_core_workload_free(wl);
    /* fp32 runs GEMMs on CUDA cores and drops the half-precision casts */
    wl = build("opt-1.3b", 2, 128, WL_DT_FP32);
    for (size_t i = 0; i < wl_core_workload_count(wl); i++) {
        const wl_kernel *k = wl_core_workload_kernel(wl, i);
        assert_false(k->kind == WL_K_GEMM && k->tensor_core);
        assert_false(k->kind == WL_K_ELEMENTWISE && k->op == WL_EW_CAST_BF16);
    }
    assert_int_equal(wl_core_workload_count(wl), 436 - 48);
    wl_core_workload_free(wl);
}

static void test_trace_errors(void **state)
{
    (void)state;
    wl_core_workload *wl = NULL;
    wl_error err;
    const char *bad_json = "[\n [{\"dim\": 5, \"op\": \"relu\", \"prec\": \"bf16\"}, [\"elementwise\"]],\n [{\"dim\": }]\n]";
    assert_int_equal(wl_core_trace_parse(bad_json, strlen(bad_json), "t.json", &wl, &err),
                     WL_EPARSE);
    assert_int_equal(err.line, 3);
    assert_null(wl);
    const char *bad_kind = "[[{\"x\": 1}, [\"mystery\"]]]";
    assert_int_equal(wl_core_trace_parse(bad_kind, strlen(bad_kind), "t.json", &wl, &err),
                     WL_EUNSUPPORTED);
    assert_non_null(strstr(err.text, "mystery"));
    const char *bad_dim = "[\n[{\"dim\": -4, \"op\": \"relu\", \"prec\": \"bf16\"}, [\"elementwise\"]]]";
    assert_int_equal(wl_core_trace_parse(bad_dim, strlen(bad_dim), "t.json", &wl, &err),
                     WL_EPARSE);
    assert_string_equal(err.field, "dim");
    assert_int_equal(err.line, 2);
    const char *ok = "[[{\"dim\": 8, \"op\": \"gelu\", \"prec\": \"bf16\"}, [\"elementwise\"]],"
                     "[{\"batch\": 2, \"dim\": 8, \"prec\": \"fp32\"}, [\"softmax\", \"fp32\"]]]";
    assert_int_equal(wl_core_trace_parse(ok, strlen(ok), "t.json", &wl, &err), WL_OK);
    assert_int_equal(wl_core_workload_count(wl), 2);
    assert_int_equal(wl_core_workload_kernel(wl, 0)->op, WL_EW_GELU);
    assert_int_equal(wl_core_workload_kernel(wl, 1)->kind, WL_K_SOFTMAX);
    wl_core_workload_free(wl);
    assert_int_equal(wl_core_trace_load("/nonexistent/x.json", &wl, &err), WL_EIO);
    /* the size limits of native models hold for traces: a layernorm of
     * 2^40 x 2^40 elements is refused, naming the field */
    const char *huge = "[[{\"batch\": 1099511627776, \"dim\": 1099511627776, \"prec\": \"bf16\"},"
                       " [\"layernorm\", \"bf16\"]]]";
    assert_int_equal(wl_core_trace_parse(huge, strlen(huge), "t.json", &wl, &err), WL_EPARSE);
    assert_string_equal(err.field, "dim");
    assert_non_null(strstr(err.text, "elements"));
    assert_null(wl);
}

/* One grammar for numbers, lists and ranges. */
static void test_grammar(void **state)
{
    (void)state;
    wl_error err;
    wl_core_numlist l = {0};
    assert_int_equal(wl_core_parse_list("510:1410:90, 1500", 1, 2000, 0, "x", 0, "clock", &l, &err),
                     WL_OK);
    assert_int_equal(l.n, 12);
    assert_close(l.v[10], 1410, 0);
    assert_close(l.v[11], 1500, 0);
    wl_core_numlist_free(&l);
    /* no drift from repeated addition */
    assert_int_equal(wl_core_parse_list("0:1:0.1", -1, 2, 0, "x", 0, "f", &l, &err), WL_OK);
    assert_int_equal(l.n, 11);
    assert_close(l.v[10], 1.0, 1e-15);
    wl_core_numlist_free(&l);
    const char *const bad[] = {"", "1,", ",1", "1,,2", "1:2", "2:1:1", "1:2:0", "nan", "inf",
                               "1e999", "abc", "1:1e12:1", "0x10", "5 6"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (wl_core_parse_list(bad[i], -1e9, 1e9, 0, "src", 7, "fld", &l, &err) == WL_OK &&
            strcmp(bad[i], "0x10") != 0)
            fail_msg("'%s' was accepted", bad[i]);
        wl_core_numlist_free(&l);
    }
    assert_int_equal(wl_core_parse_list("1,,2", 0, 9, 0, "src", 7, "fld", &l, &err), WL_EINVAL);
    assert_string_equal(err.source, "src");
    assert_int_equal(err.line, 7);
    assert_string_equal(err.field, "fld");
    assert_non_null(strstr(err.text, "empty item"));
    assert_int_equal(wl_core_parse_list("1.5", 0, 9, 1, "s", 0, "batch", &l, &err), WL_EINVAL);
    assert_int_equal(wl_core_parse_list("10", 0, 9, 1, "s", 0, "batch", &l, &err), WL_EINVAL);
    assert_non_null(strstr(err.text, "[0, 9]"));
    wl_core_numlist_free(&l);
    long long v;
    assert_int_equal(wl_core_parse_int(" 42 ", 1, 100, "s", 0, "n", &v, &err), WL_OK);
    assert_int_equal(v, 42);
    assert_int_equal(wl_core_parse_int("99999999999", 1, 1000000, "s", 0, "batch", &v, &err),
                     WL_EINVAL);
    assert_string_equal(err.text, "expected an integer in [1, 1000000], got '99999999999'");
    wl_core_strlist names = {0};
    assert_int_equal(wl_core_parse_names(" a , b ", "s", 0, "gpu", &names, &err), WL_OK);
    assert_int_equal(names.n, 2);
    assert_string_equal(names.v[1], "b");
    assert_int_equal(wl_core_parse_names("a,", "s", 0, "gpu", &names, &err), WL_EINVAL);
    wl_core_strlist_free(&names);
}

/* The clock grid reaches the top clock even off the step. */
static void test_clock_grid(void **state)
{
    (void)state;
    wl_core_gpu g;
    test_gpu(&g);
    assert_int_equal(wl_core_gpu_clock_count(&g), 81);
    assert_close(wl_core_gpu_clock(&g, 80), 1410, 0);
    g.sm_clock_max_mhz = 1400;
    assert_int_equal(wl_core_gpu_clock_count(&g), 81);
    assert_close(wl_core_gpu_clock(&g, 79), 1395, 0);
    assert_close(wl_core_gpu_clock(&g, 80), 1400, 0);
    wl_error err;
    assert_int_equal(wl_core_gpu_clock_check(&g, 1500, "--clock", 0, &err), WL_EINVAL);
    assert_string_equal(err.source, "--clock");
    assert_non_null(strstr(err.text, "210-1400"));
}

/* Energy vs clock is U-shaped for a compute-heavy workload: the optimum is
 * inside the range, not at an end. */
static void test_energy_u_shape(void **state)
{
    (void)state;
    wl_core_gpu g;
    wl_error err;
    assert_int_equal(wl_preset_gpu_load("a100-pcie-40gb", &g, &err), WL_OK);
    wl_core_workload *wl = build("opt-1.3b", 8, 512, WL_DT_BF16);
    wl_core_evaluator *ev;
    assert_int_equal(wl_core_evaluator_create(&g, wl, NULL, &ev), WL_OK);
    double best = INFINITY, best_f = 0, e_lo = 0, e_hi = 0;
    for (double f = 210; f <= 1410; f += 30) {
        wl_core_op op = {.sm_clock_mhz = f};
        wl_core_result r;
        assert_int_equal(wl_core_evaluator_run(ev, &op, &r), WL_OK);
        if (f == 210) e_lo = r.energy_j;
        e_hi = r.energy_j;
        if (r.energy_j < best) {
            best = r.energy_j;
            best_f = f;
        }
    }
    assert_true(best_f > 500 && best_f < 1300);
    assert_true(e_lo > best * 1.05 && e_hi > best * 1.05);
    wl_core_evaluator_free(ev);
    wl_core_workload_free(wl);
}

/* Transfer rules: identity on the same GPU; hand-computed ratios otherwise. */
static void test_transfer(void **state)
{
    (void)state;
    wl_core_gpu a, b;
    wl_error err;
    assert_int_equal(wl_preset_gpu_load("a100-pcie-40gb", &a, &err), WL_OK);
    b = a;
    memset(&b.coef, 0, sizeof b.coef);
    assert_int_equal(wl_core_gpu_transfer(&a, &b, &err), WL_OK);
    assert_memory_equal(&a.coef, &b.coef, sizeof a.coef);
    /* twice the SMs on a node of half the feature size: the same switched
     * capacitance per chip for compute; HBM2 -> GDDR6 on the DRAM side */
    b = a;
    b.sms = 2 * a.sms;
    b.process_nm = 7.0 * pow(0.5, 1.0 / WL_NODE_ENERGY_EXP); /* half the energy per op */
    snprintf(b.dram_type, sizeof b.dram_type, "gddr6");
    b.dram_bw_gbs = 2 * a.dram_bw_gbs;
    b.sm_clock_max_mhz = 2 * a.sm_clock_max_mhz;
    b.tdp_w = 500;
    assert_int_equal(wl_core_gpu_transfer(&a, &b, &err), WL_OK);
    assert_close(b.coef.c_tc_w, a.coef.c_tc_w, 1e-9);
    assert_close(b.coef.c_fp_w, a.coef.c_fp_w, 1e-9);
    assert_close(b.coef.c_active_w, a.coef.c_active_w, 1e-9);
    assert_close(b.coef.c_l2_w, a.coef.c_l2_w * 0.5, 1e-9); /* same L2 width */
    /* 8 x 7.5 pJ/B device + (fitted - 8 x 3.9) on-die x 0.5 */
    assert_close(b.coef.e_dram_pj_per_byte, 60.0 + (a.coef.e_dram_pj_per_byte - 31.2) * 0.5, 1e-9);
    assert_close(b.coef.dram_background_w, a.coef.dram_background_w * 2 * 7.5 / 3.9, 1e-9);
    assert_close(b.coef.mem_bytes_per_clk, a.coef.mem_bytes_per_clk, 1e-9); /* 2x bw at 2x clock */
    assert_close(b.coef.mem_path_gbs, 2 * a.coef.mem_path_gbs, 1e-9);
    assert_close(b.coef.thermal_c_per_w, a.coef.thermal_c_per_w * 0.5, 1e-12);
    assert_close(b.coef.leak_w_per_c, a.coef.leak_w_per_c, 1e-12); /* same idle table */
    assert_close(b.coef.tc_eff, a.coef.tc_eff, 0);
    assert_close(b.coef.host_launch_us, a.coef.host_launch_us, 0);
    assert_close(wl_core_dram_pj_per_bit("HBM3e"), 2.6, 0);
    assert_close(wl_core_dram_pj_per_bit("DDR4"), 0, 0);
    /* missing inputs are named */
    b.process_nm = 0;
    assert_int_equal(wl_core_gpu_transfer(&a, &b, &err), WL_EINVAL);
    assert_string_equal(err.field, "process_nm");
    b.process_nm = 5;
    snprintf(b.dram_type, sizeof b.dram_type, "LPDDR5");
    assert_int_equal(wl_core_gpu_transfer(&a, &b, &err), WL_EINVAL);
    assert_string_equal(err.field, "dram_type");
    /* [technology] figures replace the tables: an explicit DRAM energy makes
     * any memory transferable; twice the MAC and register energy, twice c_tc */
    b = a;
    snprintf(b.dram_type, sizeof b.dram_type, "LPDDR5");
    b.tech_dram_pj_per_bit = 3.9;
    b.tech_mac_pj[WL_DT_BF16] = 2.0 * wl_core_gpu_mac_pj(&a, WL_DT_BF16);
    b.tech_reg_pj_per_byte = 2.0 * wl_core_gpu_reg_pj_per_byte(&a);
    b.tech_l2_pj_per_byte = 0.5 * wl_core_gpu_l2_pj_per_byte(&a);
    assert_int_equal(wl_core_gpu_transfer(&a, &b, &err), WL_OK);
    assert_close(b.coef.c_tc_w, 2.0 * a.coef.c_tc_w, 1e-9);
    /* register energy alone: c_tc scales by (mac + 0.875 x 2r) / (mac + 0.875 r),
     * c_fp by (mac32 + 16 x 2r) / (mac32 + 16 r) */
    {
        wl_core_gpu c = a;
        double r = wl_core_gpu_reg_pj_per_byte(&a);
        double m16 = wl_core_gpu_mac_pj(&a, WL_DT_BF16), m32 = wl_core_gpu_mac_pj(&a, WL_DT_FP32);
        c.tech_reg_pj_per_byte = 2.0 * r;
        assert_int_equal(wl_core_gpu_transfer(&a, &c, &err), WL_OK);
        assert_close(c.coef.c_tc_w / a.coef.c_tc_w, (m16 + 1.75 * r) / (m16 + 0.875 * r), 1e-9);
        assert_close(c.coef.c_fp_w / a.coef.c_fp_w, (m32 + 32.0 * r) / (m32 + 16.0 * r), 1e-9);
        assert_close(wl_core_operand_bytes_per_mac(1, WL_DT_INT8), 0.4375, 1e-12);
        assert_close(wl_core_operand_bytes_per_mac(1, WL_DT_TF32), 1.75, 1e-12);
    }
    assert_close(b.coef.c_l2_w, 0.5 * a.coef.c_l2_w, 1e-9);
    assert_close(b.coef.e_dram_pj_per_byte, a.coef.e_dram_pj_per_byte, 1e-9);
    { /* fp32 MACs unchanged, registers doubled */
        double r = wl_core_gpu_reg_pj_per_byte(&a), m32 = wl_core_gpu_mac_pj(&a, WL_DT_FP32);
        assert_close(b.coef.c_fp_w / a.coef.c_fp_w, (m32 + 32.0 * r) / (m32 + 16.0 * r), 1e-9);
    }
    assert_close(wl_core_gpu_mac_pj(&a, WL_DT_BF16), 0.59, 1e-12);
    assert_close(wl_core_gpu_smem_pj_per_byte(&a), 2.5 * pow(7.0 / 45.0, 0.567), 1e-12);
    /* a library preset carries the transferred coefficients */
    assert_int_equal(wl_preset_gpu_load("h200-sxm-141gb", &b, &err), WL_OK);
    assert_string_equal(b.coef_source, "transferred from h100-sxm-80gb");
    /* GH100's effective node from die density: 80B transistors on 814 mm2
     * against GA100's 54.2B on 826 mm2 at 7 nm: 7 sqrt(65.62 / 98.28) = 5.72 */
    assert_close(7.0 * sqrt((54.2 / 826.0) / (80.0 / 814.0)), 5.72, 0.005);
    assert_close(b.process_nm, 5.72, 1e-12);
    /* the same die: the tensor-core capacitance carries over unchanged, the
     * DRAM background scales with the bandwidth (4.8 / 3.35 TB/s) and the
     * HBM3e / HBM3 energy per bit (2.6 / 3.0 pJ) */
    wl_core_gpu h;
    assert_int_equal(wl_preset_gpu_load("h100-sxm-80gb", &h, &err), WL_OK);
    assert_string_equal(h.coef_source, "");
    assert_close(b.coef.c_tc_w, h.coef.c_tc_w, 1e-9);
    assert_close(b.coef.dram_background_w, h.coef.dram_background_w * 4800.0 / 3350.0 * 2.6 / 3.0, 1e-9);
    /* GA100 -> GH100 by the rules: SMs x rate x node energy */
    assert_int_equal(wl_core_gpu_transfer(&a, &h, &err), WL_OK);
    assert_close(h.coef.c_tc_w, a.coef.c_tc_w * (132.0 * 4096) / (108.0 * 2048) * pow(5.72 / 7.0, 0.567), 1e-6);
}

/* energy-check arithmetic against hand-computed values. */
static void test_energy_check(void **state)
{
    (void)state;
    wl_core_gpu g;
    wl_error err;
    wl_core_energy_check e;
    assert_int_equal(wl_preset_gpu_load("a100-sxm-80gb", &g, &err), WL_OK);
    assert_int_equal(wl_core_energy_check_run(&g, WL_DT_BF16, &e, &err), WL_OK);
    /* 108 SMs x 2048 FLOP/clk x 1410 MHz = 311.869 TFLOP/s; 400 W / that */
    assert_close(e.peak_tflops, 311.86944, 1e-3);
    assert_close(e.board_pj_per_flop, 400.0 / 311.86944, 1e-5);
    /* 7 nm: bf16 multiply 0.21 + fp32 add 0.38 per MAC, 2 FLOP per MAC */
    assert_close(e.arith_pj_per_flop, 0.295, 1e-12);
    /* register operands: 0.875 B per tensor MAC x 1.25 pJ/B x (7/45)^0.567, per 2 FLOP */
    double reg7 = 1.25 * pow(7.0 / 45.0, 0.567);
    assert_close(e.reg_pj_per_byte, reg7, 1e-12);
    assert_close(e.operand_pj_per_flop, 0.5 * 0.875 * reg7, 1e-12);
    assert_close(e.residual_pj_per_flop, 400.0 / 311.86944 - 0.295 - 0.5 * 0.875 * reg7, 1e-5);
    /* the model's parts add up, and its throughput is below peak */
    assert_true(e.gemm_mnk == 8192);
    assert_close(e.model_compute_pj + e.model_memory_pj + e.model_static_pj, e.model_pj_per_flop, 1e-9);
    assert_true(e.model_tflops < e.peak_tflops && e.model_tflops > 0.5 * e.peak_tflops);
    assert_close(e.model_power_w, e.model_pj_per_flop * e.model_tflops, 1e-6 * e.model_power_w);
    /* int8 accumulates in int32: 0.07 + 0.03 per MAC */
    assert_int_equal(wl_core_energy_check_run(&g, WL_DT_INT8, &e, &err), WL_OK);
    assert_close(e.arith_pj_per_flop, 0.05, 1e-12);
    /* fp32 on CUDA cores: an FFMA moves 16 B of registers */
    assert_int_equal(wl_core_energy_check_run(&g, WL_DT_FP32, &e, &err), WL_OK);
    assert_false(e.tensor_core);
    assert_close(e.operand_pj_per_flop, 0.5 * 16.0 * reg7, 1e-12);
    /* node scaling: 5 nm = (5/7)^0.567 of 7 nm */
    double m, a;
    assert_int_equal(wl_core_mac_energy_pj(WL_DT_FP32, 5.0, &m, &a), WL_OK);
    assert_close(m, 1.31 * pow(5.0 / 7.0, 0.567), 1e-12);
    assert_close(wl_core_node_energy_scale(45.0, 7.0), pow(7.0 / 45.0, 0.567), 1e-12);
    /* a busy tensor cycle's power against bf16's: fp16 and bf16 alike;
     * fp8 twice the MACs at (0.07 + 0.38 + 0.4375 r) / (0.21 + 0.38 +
     * 0.875 r) the energy each, node-scaled to H100's 5.72 nm (the MAC
     * table at 7 nm, the register file at 45 nm) */
    {
        wl_core_gpu hh;
        assert_int_equal(wl_preset_gpu_load("h100-sxm-80gb", &hh, &err), WL_OK);
        double s7 = pow(hh.process_nm / 7.0, 0.567), r = 1.25 * pow(hh.process_nm / 45.0, 0.567);
        assert_close(wl_core_gpu_tc_power_scale(&hh, WL_DT_FP16), 1.0, 1e-12);
        assert_close(wl_core_gpu_tc_power_scale(&hh, WL_DT_BF16), 1.0, 1e-12);
        assert_close(wl_core_gpu_tc_power_scale(&hh, WL_DT_FP8),
                     2.0 * ((0.07 + 0.38) * s7 + 0.4375 * r) / ((0.21 + 0.38) * s7 + 0.875 * r), 1e-9);
        /* tf32: the 16-bit array at half the rate, a 16-bit cycle's power */
        assert_close(wl_core_gpu_tc_power_scale(&hh, WL_DT_TF32), 1.0, 1e-12);
    }
    /* TMA multicast on Hopper cuts the GEMM's L2 traffic: faster */
    wl_core_gpu h;
    wl_core_energy_check e1, e2;
    assert_int_equal(wl_preset_gpu_load("h100-sxm-80gb", &h, &err), WL_OK);
    assert_int_equal(h.cluster_multicast, 2);
    assert_int_equal(wl_core_energy_check_run(&h, WL_DT_BF16, &e2, &err), WL_OK);
    h.cluster_multicast = 1;
    assert_int_equal(wl_core_energy_check_run(&h, WL_DT_BF16, &e1, &err), WL_OK);
    assert_true(e2.model_tflops > 1.1 * e1.model_tflops);
    /* no FP8 on Ampere; no node -> error */
    assert_int_equal(wl_core_energy_check_run(&g, WL_DT_FP8, &e, &err), WL_EUNSUPPORTED);
    g.process_nm = 0;
    assert_int_equal(wl_core_energy_check_run(&g, WL_DT_BF16, &e, &err), WL_EINVAL);
    assert_string_equal(err.field, "process_nm");
}

/* A half-precision workload retyped to fp32 is what the native builders
 * produce for fp32, launch for launch: casts gone, matmuls on CUDA cores,
 * convolutions on TF32 tensor cores. */
static void test_retype_fp32(void **state)
{
    (void)state;
    static const struct { const char *model; long long b, s; } cases[] = {
        {"gpt2", 2, 128}, {"bert-large", 1, 256}, {"opt-1.3b", 1, 128},
        {"vit-large", 8, 1}, {"resnet-101", 8, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        wl_core_workload *h = build(cases[c].model, cases[c].b, cases[c].s, WL_DT_BF16);
        wl_core_workload *f = build(cases[c].model, cases[c].b, cases[c].s, WL_DT_FP32);
        wl_core_workload *r = NULL;
        wl_error err;
        assert_int_equal(wl_core_workload_retype(h, WL_DT_FP32, &r, &err), WL_OK);
        assert_int_equal(wl_core_workload_count(r), wl_core_workload_count(f));
        for (size_t i = 0; i < wl_core_workload_count(f); i++) {
            const wl_kernel *a = wl_core_workload_kernel(r, i), *b = wl_core_workload_kernel(f, i);
            if (!wl_kernel_equal(a, b))
                fail_msg("%s: launch %zu differs: %s %s vs %s %s", cases[c].model, i,
                         wl_kernel_kind_name(a->kind), wl_dtype_name(a->in_dtype),
                         wl_kernel_kind_name(b->kind), wl_dtype_name(b->in_dtype));
        }
        assert_true(wl_core_workload_count(r) <= wl_core_workload_count(h));
        wl_core_workload_free(h);
        wl_core_workload_free(f);
        wl_core_workload_free(r);
    }
    /* only to fp32 */
    wl_core_workload *h = build("gpt2", 1, 128, WL_DT_BF16), *r = NULL;
    wl_error err;
    assert_int_equal(wl_core_workload_retype(h, WL_DT_BF16, &r, &err), WL_EUNSUPPORTED);
    assert_null(r);
    assert_string_equal(err.field, "dtype");
    wl_core_workload_free(h);
}

/* Precisions by their own names and by framework spellings. */
static void test_dtype_names(void **state)
{
    (void)state;
    static const struct { const char *s; wl_dtype dt; } ok[] = {
        {"bf16", WL_DT_BF16},   {"torch.bfloat16", WL_DT_BF16}, {"BF16", WL_DT_BF16},
        {"float16", WL_DT_FP16}, {"half", WL_DT_FP16},          {"float32", WL_DT_FP32},
        {"float", WL_DT_FP32},   {"tf32", WL_DT_TF32},          {"int8", WL_DT_INT8},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        wl_dtype dt;
        assert_int_equal(wl_dtype_parse(ok[i].s, &dt), WL_OK);
        assert_int_equal(dt, ok[i].dt);
    }
    wl_dtype dt;
    assert_int_equal(wl_dtype_parse("fp64", &dt), WL_EINVAL);
    assert_int_equal(wl_dtype_parse("", &dt), WL_EINVAL);
    assert_int_equal(wl_dtype_parse("bfloat16-and-a-very-long-suffix-beyond", &dt), WL_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vf_interpolation),
        cmocka_unit_test(test_wave_quantization),
        cmocka_unit_test(test_golden_elementwise),
        cmocka_unit_test(test_memory_bound_flat_compute_scales),
        cmocka_unit_test(test_time_nonincreasing),
        cmocka_unit_test(test_launch_bound),
        cmocka_unit_test(test_timeline_matches_simulation),
        cmocka_unit_test(test_power_limit),
        cmocka_unit_test(test_voltage_override),
        cmocka_unit_test(test_builder_matches_every_trace),
        cmocka_unit_test(test_builder_counts),
        cmocka_unit_test(test_trace_errors),
        cmocka_unit_test(test_grammar),
        cmocka_unit_test(test_clock_grid),
        cmocka_unit_test(test_energy_u_shape),
        cmocka_unit_test(test_transfer),
        cmocka_unit_test(test_hopper_rules),
        cmocka_unit_test(test_gemm_wave_traffic),
        cmocka_unit_test(test_conv_traffic),
        cmocka_unit_test(test_energy_check),
        cmocka_unit_test(test_retype_fp32),
        cmocka_unit_test(test_dtype_names),
        cmocka_unit_test(test_memory_footprint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
