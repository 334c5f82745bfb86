/* The rough edges a new user met (issue 63): each test fails before its
 * fix. The binary runs in the test's own directory (test_cli.h). */
#include "test_cli.h"

/* A number written with a unit: the error names the unit it found, the
 * unit the option or key takes and the number to write. */
static void test_units_in_numbers(void **state)
{
    (void)state;
    assert_int_equal(run("predict --model gpt2 --clock 1.4GHz"), 2);
    assert_non_null(strstr(err_buf, "'1.4GHz' carries the unit GHz; --clock takes plain MHz: "
                                    "write 1400"));
    /* inside a range, and in any case */
    assert_int_equal(run("sweep --model gpt2 --clock 1000:1.41ghz:100"), 2);
    assert_non_null(strstr(err_buf, "--clock takes plain MHz: write 1410"));
    /* a --set key's unit is its name's */
    assert_int_equal(run("sweep --model gpt2 --set power_limit_w=0.3kW"), 2);
    assert_non_null(strstr(err_buf, "power_limit_w takes plain W: write 300"));
    assert_int_equal(run("predict --model gpt2 --voltage-offset-mv 0.05V"), 2);
    assert_non_null(strstr(err_buf, "--voltage-offset-mv takes plain mV: write 50"));
    /* a unit of another kind, and a unit where a count is asked */
    assert_int_equal(run("predict --model gpt2 --clock 300W"), 2);
    assert_non_null(strstr(err_buf, "--clock takes a plain number in MHz"));
    assert_int_equal(run("sweep --model gpt2 --batch 8GB"), 2);
    assert_non_null(strstr(err_buf, "carries the unit GB; numbers here take none"));
    /* text that is no number with a unit gets no hint */
    assert_int_equal(run("sweep --model gpt2 --batch eight"), 2);
    assert_null(strstr(err_buf, "carries"));
    /* a preset's key */
    assert_int_equal(run("presets show a100-pcie-40gb"), 0);
    char *ini = strdup(out_buf), *at = strstr(ini, "\npower_limit_w = 250");
    assert_non_null(at);
    memcpy(at + strlen("\npower_limit_w = 250"), "W", 1); /* "250W", over a space */
    test_write_file("unit.ini", ini);
    free(ini);
    assert_int_equal(run("predict --gpu unit.ini --model gpt2"), 1);
    assert_non_null(strstr(err_buf, "unit.ini:"));
    assert_non_null(strstr(err_buf, "power_limit_w takes plain W: write 250"));
}

/* A misspelt option or figure kind gets its nearest names, as commands,
 * presets and --set keys do. */
static void test_did_you_mean(void **state)
{
    (void)state;
    assert_int_equal(run("predict --modle gpt2"), 2);
    assert_non_null(strstr(err_buf, "unknown option '--modle'; did you mean --model, --mode?"));
    assert_int_equal(run("sweep --modle=gpt2"), 2);
    assert_non_null(strstr(err_buf, "did you mean --model, --mode?"));
    assert_int_equal(run("cluster --nodess 2"), 2);
    assert_non_null(strstr(err_buf, "did you mean --nodes?"));
    /* nothing near: no guess */
    assert_int_equal(run("predict --zzzzzzzz 1"), 2);
    assert_null(strstr(err_buf, "did you mean"));
    assert_int_equal(run("plot paretto t.csv -o f.png"), 2);
    assert_non_null(strstr(err_buf, "unknown kind 'paretto'; did you mean pareto?"));
    assert_int_equal(run("plot heat t.csv -o f.png"), 2);
    assert_non_null(strstr(err_buf, "did you mean heatmap?"));
}

/* A figure format plot cannot write is a usage error, found before any
 * work, that lists the formats. */
static void test_plot_format(void **state)
{
    (void)state;
    assert_int_equal(run("sweep --model gpt2 --clock 900,1200 --quiet -o t.csv"), 0);
    assert_int_equal(run("plot energy-freq t.csv -o f.jpg"), 2);
    assert_non_null(strstr(err_buf, "-o: cannot write a figure as '.jpg'"));
    assert_non_null(strstr(err_buf, ".png, .pdf and .svg"));
    assert_int_equal(access("f.jpg", F_OK), -1);
    assert_int_equal(run("plot energy-freq t.csv -o f"), 2);
    assert_int_equal(run("plot energy-freq t.csv -o f.svg"), 0);
}

/* validate scores with the preset's coefficients by default (a fraction
 * of a second); the leave-one-model-out refits, seconds to minutes, are
 * --lomo, which the summary suggests. */
static void test_validate_plain_default(void **state)
{
    (void)state;
    char buf[1024];
    snprintf(buf, sizeof buf, "%s%s", MEAS_HEADER,
             "a100-pcie-40gb,gpt2,8,512,bf16,prefill,eager,960,960,20.2544,3.33507,164.66,67.2\n");
    test_write_file("meas.csv", buf);
    assert_int_equal(run("validate meas.csv"), 0);
    assert_null(strstr(err_buf, "leave-one-model-out"));
    assert_non_null(strstr(err_buf, "held-out error: add --lomo"));
    assert_int_equal(run("validate meas.csv --lomo"), 0);
    assert_non_null(strstr(err_buf, "leave-one-model-out (refit without the model"));
    assert_null(strstr(err_buf, "add --lomo"));
    /* --no-lomo, the default now, is still taken */
    assert_int_equal(run("validate meas.csv --no-lomo --lomo --no-lomo"), 0);
    assert_null(strstr(err_buf, "leave-one-model-out"));
}

/* A cluster layout that cannot hold its stage is an error (exit 1) that
 * names the memory and the way out, with no row; --stages still shows
 * where the memory goes. Memory messages give GiB beside GB. */
static void test_cluster_layout_must_fit(void **state)
{
    (void)state;
    assert_int_equal(run("cluster --model gpt3-175b --nodes 128 -o c.csv"), 1);
    assert_non_null(strstr(err_buf, "gpt3-175b as tp 1, pp 1, dp 1024, ZeRO off, recompute none "
                                    "needs 3419.9 GB a GPU; a100-sxm-80gb has 85.9 GB (80.0 GiB)"));
    assert_non_null(strstr(err_buf, "'wattlas cluster search'"));
    assert_int_equal(access("c.csv", F_OK), -1);
    /* the same with a power limit, a plan or the frontier */
    assert_int_equal(run("cluster --model gpt3-175b --nodes 128 --power-limits 300,400"), 1);
    assert_int_equal(run("cluster --model gpt3-175b --nodes 128 --optimize energy"), 1);
    assert_int_equal(run("cluster --model gpt3-175b --nodes 128 --stages --format csv"), 0);
    assert_non_null(strstr(err_buf, "warning: 3419.9 GB per GPU does not fit a100-sxm-80gb's "
                                    "85.9 GB (80.0 GiB)"));
    /* one that fits is a row */
    assert_int_equal(run("cluster --model gpt3-175b --nodes 128 --tp 8 --pp 16 --format csv"), 0);
    assert_non_null(strstr(out_buf, "\ndgx-a100-80gb,gpt3-175b,train,1024,8,16,8,"));
}

int main(void)
{
    if (cli_setup("test_cli_edges"))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_units_in_numbers),
        cmocka_unit_test(test_did_you_mean),
        cmocka_unit_test(test_plot_format),
        cmocka_unit_test(test_validate_plain_default),
        cmocka_unit_test(test_cluster_layout_must_fit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
