/* Hostile input, second pass (issue 64): each test fails before its fix.
 * The binary runs in the test's own directory (test_cli.h). */
#include "test_cli.h"

#include <math.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <zlib.h>

/* One aten::mm and its kernel, at a recorded clock. */
static const char *const MINI =
    "{\"traceEvents\": [\n"
    "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 1, \"tid\": 10, "
    "\"ts\": 100, \"dur\": 20, \"args\": {\"External id\": 1, \"Input Dims\": [[64, 128], "
    "[128, 256]], \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\"]}},\n"
    "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 1, "
    "\"tid\": 10, \"ts\": 101, \"dur\": 3, \"args\": {\"correlation\": 11}},\n"
    "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"nvjet_gemm\", \"pid\": 0, \"tid\": 7, "
    "\"ts\": 110, \"dur\": 20, \"args\": {\"External id\": 1, \"correlation\": 11}}\n"
    "], \"wattlas\": {\"sm_clock_mhz\": 1980}}\n";

/* A profile is read once, from one stream: a FIFO (it hung) and a gzip
 * behind it (its first bytes were lost to the magic check) read as the
 * file does; bytes after the gzip stream are an error; a stream of two
 * members is one file. */
static void test_profile_streams(void **state)
{
    (void)state;
    test_write_file("mini.json", MINI);
    assert_int_equal(system("gzip -c mini.json > mini.json.gz"), 0);
    const char *q = "predict --gpu h200-sxm-141gb --format csv --quiet --trace";
    assert_int_equal(run("%s mini.json.gz", q), 0);
    double t = csv_get(out_buf, 1, "time_ms");
    assert_true(t > 0);
    /* through a FIFO, gzipped and plain */
    for (int gz = 0; gz < 2; gz++) {
        assert_int_equal(system("rm -f ff && mkfifo ff"), 0);
        assert_int_equal(system(gz ? "(cat mini.json.gz > ff &)" : "(cat mini.json > ff &)"), 0);
        assert_int_equal(run("%s ff", q), 0);
        assert_close(csv_get(out_buf, 1, "time_ms"), t, 1e-12);
    }
    /* two members back to back: one stream */
    assert_int_equal(system("head -c 200 mini.json | gzip -c > two.json.gz && "
                            "tail -c +201 mini.json | gzip -c >> two.json.gz"), 0);
    assert_int_equal(run("%s two.json.gz", q), 0);
    assert_close(csv_get(out_buf, 1, "time_ms"), t, 1e-12);
    /* bytes that begin no member, and a stream cut short */
    assert_int_equal(system("(cat mini.json.gz; echo garbage) > tail.json.gz"), 0);
    assert_int_equal(run("%s tail.json.gz", q), 1);
    assert_non_null(strstr(err_buf, "tail.json.gz: 8 bytes after the gzip stream's end"));
    assert_int_equal(system("head -c 60 mini.json.gz > cut.json.gz"), 0);
    assert_int_equal(run("%s cut.json.gz", q), 1);
    assert_non_null(strstr(err_buf, "cut short"));
}

/* A recorded clock no board of the profile's runs at is refused, naming
 * the board's range (10000 MHz on a 1980 MHz GPU was taken as the anchor);
 * the board it ran on, given, is what it is checked against. */
static void test_profile_recorded_clock(void **state)
{
    (void)state;
    char *t = strdup(MINI), *at = strstr(t, "\"sm_clock_mhz\": 1980");
    assert_non_null(at);
    memcpy(at + strlen("\"sm_clock_mhz\": "), "9999", 4);
    test_write_file("m9999.json", t);
    free(t);
    test_write_file("mini.json", MINI);
    assert_int_equal(run("predict --gpu h200-sxm-141gb --trace m9999.json"), 1);
    assert_non_null(strstr(err_buf, "m9999.json: sm_clock_mhz: recorded at 9999 MHz, which "
                                    "h200-sxm-141gb (345-1980 MHz) cannot run"));
    /* 1980 MHz on an A100 with no board named: name it */
    assert_int_equal(run("predict --gpu a100-pcie-40gb --trace mini.json"), 1);
    assert_non_null(strstr(err_buf, "--profile-gpu"));
    assert_int_equal(run("predict --gpu a100-pcie-40gb --trace mini.json --profile-gpu "
                         "h200-sxm-141gb --format csv --quiet"), 0);
    assert_true(csv_get(out_buf, 1, "time_ms") > 0);
}

/* A model preset with learned positions and max_position_embeddings = 0
 * is refused at its line (a training step gave an internal message). */
static void test_zero_positions(void **state)
{
    (void)state;
    assert_int_equal(run("presets show gpt2"), 0);
    char *ini = strdup(out_buf), *at = strstr(ini, "\nmax_position_embeddings = ");
    assert_non_null(at);
    at += strlen("\nmax_position_embeddings = ");
    at[0] = '0';
    for (int i = 1; at[i] >= '0' && at[i] <= '9'; i++)
        at[i] = ' ';
    test_write_file("zp.ini", ini);
    free(ini);
    assert_int_equal(run("predict --model zp.ini --mode train"), 1);
    assert_non_null(strstr(err_buf, "zp.ini:"));
    assert_non_null(strstr(err_buf, "max_position_embeddings: must be >= 1 with learned positions"));
    assert_null(strstr(err_buf, "kernel dimensions"));
}

/* Output through a symlink to a regular file goes through a temporary
 * beside that file: a run stopped midway leaves it whole (it kept the
 * rows written so far, in place), the rows done go beside it as
 * FILE.partial, and a finished run replaces it with the link kept. */
static void test_symlink_output(void **state)
{
    (void)state;
    assert_int_equal(system("rm -rf sl && mkdir sl && printf 'a\\nb\\nc\\nd\\ne\\n' > sl/target.csv "
                            "&& ln -s target.csv sl/link.csv"), 0);
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "sh -c '%s sweep --gpu a100-pcie-40gb,h100-sxm-80gb --model gpt3-1.3b,llama-3-8b "
             "--batch 1:32:1 --seq 128,512,1024 --clock 210:1980:5 --threads 1 -o sl/link.csv "
             "--quiet & p=$!; sleep 1.5; kill -INT $p; wait $p; exit $?' 2>/dev/null", bin);
    int st = system(cmd);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 130);
    char buf[256];
    slurp("sl/target.csv", buf, sizeof buf);
    assert_string_equal(buf, "a\nb\nc\nd\ne\n");
    assert_int_equal(access("sl/target.csv.partial", F_OK), 0);
    struct stat ls;
    assert_int_equal(lstat("sl/link.csv", &ls), 0);
    assert_true(S_ISLNK(ls.st_mode));
    /* finished: the file behind the link is replaced, the link kept */
    assert_int_equal(run("sweep --model gpt2 --clock 900 --quiet -o sl/link.csv"), 0);
    slurp("sl/target.csv", buf, sizeof buf);
    assert_true(!strncmp(buf, "gpu,model,", 10));
    assert_int_equal(lstat("sl/link.csv", &ls), 0);
    assert_true(S_ISLNK(ls.st_mode));
    assert_int_equal(system("ls sl | grep -c tmp > sl.tmpcount; exit 0"), 0);
    slurp("sl.tmpcount", buf, sizeof buf);
    assert_string_equal(buf, "0\n");
}

/* A stop ends a sweep at the point it reached, not at the end of its
 * chunk: a decode sweep of a million tokens on Llama 3.1 405B (one chunk
 * of 99 clocks) took 18-25 s to stop and kept no row; it keeps the points
 * it finished, in order, in FILE.partial. */
static void test_sweep_stops_within_chunk(void **state)
{
    (void)state;
    unlink("d.csv.partial");
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "sh -c '%s sweep --gpu h100-sxm-80gb --model llama-3.1-405b --mode decode "
             "--gen 1000000 --batch 64 --clock 510:1980:15 -o d.csv --quiet & p=$!; sleep 3; "
             "kill -INT $p; s=$(date +%%s); wait $p; r=$?; e=$(date +%%s); "
             "echo $r $((e - s)) > d.status; exit 0' 2>/dev/null", bin);
    assert_int_equal(system(cmd), 0);
    char st[64];
    slurp("d.status", st, sizeof st);
    int rc = -1, secs = -1;
    assert_int_equal(sscanf(st, "%d %d", &rc, &secs), 2);
    assert_int_equal(rc, 130);
    assert_true(secs <= 10); /* a hang check, not a timing goal: it took 18-25 s */
    static char rows[1 << 16];
    slurp("d.csv.partial", rows, sizeof rows);
    /* the finished points, a prefix of the clocks in order */
    int n = 0;
    for (int r = 1;; r++) {
        double f = csv_num(rows, r, 9);
        if (!(f > 0))
            break;
        assert_close(f, 510 + 15 * (r - 1), 1e-9);
        n++;
    }
    assert_true(n >= 1);
    assert_int_equal(access("d.csv", F_OK), -1);
}

/* A profile op's dims no GPU could run in the kernel's measured time
 * (10^6 x 10^6 x 10^6 in 20 us) are not taken: the kernel keeps its
 * measured time (it drew 2.8 GW), and a board limit is never exceeded
 * by orders of magnitude. */
static void test_impossible_dims(void **state)
{
    (void)state;
    char *t = strdup(MINI), *at = strstr(t, "[[64, 128], [128, 256]]");
    assert_non_null(at);
    char *huge = malloc(strlen(t) + 64);
    snprintf(huge, strlen(t) + 64, "%.*s[[1000000, 1000000], [1000000, 1000000]]%s",
             (int)(at - t), t, at + strlen("[[64, 128], [128, 256]]"));
    test_write_file("huge.json", huge);
    free(huge);
    free(t);
    assert_int_equal(run("predict --gpu h200-sxm-141gb --trace huge.json --format csv"), 0);
    assert_non_null(strstr(err_buf, "1 kept at their measured time"));
    double w = csv_get(out_buf, 1, "power_w");
    assert_true(w > 0 && w < 1000);
    assert_close(csv_get(out_buf, 1, "time_ms"), 0.02, 1e-9);
}

/* A temporary that a run killed by SIGKILL left beside its output
 * ("FILE.tmp.PID.N", PID dead) is removed by the next run into the same
 * place; a live process's is not. */
static void test_stale_temporaries(void **state)
{
    (void)state;
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    assert_true(child > 0);
    int st;
    assert_int_equal(waitpid(child, &st, 0), child); /* dead, reaped: its pid free */
    char dead[64], live[64];
    snprintf(dead, sizeof dead, "so.csv.tmp.%ld.0", (long)child);
    snprintf(live, sizeof live, "so.csv.tmp.%ld.0", (long)getpid());
    test_write_file(dead, "half a row");
    test_write_file(live, "another writer's");
    assert_int_equal(run("sweep --model gpt2 --clock 900 --quiet -o so.csv"), 0);
    assert_int_equal(access(dead, F_OK), -1);
    assert_int_equal(access(live, F_OK), 0);
    unlink(live);
}

/* merge refuses a shard whose rows are not the ones written: a value
 * altered, two rows swapped, a row dropped with the count edited; and one
 * with no end line (both passed before). */
static void test_merge_tampered(void **state)
{
    (void)state;
    const char *sw = "sweep --gpu h100-sxm-80gb --model gpt2 --clock 900:1980:60 --quiet";
    for (int i = 1; i <= 2; i++)
        assert_int_equal(run("%s --shard %d/2 -o m%d.csv", sw, i, i), 0);
    assert_int_equal(run("%s -o whole.csv", sw), 0);
    assert_int_equal(run("merge m1.csv m2.csv -o mm.csv"), 0);
    assert_int_equal(system("cmp -s mm.csv whole.csv"), 0);
    /* a value altered (the batch on row 2) */
    assert_int_equal(system("sed '4s/,gpt2,1,/,gpt2,7,/' m2.csv > t.csv"), 0);
    assert_int_equal(run("merge m1.csv t.csv -o bad.csv"), 1);
    assert_non_null(strstr(err_buf, "its rows are not the ones written (their hash differs)"));
    assert_int_equal(access("bad.csv", F_OK), -1);
    /* two rows swapped */
    assert_int_equal(system("awk 'NR==3{a=$0;next} NR==4{print;print a;next} {print}' m2.csv "
                            "> t.csv"), 0);
    assert_int_equal(run("merge m1.csv t.csv -o bad.csv"), 1);
    assert_non_null(strstr(err_buf, "hash differs"));
    /* no end line */
    assert_int_equal(system("grep -v wattlas-shard-end m2.csv > t.csv"), 0);
    assert_int_equal(run("merge m1.csv t.csv -o bad.csv"), 1);
    assert_non_null(strstr(err_buf, "no shard end line"));
    /* NDJSON shards carry it too */
    for (int i = 1; i <= 2; i++)
        assert_int_equal(run("%s --shard %d/2 --format ndjson -o n%d.ndjson", sw, i, i), 0);
    assert_int_equal(run("merge n1.ndjson n2.ndjson -o nn.ndjson"), 0);
    assert_int_equal(system("sed '3s/\"batch\":1/\"batch\":2/' n2.ndjson > t.ndjson"), 0);
    assert_int_equal(run("merge n1.ndjson t.ndjson -o bad.ndjson"), 1);
}

/* A profile of 10^6 minimal kernel events (104 MB of JSON) is read with
 * less memory than its text: the reader holds one event at a time and
 * the workload one copy of each distinct kernel (10^7 such events took
 * 3.7 GB; 10^6 took 428 MB). The kernels, 1 us each with no host gaps,
 * take 10^6 us at the profile's clock. The peak is the child's maximum
 * resident set (getrusage of a fresh fork's children); sanitizers' shadow
 * memory makes it meaningless under make asan, where only the result is
 * checked. */
static void test_profile_memory(void **state)
{
    (void)state;
    const long n = 1000000;
    gzFile z = gzopen("big_1000mhz.json.gz", "wb1");
    assert_non_null(z);
    long long text = gzprintf(z, "{\"traceEvents\": [\n");
    for (long i = 0; i < n; i++)
        text += gzprintf(z, "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"pid\":0,"
                            "\"tid\":7,\"ts\":%ld,\"dur\":1,\"args\":{\"correlation\":%ld}}%s\n",
                         2 * i, i, i + 1 < n ? "," : "");
    text += gzprintf(z, "]}\n");
    assert_int_equal(gzclose(z), Z_OK);
    assert_true(text > 100000000);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int rc = run("predict --gpu h100-sxm-80gb --trace big_1000mhz.json.gz --clock 1000 "
                     "--no-power-limit --format csv --quiet");
        struct rusage ru;
        getrusage(RUSAGE_CHILDREN, &ru);
        FILE *f = fopen("rss.txt", "w");
        if (f) {
            fprintf(f, "%ld\n", ru.ru_maxrss);
            fclose(f);
        }
        _exit(rc);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    slurp("cli.out", out_buf, sizeof out_buf);
    assert_close(csv_get(out_buf, 1, "time_ms"), 1000.0, 1e-9);
    char rss[64];
    slurp("rss.txt", rss, sizeof rss);
    double peak = atof(rss) * 1024.0;
    print_message("10^6 events, %.0f MB of text: peak %.0f MB\n", (double)text / 1e6, peak / 1e6);
#if !defined(__SANITIZE_ADDRESS__)
    assert_true(peak > 0 && peak < (double)text);
#endif
    unlink("big_1000mhz.json.gz");
}

/* Third pass (issue 77). An output named as one of the inputs, through
 * a link, or as another output is refused with exit 2 before any work,
 * naming both, and the input is left as it was: calibrate wrote the
 * preset over its measurements, serve and validate their rows over their
 * inputs, and --host-out over -o kept one of the two presets. */
static void test_output_over_input(void **state)
{
    (void)state;
    assert_int_equal(system("rm -rf ov && mkdir ov && printf 'keep,me\n1,2\n' > ov/in.csv && "
                            "ln -s in.csv ov/link.csv && mkdir ov/study && "
                            "printf '[sweep]\nmodel = gpt2\n' > ov/study/sweep.csv"), 0);
    static const char *const cmds[] = {
        "calibrate --gpu a100-pcie-40gb ov/in.csv -o ov/in.csv",
        "calibrate --gpu a100-pcie-40gb ov/in.csv -o ov/link.csv",
        "calibrate --gpu a100-pcie-40gb ov/in.csv -oov/in.csv",
        "validate ov/in.csv -o ov/in.csv",
        "validate ov/link.csv --format=csv -o=ov/in.csv",
        "serve --workload ov/in.csv -o ov/link.csv",
        "learn ov/in.csv -o ov/model.json --importance ov/in.csv",
        "plot energy-freq ov/in.csv -o ov/in.csv",
        "merge ov/in.csv -o ov/link.csv",
        "report --spec ov/study/sweep.csv -o ov/study",
    };
    char buf[64];
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        int rc = run("%s", cmds[i]);
        if (rc != 2 || !strstr(err_buf, "an output is never one of the inputs"))
            fail_msg("wattlas %s: exit %d, %s", cmds[i], rc, err_buf);
        slurp("ov/in.csv", buf, sizeof buf);
        assert_string_equal(buf, "keep,me\n1,2\n");
    }
    assert_int_equal(run("calibrate --gpu a100-pcie-40gb ov/in.csv --fit gpu,host -o ov/x.ini "
                         "--host-out ov/x.ini"), 2);
    assert_non_null(strstr(err_buf, "--host-out ov/x.ini is the same file as -o ov/x.ini"));
    assert_int_not_equal(access("ov/x.ini", F_OK), 0);
    /* a different file, /dev/null and stdout pass the check */
    assert_int_equal(run("predict --trace ov/in.csv -o ov/p.csv"), 1); /* not a trace: read */
    assert_int_equal(run("serve --requests 2 --prompt-tokens 8 --output-tokens 2 -o /dev/null"),
                     0);
    assert_int_equal(run("predict --model gpt2 -o -"), 0);
}

/* Settings checked once, after every --set, by the same relations in
 * every command (issue 77): a cap under the board's floor ran in serve
 * (181 W reported) and cluster (99 W a GPU), refused by predict and sweep;
 * a clock range turned inside out likewise. The lockable range's lower
 * end is not physics: the governor holds a cap below it, so
 * sm_clock_min_mhz at or just under the top clock changes nothing at the
 * top clock (TTFT 0.00 ms and 890 W on a 700 W board in serve, MFU 1.54 in
 * cluster, time 0 in a throttled predict). */
static void test_set_relations(void **state)
{
    (void)state;
    static const char *const cmds[] = {
        "predict --gpu h100-sxm-80gb --set power_limit_w=50",
        "sweep --gpu h100-sxm-80gb --model gpt2 --set power_limit_w=50",
        "serve --requests 2 --prompt-tokens 8 --output-tokens 2 --set power_limit_w=50",
        "cluster --system dgx-h100 --set power_limit_w=50",
        "serve --requests 2 --prompt-tokens 8 --output-tokens 2 --set sm_clock_min_mhz=2000",
        "cluster --system dgx-h100 --set sm_clock_min_mhz=2000",
    };
    for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++) {
        int rc = run("%s", cmds[i]);
        if (rc != 2 || !strstr(err_buf, "with these set values"))
            fail_msg("wattlas %s: exit %d, %s", cmds[i], rc, err_buf);
    }
    static const struct {
        const char *cmd, *col;
    } same[] = {
        {"predict --gpu h100-sxm-80gb --model llama-3-8b --batch 32 --seq 1024 --format csv",
         "time_ms"},
        {"predict --gpu h100-sxm-80gb --model llama-3-8b --batch 32 --seq 1024 --format csv",
         "power_w"},
        {"serve --prompt-tokens 300 --output-tokens 2 --requests 2 --format csv", "median_ttft_ms"},
        /* two requests have no steady state: the run's power */
        {"serve --prompt-tokens 300 --output-tokens 2 --requests 2 --format csv", "run_power_w"},
        {"cluster --system dgx-h100 --format csv", "mfu"},
        {"cluster --system dgx-h100 --format csv", "power_w"},
    };
    for (size_t i = 0; i < sizeof same / sizeof *same; i++) {
        double v[3];
        const char *mins[3] = {"", " --set sm_clock_min_mhz=1979", " --set sm_clock_min_mhz=1980"};
        for (int k = 0; k < 3; k++) {
            assert_int_equal(run("%s%s", same[i].cmd, mins[k]), 0);
            char *body = out_buf;
            while (*body == '#') /* serve's comment lines */
                body = strchr(body, '\n') + 1;
            memmove(out_buf, body, strlen(body) + 1);
            v[k] = csv_get(out_buf, 1, same[i].col);
            assert_true(v[k] > 0);
        }
        if (fabs(v[1] / v[0] - 1) > 1e-6 || fabs(v[2] / v[0] - 1) > 1e-6)
            fail_msg("%s: %s %g, %g with sm_clock_min_mhz 1979, %g with 1980", same[i].cmd,
                     same[i].col, v[0], v[1], v[2]);
    }
}

/* A command's own output validates to zero error (issue 77): serve's
 * rows carry every setting that changes them (rate, host, sampling,
 * seed, async scheduling, memory share, a prefill clock, other --set
 * values) and validate runs each row with them. validate ignored
 * rate_rps (38% tokens/s error against serve itself) and serve's rows had
 * no sampling, seed or scheduling columns. Zero within the rows' printed
 * digits: power has one decimal, 0.05 W in 400 W. The scored columns are
 * the steady state's: every run here has one (20 requests or more, 8
 * running at most). */
static void test_serve_rows_validate(void **state)
{
    (void)state;
    static const char *const opts[] = {
        "--requests 30 --max-num-seqs 8 --rate 4",
        "--prompt-tokens 300 --output-tokens 20 --requests 20 --max-num-seqs 4",
        "--requests 20 --max-num-seqs 4 --temperature 1 --top-p 0.9 --sampler flashinfer",
        "--requests 20 --max-num-seqs 4 --async-scheduling --seed 7 --rate 2",
        "--requests 40 --host a100-calib-host --gpu-memory-utilization 0.5 --max-num-seqs 4,16",
        "--requests 20 --max-num-seqs 4 --clock 990,1500 --set power_limit_w=400,700",
        "--requests 20 --max-num-seqs 4 --optimize energy --phase-clocks --max-itl-ms 50 --all "
        "--clock 990,1980",
        "--requests 20 --max-num-seqs 4 --prefill-clock 900 --clock 1500",
        "--requests 20 --max-num-seqs 4 --set sms=100,120 --set l2_size_mb=30",
    };
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++) {
        assert_int_equal(run("serve %s -o sv.csv", opts[i]), 0);
        assert_int_equal(run("validate sv.csv"), 0);
        const char *m = strstr(err_buf, "MAPE: median ITL ");
        double e[4];
        if (!m || sscanf(m, "MAPE: median ITL %lf%%  power %lf%%  energy per token %lf%%  output "
                            "tokens/s %lf%%", &e[0], &e[1], &e[2], &e[3]) != 4)
            fail_msg("serve %s: validate said %s", opts[i], err_buf);
        for (int k = 0; k < 4; k++)
            if (e[k] > 0.05)
                fail_msg("serve %s: its own rows validate %.2f%% off:\n%s", opts[i], e[k], err_buf);
    }
    /* a rate validate cannot run is said, not taken as 0 */
    assert_int_equal(run("serve --requests 30 --max-num-seqs 8 --rate 4 -o sv.csv"), 0);
    assert_int_equal(system("sed -i 's/,8,8192,4,/,8,8192,-1,/' sv.csv"), 0);
    run("validate sv.csv");
    assert_non_null(strstr(err_buf, "rate"));
    assert_null(strstr(err_buf, "MAPE: median ITL 0.00%"));
}

/* Rates at their bounds (issue 77): a rate that spreads the arrivals past
 * 10^9 s lost the milliseconds between tokens (--rate 1e-14: a median
 * ITL of 0.001 ms that met a 100 ms SLO; 2.3e-308 left columns empty;
 * 1e-300 printed 300-digit times): a usage error. -0 is 0, printed "0". */
static void test_rate_bounds(void **state)
{
    (void)state;
    static const char *const rates[] = {"1e-14", "2.3e-308", "1e-300", "1e-9"};
    for (size_t i = 0; i < sizeof rates / sizeof *rates; i++) {
        int rc = run("serve --rate %s --requests 10 --optimize energy --max-itl-ms 100", rates[i]);
        if (rc != 2 || !strstr(err_buf, "10^9 s"))
            fail_msg("--rate %s: exit %d, %s", rates[i], rc, err_buf);
    }
    /* one request has no spread; 1e-7 over two requests is 10^7 s */
    assert_int_equal(run("serve --rate 1e-300 --requests 1 --format csv"), 0);
    assert_int_equal(run("serve --rate 1e-7 --requests 2 --format csv"), 0);
    assert_true(csv_get(out_buf, 1, "median_itl_ms") > 1);
    assert_int_equal(run("serve --rate -0 --requests 3 --format csv"), 0);
    assert_null(strstr(out_buf, ",-0,"));
}

/* Files a row names (issue 77): validate opened a serve row's workload
 * /etc/passwd and echoed "root: unknown section". Each cell that names a
 * file resolves under the data's folder or is refused, naming the row; a
 * file there that does not load is named, its content never echoed. */
static void test_row_named_files(void **state)
{
    (void)state;
    assert_int_equal(run("serve --requests 5 -o sv.csv"), 0);
    static const char *const cols[] = {"gpu", "model", "workload"};
    for (int i = 0; i < 3; i++) {
        char cmd[600];
        snprintf(cmd, sizeof cmd, "awk -F, -v OFS=, 'NR == 1 {for (i = 1; i <= NF; i++) if ($i == "
                 "\"%s\") c = i; print; next} {$c = \"/etc/passwd\"; print}' sv.csv > pw.csv",
                 cols[i]);
        assert_int_equal(system(cmd), 0);
        run("validate pw.csv");
        if (!strstr(err_buf, "pw.csv:2: ") || !strstr(err_buf, "outside pw.csv's folder") ||
            strstr(err_buf, "root"))
            fail_msg("a %s of /etc/passwd: %s", cols[i], err_buf);
        /* a file beside the data that does not load: named, not quoted */
        assert_int_equal(system("cp /etc/passwd passwd.ini && cp /etc/passwd passwd.csv"), 0);
        snprintf(cmd, sizeof cmd, "sed -i 's#/etc/passwd#passwd.%s#' pw.csv",
                 i == 2 ? "csv" : "ini");
        assert_int_equal(system(cmd), 0);
        run("validate pw.csv");
        if (!strstr(err_buf, "does not load") || strstr(err_buf, "root"))
            fail_msg("a %s file that does not load: %s", cols[i], err_buf);
    }
    /* a measurement row's model the same way */
    assert_int_equal(system("printf 'gpu,model,batch,seq,dtype,mode,attention,sm_clock_mhz,"
                            "measured_clock_mhz,time_ms,energy_j,power_w,temp_c\\na100-pcie-40gb,"
                            "/etc/passwd,8,128,bf16,prefill,eager,900,900,8,0.72,90,60\\n' > m.csv"), 0);
    run("validate --gpu a100-pcie-40gb m.csv");
    if (!strstr(err_buf, "m.csv:2: not modelled: '/etc/passwd' is outside m.csv's folder") ||
        strstr(err_buf, "root"))
        fail_msg("a measurement row's model /etc/passwd: %s", err_buf);
}

/* report's folder (issue 77): a killed run's DIR.tmp.PID.N stayed for good
 * (a dead pid's is removed now, a live one's stays); -o LINK to a folder
 * on another filesystem failed with "Invalid cross-device link"; an error
 * named the temporary folder, gone by the time it is read. */
static void test_report_folder(void **state)
{
    (void)state;
    test_write_file("rs.ini", "[sweep]\nmodel = gpt2\nclock = 510:1410:300\n");
    pid_t child = fork();
    if (child == 0)
        _exit(0);
    assert_true(child > 0);
    int st;
    assert_int_equal(waitpid(child, &st, 0), child);
    char dead[64], live[64];
    snprintf(dead, sizeof dead, "rout.tmp.%ld.0", (long)child);
    snprintf(live, sizeof live, "rout.tmp.%ld.0", (long)getpid());
    assert_int_equal(mkdir(dead, 0777), 0);
    assert_int_equal(mkdir(live, 0777), 0);
    char f[128];
    snprintf(f, sizeof f, "%s/energy.png", dead);
    test_write_file(f, "half a figure");
    assert_int_equal(run("report rs.ini -o rout --quiet"), 0);
    assert_int_equal(access(dead, F_OK), -1);
    assert_int_equal(access(live, F_OK), 0);
    rmdir(live);
    /* a write that fails inside the temporary folder is named in rout2 */
    shell("rm -rf rout2; (trap '' XFSZ; ulimit -f 64; $W report rs.ini -o rout2 --quiet) "
          ">cli.out 2>cli.err");
    slurp("cli.err", err_buf, sizeof err_buf);
    if (!strstr(err_buf, "wattlas report: rout2/") || strstr(err_buf, ".tmp."))
        fail_msg("a failed write: %s", err_buf);
    assert_int_equal(access("rout2", F_OK), -1);
    /* a link to a folder on another filesystem */
    struct stat here, shm;
    if (stat(".", &here) || stat("/dev/shm", &shm) || here.st_dev == shm.st_dev ||
        access("/dev/shm", W_OK)) {
        fprintf(stderr, "SKIP: no other writable filesystem at /dev/shm for report -o LINK\n");
        return;
    }
    char other[64];
    snprintf(other, sizeof other, "/dev/shm/wattlas-test-report-%ld", (long)getpid());
    assert_int_equal(shell("rm -rf %s && mkdir %s && ln -sfn %s rlink", other, other, other), 0);
    assert_int_equal(run("report rs.ini -o rlink --quiet"), 0);
    snprintf(f, sizeof f, "%s/index.md", other);
    assert_int_equal(access(f, F_OK), 0);
    assert_int_equal(shell("rm -rf %s rlink", other), 0);
}

/* cluster --timeline on a full disk (issue 77) named its path and errno
 * only after the row had gone to stdout: the rows are held until the
 * timeline is in place, and a timeline that fails leaves none. */
static void test_timeline_full(void **state)
{
    (void)state;
    assert_int_equal(run("cluster --system dgx-h100 --timeline /dev/full"), 1);
    assert_non_null(strstr(err_buf, "/dev/full: write error: No space left on device"));
    assert_int_equal(out_buf[0], 0);
    assert_int_equal(run("cluster --system dgx-h100 --timeline tl.json --format csv"), 0);
    assert_true(csv_get(out_buf, 1, "mfu") > 0.05);
    struct stat st;
    assert_int_equal(stat("tl.json", &st), 0);
    assert_true(st.st_size > 100);
}

/* Issue 77's smaller items: --all alone was taken (--phase-clocks alone
 * was refused); a value twice in an axis printed one row twice; a request
 * file over 10^7 rows was refused with --requests 5; a subnormal cell was
 * "not a finite number". */
static void test_small_items(void **state)
{
    (void)state;
    assert_int_equal(run("serve --all --requests 3"), 2);
    assert_non_null(strstr(err_buf, "serve: --all: "));
    assert_int_equal(run("serve --phase-clocks --requests 3"), 2);
    assert_non_null(strstr(err_buf, "serve: --phase-clocks: "));
    static const char *const twice[] = {
        "serve --requests 3 --max-num-seqs 1,1,1", "serve --requests 3 --clock 900,990,900",
        "serve --requests 3 --set power_limit_w=400,400", "predict --clock 900,510:1410:390",
        "sweep --model gpt2 --clock 900,900", "cluster --clock 900,900"};
    for (size_t i = 0; i < sizeof twice / sizeof *twice; i++) {
        int rc = run("%s", twice[i]);
        if (rc != 2 || !strstr(err_buf, "is in the list twice"))
            fail_msg("%s: exit %d, %s", twice[i], rc, err_buf);
    }
    /* 10^7 + 1 rows; five are read */
    FILE *f = fopen("big.csv", "w");
    assert_non_null(f);
    fputs("prompt_tokens,output_tokens\n", f);
    for (long i = 0; i <= 10000000L; i++)
        fputs("100,10\n", f);
    assert_int_equal(fclose(f), 0);
    assert_int_equal(run("serve --workload big.csv --requests 5 --format csv"), 0);
    assert_close(csv_get(out_buf, 1, "requests"), 5, 0);
    assert_int_equal(run("serve --workload big.csv --format csv"), 1);
    assert_non_null(strstr(err_buf, "more than 10000000 requests"));
    unlink("big.csv");
    test_write_file("sub.csv", "prompt_tokens,output_tokens\n1e-310,10\n");
    assert_int_equal(run("serve --workload sub.csv"), 1);
    assert_non_null(strstr(err_buf, "sub.csv:2: prompt_tokens: too close to zero: below 2.2e-308"));
}

int main(void)
{
    if (cli_setup("test_cli_hostile"))
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile_streams),
        cmocka_unit_test(test_profile_memory),
        cmocka_unit_test(test_profile_recorded_clock),
        cmocka_unit_test(test_zero_positions),
        cmocka_unit_test(test_symlink_output),
        cmocka_unit_test(test_sweep_stops_within_chunk),
        cmocka_unit_test(test_impossible_dims),
        cmocka_unit_test(test_stale_temporaries),
        cmocka_unit_test(test_merge_tampered),
        cmocka_unit_test(test_output_over_input),
        cmocka_unit_test(test_set_relations),
        cmocka_unit_test(test_serve_rows_validate),
        cmocka_unit_test(test_rate_bounds),
        cmocka_unit_test(test_row_named_files),
        cmocka_unit_test(test_report_folder),
        cmocka_unit_test(test_timeline_full),
        cmocka_unit_test(test_small_items),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
