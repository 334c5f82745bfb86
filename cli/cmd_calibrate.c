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
"usage: wattlas calibrate --gpu ID MEASUREMENTS.csv [--traces DIR] [--prior-weight W] -o FILE.ini\n\n"
"Fits the GPU's latency and power coefficients to measured rows (GSL\n"
"nonlinear least squares on log time and log power ratios) and writes a\n"
"preset: the GPU's spec-sheet part unchanged plus a [calibration] section\n"
"with the fitted values, the data's fingerprint and this command.\n\n"
"  --traces DIR        predict rows from traces where DIR has one\n"
"  --prior-weight W    pull towards the physical defaults (default 0.3, chosen\n"
"                      by leave-one-model-out cross-validation; 0 = none)\n");
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

/* The preset text without its [calibration] section. */
static void write_spec_part(FILE *out, const char *text)
{
    int skip = 0;
    const char *p = text;
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len > 0 && p[0] == '[')
            skip = strncmp(p, "[calibration]", 13) == 0;
        if (!skip)
            fprintf(out, "%.*s\n", (int)len, p);
        p += len + (e ? 1 : 0);
    }
}

int cmd_calibrate(int argc, char **argv)
{
    const char *cmd = "calibrate";
    const char *traces = NULL, *gpu_id = NULL, *out_path = NULL;
    wl_calib_fit_options fopt;
    wl_calib_fit_options_default(&fopt);
    static const struct option lo[] = {{"traces", required_argument, 0, 't'},
                                       {"gpu", required_argument, 0, 'g'},
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
    char *file_text = NULL;
    const char *text = wl_preset_text(WL_PRESET_GPU, gpu_id);
    if (!text && wl_core_read_file(gpu_id, &file_text, NULL, &err) == WL_OK)
        text = file_text;
    if (!text) {
        fprintf(stderr, "wattlas calibrate: cannot read preset %s\n", gpu_id);
        return EXIT_RUNTIME;
    }
    wl_calib_set *set = NULL;
    if (wl_calib_load(path, &set, &err)) {
        free(file_text);
        return runtime_error(cmd, &err);
    }
    wl_calib_problem *p = NULL;
    if (wl_calib_problem_create(&gpu, set, traces, &p, &err)) {
        free(file_text);
        wl_calib_free(set);
        return runtime_error(cmd, &err);
    }
    size_t n = wl_calib_count(set), used = 0;
    for (size_t i = 0; i < n; i++) {
        const char *reason = NULL;
        const wl_calib_row *r = wl_calib_row_at(set, i);
        if (!wl_calib_row_ok(p, i, &reason))
            fprintf(stderr, "%s:%d: excluded: %s\n", path, r->line, reason);
        else if (!r->usable)
            fprintf(stderr, "%s:%d: excluded: non-positive time, energy or power\n", path, r->line);
        else
            used++;
    }
    wl_calib_metrics before, after;
    wl_calib_score(p, NULL, &before);
    wl_core_gpu fitted;
    wl_calib_fit_info info;
    int rc = wl_calib_fit(p, NULL, &fopt, &fitted, &info);
    if (rc) {
        fprintf(stderr, "wattlas calibrate: fit failed (%s) on %zu usable rows\n",
                wl_core_strerror(rc), used);
        free(file_text);
        wl_calib_problem_free(p);
        wl_calib_free(set);
        return EXIT_RUNTIME;
    }
    wl_calib_problem_set_gpu(p, &fitted);
    wl_calib_score(p, NULL, &after);
    fprintf(stderr, "fit: %zu rows, %d iterations, cost %.4f -> %.4f\n", used, info.iterations,
            info.cost_initial, info.cost_final);
    fprintf(stderr, "in-sample MAPE before: time %.2f%% power %.2f%% energy %.2f%%, worst regret %.2f%%\n",
            before.mape_time, before.mape_power, before.mape_energy, before.worst_regret);
    fprintf(stderr, "in-sample MAPE after:  time %.2f%% power %.2f%% energy %.2f%%, worst regret %.2f%%\n",
            after.mape_time, after.mape_power, after.mape_energy, after.worst_regret);

    wl_results_out *out = NULL;
    if (wl_results_out_open(out_path, &out, &err)) {
        free(file_text);
        wl_calib_problem_free(p);
        wl_calib_free(set);
        return runtime_error(cmd, &err);
    }
    FILE *f = wl_results_out_stream(out);
    write_spec_part(f, text);
    wl_preset_write_calibration(f, &fitted);
    const char *base = strrchr(path, '/');
    fprintf(f, "fitted_rows = %zu\n", used);
    fprintf(f, "data_hash = fnv1a64:%016llx (%s)\n", (unsigned long long)fnv1a_file(path),
            base ? base + 1 : path);
    fprintf(f, "command = make calibrate\n");
    fprintf(f, "note = in-sample MAPE time %.2f%% power %.2f%% energy %.2f%%\n", after.mape_time,
            after.mape_power, after.mape_energy);
    free(file_text);
    wl_calib_problem_free(p);
    wl_calib_free(set);
    if (wl_results_out_commit(out, &err))
        return runtime_error(cmd, &err);
    return 0;
}
