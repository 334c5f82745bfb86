/* wattlas sweep, wattlas merge */
#include "cli.h"
#include "../sweep/wattlas_sweep.h"
#include "../results/wattlas_results.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void help(FILE *f)
{
    fprintf(f,
"usage: wattlas sweep [axes] [--spec FILE.ini] [-o FILE] [options]\n\n"
"Evaluates the cartesian product of the axes in parallel and streams one row\n"
"per point (CSV, or NDJSON with --format ndjson): every swept parameter, the\n"
"effective clock, voltage, feasibility and throttling flags, time_ms, power_w,\n"
"energy_j and its parts. Row order is fixed and the output is byte-identical\n"
"for any thread count.\n\n"
"axes (comma-separated lists):\n"
"  --gpu LIST  --model LIST | --trace FILE  --batch LIST  --seq LIST\n"
"  --dtype LIST  --attention LIST\n"
"  --clock MIN:MAX:STEP|LIST       SM clocks (default: the first GPU's range)\n"
"  --voltage-offset-mv LIST        shifts the V-f curve; points below the\n"
"                                  alpha-power-law critical voltage are marked\n"
"                                  feasible=0, not dropped (as are clocks\n"
"                                  outside a GPU's range)\n"
"  --set KEY=LIST                  any numeric GPU preset field, e.g.\n"
"                                  --set sms=84,108,132 --set dram_bw_gbs=1555,2039\n"
"  --scope model|layer|kernel      forward pass, one layer, or one row per kernel class\n"
"  --idle [ID=]TABLE.csv           measured idle table (sm_clock_mhz,voltage_mv,\n"
"                                  idle_power_w) in place of that GPU's idle curve\n"
"options:\n"
"  --spec FILE.ini    the axes from a file: [sweep] key = list, [set] FIELD = list\n"
"  --format csv|ndjson  --threads N  --shard I/N  --quiet  -o FILE\n\n"
"Ctrl-C stops between rows and keeps a valid file of the rows done so far.\n"
"A progress bar goes to stderr when it is a terminal (--quiet turns it off).\n"
"'wattlas merge SHARD...' joins --shard outputs into the unsharded result.\n");
}

static volatile sig_atomic_t stop_flag;

static void on_sigint(int sig)
{
    (void)sig;
    stop_flag = 1;
}

int cmd_sweep(int argc, char **argv)
{
    const char *cmd = "sweep";
    static const struct option lo[] = {
        {"gpu", required_argument, 0, 'g'},       {"model", required_argument, 0, 'm'},
        {"trace", required_argument, 0, 't'},     {"batch", required_argument, 0, 'b'},
        {"seq", required_argument, 0, 's'},       {"dtype", required_argument, 0, 'd'},
        {"attention", required_argument, 0, 'a'}, {"clock", required_argument, 0, 'c'},
        {"voltage-offset-mv", required_argument, 0, 'V'},
        {"set", required_argument, 0, 'S'},       {"scope", required_argument, 0, 'C'},
        {"spec", required_argument, 0, 'p'},      {"format", required_argument, 0, 'f'},
        {"threads", required_argument, 0, 'T'},   {"shard", required_argument, 0, 'H'},
        {"quiet", no_argument, 0, 'q'},           {"help", no_argument, 0, 'h'},
        {"idle", required_argument, 0, 'i'},
        {0, 0, 0, 0}};
    wl_sweep_spec *spec = wl_sweep_spec_create();
    if (!spec) {
        fprintf(stderr, "wattlas sweep: out of memory\n");
        return EXIT_RUNTIME;
    }
    wl_sweep_options o = {WL_SWEEP_CSV, 0, 0, 1, 0};
    const char *out_path = "-";
    int quiet = 0;
    wl_error err = {0};
    optind = 1;
    opterr = 0;
    int c, status = 0;
    while (!status && (c = getopt_long(argc, argv, ":o:", lo, NULL)) != -1) {
        const char *key = NULL;
        switch (c) {
        case 'g': key = "gpu"; break;
        case 'm': key = "model"; break;
        case 't': key = "trace"; break;
        case 'b': key = "batch"; break;
        case 's': key = "seq"; break;
        case 'd': key = "dtype"; break;
        case 'a': key = "attention"; break;
        case 'c': key = "clock"; break;
        case 'V': key = "voltage_offset_mv"; break;
        case 'S': key = "set"; break;
        case 'C': key = "scope"; break;
        case 'i': key = "idle"; break;
        case 'p':
            if (wl_sweep_spec_load(spec, optarg, &err))
                status = runtime_error(cmd, &err);
            break;
        case 'f':
            if (strcmp(optarg, "csv") == 0) o.format = WL_SWEEP_CSV;
            else if (strcmp(optarg, "ndjson") == 0) o.format = WL_SWEEP_NDJSON;
            else status = usage_error(cmd, "--format: expected csv or ndjson, got '%s'", optarg);
            break;
        case 'T': {
            long long t;
            if (parse_int_arg(cmd, "--threads", optarg, 1, 1024, &t))
                status = EXIT_USAGE;
            o.threads = (int)t;
            break;
        }
        case 'H': {
            unsigned i, n;
            char extra;
            if (sscanf(optarg, "%u/%u%c", &i, &n, &extra) != 2 || n == 0 || i >= n)
                status = usage_error(cmd, "--shard: expected I/N with 0 <= I < N, got '%s'", optarg);
            o.shard_index = i;
            o.shard_count = n;
            break;
        }
        case 'q': quiet = 1; break;
        case 'o': out_path = optarg; break;
        case 'h': help(stdout); wl_sweep_spec_free(spec); return 0;
        case ':': status = usage_error(cmd, "option %s needs a value", argv[optind - 1]); break;
        default: status = usage_error(cmd, "unknown option '%s'", argv[optind - 1]); break;
        }
        if (key && wl_sweep_spec_set(spec, key, optarg, "command line", 0, &err)) {
            char msg[600];
            wl_error_format(&err, msg, sizeof msg);
            status = usage_error(cmd, "%s", msg);
        }
    }
    if (!status && optind < argc)
        status = usage_error(cmd, "unexpected argument '%s'", argv[optind]);
    if (!status && wl_sweep_spec_finish(spec, &err))
        status = runtime_error(cmd, &err);
    wl_results_out *out = NULL;
    if (!status && wl_results_out_open(out_path, &out, &err))
        status = runtime_error(cmd, &err);
    if (status) {
        wl_sweep_spec_free(spec);
        return status;
    }
    o.progress = !quiet && isatty(STDERR_FILENO);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old);
    sigaction(SIGTERM, &sa, NULL);
    wl_sweep_stats st;
    int rc = wl_sweep_run(spec, &o, wl_results_out_stream(out), &stop_flag, &st, &err);
    sigaction(SIGINT, &old, NULL);
    if (rc) {
        wl_results_out_abort(out);
        wl_sweep_spec_free(spec);
        return runtime_error(cmd, &err);
    }
    /* an interrupted run still commits its whole rows */
    if (wl_results_out_commit(out, &err)) {
        wl_sweep_spec_free(spec);
        return runtime_error(cmd, &err);
    }
    if (!quiet)
        fprintf(stderr, "wattlas sweep: %llu points, %llu rows in %.2f s (%.0f points/s)%s\n",
                st.points, st.rows, st.seconds, st.seconds > 0 ? (double)st.points / st.seconds : 0,
                st.interrupted ? ", interrupted: the file holds the rows done so far" : "");
    wl_sweep_spec_free(spec);
    return st.interrupted ? 130 : 0;
}

int cmd_merge(int argc, char **argv)
{
    const char *cmd = "merge";
    const char *out_path = "-";
    const char *paths[4096];
    int n = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            printf("usage: wattlas merge SHARD... [-o FILE]\n\n"
                   "Joins the outputs of 'wattlas sweep --shard I/N' (given in shard order)\n"
                   "into a file identical to the unsharded run.\n");
            return 0;
        }
        if (strcmp(argv[i], "-o") == 0) {
            if (i + 1 >= argc)
                return usage_error(cmd, "-o needs a value");
            out_path = argv[++i];
        } else if (n < 4096) {
            paths[n++] = argv[i];
        } else {
            return usage_error(cmd, "too many files");
        }
    }
    if (!n)
        return usage_error(cmd, "expected shard files");
    wl_error err = {0};
    wl_results_out *out = NULL;
    if (wl_results_out_open(out_path, &out, &err))
        return runtime_error(cmd, &err);
    if (wl_sweep_merge(paths, n, wl_results_out_stream(out), &err)) {
        wl_results_out_abort(out);
        return runtime_error(cmd, &err);
    }
    if (wl_results_out_commit(out, &err))
        return runtime_error(cmd, &err);
    return 0;
}
