/* wattlas sweep, wattlas merge */
#include "cli.h"
#include "../sweep/wattlas_sweep.h"

#ifdef WL_MPI
#include <mpi.h>
#endif

#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void sweep_help(FILE *f)
{
    fprintf(f,
"usage: wattlas sweep [axes] [--spec FILE.ini] [-o FILE] [options]\n\n"
"Evaluates the cartesian product of the axes in parallel and streams one row\n"
"per point: every swept parameter, the effective clock, voltage, feasibility\n"
"and throttling flags, time_ms, power_w, energy_j and its parts. Row order is\n"
"fixed and the output is byte-identical for any thread count.\n\n"
"axes (lists: comma-separated values and MIN:MAX:STEP ranges; defaults in []):\n"
"  --gpu LIST [a100-pcie-40gb]  --model LIST [gpt2] | --trace LIST\n"
"  --batch LIST [1]  --seq LIST [128]  --dtype LIST [bf16]\n"
"  --attention LIST [eager; flash with --launch graphs]\n"
"  --mode LIST (prefill, train, decode) [prefill]\n"
"  --clock LIST                    SM clocks in MHz (default: each GPU's own grid)\n"
"  --voltage-offset-mv LIST        shifts the V-f curve; points below the\n"
"                                  alpha-power-law critical voltage are marked\n"
"                                  feasible=0, not dropped (as are clocks\n"
"                                  outside a GPU's range)\n"
"  --voltage-mv LIST               a fixed core voltage instead of the V-f curve\n"
"  --power-limit-w LIST            board power limits, W (--set power_limit_w=)\n"
"  --set KEY=LIST                  any numeric GPU preset key, e.g.\n"
"                                  --set sms=84,108,132 --set dram_bw_gbs=1555,2039\n"
"  --learned MODEL.json            apply a model from 'wattlas learn' to every point\n"
"  --scope model|layer|kernel      forward pass, one layer (decoder: the same), or\n"
"                                  a pass with a row per kernel class (as --kernels);\n"
"                                  the scope column says which\n"
"  --host ID|FILE.ini              the host that issues the kernels, for every GPU\n"
"                                  (default: each GPU preset's host class)\n"
"  --idle [ID=]TABLE.csv           measured idle table (sm_clock_mhz,voltage_mv,\n"
"                                  idle_power_w) in place of that GPU's idle curve\n"
"training and decode (see 'wattlas predict --help'): --optimizer adamw|sgd|none [adamw]\n"
"  --master-dtype fp32|none [fp32]  --recompute none|selective|full [none]\n"
"  --grad-accum N [1]  --gen N [128]  --launch eager|graphs [eager]\n"
"  --finetune full|lora [full]  --lora-rank R [16]  --lora-targets LIST [q,k,v,o]\n"
"  --freeze N [0: the embeddings and the first N layers frozen]\n"
"profiles (--trace): --profile-clock MHZ  --profile-power-limit-w W  --profile-gpu ID\n"
"  what they ran at and on, for files that do not say (default: their \"wattlas\"\n"
"  metadata, else the name's _<MHz>mhz, the GPU's default limit, its tdp_w, and\n"
"  the GPU swept); --profile-step-ms MS  the step's wall time unprofiled (default:\n"
"  the metadata's wall_ms_per_step, else summary.csv beside them, else 4 us an op\n"
"  of profiler cost)\n"
"software: --stack hf5|hf4 [hf5: transformers 5.x; hf4: EnergAIzer's 4.x]\n"
"  --impl hf-eager|fused [hf-eager]\n"
"options:\n"
"  --spec FILE.ini    the axes from a file: [sweep] key = list, [set] KEY = list;\n"
"                     options on the command line replace the file's axes\n"
"  --kernels          a row per kernel class (class_* columns)\n"
"  --interval LEVEL   prediction-interval columns (0.95 or 95), with the spread\n"
"                     between boards and hosts of one product\n"
"  --board same|other same: the presets carry the very boards swept (no spread\n"
"                     between boards in the intervals); default other\n"
"  --latency tiled|roofline [tiled]  --no-power-limit\n"
"  --format csv|ndjson|json|table [csv]  --threads N [every core]  --quiet\n"
"  -o FILE [standard output]\n"
"  --shard I/N        the I-th of N contiguous slices (1 <= I <= N), csv or\n"
"                     ndjson; 'wattlas merge' joins the N files\n\n"
"Ctrl-C (or SIGTERM) stops between rows and writes the whole rows done so far\n"
"to FILE.partial beside -o FILE, which keeps what it held (exit status 130;\n"
"to standard output, the rows done so far). A progress bar goes to stderr\n"
"when it is a terminal.\n");
}

typedef struct {
    wl_sweep_spec *spec;
    wl_sweep_options run;
    const char *out;
    int quiet;
} sweep_opts;

/* Option -> sweep key (the source of its values is the option itself). */
static const cli_axis axis_opts[] = {
    {"gpu", "gpu"},         {"model", "model"},
    {"trace", "trace"},     {"batch", "batch"},
    {"seq", "seq"},         {"dtype", "dtype"},
    {"attention", "attention"}, {"clock", "clock"},
    {"voltage-offset-mv", "voltage_offset_mv"}, {"voltage-mv", "voltage_mv"},
    {"set", "set"}, {"power-limit-w", "power_limit_w"},         {"scope", "scope"}, {"learned", "learned"},
    {"idle", "idle"},       {"latency", "latency"},     {"host", "host"},
    {"interval", "interval"}, {"board", "board"},
    CLI_MODE_AXES,
};
#define NAXIS (sizeof axis_opts / sizeof *axis_opts)

static int sweep_parse(int argc, char **argv, sweep_opts *o)
{
    const char *cmd = "sweep";
    enum { O_SPEC = 256, O_FORMAT, O_THREADS, O_SHARD, O_QUIET, O_HELP, O_KERNELS, O_NOLIMIT };
    struct option lo[NAXIS + 9];
    size_t n = 0;
    cli_axis_options(axis_opts, NAXIS, lo, &n);
    lo[n++] = (struct option){"spec", required_argument, 0, O_SPEC};
    lo[n++] = (struct option){"format", required_argument, 0, O_FORMAT};
    lo[n++] = (struct option){"threads", required_argument, 0, O_THREADS};
    lo[n++] = (struct option){"shard", required_argument, 0, O_SHARD};
    lo[n++] = (struct option){"quiet", no_argument, 0, O_QUIET};
    lo[n++] = (struct option){"help", no_argument, 0, O_HELP};
    lo[n++] = (struct option){"kernels", no_argument, 0, O_KERNELS};
    lo[n++] = (struct option){"no-power-limit", no_argument, 0, O_NOLIMIT};
    lo[n] = (struct option){0, 0, 0, 0};
    wl_error err = {0};
    /* spec files first: the command line replaces what they say */
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:", lo, NULL)) != -1) {
        if (c == O_HELP) {
            sweep_help(stdout);
            return CLI_HELP;
        }
        if (c == O_SPEC && wl_sweep_spec_load(o->spec, optarg, &err))
            return cli_fail(cmd, &err);
        if (c == ':' || c == '?')
            return cli_bad_option(cmd, c, argc, argv, lo);
    }
    optind = 1;
    while ((c = getopt_long(argc, argv, ":o:", lo, NULL)) != -1) {
        int rc = 0;
        const cli_axis *ax = cli_axis_of(axis_opts, NAXIS, c);
        if (ax) {
            rc = cli_axis_set(cmd, o->spec, ax, optarg);
        } else if (c == O_FORMAT) {
            rc = cli_format(cmd, optarg, &o->run.format);
        } else if (c == O_THREADS) {
            long long t;
            rc = cli_int(cmd, "--threads", optarg, 1, 1024, &t);
            o->run.threads = (int)t;
        } else if (c == O_SHARD) {
            rc = cli_shard(cmd, optarg, &o->run.shard_index, &o->run.shard_count);
        } else if (c == O_QUIET) {
            o->quiet = 1;
        } else if (c == O_KERNELS) {
            if (wl_sweep_spec_set(o->spec, "classes", "on", "--kernels", 0, &err))
                rc = cli_fail(cmd, &err);
        } else if (c == O_NOLIMIT) {
            if (wl_sweep_spec_set(o->spec, "power_limit", "off", "--no-power-limit", 0, &err))
                rc = cli_fail(cmd, &err);
        } else if (c == 'o') {
            o->out = optarg;
        }
        if (rc)
            return rc;
    }
    if (optind < argc)
        return cli_usage(cmd, "unexpected argument '%s'", argv[optind]);
    if (o->run.shard_count &&
        (o->run.format == WL_FMT_JSON || o->run.format == WL_FMT_TABLE))
        return cli_usage(cmd, "--shard writes csv or ndjson (merge joins the shards)");
    if (wl_sweep_spec_finish(o->spec, &err))
        return cli_fail(cmd, &err);
    cli_spec_notes(cmd, o->spec, o->quiet);
    return 0;
}

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

static int sweep_run(sweep_opts *o)
{
    const char *cmd = "sweep";
    wl_error err = {0};
    wl_results_out *out = NULL;
    int rank = 0;
#ifdef WL_MPI
    /* rank 0 writes; every rank evaluates */
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int opened = rank != 0 || wl_results_out_open(o->out, &out, &err) == WL_OK;
    MPI_Bcast(&opened, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!opened)
        return rank == 0 ? cli_fail(cmd, &err) : EXIT_RUNTIME;
#else
    if (wl_results_out_open(o->out, &out, &err))
        return cli_fail(cmd, &err);
#endif
    cli_bar b;
    cli_bar_start(&b, "points");
    if (rank == 0 && !o->quiet && isatty(STDERR_FILENO)) {
        o->run.progress = cli_bar_draw;
        o->run.progress_user = &b;
    }
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    wl_sweep_stats st;
#ifdef WL_MPI
    int rc = wl_sweep_run_mpi(o->spec, &o->run, MPI_COMM_WORLD, out ? wl_results_out_stream(out) : NULL,
                              &stop_flag, &st, &err);
    if (rank != 0)
        return rc ? EXIT_RUNTIME : 0; /* rank 0 reports */
#else
    int rc = wl_sweep_run(o->spec, &o->run, wl_results_out_stream(out), &stop_flag, &st, &err);
#endif
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    cli_bar_end(&b);
    if (rc) {
        wl_results_out_abort(out);
        return cli_fail(cmd, &err);
    }
    /* an interrupted run keeps its whole rows beside the file, which stays
     * as it was: a complete old output is never replaced by a prefix */
    char partial[4200] = "";
    if (st.interrupted ? wl_results_out_commit_partial(out, partial, sizeof partial, &err)
                       : wl_results_out_commit(out, &err))
        return cli_fail(cmd, &err);
    if (!o->quiet) {
        fprintf(stderr, "wattlas sweep: %llu points, %llu rows in %.2f s (%.0f points/s)", st.points,
                st.rows, st.seconds, st.seconds > 0 ? (double)st.points / st.seconds : 0);
        if (st.interrupted && partial[0])
            fprintf(stderr, ", interrupted: the rows done so far are in %s (%s left as it was)",
                    partial, o->out);
        else if (st.interrupted)
            fprintf(stderr, ", interrupted: the output holds the rows done so far");
        fputc('\n', stderr);
        if (st.tally.unfit)
            fprintf(stderr, "wattlas sweep: note: %llu points need more memory than their GPU has "
                    "(fits = 0); optimize, pareto and report leave them out unless --all\n",
                    st.tally.unfit);
    }
    cli_learned_outside("sweep", o->spec, st.tally.learned_outside);
    return st.interrupted ? 130 : 0;
}

int cmd_sweep(int argc, char **argv)
{
    sweep_opts o = {.spec = wl_sweep_spec_create(), .run = {.format = WL_FMT_CSV}, .out = "-"};
    if (!o.spec) {
        fprintf(stderr, "wattlas sweep: out of memory\n");
        return EXIT_RUNTIME;
    }
    int rc = sweep_parse(argc, argv, &o);
    if (rc == CLI_HELP)
        rc = 0;
    else if (!rc)
        rc = sweep_run(&o);
    wl_sweep_spec_free(o.spec);
    return rc;
}

/* ---- merge -------------------------------------------------------------------------- */

static void merge_help(FILE *f)
{
    fprintf(f, "usage: wattlas merge SHARD... [--in SHARD]... [-o FILE]\n\n"
               "Joins the outputs of 'wattlas sweep --shard I/N' (in any order) into the file\n"
               "the unsharded run writes. Every shard of one sweep must be given exactly once\n"
               "and be complete (an interrupted shard is refused).\n");
}

typedef struct {
    const char **paths;
    int n;
    const char *out;
} merge_opts;

static int merge_parse(int argc, char **argv, merge_opts *o)
{
    const char *cmd = "merge";
    static const struct option lo[] = {{"in", required_argument, 0, 'i'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:", lo, NULL)) != -1) {
        if (c == 'h') {
            merge_help(stdout);
            return CLI_HELP;
        }
        if (c == 'o')
            o->out = optarg;
        else if (c == 'i')
            o->paths[o->n++] = optarg;
        else
            return cli_bad_option(cmd, c, argc, argv, lo);
    }
    for (int i = optind; i < argc; i++)
        o->paths[o->n++] = argv[i];
    if (!o->n)
        return cli_usage(cmd, "expected shard files");
    return 0;
}

int cmd_merge(int argc, char **argv)
{
    merge_opts o = {.paths = calloc((size_t)argc + 1, sizeof(char *)), .out = "-"};
    if (!o.paths) {
        fprintf(stderr, "wattlas merge: out of memory\n");
        return EXIT_RUNTIME;
    }
    int rc = merge_parse(argc, argv, &o);
    if (rc == CLI_HELP) {
        rc = 0;
    } else if (!rc) {
        wl_error err = {0};
        wl_results_out *out = NULL;
        if (wl_results_out_open(o.out, &out, &err)) {
            rc = cli_fail("merge", &err);
        } else {
            cli_work *wk = cli_work_start("merge", o.out, 0);
            int mrc = wl_sweep_merge(o.paths, o.n, wl_results_out_stream(out), &err);
            cli_work_stop(wk);
            if (mrc) {
                wl_results_out_abort(out);
                rc = cli_fail("merge", &err);
            } else if (wl_results_out_commit(out, &err)) {
                rc = cli_fail("merge", &err);
            }
        }
    }
    free(o.paths);
    return rc;
}
