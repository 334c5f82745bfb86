/* The rough edges a new user met (issue 63): each test fails before its
 * fix. The binary runs in the test's own directory (test_cli.h). */
#include "test_cli.h"

#include <math.h>

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

/* presets list: every row's name starts where the header's does, the
 * long system id and the long host names included; a serving workload
 * has its name, not "(invalid preset)". */
static void test_presets_list_aligned(void **state)
{
    (void)state;
    assert_int_equal(run("presets list"), 0);
    assert_null(strstr(out_buf, "(invalid preset)"));
    assert_non_null(strstr(out_buf, "\nworkload lm-arena-chat "));
    assert_non_null(strstr(out_buf, "ML.ENERGY lm-arena-chat"));
    const char *eol = strchr(out_buf, '\n');
    const char *name = strstr(out_buf, " name ");
    const char *launch = strstr(out_buf, " launch_us ");
    assert_true(name && launch && name < eol && launch < eol);
    size_t at = (size_t)(name - out_buf) + 1, lat = (size_t)(launch - out_buf) + 10;
    int rows = 0;
    for (const char *l = eol; l && l[1]; l = strchr(l + 1, '\n')) {
        const char *r = l + 1;
        rows++;
        if (strncmp(r, "model ", 6) && !(r[at - 1] == ' ' && r[at] != ' '))
            fail_msg("name not under its header: %.120s", r);
        /* hosts: launch_us right-aligned under its header, after the long names */
        if (!strncmp(r, "host ", 5) && !(r[lat - 1] >= '0' && r[lat - 1] <= '9' && r[lat] == ' '))
            fail_msg("launch_us not under its header: %.200s", r);
    }
    assert_true(rows > 30);
}

/* An empty profile says it has no kernels; one whose clock nothing states
 * names --profile-clock, which then runs it. */
static void test_profile_clock_and_empty(void **state)
{
    (void)state;
    test_write_file("empty.json", "{\"traceEvents\": []}");
    assert_int_equal(run("predict --gpu h200-sxm-141gb --trace empty.json"), 1);
    assert_non_null(strstr(err_buf, "holds no GPU kernels"));
    assert_null(strstr(err_buf, "SM clock"));
    REQUIRE_SHARED(data);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "sh -c 'gzip -dc %s/profiles/h200-sxm-141gb/"
             "gpt2_prefill_b4_s1024_bf16_eager_990mhz.json.gz > gp.json'", data);
    assert_int_equal(system(cmd), 0);
    assert_int_equal(run("predict --gpu h200-sxm-141gb --trace gp.json"), 1);
    assert_non_null(strstr(err_buf, "give --profile-clock MHZ"));
    assert_int_equal(run("predict --gpu h200-sxm-141gb --trace gp.json --profile-clock 990 "
                         "--clock 990 --format csv"), 0);
    assert_true(csv_get(out_buf, 1, "time_ms") > 0);
}

/* A profile's rows say the mode it ran: train for a training step, decode
 * for the harness's decode profiles (they said prefill). */
static void test_profile_mode(void **state)
{
    (void)state;
    REQUIRE_SHARED(data);
    assert_int_equal(run("sweep --gpu h200-sxm-141gb --trace %s/profiles/h200-sxm-141gb/"
                         "gpt2_train_b4_s1024_bf16_eager_1980mhz.json.gz --clock 990 --format table",
                         data), 0);
    assert_non_null(strstr(out_buf, ", mode train,"));
    assert_int_equal(run("sweep --gpu h200-sxm-141gb --trace %s/profiles/h200-sxm-141gb/"
                         "llama-3-8b_decode_b8_s1024_bf16_sdpa_1980mhz.json.gz --clock 990 --format csv",
                         data), 0);
    assert_non_null(strstr(out_buf, ",bf16,,decode,model,"));
    assert_int_equal(run("sweep --gpu h200-sxm-141gb --trace %s/profiles/h200-sxm-141gb/"
                         "gpt2_prefill_b4_s1024_bf16_eager_1980mhz.json.gz --clock 990 --format csv",
                         data), 0);
    assert_non_null(strstr(out_buf, ",bf16,,prefill,model,"));
}

/* A decode profile's host gaps are mostly the profiler's: alone it gets a
 * warning; the unprofiled step time, given or from the summary.csv beside
 * it, corrects it (the shared Llama-3-8B decode step at 1980 MHz: 863.2
 * ms unprofiled, 1220 ms predicted from the profile alone). */
static void test_decode_profile_step(void **state)
{
    (void)state;
    REQUIRE_SHARED(data);
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "cp %s/profiles/h200-sxm-141gb/llama-3-8b_decode_b8_s1024_bf16_sdpa_"
             "1980mhz.json.gz lone_1980mhz.json.gz", data);
    assert_int_equal(system(cmd), 0);
    const char *q = "predict --gpu h200-sxm-141gb --clock 1980 --format csv --trace";
    assert_int_equal(run("%s lone_1980mhz.json.gz", q), 0);
    assert_non_null(strstr(err_buf, "warning: lone_1980mhz.json.gz: the GPU waits on the host "
                                    "for 72% of the profiled step"));
    assert_non_null(strstr(err_buf, "--profile-step-ms MS"));
    double alone = csv_get(out_buf, 1, "time_ms");
    assert_int_equal(run("%s lone_1980mhz.json.gz --profile-step-ms 863.2365", q), 0);
    assert_null(strstr(err_buf, "warning"));
    double given = csv_get(out_buf, 1, "time_ms");
    assert_int_equal(run("%s %s/profiles/h200-sxm-141gb/llama-3-8b_decode_b8_s1024_bf16_sdpa_"
                         "1980mhz.json.gz", q, data), 0);
    assert_non_null(strstr(err_buf, "solved from the unprofiled step time in the summary.csv"));
    assert_null(strstr(err_buf, "warning"));
    double beside = csv_get(out_buf, 1, "time_ms");
    /* replayed at its own clock, the step takes the stated time */
    assert_true(fabs(given - 863.2365) < 0.01 * 863.2365);
    assert_true(fabs(beside - given) < 1e-6 * given);
    assert_true(alone > 1.2 * given);
    /* a kernel trace measured nothing: the option is refused */
    test_write_file("k.json", "[[{\"batch\":1,\"dimM\":64,\"dimN\":64,\"dimK\":64,"
                              "\"precM\":\"bf16\",\"precA\":\"bf16\",\"useTensorCore\":true},"
                              "[\"gemm\",\"tc\",\"bf16_bf16\"]]]");
    assert_int_equal(run("predict --gpu h200-sxm-141gb --trace k.json --profile-step-ms 5"), 2);
    assert_non_null(strstr(err_buf, "--profile-step-ms"));
}

/* Decode's two launch modes say what ttft_ms is: graphs, a server's steady
 * state, one arriving request's prefill whatever the batch; eager, the
 * batch's prefill. In the help, the table's header and a note. */
static void test_decode_modes_said(void **state)
{
    (void)state;
    assert_int_equal(run("predict --help"), 0);
    assert_non_null(strstr(out_buf, "continuous-batching server's steady state"));
    assert_non_null(strstr(out_buf, "ttft_ms one arriving request's own prefill"));
    const char *q = "predict --gpu h100-sxm-80gb --model llama-3-8b --mode decode --seq 512 "
                    "--gen 16 --format table";
    assert_int_equal(run("%s --batch 8 --launch graphs", q), 0);
    assert_non_null(strstr(out_buf, "decode as a continuous-batching server (launch graphs): "
                                    "ttft_ms one arriving request's prefill"));
    assert_non_null(strstr(err_buf, "note: decode with --launch graphs is a continuous-batching"));
    assert_int_equal(run("%s --batch 8 --launch eager", q), 0);
    assert_non_null(strstr(out_buf, "decode with static batching (launch eager): ttft_ms the "
                                    "batch's prefill"));
    assert_null(strstr(err_buf, "continuous-batching"));
    /* what the words say: graphs' ttft_ms does not grow with the batch, eager's does */
    const char *c = "predict --gpu h100-sxm-80gb --model llama-3-8b --mode decode --seq 512 "
                    "--gen 16 --format csv --quiet";
    assert_int_equal(run("%s --batch 1 --launch graphs", c), 0);
    double g1 = csv_get(out_buf, 1, "ttft_ms");
    assert_int_equal(run("%s --batch 8 --launch graphs", c), 0);
    double g8 = csv_get(out_buf, 1, "ttft_ms");
    assert_int_equal(run("%s --batch 8 --launch eager", c), 0);
    double e8 = csv_get(out_buf, 1, "ttft_ms");
    assert_true(fabs(g8 - g1) < 1e-9 * g1);
    assert_true(e8 > 2 * g8);
}

/* A report on a GPU whose voltage is the rule says so in its caveats (its
 * optimum sits on the rule's knee); a measured curve gets no such line. */
static void test_report_voltage_caveat(void **state)
{
    (void)state;
    /* the H100 SXM's voltage comes from its kernel rows (issue 76); the
     * H100 PCIe's is still the rule */
    test_write_file("vst.ini", "[sweep]\ngpu = h100-pcie-80gb,h100-sxm-80gb,a100-pcie-40gb\n"
                               "model = gpt2\nclock = 990,1410\n[report]\ntitle = t\n");
    assert_int_equal(run("report vst.ini -o vrep --quiet"), 0);
    char md[1 << 16];
    slurp("vrep/index.md", md, sizeof md);
    assert_non_null(strstr(md, "h100-pcie-80gb's voltage is a rule, not a measurement: flat at "
                               "720 mV up to the knee at"));
    assert_non_null(strstr(md, "h100-sxm-80gb's voltage is derived from its board's compute-bound "
                               "kernel rows (h100-sxm-80gb-kernels.csv"));
    assert_null(strstr(md, "h100-sxm-80gb's voltage is a rule"));
    assert_null(strstr(md, "a100-pcie-40gb's voltage is a rule"));
}

/* The class's value at a clock in a --kernels sweep. */
static double class_value(const char *csv, const char *cls, double clock, const char *col)
{
    for (int row = 1;; row++) {
        const char *p = csv;
        for (int r = 0; r < row && p; r++)
            if ((p = strchr(p, '\n')))
                p++;
        if (!p || !*p)
            return NAN;
        char want[64];
        snprintf(want, sizeof want, ",%s,", cls);
        const char *eol = strchr(p, '\n');
        const char *hit = strstr(p, want);
        if (hit && (!eol || hit < eol) && csv_get(csv, row, "sm_clock_mhz") == clock)
            return csv_get(csv, row, col);
    }
}

/* optimize on a --kernels sweep chooses each class on its own time and
 * energy: each row is its class's (it printed the whole pass's row once
 * per class); naming the columns chooses on the whole pass. */
static void test_optimize_per_class(void **state)
{
    (void)state;
    assert_int_equal(run("sweep --gpu a100-pcie-40gb --model gpt2 --clock 510:1410:150 --kernels "
                         "--quiet -o k.csv"), 0);
    char sweep[1 << 16];
    slurp("k.csv", sweep, sizeof sweep);
    assert_int_equal(run("optimize k.csv --objective energy --format csv"), 0);
    assert_non_null(strstr(err_buf, "each class chosen on class_time_ms and class_energy_j"));
    const char *cls[] = {"gemm", "softmax", "elementwise"};
    double e[3];
    for (int i = 0; i < 3; i++) {
        char want[64];
        snprintf(want, sizeof want, ",%s,energy,", cls[i]);
        const char *at = strstr(out_buf, want);
        assert_non_null(at);
        int row = 0;
        for (const char *p = out_buf; p < at; p++)
            row += *p == '\n';
        double f = csv_get(out_buf, row, "sm_clock_mhz");
        e[i] = csv_get(out_buf, row, "energy_j");
        assert_close(e[i], class_value(sweep, cls[i], f, "class_energy_j"), 1e-6);
        assert_close(csv_get(out_buf, row, "time_ms"), class_value(sweep, cls[i], f, "class_time_ms"),
                     1e-5);
        /* the least of its class's energies over the sweep's clocks */
        for (double c = 510; c <= 1410; c += 150)
            assert_true(e[i] <= class_value(sweep, cls[i], c, "class_energy_j") + 1e-6);
    }
    assert_true(e[0] != e[1] && e[1] != e[2]);
    assert_int_equal(run("optimize k.csv --objective energy --time time_ms --energy energy_j "
                         "--format csv"), 0);
    assert_null(strstr(err_buf, "each class chosen"));
    assert_close(csv_get(out_buf, 1, "energy_j"), csv_get(out_buf, 2, "energy_j"), 1e-12);
}

/* cluster --clock takes a list: a row per clock, each the row that clock
 * alone gives (a row never depends on its neighbours). */
static void test_cluster_clock_list(void **state)
{
    (void)state;
    const char *q = "cluster --model gpt3-1.3b --tp 2 --pp 2 --format csv";
    assert_int_equal(run("%s --clock 900:1410:255", q), 0);
    static char list[sizeof out_buf];
    memcpy(list, out_buf, sizeof list);
    const double clk[3] = {900, 1155, 1410};
    for (int i = 0; i < 3; i++) {
        assert_close(csv_get(list, i + 1, "sm_clock_mhz"), clk[i], 0);
        assert_int_equal(run("%s --clock %g", q, clk[i]), 0);
        assert_close(csv_get(list, i + 1, "time_s"), csv_get(out_buf, 1, "time_s"), 0);
        assert_close(csv_get(list, i + 1, "energy_j"), csv_get(out_buf, 1, "energy_j"), 0);
    }
    /* a lower clock is never faster here (compute-bound GEMMs) */
    assert_true(csv_get(list, 1, "time_s") > csv_get(list, 3, "time_s"));
    assert_int_equal(run("%s --clock 900,1410 --optimize energy", q), 2);
    assert_non_null(strstr(err_buf, "several clocks give a row each"));
    assert_int_equal(run("cluster search --clock 900,1410"), 2);
}

/* A report's figure captions name the workloads they leave out for not
 * fitting their GPU's memory (they were left out silently). */
static void test_report_unfit_captions(void **state)
{
    (void)state;
    test_write_file("ust.ini", "[sweep]\ngpu = a100-pcie-40gb\nmodel = gpt2,gpt3-13b\n"
                               "seq = 128,2048\nbatch = 1,64\nclock = 990,1410\n"
                               "[report]\ntitle = t\n");
    assert_int_equal(run("report ust.ini -o urep --quiet"), 0);
    static char md[1 << 17];
    slurp("urep/index.md", md, sizeof md);
    const char *want = "Left out, not fitting the GPU's memory (fits = 0 in sweep.csv): gpt3-13b "
                       "batch 64 seq 2048.";
    /* in the Pareto figure's caption, after its own sentence */
    const char *fig = strstr(md, "Energy-runtime Pareto fronts");
    assert_non_null(fig);
    const char *at = strstr(fig, want);
    assert_non_null(at);
    assert_null(memchr(fig, '\n', (size_t)(at - fig)));
    /* a study where everything fits says nothing of it */
    test_write_file("fst.ini", "[sweep]\ngpu = a100-pcie-40gb\nmodel = gpt2\nclock = 990,1410\n"
                               "[report]\ntitle = t\n");
    assert_int_equal(run("report fst.ini -o frep --quiet"), 0);
    slurp("frep/index.md", md, sizeof md);
    assert_null(strstr(md, "Left out"));
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
        cmocka_unit_test(test_presets_list_aligned),
        cmocka_unit_test(test_profile_clock_and_empty),
        cmocka_unit_test(test_profile_mode),
        cmocka_unit_test(test_decode_profile_step),
        cmocka_unit_test(test_decode_modes_said),
        cmocka_unit_test(test_report_voltage_caveat),
        cmocka_unit_test(test_optimize_per_class),
        cmocka_unit_test(test_cluster_clock_list),
        cmocka_unit_test(test_report_unfit_captions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
