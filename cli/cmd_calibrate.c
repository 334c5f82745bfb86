/* wattlas calibrate */
#include "cli.h"
#include "../calib/wattlas_calib.h"
#include "../presets/wattlas_presets.h"
#include "../results/wattlas_results.h"

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
"excluded. Residuals per workload and in-sample figures go to stderr.\n\n"
"  --traces DIR          predict rows from traces where DIR has one\n"
"  --idle TABLE.csv      replace the preset's V-f/idle table by one derived\n"
"                        from this idle measurement (sm_clock_mhz,voltage_mv,\n"
"                        idle_power_w)\n"
"  --holdout MODEL,...   fit without these models and score them (held-out)\n"
"  --kfold K             also report K-fold cross-validated error (whole\n"
"                        workloads per fold)\n"
"  --lomo                also report leave-one-model-out error\n"
"  --from-preset         start from the preset's coefficients instead of the\n"
"                        physical defaults (the result may then depend on them)\n"
"  --prior-weight W      pull towards the physical defaults (default 0.3,\n"
"                        chosen by leave-one-model-out cross-validation)\n");
}

static uint64_t fnv1a_file(const char *path)
{
    uint64_t h = 1469598103934665603ULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    int c;
    while ((c = fgetc(f)) != EOF) {
        h ^= (uint64_t)(unsigned char)c;
        h *= 1099511628211ULL;
    }
    fclose(f);
    return h;
}

/* The preset text without the sections calibrate rewrites. */
static void write_spec_part(FILE *out, const char *text, const char *vf_text)
{
    int skip = 0;
    const char *p = text;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len > 0 && p[0] == '[') {
            skip = strncmp(p, "[calibration]", 13) == 0 || strncmp(p, "[covariance]", 12) == 0 ||
                   (vf_text && strncmp(p, "[vf]", 4) == 0);
        }
        if (!skip)
            fprintf(out, "%.*s\n", (int)len, p);
        p += len + (e ? 1 : 0);
    }
    if (vf_text)
        fputs(vf_text, out);
}

static void print_metrics(const char *what, const wl_calib_metrics *m)
{
    fprintf(stderr, "%s (%zu rows): MAPE time %.2f%%  power %.2f%%  energy %.2f%%", what, m->n,
            m->mape_time, m->mape_power, m->mape_energy);
    if (m->n_regret)
        fprintf(stderr, "; clock regret worst %.2f%% (%s), mean %.2f%%", m->worst_regret,
                m->worst_regret_workload, m->mean_regret);
    fputc('\n', stderr);
}

static void print_wl(void *user, const wl_calib_wl_stats *s)
{
    (void)user;
    fprintf(stderr, "  %-34s %3zu  %6.2f %+7.2f  %6.2f %+7.2f  %6.2f %+7.2f\n", s->key, s->n,
            s->mape_time, s->bias_time, s->mape_power, s->bias_power, s->mape_energy,
            s->bias_energy);
}

/* A [vf] section derived from an idle table, as text; the preset's
 * leakage reference voltage is kept. */
static char *derive_vf_text(const char *idle_path, double v_ref_mv, wl_error *err)
{
    char *buf = NULL, *table = NULL;
    size_t len = 0, tlen = 0;
    FILE *m = open_memstream(&table, &tlen);
    if (!m)
        return NULL;
    int rc = wl_preset_derive_vf(idle_path, 60, m, err);
    fclose(m);
    if (rc || strncmp(table, "[vf]\n", 5) != 0) {
        free(table);
        return NULL;
    }
    m = open_memstream(&buf, &len);
    if (m) {
        fprintf(m, "; V-f curve and idle board power derived by wattlas calibrate --idle\n"
                   "[vf]\nv_ref_mv = %g\n%s", v_ref_mv, table + 5);
        fclose(m);
    }
    free(table);
    return buf;
}

int cmd_calibrate(int argc, char **argv)
{
    const char *cmd = "calibrate";
    const char *traces = NULL, *gpu_id = NULL, *out_path = NULL, *holdout = NULL, *idle = NULL;
    long long kfold = 0;
    int want_lomo = 0;
    wl_calib_fit_options fopt;
    wl_calib_fit_options_default(&fopt);
    static const struct option lo[] = {{"traces", required_argument, 0, 't'},
                                       {"gpu", required_argument, 0, 'g'},
                                       {"idle", required_argument, 0, 'i'},
                                       {"holdout", required_argument, 0, 'H'},
                                       {"kfold", required_argument, 0, 'k'},
                                       {"lomo", no_argument, 0, 'L'},
                                       {"from-preset", no_argument, 0, 'F'},
                                       {"prior-weight", required_argument, 0, 'p'},
                                       {"help", no_argument, 0, 'h'},
                                       {0, 0, 0, 0}};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, ":o:", lo, NULL)) != -1) {
        switch (c) {
        case 't': traces = optarg; break;
        case 'g': gpu_id = optarg; break;
        case 'i': idle = optarg; break;
        case 'H': holdout = optarg; break;
        case 'L': want_lomo = 1; break;
        case 'F': fopt.from_defaults = 0; break;
        case 'k':
            if (parse_int_arg(cmd, "--kfold", optarg, 2, 1000, &kfold))
                return EXIT_USAGE;
            break;
        case 'o': out_path = optarg; break;
        case 'p':
            if (parse_double_arg(cmd, "--prior-weight", optarg, &fopt.prior_weight))
                return EXIT_USAGE;
            if (fopt.prior_weight < 0)
                return usage_error(cmd, "--prior-weight must be >= 0");
            break;
        case 'h': help(stdout); return 0;
        case ':': return usage_error(cmd, "option %s needs a value", argv[optind - 1]);
        default: return usage_error(cmd, "unknown option '%s'", argv[optind - 1]);
        }
    }
    if (!gpu_id)
        return usage_error(cmd, "--gpu is required");
    if (!out_path)
        return usage_error(cmd, "-o FILE.ini is required");
    if (optind + 1 != argc)
        return usage_error(cmd, "expected exactly one MEASUREMENTS.csv");
    const char *path = argv[optind];
    wl_error err = {0};
    wl_core_gpu gpu;
    if (wl_preset_gpu_load(gpu_id, &gpu, &err))
        return runtime_error(cmd, &err);
    /* the preset text to carry over */
    char *file_text = NULL, *vf_text = NULL;
    const char *text = wl_preset_text(WL_PRESET_GPU, gpu_id);
    if (!text && wl_core_read_file(gpu_id, &file_text, NULL, &err) == WL_OK)
        text = file_text;
    if (!text) {
        fprintf(stderr, "wattlas calibrate: cannot read preset %s\n", gpu_id);
        return EXIT_RUNTIME;
    }
    if (idle) {
        vf_text = derive_vf_text(idle, gpu.v_ref_mv, &err);
        wl_core_gpu g2;
        if (!vf_text) {
            free(file_text);
            return runtime_error(cmd, &err);
        }
        /* the spec part with the new table must parse */
        char *buf = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&buf, &len);
        write_spec_part(m, text, vf_text);
        fclose(m);
        int rc0 = wl_preset_gpu_parse(buf, idle, &g2, &err);
        free(buf);
        if (rc0) {
            free(file_text);
            free(vf_text);
            return runtime_error(cmd, &err);
        }
        gpu.vf = g2.vf;
    }
    int status = EXIT_RUNTIME;
    wl_calib_set *set = NULL;
    wl_calib_problem *p = NULL;
    unsigned char *train = NULL, *test = NULL;
    int *fold = NULL;
    wl_results_out *out = NULL;
    if (wl_calib_load(path, &set, &err) || wl_calib_problem_create(&gpu, set, traces, &p, &err)) {
        runtime_error(cmd, &err);
        goto done;
    }
    size_t n = wl_calib_count(set), used = 0, held = 0;
    train = calloc(n, 1);
    test = calloc(n, 1);
    fold = calloc(n, sizeof *fold);
    if (!train || !test || !fold) {
        fprintf(stderr, "wattlas calibrate: out of memory\n");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        const char *reason = NULL;
        const wl_calib_row *r = wl_calib_row_at(set, i);
        if (!wl_calib_row_scored(p, i, &reason)) {
            fprintf(stderr, "%s:%d: excluded: %s\n", path, r->line, reason);
            continue;
        }
        int out_of_fit = 0;
        if (holdout) {
            /* comma-separated model names */
            const char *q = holdout;
            size_t ml = strlen(r->model);
            while (*q) {
                const char *e = strchr(q, ',');
                size_t l = e ? (size_t)(e - q) : strlen(q);
                if (l == ml && strncmp(q, r->model, l) == 0)
                    out_of_fit = 1;
                q += l + (e ? 1 : 0);
            }
        }
        test[i] = (unsigned char)out_of_fit;
        train[i] = (unsigned char)!out_of_fit;
        used += !out_of_fit;
        held += (size_t)out_of_fit;
    }
    if (holdout && !held) {
        fprintf(stderr, "wattlas calibrate: --holdout %s matches no usable row\n", holdout);
        status = EXIT_USAGE;
        goto done;
    }
    wl_calib_metrics before, after;
    wl_calib_score(p, train, &before);
    wl_core_gpu fitted;
    wl_calib_fit_info info;
    int rc = wl_calib_fit(p, train, &fopt, &fitted, &info);
    if (rc) {
        fprintf(stderr, "wattlas calibrate: %s: cannot fit: %s\n", path,
                info.message[0] ? info.message : wl_core_strerror(rc));
        goto done;
    }
    wl_calib_problem_set_gpu(p, &fitted);
    wl_calib_score(p, train, &after);
    fprintf(stderr, "fit: %zu rows, %d iterations, cost %.4f -> %.4f\n", used, info.iterations,
            info.cost_initial, info.cost_final);
    fprintf(stderr, "residuals per workload (in-sample; MAPE and mean signed error, %%):\n"
                    "  %-34s %3s  %6s %7s  %6s %7s  %6s %7s\n",
            "workload", "n", "time", "bias", "power", "bias", "energy", "bias");
    wl_calib_per_workload(p, train, print_wl, NULL);
    print_metrics("in-sample before", &before);
    print_metrics("in-sample after ", &after);
    if (holdout) {
        wl_calib_metrics hm;
        fprintf(stderr, "held-out residuals per workload:\n");
        wl_calib_per_workload(p, test, print_wl, NULL);
        if (wl_calib_score(p, test, &hm) == WL_OK)
            print_metrics("held-out", &hm);
    }
    wl_calib_problem_set_gpu(p, &gpu);
    if (kfold) {
        for (size_t i = 0; i < n; i++)
            if (!train[i])
                test[i] = 1;
        int nf = wl_calib_folds_kfold(p, (int)kfold, fold);
        for (size_t i = 0; i < n; i++)
            if (test[i])
                fold[i] = -2; /* held out entirely: in no fold, in no training set */
        wl_calib_metrics km;
        if (nf >= 2 && wl_calib_crossval(p, fold, nf, &fopt, &km, NULL) == WL_OK) {
            char what[64];
            snprintf(what, sizeof what, "%d-fold cross-validated", nf);
            print_metrics(what, &km);
        } else {
            fprintf(stderr, "%lld-fold: too few workloads\n", kfold);
        }
    }
    if (want_lomo) {
        char names[64][64];
        wl_calib_metrics per[64], lm;
        int nf = wl_calib_folds_by_model(p, fold, names, 64);
        for (size_t i = 0; i < n; i++)
            if (!train[i])
                fold[i] = -2;
        if (nf >= 2 && wl_calib_crossval(p, fold, nf, &fopt, &lm, per) == WL_OK) {
            for (int f = 0; f < nf; f++)
                fprintf(stderr, "  without %-12s (%3zu rows): time %5.1f%%  power %5.1f%%  energy %5.1f%%\n",
                        names[f], per[f].n, per[f].mape_time, per[f].mape_power,
                        per[f].mape_energy);
            print_metrics("leave-one-model-out", &lm);
        }
    }

    if (wl_results_out_open(out_path, &out, &err)) {
        runtime_error(cmd, &err);
        goto done;
    }
    FILE *f = wl_results_out_stream(out);
    write_spec_part(f, text, vf_text);
    wl_preset_write_calibration(f, &fitted);
    double se[WL_CALIB_MAXP];
    if (info.unc.valid) {
        wl_calib_stderr(&info.unc, se);
        for (int i = 0; i < wl_calib_param_count(); i++)
            fprintf(f, "stderr_%s = %.4g\n", wl_calib_param_name(i), se[i]);
    }
    const char *base = strrchr(path, '/');
    fprintf(f, "fitted_rows = %zu\n", used);
    fprintf(f, "data_hash = fnv1a64:%016llx (%s)\n", (unsigned long long)fnv1a_file(path),
            base ? base + 1 : path);
    fprintf(f, "command = wattlas calibrate");
    for (int i = 1; i < argc; i++)
        fprintf(f, " %s", argv[i]);
    fprintf(f, "\nnote = in-sample MAPE time %.2f%% power %.2f%% energy %.2f%%\n", after.mape_time,
            after.mape_power, after.mape_energy);
    if (info.unc.valid)
        wl_calib_uncertainty_write(f, &info.unc);
    if (wl_results_out_commit(out, &err)) {
        out = NULL;
        runtime_error(cmd, &err);
        goto done;
    }
    out = NULL;
    status = 0;
done:
    wl_results_out_abort(out);
    free(train);
    free(test);
    free(fold);
    free(file_text);
    free(vf_text);
    wl_calib_problem_free(p);
    wl_calib_free(set);
    return status;
}
