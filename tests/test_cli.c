/* Tests of cli/: the wattlas binary's commands, exit codes, vocabulary and
 * outputs. Every command runs in this test's own temporary directory. */
#include "test_cli.h"

static void test_usage_errors(void **state)
{
    (void)state;
    assert_int_equal(run("%s", ""), 2);
    assert_int_equal(run("frobnicate"), 2);
    assert_int_equal(run("predict --bogus"), 2);
    assert_non_null(strstr(err_buf, "--bogus"));
    /* a long option with one dash names itself, not the word before it */
    assert_int_equal(run("predict --model gpt2 -seq 512"), 2);
    assert_non_null(strstr(err_buf, "'-seq' (long options take two dashes: --seq)"));
    assert_null(strstr(err_buf, "gpt2"));
    assert_int_equal(run("sweep --model gpt2 -clock 900"), 2);
    assert_non_null(strstr(err_buf, "--clock"));
    /* -h is --help in every command */
    assert_int_equal(run("predict -h"), 0);
    assert_non_null(strstr(out_buf, "usage: wattlas predict"));
    assert_int_equal(run("cluster search -h"), 0);
    assert_non_null(strstr(out_buf, "usage: wattlas cluster"));
    /* a name no preset has: the close ones */
    assert_int_equal(run("predict --gpu a100"), 2);
    assert_non_null(strstr(err_buf, "did you mean a100-pcie-40gb, a100-pcie-80gb, a100-sxm-80gb-500w, "
                                    "a100-sxm-80gb?"));
    assert_int_equal(run("predict --model lama-3-8b"), 2);
    assert_non_null(strstr(err_buf, "did you mean llama-3-8b?"));
    assert_int_equal(run("cluster --system dgx"), 2);
    assert_non_null(strstr(err_buf, "dgx-a100-80gb, dgx-b200, dgx-h100"));
    assert_int_equal(run("predict --gpu zzzz"), 2);
    assert_null(strstr(err_buf, "did you mean"));
    /* a table names the parameters it leaves out */
    assert_int_equal(run("sweep --model gpt2 --clock 900,1410 --format table"), 0);
    assert_non_null(strstr(out_buf, "# gpu a100-pcie-40gb, model gpt2, batch 1, seq 128, dtype bf16, "
                                    "attention eager, mode prefill, scope model, voltage_offset_mv 0.0\n"
                                    "sm_clock_mhz"));
    assert_int_equal(run("sweep --model gpt2,bert-large --clock 900 --format table"), 0);
    assert_non_null(strstr(out_buf, "# gpu a100-pcie-40gb, batch 1"));
    assert_null(strstr(out_buf, "model gpt2,"));
    /* a context past a learned position table: predicted, and warned */
    assert_int_equal(run("predict --model bert-large --seq 4096"), 0);
    assert_non_null(strstr(err_buf, "warning: bert-large has 512 learned positions: a context of 4096"));
    assert_int_equal(run("sweep --model gpt2 --seq 1000 --mode decode --gen 100 --clock 1410"), 0);
    assert_non_null(strstr(err_buf, "1100 tokens (prompt and generation)"));
    assert_int_equal(run("predict --model bert-large --seq 512"), 0);
    assert_null(strstr(err_buf, "warning"));
    assert_int_equal(run("predict --dtype fp64"), 2);
    assert_int_equal(run("predict --clock 900:100:10"), 2);
    assert_int_equal(run("predict --format xml"), 2);
    assert_int_equal(run("validate"), 2);
    assert_int_equal(run("presets"), 2);
    assert_int_equal(run("calibrate --gpu a100-pcie-40gb x.csv"), 2); /* no -o */
    /* every invalid option value is a usage error, in every command */
    const char *const bad[] = {
        "predict --batch 0", "sweep --batch 0", "predict --batch 99999999999",
        "sweep --set sms=abc", "sweep --set sms=0", "sweep --set dram_bw_gbs=1e-300",
        "sweep --voltage-offset-mv 1e308", "predict --voltage-offset-mv 1e308",
        "predict --clock 2000", "sweep --clock 900,", "predict --gpu no-such-gpu",
        "sweep --gpu no-such-gpu", "compare --gpu a100-pcie-40gb,no-such-gpu",
        "sweep --shard 0/2", "sweep --shard 3/2", "sweep --shard 1/2 --format json",
        "sweep --set warp=1", "compare --model gpt2", "compare --gpu a100-pcie-40gb --clock 3000",
        "energy-check --gpu a100-sxm-80gb --dtype fp8", "optimize --objective speed",
        "sweep --threads 0", "predict --interval 0", "presets show nope",
        "predict --model gpt9000", "sweep --dtype bf17", "plot pie --in x.csv -o y.png",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = run("%s", bad[i]);
        if (rc != 2)
            fail_msg("'%s' exited %d, want 2 (stderr: %s)", bad[i], rc, err_buf);
        if (!strstr(err_buf, "wattlas "))
            fail_msg("'%s' said nothing", bad[i]);
    }
    assert_int_equal(run("predict --batch 99999999999"), 2);
    assert_non_null(strstr(err_buf, "--batch: expected integers in [1, 1000000]"));
    assert_int_equal(run("sweep --set sms=0"), 2);
    assert_non_null(strstr(err_buf, "--set: sms: expected an integer in [1, 100000], got 0"));
    /* help for every command from the one table */
    assert_int_equal(run("--help"), 0);
    const char *cmds[] = {"predict", "compare", "energy-check", "validate", "calibrate", "sweep",
                          "merge", "pareto", "optimize", "plot", "report", "presets"};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        char want[64];
        snprintf(want, sizeof want, "  %s ", cmds[i]);
        assert_non_null(strstr(out_buf, want));
    }
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        if (run("%s --help", cmds[i]) != 0 || !strstr(out_buf, "usage: wattlas"))
            fail_msg("%s --help", cmds[i]);
    }
    assert_int_equal(run("plot --help"), 0);
    assert_non_null(strstr(out_buf, "  compare "));
    assert_int_equal(run("--version"), 0);
}

static void test_runtime_errors(void **state)
{
    (void)state;
    assert_int_equal(run("predict --trace /nonexistent/t.json"), 1);
    assert_non_null(strstr(err_buf, "/nonexistent/t.json"));
    char buf[1024];
    snprintf(buf, sizeof buf, "%s%s%s", MEAS_HEADER,
             "a100-pcie-40gb,gpt2,8,128,bf16,prefill,eager,900,900,8,0.7,90,50\n",
             "a100-pcie-40gb,gpt2,8,128,bf16,prefill,eager,900,900,eight,0.7,90,50\n");
    test_write_file("bad.csv", buf);
    assert_int_equal(run("validate bad.csv"), 1);
    assert_non_null(strstr(err_buf, "bad.csv:3: time_ms"));
    /* a directory is not a CSV; a byte-order mark is not part of a column */
    assert_int_equal(shell("mkdir -p adir"), 0);
    assert_int_equal(run("validate adir"), 1);
    assert_non_null(strstr(err_buf, "adir: is a directory"));
    snprintf(buf, sizeof buf, "\xEF\xBB\xBF%s%s", MEAS_HEADER,
             "a100-pcie-40gb,gpt2,8,512,bf16,prefill,eager,960,960,20.2544,3.33507,164.66,67.2\n");
    test_write_file("bom.csv", buf);
    assert_int_equal(run("validate bom.csv --no-lomo"), 0);
    /* no row could be scored: exit 1 */
    snprintf(buf, sizeof buf, "%s%s", MEAS_HEADER,
             "a100-pcie-40gb,mystery,8,512,bf16,prefill,eager,960,960,20,3,150,67\n");
    test_write_file("none.csv", buf);
    assert_int_equal(run("validate none.csv --no-lomo"), 1);
    assert_non_null(strstr(err_buf, "no row of none.csv could be scored"));
    /* a batch no builder can take is a reason naming batch */
    snprintf(buf, sizeof buf, "%s%s%s", MEAS_HEADER,
             "a100-pcie-40gb,gpt2,99999999999,512,bf16,prefill,eager,960,960,20,3,150,67\n",
             "a100-pcie-40gb,gpt2,8,512,bf16,prefill,eager,960,960,20.2544,3.33507,164.66,67.2\n");
    test_write_file("bigbatch.csv", buf);
    assert_int_equal(run("validate bigbatch.csv --no-lomo"), 0);
    assert_non_null(strstr(err_buf, "batch: expected an integer in [1, 1000000], got 99999999999"));
}

/* Output files: regular files atomically, anything else in place; every
 * write checked. */
static void test_outputs(void **state)
{
    (void)state;
    assert_int_equal(run("predict --format csv -o out.csv"), 0);
    assert_int_equal(access("out.csv", F_OK), 0);
    /* without --format, the file's extension says: CSV, NDJSON, JSON; else a table */
    assert_int_equal(run("predict -o ext.csv"), 0);
    assert_int_equal(shell("grep -q '^gpu,model,' ext.csv"), 0);
    assert_int_equal(run("predict -o ext.ndjson"), 0);
    assert_int_equal(shell("head -c 8 ext.ndjson | grep -q '^{\"gpu\"'"), 0);
    assert_int_equal(run("compare --gpu a100-pcie-40gb,h100-sxm-80gb --model gpt2 -o ext.json"), 0);
    assert_int_equal(shell("head -c 1 ext.json | grep -q '\\['"), 0);
    assert_int_equal(run("energy-check --gpu a100-sxm-80gb -o ext2.csv"), 0);
    assert_int_equal(shell("grep -q '^gpu,' ext2.csv"), 0);
    assert_int_equal(run("predict --format table -o ext3.csv"), 0);
    assert_int_equal(shell("grep -q '^# gpu' ext3.csv"), 0);
    assert_int_equal(run("predict -o ext.txt"), 0);
    assert_int_equal(shell("grep -q '^# gpu' ext.txt"), 0);
    assert_int_equal(run("predict -o /nonexistent/dir/x.csv"), 1);
    assert_int_equal(run("predict -o adir2/"), 1);
    /* devices are written, not replaced */
    assert_int_equal(run("predict --format csv -o /dev/null"), 0);
    assert_int_equal(shell("test -c /dev/null"), 0);
    assert_int_equal(run("predict --format csv -o /dev/full"), 1);
    assert_non_null(strstr(err_buf, "/dev/full: write error"));
    assert_int_equal(shell("test -c /dev/full"), 0);
    /* a symlink keeps pointing at its target, which gets the output */
    assert_int_equal(shell("echo old > target.csv && ln -sf target.csv link.csv"), 0);
    assert_int_equal(run("predict --format csv -o link.csv"), 0);
    assert_int_equal(shell("test -L link.csv && grep -q '^gpu,model' target.csv"), 0);
    /* a FIFO is written into */
    /* (the reader is waited for, not given 0.2 s: on a loaded machine it
     * had not written its file yet) */
    assert_int_equal(shell("rm -f fifo && mkfifo fifo && { cat fifo > fifo.out & c=$!; } && "
                           "$W predict --format csv -o fifo && wait $c && test -p fifo && "
                           "grep -q '^gpu,model' fifo.out"), 0);
    /* a full stdout is an error, never a success with the output lost */
    const char *const full[] = {"sweep --clock 900 --quiet", "presets list", "--help",
                                "presets show gpt2", "predict", "sweep --help",
                                "presets derive-vf --help"};
    for (size_t i = 0; i < sizeof full / sizeof *full; i++)
        if (shell("$W %s > /dev/full 2>/dev/null", full[i]) != 1)
            fail_msg("'%s > /dev/full' did not fail with 1", full[i]);
    /* a full disk (a file-size limit, its signal ignored, stands in for one)
     * is a write error with its cause, stops the sweep early and leaves the
     * old file and no temporary one */
    /* (once, under make check's load on a fresh clone, this failed and
     * passed on every rerun: it now says what it saw) */
    if (shell("mkdir -p full && echo keep > full/big.csv && (trap '' XFSZ; "
              "ulimit -f 64; $W sweep --model gpt3-13b,llama-3-8b --batch 1,2,4,8,16 "
              "--seq 512,1024,2048,4096 --set sms=80:140:1 --set l2_size_mb=10:80:1 "
              "--quiet -o full/big.csv 2>full.err; echo $? > full.rc; test $(cat full.rc) = 1) && "
              "grep -q 'full/big.csv: write error: File too large' full.err && "
              "test \"$(ls full)\" = big.csv && test \"$(cat full/big.csv)\" = keep")) {
        shell("{ echo exit $(cat full.rc); ls -la full; tail -c 600 full.err; } > full.why 2>&1");
        slurp("full.why", err_buf, sizeof err_buf);
        fail_msg("a full disk: %s", err_buf);
    }
    /* a failed run leaves the old file */
    assert_int_equal(shell("echo keep > kept.csv"), 0);
    assert_int_equal(run("validate bad-nonexistent.csv -o kept.csv"), 1);
    slurp("kept.csv", out_buf, sizeof out_buf);
    assert_string_equal(out_buf, "keep\n");
}

static void test_predict_outputs(void **state)
{
    (void)state;
    assert_int_equal(run("predict --model gpt2 --batch 8 --seq 128 --clock 510:1410:90 --format csv"), 0);
    assert_int_equal(count_lines(out_buf), 12); /* header + 11 clocks */
    assert_non_null(strstr(out_buf, "gpu,model,batch,seq,dtype,attention,mode,scope,voltage_offset_mv,"
                                    "sm_clock_mhz,effective_clock_mhz,voltage_mv,feasible,throttled,"
                                    "time_ms,power_w,energy_j,energy_dyn_compute_j,"
                                    "energy_dyn_memory_j,energy_static_j,launch_bound_pct,memory_gb,fits,"
                                    "energy_per_token_j\n"));
    /* per prompt token: batch 8 x seq 128 of them */
    assert_close(csv_get(out_buf, 1, "energy_per_token_j"), csv_get(out_buf, 1, "energy_j") / 1024,
                 1e-5);
    assert_non_null(strstr(out_buf, "\na100-pcie-40gb,gpt2,8,128,bf16,eager,prefill,model,0.0,510.0,"));
    /* the same columns as a sweep of the same points */
    static char csv[sizeof out_buf];
    memcpy(csv, out_buf, sizeof csv);
    assert_int_equal(run("sweep --model gpt2 --batch 8 --seq 128 --clock 510:1410:90 --quiet"), 0);
    assert_string_equal(out_buf, csv);
    assert_int_equal(run("predict --model opt-1.3b --batch 8 --seq 512 --format json --kernels"), 0);
    assert_non_null(strstr(out_buf, "\"effective_clock_mhz\": "));
    assert_non_null(strstr(out_buf, "\"kernel_class\": \"gemm\""));
    assert_int_equal(run("predict --model gpt2 --clock 900,1000 --format ndjson"), 0);
    assert_int_equal(count_lines(out_buf), 2);
    assert_non_null(strstr(out_buf, "{\"gpu\":\"a100-pcie-40gb\",\"model\":\"gpt2\","));
    assert_int_equal(run("predict --clock 2000 --voltage-mv 950"), 0);
    assert_int_equal(run("predict --batch 1000000 --seq 10000000"), 2);
    assert_int_equal(run("predict --model gpt2 --clock 900 --format csv --kernels"), 0);
    assert_non_null(strstr(out_buf, ",kernel_class,class_launches,class_time_ms,"
                                    "class_dyn_energy_j,class_energy_j,class_gflop,class_dram_gb\n"));
    /* transformers 5.x GPT-2: 14 in the embeddings and the causal mask
     * (two gathers, the positions' arange and add, the embeddings' add,
     * the mask's nine), then 16 a layer (the cache's two cats, the query's
     * and the output's copies, the scaling, the mask add, two residual
     * adds and NewGELU's eight): 14 + 12 x 16 */
    assert_non_null(strstr(out_buf, ",elementwise,206,"));
    assert_int_equal(run("predict --model llama-3-8b --seq 2048 --attention flash --kernels"), 0);
    assert_non_null(strstr(out_buf, "flash_attention"));
    /* the table fits a terminal: the point's clock, time, power and energy
     * once, on its first class row, beside the class columns */
    size_t widest = 0, rows_with_energy = 0, class_rows = 0;
    for (const char *l = out_buf; *l;) {
        size_t n = strcspn(l, "\n");
        if (n > widest && l[0] != '#')
            widest = n;
        if (l[0] != '#' && strstr(l, "sm_clock_mhz") != l) {
            class_rows++;
            /* a row with the totals has a time in ms: "  ddd.ddddd " */
            int dots = 0;
            for (size_t i = 0; i < n; i++)
                dots += l[i] == '.';
            rows_with_energy += dots >= 8;
        }
        l += n + (l[n] == '\n');
    }
    if (widest > 200)
        fail_msg("predict --kernels table is %zu characters wide", widest);
    assert_int_equal(class_rows, 4); /* gemm, flash_attention, norm, elementwise */
    assert_int_equal(rows_with_energy, 1);
    /* the power limit throttles the top of the curve on the 250 W board */
    assert_int_equal(run("predict --model opt-1.3b --batch 8 --seq 2048 --clock 1410 --format csv"), 0);
    double eff = csv_get(out_buf, 1, "effective_clock_mhz");
    assert_true(eff > 1100 && eff < 1300); /* held near 1200 MHz */
    assert_int_equal(run("predict --model opt-1.3b --batch 8 --seq 2048 --clock 1200:1410:30"), 0);
    assert_non_null(strstr(out_buf, "# throttled = 1"));
    assert_non_null(strstr(out_buf, "# energy-optimal requested clock: "));
    /* a board power limit from --set, as nvidia-smi -pl sets it: each limit's row
     * holds its power under the limit, and a lower limit runs a lower clock */
    assert_int_equal(run("predict --model opt-1.3b --batch 8 --seq 2048 --clock 1410 "
                         "--set power_limit_w=150,200 --format csv"), 0);
    assert_int_equal(count_lines(out_buf), 3);
    assert_true(csv_get(out_buf, 1, "power_limit_w") == 150);
    assert_true(csv_get(out_buf, 1, "power_w") <= 150.0 * 1.001);
    assert_true(csv_get(out_buf, 2, "power_w") <= 200.0 * 1.001);
    assert_true(csv_get(out_buf, 1, "effective_clock_mhz") <
                csv_get(out_buf, 2, "effective_clock_mhz"));
    assert_true(csv_get(out_buf, 1, "time_ms") > csv_get(out_buf, 2, "time_ms"));
    assert_int_equal(run("predict --set power_limit_w=-5"), 2);
    assert_int_equal(run("predict --set no_such_key=5"), 2);
    /* vision models: no seq */
    assert_int_equal(run("predict --model resnet-101 --batch 16 --clock 900 --format csv"), 0);
    assert_non_null(strstr(out_buf, "\na100-pcie-40gb,resnet-101,16,,bf16,"));
    assert_int_equal(run("predict --model vit-large --batch 8 --clock 900"), 0);
    assert_non_null(strstr(out_buf, "(413 kernels), batch 8, bf16"));
    assert_int_equal(run("predict --gpu l40s-48gb --interval 95 --format csv"), 0);
    assert_non_null(strstr(out_buf, ",time_lo_ms,time_hi_ms,power_lo_w,power_hi_w,energy_lo_j,energy_hi_j"));
    /* an alias names the same preset for the interval as for the model */
    assert_int_equal(run("predict --gpu a100-pcie --interval 95 --format csv"), 0);
    assert_non_null(strstr(out_buf, "\na100-pcie-40gb,gpt2,1,128,bf16,eager,"));
}

static void test_validate_rows(void **state)
{
    (void)state;
    char buf[2048];
    snprintf(buf, sizeof buf, "%s%s%s", MEAS_HEADER,
             "a100-pcie-40gb,gpt2,8,512,bf16,prefill,eager,960,960,20.2544,3.33507,164.66,67.2\n",
             "a100-pcie-40gb,mystery-net,8,512,bf16,prefill,eager,960,960,20.0,3.0,150.0,67.2\n");
    test_write_file("meas.csv", buf);
    assert_int_equal(run("validate meas.csv --no-lomo"), 0);
    assert_non_null(strstr(out_buf, "temp_c,predicted_effective_clock_mhz,predicted_time_ms,"
                                    "predicted_power_w,predicted_energy_j\n"));
    assert_non_null(strstr(out_buf, "\na100-pcie-40gb,gpt2,8,512,bf16,prefill,eager,960,960,20.2544,3.33507,164.66,67.2,960.0,"));
    assert_non_null(strstr(out_buf, "150.0,67.2,,,,\n"));
    assert_non_null(strstr(err_buf, "meas.csv:3: not modelled: unknown model 'mystery-net'"));
    assert_non_null(strstr(err_buf, "MAPE"));
    /* --in, and the other formats: numbers stay numbers in JSON */
    assert_int_equal(run("validate --in meas.csv --no-lomo --format json"), 0);
    assert_non_null(strstr(out_buf, "\"batch\": 8, \"seq\": 512, \"dtype\": \"bf16\""));
    assert_non_null(strstr(out_buf, "\"predicted_time_ms\": null"));
    assert_int_equal(run("validate --in meas.csv meas.csv"), 2);
    /* --quiet: the summary's totals; no per-row note, no per-workload
     * regret line (five clocks of one workload give one) */
    char rows[2048] = "";
    size_t used = 0;
    for (int f = 510; f <= 1410; f += 225)
        used += (size_t)snprintf(rows + used, sizeof rows - used,
                                 "a100-pcie-40gb,gpt2,8,512,bf16,prefill,eager,%d,%d,%g,%g,150,60\n",
                                 f, f, 20.0 * 960 / f, 3.0 * 960 / f);
    snprintf(buf, sizeof buf, "%s%s%s", MEAS_HEADER, rows,
             "a100-pcie-40gb,mystery-net,8,512,bf16,prefill,eager,960,960,20.0,3.0,150.0,67.2\n");
    test_write_file("meas5.csv", buf);
    assert_int_equal(run("validate meas5.csv --no-lomo"), 0);
    assert_non_null(strstr(err_buf, "measured best"));
    assert_non_null(strstr(err_buf, "not modelled: unknown model"));
    assert_int_equal(run("validate meas5.csv --no-lomo --quiet"), 0);
    assert_non_null(strstr(err_buf, "MAPE"));
    assert_non_null(strstr(err_buf, "energy-optimal clock regret (1 workloads"));
    assert_null(strstr(err_buf, "measured best"));
    assert_null(strstr(err_buf, "not modelled: unknown model"));
    /* a row under a power limit is named by its limit: here the workload's
     * rows under five limits draw less energy than at any locked clock, and
     * the lowest limit is measured best */
    used = 0;
    used += (size_t)snprintf(rows + used, sizeof rows - used, "%s",
                             "gpu,model,batch,seq,dtype,mode,attention,sm_clock_mhz,"
                             "measured_clock_mhz,time_ms,energy_j,power_w,temp_c,power_limit_w\n");
    for (int f = 510; f <= 1410; f += 225)
        used += (size_t)snprintf(rows + used, sizeof rows - used,
                                 "a100-pcie-40gb,gpt2,8,512,bf16,prefill,eager,%d,%d,%g,%g,150,60,\n",
                                 f, f, 20.0 * 960 / f, 3.0 * 960 / f);
    for (int w = 150; w <= 250; w += 25)
        used += (size_t)snprintf(rows + used, sizeof rows - used,
                                 "a100-pcie-40gb,gpt2,8,512,bf16,prefill,eager,1410,1000,20,%g,%g,60,%d\n",
                                 0.02 * (50.0 + w / 5.0), 50.0 + w / 5.0, w);
    test_write_file("meas_pl.csv", rows);
    assert_int_equal(run("validate meas_pl.csv --no-lomo"), 0);
    assert_non_null(strstr(err_buf, "regret (1 workloads"));
    assert_non_null(strstr(err_buf, "measured best    150 W"));
}

static void test_presets_cmd(void **state)
{
    (void)state;
    assert_int_equal(run("presets list"), 0);
    assert_non_null(strstr(out_buf, "a100-pcie-40gb"));
    assert_non_null(strstr(out_buf, "llama-3-8b"));
    /* aligned: every row's columns start where the header's do (the
     * longest name, concept-n3's, fits its column) */
    const char *hdr_sms = strstr(out_buf, " sms ");
    assert_non_null(hdr_sms);
    size_t at = (size_t)(hdr_sms - out_buf) + 4; /* the end of "sms", right-aligned numbers */
    int gpus = 0;
    for (const char *l = strchr(out_buf, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
        if (strncmp(l + 1, "gpu ", 4))
            continue;
        gpus++;
        if (!(l[at] >= '0' && l[at] <= '9' && l[at + 1] == ' '))
            fail_msg("misaligned presets list row: %.80s", l + 1);
    }
    assert_true(gpus >= 10);
    assert_int_equal(run("presets list --format csv"), 0);
    assert_non_null(strstr(out_buf, "kind,id,name,sms,sm_clock_min_mhz,sm_clock_max_mhz,"));
    assert_int_equal(run("presets show gpt3-175b"), 0);
    assert_non_null(strstr(out_buf, "d_model = 12288"));
    assert_int_equal(run("presets show \"NVIDIA A10\""), 0);
    assert_non_null(strstr(out_buf, "id = a10-24gb"));
}

static void test_trace_predict(void **state)
{
    (void)state;
    REQUIRE_SHARED(dir);
    assert_int_equal(run("predict --trace %s/traces/gpt2_bf16_b8_s128_prefill.json --format csv", dir), 0);
    assert_non_null(strstr(out_buf, "gpt2_bf16_b8_s128_prefill.json"));
    assert_int_equal(run("predict --trace %s/traces/gpt2_bf16_b8_s128_prefill.json --dtype fp32 "
                         "--format csv", dir), 0);
    assert_non_null(strstr(out_buf, ",fp32,"));
    assert_int_equal(run("predict --trace %s/traces/gpt2_bf16_b8_s128_prefill.json --dtype fp16",
                         dir), 2);
}

static void test_calibrate_cmd(void **state)
{
    (void)state;
    REQUIRE_SHARED(dir);
    /* the command's plumbing, on four of the DVFS set's eleven clocks (64
     * rows: the fits take a third of the time; test_calib holds the
     * accuracy of the whole set) */
    assert_int_equal(shell("awk -F, 'NR == 1 || $8 == 510 || $8 == 870 || $8 == 1140 || "
                           "$8 == 1410' %s/measurements/a100-pcie-40gb-dvfs.csv > dvfs4.csv", dir),
                     0);
    /* every:2 holds out the second of the sorted model names (bert-large,
     * gpt2, opt-1.3b): gpt2, as --holdout gpt2 would */
    assert_int_equal(run("calibrate --gpu a100-pcie-40gb dvfs4.csv --holdout every:2 -o cal.ini"), 0);
    assert_non_null(strstr(err_buf, "held out (--holdout every:2): gpt2\n"));
    assert_non_null(strstr(err_buf, "held-out ("));
    assert_non_null(strstr(err_buf, "residuals per workload"));
    slurp("cal.ini", out_buf, sizeof out_buf);
    assert_non_null(strstr(out_buf, "[calibration]"));
    assert_non_null(strstr(out_buf, "stderr_c_tc_w = "));
    assert_non_null(strstr(out_buf, "fitted_rows = 32")); /* gpt2's 8 workloads held out */
    assert_non_null(strstr(out_buf, "held_out_rows = 32\nheld_out = gpt2\n"));
    assert_non_null(strstr(out_buf, "; held-out MAPE time "));
    assert_non_null(strstr(out_buf, "command = wattlas calibrate"));
    assert_non_null(strstr(out_buf, "[covariance]"));
    /* predict's header says what it was fitted on */
    assert_int_equal(run("predict --gpu cal.ini --clock 900"), 0);
    assert_non_null(strstr(out_buf, "# coefficients fitted on 32 rows of dvfs4.csv, fnv1a64:"));
    assert_non_null(strstr(out_buf, ", 32 held out\n"));
    /* a split that holds out nothing, or everything, is a usage error */
    assert_int_equal(run("calibrate --gpu a100-pcie-40gb dvfs4.csv --holdout every:4 -o x.ini"), 2);
    assert_non_null(strstr(err_buf, "every:4 holds out nothing: the file has 3 model names"));
    assert_int_equal(run("calibrate --gpu a100-pcie-40gb dvfs4.csv --holdout every:1 -o x.ini"), 2);
    assert_non_null(strstr(err_buf, "every:K takes K from 2 to 1000, got '1'"));
    assert_int_not_equal(access("x.ini", F_OK), 0);
    /* --fit board moves the board and keeps the die's latency as the
     * preset has it, and says so; a later calibration of that preset fits
     * the board again */
    assert_int_equal(shell("awk -F, 'NR == 1 || $2 == \"gpt2\"' dvfs4.csv > gpt2.csv"), 0);
    assert_int_equal(run("calibrate --gpu a100-pcie-40gb gpt2.csv --fit board --quiet -o b1.ini"), 0);
    assert_int_equal(run("presets show a100-pcie-40gb"), 0);
    char want[128];
    const char *tc = strstr(out_buf, "\ntc_eff = ");
    assert_non_null(tc);
    snprintf(want, sizeof want, "%.*s", (int)strcspn(tc + 1, "\n") + 2, tc);
    slurp("b1.ini", out_buf, sizeof out_buf);
    assert_non_null(strstr(out_buf, want));
    assert_non_null(strstr(out_buf, "kept = the die's latency (tc_eff, cuda_eff, alu_eff, l2_eff, "
                                    "overlap_p, kernel_fixed_us, kernel_fixed_clk, "
                                    "tile_overhead_clk, launch_clk) as the\n    preset gave it\n"));
    assert_int_equal(run("calibrate --gpu b1.ini gpt2.csv --quiet -o b2.ini"), 0);
    assert_non_null(strstr(err_buf, "kept its die's latency from the fit it came from"));
    slurp("b2.ini", out_buf, sizeof out_buf);
    assert_non_null(strstr(out_buf, want));
    /* rows of relative time fit the board's power: the latency and the
     * memory path stay the preset's (dram_eff as a100-pcie-40gb has it) */
    assert_int_equal(shell("awk -F, 'NR == 1 {print $0 \",time_relative\"; next} {print $0 \",1\"}' "
                           "gpt2.csv > rel.csv"), 0);
    assert_int_equal(run("calibrate --gpu a100-pcie-40gb rel.csv --quiet -o rel.ini"), 0);
    assert_non_null(strstr(err_buf, "note: rows of relative time (time_relative): they fit the "
                                    "board's power and its controller"));
    assert_int_equal(run("presets show a100-pcie-40gb"), 0);
    const char *de = strstr(out_buf, "\ndram_eff = ");
    assert_non_null(de);
    snprintf(want, sizeof want, "%.*s", (int)strcspn(de + 1, "\n") + 2, de);
    slurp("rel.ini", out_buf, sizeof out_buf);
    assert_non_null(strstr(out_buf, want));
    /* one relative row in a workload of absolute ones: refused, the rows
     * named (issue 77: its absolute times were scaled away silently) */
    assert_int_equal(shell("awk -F, 'NR == 1 {print $0 \",time_relative\"; next} "
                           "{print $0 (NR == 3 ? \",1\" : \",0\")}' gpt2.csv > mix.csv"), 0);
    assert_int_equal(run("calibrate --gpu a100-pcie-40gb mix.csv --quiet -o mix.ini"), 1);
    assert_non_null(strstr(err_buf, "mix.csv:3: time_relative: workload gpt2 "));
    assert_non_null(strstr(err_buf, "mixes rows of relative time (time_relative = 1: lines 3) "
                                    "with rows of absolute time (lines 2, 4, "));
    assert_int_not_equal(access("mix.ini", F_OK), 0);
    assert_int_equal(run("validate --gpu a100-pcie-40gb mix.csv --quiet"), 1);
    assert_non_null(strstr(err_buf, "mix.csv:3: time_relative: workload gpt2 "));
    /* one model has nothing to leave out, and says so (it printed nothing) */
    assert_int_equal(run("calibrate --gpu a100-pcie-40gb gpt2.csv --lomo --quiet -o lomo.ini"), 0);
    assert_non_null(strstr(err_buf, "leave-one-model-out: one model (gpt2), too few to leave one out"));
    /* a fold whose refit fails is named with its reason, not dropped: EnergAIzer's
     * 31 Qwen2 rows in 2 folds of 10 and 21 rows, the 10 too few to fit */
    assert_int_equal(run("calibrate --gpu a100-pcie-40gb %s/public/energaizer/a100-pcie-40gb-dvfs-qwen2.csv "
                         "--kfold 2 --quiet -o k2.ini", dir), 0);
    assert_non_null(strstr(err_buf, "2-fold: 1 of 2 refits failed, their 21 rows unscored (fold 1: "
                                    "10 usable rows; at least 14 are needed"));
    assert_null(strstr(err_buf, "too few workloads"));
    /* the written preset is usable, intervals included */
    assert_int_equal(run("predict --gpu cal.ini --clock 900 --interval 95 --format csv"), 0);
    assert_non_null(strstr(out_buf, ",time_lo_ms,time_hi_ms,power_lo_w,power_hi_w,energy_lo_j,energy_hi_j"));
    assert_int_equal(shell("rm -f cal.ini"), 0);
    assert_int_equal(run("calibrate --gpu a100-pcie-40gb --in %s/measurements/a100-pcie-40gb-dvfs.csv "
                         "--holdout no-such-model -o cal.ini", dir), 2);
    assert_int_not_equal(access("cal.ini", F_OK), 0);
    /* --idle replaces the V-f table; --kfold reports cross-validated error */
    assert_int_equal(run("calibrate --gpu a100-pcie-40gb dvfs4.csv "
                         "--idle %s/gpu-tables/a100-sxm-80gb-idle.csv --kfold 3 --quiet -o cal.ini",
                         dir), 0);
    assert_non_null(strstr(err_buf, "3-fold cross-validated (64 rows)"));
    slurp("cal.ini", out_buf, sizeof out_buf);
    assert_non_null(strstr(out_buf, "derived by wattlas calibrate --idle"));
    assert_non_null(strstr(out_buf, "743.75"));   /* the SXM board's voltage floor */
    assert_null(strstr(out_buf, "693.75"));       /* the PCIe table is gone */
    /* --quiet drops the per-row lines but keeps which rows were left out
     * and why */
    assert_int_equal(shell("head -30 %s/measurements/a100-pcie-40gb-dvfs.csv > ex.csv && "
                           "sed -n 2,3p ex.csv | sed 's/bert-large/no-such-net/' >> ex.csv", dir), 0);
    assert_int_equal(run("calibrate --gpu a100-pcie-40gb ex.csv --quiet -o cal.ini"), 0);
    assert_non_null(strstr(err_buf, "excluded 2 of 31 rows: 2 unknown model 'no-such-net'"));
    assert_non_null(strstr(err_buf, "(first on line 31)"));
    assert_null(strstr(err_buf, "ex.csv:31: excluded"));
    assert_int_equal(run("calibrate --gpu a100-pcie-40gb ex.csv -o cal.ini"), 0);
    assert_non_null(strstr(err_buf, "ex.csv:31: excluded"));
    assert_int_equal(run("validate %s/measurements/a100-pcie-40gb-dvfs.csv --no-lomo --interval 90",
                         dir), 0);
    assert_non_null(strstr(err_buf, "90% prediction intervals cover the measurement"));
    assert_non_null(strstr(out_buf, ",predicted_energy_lo_j,predicted_energy_hi_j\n"));
}

static void test_sweep_pareto_optimize_cmds(void **state)
{
    (void)state;
    assert_int_equal(run("sweep --model gpt2,opt-1.3b --batch 8 --seq 128,512 --clock 510:1410:30 "
                         "--quiet -o sweep.csv"), 0);
    assert_int_equal(run("pareto --in sweep.csv"), 0);
    assert_non_null(strstr(out_buf, "gpu,model,batch,seq,dtype,attention,mode,scope,voltage_offset_mv,"));
    int front = count_lines(out_buf) - 1;
    assert_true(front >= 4 && front < 4 * 31); /* some per workload, not all */
    static char front_csv[sizeof out_buf];
    memcpy(front_csv, out_buf, sizeof front_csv);
    assert_int_equal(run("pareto sweep.csv"), 0); /* positional input */
    assert_string_equal(out_buf, front_csv);
    assert_int_equal(run("pareto sweep.csv --format ndjson"), 0);
    assert_int_equal(count_lines(out_buf), front);
    assert_non_null(strstr(out_buf, "\"batch\":8,"));
    assert_int_equal(run("optimize --in sweep.csv --objective energy"), 0);
    assert_int_equal(count_lines(out_buf), 5); /* header + 4 workloads */
    /* keyed by the sweep's own columns, so that a row joins back to it */
    assert_non_null(strstr(out_buf, ",mode,scope,voltage_offset_mv,objective,sm_clock_mhz,time_ms,power_w,energy_j,"
                                    "fastest_sm_clock_mhz,fastest_time_ms,fastest_energy_j,"
                                    "max_sm_clock_mhz,max_effective_clock_mhz,max_time_ms,max_energy_j,"
                                    "energy_saving_vs_fastest_pct,runtime_penalty_vs_fastest_pct,"
                                    "energy_saving_vs_max_clock_pct,runtime_penalty_vs_max_clock_pct,"
                                    "clock_within_1pct_min_mhz,clock_within_1pct_max_mhz\n"));
    /* the chosen clock lies in its flat band */
    for (int r = 1; r <= 4; r++) {
        double c = csv_get(out_buf, r, "sm_clock_mhz");
        assert_true(csv_get(out_buf, r, "clock_within_1pct_min_mhz") <= c);
        assert_true(csv_get(out_buf, r, "clock_within_1pct_max_mhz") >= c);
    }
    assert_int_equal(run("optimize sweep.csv --objective edp --format table"), 0);
    assert_int_equal(run("optimize --in sweep.csv"), 2);
    assert_int_equal(run("pareto --in sweep.csv --x no_such_col"), 2);
    assert_non_null(strstr(err_buf, "no_such_col"));
    assert_int_equal(run("sweep --spec /nonexistent.ini"), 1);
    /* shards (counted from 1) merge in any order to the unsharded file */
    assert_int_equal(run("sweep --model gpt2 --seq 128,512 --clock 510:1410:90 --shard 1/2 --quiet -o s1.csv"), 0);
    assert_int_equal(run("sweep --model gpt2 --seq 128,512 --clock 510:1410:90 --shard 2/2 --quiet -o s2.csv"), 0);
    assert_int_equal(run("merge s2.csv --in s1.csv -o m.csv"), 0);
    assert_int_equal(run("sweep --model gpt2 --seq 128,512 --clock 510:1410:90 --quiet -o full.csv"), 0);
    assert_int_equal(shell("cmp -s m.csv full.csv"), 0);
    assert_int_equal(run("merge s1.csv"), 1);
    assert_non_null(strstr(err_buf, "2 shards were given") ? strstr(err_buf, "2 shards")
                                                           : strstr(err_buf, "shard"));
    assert_int_equal(run("merge full.csv"), 1);
    /* a first shard of no rows cut to its shard line: an error naming it,
     * no crash, nothing left behind (issue 64 item 1) */
    for (int i = 1; i <= 3; i++)
        if (run("sweep --gpu h100-sxm-80gb --model gpt2 --clock 990,1980 --shard %d/3 --quiet "
                "-o e%d.csv", i, i))
            fail_msg("shard %d/3", i);
    assert_int_equal(shell("head -1 e1.csv > t1.csv"), 0);
    assert_int_equal(run("merge t1.csv e2.csv e3.csv -o em.csv"), 1);
    assert_non_null(strstr(err_buf, "t1.csv:2: no header line"));
    assert_int_equal(shell("ls | grep -q '^em.csv'"), 1);
    assert_int_equal(run("merge e1.csv e2.csv e3.csv -o em.csv"), 0);
    /* every format */
    const char *const fmts[] = {"csv", "ndjson", "json", "table"};
    for (int i = 0; i < 4; i++)
        if (run("sweep --model gpt2 --clock 900,1000 --quiet --format %s", fmts[i]) != 0)
            fail_msg("sweep --format %s", fmts[i]);
    assert_non_null(strstr(out_buf, "sm_clock_mhz effective_clock_mhz"));
    assert_int_equal(run("sweep --model gpt2 --clock 900,1000 --quiet --format json"), 0);
    assert_memory_equal(out_buf, "[\n  {\"gpu\": \"a100-pcie-40gb\"", 28);
    assert_non_null(strstr(out_buf, "}\n]\n"));
}

/* The unsafe inputs of the issue: a huge grouping field, a long field in a
 * kernel-scope schedule, non-finite and absurd numbers. */
static void test_hostile_tables(void **state)
{
    (void)state;
    assert_int_equal(run("sweep --model gpt2 --clock 510:1410:90 --quiet -o s.csv"), 0);
    /* a 100 KB model name in a grouping column */
    assert_int_equal(shell("awk -F, 'BEGIN{OFS=\",\"; s=\"m\"; for(i=0;i<17;i++) s=s s} "
                           "NR==1{print;next} {$2=s; print}' s.csv > long.csv"), 0);
    assert_int_equal(run("optimize --in long.csv --objective energy"), 0);
    assert_int_equal(count_lines(out_buf), 2);
    assert_true(strlen(out_buf) > 100000);
    assert_int_equal(run("pareto --in long.csv"), 0);
    /* a kernel-scope sweep with a long field, scheduled */
    assert_int_equal(run("sweep --model gpt2 --clock 510:1410:90 --kernels --quiet -o k.csv"), 0);
    assert_int_equal(run("optimize --in k.csv --schedule --objective energy"), 0);
    assert_int_equal(count_lines(out_buf), 2);
    assert_non_null(strstr(out_buf, "gemm="));
    assert_int_equal(shell("awk -F, 'BEGIN{OFS=\",\"; s=\"m\"; for(i=0;i<12;i++) s=s s} "
                           "NR==1{print;next} {$2=s; print}' k.csv > klong.csv"), 0);
    assert_int_equal(run("optimize --in klong.csv --schedule --objective energy"), 0);
    assert_int_equal(count_lines(out_buf), 2);
    assert_int_equal(run("optimize --in s.csv --schedule=class --objective energy"), 1);
    assert_non_null(strstr(err_buf, "--kernels"));
    /* without kernel classes the schedule is by phase, which a prefill lacks */
    assert_int_equal(run("optimize --in s.csv --schedule --objective energy"), 1);
    assert_non_null(strstr(err_buf, "--mode train or decode"));
    assert_int_equal(run("optimize --in s.csv --schedule=stage --objective energy"), 2);
    /* NaN and 1e308 are errors naming the line and column */
    assert_int_equal(shell("awk -F, 'BEGIN{OFS=\",\"} NR==3{$17=\"nan\"} {print}' s.csv > nan.csv"), 0);
    assert_int_equal(run("optimize --in nan.csv --objective energy"), 1);
    assert_non_null(strstr(err_buf, "nan.csv:3: energy_j"));
    assert_int_equal(shell("awk -F, 'BEGIN{OFS=\",\"} NR==4{$17=\"-1e308\"} {print}' s.csv > big.csv"), 0);
    assert_int_equal(run("optimize --in big.csv --objective energy"), 1);
    assert_non_null(strstr(err_buf, "big.csv:4: energy_j"));
    assert_int_equal(shell("awk -F, 'BEGIN{OFS=\",\"} NR==4{$17=\"1e308\"} {print}' s.csv > big2.csv"), 0);
    assert_int_equal(run("pareto --in big2.csv"), 1);
    /* outputs that once overflowed a 64-byte buffer are now refused at the input */
    test_write_file("thin.ini", "[gpu]\nid = thin\nsms = 108\n");
    assert_int_equal(run("sweep --model gpt2 --clock 900 --quiet --set dram_bw_gbs=1e-300"), 2);
}

/* Ctrl-C: the rows done so far, whole, go to FILE.partial beside the
 * file, which keeps what it held (a complete earlier output is never
 * replaced by a prefix); the exit status says interrupted. */
static void test_sweep_sigint(void **state)
{
    (void)state;
    test_write_file("int.csv", "an,earlier\ncomplete,output\n");
    assert_int_equal(shell("rm -f int.csv.partial; $W sweep --model gpt3-13b,llama-3-8b --batch 1,2,4,8,16 "
                           "--seq 512,1024,2048,4096 --set sms=80:140:1 --set l2_size_mb=10:80:1 --quiet -o int.csv & "
                           /* the signal once rows are being written (its handler is in
                            * place by then): a fixed 0.5 s came before it under
                            * AddressSanitizer, and the background job, started with
                            * SIGINT ignored, ran on for hours */
                           "pid=$!; i=0; while [ $i -lt 600 ] && "
                           "! [ -s \"$(ls int.csv.tmp.* 2>/dev/null | head -n 1)\" ]; "
                           "do sleep 0.1; i=$((i + 1)); done; "
                           "kill -INT $pid; wait $pid; test $? = 130"), 0);
    slurp("int.csv", out_buf, sizeof out_buf);
    assert_string_equal(out_buf, "an,earlier\ncomplete,output\n");
    slurp("int.csv.partial", out_buf, sizeof out_buf);
    assert_non_null(strstr(out_buf, "gpu,sms,l2_size_mb,model,"));
    FILE *f = fopen("int.csv.partial", "r");
    assert_non_null(f);
    fseek(f, -1, SEEK_END);
    assert_int_equal(fgetc(f), '\n'); /* the last row is whole */
    fclose(f);
}

static void test_report_and_plot_cmds(void **state)
{
    (void)state;
    test_write_file("study.ini", "[report]\ntitle = Tiny <study>\nobjective = energy\n[sweep]\n"
                                 "model = gpt3-125m, gpt2\nseq = 128, 512\nscope = layer\n"
                                 "clock = 510:1410:90\n");
    assert_int_equal(run("report --spec study.ini -o report --quiet"), 0);
    slurp("report/index.md", out_buf, sizeof out_buf);
    assert_non_null(strstr(out_buf, "# Tiny <study>"));
    /* it stands alone: headline, contents, captions, tables by column,
     * caveats, provenance with the spec inline, the commit and a time */
    assert_non_null(strstr(out_buf, "- **a100-pcie-40gb, bf16: "));
    assert_non_null(strstr(out_buf, "energy saved (median "));
    assert_non_null(strstr(out_buf, "Contents: [Figures](#figures)"));
    assert_non_null(strstr(out_buf, "| gpu | model | seq | clock (MHz) |"));
    assert_non_null(strstr(out_buf, "*Figure 1. Energy vs SM clock (log scale), a100-pcie-40gb, bf16"));
    assert_non_null(strstr(out_buf, "## Caveats\n\n- a100-pcie-40gb is calibrated on measurements"));
    assert_non_null(strstr(out_buf, "- command: `wattlas report --spec study.ini -o report --quiet`"));
    assert_non_null(strstr(out_buf, "title = Tiny <study>\nobjective = energy\n[sweep]\n"));
    assert_non_null(strstr(out_buf, "- GPU preset a100-pcie-40gb: fnv1a64:"));
    assert_non_null(strstr(out_buf, "- model preset gpt2: fnv1a64:"));
    const char *cm = strstr(out_buf, ", commit ");
    assert_non_null(cm);
    assert_true(cm[9] != '\n' && strncmp(cm + 9, "\n", 1));
    assert_non_null(strstr(out_buf, "- generated 20"));
    slurp("report/index.html", out_buf, sizeof out_buf);
    assert_non_null(strstr(out_buf, "<h1>Tiny &lt;study&gt;</h1>"));
    /* every link resolves: files exist, anchors exist */
    assert_int_equal(shell("cd report && grep -o 'href=\"[^\"#]*\"' index.html | sed 's/href=\"//;s/\"$//' | "
                           "sort -u > ../links.txt && test -s ../links.txt && "
                           "while read f; do test -f \"$f\" || { echo missing $f; exit 1; }; done < ../links.txt && "
                           "for a in $(grep -o 'href=\"#[^\"]*\"' index.html | sed 's/href=\"#//;s/\"$//'); do "
                           "grep -q \"id=\\\"$a\\\"\" index.html || { echo no anchor $a; exit 1; }; done"), 0);
    /* every CSV, PDF and SVG is linked */
    assert_int_equal(shell("cd report && for f in *.csv *.pdf *.svg; do "
                           "grep -q \"href=\\\"$f\\\"\" index.html || { echo unlinked $f; exit 1; }; done"), 0);
    const char *files[] = {"index.html", "sweep.csv", "pareto.csv", "optimal.csv", "savings.csv",
                           "energy-a100-pcie-40gb-bf16.png", "energy-a100-pcie-40gb-bf16.pdf",
                           "energy-a100-pcie-40gb-bf16.csv",
                           "pareto-a100-pcie-40gb-bf16.png", "heatmap-gpt2.png",
                           "parts-gpt2.pdf", "savings-a100-pcie-40gb-bf16.png",
                           "tradeoff-a100-pcie-40gb-bf16.svg"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char p[256];
        snprintf(p, sizeof p, "report/%s", files[i]);
        if (access(p, F_OK) != 0)
            fail_msg("report did not write %s", files[i]);
    }
    /* studies with set axes, several GPUs, a fixed voltage or kernel classes work too */
    test_write_file("set.ini", "[sweep]\ngpu = a100-pcie-40gb, a10-24gb\nmodel = gpt2, opt-1.3b\n"
                               "seq = 128, 512\nclock = 510:1410:150\n[set]\nsms = 84, 108, 132\n"
                               "power_limit_w = 200, 250\n");
    assert_int_equal(run("report set.ini -o rset --quiet"), 0);
    assert_int_equal(access("rset/parts-opt-1.3b.png", F_OK), 0);
    /* Pareto and savings figures for every GPU x precision, not the first only */
    assert_int_equal(shell("ls rset/pareto-a10-24gb-*.png rset/savings-a10-24gb-*.png "
                           "rset/pareto-a100-pcie-40gb-*.png >/dev/null"), 0);
    test_write_file("kern.ini", "[sweep]\nmodel = gpt2\nclock = 510:1410:300\nscope = kernel\n"
                                "voltage_mv = 800, 850\n");
    assert_int_equal(run("report kern.ini -o rkern --quiet"), 0);
    /* a study naming the modes: the training step's and the generation's
     * energy by phase, and one clock per phase */
    test_write_file("modes.ini", "[report]\nobjective = energy\n[sweep]\nmodel = gpt2\n"
                                 "batch = 4\nseq = 128\nmode = prefill, train, decode\ngen = 8\n"
                                 "clock = 510:1410:150\n");
    assert_int_equal(run("report modes.ini -o rmodes --quiet"), 0);
    assert_int_equal(access("rmodes/phases-train-gpt2.png", F_OK), 0);
    assert_int_equal(access("rmodes/phases-decode-gpt2.pdf", F_OK), 0);
    slurp("rmodes/schedules.csv", out_buf, sizeof out_buf);
    assert_int_equal(count_lines(out_buf), 3); /* header, train, decode: no prefill row */
    assert_non_null(strstr(out_buf, "forward="));
    assert_non_null(strstr(out_buf, "prefill="));
    slurp("rmodes/index.md", out_buf, sizeof out_buf);
    assert_non_null(strstr(out_buf, "## One clock per phase"));
    assert_non_null(strstr(out_buf, "Energy of a training step by phase"));
    /* plot's phase stack, and its errors */
    assert_int_equal(run("plot energy-freq rmodes/phases-train-gpt2.csv --stack=phases -o st.svg"), 0);
    assert_int_equal(run("plot energy-freq rmodes/phases-train-gpt2.csv --stack=layers -o st.svg"), 2);
    assert_int_equal(run("plot energy-freq report/parts-gpt2.csv --stack=phases -o st.svg"), 1);
    assert_non_null(strstr(err_buf, "energy_prefill_j"));
    /* a kind refuses the options it does not read; --legend and --objective
     * are checked */
    assert_int_equal(run("plot savings report/savings.csv --facet model -o x.png"), 2);
    assert_non_null(strstr(err_buf, "--facet: not an option of savings (its kind options: against)"));
    assert_int_equal(run("plot energy-freq report/sweep.csv --legend left -o x.png"), 2);
    assert_int_equal(run("plot energy-freq report/sweep.csv --objective fast -o x.png"), 2);
    assert_non_null(strstr(err_buf, "--objective"));
    assert_int_equal(run("plot energy-freq report/sweep.csv --facet model --legend inside "
                         "--objective energy-within-slowdown=5 -o ef.svg"), 0);
    assert_int_equal(run("plot pareto-norm report/sweep.csv --edp -o pn.pdf"), 0);
    /* a failing report leaves the directory as it was */
    test_write_file("bad.ini", "[report]\nobjective = speed\n[sweep]\nmodel = gpt2\n");
    assert_int_equal(shell("mkdir -p kept && echo mine > kept/note.txt"), 0);
    assert_int_equal(run("report bad.ini -o kept --quiet"), 1);
    assert_int_equal(shell("test \"$(ls kept)\" = note.txt"), 0);
    assert_int_equal(shell("ls -d kept.tmp.* 2>/dev/null | wc -l | grep -qx 0"), 0);
    assert_int_equal(run("report study.ini -o kept --quiet"), 0); /* adds, keeps note.txt */
    assert_int_equal(shell("test -f kept/note.txt && test -f kept/index.html"), 0);
    assert_int_equal(run("report study.ini -o kept/note.txt --quiet"), 1);
    /* plot from the report's CSVs, and its errors */
    assert_int_equal(run("plot energy-freq --in report/sweep.csv -o x.svg --size 4x3in --title T --panels time,energy"), 0);
    assert_int_equal(run("plot energy-freq report/sweep.csv -o x.svg --size 4x3"), 0);
    assert_int_equal(run("plot energy-freq --in report/sweep.csv -o x.svg --size big"), 2);
    assert_int_equal(run("plot energy-freq --in report/sweep.csv -o x.svg --stack"), 1);
    assert_non_null(strstr(err_buf, "single series"));
    assert_int_equal(run("plot pareto --in report/sweep.csv -o x.svg --facet model"), 0);
    assert_int_equal(run("plot pareto --in report/sweep.csv -o x.gif"), 2); /* a format it cannot write: usage (issue 63) */
    /* optimize's table holds one chosen point per group: not a front */
    assert_int_equal(run("optimize report/sweep.csv --objective energy -o chosen.csv"), 0);
    assert_int_equal(run("plot pareto chosen.csv -o x.svg"), 1);
    assert_non_null(strstr(err_buf, "chosen.csv:1: objective: plot pareto draws a table of "
                                    "operating points"));
    assert_int_equal(run("plot energy-freq chosen.csv -o x.svg"), 1);
    assert_int_equal(run("plot savings chosen.csv -o x.svg"), 0);
    assert_int_equal(run("plot pareto -o x.png"), 2);
    assert_int_equal(run("report --spec /nonexistent.ini -o x"), 1);
    assert_int_equal(run("report -o x"), 2);
}

/* Requests the power limit throttles onto one effective clock are one
 * point: pareto and optimize keep the lowest request that reaches it (the
 * front says up to which request it holds), --all keeps them all. Below
 * them, requests whose GEMMs alone the governor holds are points of their
 * own (the other kernels run at the request). */
static void test_throttle_collapse(void **state)
{
    (void)state;
    assert_int_equal(run("sweep --model opt-1.3b --batch 8 --seq 1024 -o t.csv"), 0);
    /* the throttled requests that share the most common effective clock */
    assert_int_equal(shell("awk -F, 'NR>1 && $14==1 {n[$11]++} END {m = 0; for (k in n) "
                           "if (n[k] > m) m = n[k]; print m}' t.csv > nthr.txt"), 0);
    slurp("nthr.txt", out_buf, sizeof out_buf);
    int thr = atoi(out_buf);
    assert_true(thr >= 5); /* the A100 PCIe throttles this workload near the top */
    assert_int_equal(run("optimize --in t.csv --objective energy --format csv"), 0);
    char note[128];
    snprintf(note, sizeof note, "note: %d throttled requests reach the operating point", thr - 1);
    assert_non_null(strstr(err_buf, note));
    /* fastest = the lowest throttled request reaching the top operating
     * point; the maximum clock's baseline is the top request, 1410, and
     * it ran where the governor held it */
    double fastest = csv_get(out_buf, 1, "fastest_sm_clock_mhz"),
           maxclk = csv_get(out_buf, 1, "max_sm_clock_mhz"),
           maxran = csv_get(out_buf, 1, "max_effective_clock_mhz");
    assert_true(fastest < 1410);
    assert_close(maxclk, 1410, 0);
    assert_true(maxran < 1410 && maxran <= fastest);
    assert_close(csv_get(out_buf, 1, "max_time_ms"), csv_get(out_buf, 1, "fastest_time_ms"), 0);
    assert_int_equal(run("pareto --in t.csv --format csv"), 0);
    assert_non_null(strstr(out_buf, ",same_point_up_to_mhz\n"));
    assert_non_null(strstr(out_buf, ",1410.0\n")); /* the last point holds up to 1410 */
    /* one row per effective clock (column 11) */
    assert_int_equal(shell("%s pareto --in t.csv --format csv 2>/dev/null | awk -F, 'NR>1{print $11}' | sort | "
                           "uniq -d | wc -l | grep -qx 0", bin), 0);
    assert_int_equal(run("pareto --in t.csv --all --format csv"), 0);
    assert_null(strstr(out_buf, "same_point_up_to_mhz"));
    assert_null(strstr(err_buf, "throttled requests"));
}

/* Each derived column comes from the row it names (issue 59): a request
 * folded into a lower one in an earlier group shifted every later row's
 * effective clock by one, and --all gave the requested clock instead. Group
 * b's maximum clock, 1410 MHz, ran at 1300 MHz. */
static void test_optimize_provenance(void **state)
{
    (void)state;
    test_write_file("prov.csv",
                    "gpu,model,sm_clock_mhz,effective_clock_mhz,voltage_mv,throttled,time_ms,"
                    "power_w,energy_j\n"
                    "g,a,1200,1100,800,1,2.0,100,0.2\n"
                    "g,a,1410,1100,800,1,2.0,100,0.2\n"
                    "g,b,600,600,700,0,5.0,50,0.25\n"
                    "g,b,1410,1300,850,1,3.0,120,0.36\n");
    const char *opts[] = {"", " --all"};
    for (int i = 0; i < 2; i++) {
        assert_int_equal(run("optimize prov.csv --objective energy --format csv%s", opts[i]), 0);
        assert_close(csv_get(out_buf, 1, "max_effective_clock_mhz"), 1100, 0);
        assert_close(csv_get(out_buf, 2, "sm_clock_mhz"), 600, 0);
        assert_close(csv_get(out_buf, 2, "max_sm_clock_mhz"), 1410, 0);
        assert_close(csv_get(out_buf, 2, "max_effective_clock_mhz"), 1300, 0);
        assert_close(csv_get(out_buf, 2, "max_time_ms"), 3.0, 0);
    }
}

/* The smaller findings of issue 59, each as a user met it. */
static void test_flags_and_footers(void **state)
{
    (void)state;
    /* a GPT-3 1.3B layer at 107-126 W on a 250 W board: its GEMMs' spikes
     * move the governor by thousandths of a MHz, which is not throttling */
    assert_int_equal(run("predict --gpu a100-pcie-40gb --model gpt3-1.3b --seq 128 --scope layer "
                         "--clock 1200:1410:30 --format csv"), 0);
    for (int i = 1; i <= 8; i++) {
        assert_close(csv_get(out_buf, i, "throttled"), 0, 0);
        assert_close(csv_get(out_buf, i, "effective_clock_mhz"),
                     csv_get(out_buf, i, "sm_clock_mhz"), 0);
    }
    /* a training step's memory warning names every part it sums */
    assert_int_equal(run("predict --gpu h100-sxm-80gb --model llama-3-8b --mode train --batch 1 "
                         "--seq 2048"), 0);
    const char *w = strstr(err_buf, "it needs ");
    assert_non_null(w);
    double total = atof(w + strlen("it needs ")), sum = 0;
    const char *names[] = {"weights ", "activations ", "fp32 master weights ", "gradients ",
                           "optimizer state ", "context and workspace "};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        const char *at = strstr(w, names[i]);
        assert_non_null(at);
        sum += atof(at + strlen(names[i]));
    }
    assert_true(fabs(sum - total) <= 0.35); /* six parts rounded to 0.1 GB */
    /* a limit below the board's lowest is refused, as nvidia-smi does */
    assert_int_equal(run("predict --gpu h100-sxm-80gb --set power_limit_w=100"), 2);
    assert_non_null(strstr(err_buf, "100 W is below the board's lowest limit, "
                                    "power_limit_min_w = 200 W"));
    /* optimize keeps each voltage offset a case of its own, with its column */
    assert_int_equal(run("sweep --gpu h100-sxm-80gb --model gpt2 --clock 510:1980:90 "
                         "--voltage-offset-mv 0,-50 -o vo.csv"), 0);
    assert_int_equal(run("optimize vo.csv --objective energy --format csv"), 0);
    assert_non_null(strstr(out_buf, ",voltage_offset_mv,objective,"));
    assert_close(csv_get(out_buf, 1, "voltage_offset_mv"), 0, 0);
    assert_close(csv_get(out_buf, 2, "voltage_offset_mv"), -50, 0);
    assert_true(csv_get(out_buf, 1, "max_energy_j") != csv_get(out_buf, 2, "max_energy_j"));
    /* predict's footer: the optimum and its 1% band read from the rows */
    assert_int_equal(run("predict --gpu h100-sxm-80gb --model gpt2 --clock 510:1980:30"), 0);
    const char *f = strstr(out_buf, "# energy-optimal requested clock: ");
    assert_non_null(f);
    double opt = atof(f + strlen("# energy-optimal requested clock: "));
    const char *b = strstr(f, "within 1% of it: ");
    assert_non_null(b);
    double lo = atof(b + strlen("within 1% of it: ")), hi = atof(strchr(b, '-') + 1);
    assert_true(lo <= opt && opt <= hi);
}

/* Memory: predict warns when the case does not fit its GPU, the outputs
 * carry memory_gb and fits, and optimize and pareto leave a point that
 * cannot run out unless --all. GPT-3 175B at batch 8 needs ~355 GB. */
static void test_memory_fits(void **state)
{
    (void)state;
    assert_int_equal(run("predict --gpu a30 --model gpt3-175b --batch 8 --format csv"), 0);
    assert_non_null(strstr(err_buf, "warning: gpt3-175b_bf16_b8_s128_prefill does not fit a30-24gb"));
    assert_non_null(strstr(out_buf, ",memory_gb,fits,energy_per_token_j\n"));
    double gb = csv_get(out_buf, 1, "memory_gb");
    assert_true(gb > 354 && gb < 356);
    assert_true(csv_get(out_buf, 1, "fits") == 0);
    assert_int_equal(run("predict --gpu a100-sxm-80gb --model gpt2 --format json"), 0);
    assert_null(strstr(err_buf, "does not fit"));
    assert_non_null(strstr(out_buf, "\"fits\": true"));
    /* llama-3-8b at b16 s2048 (~38 GB) fits an 80 GB A100, not a 24 GB A30 */
    assert_int_equal(run("sweep --gpu a30,a100-sxm-80gb --model llama-3-8b --batch 1,16 --seq 2048 "
                         "--clock 900:1400:100 -o m.csv"), 0);
    assert_non_null(strstr(err_buf, "note: 6 points need more memory than their GPU has"));
    assert_int_equal(run("optimize --in m.csv --objective energy --format csv"), 0);
    assert_non_null(strstr(err_buf, "note: 6 points need more memory"));
    /* the group that vanished whole is named */
    assert_non_null(strstr(err_buf, "note: no point of a30-24gb/llama-3-8b/16/2048/"));
    assert_int_equal(count_lines(out_buf), 1 + 3);
    assert_null(strstr(out_buf, "a30-24gb/llama-3-8b/16/"));
    assert_int_equal(run("optimize --in m.csv --objective energy --all --format csv"), 0);
    assert_int_equal(count_lines(out_buf), 1 + 4);
    assert_int_equal(run("pareto --in m.csv --format csv"), 0);
    assert_null(strstr(out_buf, "\na30-24gb,llama-3-8b,16,"));
    assert_int_equal(run("pareto --in m.csv --all --format csv"), 0);
    assert_non_null(strstr(out_buf, "\na30-24gb,llama-3-8b,16,"));
    /* a serving engine that does not fit says how many sequences would run:
     * the largest batch whose memory fits, and one more does not */
    assert_int_equal(run("predict --gpu h100-sxm-80gb --model llama-3-8b --mode decode "
                         "--launch graphs --batch 512 --seq 1024 --gen 512 --format csv"), 0);
    const char *note = strstr(err_buf, "paged cache holds ");
    assert_non_null(note);
    long long most = atoll(note + strlen("paged cache holds "));
    assert_true(most > 300 && most < 512);
    char cmdline[256];
    snprintf(cmdline, sizeof cmdline, "predict --gpu h100-sxm-80gb --model llama-3-8b --mode decode "
             "--launch graphs --batch %lld --seq 1024 --gen 512 --format csv", most);
    assert_int_equal(run(cmdline), 0);
    assert_null(strstr(err_buf, "does not fit"));
    snprintf(cmdline, sizeof cmdline, "predict --gpu h100-sxm-80gb --model llama-3-8b --mode decode "
             "--launch graphs --batch %lld --seq 1024 --gen 512 --format csv", most + 1);
    assert_int_equal(run(cmdline), 0);
    assert_non_null(strstr(err_buf, "does not fit"));
    /* compare says which GPU it does not fit */
    assert_int_equal(run("compare --gpu a30,a100-sxm-80gb --model llama-3-8b --batch 16 --seq 2048 "
                         "--format csv"), 0);
    assert_non_null(strstr(err_buf, "does not fit a30-24gb"));
    assert_null(strstr(err_buf, "does not fit a100-sxm-80gb"));
    /* a GPU written without a capacity: unknown, said so, cells empty */
    assert_int_equal(run("sweep --model gpt2 --clock 1410 --set mem_capacity_gb=0,1 --format csv"), 0);
    assert_non_null(strstr(out_buf, ",0.789,,0.006701\na100-pcie-40gb,1,gpt2,"));
    assert_non_null(strstr(out_buf, ",0.789,1,0.006701\n"));
}

/* Few-shot: four rows of a GPU with only transferred coefficients (A100
 * rows relabelled as an A30) calibrate by default with the transfer as the
 * prior, say which coefficients moved, write a preset that loads and names
 * its prior; validate --gpu FILE.ini then scores that GPU's rows only. */
static void test_few_shot_cmd(void **state)
{
    (void)state;
    REQUIRE_SHARED(dir);
    const char *m = "measurements/a100-pcie-40gb-900mhz.csv";
    assert_int_equal(shell("(head -1 %s/%s; sed -n '2p;30p;60p;90p' %s/%s | sed 's/^a100-pcie-40gb,/a30-24gb,/') "
                           "> few.csv", dir, m, dir, m), 0);
    assert_int_equal(shell("(head -1 %s/%s; sed -n '3,20p' %s/%s | sed 's/^a100-pcie-40gb,/a30-24gb,/'; "
                           "sed -n '21,25p' %s/%s) > rest.csv", dir, m, dir, m, dir, m), 0);
    assert_int_equal(run("calibrate --gpu a30-24gb few.csv -o a30-few.ini --quiet"), 0);
    assert_non_null(strstr(err_buf, "few-shot: prior transferred from a100-pcie-40gb"));
    assert_non_null(strstr(err_buf, "stay at the prior"));
    assert_int_equal(shell("grep -q '^few_shot = prior transferred from a100-pcie-40gb' a30-few.ini"), 0);
    assert_int_equal(shell("grep -q '^stderr_tc_eff = ' a30-few.ini"), 0);
    assert_int_equal(run("predict --gpu a30-few.ini --model gpt2 --interval 95 --format csv"), 0);
    assert_null(strstr(out_buf, "transferred"));
    assert_int_equal(run("validate rest.csv --gpu a30-few.ini --no-lomo -o v.csv"), 0);
    assert_non_null(strstr(err_buf, "on a30-24gb (18 rows scored"));
    assert_non_null(strstr(err_buf, "5 not modelled"));
    /* --fit gpu refuses four rows at one clock: every coefficient cannot come from them */
    assert_int_equal(run("calibrate --gpu a30-24gb --fit gpu few.csv -o x.ini --quiet"), 1);
    assert_non_null(strstr(err_buf, "cannot fit"));
}

/* compare goes on when one GPU cannot run the case: its row says why */
/* --quiet: the notes and summary lines go, warnings and output stay, on
 * every command that writes notes */
static void test_quiet(void **state)
{
    (void)state;
    /* a note (clocks outside the range) and a warning (a context past the
     * learned positions) */
    const char *sw = "--gpu a100-pcie-40gb --model gpt2 --seq 2048 --clock 900,1500";
    assert_int_equal(run("sweep %s", sw), 0);
    assert_non_null(strstr(err_buf, "note: a100-pcie-40gb sweeps the requested clocks"));
    assert_int_equal(run("sweep %s --quiet -o q.csv", sw), 0);
    assert_null(strstr(err_buf, "note:"));
    assert_non_null(strstr(err_buf, "warning: gpt2 has 1024 learned positions"));
    assert_int_equal(run("predict --gpu a100-pcie-40gb --model gpt2 --seq 2048 --quiet --format csv"), 0);
    assert_non_null(strstr(err_buf, "warning: gpt2 has 1024 learned positions"));
    assert_int_equal(count_lines(out_buf), 2);
    assert_int_equal(run("compare --gpu a100-pcie-40gb,v100-sxm2-32gb --model gpt2 --quiet"), 0);
    assert_null(strstr(err_buf, "note:"));
    /* pareto and optimize: throttled requests folded, said without --quiet */
    assert_int_equal(run("sweep --gpu a100-pcie-40gb --model bert-large --batch 32 --seq 512 "
                         "--clock 1200:1410:30 -o thr.csv"), 0);
    assert_int_equal(run("optimize thr.csv --objective energy"), 0);
    assert_non_null(strstr(err_buf, "note: "));
    assert_int_equal(run("optimize thr.csv --objective energy --quiet"), 0);
    assert_string_equal(err_buf, "");
    assert_int_equal(run("pareto thr.csv --quiet"), 0);
    assert_string_equal(err_buf, "");
    /* cluster search: the summary line */
    const char *cs = "cluster search --model gpt3-1.3b --nodes 1 --global-batch 16 --max-micro-batch 2";
    assert_int_equal(run("%s", cs), 0);
    assert_non_null(strstr(err_buf, "configurations of gpt3-1.3b"));
    assert_int_equal(run("%s --quiet", cs), 0);
    assert_string_equal(err_buf, "");
    assert_true(count_lines(out_buf) > 2);
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
    assert_int_equal(shell("mkdir -p beside/measurements beside/gpu-tables beside/traces"), 0);
    char buf[8192];
    snprintf(buf, sizeof buf, "%s%s%s%s", MEAS_HEADER,
             "NVIDIA A10,gpt2,1,128,bf16,prefill,eager,900,900,8.0,0.2,25.0,40\n",
             "a10-24gb,tiny-net,8,,fp32,inference,eager,900,900,1.0,0.03,30.0,40\n",
             "NVIDIA A10,google/vit-large-patch16-224,8,,bfloat16,forward,,900,900,50.0,4.0,80.0,40\n");
    test_write_file("beside/measurements/a10.csv", buf);
    size_t n = (size_t)snprintf(buf, sizeof buf, "sm_clock_mhz,voltage_mv,idle_power_w\n");
    for (int f = 210; f <= 1695; f += 15)
        n += (size_t)snprintf(buf + n, sizeof buf - n, "%d,,%.2f\n", f, 15.0 + 0.005 * f);
    test_write_file("beside/gpu-tables/a10-24gb-idle.csv", buf);
    test_write_file("beside/traces/tiny-net_bf16_b8_inference.json",
        "[[{\"batch\":1,\"dimM\":4096,\"dimN\":1024,\"dimK\":1024,\"precM\":\"bf16\",\"precA\":\"bf16\","
        "\"useTensorCore\":true},[\"gemm\",\"tc\",\"bf16_bf16\"]],"
        "[{\"dim\":4194304,\"op\":\"typecast_to_fp32\",\"prec\":\"bf16\"},[\"elementwise\"]]]");
    assert_int_equal(run("validate beside/measurements/a10.csv --no-lomo"), 0);
    assert_non_null(strstr(err_buf, "a10-24gb uses the measured idle table"));
    assert_non_null(strstr(err_buf, "use traces from beside/traces"));
    assert_non_null(strstr(err_buf, "3 rows scored"));
    /* a hub model id, a framework dtype, "forward", an empty attention */
    assert_true(predicted_power("\nNVIDIA A10,google/vit-large-patch16-224,") > 0);
    double p_table = predicted_power("\nNVIDIA A10,gpt2,");
    assert_true(predicted_power("\na10-24gb,tiny-net,") > 0);
    assert_int_equal(run("validate beside/measurements/a10.csv --no-lomo --no-beside"), 0);
    assert_null(strstr(err_buf, "idle table"));
    assert_non_null(strstr(err_buf, "unknown model 'tiny-net' and no trace"));
    double p_rule = predicted_power("\nNVIDIA A10,gpt2,");
    assert_true(p_table > 0 && p_rule > 0);
    /* the table's idle at 900 MHz is 19.5 W, the rule's about 40 W */
    assert_true(p_rule - p_table > 10.0);
    /* --idle names the GPU when the file has several */
    snprintf(buf, sizeof buf, "%s%s%s", MEAS_HEADER,
             "a10-24gb,gpt2,1,128,bf16,prefill,eager,900,900,8.0,0.4,50.0,40\n",
             "l4-24gb,gpt2,1,128,bf16,prefill,eager,900,900,8.0,0.3,37.5,40\n");
    test_write_file("beside/measurements/two.csv", buf);
    assert_int_equal(run("validate beside/measurements/two.csv --no-lomo "
                         "--idle beside/gpu-tables/a10-24gb-idle.csv"), 2);
    assert_non_null(strstr(err_buf, "ID=TABLE.csv"));
    assert_int_equal(run("validate beside/measurements/two.csv --no-lomo --no-beside "
                         "--idle l4=beside/gpu-tables/a10-24gb-idle.csv"), 0);
    assert_non_null(strstr(err_buf, "l4-24gb uses the measured idle table"));
    assert_null(strstr(err_buf, "a10-24gb uses"));
}

/* make install gives a library other programs link through pkg-config:
 * examples/predict.c finds the clock predict finds. */
static void test_install(void **state)
{
    (void)state;
#ifdef WATTLAS_BUILD_DIR
    if (strcmp(WATTLAS_BUILD_DIR, "build") != 0) {
        fprintf(stderr, "SKIP test_install: an instrumented build (%s)\n", WATTLAS_BUILD_DIR);
        skip();
    }
#endif
    assert_int_equal(shell("make -s -C '%s' install PREFIX=\"$PWD/prefix\" >install.log 2>&1", root), 0);
    assert_int_equal(shell("test -f prefix/lib/libwattlas.a && test -f prefix/include/wattlas.h && "
                           "test -f prefix/include/wattlas/core/wattlas_core.h && "
                           "test -x prefix/bin/wattlas"), 0);
    assert_int_equal(shell("export PKG_CONFIG_PATH=$PWD/prefix/lib/pkgconfig; "
                           "cc -std=c11 -Wall -Wextra -Werror '%s/examples/predict.c' "
                           "$(pkg-config --cflags --libs wattlas) -o predict-example && "
                           "./predict-example > example.out", root), 0);
    slurp("example.out", out_buf, sizeof out_buf);
    assert_non_null(strstr(out_buf, "gpt2_bf16_b8_s512_prefill: energy-optimal SM clock "));
    char want[200];
    const char *at = strstr(out_buf, "clock ");
    double mhz = atof(at + 6);
    snprintf(want, sizeof want, "energy-optimal requested clock: %.0f MHz", mhz);
    assert_int_equal(run("predict --model gpt2 --batch 8 --seq 512 --clock 210:1410:15"), 0);
    assert_non_null(strstr(out_buf, want));
}

/* Output vocabulary: model ids in their obvious spellings, --scope decoder
 * as layer, the scope column, kernel FLOPs with digits to divide. */
static void test_spellings_scope_flops(void **state)
{
    (void)state;
    assert_int_equal(run("predict --model gpt3-13b --clock 900 --format csv"), 0);
    char want[4096];
    snprintf(want, sizeof want, "%.4095s", out_buf);
    assert_int_equal(run("predict --model gpt-3-13b --clock 900 --format csv"), 0);
    assert_string_equal(out_buf, want);
    assert_int_equal(run("predict --model GPT3-13B --clock 900 --format csv"), 0);
    assert_string_equal(out_buf, want);
    assert_int_equal(run("predict --model gpt-313b --clock 900 --format csv"), 0);
    assert_string_equal(out_buf, want);
    assert_int_equal(run("predict --model gpt-4 --clock 900"), 2);
    assert_non_null(strstr(want, ",mode,scope,voltage_offset_mv,"));
    assert_non_null(strstr(want, ",eager,prefill,model,"));
    assert_int_equal(run("predict --model gpt3-13b --scope layer --clock 900 --format csv"), 0);
    snprintf(want, sizeof want, "%.4095s", out_buf);
    assert_non_null(strstr(want, ",eager,prefill,layer,"));
    assert_int_equal(run("predict --model gpt3-13b --scope decoder --clock 900 --format csv"), 0);
    assert_string_equal(out_buf, want);
    assert_int_equal(run("sweep --model resnet-101 --scope decoder --clock 900 --format csv"), 0);
    assert_non_null(strstr(out_buf, ",prefill,model,")); /* no decoder layer: the whole pass */
    assert_int_equal(run("predict --model gpt2 --scope block"), 2);
    /* a GEMM class of GPT-2 small: 2 x 124M params x 128 tokens ~ 21.7 GFLOP;
     * the softmax's few FLOPs are not rounded into a TFLOP column */
    assert_int_equal(run("predict --model gpt2 --kernels --format csv"), 0);
    assert_non_null(strstr(out_buf, ",class_gflop,"));
    double g = csv_get(out_buf, 1, "class_gflop");
    assert_true(g > 20 && g < 23);
    assert_non_null(strstr(out_buf, ",gemm,48,"));
    const char *bg = strstr(out_buf, "batched_gemm,24,");
    assert_non_null(bg);
    /* 3 significant digits: 0.604, not 0.000604 in TFLOP */
    const char *f = bg;
    for (int k = 0; k < 5; k++)
        f = strchr(f, ',') + 1;
    assert_true(f[0] == '0' && f[1] == '.' && f[2] != '0' && strchr(f, ',') - f == 5);
}

/* The power limit has one spelling in every command (issue 79, item 6):
 * --power-limit-w is the preset key power_limit_w, the same rows as --set
 * power_limit_w= in predict, sweep and serve; cluster takes its older
 * --power-limits with a note; a near miss suggests it, not its opposite
 * (--power-limt once suggested --no-power-limit). */
static void test_power_limit_spelling(void **state)
{
    (void)state;
    static char want[1 << 20];
    const char *cmds[] = {"predict --model gpt2 --clock 1410", "sweep --model gpt2 --clock 1410",
                          "serve --requests 40 --max-num-seqs 8"};
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        assert_int_equal(run("%s --set power_limit_w=200,250 --format csv --quiet", cmds[i]), 0);
        snprintf(want, sizeof want, "%s", out_buf);
        assert_non_null(strstr(want, "power_limit_w"));
        assert_int_equal(run("%s --power-limit-w 200,250 --format csv --quiet", cmds[i]), 0);
        assert_string_equal(out_buf, want);
    }
    assert_int_equal(run("compare --gpu a100-pcie-40gb,h100-sxm-80gb --model gpt2 "
                         "--power-limit-w 200 --format csv --quiet"), 0);
    assert_int_equal(run("predict --model gpt2 --power-limt 300"), 2);
    assert_non_null(strstr(err_buf, "did you mean --power-limit-w?"));
    assert_int_equal(run("cluster --model gpt3-1.3b --power-limits 300 --format csv"), 0);
    assert_non_null(strstr(err_buf, "--power-limits is --power-limit-w"));
    snprintf(want, sizeof want, "%s", out_buf);
    assert_int_equal(run("cluster --model gpt3-1.3b --power-limit-w 300 --format csv"), 0);
    assert_string_equal(out_buf, want);
    assert_null(strstr(err_buf, "--power-limits is"));
}

/* A report of gpt2 over two GPUs at two clocks: its index.md in out_buf. */
static void report_of(const char *name, const char *gpus, const char *clocks)
{
    char path[64];
    snprintf(path, sizeof path, "%s.ini", name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fprintf(f, "[report]\ntitle = %s\n[sweep]\ngpu = %s\nmodel = gpt2\nclock = %s\n", name, gpus,
            clocks);
    fclose(f);
    assert_int_equal(run("report %s -o %s-out --quiet", path, name), 0);
    snprintf(path, sizeof path, "%s-out/index.md", name);
    slurp(path, out_buf, sizeof out_buf);
}

/* A report over two presets of one die says that their difference is
 * partly the two boards' (issue 79, item 3); over two dies it does not. */
static void test_report_same_die(void **state)
{
    (void)state;
    report_of("die", "h100-sxm-80gb,h200-sxm-141gb", "990,1980");
    assert_non_null(strstr(out_buf, "h100-sxm-80gb and h200-sxm-141gb share a die"));
    report_of("dies", "a100-sxm-80gb,h100-sxm-80gb", "990,1410");
    assert_null(strstr(out_buf, "share a die"));
}

int main(void)
{
    if (cli_setup("test_cli"))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_runtime_errors),
        cmocka_unit_test(test_outputs),
        cmocka_unit_test(test_predict_outputs),
        cmocka_unit_test(test_validate_rows),
        cmocka_unit_test(test_presets_cmd),
        cmocka_unit_test(test_trace_predict),
        cmocka_unit_test(test_calibrate_cmd),
        cmocka_unit_test(test_sweep_pareto_optimize_cmds),
        cmocka_unit_test(test_hostile_tables),
        cmocka_unit_test(test_sweep_sigint),
        cmocka_unit_test(test_report_and_plot_cmds),
        cmocka_unit_test(test_throttle_collapse), cmocka_unit_test(test_optimize_provenance),
        cmocka_unit_test(test_flags_and_footers),
        cmocka_unit_test(test_memory_fits),
        cmocka_unit_test(test_few_shot_cmd),
        cmocka_unit_test(test_quiet),
        cmocka_unit_test(test_validate_beside),
        cmocka_unit_test(test_install),
        cmocka_unit_test(test_spellings_scope_flops),
        cmocka_unit_test(test_power_limit_spelling),
        cmocka_unit_test(test_report_same_die),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
