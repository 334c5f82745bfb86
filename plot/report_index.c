/* The study's index.md and index.html (wl_plot_report_index): the
 * headline, the chosen operating points and schedules, caveats, provenance
 * and the files written, from what report.c built. */
#include "report_internal.h"
#include "../presets/wattlas_presets.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- index ------------------------------------------------------------------------------ */

void report_html_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

void report_md_text(FILE *f, const char *s, int cell)
{
    for (; *s; s++) {
        if (cell && *s == '/')
            fputc(' ', f);
        else if (*s == '|' || *s == '*' || *s == '_' || *s == '[' || *s == ']' || *s == '`')
            fprintf(f, "\\%c", *s);
        else if (*s == '\n')
            fputc(' ', f);
        else
            fputc(*s, f);
    }
}

static void both(FILE *md, FILE *html, const char *s, int cell)
{
    report_md_text(md, s, cell);
    report_html_text(html, s);
}

/* The fi-th '/'-separated field of a group key. */
static void key_field(const char *key, size_t fi, char *out, size_t n)
{
    for (size_t i = 0; i < fi && key; i++)
        if ((key = strchr(key, '/')))
            key++;
    size_t l = key ? strcspn(key, "/") : 0;
    if (l >= n)
        l = n - 1;
    if (key)
        memcpy(out, key, l);
    out[l] = 0;
}

/* A number to d significant digits (NaN: empty). */
static void sig(char *t, size_t n, double v, int d)
{
    if (!isfinite(v)) {
        t[0] = 0;
        return;
    }
    int dec = v == 0 ? 0 : d - 1 - (int)floor(log10(fabs(v)));
    wl_results_fmt(t, n, v, dec < 0 ? 0 : dec);
}

/* A group's savings cells from objective on, in the order of the savings
 * table's columns (pareto/sets.c): the objective; the chosen clock, time,
 * power, energy; the fastest point's clock, time, energy; the maximum
 * clock's request, the clock it ran at, its time, energy; the saving and
 * penalty against the fastest, against the maximum clock; the flat
 * optimum. The savings table's key columns come first, as many as the set
 * has: cells holds WL_PARETO_KEYED_MAX. */
enum {
    SV_OBJECTIVE, SV_CLOCK, SV_TIME, SV_POWER, SV_ENERGY, SV_FAST_CLOCK, SV_FAST_TIME,
    SV_FAST_ENERGY, SV_MAX_CLOCK, SV_MAX_RAN, SV_MAX_TIME, SV_MAX_ENERGY, SV_SAVE_FAST,
    SV_PENALTY_FAST, SV_SAVE_MAX, SV_PENALTY_MAX, SV_BAND_LO, SV_BAND_HI
};
static const wl_results_cell *saving_of(const choice_table *c, size_t g, wl_results_cell *cells)
{
    wl_results_col cols[WL_PARETO_KEYED_MAX];
    size_t nc = wl_pareto_savings_cols(c->set, cols, WL_PARETO_KEYED_MAX), at = 0;
    while (at < nc && strcmp(cols[at].name, "objective"))
        at++;
    wl_pareto_saving_cells(c->set, &c->obj, &c->sv[g], cells);
    return cells + (at < nc ? at : 0);
}

/* The choice table: a column per parameter that varies between groups (gpu
 * and model always), then the chosen clock (integer MHz), its time, power
 * and energy, the maximum-clock baseline (marked when the power limit
 * throttles it), the change against it and the flat optimum. */
static void choice_html_md(FILE *md, FILE *html, const choice_table *c, const report *r)
{
    size_t ng = wl_pareto_set_groups(c->set), nkf = 0;
    int kcol[WL_RESULTS_CSV_MAXCOLS];
    /* the parameters, a voltage among them: each voltage is a case of
     * its own (the savings' groups) */
    int stop = wl_results_table_col(r->t, "sm_clock_mhz");
    for (int col = 0; col < stop && nkf < WL_RESULTS_CSV_MAXCOLS; col++) {
        const char *h = wl_results_table_header(r->t, (size_t)col);
        int vary = !strcmp(h, "gpu") || !strcmp(h, "model");
        char a0[128], b0[128];
        for (size_t g = 1; !vary && g < ng; g++) {
            key_field(wl_pareto_set_group_key(c->set, 0), (size_t)col, a0, sizeof a0);
            key_field(wl_pareto_set_group_key(c->set, g), (size_t)col, b0, sizeof b0);
            vary = strcmp(a0, b0) != 0;
        }
        if (vary)
            kcol[nkf++] = col;
    }
    static const char *const heads[10] = {
        "clock (MHz)", "time (ms)", "power (W)", "energy (J)", "max-clock time (ms)",
        "max-clock energy (J)", "energy saved (%)", "runtime penalty (%)",
        "within 1% of least (MHz)", "max clock throttled"};
    fputs("|", md);
    fputs("<table>\n<tr>", html);
    for (size_t i = 0; i < nkf; i++) {
        const char *h = wl_results_table_header(r->t, (size_t)kcol[i]);
        fprintf(md, " %s |", h);
        fputs("<th>", html);
        report_html_text(html, h);
        fputs("</th>", html);
    }
    for (int i = 0; i < 10; i++) {
        fprintf(md, " %s |", heads[i]);
        fprintf(html, "<th>%s</th>", heads[i]);
    }
    fputs("\n|", md);
    for (size_t i = 0; i < nkf + 10; i++)
        fputs("---|", md);
    fputs("\n", md);
    fputs("</tr>\n", html);
    wl_results_cell row[WL_PARETO_KEYED_MAX];
    for (size_t g = 0; g < ng; g++) {
        const wl_pareto_saving *sv = &c->sv[g];
        const wl_results_cell *cells = saving_of(c, g, row);
        fputs("|", md);
        fputs("<tr>", html);
        char v[12][WL_RESULTS_NUM_MAX + 48];
        for (size_t i = 0; i < nkf; i++) {
            char f[128];
            key_field(wl_pareto_set_group_key(c->set, g), (size_t)kcol[i], f, sizeof f);
            fputs(" ", md);
            fputs("<td>", html);
            both(md, html, f, 1);
            fputs(" |", md);
            fputs("</td>", html);
        }
        wl_results_fmt(v[0], sizeof v[0], cells[SV_CLOCK].v, 0);
        sig(v[1], sizeof v[1], cells[SV_TIME].v, 4);
        wl_results_fmt(v[2], sizeof v[2], cells[SV_POWER].v, 1);
        sig(v[3], sizeof v[3], cells[SV_ENERGY].v, 4);
        sig(v[4], sizeof v[4], cells[SV_MAX_TIME].v, 4);
        sig(v[5], sizeof v[5], cells[SV_MAX_ENERGY].v, 4);
        wl_results_fmt(v[6], sizeof v[6], cells[SV_SAVE_MAX].v, 1);
        wl_results_fmt(v[7], sizeof v[7], cells[SV_PENALTY_MAX].v, 1);
        if (isfinite(cells[SV_BAND_LO].v))
            snprintf(v[8], sizeof v[8], "%.0f-%.0f", cells[SV_BAND_LO].v, cells[SV_BAND_HI].v);
        else
            v[8][0] = 0;
        /* throttled: the top request ran below itself, as its row's
         * throttled column says it (more than the 0.05 MHz that prints as
         * the request: core/eval.c) */
        double req = cells[SV_MAX_CLOCK].v, ran = cells[SV_MAX_RAN].v;
        snprintf(v[9], sizeof v[9], "%s",
                 isfinite(req) && isfinite(ran) && ran < req - 0.05 ? "yes" : "");
        if (sv->chosen < 0)
            for (int i = 0; i < 10; i++)
                v[i][0] = 0;
        for (int i = 0; i < 10; i++) {
            fputs(" ", md);
            fputs("<td>", html);
            both(md, html, v[i], 1);
            fputs(" |", md);
            fputs("</td>", html);
        }
        fputs("\n", md);
        fputs("</tr>\n", html);
    }
    fputs("</table>\n", html);
}

/* The phase schedules as a table in both indexes. */
static int schedule_html_md(const report *r, FILE *md, FILE *html, wl_error *err)
{
    char *p = in_tmp(r, "schedules.csv");
    wl_results_table *t = NULL;
    int rc = p ? wl_results_table_load(p, &t, err) : WL_ENOMEM;
    free(p);
    if (rc)
        return rc;
    /* the workload: its key columns (before "objective") that differ
     * between rows; then the schedule's, under readable headings */
    static const char *const show[6] = {"", "fixed_sm_clock_mhz", "schedule_mhz",
                                        "clock_switches", "extra_saving_pct", "slowdown_pct"};
    static const char *const head[6] = {"workload", "best fixed clock (MHz)",
                                        "clock per phase (MHz)", "clock switches",
                                        "extra saving (%)", "slowdown (%)"};
    int col[6], nk = wl_results_table_col(t, "objective");
    for (int i = 1; i < 6; i++)
        col[i] = wl_results_table_col(t, show[i]);
    col[0] = -1;
    size_t nrow = wl_results_table_rows(t);
    unsigned char varies[64] = {0};
    for (int k = 0; k < nk && k < 64; k++)
        for (size_t q = 1; q < nrow && !varies[k]; q++)
            varies[k] = strcmp(wl_results_table_cell(t, q, k), wl_results_table_cell(t, 0, k)) != 0;
    fputs("\n## One clock per phase\n\nThe best fixed clock and one clock per phase "
          "(forward, backward, optimizer; prefill, decode), switches at 20 us each "
          "(schedules.csv).\n\n|", md);
    fputs("<h2 id=\"schedules\">One clock per phase</h2>\n<p>The best fixed clock and one clock per phase "
          "(forward, backward, optimizer; prefill, decode), switches at 20 us each "
          "(<a href=\"schedules.csv\">schedules.csv</a>).</p>\n<table><tr>", html);
    for (int i = 0; i < 6; i++) {
        fprintf(md, " %s |", head[i]);
        fprintf(html, "<th>%s</th>", head[i]);
    }
    fputs("\n|", md);
    for (int i = 0; i < 6; i++)
        fputs("---|", md);
    fputs("</tr>\n", html);
    for (size_t row = 0; row < wl_results_table_rows(t); row++) {
        fputs("\n|", md);
        fputs("<tr>", html);
        for (int i = 0; i < 6; i++) {
            char wk[512];
            const char *v = col[i] >= 0 ? wl_results_table_cell(t, row, col[i]) : "";
            if (i == 0) { /* the workload's varying key values ("gpt2 8 512 train") */
                size_t l = 0;
                wk[0] = 0;
                for (int k = 0; k < nk && k < 64; k++) {
                    const char *kv = wl_results_table_cell(t, row, k);
                    if ((!varies[k] && nrow > 1) || !kv[0])
                        continue;
                    int w = snprintf(wk + l, sizeof wk - l, "%s%s", l ? " " : "", kv);
                    if (w < 0 || (size_t)w >= sizeof wk - l)
                        break;
                    l += (size_t)w;
                }
                v = wk;
            } else if (i == 2) { /* "forward=1050;backward=1200" as "forward 1050, ..." */
                size_t l = 0;
                for (const char *q = v; *q && l + 3 < sizeof wk; q++) {
                    if (*q == ';') {
                        wk[l++] = ',';
                        wk[l++] = ' ';
                    } else {
                        wk[l++] = *q == '=' ? ' ' : *q;
                    }
                }
                wk[l] = 0;
                v = wk;
            }
            fputc(' ', md);
            report_md_text(md, v, 1);
            fputs(" |", md);
            fputs("<td>", html);
            report_html_text(html, v);
            fputs("</td>", html);
        }
        fputs("</tr>\n", html);
    }
    fputs("\n", md);
    fputs("</table>\n", html);
    wl_results_table_free(t);
    return WL_OK;
}

/* ---- provenance ------------------------------------------------------------------------ */

/* FNV-1a of a preset's text (what a figure's numbers were made from). */
static uint64_t text_hash(const char *t)
{
    return wl_sweep_hash(WL_SWEEP_HASH_BASIS, t, strlen(t));
}

/* The value of `key = ...` in a preset text's [section] ("" if none). */
static void ini_value(const char *text, const char *section, const char *key, char *out, size_t n)
{
    out[0] = 0;
    char head[64];
    snprintf(head, sizeof head, "\n[%s]", section);
    const char *p = strstr(text, head);
    if (!p)
        return;
    p += strlen(head);
    size_t kl = strlen(key);
    while ((p = strchr(p, '\n'))) {
        p++;
        if (*p == '[')
            return;
        if (!strncmp(p, key, kl) && (p[kl] == ' ' || p[kl] == '=')) {
            const char *v = strchr(p, '=');
            if (!v)
                return;
            v++;
            while (*v == ' ')
                v++;
            size_t l = strcspn(v, "\n");
            if (l >= n)
                l = n - 1;
            memcpy(out, v, l);
            out[l] = 0;
            return;
        }
    }
}

/* The report's time: SOURCE_DATE_EPOCH when set (reproducible builds), or
 * now, in UTC. */
void report_timestamp(char *out, size_t n)
{
    const char *sde = getenv("SOURCE_DATE_EPOCH");
    char *end = NULL;
    long long e = sde ? strtoll(sde, &end, 10) : 0;
    time_t t = sde && end && !*end && e >= 0 ? (time_t)e : time(NULL);
    struct tm tm;
    if (!gmtime_r(&t, &tm) || !strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(out, n, "unknown");
}

void report_both_p(FILE *md, FILE *html, const char *s)
{
    fputs(s, md);
    fputs("\n\n", md);
    fputs("<p>", html);
    report_html_text(html, s);
    fputs("</p>\n", html);
}

/* One list item in both documents (the html list is opened by the caller). */
void report_both_li(FILE *md, FILE *html, const char *s)
{
    fprintf(md, "- %s\n", s);
    fputs("<li>", html);
    report_html_text(html, s);
    fputs("</li>\n", html);
}

void report_section(FILE *md, FILE *html, const char *id, const char *name)
{
    fprintf(md, "\n## %s\n\n", name);
    fprintf(html, "<h2 id=\"%s\">%s</h2>\n", id, name);
}

/* The headline: per GPU and precision, the range of energy saved at the
 * objective's choice against the maximum clock, its median, and the
 * runtime penalty range. */
static void headline(FILE *md, FILE *html, const report *r, const choice_table *c,
                     const char *objective)
{
    int gc = wl_results_table_col(r->t, "gpu"), dc = wl_results_table_col(r->t, "dtype");
    size_t ng = wl_pareto_set_groups(c->set);
    double *sv = malloc((ng + 1) * sizeof *sv);
    unsigned char *done = calloc(ng + 1, 1);
    fprintf(md, "At the objective `%s`, against running at the maximum clock:\n\n", objective);
    fputs("<p>At the objective <code>", html);
    report_html_text(html, objective);
    fputs("</code>, against running at the maximum clock:</p>\n<ul>\n", html);
    wl_results_cell row[WL_PARETO_KEYED_MAX];
    for (size_t g = 0; sv && done && g < ng; g++) {
        if (done[g])
            continue;
        char gv[128] = "", dv[32] = "";
        if (gc >= 0)
            key_field(wl_pareto_set_group_key(c->set, g), (size_t)gc, gv, sizeof gv);
        if (dc >= 0)
            key_field(wl_pareto_set_group_key(c->set, g), (size_t)dc, dv, sizeof dv);
        size_t m = 0;
        double plo = INFINITY, phi = -INFINITY;
        for (size_t h = g; h < ng; h++) {
            char g2[128] = "", d2[32] = "";
            if (gc >= 0)
                key_field(wl_pareto_set_group_key(c->set, h), (size_t)gc, g2, sizeof g2);
            if (dc >= 0)
                key_field(wl_pareto_set_group_key(c->set, h), (size_t)dc, d2, sizeof d2);
            if (strcmp(g2, gv) || strcmp(d2, dv))
                continue;
            done[h] = 1;
            const wl_results_cell *cells = saving_of(c, h, row);
            if (c->sv[h].chosen < 0 || !isfinite(cells[SV_SAVE_MAX].v))
                continue;
            /* insertion: sorted savings for the median */
            size_t i = m++;
            while (i > 0 && sv[i - 1] > cells[SV_SAVE_MAX].v) {
                sv[i] = sv[i - 1];
                i--;
            }
            sv[i] = cells[SV_SAVE_MAX].v;
            plo = fmin(plo, cells[SV_PENALTY_MAX].v);
            phi = fmax(phi, cells[SV_PENALTY_MAX].v);
        }
        char line[400];
        if (m)
            snprintf(line, sizeof line,
                     "%s, %s: %.1f-%.1f%% energy saved (median %.1f%%) at %.1f-%.1f%% longer "
                     "runtime, over %zu workloads", gv, dv, sv[0], sv[m - 1],
                     m % 2 ? sv[m / 2] : (sv[m / 2 - 1] + sv[m / 2]) / 2, plo, phi, m);
        else
            snprintf(line, sizeof line, "%s, %s: no point meets the objective", gv, dv);
        fprintf(md, "- **%s**\n", line);
        fputs("<li><b>", html);
        report_html_text(html, line);
        fputs("</b></li>\n", html);
    }
    fputs("\n", md);
    fputs("</ul>\n", html);
    free(sv);
    free(done);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every file of the report, linked (the index itself aside). */
int report_file_links(FILE *md, FILE *html, const report *r)
{
    DIR *d = opendir(r->tmp);
    if (!d)
        return WL_EIO;
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = WL_OK;
    struct dirent *e;
    while (!rc && (e = readdir(d))) {
        if (e->d_name[0] == '.' || !strncmp(e->d_name, "index.", 6))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            char **nn = realloc(names, cap * sizeof *nn);
            if (!nn) {
                rc = WL_ENOMEM;
                break;
            }
            names = nn;
        }
        if (!(names[n] = wl_core_strprintf("%s", e->d_name)))
            rc = WL_ENOMEM;
        else
            n++;
    }
    closedir(d);
    if (!rc) {
        qsort(names, n, sizeof *names, cmp_str);
        fputs("<ul>\n", html);
        for (size_t i = 0; i < n; i++) {
            fprintf(md, "- [%s](%s)\n", names[i], names[i]);
            fprintf(html, "<li><a href=\"%s\">%s</a></li>\n", names[i], names[i]);
        }
        fputs("</ul>\n", html);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

/* The title in both documents, and the html head and style. */
void report_index_head(FILE *md, FILE *html, const char *title)
{
    fputs("# ", md);
    report_md_text(md, title, 0);
    fputs("\n\n", md);
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>", html);
    report_html_text(html, title);
    /* cells keep to one line; a table wider than the page scrolls
     * sideways rather than wrapping its numbers */
    fputs("</title>\n<style>body{font-family:'DejaVu Sans',sans-serif;max-width:80em;"
          "margin:2em auto;padding:0 1em}table{border-collapse:collapse;font-size:85%;"
          "display:block;overflow-x:auto;max-width:100%}td,th{border:1px "
          "solid #ccc;padding:2px 6px;text-align:right;white-space:nowrap}"
          "img{max-width:100%}"
          "pre{background:#f6f6f6;padding:0.5em}</style></head><body>\n<h1>", html);
    report_html_text(html, title);
    fputs("</h1>\n", html);
}

/* Every figure recorded, with its caption and its PDF, SVG and data. */
void report_index_figures(FILE *md, FILE *html, const report *r)
{
    for (size_t i = 0; i < r->nfigs; i++) {
        const figure_rec *f = &r->figs[i];
        fprintf(md, "![Figure %zu](%s.png)\n\n*Figure %zu. ", i + 1, f->base, i + 1);
        report_md_text(md, f->caption, 0);
        fprintf(md, "* ([PDF](%s.pdf), [SVG](%s.svg), [data](%s.csv))\n\n", f->base, f->base,
                f->base);
        fprintf(html, "<figure><img src=\"%s.png\" alt=\"Figure %zu\"><figcaption>Figure %zu. ",
                f->base, i + 1, i + 1);
        report_html_text(html, f->caption);
        fprintf(html, " (<a href=\"%s.pdf\">PDF</a>, <a href=\"%s.svg\">SVG</a>, "
                      "<a href=\"%s.csv\">data</a>)</figcaption></figure>\n",
                f->base, f->base, f->base);
    }
}

int wl_plot_report_index(report *r, const wl_sweep_spec *spec, const char *title,
                         const char *objective, unsigned long long points,
                         const choice_table *opt, const choice_table *sav, int sched,
                         wl_error *err)
{
    wl_results_out *omd = NULL, *oh = NULL;
    int rc = report_index_open(r, &omd, &oh, err);
    if (!rc) {
        FILE *md = wl_results_out_stream(omd), *html = wl_results_out_stream(oh);
        const char *cmd = r->o->command ? r->o->command : "wattlas report";
        const char *spec_path = r->o->spec_path ? r->o->spec_path : "";
        char when[64];
        report_timestamp(when, sizeof when);
        report_index_head(md, html, title);
        char line[600];
        snprintf(line, sizeof line, "Predicted by wattlas %s (commit %s) on %s: %llu operating "
                 "points (sweep.csv). Predictions, not measurements; see Caveats.",
                 WL_VERSION, wl_core_build_commit(), when, points);
        report_both_p(md, html, line);
        headline(md, html, r, sav, objective);
        /* contents */
        static const char *const toc[][2] = {
            {"figures", "Figures"}, {"optimal", "Energy-optimal SM clock per workload"},
            {"savings", "Savings at the chosen clock"}, {"schedules", "One clock per phase"},
            {"caveats", "Caveats"}, {"provenance", "Provenance"}, {"files", "Files"}};
        fputs("Contents: ", md);
        fputs("<p>Contents: ", html);
        for (size_t i = 0; i < sizeof toc / sizeof *toc; i++) {
            if (i == 3 && !sched)
                continue;
            fprintf(md, "%s[%s](#%s)", i ? " | " : "", toc[i][1], toc[i][0]);
            fprintf(html, "%s<a href=\"#%s\">%s</a>", i ? " | " : "", toc[i][0], toc[i][1]);
        }
        fputs("\n\n", md);
        fputs("</p>\n", html);
        report_section(md, html, "figures", "Figures");
        report_index_figures(md, html, r);
        if (r->omitted) {
            snprintf(line, sizeof line, "%zu more energy-vs-clock figures were left out; "
                     "sweep.csv has every point.", r->omitted);
            report_both_p(md, html, line);
        }
        report_section(md, html, "optimal", "Energy-optimal SM clock per workload");
        size_t unfit = wl_pareto_set_unfit(opt->set);
        if (unfit) {
            snprintf(line, sizeof line, "%zu points need more memory than their GPU has (fits = 0 "
                     "in sweep.csv) and are left out of the tables.", unfit);
            report_both_p(md, html, line);
        }
        choice_html_md(md, html, opt, r);
        report_section(md, html, "savings", "Savings at the chosen clock");
        snprintf(line, sizeof line, "The clock the objective %s chooses, against the maximum "
                 "clock that can run (savings.csv).", objective);
        report_both_p(md, html, line);
        choice_html_md(md, html, sav, r);
        if (sched)
            rc = schedule_html_md(r, md, html, err);
        report_section(md, html, "caveats", "Caveats");
        fputs("<ul>\n", html);
        size_t ngpu = wl_sweep_spec_axis_count(spec, "gpu");
        /* two presets of one die differ by their boards as well as by their
         * configuration: each carries the one board it was fitted on */
        for (size_t i = 0; i < ngpu; i++)
            for (size_t j = i + 1; j < ngpu; j++) {
                const wl_core_gpu *a = wl_sweep_spec_gpu(spec, i), *b = wl_sweep_spec_gpu(spec, j);
                if (!wl_core_gpu_same_die(a, b) || !strcmp(a->id, b->id))
                    continue;
                char die[1000];
                snprintf(die, sizeof die, "%s and %s share a die (%d SMs, %g MB L2): each preset "
                         "carries the one board it was fitted on, and boards of one product differ "
                         "15-30%% in power at a clock, so their difference here is partly the two "
                         "boards'; 'wattlas compare --gpu %s,%s' says how much for one case, and "
                         "--same-board runs both on %s's board.", a->id, b->id, a->sms,
                         a->l2_size_mb, a->id, b->id, a->id);
                report_both_li(md, html, die);
            }
        for (size_t i = 0; i < ngpu; i++) {
            const wl_core_gpu *g = wl_sweep_spec_gpu(spec, i);
            const char *text = wl_preset_text(WL_PRESET_GPU, g->id);
            char note[256] = "", hash[128] = "";
            if (text) {
                ini_value(text, "calibration", "note", note, sizeof note);
                ini_value(text, "calibration", "data_hash", hash, sizeof hash);
            }
            /* a [calibration] made by fitting another GPU's measurements */
            char ccmd[512] = "", other[64] = "";
            if (text)
                ini_value(text, "calibration", "command", ccmd, sizeof ccmd);
            const char *gp = strstr(ccmd, "--gpu ");
            if (gp)
                snprintf(other, sizeof other, "%.*s", (int)strcspn(gp + 6, " "), gp + 6);
            if (other[0] && strcmp(other, g->id) && !note[0])
                snprintf(line, sizeof line, "%s carries the calibration fitted to %s's "
                         "measurements (its preset says why they transfer); no measurement of "
                         "%s itself was fitted or validated.", g->id, other, g->id);
            else if (!strncmp(g->coef_source, "transferred", 11))
                snprintf(line, sizeof line, "%s runs on coefficients %s by the transfer rules: no "
                         "measurement of this GPU was fitted; expect larger errors than on a "
                         "calibrated GPU.", g->id, g->coef_source);
            else if (note[0])
                snprintf(line, sizeof line, "%s is calibrated on measurements (%s): %s; the "
                         "README's Accuracy section gives the held-out errors.", g->id,
                         hash[0] ? hash : "its own data", note);
            else
                snprintf(line, sizeof line, "%s: coefficients %s.", g->id,
                         g->coef_source[0] ? g->coef_source : "as its preset gives them");
            report_both_li(md, html, line);
            /* With no measured voltage, the curve's knee decides the
             * optimum: every H100 and H200 optimum landed within 1% of it
             * (915-990 MHz against a 960-990 MHz knee; issue 63). */
            if (g->vf_rule & WL_VF_RULE_VOLTAGE) {
                snprintf(line, sizeof line, "%s's voltage is a rule, not a measurement: flat at "
                         "%.0f mV up to the knee at %.0f MHz, then rising to %.0f mV at the top "
                         "clock. Energy-optimal clocks near %.0f MHz follow from that rule; a "
                         "curve from the board's own data (its compute-bound kernel rows, "
                         "'wattlas calibrate', or a voltage_mv column in the idle table, "
                         "'calibrate --idle') can move them.", g->id, g->vf_vmin_mv,
                         g->vf_knee_mhz, g->vf_vmax_mv, g->vf_knee_mhz);
                report_both_li(md, html, line);
            } else if (g->vf_voltage_from[0]) {
                snprintf(line, sizeof line, "%s's voltage is derived from its board's compute-bound "
                         "kernel rows (%s: (P - idle - leakage) / f of GEMMs the clock paces), "
                         "not read out; another board of it may sit elsewhere.", g->id,
                         g->vf_voltage_from);
                report_both_li(md, html, line);
            }
        }
        wl_learn_use lu;
        if (wl_sweep_spec_learned(spec, &lu)) {
            char what[320];
            wl_learn_model_describe(lu.model, what, sizeof what);
            snprintf(line, sizeof line, "Every point is the learned model's: %s. %llu of %llu "
                     "points lie outside its training domain; %s.", what, r->learned_outside,
                     points, wl_learn_outside_note(lu.model));
            report_both_li(md, html, line);
        }
        static const char *const general[] = {
            "Launch-bound workloads (small batch and sequence) are paced by the host; their "
            "measured time can be bimodal, so their optimum is flat and uncertain: read the "
            "within-1% range, not the single clock.",
            "Energy is the GPU board's; the host, network and cooling are not included.",
            "A preset carries one board. Boards of one product differ: about 15-30% in power "
            "at a clock, and in the power at which their controller holds a throttled kernel "
            "(0.76-1.01 of the limit on the Hopper boards measured); hosts differ 2x in their "
            "cost per kernel. Prediction intervals (--interval) include this spread unless "
            "--board same says the preset was calibrated on the very board; 'wattlas "
            "calibrate' on your own measurements gives your board's figures."};
        for (size_t i = 0; i < sizeof general / sizeof *general; i++) {
            report_both_li(md, html, general[i]);
        }
        fputs("</ul>\n", html);
        report_section(md, html, "provenance", "Provenance");
        fprintf(md, "- command: `%s`\n- wattlas %s, commit %s\n- generated %s\n", cmd, WL_VERSION,
                wl_core_build_commit(), when);
        fputs("<ul><li>command: <code>", html);
        report_html_text(html, cmd);
        fprintf(html, "</code></li><li>wattlas %s, commit %s</li><li>generated %s</li>\n",
                WL_VERSION, wl_core_build_commit(), when);
        for (size_t i = 0; i < ngpu; i++) {
            const wl_core_gpu *g = wl_sweep_spec_gpu(spec, i);
            const char *text = wl_preset_text(WL_PRESET_GPU, g->id);
            char hash[128] = "", calib[64] = "";
            if (text) {
                ini_value(text, "calibration", "data_hash", hash, sizeof hash);
                const char *cs = strstr(text, "\n[calibration]");
                if (cs) {
                    const char *ce = strstr(cs + 1, "\n[");
                    uint64_t h = wl_sweep_hash(WL_SWEEP_HASH_BASIS, cs,
                                               ce ? (size_t)(ce - cs) : strlen(cs));
                    snprintf(calib, sizeof calib, "fnv1a64:%016llx", (unsigned long long)h);
                }
            }
            snprintf(line, sizeof line, "GPU preset %s: %s%016llx; calibration %s%s%s",
                     g->id, text ? "fnv1a64:" : "(a file) ",
                     text ? (unsigned long long)text_hash(text) : 0ULL,
                     calib[0] ? calib : "none", hash[0] ? ", fitted on " : "", hash);
            report_both_li(md, html, line);
        }
        int mc = wl_results_table_col(r->t, "model");
        size_t idx[64];
        size_t nm = mc >= 0 ? wl_results_table_distinct(r->t, mc, idx, 64) : 0;
        for (size_t i = 0; i < nm && i < 64; i++) {
            const char *id = wl_results_table_cell(r->t, idx[i], mc);
            const char *text = wl_preset_text(WL_PRESET_MODEL, id);
            if (text)
                snprintf(line, sizeof line, "model preset %s: fnv1a64:%016llx", id,
                         (unsigned long long)text_hash(text));
            else
                snprintf(line, sizeof line, "model %s: not a built-in preset", id);
            report_both_li(md, html, line);
        }
        fputs("</ul>\n", html);
        /* the study file itself */
        char *spec_text = NULL;
        wl_error e2;
        if (spec_path[0] && !wl_core_read_file(spec_path, &spec_text, NULL, &e2)) {
            fprintf(md, "\nThe study file, `%s`:\n\n```ini\n%s%s```\n", spec_path, spec_text,
                    spec_text[0] && spec_text[strlen(spec_text) - 1] == '\n' ? "" : "\n");
            fputs("<p>The study file, <code>", html);
            report_html_text(html, spec_path);
            fputs("</code>:</p>\n<pre>", html);
            report_html_text(html, spec_text);
            fputs("</pre>\n", html);
        } else {
            report_both_p(md, html, "The study was given without a file (no spec to show).");
        }
        free(spec_text);
        report_section(md, html, "files", "Files");
        report_both_p(md, html, "sweep.csv has every point, pareto.csv the non-dominated ones, "
                         "optimal.csv the least energy per workload, savings.csv the chosen "
                         "clocks; each figure has its data beside it.");
        if (!rc)
            rc = report_file_links(md, html, r);
        rc = report_index_close(omd, oh, rc, err);
    }
    return rc;
}

int report_index_open(const report *r, wl_results_out **md, wl_results_out **html, wl_error *err)
{
    char *pm = in_tmp(r, "index.md"), *ph = in_tmp(r, "index.html");
    *md = *html = NULL;
    int rc = pm && ph ? wl_results_out_open(pm, md, err) : WL_ENOMEM;
    if (!rc && (rc = wl_results_out_open(ph, html, err))) {
        wl_results_out_abort(*md);
        *md = NULL;
    }
    free(pm);
    free(ph);
    return rc;
}

int report_index_close(wl_results_out *md, wl_results_out *html, int rc, wl_error *err)
{
    fputs("</body></html>\n", wl_results_out_stream(html));
    if (!rc)
        rc = wl_results_out_commit(md, err);
    else
        wl_results_out_abort(md);
    if (!rc)
        rc = wl_results_out_commit(html, err);
    else
        wl_results_out_abort(html);
    return rc;
}

