/* Figure kind gpus: energy saved at the chosen clock per workload, GPU
 * beside GPU (optimize output of several GPUs). */
#include "../plot_internal.h"
#include "../kinds_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* An optimize table of several GPUs: per workload (the key columns but
 * the GPU) a bar per GPU of the energy saved at its chosen clock against
 * its maximum clock, the chosen clock written on the bar. */
/* The workload of row r among the nw first rows wrow: the one equal on
 * every key column (those before oc) but the GPU's (gc); nw when none. */
static size_t workload_of(const wl_results_table *t, size_t r, const size_t *wrow, size_t nw,
                          int oc, int gc)
{
    for (size_t w = 0; w < nw; w++) {
        int same = 1;
        for (int c = 0; c < oc && same; c++)
            same = c == gc || !strcmp(wl_results_table_cell(t, r, c),
                                      wl_results_table_cell(t, wrow[w], c));
        if (same)
            return w;
    }
    return nw;
}

int wl_plot_gpus(const wl_results_table *t, const wl_plot_kind_options *k,
                 const wl_plot_options *o, const char *path, wl_error *err)
{
    (void)k;
    int oc = need_col(t, "objective", err); /* the key columns come before it */
    int gc = oc >= 0 ? need_col(t, "gpu", err) : -1;
    int cc = gc >= 0 ? need_col(t, "sm_clock_mhz", err) : -1;
    int sc = cc >= 0 ? need_col(t, "energy_saving_vs_max_clock_pct", err) : -1;
    if (sc < 0)
        return WL_EPARSE;
    if (gc > oc) {
        wl_error_set(err, table_path(t), 0, "gpu", "gpu must be a key column, before objective");
        return WL_EINVAL;
    }
    size_t n = wl_results_table_rows(t), gi[9];
    size_t ng = wl_results_table_distinct(t, gc, gi, 9);
    if (ng < 1 || ng > 8) {
        wl_error_set(err, table_path(t), 0, "gpu", "expected 1 to 8 GPUs, found %s",
                     ng > 8 ? "more" : "none");
        return WL_EINVAL;
    }
    /* workloads: rows equal on every key column but the GPU, in order */
    size_t *wrow = malloc((n + 1) * sizeof *wrow), nw = 0;
    double *v = malloc((n + 1) * ng * sizeof *v);
    char (*lab)[160] = malloc((n + 1) * sizeof *lab), (*txt)[16] = malloc((n + 1) * ng * sizeof *txt);
    const char **tl = malloc((n + 1) * ng * sizeof *tl);
    int rc = wrow && v && lab && txt && tl ? WL_OK : WL_ENOMEM;
    for (size_t r = 0; !rc && r < n; r++)
        if (workload_of(t, r, wrow, nw, oc, gc) == nw)
            wrow[nw++] = r;
    for (size_t i = 0; !rc && i < nw * ng; i++) {
        v[i] = NAN;
        tl[i] = NULL;
    }
    for (size_t r = 0; !rc && r < n; r++) {
        size_t w = workload_of(t, r, wrow, nw, oc, gc), g = 0;
        while (g + 1 < ng && strcmp(wl_results_table_cell(t, gi[g], gc), wl_results_table_cell(t, r, gc)))
            g++;
        double sv, cv;
        if ((rc = num_cell(t, r, sc, &sv, err)) || (rc = num_cell(t, r, cc, &cv, err)))
            break;
        v[g * nw + w] = sv;
        snprintf(txt[g * nw + w], sizeof txt[0], "%.0f", cv);
        tl[g * nw + w] = isfinite(cv) ? txt[g * nw + w] : NULL;
    }
    /* each workload's name: the key values that vary, but the GPU's */
    for (size_t w = 0; !rc && w < nw; w++) {
        lab[w][0] = 0;
        for (int c = 0; c < oc; c++) {
            if (c == gc)
                continue;
            const char *val = wl_results_table_cell(t, wrow[w], c);
            int same = 1;
            for (size_t q = 0; q < nw && same; q++)
                same = !strcmp(wl_results_table_cell(t, wrow[q], c), val);
            /* numbers say what they count: "seq 512", "-150 mV" */
            if ((!same || nw == 1) && val[0])
                label_part(lab[w], sizeof lab[w], wl_results_table_header(t, (size_t)c), val);
        }
    }
    const char *names[8];
    static const int colors[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    const double *vv[8];
    for (size_t g = 0; g < ng; g++) {
        names[g] = wl_results_table_cell(t, gi[g], gc);
        vv[g] = v + g * nw;
    }
    bars_style bs = {"Energy saved vs max clock", "%", names, colors,
                     "MHz at each bar: the chosen clock", (int)ng, 1, NULL, NULL};
    if (!rc)
        rc = bars_figure(t, o, path, nw, vv, lab, &bs, tl, err);
    free(wrow); free(v); free(lab); free(txt); free(tl);
    return rc;
}

/* What `wattlas plot`, study files and the help know the kind by; kinds.c
 * lists it (plot/kinds/list.h). */
const wl_plot_kind wl_plot_kind_gpus = {
    .name = "gpus",
    .summary = "energy saved at the chosen clock per workload, GPU beside GPU, the clock on "
               "each bar (optimize output of several GPUs)",
    .fn = wl_plot_gpus,
    .options = "",
};
