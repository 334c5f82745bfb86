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
    if (err.line != line || strcmp(err.field, field) != 0 || !strstr(err.text, what))
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
    expect_gpu_error(buf, 3, "sms", "not a number");
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
    expect_gpu_error(buf, 0, "tc_eff", "(0, 1]");
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
    assert_int_equal(wl_preset_gpu_set(&g, "sms", 132), WL_OK);
    assert_int_equal(g.sms, 132);
    assert_int_equal(wl_preset_gpu_set(&g, "dram_bw_gbs", 3352), WL_OK);
    assert_int_equal(wl_preset_gpu_get(&g, "dram_bw_gbs", &v), WL_OK);
    assert_close(v, 3352, 0);
    assert_int_equal(wl_preset_gpu_set(&g, "c_tc_w", 10), WL_OK);
    assert_close(g.coef.c_tc_w, 10, 0);
    assert_int_equal(wl_preset_gpu_set(&g, "nope", 1), WL_ENOTFOUND);
    assert_int_equal(wl_preset_gpu_set(&g, "sms", 1.5), WL_EINVAL);
}

/* The derived V-f table reproduces the measured one where it is linear. */
static void test_derive_vf(void **state)
{
    (void)state;
    REQUIRE_SHARED(dir);
    char path[2048];
    snprintf(path, sizeof path, "%s/gpu-tables/a100-pcie-40gb-idle.csv", dir);
    char tmpl[] = "/tmp/wattlas-vf-XXXXXX";
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtins_parse), cmocka_unit_test(test_a100_peaks),
        cmocka_unit_test(test_gpu_errors),     cmocka_unit_test(test_model_errors),
        cmocka_unit_test(test_set_get),        cmocka_unit_test(test_derive_vf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
