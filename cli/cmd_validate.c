/* wattlas validate */
#include "cli.h"
#include "../calib/wattlas_calib.h"
#include "../presets/wattlas_presets.h"
#include "../results/wattlas_results.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void help(FILE *f)
{
    fprintf(f,
"usage: wattlas validate MEASUREMENTS.csv [--traces DIR] [--idle [ID=]TABLE.csv] [--gpu ID]\n"
"                        [--no-beside] [--no-lomo] [--interval L] [-o FILE]\n\n"
"Predicts every measured row (schema of shared/data/measurements) and writes\n"
"the input columns followed by predicted_clock_mhz, predicted_time_ms,\n"
"predicted_power_w and predicted_energy_j, in input order. Rows that cannot\n"
"be modelled keep empty predictions; the reason goes to stderr.\n\n"
"stderr also gets a summary: MAPE of time, power and energy; for each\n"
"workload measured at five or more clocks, the regret of the predicted\n"
"energy-optimal clock (measured energy there over the measured minimum);\n"
"and leave-one-model-out MAPE (refit without each model, score it).\n\n"
"  --traces DIR  predict a row from DIR/<model>_<dtype>_b<batch>[_s<seq>]_<mode>.json\n"
"                when that trace exists\n"
"  --idle [ID=]TABLE.csv  measured idle table (sm_clock_mhz,voltage_mv,idle_power_w;\n"
"                voltage may be empty) for that GPU instead of its preset's curve;\n"
"                repeat for several GPUs\n"
"  --no-beside   do not look beside the measurements (see below)\n"
"  --gpu ID      score only that GPU's rows on this preset (default: every GPU\n"
"                named in the gpu column, each on its own preset, then pooled)\n"
"  --no-lomo     skip the leave-one-model-out refits\n"
"  --interval L  add predicted_*_lo/hi columns: the prediction interval at level\n"
"                L (0.95 or 95), and report how often it covers the measurement\n"
"  -o FILE       write the CSV to FILE (atomically) instead of stdout\n\n"
"Beside the measurements: with DATA/measurements/X.csv, a GPU whose preset\n"
"idle curve comes from the board-class rule uses DATA/gpu-tables/<id>-idle.csv\n"
"when it exists, and rows no native builder covers (a model without one, an\n"
"fp32 row with only a bf16 trace, retyped) come from DATA/traces/. Each use is\n"
"noted on stderr. The GPU column may name a preset by id or alias\n"
"(\"NVIDIA A10\", \"H100-SXM5-80GB\").\n");
}

static void print_regret(void *user, const char *wl, double bm, double bp, double regret)
{
    (void)user;
    fprintf(stderr, "  %-34s measured best %5.0f MHz, predicted best %5.0f MHz, regret %5.2f%%\n",
            wl, bm, bp, regret);
}

static int lomo(wl_calib_problem *p, const wl_calib_set *set)
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
        fprintf(stderr, "  needs at least two models\n");
        free(fold);
        return WL_OK;
    }
    int rc = wl_calib_crossval(p, fold, nf, NULL, &pooled, per);
    for (int f = 0; f < nf; f++) {
        if (!per[f].n)
            fprintf(stderr, "  without %-12s skipped: too few rows of other models to refit\n",
                    names[f]);
        else
            fprintf(stderr, "  without %-12s (%3zu rows): time %5.1f%%  power %5.1f%%  energy %5.1f%%\n",
                    names[f], per[f].n, per[f].mape_time, per[f].mape_power, per[f].mape_energy);
    }
    if (rc == WL_OK)
        fprintf(stderr, "  pooled held-out MAPE (%zu rows): time %.1f%%  power %.1f%%  energy %.1f%%"
                        "; held-out regret worst %.1f%%, mean %.2f%%\n",
                pooled.n, pooled.mape_time, pooled.mape_power, pooled.mape_energy,
                pooled.worst_regret, pooled.mean_regret);
    free(fold);
    return WL_OK;
}

int cmd_validate(int argc, char **argv)
{
    const char *cmd = "validate";
    const char *traces = NULL, *gpu_id = NULL, *out_path = "-";
    int no_lomo = 0, beside = 1, nidle = 0;
    const char *idle_specs[16];
    double level = 0;
    static const struct option lo[] = {{"traces", required_argument, 0, 't'},
                                       {"idle", required_argument, 0, 'i'},
                                       {"no-beside", no_argument, 0, 'B'},
                                       {"interval", required_argument, 0, 'I'},
                                       {"gpu", required_argument, 0, 'g'},
                                       {"no-lomo", no_argument, 0, 'n'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:", lo, NULL)) != -1) {
        switch (c) {
        case 't': traces = optarg; break;
        case 'g': gpu_id = optarg; break;
        case 'n': no_lomo = 1; break;
        case 'B': beside = 0; break;
        case 'i':
            if (nidle == 16)
                return usage_error(cmd, "--idle: at most 16 tables");
            idle_specs[nidle++] = optarg;
            break;
        case 'I':
            if (parse_level_arg(cmd, "--interval", optarg, &level))
                return EXIT_USAGE;
            break;
        case 'o': out_path = optarg; break;
        case 'h': help(stdout); return 0;
        case ':': return usage_error(cmd, "option %s needs a value", argv[optind - 1]);
        default: return usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (optind + 1 != argc)
        return usage_error(cmd, "expected exactly one MEASUREMENTS.csv");
    const char *path = argv[optind];
    wl_error err = {0};
    wl_calib_set *set = NULL;
    if (wl_calib_load(path, &set, &err))
        return runtime_error(cmd, &err);
    /* DATA/measurements/X.csv -> DATA (the shared data layout) */
    char data_dir[1024] = "";
    if (beside) {
        const char *sl = strrchr(path, '/');
        int dl = sl ? (int)(sl - path) : 0;
        if (dl > 1000)
            dl = 0; /* a path this deep has no data folder we would find */
        snprintf(data_dir, sizeof data_dir, "%.*s%s..", dl, path, sl ? "/" : "");
        char tdir[1100];
        struct stat st;
        snprintf(tdir, sizeof tdir, "%s/traces", data_dir);
        if (!traces && stat(tdir, &st) == 0 && S_ISDIR(st.st_mode)) {
            wl_calib_set_fallback_traces(set, tdir);
            fprintf(stderr, "wattlas validate: rows no native builder covers use traces from %s\n",
                    tdir);
        }
    }
    /* one preset per GPU named in the rows (or just --gpu) */
    enum { MAXG = 16 };
    static wl_core_gpu gpus[MAXG];
    static wl_calib_uncertainty unc[MAXG];
    wl_calib_problem *P[MAXG] = {0};
    const char *ids[MAXG];
    int ng = 0, rc = 0;
    size_t n = wl_calib_count(set);
    if (gpu_id) {
        ids[ng++] = gpu_id;
    } else {
        for (size_t i = 0; i < n && !rc; i++) {
            const char *g = wl_calib_row_at(set, i)->gpu;
            const char *canon = wl_preset_gpu_resolve(g);
            if (canon)
                g = canon;
            int k = 0;
            while (k < ng && strcmp(ids[k], g) != 0)
                k++;
            if (k == ng) {
                if (ng == MAXG) {
                    wl_error_set(&err, path, wl_calib_row_at(set, i)->line, "gpu",
                                 "more than %d GPUs in one file", MAXG);
                    rc = 1;
                    break;
                }
                ids[ng++] = g;
            }
        }
    }
    for (int k = 0; k < ng && !rc; k++)
        rc = wl_preset_gpu_load(ids[k], &gpus[k], &err);
    /* --idle tables, then a table beside the data for a rule-based curve */
    const char *idle_used[MAXG];
    int irc = rc ? 0 : apply_idle_specs(cmd, gpus, (size_t)ng, idle_specs, (size_t)nidle, idle_used);
    for (int k = 0; k < ng && !rc && !irc; k++) {
        char auto_idle[1200 + sizeof gpus[k].id];
        struct stat st;
        if (!idle_used[k] && data_dir[0] && (gpus[k].vf_rule & WL_VF_RULE_IDLE)) {
            snprintf(auto_idle, sizeof auto_idle, "%s/gpu-tables/%.63s-idle.csv", data_dir, gpus[k].id);
            if (stat(auto_idle, &st) == 0)
                irc = apply_idle_table(cmd, &gpus[k], auto_idle);
        }
    }
    if (irc) {
        wl_calib_free(set);
        return irc;
    }
    for (int k = 0; k < ng && !rc; k++) {
        rc = wl_calib_problem_create(&gpus[k], set, traces, &P[k], &err) ||
             (level > 0 && wl_calib_uncertainty_load(ids[k], &unc[k], &err));
    }
    wl_results_out *out = NULL;
    if (!rc && wl_results_out_open(out_path, &out, &err))
        rc = 1;
    if (rc) {
        for (int k = 0; k < ng; k++)
            wl_calib_problem_free(P[k]);
        wl_calib_free(set);
        return runtime_error(cmd, &err);
    }
    FILE *f = wl_results_out_stream(out);
    fprintf(f, "%s,predicted_clock_mhz,predicted_time_ms,predicted_power_w,predicted_energy_j%s\n",
            wl_calib_header(set),
            level > 0 ? ",predicted_time_lo_ms,predicted_time_hi_ms,predicted_power_lo_w,"
                        "predicted_power_hi_w,predicted_energy_lo_j,predicted_energy_hi_j" : "");
    const char *empty = level > 0 ? ",,,,,,,,,,\n" : ",,,,\n";
    size_t cover[3] = {0, 0, 0}, ncover = 0;
    size_t nbad = 0, ntraced = 0;
    for (size_t i = 0; i < n; i++) {
        const wl_calib_row *r = wl_calib_row_at(set, i);
        fputs(wl_calib_raw(set, i), f);
        const char *reason = NULL;
        wl_core_result res;
        int k = 0;
        while (k + 1 < ng && !wl_preset_gpu_names(r->gpu, gpus[k].id))
            k++;
        wl_calib_problem *p = P[k];
        if (!wl_calib_row_ok(p, i, &reason)) {
            fprintf(stderr, "%s:%d: not modelled: %s\n", path, r->line, reason);
            fputs(empty, f);
            nbad++;
            continue;
        }
        if (wl_calib_predict(p, i, &res)) {
            fprintf(stderr, "%s:%d: prediction failed\n", path, r->line);
            fputs(empty, f);
            nbad++;
            continue;
        }
        ntraced += (size_t)wl_calib_row_traced(p, i);
        const char *why = NULL;
        if (!wl_calib_row_scored(p, i, &why))
            fprintf(stderr, "%s:%d: predicted but not scored: %s\n", path, r->line, why);
        fprintf(f, ",%.1f,%.4f,%.2f,%.5f", res.effective_clock_mhz, res.time_ms, res.power_w,
                res.energy_j);
        wl_calib_iv iv;
        if (level > 0 && wl_calib_row_interval(p, i, &unc[k], level, &res, &iv) == WL_OK) {
            fprintf(f, ",%.4f,%.4f,%.2f,%.2f,%.5f,%.5f", iv.time_lo_ms, iv.time_hi_ms,
                    iv.power_lo_w, iv.power_hi_w, iv.energy_lo_j, iv.energy_hi_j);
            if (wl_calib_row_scored(p, i, NULL)) {
                ncover++;
                cover[0] += r->time_ms >= iv.time_lo_ms && r->time_ms <= iv.time_hi_ms;
                cover[1] += r->power_w >= iv.power_lo_w && r->power_w <= iv.power_hi_w;
                cover[2] += r->energy_j >= iv.energy_lo_j && r->energy_j <= iv.energy_hi_j;
            }
        } else if (level > 0) {
            fputs(",,,,,,", f);
        }
        fputc('\n', f);
    }
    if (wl_results_out_commit(out, &err)) {
        for (int k = 0; k < ng; k++)
            wl_calib_problem_free(P[k]);
        wl_calib_free(set);
        return runtime_error(cmd, &err);
    }
    /* per GPU, then pooled: MAPE is a mean, so the pool weighs by rows */
    double pool[3] = {0, 0, 0};
    size_t pooled_n = 0;
    for (int k = 0; k < ng; k++) {
        wl_calib_metrics m;
        if (wl_calib_score(P[k], NULL, &m) != WL_OK || !m.n)
            continue;
        fprintf(stderr, "\nwattlas validate: %s on %s%s (%zu rows scored, %zu from traces, %zu not modelled)\n",
                path, gpus[k].id, gpus[k].coef_source[0] ? ", coefficients transferred" : "", m.n,
                ng == 1 ? ntraced : (size_t)0, ng == 1 ? nbad : (size_t)0);
        fprintf(stderr, "MAPE with the preset's coefficients: time %.2f%%  power %.2f%%  energy %.2f%%\n",
                m.mape_time, m.mape_power, m.mape_energy);
        pool[0] += m.mape_time * (double)m.n;
        pool[1] += m.mape_power * (double)m.n;
        pool[2] += m.mape_energy * (double)m.n;
        pooled_n += m.n;
        if (m.n_regret) {
            fprintf(stderr, "energy-optimal clock regret (%zu workloads with >= 5 clocks): "
                            "worst %.2f%% (%s), mean %.2f%%\n",
                    m.n_regret, m.worst_regret, m.worst_regret_workload, m.mean_regret);
            wl_calib_regrets(P[k], NULL, print_regret, NULL);
        }
        if (!no_lomo && !gpus[k].coef_source[0] && lomo(P[k], set))
            fprintf(stderr, "wattlas validate: out of memory in leave-one-model-out\n");
    }
    if (!pooled_n)
        fprintf(stderr, "\nwattlas validate: no row could be scored\n");
    else if (ng > 1)
        fprintf(stderr, "\nall GPUs (%zu rows scored, %zu from traces, %zu not modelled): "
                        "MAPE time %.2f%%  power %.2f%%  energy %.2f%%\n",
                pooled_n, ntraced, nbad, pool[0] / (double)pooled_n, pool[1] / (double)pooled_n,
                pool[2] / (double)pooled_n);
    if (ncover)
        fprintf(stderr, "%.0f%% prediction intervals cover the measurement: time %.1f%%, "
                        "power %.1f%%, energy %.1f%% of %zu rows\n", 100 * level,
                100.0 * (double)cover[0] / (double)ncover,
                100.0 * (double)cover[1] / (double)ncover,
                100.0 * (double)cover[2] / (double)ncover, ncover);
    for (int k = 0; k < ng; k++)
        wl_calib_problem_free(P[k]);
    wl_calib_free(set);
    return 0;
}
