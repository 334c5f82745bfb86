/* wattlas command-line entry point: one table gives dispatch and help. */
#include "cli.h"

#ifdef WL_MPI
#include <mpi.h>
#endif

#include <errno.h>
#include <gsl/gsl_errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static const cli_command commands[] = {
    {"predict", "time, power and energy of a model or trace at clocks", cmd_predict, 0},
    {"compare", "one workload on several GPUs, with energy-optimal clocks", cmd_compare, 1},
    {"energy-check", "board pJ/op at peak against the arithmetic's first-principles energy",
     cmd_energy_check, 0},
    {"validate", "predictions against a measurements CSV, with MAPE and regret", cmd_validate, 1},
    {"calibrate", "fit a GPU's coefficients to measurements", cmd_calibrate, 1},
    {"learn", "a learned predictor (random forest, boosted trees, or a hybrid correction)",
     cmd_learn, 1},
    /* sweep handles its signals itself: it keeps the rows done (FILE.partial) */
    {"sweep", "grids of clocks, voltages, GPUs and workloads", cmd_sweep, 0},
    {"merge", "join the shards of a sweep", cmd_merge, 1},
    {"pareto", "energy-runtime Pareto fronts of a sweep", cmd_pareto, 1},
    {"optimize", "one operating point per workload, with the savings table", cmd_optimize, 1},
    {"plot", "figures of sweeps, savings, validations and comparisons", cmd_plot, 1},
    {"report", "a whole study: sweep, fronts, savings, figures, index.html", cmd_report, 1},
    {"serve", "a serving engine (vLLM's scheduler) on a request mix: ITL, TTFT, energy per token",
     cmd_serve, 1},
    {"cluster", "parallel training, prefill and decode on a multi-GPU system: time, energy, memory",
     cmd_cluster, 1},
    {"presets", "list, show or derive GPU and model presets", cmd_presets, 0},
};
#define NCOMMANDS (sizeof commands / sizeof *commands)

static void help(FILE *f)
{
    fprintf(f, "wattlas %s -- time, power and energy of AI workloads on GPUs at any clock\n\n"
               "usage: wattlas COMMAND [options]\n\ncommands:\n", WL_VERSION);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-13s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'wattlas COMMAND --help' describes each command. Exit status: 0 success,\n"
               "1 runtime error (files, data), 2 usage error (options and their values),\n"
               "130 or 143 stopped by Ctrl-C or SIGTERM (outputs left as they were).\n");
}

/* Ctrl-C or SIGTERM during a long command (issue 62): the handler only
 * sets the flag the library polls every few milliseconds (wl_stop_watch),
 * so the call returns WL_ESTOPPED with its outputs left as they were and
 * its temporary files and folders removed on its own way out; the exit
 * status is 128 + the signal, as the shell's own would be (a printout
 * the signal cut short says "stopped"). The handler
 * puts the earlier action back, so a second signal acts at once
 * (wl_results_out's handler: the temporary files removed, then the
 * default action). A signal ignored when we started (a background job's
 * SIGINT) stays ignored. */
static volatile sig_atomic_t stop_flag, stop_signal;
static const int stop_sigs[2] = {SIGINT, SIGTERM};
static struct sigaction stop_old[2];
static int stop_set[2];

static void on_stop(int sig)
{
    stop_flag = 1;
    stop_signal = sig;
    for (int i = 0; i < 2; i++)
        if (stop_set[i])
            sigaction(stop_sigs[i], &stop_old[i], NULL);
}

static void stop_begin(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 2; i++) {
        stop_set[i] = sigaction(stop_sigs[i], NULL, &stop_old[i]) == 0 &&
                      stop_old[i].sa_handler != SIG_IGN &&
                      sigaction(stop_sigs[i], &sa, NULL) == 0;
    }
    wl_stop_watch(&stop_flag);
}

static int stop_end(const char *cmd, int rc)
{
    wl_stop_watch(NULL);
    for (int i = 0; i < 2; i++)
        if (stop_set[i])
            sigaction(stop_sigs[i], &stop_old[i], NULL);
    if (!stop_flag)
        return rc;
    if (rc == 0) /* a call that returned what it had (a printout cut short) */
        fprintf(stderr, "wattlas %s: stopped\n", cmd);
    return 128 + stop_signal;
}

/* Everything written to stdout must have arrived: a full disk or device
 * (> /dev/full) is an error, not a success with the output lost. */
static int close_stdout(int rc)
{
    errno = 0;
    int bad = fflush(stdout) != 0 || ferror(stdout);
    int e = errno;
    if (fclose(stdout) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad && !rc) /* a command that failed has said why */
        fprintf(stderr, "wattlas: write error on standard output: %s\n", strerror(e ? e : EIO));
    if (bad)
        return rc ? rc : EXIT_RUNTIME;
    return rc;
}

#ifdef WL_MPI
/* wattlas-mpi: sweep runs on every rank (rank 0 writes); every other
 * command runs on rank 0 alone. Ranks other than 0 are silent. */
static int run_command(int argc, char **argv);

int main(int argc, char **argv)
{
    int provided, rank = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int rc;
    if (rank != 0 && !freopen("/dev/null", "w", stderr))
        rc = EXIT_RUNTIME;
    else if (rank != 0 && !(argc >= 2 && !strcmp(argv[1], "sweep")))
        rc = 0;
    else if (rank != 0 && !freopen("/dev/null", "w", stdout))
        rc = EXIT_RUNTIME;
    else
        rc = run_command(argc, argv);
    MPI_Finalize();
    return rc;
}

static int run_command(int argc, char **argv)
#else
int main(int argc, char **argv)
#endif
{
    gsl_set_error_handler_off();
    wl_results_out_cleanup_on_signals();
    if (argc < 2) {
        help(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    int rc;
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        help(stdout);
        return close_stdout(0);
    }
    if (!strcmp(cmd, "--version")) {
        printf("wattlas %s\n", WL_VERSION);
        return close_stdout(0);
    }
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(cmd, commands[i].name)) {
            cli_short_help(argc - 1, argv + 1);
            if ((rc = cli_paths_check(cmd, argc - 1, argv + 1)) != 0)
                return rc;
            if (commands[i].stops)
                stop_begin();
            rc = commands[i].main(argc - 1, argv + 1);
            if (commands[i].stops)
                rc = stop_end(cmd, rc);
            return close_stdout(rc);
        }
    fprintf(stderr, "wattlas: unknown command '%s'\n\n", cmd);
    help(stderr);
    return EXIT_USAGE;
}
