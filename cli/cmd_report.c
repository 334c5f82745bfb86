/* wattlas report: sweep, Pareto, optimisation and figures of a study, with
 * index.md and index.html that summarise it. */
#include "cli.h"
#include "../plot/wattlas_plot.h"
#include "../results/wattlas_results.h"
#include "../sweep/wattlas_sweep.h"

#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    char title[256];
    char objective[64];
} report_cfg;

static int report_handler(void *user, const char *section, const char *name, const char *value)
{
    report_cfg *r = user;
    if (strcmp(section, "report") != 0)
        return 1;
    if (strcmp(name, "title") == 0)
        snprintf(r->title, sizeof r->title, "%s", value);
    else if (strcmp(name, "objective") == 0)
        snprintf(r->objective, sizeof r->objective, "%s", value);
    else
        return 0;
    return 1;
}

static void help(FILE *f)
{
    fprintf(f,
"usage: wattlas report --spec STUDY.ini -o DIR [--quiet]\n\n"
"Runs the study's sweep ([sweep] and [set] sections, as 'wattlas sweep\n"
"--spec'), its Pareto fronts and the optimisation named in [report]\n"
"(title = ..., objective = energy-within-slowdown=10 by default), and writes\n"
"to DIR: the CSVs (sweep.csv, pareto.csv, optimal.csv, savings.csv), every\n"
"figure as PNG and PDF, and index.md and index.html with the energy-optimal\n"
"clock per workload, the savings table, the figures, the command and the\n"
"version. Steps are reported on stderr, with the sweep's progress bar on a\n"
"terminal.\n");
}

/* Rows of in whose columns match (col, value) pairs; returns rows written. */
static long filter_csv(const char *in, const char *out, const char *const *cols,
                       const char *const *vals, int n, wl_error *err)
{
    wl_results_csv *c = NULL;
    if (wl_results_csv_open(in, &c, err))
        return -1;
    int idx[8];
    for (int i = 0; i < n; i++)
        if ((idx[i] = wl_results_csv_col(c, cols[i])) < 0) {
            wl_error_set(err, in, 1, cols[i], "missing column");
            wl_results_csv_close(c);
            return -1;
        }
    wl_results_out *o = NULL;
    if (wl_results_out_open(out, &o, err)) {
        wl_results_csv_close(c);
        return -1;
    }
    FILE *f = wl_results_out_stream(o);
    for (size_t i = 0; i < wl_results_csv_ncols(c); i++)
        fprintf(f, "%s%s", i ? "," : "", wl_results_csv_header(c, i));
    fputc('\n', f);
    long rows = 0;
    int r;
    while ((r = wl_results_csv_next(c, err)) == 1) {
        int ok = 1;
        for (int i = 0; i < n && ok; i++)
            ok = strcmp(wl_results_csv_field(c, (size_t)idx[i]), vals[i]) == 0;
        if (ok) {
            fprintf(f, "%s\n", wl_results_csv_raw(c));
            rows++;
        }
    }
    wl_results_csv_close(c);
    if (r < 0) {
        wl_results_out_abort(o);
        return -1;
    }
    if (wl_results_out_commit(o, err))
        return -1;
    return rows;
}

/* Distinct values of a column, in order of appearance. */
static int distinct(const char *path, const char *col, char vals[][64], int max)
{
    wl_error err;
    wl_plot_table *t = NULL;
    if (wl_plot_table_load(path, &t, &err))
        return 0;
    int c = wl_plot_table_col(t, col), n = 0;
    for (size_t r = 0; c >= 0 && r < wl_plot_table_rows(t); r++) {
        const char *v = wl_plot_table_cell(t, r, c);
        int i;
        for (i = 0; i < n; i++)
            if (strcmp(vals[i], v) == 0)
                break;
        if (i == n && n < max)
            snprintf(vals[n++], 64, "%s", v);
    }
    wl_plot_table_free(t);
    return n;
}

static int figure(const char *kind, const char *csv, const char *base, const char *dir,
                  const wl_plot_kind_options *k, int log_y, wl_error *err)
{
    wl_plot_table *t = NULL;
    int rc = wl_plot_table_load(csv, &t, err);
    if (rc)
        return rc;
    wl_plot_options o;
    wl_plot_options_default(&o);
    o.log_y = log_y != 0;
    o.log_x = log_y == 2; /* 2: log-log */
    if (k && k->facet)
        o.width_in = 7;
    if (k && k->panels)
        o.height_in = 4.2;
    char path[1200];
    for (int i = 0; i < 2 && !rc; i++) {
        snprintf(path, sizeof path, "%s/%s.%s", dir, base, i ? "pdf" : "png");
        rc = wl_plot_kind_lookup(kind)(t, k, &o, path, err);
    }
    wl_plot_table_free(t);
    return rc;
}

/* Markdown/HTML table from a CSV, a subset of columns. */
static void table_out(FILE *md, FILE *html, const char *csv, const char *const *cols,
                      const char *const *heads, int n)
{
    wl_error err;
    wl_plot_table *t = NULL;
    if (wl_plot_table_load(csv, &t, &err))
        return;
    int idx[16];
    for (int i = 0; i < n; i++)
        idx[i] = wl_plot_table_col(t, cols[i]);
    fprintf(md, "|");
    fprintf(html, "<table>\n<tr>");
    for (int i = 0; i < n; i++) {
        fprintf(md, " %s |", heads[i]);
        fprintf(html, "<th>%s</th>", heads[i]);
    }
    fprintf(md, "\n|");
    for (int i = 0; i < n; i++)
        fprintf(md, "---|");
    fprintf(md, "\n");
    fprintf(html, "</tr>\n");
    for (size_t r = 0; r < wl_plot_table_rows(t); r++) {
        fprintf(md, "|");
        fprintf(html, "<tr>");
        for (int i = 0; i < n; i++) {
            char v[512];
            snprintf(v, sizeof v, "%s", wl_plot_table_cell(t, r, idx[i]));
            for (char *q = v; *q; q++)
                if (*q == '/')
                    *q = ' ';
            fprintf(md, " %s |", v);
            fprintf(html, "<td>%s</td>", v);
        }
        fprintf(md, "\n");
        fprintf(html, "</tr>\n");
    }
    fprintf(html, "</table>\n");
    wl_plot_table_free(t);
}

int cmd_report(int argc, char **argv)
{
    const char *cmd = "report";
    const char *spec_path = NULL, *dir = NULL;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0) { help(stdout); return 0; }
        else if (strcmp(argv[i], "--quiet") == 0) quiet = 1;
        else if (strcmp(argv[i], "--spec") == 0 && i + 1 < argc) spec_path = argv[++i];
        else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) dir = argv[++i];
        else return usage_error(cmd, "unknown or incomplete option '%s'", argv[i]);
    }
    if (!spec_path || !dir)
        return usage_error(cmd, "--spec STUDY.ini and -o DIR are required");
    report_cfg cfg = {"wattlas study", "energy-within-slowdown=10"};
    int line = ini_parse(spec_path, report_handler, &cfg);
    if (line != 0) {
        wl_error err;
        wl_error_set(&err, spec_path, line > 0 ? line : 0, "report",
                     line < 0 ? "cannot open the study" : "unknown key in [report] (title, objective)");
        return runtime_error(cmd, &err);
    }
    wl_error err = {0};
    wl_sweep_spec *spec = wl_sweep_spec_create();
    if (!spec || wl_sweep_spec_load(spec, spec_path, &err) || wl_sweep_spec_finish(spec, &err)) {
        wl_sweep_spec_free(spec);
        return runtime_error(cmd, &err);
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        wl_error_set(&err, dir, 0, "", "cannot create the directory: %s", strerror(errno));
        wl_sweep_spec_free(spec);
        return runtime_error(cmd, &err);
    }
    char p_sweep[1100], p_pareto[1100], p_opt[1100], p_sav[1100], tmp[1100];
    snprintf(p_sweep, sizeof p_sweep, "%s/sweep.csv", dir);
    snprintf(p_pareto, sizeof p_pareto, "%s/pareto.csv", dir);
    snprintf(p_opt, sizeof p_opt, "%s/optimal.csv", dir);
    snprintf(p_sav, sizeof p_sav, "%s/savings.csv", dir);
    if (!quiet)
        fprintf(stderr, "[1/4] sweep: %llu points -> %s\n", wl_sweep_spec_points(spec), p_sweep);
    wl_results_out *out = NULL;
    wl_sweep_options so = {WL_SWEEP_CSV, 0, 0, 1, !quiet && isatty(STDERR_FILENO)};
    wl_sweep_stats st;
    int rc = wl_results_out_open(p_sweep, &out, &err);
    if (!rc)
        rc = wl_sweep_run(spec, &so, wl_results_out_stream(out), NULL, &st, &err);
    if (!rc)
        rc = wl_results_out_commit(out, &err);
    else
        wl_results_out_abort(out);
    wl_sweep_spec_free(spec);
    if (rc)
        return runtime_error(cmd, &err);
    if (!quiet)
        fprintf(stderr, "[2/4] Pareto fronts and optimisation (%s)\n", cfg.objective);
    char *pa[] = {"pareto", "--in", p_sweep, "-o", p_pareto};
    char obj_energy[] = "energy";
    char *oa[] = {"optimize", "--in", p_sweep, "--objective", obj_energy, "-o", p_opt};
    char *sa[] = {"optimize", "--in", p_sweep, "--objective", cfg.objective, "-o", p_sav};
    if ((rc = cmd_pareto(5, pa)) || (rc = cmd_optimize(7, oa)) || (rc = cmd_optimize(7, sa)))
        return rc;
    if (!quiet)
        fprintf(stderr, "[3/4] figures\n");
    char gpus[8][64], dts[8][64], models[16][64], seqs[16][64];
    int ng = distinct(p_sweep, "gpu", gpus, 8), nd = distinct(p_sweep, "dtype", dts, 8);
    int nm = distinct(p_sweep, "model", models, 16), ns = distinct(p_sweep, "seq", seqs, 16);
    static char figs[64][256], caps[64][768];
    int nf = 0;
    for (int g = 0; g < ng && !rc; g++)
        for (int d = 0; d < nd && !rc; d++) {
            const char *cols[2] = {"gpu", "dtype"}, *vals[2] = {gpus[g], dts[d]};
            snprintf(tmp, sizeof tmp, "%s/energy-%s-%s.csv", dir, gpus[g], dts[d]);
            if (filter_csv(p_sweep, tmp, cols, vals, 2, &err) <= 0) {
                rc = WL_EIO;
                break;
            }
            if (nf >= 56)
                break; /* room for the five summary figures */
            snprintf(figs[nf], sizeof figs[0], "energy-%.63s-%.63s", gpus[g], dts[d]);
            snprintf(caps[nf], sizeof caps[0],
                     "Energy vs SM clock (log scale), %s, %s (large marker: energy-optimal "
                     "clock; square: maximum clock; hollow: power-limited)", gpus[g], dts[d]);
            rc = figure("energy-freq", tmp, figs[nf], dir, NULL, 1, &err);
            nf++;
        }
    if (!rc && ng && nd) {
        /* the first board and precision: Pareto fronts, panels, parts,
         * heatmap and savings */
        const char *cols[2] = {"gpu", "dtype"}, *vals[2] = {gpus[0], dts[0]};
        snprintf(tmp, sizeof tmp, "%s/pareto-%s-%s.csv", dir, gpus[0], dts[0]);
        wl_plot_kind_options k;
        memset(&k, 0, sizeof k);
        if (filter_csv(p_sweep, tmp, cols, vals, 2, &err) > 0) {
            k.facet = "model";
            snprintf(figs[nf], sizeof figs[0], "pareto-%s-%s", gpus[0], dts[0]);
            snprintf(caps[nf], sizeof caps[0], "Energy-runtime Pareto fronts per layer and "
                     "sequence length (log-log), %s, %s (faded: dominated)", gpus[0], dts[0]);
            rc = figure("pareto", tmp, figs[nf++], dir, &k, 2, &err);
        }
        const char *c3[3] = {"gpu", "dtype", "model"}, *v3[3] = {gpus[0], dts[0], models[nm - 1]};
        snprintf(tmp, sizeof tmp, "%s/heatmap-%s.csv", dir, models[nm - 1]);
        if (!rc && nm && filter_csv(p_sweep, tmp, c3, v3, 3, &err) > 0) {
            memset(&k, 0, sizeof k);
            k.x = "sm_clock_mhz";
            k.y = "seq";
            k.z = "energy_j";
            k.normalize = 1;
            snprintf(figs[nf], sizeof figs[0], "heatmap-%s", models[nm - 1]);
            snprintf(caps[nf], sizeof caps[0], "Energy over SM clock and sequence length, %s, "
                     "normalised to each row's minimum", models[nm - 1]);
            rc = figure("heatmap", tmp, figs[nf++], dir, &k, 0, &err);
        }
        const char *c4[4] = {"gpu", "dtype", "model", "seq"};
        const char *v4[4] = {gpus[0], dts[0], models[nm - 1], seqs[ns > 1 ? ns / 2 : 0]};
        snprintf(tmp, sizeof tmp, "%s/parts-%s.csv", dir, models[nm - 1]);
        if (!rc && ns && filter_csv(p_sweep, tmp, c4, v4, 4, &err) > 0) {
            memset(&k, 0, sizeof k);
            k.panels = "power,time,energy";
            snprintf(figs[nf], sizeof figs[0], "panels-%s", models[nm - 1]);
            snprintf(caps[nf], sizeof caps[0], "Power, time and energy vs SM clock, %s seq %s",
                     models[nm - 1], v4[3]);
            rc = figure("energy-freq", tmp, figs[nf++], dir, &k, 0, &err);
            if (!rc) {
                memset(&k, 0, sizeof k);
                k.stack = 1;
                snprintf(figs[nf], sizeof figs[0], "parts-%s", models[nm - 1]);
                snprintf(caps[nf], sizeof caps[0], "Where the energy goes: dynamic compute, "
                         "dynamic memory and static power, %s seq %s", models[nm - 1], v4[3]);
                rc = figure("energy-freq", tmp, figs[nf++], dir, &k, 0, &err);
            }
        }
        if (!rc) {
            /* the savings of the first board and precision (pareto-*.csv
             * holds exactly their sweep rows) */
            char p_sub[1200], p_in[1200];
            snprintf(p_in, sizeof p_in, "%s/pareto-%s-%s.csv", dir, gpus[0], dts[0]);
            snprintf(p_sub, sizeof p_sub, "%s/savings-%s-%s.csv", dir, gpus[0], dts[0]);
            char *sb[] = {"optimize", "--in", p_in, "--objective", cfg.objective, "-o", p_sub};
            rc = cmd_optimize(7, sb);
            if (!rc) {
                snprintf(figs[nf], sizeof figs[0], "savings-%s-%s", gpus[0], dts[0]);
                snprintf(caps[nf], sizeof caps[0], "Energy saved and runtime penalty at the chosen "
                         "clock (%s) against the maximum clock, %s, %s", cfg.objective, gpus[0],
                         dts[0]);
                memset(&k, 0, sizeof k);
                rc = figure("savings", p_sub, figs[nf++], dir, &k, 0, &err);
            } else {
                wl_error_set(&err, p_sub, 0, "", "optimisation failed");
            }
        }
    }
    if (rc)
        return runtime_error(cmd, &err);
    if (!quiet)
        fprintf(stderr, "[4/4] index.md, index.html\n");
    char p_md[1100], p_html[1100];
    snprintf(p_md, sizeof p_md, "%s/index.md", dir);
    snprintf(p_html, sizeof p_html, "%s/index.html", dir);
    wl_results_out *omd = NULL, *ohtml = NULL;
    if (wl_results_out_open(p_md, &omd, &err) || wl_results_out_open(p_html, &ohtml, &err)) {
        wl_results_out_abort(omd);
        return runtime_error(cmd, &err);
    }
    FILE *md = wl_results_out_stream(omd), *html = wl_results_out_stream(ohtml);
    char cmdline[2048] = "wattlas report";
    for (int i = 1; i < argc; i++) {
        size_t l = strlen(cmdline);
        snprintf(cmdline + l, sizeof cmdline - l, " %s", argv[i]);
    }
    fprintf(md, "# %s\n\nGenerated by wattlas %s with `%s` from `%s`: %llu points (sweep.csv).\n\n",
            cfg.title, WL_VERSION, cmdline, spec_path, st.points);
    fprintf(html, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title>\n"
                  "<style>body{font-family:'DejaVu Sans',sans-serif;max-width:60em;margin:2em auto}"
                  "table{border-collapse:collapse;font-size:90%%}td,th{border:1px solid #ccc;"
                  "padding:2px 6px;text-align:right}img{max-width:100%%}</style></head><body>\n"
                  "<h1>%s</h1>\n<p>Generated by wattlas %s with <code>%s</code> from "
                  "<code>%s</code>: %llu points (<a href=\"sweep.csv\">sweep.csv</a>).</p>\n",
            cfg.title, cfg.title, WL_VERSION, cmdline, spec_path, st.points);
    static const char *const oc[] = {"group", "sm_clock_mhz", "time_ms", "power_w", "energy_j",
                                     "energy_saving_vs_max_clock_pct",
                                     "runtime_penalty_vs_max_clock_pct"};
    static const char *const oh[] = {"workload", "clock (MHz)", "time (ms)", "power (W)",
                                     "energy (J)", "energy saved vs max clock (%)",
                                     "runtime penalty vs max clock (%)"};
    fprintf(md, "## Energy-optimal SM clock per workload\n\n");
    fprintf(html, "<h2>Energy-optimal SM clock per workload</h2>\n");
    table_out(md, html, p_opt, oc, oh, 7);
    fprintf(md, "\n## Savings at the chosen clock (%s)\n\n", cfg.objective);
    fprintf(html, "<h2>Savings at the chosen clock (%s)</h2>\n", cfg.objective);
    table_out(md, html, p_sav, oc, oh, 7);
    fprintf(md, "\n## Figures\n\n");
    fprintf(html, "<h2>Figures</h2>\n");
    for (int i = 0; i < nf; i++) {
        fprintf(md, "![%s](%s.png)\n\n*%s* ([PDF](%s.pdf))\n\n", caps[i], figs[i], caps[i], figs[i]);
        fprintf(html, "<figure><img src=\"%s.png\" alt=\"%s\"><figcaption>%s "
                      "(<a href=\"%s.pdf\">PDF</a>)</figcaption></figure>\n",
                figs[i], caps[i], caps[i], figs[i]);
    }
    fprintf(md, "Data: sweep.csv (every point), pareto.csv (non-dominated points), optimal.csv "
                "(least energy), savings.csv (chosen clock), and the CSV beside each figure.\n");
    fprintf(html, "<p>Data: <a href=\"sweep.csv\">sweep.csv</a>, <a href=\"pareto.csv\">pareto.csv</a>, "
                  "<a href=\"optimal.csv\">optimal.csv</a>, <a href=\"savings.csv\">savings.csv</a>."
                  "</p>\n</body></html>\n");
    if (wl_results_out_commit(omd, &err)) {
        wl_results_out_abort(ohtml);
        return runtime_error(cmd, &err);
    }
    if (wl_results_out_commit(ohtml, &err))
        return runtime_error(cmd, &err);
    if (!quiet)
        fprintf(stderr, "wattlas report: %s/index.html and %s/index.md, %d figures\n", dir, dir, nf);
    return 0;
}
