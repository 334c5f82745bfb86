/* A serving study's report (wl_plot_serve_report): a study file's [serve]
 * section (wattlas serve's options) and its [report] title, run through
 * serve/ and written as serve.csv, the figure of energy per output token
 * against p90 ITL (a front per max_num_seqs, points coloured by clock),
 * the lowest-energy points, and index.md/index.html, built beside the
 * output directory and moved in only when complete, as wl_plot_report. */
#include "report_internal.h"
#include "../presets/wattlas_presets.h"
#include "../serve/wattlas_serve.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int wl_plot_study_is_serve(const char *path)
{
    char *text = NULL;
    wl_error ignore;
    if (wl_core_read_file(path, &text, NULL, &ignore))
        return 0; /* the sweep study's reader says what is wrong */
    int yes = 0;
    /* a line that is "[serve]", spaces around it allowed */
    for (const char *p = text; p && *p && !yes;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        while (n && (*p == ' ' || *p == '\t'))
            p++, n--;
        while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
            n--;
        yes = n == 7 && !memcmp(p, "[serve]", 7);
        p = e ? e + 1 : NULL;
    }
    free(text);
    return yes;
}

typedef struct {
    wl_serve_job *job;
    char title[200];
    const char *src;
    wl_error *err;
} study_ini;

static int study_key(void *user, const char *section, const char *name, const char *value,
                     int line)
{
    study_ini *c = user;
    if (!strcmp(section, "report")) {
        if (strcmp(name, "title")) {
            wl_error_set(c->err, c->src, line, name, "unknown key in [report] of a serving "
                         "study (title)");
            return 0;
        }
        if (strlen(value) >= sizeof c->title) {
            wl_error_set(c->err, c->src, line, name, "longer than %zu characters",
                         sizeof c->title - 1);
            return 0;
        }
        snprintf(c->title, sizeof c->title, "%s", value);
        return 1;
    }
    if (strcmp(section, "serve")) {
        wl_error_set(c->err, c->src, line, name,
                     "unknown section [%.60s] in a serving study (expected [serve], [report])",
                     section);
        return 0;
    }
    char key[64];
    size_t n = strlen(name);
    if (n >= sizeof key) {
        wl_error_set(c->err, c->src, line, name, "unknown serve option");
        return 0;
    }
    for (size_t i = 0; i <= n; i++)
        key[i] = name[i] == '-' ? '_' : name[i];
    if (wl_serve_job_set(c->job, key, value, c->src, c->err)) {
        wl_error_locate(c->err, c->src, line);
        return 0;
    }
    return 1;
}

/* The serving grid's rows as serve.csv in the report's directory. */
static int run_grid(report *r, wl_serve_job *job, wl_error *err)
{
    char *path = in_tmp(r, "serve.csv");
    wl_results_out *out = NULL;
    wl_results_writer *w = NULL;
    size_t nc;
    const wl_results_col *cols = wl_serve_cols(&nc);
    int rc = path ? wl_results_out_open(path, &out, err) : WL_ENOMEM;
    if (!rc && wl_results_writer_create(wl_results_out_stream(out), WL_FMT_CSV, cols, nc, &w))
        rc = WL_ENOMEM;
    if (!rc)
        rc = wl_serve_job_run(job, w, NULL, NULL, err);
    if (!rc) {
        wl_results_writer_finish(w);
        w = NULL;
        rc = wl_results_out_commit(out, err);
        out = NULL;
    }
    wl_results_writer_free(w);
    wl_results_out_abort(out);
    if (!rc)
        rc = wl_results_table_load(path, &r->t, err);
    free(path);
    return rc;
}

/* The lowest energy per token of each GPU, power limit and max_num_seqs
 * among the points meeting the SLO (meets_slo, when the study sets one),
 * against the same group's highest clock. */
static void best_points(FILE *md, FILE *html, const wl_results_table *t)
{
    static const char *const key[] = {"gpu", "power_limit_w", "max_num_seqs"};
    static const char *const head[] = {"GPU", "power limit (W)", "max_num_seqs",
                                       "SM clock (MHz)", "p90 ITL (ms)",
                                       "energy per token (J)", "saved vs max clock"};
    int kc[3], ck = wl_results_table_col(t, "sm_clock_mhz"),
        ic = wl_results_table_col(t, "p90_itl_ms"),
        ec = wl_results_table_col(t, "energy_per_token_j"),
        sc = wl_results_table_col(t, "meets_slo"),
        pc = wl_results_table_col(t, "prefill_clock_mhz"),
        dc = wl_results_table_col(t, "decode_clock_mhz");
    int have[3];
    size_t nk = 0;
    for (int i = 0; i < 3; i++)
        if ((kc[i] = wl_results_table_col(t, key[i])) >= 0)
            have[nk++] = kc[i];
    size_t n = wl_results_table_rows(t);
    wl_error e_; /* a cell that is not a number is left out, not reported */
    unsigned char *done = calloc(n + 1, 1);
    if (!done || ck < 0 || ic < 0 || ec < 0)
        goto out;
    fputs("| ", md);
    fputs("<table><tr>", html);
    for (size_t i = 0; i < sizeof head / sizeof *head; i++) {
        fprintf(md, "%s | ", head[i]);
        fprintf(html, "<th>%s</th>", head[i]);
    }
    fputs("\n|", md);
    for (size_t i = 0; i < sizeof head / sizeof *head; i++)
        fputs("---|", md);
    fputs("\n", md);
    fputs("</tr>\n", html);
    for (size_t g = 0; g < n; g++) {
        if (done[g])
            continue;
        long best = -1, top = -1;
        double be = INFINITY, tc = -INFINITY;
        for (size_t r = g; r < n; r++) {
            if (!wl_results_table_same(t, g, r, have, nk))
                continue;
            done[r] = 1;
            double e, c;
            if (wl_results_table_num(t, r, ec, &e, &e_) || wl_results_table_num(t, r, ck, &c, &e_))
                continue;
            const char *ok = sc >= 0 ? wl_results_table_cell(t, r, sc) : "";
            if (c > tc)
                tc = c, top = (long)r;
            if ((!ok[0] || !strcmp(ok, "1")) && e < be)
                be = e, best = (long)r;
        }
        char v[7][64];
        for (int i = 0; i < 3; i++)
            snprintf(v[i], sizeof v[i], "%s", kc[i] >= 0 ? wl_results_table_cell(t, g, kc[i]) : "");
        if (best < 0) {
            snprintf(v[3], sizeof v[3], "no point meets the SLO");
            v[4][0] = v[5][0] = v[6][0] = 0;
        } else {
            size_t b = (size_t)best;
            const char *pcl = pc >= 0 ? wl_results_table_cell(t, b, pc) : "";
            const char *dcl = dc >= 0 ? wl_results_table_cell(t, b, dc) : "";
            if (pcl[0] && dcl[0] && strcmp(pcl, dcl))
                snprintf(v[3], sizeof v[3], "%s prefill, %s decode", pcl, dcl);
            else
                snprintf(v[3], sizeof v[3], "%s", wl_results_table_cell(t, b, ck));
            snprintf(v[4], sizeof v[4], "%s", wl_results_table_cell(t, b, ic));
            snprintf(v[5], sizeof v[5], "%s", wl_results_table_cell(t, b, ec));
            double et;
            if (top >= 0 && !wl_results_table_num(t, (size_t)top, ec, &et, &e_) && et > 0)
                snprintf(v[6], sizeof v[6], "%.1f%%", (1 - be / et) * 100);
            else
                v[6][0] = 0;
        }
        fputs("| ", md);
        fputs("<tr>", html);
        for (int i = 0; i < 7; i++) {
            report_md_text(md, v[i], 1);
            fputs(" | ", md);
            fputs("<td>", html);
            report_html_text(html, v[i]);
            fputs("</td>", html);
        }
        fputs("\n", md);
        fputs("</tr>\n", html);
    }
    fputs("\n", md);
    fputs("</table>\n", html);
out:
    free(done);
}

static int serve_index(report *r, const wl_serve_job *job, const char *title, wl_error *err)
{
    wl_results_out *omd = NULL, *oh = NULL;
    int rc = report_index_open(r, &omd, &oh, err);
    if (rc)
        return rc;
    FILE *md = wl_results_out_stream(omd), *html = wl_results_out_stream(oh);
    report_index_head(md, html, title);
    char when[64], what[400], line[800];
    report_timestamp(when, sizeof when);
    wl_serve_job_describe(job, what, sizeof what);
    snprintf(line, sizeof line, "Predicted by wattlas %s (commit %s) on %s: a serving "
             "engine with vLLM's semantics simulated step by step over %zu runs "
             "(serve.csv): %s. Predictions, not measurements.", WL_VERSION,
             wl_core_build_commit(), when, wl_results_table_rows(r->t), what);
    report_both_p(md, html, line);
    report_section(md, html, "best", "Lowest energy per output token");
    report_both_p(md, html, "Per GPU, power limit and max_num_seqs: the point with the "
                            "least energy per output token (among those meeting the SLO "
                            "when the study sets one), against the same engine at its "
                            "highest clock.");
    best_points(md, html, r->t);
    report_section(md, html, "figures", "Figures");
    report_index_figures(md, html, r);
    report_section(md, html, "provenance", "Provenance");
    snprintf(line, sizeof line, "Made by `%s` from %s.",
             r->o->command ? r->o->command : "wattlas report",
             r->o->spec_path ? r->o->spec_path : "a study given without a file");
    report_both_p(md, html, line);
    report_section(md, html, "files", "Files");
    rc = report_file_links(md, html, r);
    return report_index_close(omd, oh, rc, err);
}

static int serve_study(report *r, wl_serve_job *job, const char *title, const char *dir,
                       wl_plot_report_stats *stats, wl_error *err)
{
    wl_core_say(r->o->step, r->o->user, "[1/3] serve: the grid");
    int rc = run_grid(r, job, err);
    if (rc)
        return rc;
    stats->points = wl_results_table_rows(r->t);
    wl_core_say(r->o->step, r->o->user, "[2/3] figures");
    int gc = wl_results_table_col(r->t, "gpu");
    size_t first[2];
    int several = gc >= 0 && wl_results_table_distinct(r->t, gc, first, 2) > 1;
    wl_plot_kind_options k = {.x = "p90_itl_ms", .y = "energy_per_token_j",
                              .facet = several ? "gpu" : NULL};
    rc = report_figure(r, "pareto", r->t, "serve-front",
                       "Energy per output token against p90 inter-token latency, a front per "
                       "max_num_seqs (and power limit), points coloured by the SM clock",
                       &k, 0, err);
    wl_core_say(r->o->step, r->o->user, "[3/3] index.md, index.html");
    if (!rc)
        rc = serve_index(r, job, title, err);
    if (!rc)
        rc = report_commit_tmp(r, dir, err);
    stats->figures = r->nfigs;
    return rc;
}

int wl_plot_serve_report(const char *study_path, const char *dir,
                         const wl_plot_report_options *o, wl_plot_report_stats *stats,
                         wl_error *err)
{
    memset(stats, 0, sizeof *stats);
    char *text = NULL;
    size_t len = 0;
    int rc = wl_core_read_file(study_path, &text, &len, err);
    wl_serve_job *job = rc ? NULL : wl_serve_job_create();
    if (!rc && !job)
        rc = WL_ENOMEM;
    study_ini c = {.job = job, .src = study_path, .err = err};
    if (!rc)
        rc = wl_preset_ini_parse(text, len, study_path, study_key, &c, err);
    if (!rc)
        rc = wl_serve_job_finish(job, err);
    report r = {.o = o};
    if (!rc)
        rc = report_make_tmp(&r, dir, err);
    if (!rc)
        rc = serve_study(&r, job, c.title[0] ? c.title : "wattlas serving study", dir, stats, err);
    if (rc == WL_ENOMEM)
        wl_error_set(err, dir, 0, "", "out of memory");
    if (rc)
        report_error_place(&r, dir, err);
    report_free(&r);
    wl_serve_job_free(job);
    free(text);
    return rc;
}
