/* Tests of cli/: the wattlas binary's commands, exit codes and outputs. */
#include "test_util.h"

#include <sys/wait.h>
#include <unistd.h>

#ifndef WATTLAS_BIN_PATH
#define WATTLAS_BIN_PATH "bin/wattlas"
#endif

static char out_buf[1 << 16], err_buf[1 << 16];

static void slurp(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    size_t k = f ? fread(buf, 1, n - 1, f) : 0;
    buf[k] = 0;
    if (f)
        fclose(f);
}

/* Runs BIN with args; captures stdout and stderr; returns the exit code. */
static int run(const char *args)
{
    const char *bin = getenv("WATTLAS_BIN") ? getenv("WATTLAS_BIN") : WATTLAS_BIN_PATH;
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s >/tmp/wattlas-cli.out 2>/tmp/wattlas-cli.err </dev/null", bin,
             args);
    int st = system(cmd);
    slurp("/tmp/wattlas-cli.out", out_buf, sizeof out_buf);
    slurp("/tmp/wattlas-cli.err", err_buf, sizeof err_buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void test_usage_errors(void **state)
{
    (void)state;
    assert_int_equal(run(""), 2);
    assert_int_equal(run("frobnicate"), 2);
    assert_int_equal(run("predict --bogus"), 2);
    assert_non_null(strstr(err_buf, "--bogus"));
    assert_int_equal(run("predict --batch 0"), 2);
    assert_non_null(strstr(err_buf, "--batch"));
    assert_int_equal(run("predict --dtype fp64"), 2);
    assert_int_equal(run("predict --clock 900:100:10"), 2);
    assert_int_equal(run("predict --format xml"), 2);
    assert_int_equal(run("validate"), 2);
    assert_int_equal(run("presets"), 2);
    assert_int_equal(run("calibrate --gpu a100-pcie-40gb x.csv"), 2); /* no -o */
    const char *cmds[] = {"predict", "validate", "calibrate", "presets"};
    for (int i = 0; i < 4; i++) {
        char a[64];
        snprintf(a, sizeof a, "%s --help", cmds[i]);
        assert_int_equal(run(a), 0);
        assert_non_null(strstr(out_buf, "usage: wattlas"));
    }
    assert_int_equal(run("--help"), 0);
    assert_int_equal(run("--version"), 0);
}

static void test_runtime_errors(void **state)
{
    (void)state;
    assert_int_equal(run("predict --gpu no-such-gpu"), 1);
    assert_non_null(strstr(err_buf, "no such preset"));
    assert_int_equal(run("predict --trace /nonexistent/t.json"), 1);
    assert_non_null(strstr(err_buf, "/nonexistent/t.json"));
    FILE *f = fopen("/tmp/wattlas-cli-bad.csv", "w");
    fputs("gpu,model,batch,seq,dtype,mode,attention,sm_clock_mhz,time_ms,energy_j,power_w\n"
          "a100-pcie-40gb,gpt2,8,128,bf16,prefill,eager,900,8,0.7,90\n"
          "a100-pcie-40gb,gpt2,8,128,bf16,prefill,eager,900,eight,0.7,90\n", f);
    fclose(f);
    assert_int_equal(run("validate /tmp/wattlas-cli-bad.csv"), 1);
    assert_non_null(strstr(err_buf, "/tmp/wattlas-cli-bad.csv:3: time_ms"));
    unlink("/tmp/wattlas-cli-bad.csv");
}

static void test_predict_outputs(void **state)
{
    (void)state;
    assert_int_equal(run("predict --model gpt2 --batch 8 --seq 128 --clock 510:1410:90 --format csv"), 0);
    assert_int_equal(count_lines(out_buf), 12); /* header + 11 clocks */
    assert_non_null(strstr(out_buf, "sm_clock_mhz,effective_clock_mhz,voltage_mv"));
    assert_non_null(strstr(out_buf, "time_ms,power_w,energy_j"));
    assert_non_null(strstr(out_buf, "\na100-pcie-40gb,gpt2_bf16_b8_s128_prefill,8,128,bf16,eager,510.0,"));
    assert_int_equal(run("predict --model opt-1.3b --batch 8 --seq 512 --format json --kernels"), 0);
    assert_non_null(strstr(out_buf, "\"effective_clock_mhz\": "));
    assert_non_null(strstr(out_buf, "\"kernel_class\": \"gemm\""));
    assert_int_equal(run("predict --clock 2000"), 2); /* outside the V-f curve */
    assert_int_equal(run("predict --clock 2000 --voltage-mv 950"), 0);
    assert_int_equal(run("predict --batch 1000000 --seq 10000000"), 1);
    /* --kernels in CSV is one long table: totals row "all", then classes */
    assert_int_equal(run("predict --model gpt2 --clock 900 --format csv --kernels"), 0);
    assert_non_null(strstr(out_buf, ",kernel_class,launches,busy_ms,dyn_energy_j,tflop,dram_gb\n"));
    assert_non_null(strstr(out_buf, ",all,242,"));
    assert_non_null(strstr(out_buf, ",elementwise,133,"));
    assert_int_equal(run("predict --model llama-3-8b --seq 2048 --attention flash --kernels"), 0);
    assert_non_null(strstr(out_buf, "flash_attention"));
    /* the power limit throttles the top of the curve on the 250 W board */
    assert_int_equal(run("predict --model opt-1.3b --batch 8 --seq 2048 --clock 1410 --format csv"), 0);
    assert_non_null(strstr(out_buf, ",1410.0,12")); /* effective clock 12xx MHz */
    /* atomic file output */
    unlink("/tmp/wattlas-cli-out.csv");
    assert_int_equal(run("predict --format csv -o /tmp/wattlas-cli-out.csv"), 0);
    assert_int_equal(access("/tmp/wattlas-cli-out.csv", F_OK), 0);
    unlink("/tmp/wattlas-cli-out.csv");
    assert_int_equal(run("predict -o /nonexistent/dir/x.csv"), 1);
}

static void test_validate_rows(void **state)
{
    (void)state;
    FILE *f = fopen("/tmp/wattlas-cli-meas.csv", "w");
    fputs("gpu,model,batch,seq,dtype,mode,attention,sm_clock_mhz,measured_clock_mhz,time_ms,energy_j,power_w,temp_c\n"
          "a100-pcie-40gb,gpt2,8,512,bf16,prefill,eager,960,960,20.2544,3.33507,164.66,67.2\n"
          "a100-pcie-40gb,mystery-net,8,512,bf16,prefill,eager,960,960,20.0,3.0,150.0,67.2\n", f);
    fclose(f);
    assert_int_equal(run("validate /tmp/wattlas-cli-meas.csv --no-lomo"), 0);
    assert_non_null(strstr(out_buf, "temp_c,predicted_clock_mhz,predicted_time_ms,predicted_power_w,predicted_energy_j\n"));
    assert_non_null(strstr(out_buf, "\na100-pcie-40gb,gpt2,8,512,bf16,prefill,eager,960,960,20.2544,3.33507,164.66,67.2,960.0,"));
    assert_non_null(strstr(out_buf, "150.0,67.2,,,,\n"));
    assert_non_null(strstr(err_buf, "/tmp/wattlas-cli-meas.csv:3: not modelled: unknown model 'mystery-net'"));
    assert_non_null(strstr(err_buf, "MAPE"));
    unlink("/tmp/wattlas-cli-meas.csv");
}

static void test_presets_cmd(void **state)
{
    (void)state;
    assert_int_equal(run("presets list"), 0);
    assert_non_null(strstr(out_buf, "a100-pcie-40gb"));
    assert_non_null(strstr(out_buf, "llama-3-8b"));
    assert_int_equal(run("presets show gpt3-175b"), 0);
    assert_non_null(strstr(out_buf, "d_model = 12288"));
    assert_int_equal(run("presets show nope"), 1);
}

static void test_trace_predict(void **state)
{
    (void)state;
    REQUIRE_SHARED(dir);
    char a[2048];
    snprintf(a, sizeof a, "predict --trace %s/traces/gpt2_bf16_b8_s128_prefill.json --format csv", dir);
    assert_int_equal(run(a), 0);
    assert_non_null(strstr(out_buf, "gpt2_bf16_b8_s128_prefill.json"));
}

static void test_calibrate_cmd(void **state)
{
    (void)state;
    REQUIRE_SHARED(dir);
    char a[4096];
    unlink("/tmp/wattlas-cli-cal.ini");
    snprintf(a, sizeof a, "calibrate --gpu a100-pcie-40gb %s/measurements/a100-pcie-40gb-dvfs.csv "
                          "--holdout gpt2 -o /tmp/wattlas-cli-cal.ini", dir);
    assert_int_equal(run(a), 0);
    assert_non_null(strstr(err_buf, "held-out ("));
    assert_non_null(strstr(err_buf, "residuals per workload"));
    slurp("/tmp/wattlas-cli-cal.ini", out_buf, sizeof out_buf);
    assert_non_null(strstr(out_buf, "[calibration]"));
    assert_non_null(strstr(out_buf, "stderr_c_tc_w = "));
    assert_non_null(strstr(out_buf, "fitted_rows = 88")); /* gpt2's 88 rows held out */
    assert_non_null(strstr(out_buf, "command = wattlas calibrate"));
    assert_non_null(strstr(out_buf, "[covariance]"));
    /* the written preset is usable, intervals included */
    assert_int_equal(run("predict --gpu /tmp/wattlas-cli-cal.ini --clock 900 --interval 95 --format csv"), 0);
    assert_non_null(strstr(out_buf, ",time_lo_ms,time_hi_ms,power_lo_w,power_hi_w,energy_lo_j,energy_hi_j"));
    unlink("/tmp/wattlas-cli-cal.ini");
    snprintf(a, sizeof a, "calibrate --gpu a100-pcie-40gb %s/measurements/a100-pcie-40gb-dvfs.csv "
                          "--holdout no-such-model -o /tmp/wattlas-cli-cal.ini", dir);
    assert_int_equal(run(a), 2);
    assert_int_not_equal(access("/tmp/wattlas-cli-cal.ini", F_OK), 0);
    /* --idle replaces the V-f table; --kfold reports cross-validated error */
    snprintf(a, sizeof a, "calibrate --gpu a100-pcie-40gb %s/measurements/a100-pcie-40gb-dvfs.csv "
                          "--idle %s/gpu-tables/a100-sxm-80gb-idle.csv --kfold 3 "
                          "-o /tmp/wattlas-cli-cal.ini", dir, dir);
    assert_int_equal(run(a), 0);
    assert_non_null(strstr(err_buf, "3-fold cross-validated (176 rows)"));
    slurp("/tmp/wattlas-cli-cal.ini", out_buf, sizeof out_buf);
    assert_non_null(strstr(out_buf, "derived by wattlas calibrate --idle"));
    assert_non_null(strstr(out_buf, "743.75"));   /* the SXM board's voltage floor */
    assert_null(strstr(out_buf, "693.75"));       /* the PCIe table is gone */
    unlink("/tmp/wattlas-cli-cal.ini");
    snprintf(a, sizeof a, "validate %s/measurements/a100-pcie-40gb-dvfs.csv --no-lomo --interval 90", dir);
    assert_int_equal(run(a), 0);
    assert_non_null(strstr(err_buf, "90% prediction intervals cover the measurement"));
    assert_non_null(strstr(out_buf, ",predicted_energy_lo_j,predicted_energy_hi_j\n"));
}

static void test_sweep_pareto_optimize_cmds(void **state)
{
    (void)state;
    assert_int_equal(run("sweep --model gpt2,opt-1.3b --batch 8 --seq 128,512 --clock 510:1410:30 "
                         "--quiet -o /tmp/wattlas-cli-sweep.csv"), 0);
    assert_int_equal(run("pareto --in /tmp/wattlas-cli-sweep.csv"), 0);
    assert_non_null(strstr(out_buf, "gpu,model,batch,seq,dtype,attention,voltage_offset_mv,"));
    int front = count_lines(out_buf) - 1;
    assert_true(front >= 4 && front < 4 * 31); /* some per workload, not all */
    assert_int_equal(run("optimize --in /tmp/wattlas-cli-sweep.csv --objective energy"), 0);
    assert_int_equal(count_lines(out_buf), 5); /* header + 4 workloads */
    assert_non_null(strstr(out_buf, "energy_saving_vs_fastest_pct,runtime_penalty_vs_fastest_pct"));
    assert_int_equal(run("optimize --in /tmp/wattlas-cli-sweep.csv --objective speed"), 2);
    assert_int_equal(run("optimize --in /tmp/wattlas-cli-sweep.csv"), 2);
    assert_int_equal(run("pareto --in /tmp/wattlas-cli-sweep.csv --x no_such_col"), 1);
    assert_non_null(strstr(err_buf, "no_such_col"));
    assert_int_equal(run("sweep --clock 900:100:10"), 2);
    assert_int_equal(run("sweep --set warp=1"), 2);
    assert_int_equal(run("sweep --shard 3/2"), 2);
    assert_int_equal(run("sweep --spec /nonexistent.ini"), 1);
    /* shards merge to the unsharded file */
    assert_int_equal(run("sweep --model gpt2 --seq 128,512 --clock 510:1410:90 --shard 0/2 --quiet -o /tmp/wattlas-cli-s0.csv"), 0);
    assert_int_equal(run("sweep --model gpt2 --seq 128,512 --clock 510:1410:90 --shard 1/2 --quiet -o /tmp/wattlas-cli-s1.csv"), 0);
    assert_int_equal(run("merge /tmp/wattlas-cli-s0.csv /tmp/wattlas-cli-s1.csv -o /tmp/wattlas-cli-m.csv"), 0);
    assert_int_equal(run("sweep --model gpt2 --seq 128,512 --clock 510:1410:90 --quiet -o /tmp/wattlas-cli-full.csv"), 0);
    assert_int_equal(system("cmp -s /tmp/wattlas-cli-m.csv /tmp/wattlas-cli-full.csv"), 0);
    unlink("/tmp/wattlas-cli-s0.csv");
    unlink("/tmp/wattlas-cli-s1.csv");
    unlink("/tmp/wattlas-cli-m.csv");
    unlink("/tmp/wattlas-cli-full.csv");
    unlink("/tmp/wattlas-cli-sweep.csv");
}

/* Ctrl-C: the file holds whole rows, the exit status says interrupted. */
static void test_sweep_sigint(void **state)
{
    (void)state;
    const char *bin = getenv("WATTLAS_BIN") ? getenv("WATTLAS_BIN") : WATTLAS_BIN_PATH;
    char cmd[1024];
    unlink("/tmp/wattlas-cli-int.csv");
    snprintf(cmd, sizeof cmd,
             "%s sweep --model gpt3-13b,llama-3-8b --batch 1,2,4,8,16 --seq 512,1024,2048,4096 "
             "--set sms=80:140:1 --quiet -o /tmp/wattlas-cli-int.csv & pid=$!; sleep 0.5; "
             "kill -INT $pid; wait $pid", bin);
    int st = system(cmd);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 130);
    slurp("/tmp/wattlas-cli-int.csv", out_buf, sizeof out_buf);
    assert_non_null(strstr(out_buf, "gpu,sms,model,"));
    FILE *f = fopen("/tmp/wattlas-cli-int.csv", "r");
    assert_non_null(f);
    fseek(f, -1, SEEK_END);
    assert_int_equal(fgetc(f), '\n'); /* the last row is whole */
    fclose(f);
    unlink("/tmp/wattlas-cli-int.csv");
}

static void test_report_and_plot_cmds(void **state)
{
    (void)state;
    FILE *f = fopen("/tmp/wattlas-cli-study.ini", "w");
    fputs("[report]\ntitle = Tiny study\nobjective = energy\n[sweep]\nmodel = gpt3-125m, gpt2\n"
          "seq = 128, 512\nscope = layer\nclock = 510:1410:90\n", f);
    fclose(f);
    assert_int_equal(system("rm -rf /tmp/wattlas-cli-report"), 0);
    assert_int_equal(run("report --spec /tmp/wattlas-cli-study.ini -o /tmp/wattlas-cli-report --quiet"), 0);
    slurp("/tmp/wattlas-cli-report/index.md", out_buf, sizeof out_buf);
    assert_non_null(strstr(out_buf, "# Tiny study"));
    assert_non_null(strstr(out_buf, "| workload | clock (MHz) |"));
    assert_non_null(strstr(out_buf, "![Energy vs SM clock"));
    const char *files[] = {"index.html", "sweep.csv", "pareto.csv", "optimal.csv", "savings.csv",
                           "energy-a100-pcie-40gb-bf16.png", "energy-a100-pcie-40gb-bf16.pdf",
                           "pareto-a100-pcie-40gb-bf16.png", "heatmap-gpt2.png",
                           "parts-gpt2.pdf", "savings-a100-pcie-40gb-bf16.png"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char p[256];
        snprintf(p, sizeof p, "/tmp/wattlas-cli-report/%s", files[i]);
        if (access(p, F_OK) != 0)
            fail_msg("report did not write %s", files[i]);
    }
    /* plot from the report's CSVs, and its errors */
    assert_int_equal(run("plot energy-freq --in /tmp/wattlas-cli-report/sweep.csv -o /tmp/wattlas-cli-x.svg --size 4x3in --title T --panels time,energy"), 0);
    assert_int_equal(run("plot energy-freq --in /tmp/wattlas-cli-report/sweep.csv -o /tmp/wattlas-cli-x.svg --size 4x3"), 0);
    assert_int_equal(run("plot energy-freq --in /tmp/wattlas-cli-report/sweep.csv -o /tmp/wattlas-cli-x.svg --size big"), 2);
    assert_int_equal(run("plot energy-freq --in /tmp/wattlas-cli-report/sweep.csv -o /tmp/wattlas-cli-x.svg --stack"), 1);
    assert_non_null(strstr(err_buf, "single series"));
    assert_int_equal(run("plot pareto --in /tmp/wattlas-cli-report/sweep.csv -o /tmp/wattlas-cli-x.svg --facet model"), 0);
    assert_int_equal(run("plot pie --in x.csv -o y.png"), 2);
    assert_int_equal(run("plot pareto --in /tmp/wattlas-cli-report/sweep.csv -o /tmp/x.gif"), 1);
    assert_int_equal(run("plot pareto -o /tmp/x.png"), 2);
    assert_int_equal(run("report --spec /nonexistent.ini -o /tmp/x"), 1);
    assert_int_equal(run("report -o /tmp/x"), 2);
    assert_int_equal(system("rm -rf /tmp/wattlas-cli-report /tmp/wattlas-cli-x.svg"), 0);
    unlink("/tmp/wattlas-cli-study.ini");
}

/* compare: the optimum agrees with a clock scan through predict, and is no
 * worse than the maximum clock; transferred GPUs are marked. */
static void test_compare_cmd(void **state)
{
    (void)state;
    assert_int_equal(run("compare --model gpt2"), 2);
    assert_non_null(strstr(err_buf, "--gpu"));
    assert_int_equal(run("compare --gpu v100-sxm2-32gb --dtype bf16"), 2);
    assert_non_null(strstr(err_buf, "no bf16"));
    assert_int_equal(run("compare --gpu a100-pcie-40gb,no-such-gpu"), 1);
    assert_int_equal(run("compare --gpu a100-pcie-40gb,h100-sxm-80gb --model gpt2 --batch 8 "
                         "--seq 512 --format csv"), 0);
    assert_int_equal(count_lines(out_buf), 3);
    assert_non_null(strstr(out_buf, "opt_clock_mhz"));
    assert_non_null(strstr(out_buf, ",transferred from a100-pcie-40gb\n"));
    const char *row = strstr(out_buf, "\na100-pcie-40gb,");
    assert_non_null(row);
    double v[22];
    const char *p = row + 1;
    for (int k = 0; k < 21; k++) {
        p = strchr(p, ',') + 1;
        v[k] = atof(p);
    }
    /* v[5] sm_clock, v[9] energy, v[10] opt clock, v[14] opt energy, v[17] max energy */
    double opt_mhz = v[10], opt_j = v[14], max_j = v[17];
    assert_true(opt_j <= max_j);
    assert_true(opt_j <= v[9]);
    assert_int_equal(run("predict --model gpt2 --batch 8 --seq 512 --clock 210:1410:15 --format csv"), 0);
    double best_j = 1e300, best_mhz = 0;
    for (const char *q = strstr(out_buf, "\na100"); q; q = strstr(q + 1, "\na100")) {
        const char *c = q + 1;
        double col[17];
        for (int k = 0; k < 16; k++) {
            c = strchr(c, ',') + 1;
            col[k] = atof(c);
        }
        if (col[11] < best_j * (1 - 1e-12) || fabs(col[11] - best_j) <= 1e-12 * best_j) {
            best_j = col[11];
            best_mhz = col[5];
        }
    }
    assert_close(opt_mhz, best_mhz, 0);
    assert_close(opt_j, best_j, 1e-5);
    assert_int_equal(run("compare --gpu a100-pcie-40gb,l40s-48gb --model bert-large"), 0);
    assert_non_null(strstr(out_buf, "l40s-48gb      +"));
    /* plot compare reads compare's CSV */
    assert_int_equal(run("compare --gpu a100-pcie-40gb,h100-sxm-80gb,a10-24gb --model gpt2 --format csv "
                         "-o /tmp/wattlas-cmp.csv"), 0);
    unlink("/tmp/wattlas-cmp.svg");
    assert_int_equal(run("plot compare --in /tmp/wattlas-cmp.csv -o /tmp/wattlas-cmp.svg"), 0);
    slurp("/tmp/wattlas-cmp.svg", out_buf, sizeof out_buf);
    assert_non_null(strstr(out_buf, "<svg"));
    assert_int_equal(run("plot compare --in /tmp/wattlas-cli-nonexistent.csv -o /tmp/x.svg"), 1);
    unlink("/tmp/wattlas-cmp.csv");
    unlink("/tmp/wattlas-cmp.svg");
    /* validate scores each GPU's rows on its own preset, transferred or not */
    FILE *f = fopen("/tmp/wattlas-cli-2gpu.csv", "w");
    fputs("gpu,model,batch,seq,dtype,mode,attention,sm_clock_mhz,measured_clock_mhz,time_ms,energy_j,power_w,temp_c\n"
          "h100-sxm-80gb,gpt2,8,512,bf16,prefill,eager,1830,1830,10.0,3.0,300,60\n"
          "a100-pcie-40gb,gpt2,8,512,bf16,prefill,eager,900,900,19.0,3.0,158,60\n", f);
    fclose(f);
    assert_int_equal(run("validate /tmp/wattlas-cli-2gpu.csv --no-lomo --interval 95"), 0);
    assert_non_null(strstr(err_buf, "on h100-sxm-80gb, coefficients transferred (1 rows scored"));
    assert_non_null(strstr(err_buf, "on a100-pcie-40gb (1 rows scored"));
    assert_non_null(strstr(err_buf, "all GPUs (2 rows scored"));
    assert_null(strstr(out_buf, ",,,,")); /* both predicted, with intervals */
    unlink("/tmp/wattlas-cli-2gpu.csv");
    assert_int_equal(run("predict --gpu l40s-48gb --interval 95"), 0);
    assert_non_null(strstr(out_buf, "95% interval"));
    /* vision models: no seq */
    assert_int_equal(run("predict --model resnet-101 --batch 16 --clock 900 --format csv"), 0);
    assert_non_null(strstr(out_buf, "\na100-pcie-40gb,resnet-101_bf16_b16_inference,16,,bf16,"));
    assert_int_equal(run("predict --model vit-large --batch 8 --clock 900"), 0);
    assert_non_null(strstr(out_buf, "(413 kernels), batch 8, bf16"));
    /* voltage as a design parameter in a sweep: at a 600 mV floor the A10
     * cannot run 1000 MHz (alpha-power f_max 966 MHz), at 720 mV it can */
    assert_int_equal(run("sweep --gpu a10-24gb --model gpt2 --clock 900,1000 --set vmin_mv=600,720 --quiet"), 0);
    assert_non_null(strstr(out_buf, "\na10-24gb,600,gpt2,1,128,bf16,eager,0.0,900.0,900.0,600.0,1,"));
    assert_non_null(strstr(out_buf, "\na10-24gb,600,gpt2,1,128,bf16,eager,0.0,1000.0,1000.0,600.0,0,"));
    assert_non_null(strstr(out_buf, "\na10-24gb,720,gpt2,1,128,bf16,eager,0.0,1000.0,1000.0,720.0,1,"));
    /* energy-check */
    assert_int_equal(run("energy-check --gpu a100-sxm-80gb --dtype bf16 --format csv"), 0);
    assert_int_equal(count_lines(out_buf), 2);
    assert_non_null(strstr(out_buf, "\na100-sxm-80gb,bf16,tensor,7,1410,311.87,400,1.2826,0.2100,0.3800,0.2950,0.4352,0.1904,0.7972,8192,"));
    assert_int_equal(run("energy-check --gpu a100-sxm-80gb --dtype fp8"), 2);
    assert_int_equal(run("energy-check --gpu v100-sxm2-32gb"), 0);
    assert_non_null(strstr(out_buf, "fp16   tensor"));
}

/* The predicted power of the row that starts with prefix, or -1. */
static double predicted_power(const char *prefix)
{
    const char *row = strstr(out_buf, prefix);
    if (!row)
        return -1;
    const char *p = row;
    for (int k = 0; k < 15; k++) { /* 13 input columns, clock, time */
        p = strchr(p, ',');
        if (!p)
            return -1;
        p++;
    }
    return *p == ',' ? -1 : atof(p);
}

/* validate looks beside the measurements: DATA/gpu-tables/<id>-idle.csv for
 * a GPU whose idle curve is the rule, DATA/traces/ for rows no builder
 * covers (an fp32 row from a bf16 trace, retyped); the gpu column may be
 * an alias. */
static void test_validate_beside(void **state)
{
    (void)state;
    assert_int_equal(system("rm -rf /tmp/wattlas-beside && mkdir -p /tmp/wattlas-beside/measurements "
                            "/tmp/wattlas-beside/gpu-tables /tmp/wattlas-beside/traces"), 0);
    test_write_file("/tmp/wattlas-beside/measurements/a10.csv",
        "gpu,model,batch,seq,dtype,mode,attention,sm_clock_mhz,measured_clock_mhz,time_ms,energy_j,power_w,temp_c\n"
        "NVIDIA A10,gpt2,1,128,bf16,prefill,eager,900,900,8.0,0.2,25.0,40\n"
        "a10-24gb,tiny-net,8,,fp32,inference,eager,900,900,1.0,0.03,30.0,40\n"
        "NVIDIA A10,google/vit-large-patch16-224,8,,bfloat16,forward,,900,900,50.0,4.0,80.0,40\n");
    char buf[8192];
    size_t n = (size_t)snprintf(buf, sizeof buf, "sm_clock_mhz,voltage_mv,idle_power_w\n");
    for (int f = 210; f <= 1695; f += 15)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%d,,%.2f\n", f, 15.0 + 0.005 * f);
    test_write_file("/tmp/wattlas-beside/gpu-tables/a10-24gb-idle.csv", buf);
    test_write_file("/tmp/wattlas-beside/traces/tiny-net_bf16_b8_inference.json",
        "[[{\"batch\":1,\"dimM\":4096,\"dimN\":1024,\"dimK\":1024,\"precM\":\"bf16\",\"precA\":\"bf16\","
        "\"useTensorCore\":true},[\"gemm\",\"tc\",\"bf16_bf16\"]],"
        "[{\"dim\":4194304,\"op\":\"typecast_to_fp32\",\"prec\":\"bf16\"},[\"elementwise\"]]]");
    assert_int_equal(run("validate /tmp/wattlas-beside/measurements/a10.csv --no-lomo"), 0);
    assert_non_null(strstr(err_buf, "a10-24gb uses the measured idle table"));
    assert_non_null(strstr(err_buf, "use traces from /tmp/wattlas-beside/measurements/../traces"));
    assert_non_null(strstr(err_buf, "3 rows scored"));
    /* a hub model id, a framework dtype, "forward", an empty attention */
    assert_true(predicted_power("\nNVIDIA A10,google/vit-large-patch16-224,") > 0);
    double p_table = predicted_power("\nNVIDIA A10,gpt2,");
    assert_true(predicted_power("\na10-24gb,tiny-net,") > 0);
    assert_int_equal(run("validate /tmp/wattlas-beside/measurements/a10.csv --no-lomo --no-beside"), 0);
    assert_null(strstr(err_buf, "idle table"));
    assert_non_null(strstr(err_buf, "unknown model 'tiny-net' and no trace"));
    double p_rule = predicted_power("\nNVIDIA A10,gpt2,");
    assert_true(p_table > 0 && p_rule > 0);
    /* the table's idle at 900 MHz is 19.5 W, the rule's about 40 W */
    assert_true(p_rule - p_table > 10.0);
    /* --idle names the GPU when the file has several */
    test_write_file("/tmp/wattlas-beside/measurements/two.csv",
        "gpu,model,batch,seq,dtype,mode,attention,sm_clock_mhz,measured_clock_mhz,time_ms,energy_j,power_w,temp_c\n"
        "a10-24gb,gpt2,1,128,bf16,prefill,eager,900,900,8.0,0.4,50.0,40\n"
        "l4-24gb,gpt2,1,128,bf16,prefill,eager,900,900,8.0,0.3,37.5,40\n");
    assert_int_equal(run("validate /tmp/wattlas-beside/measurements/two.csv --no-lomo "
                         "--idle /tmp/wattlas-beside/gpu-tables/a10-24gb-idle.csv"), 2);
    assert_non_null(strstr(err_buf, "ID=TABLE.csv"));
    assert_int_equal(run("validate /tmp/wattlas-beside/measurements/two.csv --no-lomo --no-beside "
                         "--idle l4=/tmp/wattlas-beside/gpu-tables/a10-24gb-idle.csv"), 0);
    assert_non_null(strstr(err_buf, "l4-24gb uses the measured idle table"));
    assert_null(strstr(err_buf, "a10-24gb uses"));
    assert_int_equal(system("rm -rf /tmp/wattlas-beside"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_usage_errors),   cmocka_unit_test(test_runtime_errors),
        cmocka_unit_test(test_predict_outputs), cmocka_unit_test(test_validate_rows),
        cmocka_unit_test(test_presets_cmd),    cmocka_unit_test(test_trace_predict),
        cmocka_unit_test(test_calibrate_cmd),
        cmocka_unit_test(test_sweep_pareto_optimize_cmds),
        cmocka_unit_test(test_sweep_sigint),
        cmocka_unit_test(test_report_and_plot_cmds),
        cmocka_unit_test(test_compare_cmd),
        cmocka_unit_test(test_validate_beside),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
