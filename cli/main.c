/* wattlas command-line entry point. */
#include "cli.h"

#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <string.h>

static void help(FILE *f)
{
    fprintf(f,
            "wattlas %s -- time, power and energy of AI workloads on GPUs at any clock\n\n"
            "usage: wattlas COMMAND [options]\n\n"
            "commands:\n"
            "  predict     predict time, power and energy of a model or trace\n"
            "  compare     one workload on several GPUs, with energy-optimal clocks\n"
            "  energy-check  board pJ/op at peak against the arithmetic's first-principles energy\n"
            "  validate    compare predictions with a measurements CSV\n"
            "  calibrate   fit a GPU's coefficients to measurements\n"
            "  sweep       evaluate grids of clocks, voltages, GPUs and workloads\n"
            "  merge       join sharded sweep outputs\n"
            "  pareto      energy-runtime Pareto fronts of a sweep\n"
            "  optimize    one operating point per workload, with the savings table\n"
            "  plot        figures: energy-freq, pareto, heatmap, savings, validation\n"
            "  report      a whole study: sweep, fronts, savings, figures, index.html\n"
            "  presets     list, show or derive GPU and model presets\n\n"
            "'wattlas COMMAND --help' describes each command.\n",
            WL_VERSION);
}

int main(int argc, char **argv)
{
    gsl_set_error_handler_off();
    if (argc < 2) {
        help(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 || strcmp(cmd, "help") == 0) {
        help(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("wattlas %s\n", WL_VERSION);
        return 0;
    }
    if (strcmp(cmd, "predict") == 0)
        return cmd_predict(argc - 1, argv + 1);
    if (strcmp(cmd, "compare") == 0)
        return cmd_compare(argc - 1, argv + 1);
    if (strcmp(cmd, "energy-check") == 0)
        return cmd_energy_check(argc - 1, argv + 1);
    if (strcmp(cmd, "validate") == 0)
        return cmd_validate(argc - 1, argv + 1);
    if (strcmp(cmd, "presets") == 0)
        return cmd_presets(argc - 1, argv + 1);
    if (strcmp(cmd, "calibrate") == 0)
        return cmd_calibrate(argc - 1, argv + 1);
    if (strcmp(cmd, "sweep") == 0)
        return cmd_sweep(argc - 1, argv + 1);
    if (strcmp(cmd, "merge") == 0)
        return cmd_merge(argc - 1, argv + 1);
    if (strcmp(cmd, "pareto") == 0)
        return cmd_pareto(argc - 1, argv + 1);
    if (strcmp(cmd, "optimize") == 0)
        return cmd_optimize(argc - 1, argv + 1);
    if (strcmp(cmd, "plot") == 0)
        return cmd_plot(argc - 1, argv + 1);
    if (strcmp(cmd, "report") == 0)
        return cmd_report(argc - 1, argv + 1);
    fprintf(stderr, "wattlas: unknown command '%s'\n", cmd);
    help(stderr);
    return EXIT_USAGE;
}
