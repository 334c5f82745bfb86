/* wattlas command-line entry point: one table gives dispatch and help. */
#include "cli.h"

#ifdef WL_MPI
#include <mpi.h>
#endif

#include <errno.h>
#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <string.h>

static const cli_command commands[] = {
    {"predict", "time, power and energy of a model or trace at clocks", cmd_predict},
    {"compare", "one workload on several GPUs, with energy-optimal clocks", cmd_compare},
    {"energy-check", "board pJ/op at peak against the arithmetic's first-principles energy",
     cmd_energy_check},
    {"validate", "predictions against a measurements CSV, with MAPE and regret", cmd_validate},
    {"calibrate", "fit a GPU's coefficients to measurements", cmd_calibrate},
    {"learn", "a learned predictor (random forest, boosted trees, or a hybrid correction)",
     cmd_learn},
    {"sweep", "grids of clocks, voltages, GPUs and workloads", cmd_sweep},
    {"merge", "join the shards of a sweep", cmd_merge},
    {"pareto", "energy-runtime Pareto fronts of a sweep", cmd_pareto},
    {"optimize", "one operating point per workload, with the savings table", cmd_optimize},
    {"plot", "figures of sweeps, savings, validations and comparisons", cmd_plot},
    {"report", "a whole study: sweep, fronts, savings, figures, index.html", cmd_report},
    {"serve", "a serving engine (vLLM's scheduler) on a request mix: ITL, TTFT, energy per token",
     cmd_serve},
    {"cluster", "parallel training, prefill and decode on a multi-GPU system: time, energy, memory",
     cmd_cluster},
    {"presets", "list, show or derive GPU and model presets", cmd_presets},
};
#define NCOMMANDS (sizeof commands / sizeof *commands)

static void help(FILE *f)
{
    fprintf(f, "wattlas %s -- time, power and energy of AI workloads on GPUs at any clock\n\n"
               "usage: wattlas COMMAND [options]\n\ncommands:\n", WL_VERSION);
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-13s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'wattlas COMMAND --help' describes each command. Exit status: 0 success,\n"
               "1 runtime error (files, data), 2 usage error (options and their values).\n");
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
            rc = commands[i].main(argc - 1, argv + 1);
            return close_stdout(rc);
        }
    fprintf(stderr, "wattlas: unknown command '%s'\n\n", cmd);
    help(stderr);
    return EXIT_USAGE;
}
