/* Tests of presets/: built-ins parse, spec-sheet peaks, line-numbered errors. */
#include "test_util.h"
#include "../presets/wattlas_presets.h"

#include <unistd.h>

static void test_builtins_parse(void **state)
{
    (void)state;
    wl_error err;
    assert_true(wl_preset_count(WL_PRESET_GPU) >= 2);
    assert_true(wl_preset_count(WL_PRESET_MODEL) >= 10);
    for (size_t i = 0; i < wl_preset_count(WL_PRESET_GPU); i++) {
        wl_core_gpu g;
        const char *id = wl_preset_id(WL_PRESET_GPU, i);
        if (wl_preset_gpu_load(id, &g, &err) != WL_OK)
            fail_msg("gpu preset %s: %s", id, err.text);
        assert_string_equal(g.id, id);
    }
    for (size_t i = 0; i < wl_preset_count(WL_PRESET_MODEL); i++) {
        wl_core_model m;
        const char *id = wl_preset_id(WL_PRESET_MODEL, i);
        if (wl_preset_model_load(id, &m, &err) != WL_OK)
            fail_msg("model preset %s: %s", id, err.text);
        assert_string_equal(m.id, id);
    }
    const char *need[] = {"gpt2", "bert-large", "opt-1.3b", "qwen2-1.5b", "llama-3-8b",
                          "gpt3-125m", "gpt3-350m", "gpt3-1.3b", "gpt3-13b", "gpt3-175b"};
    for (size_t i = 0; i < sizeof need / sizeof *need; i++)
        assert_non_null(wl_preset_text(WL_PRESET_MODEL, need[i]));
}

/* The Llama 3 presets' parameter counts are the published ones (HF model
 * cards; per layer 2 d^2 + 2 d kv + 3 d ff + 2 d, plus the embedding, the
 * untied head and the final norm), and grouped-query attention's K and V
 * projections are kv_heads x head_dim wide: 1024 for all three. */
static void test_llama3_params(void **state)
{
    (void)state;
    static const struct { const char *id; double params; double kv_proj; } want[] = {
        {"llama-3-8b", 8030261248.0, 4096.0 * 1024},
        {"llama-3-70b", 70553706496.0, 8192.0 * 1024},
        {"llama-3.1-405b", 405853388800.0, 16384.0 * 1024},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        wl_core_model m;
        wl_error err;
        assert_int_equal(wl_preset_model_load(want[i].id, &m, &err), WL_OK);
        wl_core_shape sh = {.batch = 1, .seq = 16, .dtype = WL_DT_BF16, .mode = WL_MODE_TRAIN};
        wl_core_build_info info;
        assert_int_equal(wl_core_build_info_of(&m, &sh, 0, &info, &err), WL_OK);
        assert_close(info.params, want[i].params, 0);
        double hd = (double)m.d_model / (double)m.heads;
        assert_close((double)m.d_model * m.kv_heads * hd, want[i].kv_proj, 0);
    }
    /* BLOOM 176B: the published 176,247,271,424 (HF bigscience/bloom) plus
     * the learned position table that stands for its ALiBi (2048 x 14336),
     * less the LayerNorm after its embedding (weight and bias, 2 x 14336),
     * which the GPT-2 style does not build */
    wl_core_model m;
    wl_error err;
    assert_int_equal(wl_preset_model_load("bloom-176b", &m, &err), WL_OK);
    wl_core_shape sh = {.batch = 1, .seq = 16, .dtype = WL_DT_BF16, .mode = WL_MODE_TRAIN};
    wl_core_build_info info;
    assert_int_equal(wl_core_build_info_of(&m, &sh, 0, &info, &err), WL_OK);
    assert_close(info.params, 176247271424.0 + 2048.0 * 14336 - 2.0 * 14336, 0);
    /* BLOOM 3B likewise: the published 3,002,557,440 */
    assert_int_equal(wl_preset_model_load("bloom-3b", &m, &err), WL_OK);
    assert_int_equal(wl_core_build_info_of(&m, &sh, 0, &info, &err), WL_OK);
    assert_close(info.params, 3002557440.0 + 2048.0 * 2560 - 2.0 * 2560, 0);
}

/* The leaderboard's mixtures of experts. Qwen3-30B-A3B by hand: the
 * untied embedding and head 2 x 151936 x 2048; a layer's attention 2048 x
 * 4096 (32 heads of head_dim 128) + 2 x 2048 x 512 + 4096 x 2048, its two
 * norms, the router 2048 x 128 and 128 experts of 3 x 2048 x 768; the final
 * norm: 30,532,110,336, which is HF's 30,532,122,624 (the checkpoint's
 * safetensors total) less the per-head q_norm and k_norm weights this model
 * leaves out (48 x 2 x 128). Llama 4 Maverick interleaves (moe_every 2): 24
 * dense layers of a 16384-wide MLP and 24 MoE layers of 128 routed and one
 * shared expert of 8192, each layer's attention 5120 x (5120 + 2 x 1024 +
 * 5120) and two norms. */
static void test_moe_params(void **state)
{
    (void)state;
    wl_core_model m;
    wl_error err;
    double p;
    assert_int_equal(wl_preset_model_load("Qwen/Qwen3-30B-A3B-Instruct-2507", &m, &err), WL_OK);
    assert_int_equal(wl_core_model_params(&m, &p), WL_OK);
    assert_close(p, 30532110336.0, 0);
    assert_close(p + 48.0 * 2 * 128, 30532122624.0, 0);
    assert_int_equal(wl_preset_model_load("llama-4-maverick", &m, &err), WL_OK);
    assert_int_equal(wl_core_model_params(&m, &p), WL_OK);
    double d = 5120, attn = d * (5120 + 2 * 1024 + 5120) + 2 * d;
    double dense = attn + 3 * d * 16384, moe = attn + d * 128 + 129 * 3 * d * 8192;
    assert_close(p, 2 * 202048 * d + 24 * dense + 24 * moe + d, 0);
    for (int l = 0; l < m.layers; l++) /* layers 1, 3, ..., 47 */
        assert_int_equal(wl_core_model_layer_moe(&m, l), l % 2 == 1);
}

/* Peaks implied by the per-SM rates match the A100 datasheet. */
static void test_a100_peaks(void **state)
{
    (void)state;
    wl_error err;
    const char *ids[] = {"a100-pcie-40gb", "a100-sxm-80gb"};
    const double bw[] = {1555, 2039}, limit[] = {250, 400};
    for (int i = 0; i < 2; i++) {
        wl_core_gpu g;
        assert_int_equal(wl_preset_gpu_load(ids[i], &g, &err), WL_OK);
        double ghz_sm = g.sms * g.sm_clock_max_mhz * 1e-3;
        assert_close(g.tc_flop_per_clk_sm[WL_DT_BF16] * ghz_sm * 1e-3, 312, 0.5);
        assert_close(g.tc_flop_per_clk_sm[WL_DT_TF32] * ghz_sm * 1e-3, 156, 0.5);
        assert_close(g.tc_flop_per_clk_sm[WL_DT_INT8] * ghz_sm * 1e-3, 624, 1);
        assert_close(g.cuda_flop_per_clk_sm[WL_DT_FP32] * ghz_sm * 1e-3, 19.5, 0.05);
        assert_close(g.tc_flop_per_clk_sm[WL_DT_FP8], 0, 0);
        assert_close(g.dram_bw_gbs, bw[i], 0);
        assert_close(g.power_limit_w, limit[i], 0);
        assert_close(g.l2_size_mb, 40, 0);
        /* V-f: flat below the knee, rising above */
        assert_close(wl_core_gpu_voltage_mv(&g, 510), wl_core_gpu_voltage_mv(&g, 900), 1.0);
        assert_true(wl_core_gpu_voltage_mv(&g, 1410) > wl_core_gpu_voltage_mv(&g, 1100) + 100);
    }
}

static void expect_gpu_error(const char *text, int line, const char *field, const char *what)
{
    wl_core_gpu g;
    wl_error err;
    memset(&err, 0, sizeof err);
    int rc = wl_preset_gpu_parse(text, "bad.ini", &g, &err);
    assert_int_not_equal(rc, WL_OK);
    assert_string_equal(err.source, "bad.ini");
    /* line -1: some line of the file (an error found after reading names
     * the key's line) */
    int line_ok = line < 0 ? err.line > 0 : err.line == line;
    if (!line_ok || strcmp(err.field, field) != 0 || !strstr(err.text, what))
        fail_msg("got %s:%d field '%s': %s; want line %d field '%s' (%s)", err.source, err.line,
                 err.field, err.text, line, field, what);
}

static void test_gpu_errors(void **state)
{
    (void)state;
    const char *base = wl_preset_text(WL_PRESET_GPU, "a100-pcie-40gb");
    assert_non_null(base);
    static char buf[1 << 17];
    /* an unknown key on line 2 */
    snprintf(buf, sizeof buf, "[gpu]\nsmz = 3\n");
    expect_gpu_error(buf, 2, "smz", "unknown key");
    /* not a number, on line 3 */
    snprintf(buf, sizeof buf, "[gpu]\nid = x\nsms = lots\n");
    expect_gpu_error(buf, 3, "sms", "expected a number");
    /* a syntax error */
    snprintf(buf, sizeof buf, "[gpu]\nid = x\nthis line is wrong\n");
    expect_gpu_error(buf, 3, "", "malformed");
    /* missing required key */
    snprintf(buf, sizeof buf, "[gpu]\nid = x\n");
    expect_gpu_error(buf, 0, "sms", "missing");
    /* duplicate key, appended after a complete preset */
    snprintf(buf, sizeof buf, "%s\n[gpu]\nsms = 5\n", base);
    int lines = 1;
    for (const char *p = base; *p; p++)
        lines += *p == '\n';
    expect_gpu_error(buf, lines + 2, "sms", "duplicate");
    /* physically meaningless value */
    const char *q = strstr(base, "tc_eff = ");
    assert_non_null(q);
    const char *eol = strchr(q, '\n');
    snprintf(buf, sizeof buf, "%.*stc_eff = 7%s", (int)(q - base), base, eol);
    expect_gpu_error(buf, -1, "tc_eff", "(0, 1]");
}

/* Absurd numbers, empty list items, over-long lines, a byte-order mark:
 * errors with the file, line and key, or (BOM) accepted. */
static void test_gpu_hostile(void **state)
{
    (void)state;
    const char *base = wl_preset_text(WL_PRESET_GPU, "a100-pcie-40gb");
    char buf[32768];
    static const struct {
        const char *from, *to, *field, *what;
    } cases[] = {
        {"power_limit_w = 250", "power_limit_w = 1e30", "power_limit_w", "(0, 100000]"},
        {"dram_bw_gbs = 1555", "dram_bw_gbs = 1e-300", "dram_bw_gbs", "[1, 10000000]"},
        {"sm_clock_step_mhz = 15", "sm_clock_step_mhz = 0", "sm_clock_step_mhz", "(0, 100000]"},
        {"sms = 108", "sms = nan", "sms", "expected a number"},
        {"sms = 108", "sms = inf", "sms", "expected a number"},
        {"sms = 108", "sms = 0x6c", "sms", "expected a number"}, /* C's hex: not 108 */
        {"sms = 108", "sms = -0X1p3", "sms", "expected a number"},
        {"1350.00, 1410.00\n", "1350.00, 1410.00,\n", "clock_mhz", "empty item"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *at = strstr(base, cases[i].from);
        assert_non_null(at);
        snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - base), base, cases[i].to,
                 at + strlen(cases[i].from));
        expect_gpu_error(buf, -1, cases[i].field, cases[i].what);
    }
    /* a line longer than inih reads is refused, a long comment is not */
    char longv[400];
    memset(longv, '7', sizeof longv - 1);
    longv[sizeof longv - 1] = 0;
    snprintf(buf, sizeof buf, "%s\n[gpu]\nname = %s\n", base, longv);
    expect_gpu_error(buf, -1, "", "longer than");
    snprintf(buf, sizeof buf, "; %s\n%s", longv, base);
    wl_core_gpu g;
    wl_error err;
    assert_int_equal(wl_preset_gpu_parse(buf, "c.ini", &g, &err), WL_OK);
    snprintf(buf, sizeof buf, "\xEF\xBB\xBF%s", base);
    assert_int_equal(wl_preset_gpu_parse(buf, "bom.ini", &g, &err), WL_OK);
    /* a file with a NUL byte: what follows it is not silently ignored (a
     * bad key after it would be), the error names the NUL's line */
    size_t bl = strlen(base);
    int nl = 1;
    for (size_t i = 0; i < bl; i++)
        nl += base[i] == '\n';
    memcpy(buf, base, bl);
    memcpy(buf + bl, "\0\nsms = 0\n", 10);
    const char *path = test_path("nul.ini");
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, bl + 10, f), bl + 10);
    fclose(f);
    assert_int_equal(wl_preset_gpu_load(path, &g, &err), WL_EPARSE);
    assert_non_null(strstr(err.text, "NUL byte"));
    assert_int_equal(err.line, nl);
    /* --set uses the same ranges */
    assert_int_equal(wl_preset_gpu_set(&g, "power_limit_w", 1e30, &err), WL_EINVAL);
    assert_string_equal(err.field, "power_limit_w");
    assert_int_equal(wl_preset_gpu_set(&g, "sm_clock_step_mhz", 0, &err), WL_EINVAL);
}

static void test_model_errors(void **state)
{
    (void)state;
    wl_core_model m;
    wl_error err;
    const char *bad_heads = "[model]\nid = m\nstyle = gpt2\nlayers = 2\nd_model = 100\nheads = 3\nd_ff = 400\n";
    assert_int_not_equal(wl_preset_model_parse(bad_heads, "m.ini", &m, &err), WL_OK);
    assert_string_equal(err.field, "heads");
    const char *bad_act = "[model]\nid = m\nstyle = gpt2\nactivation = swish\n";
    assert_int_not_equal(wl_preset_model_parse(bad_act, "m.ini", &m, &err), WL_OK);
    assert_int_equal(err.line, 4);
    assert_string_equal(err.field, "activation");
    const char *ok = "[model]\nid = m\nstyle = llama\nlayers = 2\nd_model = 128\nheads = 4\n"
                     "kv_heads = 2\nd_ff = 256\nactivation = swiglu\nnorm = rmsnorm\n";
    assert_int_equal(wl_preset_model_parse(ok, "m.ini", &m, &err), WL_OK);
    assert_int_equal(m.kv_heads, 2);
    assert_int_equal(m.final_norm, 1);
    /* a file path is loaded too; a missing one names the file */
    assert_int_equal(wl_preset_model_load("/nonexistent/m.ini", &m, &err), WL_EIO);
    assert_string_equal(err.source, "/nonexistent/m.ini");
    assert_int_equal(wl_preset_gpu_load("no-such-gpu", &(wl_core_gpu){0}, &err), WL_ENOTFOUND);
}

static void test_set_get(void **state)
{
    (void)state;
    wl_core_gpu g;
    wl_error err;
    assert_int_equal(wl_preset_gpu_load("a100-pcie-40gb", &g, &err), WL_OK);
    double v;
    assert_int_equal(wl_preset_gpu_set(&g, "sms", 132, &err), WL_OK);
    assert_int_equal(g.sms, 132);
    assert_int_equal(wl_preset_gpu_set(&g, "dram_bw_gbs", 3352, &err), WL_OK);
    assert_int_equal(wl_preset_gpu_get(&g, "dram_bw_gbs", &v), WL_OK);
    assert_close(v, 3352, 0);
    assert_int_equal(wl_preset_gpu_set(&g, "c_tc_w", 10, &err), WL_OK);
    assert_close(g.coef.c_tc_w, 10, 0);
    assert_int_equal(wl_preset_gpu_set(&g, "nope", 1, &err), WL_ENOTFOUND);
    assert_int_equal(wl_preset_gpu_set(&g, "sms", 1.5, &err), WL_EINVAL);
}

/* A design change through --set rescales the coefficients by the transfer
 * rules; explicit coefficient and V-f settings are kept as given. */
static void test_apply_design_change(void **state)
{
    (void)state;
    wl_core_gpu a, g;
    wl_error err;
    assert_int_equal(wl_preset_gpu_load("a100-sxm-80gb", &a, &err), WL_OK);
    size_t bad = 0;
    g = a;
    const char *k1[] = {"sms"};
    const double v1[] = {216};
    assert_int_equal(wl_preset_gpu_apply(&g, k1, v1, 1, &bad, &err), WL_OK);
    assert_close(g.coef.c_tc_w, 2 * a.coef.c_tc_w, 1e-9);
    assert_close(g.coef.c_active_w, 2 * a.coef.c_active_w, 1e-9);
    assert_close(g.coef.tc_eff, a.coef.tc_eff, 0);
    /* the L2's ports are per SM, as the presets derive them (A100 SXM:
     * 5120 B/clk at 108 SMs): twice the SMs, 10240 B/clk; set too, it
     * stays as set; the held keys stay the preset's */
    assert_close(a.l2_bytes_per_clk, 5120, 1e-9);
    assert_close(g.l2_bytes_per_clk, 10240, 1e-9);
    assert_close(g.l2_size_mb, a.l2_size_mb, 0);
    assert_close(g.dram_bw_gbs, a.dram_bw_gbs, 0);
    {
        wl_core_gpu h = a;
        const char *kl[] = {"sms", "l2_bw_bytes_per_clk"};
        const double vl[] = {216, 7000};
        assert_int_equal(wl_preset_gpu_apply(&h, kl, vl, 2, &bad, &err), WL_OK);
        assert_close(h.l2_bytes_per_clk, 7000, 1e-9);
        assert_string_equal(wl_preset_gpu_derived("sms", 0), "l2_bw_bytes_per_clk");
        assert_null(wl_preset_gpu_derived("sms", 1));
        assert_null(wl_preset_gpu_derived("dram_bw_gbs", 0));
        assert_string_equal(wl_preset_gpu_held("sms", 0), "l2_size_mb");
    }
    /* an explicit coefficient wins, whatever its place in the list */
    g = a;
    const char *k2[] = {"c_tc_w", "sms", "vmax_mv"};
    const double v2[] = {123, 216, 1000};
    assert_int_equal(wl_preset_gpu_apply(&g, k2, v2, 3, &bad, &err), WL_OK);
    assert_close(g.coef.c_tc_w, 123, 0);
    assert_close(g.coef.c_fp_w, 2 * a.coef.c_fp_w, 1e-9);
    assert_close(wl_core_gpu_voltage_mv(&g, g.sm_clock_max_mhz), 1000, 1e-9);
    /* V-f keys alone change no coefficient */
    g = a;
    assert_int_equal(wl_preset_gpu_apply(&g, k2 + 2, v2 + 2, 1, &bad, &err), WL_OK);
    assert_memory_equal(&g.coef, &a.coef, sizeof a.coef);
    const char *k3[] = {"sms", "warp_drive"};
    const double v3[] = {108, 1};
    assert_int_equal(wl_preset_gpu_apply(&g, k3, v3, 2, &bad, &err), WL_ENOTFOUND);
    assert_int_equal(bad, 1);
    assert_string_equal(err.field, "warp_drive");
}

/* The derived V-f table reproduces the measured one where it is linear. */
static void test_derive_vf(void **state)
{
    (void)state;
    REQUIRE_SHARED(dir);
    char path[2048];
    snprintf(path, sizeof path, "%s/gpu-tables/a100-pcie-40gb-idle.csv", dir);
    char tmpl[600];
    snprintf(tmpl, sizeof tmpl, "%s", test_path("vf-XXXXXX"));
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w+");
    wl_error err;
    assert_int_equal(wl_preset_derive_vf(path, 60, f, &err), WL_OK);
    rewind(f);
    char text[8192];
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    unlink(tmpl);
    assert_non_null(strstr(text, "clock_mhz = 210.00"));
    assert_non_null(strstr(text, "693.75"));
    assert_int_equal(wl_preset_derive_vf("/nonexistent.csv", 60, stdout, &err), WL_EIO);
}

/* Every library preset's per-SM rates reproduce its cited datasheet peaks
 * (TFLOPS or TOPS, dense) at the clock the datasheet uses. */
static void test_library_peaks(void **state)
{
    (void)state;
    static const struct {
        const char *id;
        double tc_mhz, bf16, fp16, tf32, fp8, int8; /* tensor peaks at tc_mhz */
        double fp32;                                /* CUDA FP32 at the max clock */
        double bw_gbs, limit_w, tol;                /* tol: relative */
    } spec[] = {
        {"h100-sxm-80gb", 1830, 989.4, 989.4, 494.7, 1978.9, 1978.9, 67.0, 3350, 700, 0.005},
        {"h100-pcie-80gb", 1620, 756.0, 756.0, 378.0, 1513.0, 1513.0, 51.2, 2000, 350, 0.005},
        {"h200-sxm-141gb", 1830, 989.4, 989.4, 494.7, 1978.9, 1978.9, 67.0, 4800, 700, 0.005},
        {"h800-sxm-80gb", 1830, 989.4, 989.4, 494.7, 1978.9, 1978.9, 67.0, 3350, 700, 0.005},
        {"a10-24gb", 1695, 125.0, 125.0, 62.5, 0, 250.0, 31.2, 600, 150, 0.005},
        {"a30-24gb", 1440, 165.0, 165.0, 82.0, 0, 330.0, 10.3, 933, 165, 0.01},
        /* the L40S datasheet's 362 is 1.2% below its own FP8/2 */
        {"l40s-48gb", 2520, 362.05, 362.05, 183.0, 733.0, 733.0, 91.6, 864, 350, 0.015},
        {"v100-sxm2-32gb", 1530, 0, 125.0, 0, 0, 0, 15.7, 900, 300, 0.005},
        {"b200", 1855, 2250, 2250, 1100, 4500, 4500, 75.0, 8000, 1000, 0.025},
        {"l4-24gb", 2040, 121.0, 121.0, 60.0, 242.5, 242.5, 30.3, 300, 72, 0.01},
        {"a40-48gb", 1740, 149.7, 149.7, 74.8, 0, 299.3, 37.4, 696, 300, 0.005},
    };
    for (size_t i = 0; i < sizeof spec / sizeof *spec; i++) {
        wl_core_gpu g;
        wl_error err;
        if (wl_preset_gpu_load(spec[i].id, &g, &err) != WL_OK)
            fail_msg("%s: %s", spec[i].id, err.text);
        double tc = g.sms * spec[i].tc_mhz * 1e-6, mx = g.sms * g.sm_clock_max_mhz * 1e-6;
        const double want[6] = {spec[i].bf16, spec[i].fp16, spec[i].tf32, spec[i].fp8,
                                spec[i].int8, spec[i].fp32};
        const double got[6] = {g.tc_flop_per_clk_sm[WL_DT_BF16] * tc,
                               g.tc_flop_per_clk_sm[WL_DT_FP16] * tc,
                               g.tc_flop_per_clk_sm[WL_DT_TF32] * tc,
                               g.tc_flop_per_clk_sm[WL_DT_FP8] * tc,
                               g.tc_flop_per_clk_sm[WL_DT_INT8] * tc,
                               g.cuda_flop_per_clk_sm[WL_DT_FP32] * mx};
        for (int k = 0; k < 6; k++)
            if (fabs(got[k] - want[k]) > spec[i].tol * want[k] + 1e-9)
                fail_msg("%s peak %d: %.1f, datasheet %.1f", spec[i].id, k, got[k], want[k]);
        assert_close(g.dram_bw_gbs, spec[i].bw_gbs, 0);
        assert_close(g.power_limit_w, spec[i].limit_w, 0);
        /* MFU's denominator is that datasheet peak: the preset's
         * datasheet_clock_mhz, or its top clock where the datasheet uses it */
        double ds = wl_core_gpu_datasheet_peak_flops(&g, spec[i].bf16 > 0 ? WL_DT_BF16 : WL_DT_FP16);
        double want_ds = spec[i].bf16 > 0 ? spec[i].bf16 : spec[i].fp16;
        if (fabs(ds * 1e-12 - want_ds) > spec[i].tol * want_ds + 1e-9)
            fail_msg("%s datasheet peak %.1f TFLOPS, datasheet %.1f", spec[i].id, ds * 1e-12,
                     want_ds);
        /* every curve is flat at the bottom and rises to the top */
        double lo = g.sm_clock_min_mhz, hi = g.sm_clock_max_mhz;
        assert_true(wl_core_gpu_voltage_mv(&g, hi) > wl_core_gpu_voltage_mv(&g, lo) + 100);
        assert_true(wl_core_gpu_idle_w(&g, hi) > wl_core_gpu_idle_w(&g, lo));
    }
}

/* The documented rule, checked at hand-computed points. */
static void test_vf_rule(void **state)
{
    (void)state;
    static char buf[1 << 17];
    const char *base = wl_preset_text(WL_PRESET_GPU, "a10-24gb");
    assert_non_null(base);
    wl_core_gpu g;
    wl_error err;
    assert_int_equal(wl_preset_gpu_parse(base, "a10.ini", &g, &err), WL_OK);
    assert_int_equal(g.vf_rule, WL_VF_RULE_VOLTAGE | WL_VF_RULE_IDLE);
    /* floor 720 to the 1275 MHz knee, then linear to 907 at 1695:
     * V(1485) = 720 + 187 * 210/420 = 813.5 */
    assert_close(wl_core_gpu_voltage_mv(&g, 300), 720, 1e-9);
    assert_close(wl_core_gpu_voltage_mv(&g, 1275), 720, 1e-9);
    assert_close(wl_core_gpu_voltage_mv(&g, 1695), 907, 1e-9);
    assert_close(wl_core_gpu_voltage_mv(&g, 1485), 813.5, 0.5); /* 15-MHz knot grid */
    /* idle: 35.1 (1 + 0.12 (f - 210)/1695) below the knee;
     * at 1695: 52.6 by construction */
    assert_close(wl_core_gpu_idle_w(&g, 210), 35.1, 1e-9);
    assert_close(wl_core_gpu_idle_w(&g, 1695), 52.6, 1e-9);
    assert_close(wl_core_gpu_idle_w(&g, 1050), 35.1 * (1 + 0.12 * 840.0 / 1695.0), 0.05);
    /* voltage as a design parameter: the nominal curve is feasible at every
     * knot; lowering the floor to 600 mV makes clocks above
     * f_max(600) = 1695 g(600) / g(907 - 50) infeasible, with the
     * alpha-power law g(V) = (V - 350)^1.3 / V */
    for (int i = 0; i < g.vf.n; i++)
        assert_true(wl_core_gpu_feasible(&g, g.vf.clock_mhz[i], g.vf.voltage_mv[i]));
    double fmax600 = 1695.0 * (pow(250.0, 1.3) / 600.0) / (pow(507.0, 1.3) / 857.0);
    assert_int_equal(wl_preset_gpu_set(&g, "vmin_mv", 600, &err), WL_OK);
    assert_close(wl_core_gpu_fmax_mhz(&g, 600), fmax600, 1e-6);
    assert_close(fmax600, 966.0, 2.0);
    assert_true(wl_core_gpu_feasible(&g, 900, wl_core_gpu_voltage_mv(&g, 900)));
    assert_false(wl_core_gpu_feasible(&g, 1000, wl_core_gpu_voltage_mv(&g, 1000)));
    /* a rule key taking over a measured column: knee and floor come from the
     * A100 table, the new vmax replaces its top */
    assert_int_equal(wl_preset_gpu_load("a100-pcie-40gb", &g, &err), WL_OK);
    assert_int_equal(g.vf_rule, 0);
    double idle_1200 = wl_core_gpu_idle_w(&g, 1200);
    assert_int_equal(wl_preset_gpu_set(&g, "vmax_mv", 1000, &err), WL_OK);
    assert_close(wl_core_gpu_voltage_mv(&g, 1410), 1000, 1e-9);
    assert_close(wl_core_gpu_voltage_mv(&g, 600), 693.75, 1e-9);
    assert_close(g.vf_knee_mhz, 990, 1e-9);
    assert_close(wl_core_gpu_idle_w(&g, 1200), idle_1200, 1e-9); /* idle stays measured */
    assert_int_equal(wl_preset_gpu_set(&g, "vf_knee_mhz", 5000, &err), WL_EINVAL);
    /* rule errors name the field */
    const char *q = strstr(base, "vf_knee_mhz = ");
    assert_non_null(q);
    snprintf(buf, sizeof buf, "%.*s%s", (int)(q - base), base, strchr(q, '\n') + 1);
    expect_gpu_error(buf, 0, "vf_knee_mhz", "needs vmin_mv, vmax_mv and vf_knee_mhz");
    snprintf(buf, sizeof buf, "%s\n[vf]\nvoltage_mv = 700, 800\n", base);
    expect_gpu_error(buf, -1, "voltage_mv", "keep one");
    q = strstr(base, "vmin_mv = ");
    snprintf(buf, sizeof buf, "%.*svmin_mv = 950%s", (int)(q - base), base, strchr(q, '\n'));
    expect_gpu_error(buf, -1, "vmin_mv", "vmin_mv <= vmax_mv");
    /* transfer_from: an unknown source, and fitted values beside it */
    q = strstr(base, "transfer_from = ");
    assert_non_null(q);
    snprintf(buf, sizeof buf, "%.*stransfer_from = no-such-gpu%s", (int)(q - base), base, strchr(q, '\n'));
    expect_gpu_error(buf, -1, "transfer_from", "cannot load 'no-such-gpu'");
    snprintf(buf, sizeof buf, "%s\ntc_eff = 0.5\n", base);
    expect_gpu_error(buf, -1, "transfer_from", "keep one");
    snprintf(buf, sizeof buf, "%.*stransfer_from = a10-24gb%s", (int)(q - base), base, strchr(q, '\n'));
    expect_gpu_error(buf, -1, "transfer_from", "cannot transfer from itself");
}

/* derive-vf drops a transient row and leaves the voltage column out when the
 * table has none. */
static void test_derive_vf_outlier(void **state)
{
    (void)state;
    char tmpl[600];
    snprintf(tmpl, sizeof tmpl, "%s", test_path("idle-XXXXXX"));
    int fd = mkstemp(tmpl);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fprintf(f, "sm_clock_mhz,voltage_mv,idle_power_w\n");
    for (int mhz = 300; mhz <= 900; mhz += 15)
        fprintf(f, "%d,,%g\n", mhz, mhz == 345 ? 117.0 : 70.0 + 0.01 * mhz);
    fclose(f);
    char out[8192];
    FILE *o = fmemopen(out, sizeof out, "w");
    wl_error err;
    assert_int_equal(wl_preset_derive_vf(tmpl, 60, o, &err), WL_OK);
    fclose(o);
    unlink(tmpl);
    assert_non_null(strstr(out, "dropped outlier row 345 MHz"));
    assert_null(strstr(out, "voltage_mv ="));
    assert_non_null(strstr(out, "idle_power_w = 73.00, 73.60")); /* 70 + 0.01 f, exact */
}

/* A sparse table, as the harness's quick run measures (four clocks 240-480
 * MHz apart, idle power rising 60 W above the knee): no row is a
 * transient, and knots with no row in their window lie on the straight line
 * between the rows either side: at 1050 MHz, between (810, 80) and
 * (1290, 92): 80 + 12 x 240/480 = 86; at 1710, between (1290, 92) and
 * (1980, 140): 92 + 48 x 420/690 = 121.22. */
static void test_derive_vf_sparse(void **state)
{
    (void)state;
    const char *path = test_path("sparse-idle.csv");
    test_write_file(path, "sm_clock_mhz,voltage_mv,idle_power_w\n"
                          "690,,78\n810,,80\n1290,,92\n1980,,140\n");
    char out[8192];
    FILE *o = fmemopen(out, sizeof out, "w");
    wl_error err;
    assert_int_equal(wl_preset_derive_vf(path, 60, o, &err), WL_OK);
    fclose(o);
    assert_null(strstr(out, "dropped"));
    assert_null(strstr(out, "nan"));
    assert_non_null(strstr(out, "1980.00\n")); /* the top clock is kept */
    wl_core_gpu g;
    assert_int_equal(wl_preset_gpu_load("h200-sxm-141gb", &g, &err), WL_OK);
    assert_int_equal(wl_preset_gpu_idle_table(&g, path, &err), WL_OK);
    assert_close(wl_core_gpu_idle_w(&g, 1050), 86.0, 1e-6);
    assert_close(wl_core_gpu_idle_w(&g, 1710), 92.0 + 48.0 * 420.0 / 690.0, 1e-6);
    assert_close(wl_core_gpu_idle_w(&g, 1980), 140.0, 1e-6);
}

/* GPU names as tools print them resolve to presets; every alias of every
 * preset resolves to that preset and to no other. */
static void test_gpu_aliases(void **state)
{
    (void)state;
    static const char *const names[][2] = {
        {"NVIDIA A10", "a10-24gb"},
        {"H100-SXM5-80GB", "h100-sxm-80gb"},
        {"NVIDIA  H100 80GB HBM3", "h100-sxm-80gb"},
        {"NVIDIA A100-PCIE-40GB", "a100-pcie-40gb"},
        {"NVIDIA A100-SXM4-80GB", "a100-sxm-80gb"},
        {"nvidia_l40s", "l40s-48gb"},
        {"h100-sxm-80gb", "h100-sxm-80gb"},
    };
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const char *id = wl_preset_gpu_resolve(names[i][0]);
        assert_non_null(id);
        assert_string_equal(id, names[i][1]);
    }
    assert_null(wl_preset_gpu_resolve("a100"));  /* ambiguous: no alias */
    assert_null(wl_preset_gpu_resolve("h100"));
    assert_null(wl_preset_gpu_resolve(""));
    wl_core_gpu g;
    wl_error err;
    assert_int_equal(wl_preset_gpu_load("NVIDIA A10", &g, &err), WL_OK);
    assert_string_equal(g.id, "a10-24gb");
    /* models: hub ids by their name part */
    static const char *const models[][2] = {
        {"google/vit-large-patch16-224", "vit-large"},
        {"facebook/opt-1.3b", "opt-1.3b"},
        {"bert-large-uncased", "bert-large"},
        {"microsoft/resnet-101", "resnet-101"},
        {"Qwen/Qwen2-1.5B", "qwen2-1.5b"},
        {"meta-llama/Meta-Llama-3-8B", "llama-3-8b"},
        /* aliases on the list's indented continuation lines (the
         * leaderboard's ids: only a list's first line was read) */
        {"meta-llama/Llama-3.1-8B-Instruct", "llama-3-8b"},
        {"meta-llama/Llama-3.3-70B-Instruct", "llama-3-70b"},
        {"meta-llama/Llama-3.1-405B-Instruct", "llama-3.1-405b"},
        {"Qwen/Qwen3-14B", "qwen3-14b"},
    };
    for (size_t i = 0; i < sizeof models / sizeof *models; i++) {
        const char *id = wl_preset_model_resolve(models[i][0]);
        assert_non_null(id);
        assert_string_equal(id, models[i][1]);
        wl_core_model m;
        assert_int_equal(wl_preset_model_load(models[i][0], &m, &err), WL_OK);
        assert_string_equal(m.id, models[i][1]);
    }
    assert_int_equal(wl_preset_model_load("nosuch/model", &(wl_core_model){0}, &err), WL_ENOTFOUND);
    assert_non_null(strstr(err.text, "neither a file nor a model preset"));
    for (int kind = 0; kind < 2; kind++) {
        for (size_t p = 0; p < wl_preset_count((wl_preset_kind)kind); p++) {
            const char *id = wl_preset_id((wl_preset_kind)kind, p);
            const char *text = wl_preset_text((wl_preset_kind)kind, id);
            const char *a = strstr(text, "\naliases = ");
            if (!a)
                continue;
            a += strlen("\naliases = ");
            char list[512];
            size_t len = strcspn(a, ";\n");
            snprintf(list, sizeof list, "%.*s", (int)len, a);
            for (char *tok = strtok(list, ", "); tok; tok = strtok(NULL, ", ")) {
                const char *got = kind == WL_PRESET_GPU ? wl_preset_gpu_resolve(tok)
                                                        : wl_preset_model_resolve(tok);
                if (!got || strcmp(got, id) != 0)
                    fail_msg("alias '%s' of %s resolves to %s", tok, id, got ? got : "nothing");
            }
        }
    }
}

/* A measured idle table replaces a rule-based idle curve: idle power
 * follows the table (linear, so the smoothing is exact), the rule's
 * voltage stays when the table has none, and leakage scales with idle. */
/* Host presets: every built-in parses; a GPU preset's host class sets the
 * issue cost and nothing else; a file may not name a host and state its own
 * cost; --set of the cost makes it the GPU's own. */
/* Replaces the first line starting with key (up to its end) by repl. */
static char *replace_line(const char *text, const char *key, const char *repl)
{
    const char *p = strstr(text, key);
    assert_non_null(p);
    const char *e = strchr(p, '\n');
    assert_non_null(e);
    return wl_core_strprintf("%.*s%s%s", (int)(p - text), text, repl, e);
}

/* A calibrated preset copied and edited (more SMs, faster DRAM, a higher
 * limit) gets its coefficients through the transfer rules from the spec it
 * was calibrated on, exactly as --set with the same changes, and says so;
 * one with no [calibration] says it runs on the defaults. */
static void test_edited_preset(void **state)
{
    (void)state;
    wl_error err = {0};
    wl_core_gpu orig, ed, set;
    assert_int_equal(wl_preset_gpu_load("a100-sxm-80gb", &orig, &err), WL_OK);
    char *spec = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&spec, &len);
    assert_non_null(m);
    fputs(wl_preset_text(WL_PRESET_GPU, "a100-sxm-80gb"), m);
    wl_preset_write_calibrated_spec(m, &orig);
    fclose(m);
    /* unedited: the same GPU */
    assert_int_equal(wl_preset_gpu_parse(spec, "copy.ini", &ed, &err), WL_OK);
    assert_string_equal(ed.coef_source, "");
    assert_memory_equal(&ed.coef, &orig.coef, sizeof orig.coef);
    /* sms with what derives from it re-derived as --set derives it (the
     * L2's ports per SM: 5120 x 132 / 108), the file stating it */
    char *t0 = replace_line(spec, "sms = 108 ", "sms = 132");
    char *t1 = replace_line(t0, "l2_bw_bytes_per_clk = 5120 ",
                            "l2_bw_bytes_per_clk = 6257.7777777777778");
    char *t2 = replace_line(t1, "dram_bw_gbs = 2039 ", "dram_bw_gbs = 3000");
    char *t3 = replace_line(t2, "power_limit_w = 400 ", "power_limit_w = 500");
    assert_int_equal(wl_preset_gpu_parse(t3, "edited.ini", &ed, &err), WL_OK);
    set = orig;
    const char *keys[3] = {"sms", "dram_bw_gbs", "power_limit_w"};
    const double vals[3] = {132, 3000, 500};
    assert_int_equal(wl_preset_gpu_apply(&set, keys, vals, 3, NULL, &err), WL_OK);
    assert_memory_equal(&ed.coef, &set.coef, sizeof set.coef);
    assert_true(ed.coef.c_active_w != orig.coef.c_active_w); /* 132/108 the capacitance */
    assert_non_null(strstr(ed.coef_source, "sms 108 -> 132"));
    assert_non_null(strstr(ed.coef_source, "dram_bw_gbs 2039 -> 3000"));
    /* no [calibration]: the defaults, said */
    char *nocal = wl_core_strprintf("%.*s", (int)(strstr(spec, "[calibration]") - spec), spec);
    assert_int_equal(wl_preset_gpu_parse(nocal, "nocal.ini", &ed, &err), WL_OK);
    assert_non_null(strstr(ed.coef_source, "physical defaults"));
    /* a key that is not a spec key, or the section with transfer_from */
    char *bad = wl_core_strprintf("%s\n[calibrated_spec]\nc_tc_w = 3\n", nocal);
    assert_int_equal(wl_preset_gpu_parse(bad, "bad.ini", &ed, &err), WL_EPARSE);
    assert_string_equal(err.field, "c_tc_w");
    assert_true(err.line > 0);
    char *bad2 = wl_core_strprintf("%s\n[calibration]\ntransfer_from = a100-pcie-40gb\n"
                                   "[calibrated_spec]\nsms = 100\n", nocal);
    assert_int_equal(wl_preset_gpu_parse(bad2, "bad2.ini", &ed, &err), WL_EPARSE);
    assert_string_equal(err.field, "calibrated_spec");
    free(bad2);
    free(bad);
    free(nocal);
    free(t0);
    free(t1);
    free(t2);
    free(t3);
    free(spec);
}

static void test_hosts(void **state)
{
    (void)state;
    wl_error err;
    assert_true(wl_preset_count(WL_PRESET_HOST) >= 2);
    for (size_t i = 0; i < wl_preset_count(WL_PRESET_HOST); i++) {
        wl_core_host h;
        assert_int_equal(wl_preset_host_load(wl_preset_id(WL_PRESET_HOST, i), &h, &err), WL_OK);
        assert_true(h.launch_us > 0 && h.name[0]);
    }
    wl_core_host calib, server;
    assert_int_equal(wl_preset_host_load("a100-calib-host", &calib, &err), WL_OK);
    assert_int_equal(wl_preset_host_load("hgx-h100", &server, &err), WL_OK); /* an alias */
    assert_string_equal(server.id, "server-2023");
    /* measured: a bare op in a loop issues faster than a kernel of a model */
    assert_true(server.op_launch_us > 0 && server.op_launch_us < server.launch_us);
    assert_close(calib.op_launch_us, 0, 0); /* not measured: as launch_us */
    wl_core_gpu a100, h100, a10;
    assert_int_equal(wl_preset_gpu_load("a100-pcie-40gb", &a100, &err), WL_OK);
    assert_int_equal(wl_preset_gpu_load("h100-sxm-80gb", &h100, &err), WL_OK);
    assert_int_equal(wl_preset_gpu_load("a10-24gb", &a10, &err), WL_OK);
    assert_string_equal(a100.host_id, "a100-calib-host");
    assert_string_equal(h100.host_id, "server-2023");
    assert_close(a100.coef.host_launch_us, calib.launch_us, 0);
    assert_close(h100.coef.host_launch_us, server.launch_us, 0);
    assert_close(h100.coef.host_op_launch_us, server.op_launch_us, 0);
    /* measured: a training step's kernel costs the class more than a
     * forward's (the hosts' geometric mean); unmeasured, it is the forward's */
    assert_close(h100.coef.host_train_launch_us, server.train_launch_us, 0);
    assert_true(server.train_launch_us > server.launch_us);
    assert_close(calib.train_launch_us, 0, 0);
    assert_close(a10.coef.host_launch_us, calib.launch_us, 0);
    /* set_host changes the issue cost only */
    wl_core_gpu b = a100;
    wl_core_gpu_set_host(&b, &server);
    assert_close(b.coef.host_launch_us, server.launch_us, 0);
    b.coef.host_launch_us = a100.coef.host_launch_us;
    b.coef.host_op_launch_us = a100.coef.host_op_launch_us;
    b.coef.host_train_launch_us = a100.coef.host_train_launch_us;
    b.coef.host_decode_launch_us = a100.coef.host_decode_launch_us;
    memcpy(b.host_id, a100.host_id, sizeof b.host_id);
    assert_memory_equal(&b, &a100, sizeof b);
    assert_int_equal(wl_preset_gpu_set(&b, "host_launch_us", 20, &err), WL_OK);
    assert_string_equal(b.host_id, "");

    static const char *const bad[][2] = {
        {"[host]\nid = x\n", "launch_us"},
        {"[host]\nlaunch_us = 5\n", "id"},
        {"[host]\nid = x\nlaunch_us = 0\n", "launch_us"},
        {"[host]\nid = x\nlaunch_us = nan\n", "launch_us"},
        {"[host]\nid = x\nlaunch_us = 5\nlaunch_us = 6\n", "launch_us"},
        {"[host]\nid = x\nlaunch_us = 5\nspeed = 6\n", "speed"},
        {"[cpu]\nid = x\n", "id"},
        {"[host]\nid = x\nlaunch_us = 5\nop_launch_us = -1\n", "op_launch_us"},
        {"[host]\nid = x\nlaunch_us = 5\nop_launch_us = inf\n", "op_launch_us"},
        {"[host]\nid = x\nlaunch_us = 5\nop_launch_us_stderr = 1e9\n", "op_launch_us_stderr"},
        {"[host]\nid = x\nlaunch_us = 5\nserve_step_us = 2e5\n", "serve_step_us"},
        {"[host]\nid = x\nlaunch_us = 5\nserve_seq_us = -3\n", "serve_seq_us"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        wl_core_host h;
        if (wl_preset_host_parse(bad[0 + i][0], "h.ini", &h, &err) == WL_OK)
            fail_msg("host text %zu accepted", i);
        assert_string_equal(err.field, bad[i][1]);
        assert_string_equal(err.source, "h.ini");
        if (i >= 7) /* a bad optional cost is named on its line */
            assert_int_equal(err.line, 4);
    }
    /* every cost round-trips through the writer */
    wl_core_host w = {.id = "rt", .name = "round trip", .launch_us = 21.5, .launch_us_stderr = 1.5,
                      .op_launch_us = 9.25, .op_launch_us_stderr = 0.5, .serve_step_us = 480,
                      .serve_seq_us = 7.5}, back;
    char *text = NULL;
    size_t tl = 0;
    FILE *mf = open_memstream(&text, &tl);
    assert_non_null(mf);
    wl_preset_write_host(mf, &w);
    fclose(mf);
    assert_int_equal(wl_preset_host_parse(text, "rt.ini", &back, &err), WL_OK);
    free(text);
    assert_memory_equal(&w, &back, sizeof w);
    /* a GPU file naming a host and stating its own issue cost */
    const char *t = wl_preset_text(WL_PRESET_GPU, "a100-pcie-40gb");
    const char *cal = strstr(t, "[calibration]\n");
    assert_non_null(cal);
    char *both = wl_core_strprintf("%.*s[calibration]\nhost_launch_us = 9.5\n%s", (int)(cal - t), t,
                                   cal + 14);
    assert_non_null(both);
    wl_core_gpu g;
    assert_int_not_equal(wl_preset_gpu_parse(both, "both.ini", &g, &err), WL_OK);
    assert_string_equal(err.field, "host");
    assert_true(err.line > 0);
    /* without the host line the file's own cost holds */
    char *h = strstr(both, "\nhost = ");
    assert_non_null(h);
    h[1] = ';';
    assert_int_equal(wl_preset_gpu_parse(both, "own.ini", &g, &err), WL_OK);
    assert_close(g.coef.host_launch_us, 9.5, 0);
    assert_string_equal(g.host_id, "");
    free(both);
}

static void test_idle_table(void **state)
{
    (void)state;
    const char *p = test_path("idle.csv");
    char buf[16384];
    size_t n = (size_t)snprintf(buf, sizeof buf, "sm_clock_mhz,voltage_mv,idle_power_w\n");
    for (int f = 210; f <= 1695; f += 15)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%d,,%.3f\n", f, 20.0 + 0.01 * f);
    test_write_file(p, buf);
    wl_core_gpu before, g;
    wl_error err;
    assert_int_equal(wl_preset_gpu_load("a10-24gb", &before, &err), WL_OK);
    assert_true(before.vf_rule & WL_VF_RULE_IDLE);
    g = before;
    assert_int_equal(wl_preset_gpu_idle_table(&g, p, &err), WL_OK);
    assert_close(wl_core_gpu_idle_w(&g, 900), 29.0, 1e-6);
    assert_close(wl_core_gpu_idle_w(&g, 1695), 36.95, 1e-6);
    assert_false(g.vf_rule & WL_VF_RULE_IDLE);
    assert_true(g.vf_rule & WL_VF_RULE_VOLTAGE);
    for (double f = 300; f <= 1695; f += 100)
        assert_close(wl_core_gpu_voltage_mv(&g, f), wl_core_gpu_voltage_mv(&before, f), 0.01);
    double ratio = wl_core_gpu_idle_w(&g, g.sm_clock_min_mhz) /
                   wl_core_gpu_idle_w(&before, before.sm_clock_min_mhz);
    assert_close(g.coef.leak_w_per_c / before.coef.leak_w_per_c, ratio, 1e-9);
    assert_close(g.coef.c_tc_w, before.coef.c_tc_w, 1e-12);
    /* with voltages, the table's voltages are used */
    n = (size_t)snprintf(buf, sizeof buf, "sm_clock_mhz,voltage_mv,idle_power_w\n");
    for (int f = 210; f <= 1695; f += 15)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%d,%.3f,30\n", f, 650.0 + 0.1 * f);
    test_write_file(p, buf);
    g = before;
    assert_int_equal(wl_preset_gpu_idle_table(&g, p, &err), WL_OK);
    assert_close(wl_core_gpu_voltage_mv(&g, 1000), 750.0, 1e-6);
    assert_int_equal(g.vf_rule, 0u);
    /* errors name the file, the line and the field, and leave the GPU alone */
    test_write_file(p, "sm_clock_mhz,voltage_mv,idle_power_w\n210,700,40\n225,700,forty\n240,700,40\n");
    g = before;
    assert_int_equal(wl_preset_gpu_idle_table(&g, p, &err), WL_EPARSE);
    assert_int_equal(err.line, 3);
    assert_string_equal(err.field, "idle_power_w");
    assert_memory_equal(&g, &before, sizeof g);
    unlink(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtins_parse), cmocka_unit_test(test_llama3_params), cmocka_unit_test(test_moe_params), cmocka_unit_test(test_a100_peaks),
        cmocka_unit_test(test_gpu_errors),     cmocka_unit_test(test_model_errors),
        cmocka_unit_test(test_gpu_hostile),
        cmocka_unit_test(test_set_get),        cmocka_unit_test(test_derive_vf),
        cmocka_unit_test(test_library_peaks),  cmocka_unit_test(test_vf_rule),
        cmocka_unit_test(test_derive_vf_outlier),
        cmocka_unit_test(test_derive_vf_sparse),
        cmocka_unit_test(test_apply_design_change),
        cmocka_unit_test(test_gpu_aliases),
        cmocka_unit_test(test_idle_table),
        cmocka_unit_test(test_hosts),
        cmocka_unit_test(test_edited_preset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
