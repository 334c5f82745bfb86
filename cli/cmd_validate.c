/* wattlas validate */
#include "cli.h"
#include "../calib/wattlas_calib.h"
#include "../learn/wattlas_learn.h"
#include "../serve/wattlas_serve.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void help(FILE *f)
{
    fprintf(f,
"usage: wattlas validate MEASUREMENTS.csv [--traces DIR] [--idle [ID=]TABLE.csv] [--gpu ID]\n"
"                        [--host ID] [--no-beside] [--lomo] [--interval L] [--board same|other]\n"
"                        [--format FMT] [-o FILE]\n\n"
"Predicts every measured row (schema of shared/data/measurements) and writes\n"
"the input columns followed by predicted_effective_clock_mhz,\n"
"predicted_time_ms, predicted_power_w and predicted_energy_j, in input order.\n"
"Rows that cannot be modelled keep empty predictions; the reason goes to\n"
"stderr. The input may also be given as --in FILE.\n\n"
"stderr also gets a summary: MAPE of time, power and energy; for each\n"
"workload measured at five or more clocks, the regret of the predicted\n"
"energy-optimal clock (measured energy there over the measured minimum);\n"
"and, with --lomo, leave-one-model-out MAPE (refit without each model, score\n"
"it). The exit status is 1 when no row could be scored.\n\n"
"  --traces DIR[,DIR...]  predict a row from DIR/<model>_<dtype>_b<batch>[_s<seq>]_\n"
"                <mode>.json (or .json.gz) in the first directory that has it\n"
"  --idle [ID=]TABLE.csv  measured idle table (sm_clock_mhz,voltage_mv,idle_power_w;\n"
"                voltage may be empty) for that GPU instead of its preset's curve;\n"
"                repeat for several GPUs\n"
"  --no-beside   do not look beside the measurements (see below)\n"
"  --gpu ID      score only that GPU's rows on this preset (default: every GPU\n"
"                named in the gpu column, each on its own preset, then pooled)\n"
"  --host ID|FILE.ini  the host that issued the kernels, for every GPU (default:\n"
"                each GPU preset's host class, presets/hosts/)\n"
"  --lomo        also refit the coefficients without each model and score it\n"
"                (held-out error; a refit per model, seconds where plain\n"
"                scoring takes a fraction of one); --no-lomo, the default,\n"
"                scores with the preset's coefficients only\n"
"  --interval L  add predicted_*_lo/hi columns: the prediction interval at level\n"
"                L (0.95 or 95), and report how often it covers the measurement\n"
"  --board same|other  whose board measured the rows: other adds the spread\n"
"                between boards and hosts of one product to the intervals\n"
"                (dynamic power, the controller's setpoint, the host's cost\n"
"                per kernel), same leaves it out (default: same only when\n"
"                the preset was fitted on this very file)\n"
"  --learned MODEL.json  predictions of a model from 'wattlas learn': a hybrid\n"
"                corrects the analytical prediction (fading to none outside\n"
"                its training domain), a plain one replaces it; stderr gives\n"
"                both models' MAPE on the same rows\n"
"  --quiet       stderr gets the summary's totals only: no per-row notes, no\n"
"                regret per workload and no refit per model\n"
"  --format csv|ndjson|json|table  (default csv)   -o FILE (atomically)\n\n"
"Beside the measurements: with DATA/measurements/X.csv, a GPU whose preset\n"
"idle curve comes from the board-class rule uses DATA/gpu-tables/<id>-idle.csv\n"
"when it exists, and rows no native builder covers (a model without one, an\n"
"fp32 row with only a bf16 trace, retyped) come from DATA/traces/. Each use is\n"
"noted on stderr. The GPU column may name a preset by id or alias\n"
"(\"NVIDIA A10\", \"H100-SXM5-80GB\").\n\n"
"Serving rows (a CSV with max_num_seqs and energy_per_token_j columns, as\n"
"'python3 -m wattlas.measure serve' writes): each row runs as 'wattlas serve'\n"
"would (its model, dtype, workload or prompt_tokens/output_tokens, requests,\n"
"seed, max_num_seqs, max_num_batched_tokens, async_scheduling, temperature,\n"
"top_p, top_k, sm_clock_mhz, power_limit_w, and the layout: tp, ep, dp,\n"
"system) and is written with\n"
"predicted_median_itl_ms, predicted_p90_itl_ms, predicted_output_tokens_per_s,\n"
"predicted_power_w and predicted_energy_per_token_j; stderr gets the MAPE.\n");
}

#define MAX_IDLE 16

typedef struct {
    const char *path, *out, *learned;
    const char *idle[MAX_IDLE];
    wl_calib_validation_options v;
    int lomo, quiet;
    wl_results_format format;
} validate_opts;

static int validate_parse(int argc, char **argv, validate_opts *o)
{
    const char *cmd = "validate";
    static const struct option lo[] = {{"traces", required_argument, 0, 't'},
                                       {"idle", required_argument, 0, 'i'},
                                       {"no-beside", no_argument, 0, 'B'},
                                       {"interval", required_argument, 0, 'I'},
                                       {"board", required_argument, 0, 'b'},
                                       {"gpu", required_argument, 0, 'g'},
                                       {"host", required_argument, 0, 'H'},
                                       {"no-lomo", no_argument, 0, 'n'},
                                       {"lomo", no_argument, 0, 'l'},
                                       {"in", required_argument, 0, 'N'},
                                       {"format", required_argument, 0, 'f'},
                                       {"quiet", no_argument, 0, 'q'},
                                       {"learned", required_argument, 0, 'L'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    const char *in = NULL;
    optind = 1;
    opterr = 0;
    int c, rc = 0;
    while (!rc && (c = getopt_long(argc, argv, ":o:", lo, NULL)) != -1) {
        switch (c) {
        case 't': o->v.traces_dir = optarg; break;
        case 'g': o->v.gpu = optarg; break;
        case 'H': o->v.host = optarg; break;
        case 'n': o->lomo = 0; break;
        case 'l': o->lomo = 1; break;
        case 'B': o->v.beside = 0; break;
        case 'N': in = optarg; break;
        case 'q': o->quiet = 1; break;
        case 'L': o->learned = optarg; break;
        case 'f': rc = cli_format(cmd, optarg, &o->format); break;
        case 'i':
            if (o->v.n_idle == MAX_IDLE)
                return cli_usage(cmd, "--idle: at most %d tables", MAX_IDLE);
            o->idle[o->v.n_idle++] = optarg;
            break;
        case 'I': {
            double l;
            rc = cli_real(cmd, "--interval", optarg, 0, 100, &l);
            o->v.level = l >= 1 ? l / 100 : l;
            if (!rc && !(o->v.level > 0 && o->v.level < 1))
                rc = cli_usage(cmd, "--interval: a level in (0, 1) or a percentage, got '%s'",
                               optarg);
            break;
        }
        case 'b':
            if (!strcmp(optarg, "same"))
                o->v.board = WL_CALIB_BOARD_SAME;
            else if (!strcmp(optarg, "other"))
                o->v.board = WL_CALIB_BOARD_OTHER;
            else
                rc = cli_usage(cmd, "--board: same or other, got '%s'", optarg);
            break;
        case 'o': o->out = optarg; break;
        case 'h': help(stdout); return CLI_HELP;
        default: rc = cli_bad_option(cmd, c, argc, argv, lo); break;
        }
    }
    if (!rc)
        rc = cli_input(cmd, in, argc, argv, optind, &o->path);
    if (!rc && !o->path)
        rc = cli_usage(cmd, "expected one MEASUREMENTS.csv");
    return rc;
}

static void print_regret(void *user, const char *wl, const wl_calib_row *bm,
                         const wl_calib_row *bp, double regret)
{
    (void)user;
    char m[32], p[32];
    wl_calib_point_text(bm, m, sizeof m);
    wl_calib_point_text(bp, p, sizeof p);
    fprintf(stderr, "  %-34s measured best %8s, predicted best %8s, regret %5.2f%%\n", wl, m, p,
            regret);
}

/* a fold's refit done: the bar moves (user: a bar and its fold count) */
typedef struct {
    cli_bar bar;
    unsigned long long done, total;
} fold_bar;

static void fold_done(void *user)
{
    fold_bar *b = user;
    cli_bar_draw(&b->bar, ++b->done, b->total);
}

/* quiet: the pooled line alone, not a line per model */
static int lomo(wl_calib_problem *p, const wl_calib_set *set, int quiet)
{
    size_t n = wl_calib_count(set);
    int *fold = malloc((n ? n : 1) * sizeof *fold);
    char names[64][64];
    wl_calib_metrics per[64], pooled;
    if (!fold)
        return WL_ENOMEM;
    int nf = wl_calib_folds_by_model(p, fold, names, 64);
    fprintf(stderr, "leave-one-model-out (refit without the model, score it; held-out):\n");
    if (nf < 2) {
        fprintf(stderr, "  needs at least two models; %s has %s%s%s\n", wl_calib_source(set),
                nf ? "one, " : "none", nf ? names[0] : "", "");
        free(fold);
        return WL_OK;
    }
    wl_calib_fit_options fo;
    wl_calib_fit_options_default(&fo);
    fold_bar b = {.total = (unsigned long long)nf};
    cli_bar_start(&b.bar, "refits");
    if (isatty(STDERR_FILENO)) {
        fo.fold_done = fold_done;
        fo.fold_user = &b;
    }
    int rc = wl_calib_crossval(p, fold, nf, &fo, &pooled, per);
    cli_bar_end(&b.bar);
    for (int f = 0; f < nf && !quiet; f++) {
        if (!per[f].n)
            fprintf(stderr, "  without %-12s skipped: the refit failed: %s\n", names[f],
                    per[f].failed_why);
        else
        {
            char t[200];
            wl_calib_mape_text(t, sizeof t, per[f].n, per[f].n_power, per[f].mape_time,
                               per[f].mape_power, per[f].mape_energy);
            fprintf(stderr, "  without %-12s (%3zu rows): %s\n", names[f], per[f].n, t);
        }
    }
    if (rc == WL_OK) {
        char t[200];
        wl_calib_mape_text(t, sizeof t, pooled.n, pooled.n_power, pooled.mape_time,
                           pooled.mape_power, pooled.mape_energy);
        fprintf(stderr, "  pooled held-out MAPE (%zu rows): %s; held-out regret worst %.1f%%, "
                        "mean %.2f%%\n", pooled.n, t, pooled.worst_regret, pooled.mean_regret);
    }
    free(fold);
    return WL_OK;
}

static void summary(wl_calib_validation *v, const validate_opts *o)
{
    const wl_calib_set *set = wl_calib_validation_set(v);
    size_t ng = wl_calib_validation_gpus(v);
    wl_calib_validation_summary s;
    wl_calib_validation_counts(v, &s);
    for (size_t k = 0; k < ng; k++) {
        wl_calib_problem *p = wl_calib_validation_problem(v, k);
        const wl_core_gpu *g = wl_calib_validation_gpu(v, k);
        wl_calib_metrics m;
        if (wl_calib_score(p, NULL, &m) != WL_OK || !m.n)
            continue;
        fprintf(stderr, "\nwattlas validate: %s on %s%s (%zu rows scored", o->path, g->id,
                g->coef_source[0] ? ", coefficients transferred" : "", m.n);
        if (ng == 1)
            fprintf(stderr, ", %zu from traces, %zu not modelled", s.traced, s.not_modelled);
        char t[200];
        wl_calib_mape_text(t, sizeof t, m.n, m.n_power, m.mape_time, m.mape_power,
                           m.mape_energy);
        fprintf(stderr, ")\n");
        if (g->fit_info[0]) /* what the preset was fitted on: these rows, or others? */
            fprintf(stderr, "coefficients %s%s%s\n", g->coef_source, g->coef_source[0] ? "; " : "",
                    g->fit_info);
        fprintf(stderr, "MAPE with the preset's coefficients: %s\n", t);
        if (m.n_regret) {
            char st[120] = "";
            if (m.n_stalled)
                snprintf(st, sizeof st, "; %zu rows over 10%% slower than a lower clock's left "
                         "out as host stalls", m.n_stalled);
            fprintf(stderr, "energy-optimal clock regret (%zu workloads with >= 5 clocks or "
                            "power limits between them%s): "
                            "worst %.2f%% (%s), mean %.2f%%\n",
                    m.n_regret, st, m.worst_regret, m.worst_regret_workload, m.mean_regret);
            if (!o->quiet)
                wl_calib_regrets(p, NULL, print_regret, NULL);
        }
        if (o->lomo && !g->coef_source[0] && lomo(p, set, o->quiet))
            fprintf(stderr, "wattlas validate: out of memory in leave-one-model-out\n");
        else if (!o->lomo && !g->coef_source[0] && !o->quiet)
            fprintf(stderr, "held-out error: add --lomo to refit without each model and score "
                            "it\n");
    }
    if (s.scored && ng > 1) {
        char t[200];
        wl_calib_mape_text(t, sizeof t, s.scored, s.scored_power, s.mape_time, s.mape_power,
                           s.mape_energy);
        fprintf(stderr, "\nall GPUs (%zu rows scored, %zu from traces, %zu not modelled): "
                        "MAPE %s\n", s.scored, s.traced, s.not_modelled, t);
    }
    if (s.covered)
        fprintf(stderr, "%.0f%% prediction intervals cover the measurement: time %.1f%%, "
                        "power %.1f%%, energy %.1f%% of %zu rows\n", 100 * o->v.level,
                s.coverage_pct[0], s.coverage_pct[1], s.coverage_pct[2], s.covered);
}

/* Measured serving rows (serve's columns): each simulated as wattlas serve
 * runs it and written with its predictions; the summary's MAPE. */
static int serve_validate(validate_opts *o)
{
    const char *cmd = "validate";
    wl_error err = {0};
    size_t nc;
    const wl_results_col *cols = wl_serve_validate_cols(&nc);
    cli_rows rows;
    int rc = cli_rows_open(cmd, o->out, o->format, cols, nc, &rows);
    if (rc)
        return rc;
    wl_serve_validation v;
    int vrc = wl_serve_validate(o->path, o->v.gpu, o->v.host, rows.w, o->quiet ? NULL : cli_note,
                                (void *)cmd, &v, &err);
    rc = cli_rows_close(cmd, &rows, !vrc);
    if (vrc)
        return cli_fail(cmd, &err);
    if (rc)
        return rc;
    fprintf(stderr, "\nwattlas validate: %s, serving rows (%zu, %zu scored)\n", o->path, v.rows,
            v.scored);
    if (!v.scored) {
        fprintf(stderr, "wattlas validate: no row of %s could be scored\n", o->path);
        return EXIT_RUNTIME;
    }
    fprintf(stderr, "MAPE: median ITL %.2f%%  power %.2f%%  energy per token %.2f%%  "
                    "output tokens/s %.2f%%\n", v.mape_itl, v.mape_power, v.mape_energy,
            v.mape_rate);
    return 0;
}

static int validate_run(validate_opts *o)
{
    if (wl_serve_is_measurement(o->path)) {
        if (o->learned || o->idle[0] || o->v.level > 0 || o->v.traces_dir)
            return cli_usage("validate", "serving rows take --gpu, --host, --quiet, --format "
                                         "and -o only");
        return serve_validate(o);
    }
    const char *cmd = "validate";
    wl_error err = {0};
    wl_calib_validation *v = NULL;
    o->v.idle_specs = o->idle;
    o->v.note = o->quiet ? NULL : cli_note;
    o->v.note_user = (void *)cmd;
    wl_learn_model *lm = NULL;
    wl_learn_tally lt = {0};
    if (o->learned && wl_learn_model_load(o->learned, &lm, &err))
        return cli_fail(cmd, &err);
    int vrc = wl_calib_validation_create(o->path, &o->v, &v, &err);
    if (vrc) {
        /* a bad --idle specification or an unknown --gpu is a usage error */
        if (!strcmp(err.field, "idle") && !err.line)
            return cli_usage(cmd, "--idle %s: %s", err.source, err.text);
        wl_learn_model_free(lm);
        if (vrc == WL_ENOTFOUND && o->v.gpu && !strcmp(err.source, o->v.gpu))
            return cli_usage(cmd, "--gpu %s: %s", o->v.gpu, err.text);
        return cli_fail(cmd, &err);
    }
    size_t nc;
    const wl_results_col *cols = wl_calib_validation_cols(v, &nc);
    cli_rows rows;
    int rc = cli_rows_open(cmd, o->out, o->format, cols, nc, &rows);
    wl_results_cell *cells = rc ? NULL : calloc(nc, sizeof *cells);
    if (!rc && !cells)
        rc = EXIT_RUNTIME;
    const wl_calib_set *set = wl_calib_validation_set(v);
    cli_bar bar;
    cli_bar_start(&bar, "rows");
    int tty = isatty(STDERR_FILENO);
    size_t nrows = wl_calib_count(set);
    for (size_t i = 0; !rc && i < nrows; i++) {
        const char *why = NULL;
        int r = lm ? wl_learn_validation_row(lm, v, i, cells, &why, &lt)
                   : wl_calib_validation_row(v, i, cells, &why);
        if (tty)
            cli_bar_draw(&bar, i + 1, nrows);
        if (why && !o->quiet && (cli_bar_end(&bar), 1))
            fprintf(stderr, "%s:%d: %s: %s\n", o->path, wl_calib_row_at(set, i)->line,
                    r == WL_OK ? "predicted but not scored" : "not modelled", why);
        if (wl_results_writer_row(rows.w, cells))
            rc = EXIT_RUNTIME;
    }
    cli_bar_end(&bar);
    free(cells);
    if (rows.w) {
        int crc = cli_rows_close(cmd, &rows, !rc);
        rc = rc ? rc : crc;
    }
    if (!rc) {
        summary(v, o);
        if (lm && lt.scored) {
            double n = (double)lt.scored;
            fprintf(stderr, "\nwith %s (%s %s): MAPE time %.2f%%  power %.2f%%  energy %.2f%% "
                            "(analytical alone on the same %zu rows: %.2f%%  %.2f%%  %.2f%%)\n",
                    o->learned, wl_learn_model_hybrid(lm) ? "hybrid" : "plain",
                    wl_learn_kind_name(wl_learn_model_kind(lm)), 100 * lt.ape_learned[0] / n,
                    100 * lt.ape_learned[1] / n, 100 * lt.ape_learned[2] / n, lt.scored,
                    100 * lt.ape_analytical[0] / n, 100 * lt.ape_analytical[1] / n,
                    100 * lt.ape_analytical[2] / n);
            if (lt.outside)
                fprintf(stderr, "wattlas validate: warning: %zu of %zu rows lie outside the "
                                "model's training domain (%zu beyond its margin: %s)\n",
                        lt.outside, lt.scored, lt.faded,
                        wl_learn_model_hybrid(lm) ? "the correction fades to none there"
                                                  : "a plain model extrapolates there");
        }
        wl_calib_validation_summary s;
        wl_calib_validation_counts(v, &s);
        if (!s.scored) {
            fprintf(stderr, "wattlas validate: no row of %s could be scored\n", o->path);
            rc = EXIT_RUNTIME;
        }
    }
    wl_calib_validation_free(v);
    wl_learn_model_free(lm);
    return rc;
}

int cmd_validate(int argc, char **argv)
{
    validate_opts o = {.out = "-", .v = {.beside = 1}, .format = WL_FMT_CSV};
    int rc = validate_parse(argc, argv, &o);
    if (rc == CLI_HELP)
        return 0;
    return rc ? rc : validate_run(&o);
}
