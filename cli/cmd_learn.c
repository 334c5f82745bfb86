/* wattlas learn */
#include "cli.h"
#include "../learn/wattlas_learn.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void help(FILE *f)
{
    fprintf(f,
"usage: wattlas learn MEASUREMENTS.csv -o MODEL.json [--kind rf|gbt] [--hybrid]\n"
"                     [--kfold K] [--lomo] [--importance FILE.csv] [--trees N]\n"
"                     [--max-depth N] [--seed N] [--gpu ID] [--host ID] [--no-beside]\n"
"                     [--no-refit] [--random-split] [--quiet]\n\n"
"Trains a predictor of time, power and energy on measurements (the schema of\n"
"shared/data/measurements) with XGBoost: a random forest (rf, the default) or\n"
"gradient-boosted trees (gbt).\n"
"  plain     features of the GPU (SMs, peak rate for the precision, DRAM\n"
"            bandwidth, power limit, L2), the workload (layers, d_model, heads,\n"
"            d_ff, batch, seq, dtype, mode, attention) and the operating point\n"
"            (clock, voltage); targets log time, power and energy\n"
"  --hybrid  the target is the log ratio of the measurement to wattlas's own\n"
"            prediction, with the prediction's parts as more features: the\n"
"            result multiplies the analytical prediction, and fades to it\n"
"            outside the training domain. It learns from out-of-fold\n"
"            predictions (the analytical model refitted without each model of\n"
"            the training rows in turn) and keeps, per target, no correction,\n"
"            a constant factor or the trees at 1/4 to 1 of their strength:\n"
"            whichever gains most on models left out, of those that gain with\n"
"            90%% confidence for all five together and by a tenth of the error\n"
"            at least (three models at least); stderr says which\n"
"Every row is predicted on its own GPU's preset (as 'wattlas validate').\n"
"stderr gets the cross-validated MAPE (k-fold by workload, default 4; with\n"
"--lomo also leave one model out) of the learned model and of the analytical\n"
"model alone on the same held-out rows. Each fold refits the analytical\n"
"model's coefficients without its held-out rows too (a GPU calibrated on this\n"
"data), so that neither model has seen them; --no-refit keeps the preset's\n"
"(in-sample when the preset was fitted to this file). MODEL.json records the features,\n"
"their training domain, the data's fingerprint and the wattlas version; use\n"
"it with 'wattlas validate --learned'.\n"
"  --random-split  also k folds of rows drawn at random (seeded by --seed): each\n"
"                 row's workload is in training at its other clocks, so this\n"
"                 measures interpolation, as the A30 talk's figures do; the\n"
"                 splits by workload and model measure what a new case gets\n"
"  --importance FILE.csv  feature importances (share of split gain per target);\n"
"                 'wattlas plot importance FILE.csv' draws them\n"
"  --trees N      rf: trees; gbt: boosting rounds (default 200 / 300)\n"
"  --max-depth N  default rf 8, gbt 4, hybrid gbt 3\n"
"  --seed N       XGBoost's seed (default 1); training is single-threaded, so a\n"
"                 model file is the same run after run\n"
"  --quiet        no progress bar (the cross-validation report stays)\n");
}

static int learn_parse(int argc, char **argv, wl_learn_run_options *o, int *quiet)
{
    const char *cmd = "learn";
    static const struct option lo[] = {
        {"kind", required_argument, 0, 'k'},   {"hybrid", no_argument, 0, 'H'},
        {"kfold", required_argument, 0, 'K'},  {"lomo", no_argument, 0, 'L'},
        {"importance", required_argument, 0, 'I'}, {"trees", required_argument, 0, 'T'},
        {"max-depth", required_argument, 0, 'D'}, {"seed", required_argument, 0, 's'},
        {"gpu", required_argument, 0, 'g'},    {"host", required_argument, 0, 'h' + 256},
        {"no-beside", no_argument, 0, 'B'},    {"in", required_argument, 0, 'N'},
        {"no-refit", no_argument, 0, 'R'},    {"random-split", no_argument, 0, 'P'},
        {"quiet", no_argument, 0, 'q'},        {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    const char *in = NULL;
    optind = 1;
    opterr = 0;
    int c, rc = 0;
    long long iv;
    while (!rc && (c = getopt_long(argc, argv, ":o:", lo, NULL)) != -1) {
        switch (c) {
        case 'k':
            if (wl_learn_kind_parse(optarg, &o->learn.kind))
                rc = cli_usage(cmd, "--kind: expected rf or gbt, got '%.60s'", optarg);
            break;
        case 'H': o->learn.hybrid = 1; break;
        case 'K':
            if (!(rc = cli_int(cmd, "--kfold", optarg, 2, 100, &iv)))
                o->kfold = (int)iv;
            break;
        case 'L': o->lomo = 1; break;
        case 'I': o->importance = optarg; break;
        case 'T':
            if (!(rc = cli_int(cmd, "--trees", optarg, 1, 5000, &iv)))
                o->learn.trees = (int)iv;
            break;
        case 'D':
            if (!(rc = cli_int(cmd, "--max-depth", optarg, 1, 16, &iv)))
                o->learn.max_depth = (int)iv;
            break;
        case 's':
            if (!(rc = cli_int(cmd, "--seed", optarg, 0, 4294967295LL, &iv)))
                o->learn.seed = (unsigned)iv;
            break;
        case 'g': o->data.gpu = optarg; break;
        case 'h' + 256: o->data.host = optarg; break;
        case 'B': o->data.beside = 0; break;
        case 'R': o->no_refit = 1; break;
        case 'P': o->random_split = 1; break;
        case 'N': in = optarg; break;
        case 'q': *quiet = 1; break;
        case 'o': o->out = optarg; break;
        case 'h': help(stdout); return CLI_HELP;
        default: rc = cli_bad_option(cmd, c, argc, argv, lo); break;
        }
    }
    if (!rc)
        rc = cli_input(cmd, in, argc, argv, optind, &o->path);
    if (!rc && (!o->path || !o->out))
        rc = cli_usage(cmd, "expected MEASUREMENTS.csv and -o MODEL.json");
    return rc;
}

int cmd_learn(int argc, char **argv)
{
    wl_learn_run_options o;
    wl_learn_run_options_default(&o);
    int quiet = 0;
    int rc = learn_parse(argc, argv, &o, &quiet);
    if (rc)
        return rc == CLI_HELP ? 0 : rc;
    cli_bar b;
    cli_bar_start(&b, "models");
    o.say = cli_bar_line;
    o.progress = quiet ? NULL : isatty(STDERR_FILENO) ? cli_bar_draw : cli_bar_log;
    o.user = &b;
    /* one model can take a minute: a log hears that it is still working */
    if (o.progress == cli_bar_log)
        cli_beat_start(&b);
    wl_learn_run_result r;
    wl_error err = {0};
    int lrc = wl_learn_run(&o, &r, &err);
    cli_beat_stop(&b);
    if (lrc)
        rc = cli_fail("learn", &err);
    cli_bar_end(&b);
    return rc;
}
