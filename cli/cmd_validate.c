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

static void help(FILE *f)
{
    fprintf(f,
"usage: wattlas validate MEASUREMENTS.csv [--traces DIR] [--gpu ID] [--no-lomo] [-o FILE]\n\n"
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
"  --gpu ID      GPU preset (default: the gpu column of the first row)\n"
"  --no-lomo     skip the leave-one-model-out refits\n"
"  -o FILE       write the CSV to FILE (atomically) instead of stdout\n");
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
    unsigned char *train = calloc(n, 1), *test = calloc(n, 1), *done = calloc(n, 1);
    if (!train || !test || !done) {
        free(train); free(test); free(done);
        return WL_ENOMEM;
    }
    const wl_core_gpu base = *wl_calib_problem_gpu(p);
    double st = 0, sp = 0, se = 0;
    size_t cnt = 0;
    fprintf(stderr, "leave-one-model-out (refit without the model, score it; held-out):\n");
    for (size_t i = 0; i < n; i++) {
        const wl_calib_row *ri = wl_calib_row_at(set, i);
        if (done[i] || !wl_calib_row_ok(p, i, NULL) || !ri->usable)
            continue;
        size_t ntest = 0, ntrain = 0;
        for (size_t j = 0; j < n; j++) {
            const wl_calib_row *rj = wl_calib_row_at(set, j);
            int ok = wl_calib_row_ok(p, j, NULL) && rj->usable;
            int same = strcmp(rj->model, ri->model) == 0;
            test[j] = (unsigned char)(ok && same);
            train[j] = (unsigned char)(ok && !same);
            if (same)
                done[j] = 1;
            ntest += test[j];
            ntrain += train[j];
        }
        wl_core_gpu fitted;
        wl_calib_fit_info info;
        if (ntrain < 20 || wl_calib_fit(p, train, NULL, &fitted, &info)) {
            fprintf(stderr, "  %-12s skipped: too few rows of other models to refit\n", ri->model);
            continue;
        }
        wl_calib_problem_set_gpu(p, &fitted);
        wl_calib_metrics m;
        wl_calib_score(p, test, &m);
        fprintf(stderr, "  without %-12s (%3zu rows): time %5.1f%%  power %5.1f%%  energy %5.1f%%\n",
                ri->model, m.n, m.mape_time, m.mape_power, m.mape_energy);
        st += m.mape_time * (double)m.n;
        sp += m.mape_power * (double)m.n;
        se += m.mape_energy * (double)m.n;
        cnt += m.n;
        wl_calib_problem_set_gpu(p, &base);
    }
    if (cnt)
        fprintf(stderr, "  pooled held-out MAPE (%zu rows): time %.1f%%  power %.1f%%  energy %.1f%%\n",
                cnt, st / (double)cnt, sp / (double)cnt, se / (double)cnt);
    free(train);
    free(test);
    free(done);
    return WL_OK;
}

int cmd_validate(int argc, char **argv)
{
    const char *cmd = "validate";
    const char *traces = NULL, *gpu_id = NULL, *out_path = "-";
    int no_lomo = 0;
    static const struct option lo[] = {{"traces", required_argument, 0, 't'},
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
    if (!gpu_id)
        gpu_id = wl_calib_row_at(set, 0)->gpu;
    wl_core_gpu gpu;
    if (wl_preset_gpu_load(gpu_id, &gpu, &err)) {
        wl_calib_free(set);
        return runtime_error(cmd, &err);
    }
    wl_calib_problem *p = NULL;
    if (wl_calib_problem_create(&gpu, set, traces, &p, &err)) {
        wl_calib_free(set);
        return runtime_error(cmd, &err);
    }
    wl_results_out *out = NULL;
    if (wl_results_out_open(out_path, &out, &err)) {
        wl_calib_problem_free(p);
        wl_calib_free(set);
        return runtime_error(cmd, &err);
    }
    FILE *f = wl_results_out_stream(out);
    fprintf(f, "%s,predicted_clock_mhz,predicted_time_ms,predicted_power_w,predicted_energy_j\n",
            wl_calib_header(set));
    size_t n = wl_calib_count(set), nbad = 0, ntraced = 0;
    for (size_t i = 0; i < n; i++) {
        const wl_calib_row *r = wl_calib_row_at(set, i);
        fputs(wl_calib_raw(set, i), f);
        const char *reason = NULL;
        wl_core_result res;
        if (!wl_calib_row_ok(p, i, &reason)) {
            fprintf(stderr, "%s:%d: not modelled: %s\n", path, r->line, reason);
            fputs(",,,,\n", f);
            nbad++;
            continue;
        }
        if (wl_calib_predict(p, i, &res)) {
            fprintf(stderr, "%s:%d: prediction failed\n", path, r->line);
            fputs(",,,,\n", f);
            nbad++;
            continue;
        }
        ntraced += (size_t)wl_calib_row_traced(p, i);
        if (!r->usable)
            fprintf(stderr, "%s:%d: measured time, energy or power is not positive: "
                            "predicted but not scored\n", path, r->line);
        fprintf(f, ",%.1f,%.4f,%.2f,%.5f\n", res.effective_clock_mhz, res.time_ms, res.power_w,
                res.energy_j);
    }
    if (wl_results_out_commit(out, &err)) {
        wl_calib_problem_free(p);
        wl_calib_free(set);
        return runtime_error(cmd, &err);
    }
    wl_calib_metrics m;
    if (wl_calib_score(p, NULL, &m) == WL_OK) {
        fprintf(stderr, "\nwattlas validate: %s on %s (%zu rows scored, %zu from traces, %zu not modelled)\n",
                path, gpu.id, m.n, ntraced, nbad);
        fprintf(stderr, "MAPE with the preset's coefficients: time %.2f%%  power %.2f%%  energy %.2f%%\n",
                m.mape_time, m.mape_power, m.mape_energy);
        if (m.n_regret) {
            fprintf(stderr, "energy-optimal clock regret (%zu workloads with >= 5 clocks): "
                            "worst %.2f%% (%s), mean %.2f%%\n",
                    m.n_regret, m.worst_regret, m.worst_regret_workload, m.mean_regret);
            wl_calib_regrets(p, NULL, print_regret, NULL);
        }
        if (!no_lomo && lomo(p, set))
            fprintf(stderr, "wattlas validate: out of memory in leave-one-model-out\n");
    } else {
        fprintf(stderr, "\nwattlas validate: no row could be scored\n");
    }
    wl_calib_problem_free(p);
    wl_calib_free(set);
    return 0;
}
