/* Calibrated presets: the spec-sheet part of the preset as given, the
 * fitted coefficients with their uncertainty, and where they came from. */
#include "wattlas_calib.h"
#include "../presets/wattlas_presets.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t fnv1a_file(const char *path)
{
    uint64_t h = 14695981039346656037ULL; /* FNV-1a 64 offset basis */
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

int wl_calib_fitted_on(const wl_calib_uncertainty *u, const char *data_path)
{
    if (!u->data_hash[0] || !data_path)
        return 0;
    char h[40];
    snprintf(h, sizeof h, "fnv1a64:%016llx", (unsigned long long)fnv1a_file(data_path));
    return strcmp(h, u->data_hash) == 0;
}

/* Whether a line is the [gpu] key "host". */
static int host_line(const char *p, size_t len)
{
    size_t i = 0;
    while (i < len && (p[i] == ' ' || p[i] == '\t'))
        i++;
    if (len - i < 4 || strncmp(p + i, "host", 4))
        return 0;
    i += 4;
    while (i < len && (p[i] == ' ' || p[i] == '\t'))
        i++;
    return i < len && (p[i] == '=' || p[i] == ':');
}

/* The preset text without the sections calibration rewrites (with the
 * comment block just above each, which describes it), and without the host
 * key when drop_host (the [calibration] then holds the cost). */
static void write_spec_part(FILE *out, const char *text, const char *vf_text, int drop_host)
{
    int skip = 0, in_gpu = 0;
    /* a [vf] that keeps the preset's voltage rule keeps the comment above
     * [vf] too: it gives the rule's sources (wl_calib_vf_section) */
    int keep_vf_comment = vf_text && vf_text[0] == '[';
    const char *p = text, *held = NULL; /* comment lines not yet written */
    while (*p) {
        const char *e = strchr(p, '\n');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        const char *next = p + len + (e ? 1 : 0);
        if (len > 0 && p[0] == '[') {
            skip = strncmp(p, "[calibration]", 13) == 0 || strncmp(p, "[covariance]", 12) == 0 ||
                   strncmp(p, "[calibrated_spec]", 17) == 0 ||
                   (vf_text && strncmp(p, "[vf]", 4) == 0);
            in_gpu = strncmp(p, "[gpu]", 5) == 0;
            if (held && (!skip || (keep_vf_comment && strncmp(p, "[vf]", 4) == 0)))
                fwrite(held, 1, (size_t)(p - held), out);
            held = NULL;
        } else if (len > 0 && p[0] == ';' && !skip) {
            if (!held)
                held = p;
            p = next;
            continue;
        } else if (held) {
            fwrite(held, 1, (size_t)(p - held), out);
            held = NULL;
        }
        if (!skip && !(drop_host && in_gpu && host_line(p, len))) {
            fwrite(p, 1, len, out);
            fputc('\n', out);
        }
        p = next;
    }
    if (held) {
        fputs(held, out);
        if (held[strlen(held) - 1] != '\n')
            fputc('\n', out);
    }
    if (vf_text)
        fputs(vf_text, out);
}

char *wl_calib_preset_spec(const char *preset_text, const char *vf_text)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return NULL;
    write_spec_part(m, preset_text, vf_text, 0);
    if (fclose(m) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* One [vf] column as a list, eight values a line. */
static void vf_list(FILE *m, const char *key, const double *v, int n)
{
    fprintf(m, "%s =", key);
    for (int i = 0; i < n; i++)
        fprintf(m, "%s %.2f", i == 0 ? "" : (i % 8 == 0 ? ",\n   " : ","), v[i]);
    fputc('\n', m);
}

int wl_calib_vf_section(const char *idle_path, const wl_core_gpu *gpu, char **out, wl_error *err)
{
    *out = NULL;
    wl_core_gpu g = *gpu;
    int rc = wl_preset_gpu_idle_table(&g, idle_path, err);
    if (rc)
        return rc;
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m)
        return WL_ENOMEM;
    const char *base = strrchr(idle_path, '/');
    base = base ? base + 1 : idle_path;
    int rule = (g.vf_rule & WL_VF_RULE_VOLTAGE) != 0;
    if (rule) /* no voltage column (NVML reads none): the preset's voltage rule stays a
               * rule, with the comment above [vf] that gives its sources */
        fprintf(m, "[vf]\n; idle board power: %s, measured, smoothed at 60 MHz knots by wattlas "
                   "calibrate --idle;\n; the voltage by the rule (the table has no voltage_mv)\n"
                   "v_ref_mv = %g\nvmin_mv = %g\nvmax_mv = %g\nvf_knee_mhz = %g\n",
                base, gpu->v_ref_mv, g.vf_vmin_mv, g.vf_vmax_mv, g.vf_knee_mhz);
    else
        fprintf(m, "; V-f curve and idle board power derived by wattlas calibrate --idle from %s:\n"
                   "; idle power measured, smoothed at 60 MHz knots; voltage the table's where it\n"
                   "; has a voltage_mv column, else the preset's curve at the knots\n"
                   "[vf]\nv_ref_mv = %g\n", base, gpu->v_ref_mv);
    vf_list(m, "clock_mhz", g.vf.clock_mhz, g.vf.n);
    if (!rule)
        vf_list(m, "voltage_mv", g.vf.voltage_mv, g.vf.n);
    vf_list(m, "idle_power_w", g.vf.idle_w, g.vf.n);
    if (fclose(m) != 0) {
        free(buf);
        return WL_ENOMEM;
    }
    *out = buf;
    return WL_OK;
}

/* An informational value as INI: control characters blanked, and long
 * text wrapped over indented continuation lines (the INI reader refuses
 * lines inih would cut). */
void wl_calib_write_info(FILE *f, const char *key, const char *value)
{
    size_t col = (size_t)fprintf(f, "%s =", key);
    const char *p = value ? value : ""; /* a library caller may give no command */
    while (*p) {
        while (*p == ' ')
            p++;
        size_t w = strcspn(p, " ");
        if (!w)
            break;
        if (col + 1 + w > 150 && col > 8) {
            fputs("\n   ", f);
            col = 3;
        }
        fputc(' ', f);
        for (size_t i = 0; i < w && i < 150; i++)
            fputc((unsigned char)p[i] < 0x20 ? '?' : p[i], f);
        col += 1 + (w < 150 ? w : 150);
        p += w;
    }
    fputc('\n', f);
}

void wl_calib_write_preset(FILE *f, const wl_core_gpu *fitted, const wl_calib_fit_info *info,
                           const wl_calib_preset_info *pi)
{
    write_spec_part(f, pi->preset_text, pi->vf_text, !fitted->host_id[0]);
    wl_preset_write_calibration(f, fitted);
    if (pi->few_shot)
        wl_calib_write_info(f, "few_shot", pi->few_shot);
    if (pi->kept)
        wl_calib_write_info(f, "kept", pi->kept);
    if (info->unc.valid) {
        double se[WL_CALIB_MAXP];
        wl_calib_stderr(&info->unc, se);
        for (int i = 0; i < wl_calib_param_count(); i++)
            if (!fitted->host_id[0] || !wl_core_coef_is_host(wl_calib_param_name(i)))
                fprintf(f, "stderr_%s = %.4g\n", wl_calib_param_name(i), se[i]);
    }
    if (pi->tc_fp8_stderr_rel > 0 && fitted->coef.tc_fp8_power_ratio > 0)
        fprintf(f, "stderr_tc_fp8_power_ratio = %.4g\n",
                pi->tc_fp8_stderr_rel * fitted->coef.tc_fp8_power_ratio);
    const char *base = strrchr(pi->data_path, '/');
    fprintf(f, "fitted_rows = %zu\n", pi->fitted_rows);
    char *hash = NULL;
    size_t hl = 0;
    FILE *m = open_memstream(&hash, &hl);
    if (m) {
        fprintf(m, "fnv1a64:%016llx (%s)", (unsigned long long)fnv1a_file(pi->data_path),
                base ? base + 1 : pi->data_path);
        fclose(m);
    }
    wl_calib_write_info(f, "data_hash", hash ? hash : "");
    free(hash);
    wl_calib_write_info(f, "command", pi->command);
    if (pi->held_out && pi->held_out_rows) {
        /* rows of the same file kept out of the fit: what a user reads as
         * the fit's error on kernels it did not see */
        fprintf(f, "held_out_rows = %zu\n", pi->held_out_rows);
        wl_calib_write_info(f, "held_out", pi->held_out);
    }
    if (pi->in_sample) {
        char t[3][WL_RESULTS_NUM_MAX];
        wl_results_fmt(t[0], sizeof t[0], pi->in_sample->mape_time, 2);
        wl_results_fmt(t[1], sizeof t[1], pi->in_sample->mape_power, 2);
        wl_results_fmt(t[2], sizeof t[2], pi->in_sample->mape_energy, 2);
        fprintf(f, "note = in-sample MAPE time %s%% power %s%% energy %s%%", t[0], t[1], t[2]);
        if (pi->held_out_metrics) {
            const wl_calib_metrics *h = pi->held_out_metrics;
            wl_results_fmt(t[0], sizeof t[0], h->mape_time, 2);
            wl_results_fmt(t[1], sizeof t[1], h->mape_power, 2);
            wl_results_fmt(t[2], sizeof t[2], h->mape_energy, 2);
            fprintf(f, "; held-out MAPE time %s%% power %s%% energy %s%%", t[0], t[1], t[2]);
        }
        fputc('\n', f);
    }
    wl_preset_write_calibrated_spec(f, fitted);
    if (info->unc.valid)
        wl_calib_uncertainty_write(f, &info->unc);
}
