/* Figure kind savings: energy saved and runtime penalty per workload
 * (optimize output). */
#include "../plot_internal.h"
#include "../kinds_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Row r's label in a table keyed by its first nk columns (the columns
 * before "objective": a savings table's gpu, model, batch, ...): the key
 * values that differ between rows, joined by blanks; all of them when
 * there is one row. *differ gets the one column that differs (-1: none or
 * several), which names the axis. */
static void group_label(const wl_results_table *t, int nk, size_t r, char *lab, size_t cap,
                        int *differ)
{
    size_t n = wl_results_table_rows(t);
    lab[0] = 0;
    int ndiff = 0;
    unsigned char same[64];
    *differ = -1;
    for (int k = 0; k < nk && k < 64; k++) {
        const char *v = wl_results_table_cell(t, r, k);
        same[k] = 1;
        for (size_t q = 0; q < n && same[k]; q++)
            same[k] = strcmp(wl_results_table_cell(t, q, k), v) == 0;
        if (!same[k]) {
            ndiff++;
            *differ = k;
        }
    }
    if (ndiff != 1)
        *differ = -1;
    for (int k = 0; k < nk && k < 64; k++) {
        const char *v = wl_results_table_cell(t, r, k);
        if ((same[k] && n != 1) || !v[0])
            continue;
        /* a number says what it counts ("gpt3-125m seq 128"), unless the
         * axis names its one column */
        const char *name = wl_results_table_header(t, (size_t)k);
        int counted = *differ < 0 && (!strcmp(name, "seq") || !strcmp(name, "batch"));
        size_t l = strlen(lab);
        if (l + 1 < cap)
            snprintf(lab + l, cap - l, "%s%s%s%s", l ? " " : "", counted ? name : "",
                     counted ? " " : "", v);
    }
}

int wl_plot_savings(const wl_results_table *t, const wl_plot_kind_options *k,
                    const wl_plot_options *o, const char *path, wl_error *err)
{
    int fastest = k && k->against && strcmp(k->against, "fastest") == 0;
    if (k && k->against && !fastest && strcmp(k->against, "max-clock") != 0) {
        wl_error_set(err, "against", 0, "against", "expected max-clock or fastest");
        return WL_EINVAL;
    }
    int gc = need_col(t, "objective", err); /* the key columns come before it */
    int sc = gc >= 0 ? need_col(t, fastest ? "energy_saving_vs_fastest_pct"
                                          : "energy_saving_vs_max_clock_pct", err) : -1;
    int pc = sc >= 0 ? need_col(t, fastest ? "runtime_penalty_vs_fastest_pct"
                                          : "runtime_penalty_vs_max_clock_pct", err) : -1;
    if (pc < 0)
        return WL_EPARSE;
    size_t n = wl_results_table_rows(t);
    double *s = malloc((n + 1) * sizeof *s), *pn = malloc((n + 1) * sizeof *pn);
    char (*lab)[160] = malloc((n + 1) * sizeof *lab);
    int rc = (!s || !pn || !lab) ? WL_ENOMEM : WL_OK, differ = -1;
    for (size_t r = 0; !rc && r < n; r++) {
        rc = num_cell(t, r, sc, &s[r], err);
        if (!rc)
            rc = num_cell(t, r, pc, &pn[r], err);
        group_label(t, gc, r, lab[r], sizeof lab[r], &differ);
    }
    static const char *const ln[2] = {"energy saved (%)", "runtime penalty (%)"};
    static const int colors[2] = {2, 1};
    /* the workloads differ in one column (batch): it names them; in
     * several: they are workloads */
    bars_style bs = {fastest ? "Change vs fastest point" : "Change vs max clock", "%", ln, colors,
                     NULL, 2, 0,
                     differ >= 0 ? wl_results_table_header(t, (size_t)differ) : "workload", NULL};
    const double *vv[2] = {s, pn};
    if (!rc)
        rc = bars_figure(t, o, path, n, vv, lab, &bs, NULL, err);
    free(s);
    free(pn);
    free(lab);
    return rc;
}

/* The kinds, looked up by name; their names and summaries make the help. */

/* What `wattlas plot`, study files and the help know the kind by; kinds.c
 * lists it (plot/kinds/list.h). */
const wl_plot_kind wl_plot_kind_savings = {
    .name = "savings",
    .summary = "energy saved and runtime penalty per workload (optimize output); horizontal "
               "bars for more than 8",
    .fn = wl_plot_savings,
    .options = "against",
};
