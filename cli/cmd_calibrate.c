/* wattlas calibrate */
#include "cli.h"
#include "../calib/wattlas_calib.h"
#include "../presets/wattlas_presets.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void help(FILE *f)
{
    fprintf(f,
"usage: wattlas calibrate --gpu ID MEASUREMENTS.csv -o FILE.ini [options]\n\n"
"Fits the GPU's latency and power coefficients to measured rows (GSL\n"
"nonlinear least squares on ln time and ln power ratios, anchored by the\n"
"measured temperature, Huber-reweighted against outliers) and writes a\n"
"preset: the GPU's spec-sheet part unchanged plus a [calibration] section\n"
"with the fitted values and their standard errors, the data's fingerprint\n"
"and this command, and a [covariance] section for prediction intervals.\n"
"Rows that cannot be modelled or whose measurement is impossible (not\n"
"positive, below idle power, power != energy/time) are reported and\n"
"excluded. Residuals per workload and in-sample figures go to stderr. The\n"
"input may also be given as --in FILE.\n\n"
"  --fit WHAT            what the rows move: gpu (every GPU coefficient, the\n"
"                        default for a GPU with fitted coefficients), board (the\n"
"                        memory path, the board's power and its controller; the\n"
"                        die's latency stays as the preset has it: a board of a\n"
"                        die calibrated before, as the H200 of the H100), host (only\n"
"                        the host's per-kernel issue cost, from a few launch-bound\n"
"                        rows; -o then writes a host preset), gpu,host (both; the\n"
"                        host preset goes to --host-out), a list of coefficient\n"
"                        names, or auto (few-shot, the default for a GPU whose\n"
"                        coefficients are transferred: the preset's coefficients\n"
"                        are the prior, each +-REL; only those the rows identify\n"
"                        move, and the output says which; works from 3-5 rows),\n"
"                        or tc_fp8_power_ratio: the input is then pairs of a bf16\n"
"                        and an fp8 GEMM of one shape run under one power limit\n"
"                        (dtype,m,n,k,measured_clock_mhz,time_ms,power_w,\n"
"                        throttle_reasons), and -o gets the --gpu preset with the\n"
"                        power of a busy fp8 tensor-core cycle over a bf16 one\n"
"  --transfer-sd REL     the prior's relative spread for --fit auto (default 0.3)\n"
"  --host ID|FILE.ini    the host the rows were measured on (default: the GPU\n"
"                        preset's host class, presets/hosts/)\n"
"  --host-out FILE.ini   where --fit gpu,host writes the fitted host preset\n"
"  --traces DIR[,DIR...] predict rows from traces where a directory has one\n"
"  --idle TABLE.csv      replace the preset's V-f/idle table by one derived\n"
"                        from this idle measurement (sm_clock_mhz,voltage_mv,\n"
"                        idle_power_w)\n"
"  --vf rows|keep        the voltage of a GPU that reads out none (its preset's\n"
"                        rule, or a table derived from rows before): rows (the\n"
"                        default) derives it from the compute-bound rows (GEMMs\n"
"                        the clock paces and no limit holds, at 3+ clocks): V ~\n"
"                        sqrt((P - P_idle(f) - P_leak) / f), normalised at the\n"
"                        floor, written into [vf] with the rows it came from;\n"
"                        keep leaves the preset's. A measured voltage column\n"
"                        (an idle table's voltage_mv) is always kept\n"
"  --holdout MODEL,...|every:K  fit without these models and score them\n"
"                        (held-out); every:K holds out every K-th of the file's\n"
"                        model names in sorted order (a split by name alone)\n"
"  --kfold K             also report K-fold cross-validated error (whole\n"
"                        workloads per fold)\n"
"  --lomo                also report leave-one-model-out error\n"
"  --from-preset         start from the preset's coefficients instead of the\n"
"                        physical defaults (the result may then depend on them)\n"
"  --prior-weight W      pull towards the physical defaults (default 0.3,\n"
"                        chosen by leave-one-model-out cross-validation)\n"
"  --quiet               no per-row and per-workload lines on stderr\n");
}

static int cal_parse(int argc, char **argv, wl_calib_run_options *o)
{
    const char *cmd = "calibrate";
    static const struct option lo[] = {{"traces", required_argument, 0, 't'},
                                       {"gpu", required_argument, 0, 'g'},
                                       {"idle", required_argument, 0, 'i'},
                                       {"holdout", required_argument, 0, 'H'},
                                       {"kfold", required_argument, 0, 'k'},
                                       {"lomo", no_argument, 0, 'L'},
                                       {"from-preset", no_argument, 0, 'F'},
                                       {"prior-weight", required_argument, 0, 'p'},
                                       {"in", required_argument, 0, 'N'},
                                       {"quiet", no_argument, 0, 'q'},
                                       {"fit", required_argument, 0, 'W'},
                                       {"host", required_argument, 0, 'O'},
                                       {"host-out", required_argument, 0, 'U'},
                                       {"transfer-sd", required_argument, 0, 'T'},
                                       {"vf", required_argument, 0, 'V'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    const char *in = NULL;
    optind = 1;
    opterr = 0;
    int c, rc = 0;
    long long k;
    while (!rc && (c = getopt_long(argc, argv, ":o:", lo, NULL)) != -1) {
        switch (c) {
        case 't': o->traces = optarg; break;
        case 'g': o->gpu = optarg; break;
        case 'i': o->idle = optarg; break;
        case 'H': o->holdout = optarg; break;
        case 'L': o->lomo = 1; break;
        case 'F': o->fit_options.from_defaults = 0; break;
        case 'N': in = optarg; break;
        case 'q': o->quiet = 1; break;
        case 'k':
            if (!(rc = cli_int(cmd, "--kfold", optarg, 2, 1000, &k)))
                o->kfold = (int)k;
            break;
        case 'p':
            rc = cli_real(cmd, "--prior-weight", optarg, 0, 1e6, &o->fit_options.prior_weight);
            break;
        case 'o': o->out = optarg; break;
        case 'O': o->host = optarg; break;
        case 'U': o->host_out = optarg; break;
        case 'W': o->fit = optarg; break;
        case 'T':
            rc = cli_real(cmd, "--transfer-sd", optarg, 0.01, 10, &o->fit_options.transfer_rel);
            break;
        case 'V':
            if (!strcmp(optarg, "rows") || !strcmp(optarg, "keep"))
                o->vf_keep = !strcmp(optarg, "keep");
            else
                rc = cli_usage(cmd, "--vf: expected rows or keep, got '%.40s'", optarg);
            break;
        case 'h': help(stdout); return CLI_HELP;
        default: rc = cli_bad_option(cmd, c, argc, argv, lo); break;
        }
    }
    if (!rc)
        rc = cli_input(cmd, in, argc, argv, optind, &o->path);
    if (rc)
        return rc;
    if (!o->gpu)
        return cli_usage(cmd, "--gpu is required");
    if (!o->out)
        return cli_usage(cmd, "-o FILE.ini is required");
    if (!o->path)
        return cli_usage(cmd, "expected one MEASUREMENTS.csv");
    return 0;
}

int cmd_calibrate(int argc, char **argv)
{
    wl_calib_run_options o;
    wl_calib_run_options_default(&o);
    int rc = cal_parse(argc, argv, &o);
    if (rc)
        return rc == CLI_HELP ? 0 : rc;
    char *command = cli_command_line(argc, argv);
    if (!command) {
        fprintf(stderr, "wattlas calibrate: out of memory\n");
        return EXIT_RUNTIME;
    }
    cli_bar b;
    cli_bar_start(&b, "fits");
    o.command = command;
    o.say = cli_bar_line;
    o.progress = o.quiet ? NULL : isatty(STDERR_FILENO) ? cli_bar_draw : cli_bar_log;
    o.user = &b;
    wl_calib_run_result r;
    wl_error err = {0};
    if (wl_calib_run(&o, &r, &err))
        rc = cli_fail("calibrate", &err);
    cli_bar_end(&b);
    free(command);
    return rc;
}
