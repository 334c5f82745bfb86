/* Tests of cli/ for more than one GPU or phase: clusters, hosts, GPUs side
 * by side, the MPI sweep, training and decode commands. Every command runs
 * in this test's own temporary directory. */
#include "test_cli.h"
#include "../results/wattlas_results.h"

static void test_cluster_cmd(void **state)
{
    (void)state;
    assert_int_equal(run("cluster --model gpt3-1.3b --tp 2 --pp 2 --format csv"), 0);
    assert_non_null(strstr(out_buf, "time_s,energy_j,power_w,tflops_per_gpu,mfu,bubble_s,imbalance_pct,"
                                    "tp_comm_exposed_s,pp_comm_exposed_s,dp_comm_exposed_s,"
                                    "ep_comm_exposed_s,memory_gb,fits"));
    assert_int_equal(count_lines(out_buf), 2);
    assert_non_null(strstr(out_buf, ",1f1b,none,uniform,1,"));
    /* expert parallelism: the ep column, and usage errors that name it */
    assert_int_equal(run("cluster --system dgx-h100 --nodes 2 --model mixtral-8x7b --tp 2 --pp 1 "
                         "--dp 8 --ep 8 --global-batch 8 --seq 1024 --format csv"), 0);
    assert_non_null(strstr(out_buf, ",zero,ep,cp,schedule,"));
    assert_non_null(strstr(out_buf, ",0,8,1,1f1b,"));
    assert_int_equal(run("cluster --model gpt3-1.3b --dp 8 --ep 2"), 2);
    assert_non_null(strstr(err_buf, "ep"));
    assert_int_equal(run("cluster --model mixtral-8x7b --dp 8 --ep 3"), 2);
    assert_int_equal(run("cluster --model mixtral-8x7b --capacity-factor 0"), 2);
    assert_int_equal(run("predict --model mixtral-8x7b"), 2);
    assert_non_null(strstr(err_buf, "experts"));
    /* partitions: the layers per stage, a list echoed, bad lists usage errors */
    assert_int_equal(run("cluster --model gpt3-1.3b --pp 4 --partition 3,7,7,7 --stages --format csv"), 0);
    assert_non_null(strstr(out_buf, "stage,layers,fwd_clock_mhz,"));
    assert_non_null(strstr(out_buf, "\n0,3,"));
    assert_non_null(strstr(out_buf, "\n3,7,"));
    assert_int_equal(run("cluster --model gpt3-1.3b --pp 4 --partition 3,7,7,7 --format csv"), 0);
    assert_null(strstr(out_buf, ",3,7,7,7,")); /* a CSV cell with commas is quoted */
    assert_non_null(strstr(out_buf, ",\"3,7,7,7\","));
    assert_int_equal(run("cluster --model gpt3-1.3b --pp 4 --partition 3,7,7"), 2);
    assert_non_null(strstr(err_buf, "--partition"));
    assert_int_equal(run("cluster --model gpt3-1.3b --pp 4 --partition 0,8,8,8"), 2);
    assert_int_equal(run("cluster --model gpt3-1.3b --pp 4 --partition even"), 2);
    assert_int_equal(run("cluster --model gpt2 --pp 8 --partition balanced --format csv"), 0);
    assert_int_equal(run("cluster --system server-4x-a100-pcie-80gb --model gpt3-1.3b --pp 4 "
                         "--micro-batch 8 --all --optimize energy --format csv"), 0);
    assert_non_null(strstr(out_buf, ",saving_vs_fixed_pct,balanced_fixed_clock_mhz,"
                                    "saving_vs_balanced_pct,computation_saving_pct,"
                                    "computation_slowdown_pct,energy_scope\n"));
    /* the uniform split's plan against balanced stages at one clock */
    assert_true(csv_get(out_buf, 1, "saving_vs_balanced_pct") <
                csv_get(out_buf, 1, "energy_saving_pct"));
    assert_true(csv_get(out_buf, 1, "imbalance_pct") > 10);
    /* a row per power limit, the limit first */
    assert_int_equal(run("cluster --system server-4x-a100-pcie-80gb --model gpt3-1.3b --pp 4 "
                         "--micro-batch 8 --all --power-limits 150:300:50 --format csv"), 0);
    assert_int_equal(count_lines(out_buf), 5);
    assert_true(strncmp(out_buf, "power_limit_w,system,model,", 27) == 0);
    assert_true(csv_get(out_buf, 1, "time_s") > csv_get(out_buf, 4, "time_s"));
    assert_int_equal(run("cluster --power-limits 300 --stages"), 2);
    assert_int_equal(run("cluster --power-limits 0"), 2);
    assert_int_equal(run("cluster search --power-limits 300"), 2);
    /* the caps' frontier beside the plans': kind cap rows after the plans,
     * power_limit_w last, the 300 W cap (the board's own) the baseline */
    assert_int_equal(run("cluster --system server-4x-a100-pcie-80gb --model gpt3-1.3b --pp 4 "
                         "--micro-batch 8 --all --frontier --max-slowdown-pct 40 --power-limits "
                         "150:300:50 --format csv"), 0);
    const char *cap = strstr(out_buf, ",cap,");
    assert_non_null(cap);
    assert_non_null(strstr(cap, ",0.00,0.00,gpu,,300\n"));
    assert_null(strstr(cap, ",plan,"));
    assert_non_null(strstr(out_buf, ",clocks_mhz,power_limit_w\n"));
    /* a limit per stage: the capped stage's clocks fall */
    assert_int_equal(run("cluster --system server-4x-a100-pcie-80gb --model gpt3-1.3b --pp 4 "
                         "--micro-batch 8 --stage-power-limits 300,150,300,300 --stages "
                         "--format csv"), 0);
    assert_true(csv_get(out_buf, 2, "bwd_clock_mhz") < csv_get(out_buf, 1, "bwd_clock_mhz"));
    assert_int_equal(run("cluster --pp 4 --stage-power-limits 300,150,300"), 2);
    assert_non_null(strstr(err_buf, "3 limits for 4 pipeline stages"));
    assert_int_equal(run("cluster --pp 4 --stage-power-limits 300,0,300,300"), 2);
    assert_int_equal(run("cluster --pp 4 --stage-power-limits 300,300,300,300 --power-limits 200"), 2);
    /* per stage, and the timeline as trace events */
    assert_int_equal(run("cluster --model gpt3-1.3b --tp 2 --pp 4 --stages --format csv "
                         "--timeline tl.json"), 0);
    assert_int_equal(count_lines(out_buf), 5);
    assert_int_equal(shell("grep -q '\"ph\": \"X\"' tl.json"), 0);
    /* impossible configurations and unknown presets are usage errors */
    assert_int_equal(run("cluster --tp 3"), 2);
    assert_int_equal(run("cluster --model gpt2 --pp 8"), 2); /* 12 layers */
    assert_non_null(strstr(err_buf, "--pp"));
    assert_int_equal(run("cluster --system nope"), 2);
    assert_int_equal(run("cluster --clock 99999"), 2);
    assert_int_equal(run("cluster --set nic_gbps=-1"), 2);
    assert_int_equal(run("cluster --schedule fancy"), 2);
    assert_int_equal(run("cluster --vp 2 --pp 2 --global-batch 6"), 2);
    /* more nodes: the network draws power */
    assert_int_equal(run("cluster --model gpt3-1.3b --nodes 2 --tp 8 --format csv"), 0);
    assert_int_equal(run("presets show dgx-h100"), 0);
    assert_non_null(strstr(out_buf, "gpu = h100-sxm-80gb"));
    /* decode on many GPUs: a generation's first-token time and per-token time */
    assert_int_equal(run("cluster --model llama-3-8b --mode decode --tp 2 --pp 2 --global-batch 8 "
                         "--micro-batch 4 --seq 128 --gen 8 --format csv"), 0);
    assert_non_null(strstr(out_buf, ",gen,ttft_s,tpot_ms"));
    assert_non_null(strstr(out_buf, ",decode,"));
    assert_int_equal(run("cluster --mode decode --gen 0"), 2);
    /* the frontier of clock plans, and its timeline drawn */
    assert_int_equal(run("cluster --model gpt3-1.3b --tp 2 --pp 4 --frontier --max-slowdown-pct 5 "
                         "--format csv"), 0);
    assert_non_null(strstr(out_buf, "point,kind,sm_clock_mhz,time_s,energy_j,slowdown_pct,"
                                    "energy_saving_pct,energy_scope,clocks_mhz"));
    assert_non_null(strstr(out_buf, ",gpu,"));
    assert_true(count_lines(out_buf) > 3);
    /* a plan per stage, its savings of the GPUs' energy by default or of
     * the whole cluster's; the nodes' power over a longer iteration makes
     * the second smaller */
    double save[2];
    for (int k = 0; k < 2; k++) {
        assert_int_equal(run("cluster --model gpt3-1.3b --tp 2 --pp 4 --optimize energy "
                             "--max-slowdown-pct 1 --energy-scope %s --format csv", k ? "all" : "gpu"), 0);
        assert_non_null(strstr(out_buf, ",energy_saving_pct,slowdown_pct,best_fixed_clock_mhz,"
                                        "saving_vs_fixed_pct,balanced_fixed_clock_mhz,"
                                        "saving_vs_balanced_pct,computation_saving_pct,"
                                        "computation_slowdown_pct,energy_scope\n"));
        const char *row = strchr(out_buf, '\n') + 1;
        const char *last = strrchr(row, ',');
        assert_non_null(strstr(last, k ? "all" : "gpu"));
        save[k] = csv_get(out_buf, 1, "energy_saving_pct");
        assert_true(save[k] > 0);
    }
    assert_true(save[0] > save[1]);
    assert_int_equal(run("cluster --optimize energy --energy-scope node"), 2);
    assert_non_null(strstr(err_buf, "--energy-scope"));
    assert_int_equal(run("cluster search --energy-scope gpu"), 2);
    assert_int_equal(run("plot timeline tl.json -o tl.svg"), 0);
    assert_int_equal(shell("test -s tl.svg"), 0);
    assert_int_equal(run("plot timeline nope.json -o tl.svg"), 1);
    /* a frontier whose plans end sooner than the throttled top clocks says so */
    assert_int_equal(run("cluster --system server-4x-a100-pcie-80gb --model gpt3-1.3b --pp 4 "
                         "--micro-batch 8 --all --set power_limit_w=200 --frontier"), 0);
    assert_non_null(strstr(out_buf, "sooner than every GPU at its top clock"));
    /* and one whose limit holds no stage says nothing (at the server's own
     * 300 W the stages throttled from the top end later than all at 1380
     * MHz, where none is throttled: the note is due there too) */
    assert_int_equal(run("cluster --system server-4x-a100-pcie-80gb --model gpt3-1.3b --pp 4 "
                         "--micro-batch 8 --all --set power_limit_w=400 --frontier"), 0);
    assert_null(strstr(out_buf, "sooner than"));
    /* search: the front on stdout, every row in the file; shards merge to it */
    assert_int_equal(run("cluster search --model gpt3-1.3b --global-batch 16 -o all.csv"), 0);
    assert_non_null(strstr(out_buf, "fastest"));
    assert_non_null(strstr(err_buf, "configurations of gpt3-1.3b on 8 GPUs"));
    for (int i = 1; i <= 3; i++)
        assert_int_equal(run("cluster search --model gpt3-1.3b --global-batch 16 --shard %d/3 "
                             "--threads 2 -o part%d.csv", i, i), 0);
    assert_int_equal(run("merge part2.csv part3.csv part1.csv -o merged.csv"), 0);
    assert_int_equal(shell("cmp -s merged.csv all.csv"), 0);
    assert_int_equal(run("cluster search --model gpt3-1.3b --global-batch 32 --shard 1/3 -o other.csv"), 0);
    assert_int_equal(run("merge other.csv part2.csv part3.csv -o merged.csv"), 1);
    /* each command's own options */
    assert_int_equal(run("cluster search --tp 2"), 2);
    assert_non_null(strstr(err_buf, "--max-tp"));
    assert_int_equal(run("cluster --max-tp 2"), 2);
    assert_int_equal(run("cluster search --schedule 1f1b,fancy"), 2);
    assert_int_equal(run("cluster search --model gpt3-1.3b --schedule 1f1b --recompute none,full "
                         "--max-tp 2 --format csv"), 0);
}

/* Field col (0-based) of data row `row` (1 = the first after the header). */
/* --host: a launch-bound prediction follows the host's issue cost, a
 * compute-bound one barely moves; presets list names hosts; calibrate fits
 * just the host from launch-bound rows and the written preset loads. */
static void test_host_cmds(void **state)
{
    (void)state;
    const char *small = "predict --model gpt2 --batch 1 --seq 128 --clock 1410 --format csv";
    const char *big = "predict --model opt-1.3b --batch 8 --seq 2048 --clock 1410 --format csv";
    assert_int_equal(run("%s", small), 0);
    double t_small = csv_get(out_buf, 1, "time_ms");
    FILE *fh = fopen("quick.ini", "w"); /* a host issuing at 10 us per kernel */
    assert_non_null(fh);
    fputs("[host]\nid = quick\nname = a quick host\nlaunch_us = 10\n", fh);
    fclose(fh);
    assert_int_equal(run("%s --host quick.ini", small), 0);
    double t_small_fast = csv_get(out_buf, 1, "time_ms");
    assert_int_equal(run("%s", big), 0);
    double t_big = csv_get(out_buf, 1, "time_ms");
    assert_int_equal(run("%s --host hgx-h100", big), 0);
    double t_big_fast = csv_get(out_buf, 1, "time_ms");
    if (!(t_small_fast < 0.75 * t_small && fabs(t_big_fast / t_big - 1) < 0.005))
        fail_msg("launch-bound %.3f -> %.3f ms, compute-bound %.3f -> %.3f ms", t_small,
                 t_small_fast, t_big, t_big_fast);
    assert_int_equal(run("predict --host nosuch"), 2);
    assert_non_null(strstr(err_buf, "--host: no host preset 'nosuch'"));
    assert_int_equal(run("sweep --host a100-calib-host,server-2023"), 2);
    assert_int_equal(run("presets list --format csv"), 0);
    assert_non_null(strstr(out_buf, "\nhost,server-2023,"));
    assert_non_null(strstr(out_buf, "\ngpu,h100-sxm-80gb,"));
    assert_int_equal(run("presets show hgx-h100"), 0);
    assert_non_null(strstr(out_buf, "launch_us = "));
    /* four launch-bound rows measured on a host slower than server-2023
     * claims (made by the model itself with --set host_launch_us=20, on
     * today's stack: the column says so, as the harness writes it) */
    FILE *f = fopen("few.csv", "w");
    assert_non_null(f);
    fprintf(f, "%.*s,stack\n", (int)strlen(MEAS_HEADER) - 1, MEAS_HEADER);
    const char *models[] = {"gpt2", "opt-1.3b"};
    for (int m = 0; m < 2; m++)
        for (int c = 0; c < 2; c++) {
            double mhz = c ? 1830 : 1200;
            assert_int_equal(run("sweep --gpu h100-sxm-80gb --model %s --batch 1 --seq 128 "
                                 "--clock %.0f --set host_launch_us=20 --format csv",
                                 models[m], mhz), 0);
            double eff = csv_get(out_buf, 1, "effective_clock_mhz"),
                   t = csv_get(out_buf, 1, "time_ms");
            double pw = csv_get(out_buf, 1, "power_w");
            fprintf(f, "h100-sxm-80gb,%s,1,128,bf16,prefill,eager,%.0f,%.1f,%.6f,%.6f,%.4f,,hf5\n",
                    models[m], mhz, eff, t, t * pw * 1e-3, pw);
        }
    fclose(f);
    assert_int_equal(run("calibrate --gpu h100-sxm-80gb --fit host few.csv -o fast.ini --quiet"), 0);
    assert_non_null(strstr(err_buf, "host server-2023: issue cost "));
    assert_non_null(strstr(err_buf, " us per kernel of a model -> 20.0"));
    /* no bare-op row: that cost is not fitted, and not written */
    assert_null(strstr(err_buf, "bare op"));
    assert_int_equal(run("presets list"), 0); /* the file is no built-in */
    assert_int_equal(run("%s --host fast.ini", small), 0);
    assert_int_equal(shell("grep -q '^id = fast$' fast.ini && grep -q '^launch_us = 20' fast.ini"), 0);
    assert_int_equal(shell("grep -q '^op_launch_us' fast.ini"), 1);

    /* Time-only rows (launch overhead timed without a power counter: energy
     * and power empty), made by the model with both issue costs set: a bare
     * op in a loop (a one-kernel trace, repeated) and a model's forward.
     * validate scores their time alone; --fit host recovers each cost from
     * its own kind of row. */
    assert_int_equal(shell("mkdir -p tr"), 0);
    f = fopen("tr/k-tiny-add-1024_bf16_b1_prefill.json", "w");
    assert_non_null(f);
    fputs("[[{\"dim\": 1024, \"op\": \"pointwise_add\", \"prec\": \"bf16\"}, "
          "[\"elementwise\"]]]\n", f);
    fclose(f);
    f = fopen("tonly.csv", "w");
    assert_non_null(f);
    fputs(MEAS_HEADER, f);
    for (int c = 0; c < 3; c++) {
        double mhz = 510 + 735 * c;
        assert_int_equal(run("sweep --gpu h100-sxm-80gb --trace tr/k-tiny-add-1024_bf16_b1_prefill.json "
                             "--clock %.0f --set host_op_launch_us=7 --format csv", mhz), 0);
        double t_op = csv_get(out_buf, 1, "time_ms");
        /* the bare op pays its own issue cost, not a model kernel's */
        if (!(t_op > 0.007 && t_op < 0.0095))
            fail_msg("bare op at %.0f MHz: %.5f ms, expected 7 us + the GPU's launch cycles",
                     mhz, t_op);
        assert_int_equal(run("sweep --gpu h100-sxm-80gb --model gpt2 --batch 1 --seq 8 --clock %.0f "
                             "--set host_launch_us=40 --format csv", mhz), 0);
        double t_model = csv_get(out_buf, 1, "time_ms");
        fprintf(f, "h100-sxm-80gb,k-tiny-add-1024,1,,bf16,prefill,eager,%.0f,%.0f,%.8f,,,\n"
                   "h100-sxm-80gb,gpt2,1,8,bf16,prefill,eager,%.0f,%.0f,%.8f,,,\n",
                mhz, mhz, t_op, mhz, mhz, t_model);
    }
    fclose(f);
    assert_int_equal(run("validate --gpu h100-sxm-80gb tonly.csv --traces tr --no-lomo"), 0);
    assert_non_null(strstr(err_buf, "(6 rows scored"));
    /* a list of directories: the first that has a row's trace gives it */
    assert_int_equal(run("validate --gpu h100-sxm-80gb tonly.csv --traces nowhere,tr --no-lomo"), 0);
    assert_non_null(strstr(err_buf, "(6 rows scored, 3 from traces"));
    assert_non_null(strstr(err_buf, "(rows of time only)"));
    assert_int_equal(count_lines(out_buf), 7);
    assert_true(csv_get(out_buf, 1, "predicted_power_w") > 0); /* predicted, not scored */
    assert_int_equal(run("calibrate --gpu h100-sxm-80gb --fit host tonly.csv --traces tr "
                         "-o both.ini --quiet"), 0);
    assert_non_null(strstr(err_buf, "per kernel of a bare op in a loop -> "));
    assert_non_null(strstr(err_buf, "per kernel of a model -> "));
    wl_core_host hb;
    wl_error herr = {0};
    assert_int_equal(wl_preset_host_load("both.ini", &hb, &herr), WL_OK);
    /* the weak prior (centred on 30 us, a factor e^2 wide) pulls three rows
     * each by ~0.2% and ~1% */
    assert_close(hb.launch_us, 40, 0.4);
    assert_close(hb.op_launch_us, 7, 0.15);
    /* a row with power but no energy takes energy from power x time */
    f = fopen("pw.csv", "w");
    assert_non_null(f);
    fprintf(f, "%sa100-pcie-40gb,gpt2,8,128,bf16,prefill,eager,1410,1410,10.0,,200,\n", MEAS_HEADER);
    fclose(f);
    assert_int_equal(run("validate pw.csv --no-lomo"), 0);
    assert_null(strstr(err_buf, "time only"));
    /* --host-out only with a joint fit; a joint fit needs it */
    assert_int_equal(run("calibrate --gpu h100-sxm-80gb --fit gpu,host few.csv -o g.ini"), 2);
    assert_int_equal(run("calibrate --gpu h100-sxm-80gb --fit host --host-out h.ini few.csv -o g.ini"), 2);
    assert_int_equal(run("calibrate --gpu h100-sxm-80gb --fit warp_speed few.csv -o g.ini"), 2);
    assert_non_null(strstr(err_buf, "warp_speed"));
}

/* Several GPUs in one sweep: each sweeps its own clock grid (the H100 up to
 * 1980 MHz whichever GPU is listed first), a --clock list is clipped to each
 * GPU's range with a note, and shards of the uneven grid merge to the whole. */
static void test_multi_gpu_clocks(void **state)
{
    (void)state;
    for (int order = 0; order < 2; order++) {
        assert_int_equal(run("sweep --gpu %s --model gpt2 --format csv",
                             order ? "h100-sxm-80gb,a100-sxm-80gb" : "a100-sxm-80gb,h100-sxm-80gb"), 0);
        assert_non_null(strstr(out_buf, "\nh100-sxm-80gb,gpt2,1,128,bf16,eager,prefill,model,0.0,1980.0,"));
        assert_non_null(strstr(out_buf, "\na100-sxm-80gb,gpt2,1,128,bf16,eager,prefill,model,0.0,1410.0,"));
        assert_null(strstr(out_buf, "\na100-sxm-80gb,gpt2,1,128,bf16,eager,prefill,model,0.0,1425.0,"));
        /* 81 A100 clocks (210-1410 by 15) and 110 H100 clocks (345-1980 by 15) */
        assert_int_equal(count_lines(out_buf), 1 + 81 + 110);
    }
    assert_int_equal(run("sweep --gpu a100-sxm-80gb,h100-sxm-80gb --model gpt2 --clock 1200:1980:60 "
                         "--format csv"), 0);
    assert_int_equal(count_lines(out_buf), 1 + 4 + 14);
    assert_non_null(strstr(err_buf, "a100-sxm-80gb sweeps the requested clocks within its range "
                                    "210-1410 MHz; 10 outside it are left out"));
    assert_null(strstr(err_buf, "h100-sxm-80gb sweeps"));
    assert_int_equal(run("sweep --gpu a100-sxm-80gb --model gpt2 --clock 1500:1980:60"), 2);
    assert_non_null(strstr(err_buf, "no requested clock lies in a100-sxm-80gb's range"));
    const char *g = "sweep --gpu a100-sxm-80gb,h100-sxm-80gb --model gpt2,bert-large --batch 1,8";
    assert_int_equal(run("%s -o full.csv", g), 0);
    for (int i = 1; i <= 3; i++)
        assert_int_equal(run("%s --shard %d/3 -o s%d.csv", g, i, i), 0);
    assert_int_equal(run("merge s1.csv s2.csv s3.csv -o merged.csv"), 0);
    assert_int_equal(shell("cmp -s full.csv merged.csv"), 0);
}

static void test_compare_not_runnable(void **state)
{
    (void)state;
    assert_int_equal(run("compare --gpu a100-pcie-40gb,v100-sxm2-32gb,h100-sxm-80gb --model gpt2 "
                         "--clock 1500 --format csv"), 0);
    assert_int_equal(count_lines(out_buf), 4);
    assert_non_null(strstr(out_buf, "\na100-pcie-40gb,gpt2,1,128,bf16,eager,prefill,,,,,,,,,,,,,,,,,,,0.789,1,own,"
                                    "1500 MHz is outside a100-pcie-40gb's range 210-1410 MHz"));
    assert_non_null(strstr(out_buf, "v100-sxm2-32gb has no bf16 math"));
    assert_non_null(strstr(out_buf, "\nh100-sxm-80gb,gpt2,1,128,bf16,eager,prefill,1500.0,1500.0,"));
    assert_non_null(strstr(err_buf, "note: v100-sxm2-32gb cannot run this case"));
    /* fp16 runs on the V100 */
    assert_int_equal(run("compare --gpu v100-sxm2-32gb --model gpt2 --dtype fp16 --format csv"), 0);
    assert_non_null(strstr(out_buf, ",transferred from a100-pcie-40gb,\n"));
    assert_int_equal(run("compare --gpu v100-sxm2-32gb --model gpt2 --format csv"), 1);
    assert_non_null(strstr(err_buf, "no GPU can run this case"));
    assert_int_equal(run("compare --gpu a100-pcie-40gb,v100-sxm2-32gb --model gpt2 --clock 3000"), 2);
}

/* compare: the optimum agrees with a clock scan through predict, and is no
 * worse than the maximum clock; transferred GPUs are marked. */
static void test_compare_cmd(void **state)
{
    (void)state;
    assert_int_equal(run("compare --gpu a100-pcie-40gb,h800-sxm-80gb --model gpt2 --batch 8 "
                         "--seq 512 --format csv"), 0);
    assert_int_equal(count_lines(out_buf), 3);
    assert_non_null(strstr(out_buf, "gpu,model,batch,seq,dtype,attention,mode,sm_clock_mhz,"
                                    "effective_clock_mhz,time_ms,power_w,energy_j,energy_per_token_j,"
                                    "opt_sm_clock_mhz,"));
    assert_non_null(strstr(out_buf, ",transferred from h100-sxm-80gb,\n"));
    assert_non_null(strstr(out_buf, "\na100-pcie-40gb,")); /* the first row */
    double energy = csv_get(out_buf, 1, "energy_j"), opt_mhz = csv_get(out_buf, 1, "opt_sm_clock_mhz");
    double opt_j = csv_get(out_buf, 1, "opt_energy_j"), max_j = csv_get(out_buf, 1, "max_energy_j");
    assert_true(opt_j <= max_j);
    assert_true(opt_j <= energy);
    /* per prompt token: batch 8 x seq 512 of them */
    assert_close(csv_get(out_buf, 1, "energy_per_token_j"), energy / 4096, 1e-5);
    assert_close(csv_get(out_buf, 1, "opt_energy_per_token_j"), opt_j / 4096, 1e-5);
    assert_null(strstr(out_buf, "tpot_ms")); /* decode only */
    assert_int_equal(run("predict --model gpt2 --batch 8 --seq 512 --clock 210:1410:15 --format csv"), 0);
    double best_j = 1e300, best_mhz = 0;
    for (const char *q = strstr(out_buf, "\na100"); q; q = strstr(q + 1, "\na100")) {
        const char *c = q + 1;
        double col[20];
        for (int k = 0; k < 19; k++) {
            c = strchr(c, ',') + 1;
            col[k] = atof(c);
        }
        /* col[8] sm_clock_mhz, col[15] energy_j */
        if (col[15] < best_j * (1 - 1e-12)) {
            best_j = col[15];
            best_mhz = col[8];
        }
    }
    assert_close(opt_mhz, best_mhz, 0);
    assert_close(opt_j, best_j, 1e-5);
    /* with --interval, each point lies inside its interval, the requested
     * point's and the chosen one's, and the other columns are unchanged */
    assert_int_equal(run("compare --gpu a100-pcie-40gb --model gpt2 --batch 8 --seq 512 "
                         "--interval 95 --format csv"), 0);
    assert_non_null(strstr(out_buf, ",energy_j,energy_per_token_j,time_lo_ms,time_hi_ms,power_lo_w,"
                                    "power_hi_w,energy_lo_j,energy_hi_j,opt_sm_clock_mhz,"));
    assert_non_null(strstr(out_buf, ",opt_energy_j,opt_energy_per_token_j,opt_time_lo_ms,opt_time_hi_ms,opt_power_lo_w,"
                                    "opt_power_hi_w,opt_energy_lo_j,opt_energy_hi_j,max_sm_clock_mhz,"));
#define W(name) csv_get(out_buf, 1, name)
    assert_close(W("energy_j"), energy, 1e-9);
    assert_close(W("opt_sm_clock_mhz"), opt_mhz, 0);
    assert_true(W("time_lo_ms") < W("time_ms") && W("time_ms") < W("time_hi_ms"));
    assert_true(W("energy_lo_j") < W("energy_j") && W("energy_j") < W("energy_hi_j"));
    assert_true(W("opt_time_lo_ms") < W("opt_time_ms") && W("opt_time_ms") < W("opt_time_hi_ms"));
    assert_true(W("opt_energy_lo_j") < W("opt_energy_j") && W("opt_energy_j") < W("opt_energy_hi_j"));
#undef W
    /* decode: per generated token (batch 2 x gen 16) and the time per
     * further token, from the decode phase's 15 steps */
    assert_int_equal(run("compare --gpu a100-pcie-40gb,h100-sxm-80gb --model gpt2 --mode decode "
                         "--batch 2 --gen 16 --format csv"), 0);
    assert_non_null(strstr(out_buf, "\nh100-sxm-80gb,")); /* the second row */
    assert_close(csv_get(out_buf, 2, "energy_per_token_j"), csv_get(out_buf, 2, "energy_j") / 32, 1e-5);
    assert_true(csv_get(out_buf, 2, "tpot_ms") > 0 &&
                csv_get(out_buf, 2, "tpot_ms") < csv_get(out_buf, 2, "time_ms") / 15);
    assert_true(csv_get(out_buf, 2, "opt_tpot_ms") >= csv_get(out_buf, 2, "tpot_ms"));
    assert_int_equal(run("compare --gpu a100-pcie-40gb --interval 0"), 2);
    assert_int_equal(run("compare --gpu a100-pcie-40gb,l40s-48gb --model bert-large"), 0);
    assert_non_null(strstr(out_buf, "transferred from a100-pcie-40gb"));
    assert_int_equal(run("compare --gpu a100-pcie-40gb,l40s-48gb --objective "
                         "energy-within-slowdown=5 --format json"), 0);
    assert_non_null(strstr(out_buf, "\"opt_sm_clock_mhz\": "));
    /* plot compare reads compare's CSV */
    assert_int_equal(run("compare --gpu a100-pcie-40gb,h100-sxm-80gb,a10-24gb --model gpt2 --format csv "
                         "-o cmp.csv"), 0);
    assert_int_equal(run("plot compare --in cmp.csv -o cmp.svg"), 0);
    slurp("cmp.svg", out_buf, sizeof out_buf);
    assert_non_null(strstr(out_buf, "<svg"));
    assert_int_equal(run("plot compare --in nonexistent.csv -o x.svg"), 1);
    /* validate scores each GPU's rows on its own preset, transferred or not */
    char buf[1024];
    snprintf(buf, sizeof buf, "%s%s%s", MEAS_HEADER,
             "h800-sxm-80gb,gpt2,8,512,bf16,prefill,eager,1830,1830,10.0,3.0,300,60\n",
             "a100-pcie-40gb,gpt2,8,512,bf16,prefill,eager,900,900,19.0,3.0,158,60\n");
    test_write_file("2gpu.csv", buf);
    assert_int_equal(run("validate 2gpu.csv --no-lomo --interval 95"), 0);
    assert_non_null(strstr(err_buf, "on h800-sxm-80gb, coefficients transferred (1 rows scored"));
    assert_non_null(strstr(err_buf, "on a100-pcie-40gb (1 rows scored"));
    assert_non_null(strstr(err_buf, "all GPUs (2 rows scored"));
    assert_null(strstr(out_buf, ",,,,")); /* both predicted, with intervals */
    /* voltage as a design parameter in a sweep: at a 600 mV floor the A10
     * cannot run 1000 MHz (alpha-power f_max 966 MHz), at 720 mV it can */
    assert_int_equal(run("sweep --gpu a10-24gb --model gpt2 --clock 900,1000 --set vmin_mv=600,720 --quiet"), 0);
    assert_non_null(strstr(out_buf, "\na10-24gb,600,gpt2,1,128,bf16,eager,prefill,model,0.0,900.0,900.0,600.0,1,"));
    assert_non_null(strstr(out_buf, "\na10-24gb,600,gpt2,1,128,bf16,eager,prefill,model,0.0,1000.0,1000.0,600.0,0,"));
    assert_non_null(strstr(out_buf, "\na10-24gb,720,gpt2,1,128,bf16,eager,prefill,model,0.0,1000.0,1000.0,720.0,1,"));
    /* energy-check */
    assert_int_equal(run("energy-check --gpu a100-sxm-80gb --dtype bf16 --format csv"), 0);
    assert_int_equal(count_lines(out_buf), 2);
    /* by hand at 7 nm: the add is an int32 add into the 16-product dot and a
     * sixteenth of an fp32 add, 0.03 + 0.38 / 16 = 0.05375; arith (0.21 +
     * 0.05375) / 2 = 0.131875; the residual 1.28259 - 0.131875 - 0.19040 =
     * 0.96032; (0.131875 + 0.19040) / 1.28259 = 25.1% */
    assert_non_null(strstr(out_buf, "\na100-sxm-80gb,bf16,tensor,7,1410,311.87,400,1.2826,0.2100,"
                                    "0.0537,0.1319,0.4352,0.1904,0.9603,25.1,8192,"));
    assert_int_equal(run("energy-check --gpu v100-sxm2-32gb"), 0);
    assert_non_null(strstr(out_buf, "fp16"));
    /* a list, as compare and sweep take one: each GPU's rows as alone,
     * in order; an error on any leaves nothing written */
    static char one[1 << 16];
    assert_int_equal(run("energy-check --gpu a100-sxm-80gb --dtype bf16 --format csv"), 0);
    snprintf(one, sizeof one, "%.65535s", out_buf);
    assert_int_equal(run("energy-check --gpu h100-sxm-80gb --dtype bf16 --format csv"), 0);
    const char *h = strchr(out_buf, '\n') + 1;
    size_t ol = strlen(one);
    static char both[1 << 17];
    snprintf(both, sizeof both, "%.65535s%.65535s", one, h);
    assert_int_equal(run("energy-check --gpu a100-sxm-80gb,h100-sxm-80gb --dtype bf16 --format csv"), 0);
    assert_string_equal(out_buf, both);
    assert_true(ol > 0);
    assert_int_equal(run("energy-check --gpu a100-sxm-80gb,h100-sxm-80gb --dtype fp8 -o ec.csv"), 2);
    assert_int_equal(access("ec.csv", F_OK), -1);
}

/* mpirun -np 2 bin/wattlas-mpi sweep writes what bin/wattlas sweep writes,
 * byte for byte, in every format and for a shard. */
static void test_mpi(void **state)
{
    (void)state;
#ifdef WATTLAS_MPI_BIN_PATH
    char mpi[4096];
    const char *rel = getenv("WATTLAS_MPI_BIN") ? getenv("WATTLAS_MPI_BIN") : WATTLAS_MPI_BIN_PATH;
    if (shell("command -v mpirun >/dev/null 2>&1") != 0 || !realpath_in(rel, mpi)) {
        fprintf(stderr, "SKIP test_mpi: Open MPI or bin/wattlas-mpi not found (make mpi)\n");
        skip();
    }
    const char *grid = "sweep --model gpt2,opt-1.3b --batch 1,8 --seq 128,512 --dtype bf16,fp32 "
                       "--clock 510:1410:90 --set sms=84,108 --set power_limit_w=150,250 "
                       "--voltage-offset-mv -50,0 --quiet";
    /* under make asan: Open MPI's own allocations are suppressed
     * (tests/lsan.supp), which needs its components loaded and full stacks */
    setenv("OMPI_MCA_mca_base_component_disable_dlclose", "1", 1);
    char asan[512];
    snprintf(asan, sizeof asan, "fast_unwind_on_malloc=0%s%s", getenv("ASAN_OPTIONS") ? ":" : "",
             getenv("ASAN_OPTIONS") ? getenv("ASAN_OPTIONS") : "");
    setenv("ASAN_OPTIONS", asan, 1);
    const char *fmts[3] = {"csv", "ndjson", "json"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(shell("$W %s --format %s > one.out", grid, fmts[i]), 0);
        for (int np = 2; np <= 3; np++)
            if (shell("mpirun --allow-run-as-root --oversubscribe -np %d %s %s --format %s "
                      "> many.out 2>mpi.err && cmp -s one.out many.out", np, mpi, grid, fmts[i]))
                fail_msg("mpirun -np %d: --format %s differs from the one-process run", np,
                         fmts[i]);
    }
    assert_int_equal(shell("$W %s --shard 2/3 -o one.csv && mpirun --allow-run-as-root "
                           "--oversubscribe -np 2 %s %s --shard 2/3 -o many.csv 2>mpi.err && "
                           "cmp -s one.csv many.csv", grid, mpi, grid), 0);
    /* a usage error is one */
    assert_int_equal(shell("mpirun --allow-run-as-root --oversubscribe -np 2 %s sweep --batch 0 "
                           ">/dev/null 2>&1", mpi) != 0, 1);
#else
    skip();
#endif
}

/* Training and decode from the command line: the phase columns add up to
 * the step, the decode columns are there, a sweep lists its modes, and bad
 * values are usage errors naming the option. */
static void test_train_decode_cmds(void **state)
{
    (void)state;
    assert_int_equal(run("predict --model gpt2 --batch 4 --seq 256 --mode train --format csv"), 0);
    assert_non_null(strstr(out_buf, ",mode,"));
    assert_non_null(strstr(out_buf, ",time_fwd_ms,time_bwd_ms,time_opt_ms,energy_fwd_j,energy_bwd_j,"
                                    "energy_opt_j,micro_batches,model_tflop,hardware_tflop,mfu,"));
    assert_non_null(strstr(out_buf, ",eager,train,"));
    double t = csv_get(out_buf, 1, "time_ms");
    double sum = csv_get(out_buf, 1, "time_fwd_ms") + csv_get(out_buf, 1, "time_bwd_ms") +
                 csv_get(out_buf, 1, "time_opt_ms");
    assert_close(sum, t, 1e-4);
    assert_close(csv_get(out_buf, 1, "micro_batches"), 1, 0);
    double mfu = csv_get(out_buf, 1, "mfu");
    assert_true(mfu > 0.01 && mfu < 0.8);
    assert_int_equal(run("predict --model gpt2 --mode decode --gen 16 --launch graphs --format csv"), 0);
    assert_non_null(strstr(out_buf, ",ttft_ms,tpot_ms,energy_per_token_j,kv_cache_gb,"));
    assert_int_equal(run("sweep --model gpt2 --mode prefill,train --clock 900 --format csv"), 0);
    assert_non_null(strstr(out_buf, ",eager,prefill,"));
    assert_non_null(strstr(out_buf, ",eager,train,"));
    assert_int_equal(run("predict --model gpt2 --mode decode --gen 0"), 2);
    assert_non_null(strstr(err_buf, "--gen"));
    assert_int_equal(run("predict --model gpt2 --mode fly"), 2);
    assert_int_equal(run("predict --model gpt2 --mode train --recompute some"), 2);
    assert_int_equal(run("predict --model resnet-101 --mode train"), 2);
    assert_non_null(strstr(err_buf, "mode"));
    assert_int_equal(run("predict --model bert-large --mode decode"), 2);
    /* --kernels rows keep the decode cells in their columns: the class
     * columns come after them */
    assert_int_equal(run("predict --model gpt2 --mode decode --gen 4 --kernels --format csv"), 0);
    assert_non_null(strstr(out_buf, ",energy_decode_j,kernel_class,"));
    assert_true(csv_get(out_buf, 1, "ttft_ms") > 0);
    assert_non_null(strstr(out_buf, ",gemm,"));
    /* one clock per phase: forward/backward/optimizer and prefill/decode;
     * the schedule never loses to the best fixed clock */
    assert_int_equal(run("sweep --model gpt2 --batch 4 --seq 256 --mode train --grad-accum 2 "
                         "--clock 510:1410:90 --quiet -o tr.csv"), 0);
    assert_int_equal(run("optimize --in tr.csv --schedule --objective energy"), 0);
    assert_int_equal(count_lines(out_buf), 2);
    assert_non_null(strstr(out_buf, "forward="));
    assert_non_null(strstr(out_buf, ";optimizer="));
    double fixed_e = csv_get(out_buf, 1, "fixed_energy_j"),
           sched_e = csv_get(out_buf, 1, "schedule_energy_j");
    assert_true(sched_e <= fixed_e);
    assert_true(csv_get(out_buf, 1, "extra_saving_pct") >= 0);
    assert_int_equal(run("sweep --model gpt2 --mode decode --gen 8 --launch graphs "
                         "--clock 510:1410:90 --quiet -o dec.csv"), 0);
    assert_int_equal(run("optimize --in dec.csv --schedule=phase --objective "
                         "energy-within-slowdown=10"), 0);
    assert_non_null(strstr(out_buf, "prefill="));
    assert_non_null(strstr(out_buf, ";decode="));
    assert_true(csv_get(out_buf, 1, "slowdown_pct") <= 10.0 + 1e-9); /* within budget vs fixed */
    /* pareto and optimize read the modes' tables like any other */
    assert_int_equal(run("pareto --in tr.csv"), 0);
    assert_true(count_lines(out_buf) >= 2);
    assert_int_equal(run("optimize --in dec.csv --objective energy"), 0);
    assert_non_null(strstr(out_buf, "decode"));
    /* compare takes a mode too */
    assert_int_equal(run("compare --gpu a100-sxm-80gb,h100-sxm-80gb --model gpt2 --mode train "
                         "--batch 4 --seq 256 --format csv"), 0);
    assert_int_equal(count_lines(out_buf), 3);
    assert_non_null(strstr(out_buf, ",train,"));
}

/* compare takes a trace as recorded: a one-kernel trace is a kernel run
 * back to back (its repeated flag), a profile's gaps are the host's own
 * time. Its time at a clock is predict's (before, compare evaluated a copy
 * that had lost both flags: 40% slower on the H200 Llama profile). */
static void test_compare_trace(void **state)
{
    (void)state;
    FILE *f = fopen("one-add.json", "w");
    assert_non_null(f);
    fputs("[[{\"dim\": 4096, \"op\": \"pointwise_add\", \"prec\": \"bf16\"}, [\"elementwise\"]]]\n", f);
    fclose(f);
    const char *traces[2] = {"one-add.json", NULL};
    char prof[4200] = "";
    const char *dir = test_shared_data();
    if (dir)
        snprintf(prof, sizeof prof, "%s/profiles/h200-sxm-141gb/"
                 "llama-3-8b_decode_b8_s1024_bf16_sdpa_1980mhz.json.gz", dir);
    if (dir && access(prof, R_OK) == 0)
        traces[1] = prof;
    else
        fprintf(stderr, "SKIP %s, the profile's half: ../shared/data not found\n", __func__);
    for (int i = 0; i < 2 && traces[i]; i++) {
        const char *gpu = i ? "h200-sxm-141gb" : "a100-pcie-40gb";
        assert_int_equal(run("predict --gpu %s --trace %s --clock 900 --format csv", gpu, traces[i]), 0);
        double t = csv_get(out_buf, 1, "time_ms");
        assert_int_equal(run("compare --gpu %s --trace %s --clock 900 --format csv", gpu, traces[i]), 0);
        assert_close(csv_get(out_buf, 1, "time_ms"), t, 1e-6);
    }
}

/* A serving study through report: serve.csv, the figure and an index whose
 * best points are the least energy per token of each max_num_seqs in
 * serve.csv, with the saving against that engine's highest clock; serve's
 * -o FILE.csv writes CSV; a bad key names the study file and its line. */
static void test_serve_report(void **state)
{
    (void)state;
    test_write_file("serve.ini", "[report]\ntitle = Serving <study>\n[serve]\n"
                                 "max-num-seqs = 8,16\nclock = 990,1980\nrequests = 96\n"
                                 "async_scheduling = on\n");
    assert_int_equal(run("report serve.ini -o srep --quiet"), 0);
    const char *const files[] = {"index.md", "index.html", "serve.csv", "serve-front.csv",
                                 "serve-front.png", "serve-front.pdf", "serve-front.svg"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char p[64];
        snprintf(p, sizeof p, "srep/%s", files[i]);
        if (access(p, F_OK))
            fail_msg("report did not write %s", files[i]);
    }
    wl_results_table *t = NULL;
    wl_error err = {0};
    assert_int_equal(wl_results_table_load("srep/serve.csv", &t, &err), WL_OK);
    assert_int_equal(wl_results_table_rows(t), 4);
    static char md[1 << 16];
    slurp("srep/index.md", md, sizeof md);
    assert_non_null(strstr(md, "# Serving <study>"));
    int sc = wl_results_table_col(t, "max_num_seqs"), cc = wl_results_table_col(t, "sm_clock_mhz"),
        ec = wl_results_table_col(t, "energy_per_token_j");
    for (int seqs = 8; seqs <= 16; seqs *= 2) {
        double emin = INFINITY, etop = NAN;
        const char *best = NULL;
        for (size_t r = 0; r < 4; r++) {
            double s, c, e;
            assert_int_equal(wl_results_table_num(t, r, sc, &s, &err), WL_OK);
            assert_int_equal(wl_results_table_num(t, r, cc, &c, &err), WL_OK);
            assert_int_equal(wl_results_table_num(t, r, ec, &e, &err), WL_OK);
            if ((int)s != seqs)
                continue;
            if (c == 1980)
                etop = e;
            if (e < emin) {
                emin = e;
                best = wl_results_table_cell(t, r, ec);
            }
        }
        char row[200];
        snprintf(row, sizeof row, "| %d | ", seqs);
        const char *at = strstr(md, row);
        assert_non_null(at);
        const char *eol = strchr(at, '\n');
        char line[400];
        snprintf(line, sizeof line, "%.*s", (int)(eol - at), at);
        assert_non_null(strstr(line, best));
        char saved[32];
        snprintf(saved, sizeof saved, "%.1f%%", (1 - emin / etop) * 100);
        assert_non_null(strstr(line, saved));
    }
    wl_results_table_free(t);
    /* what cannot run is said before anything is written */
    assert_int_equal(run("serve --model gpt2"), 1);
    assert_non_null(strstr(err_buf, "1024 learned positions"));
    assert_string_equal(out_buf, "");
    /* -o FILE.csv is CSV without --format */
    assert_int_equal(run("serve --prompt-tokens 64 --output-tokens 16 --requests 8 -o s.csv --quiet"), 0);
    slurp("s.csv", md, sizeof md);
    assert_true(!strncmp(md, "gpu,system,gpus,tp,ep,dp,model,", 31));
    /* bad input: the file, the line, the key; nothing written */
    test_write_file("bad.ini", "[serve]\nmax_num_seqs = 8\nmax-num-sqes = 4\n");
    assert_int_equal(run("report bad.ini -o brep --quiet"), 1);
    assert_non_null(strstr(err_buf, "bad.ini:3"));
    assert_non_null(strstr(err_buf, "max_num_seqs"));
    assert_int_not_equal(access("brep", F_OK), 0);
    test_write_file("bad2.ini", "[serve]\nmax_num_seqs = 0\n[sweep]\nmodel = gpt2\n");
    assert_int_equal(run("report bad2.ini -o brep --quiet"), 1);
    assert_non_null(strstr(err_buf, "bad2.ini:2"));
    assert_int_equal(run("report serve.ini -o srep2 --learned x.json --quiet"), 2);
    /* measured serving rows: validate predicts each as serve runs it (the
     * predicted columns are serve's own numbers for the row's settings),
     * and scores them */
    assert_int_equal(run("serve --prompt-tokens 128 --output-tokens 32 --requests 64 "
                         "--max-num-seqs 8 --clock 1410 --format csv"), 0);
    wl_results_table *sv = NULL;
    assert_int_equal(wl_results_table_load_mem(out_buf, strlen(out_buf), "serve", &sv, &err), WL_OK);
    const char *itl = wl_results_table_cell(sv, 0, wl_results_table_col(sv, "median_itl_ms"));
    const char *ept = wl_results_table_cell(sv, 0, wl_results_table_col(sv, "energy_per_token_j"));
    char meas[600];
    snprintf(meas, sizeof meas,
             "gpu,model,dtype,prompt_tokens,output_tokens,requests,max_num_seqs,sm_clock_mhz,"
             "median_itl_ms,p90_itl_ms,output_tokens_per_s,power_w,energy_per_token_j\n"
             "h100-sxm-80gb,llama-3-8b,bf16,128,32,64,8,1410.0,10,11,700,400,0.5\n"
             "h100-sxm-80gb,llama-3-8b,bf16,128,32,64,8,99999,10,11,700,400,0.5\n");
    test_write_file("served.csv", meas);
    assert_int_equal(run("validate served.csv"), 0);
    assert_non_null(strstr(err_buf, "serving rows (2, 1 scored)"));
    assert_non_null(strstr(err_buf, "served.csv:3"));
    char want[200];
    snprintf(want, sizeof want, ",10.000,%s,", itl);
    assert_non_null(strstr(out_buf, want));
    snprintf(want, sizeof want, ",0.50000,%s,", ept); /* then avg_batch, predicted */
    assert_non_null(strstr(out_buf, want));
    wl_results_table_free(sv);
}

int main(void)
{
    if (cli_setup("test_cli_multi"))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compare_cmd),
        cmocka_unit_test(test_compare_trace),
        cmocka_unit_test(test_host_cmds),
        cmocka_unit_test(test_multi_gpu_clocks),
        cmocka_unit_test(test_train_decode_cmds),
        cmocka_unit_test(test_cluster_cmd),
        cmocka_unit_test(test_compare_not_runnable),
        cmocka_unit_test(test_mpi),
        cmocka_unit_test(test_serve_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
