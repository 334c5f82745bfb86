/* Figure kind compare: energy at the maximum and the optimal clock per GPU
 * (compare output). */
#include "../plot_internal.h"
#include "../kinds_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Per GPU: energy at the maximum clock and at the energy-optimal clock (the
 * optimum's clock written above its bar); reads `wattlas compare --format csv`. */
int wl_plot_compare(const wl_results_table *t, const wl_plot_kind_options *k,
                    const wl_plot_options *o, const char *path, wl_error *err)
{
    (void)k;
    int gc = need_col(t, "gpu", err);
    int mc = gc >= 0 ? need_col(t, "max_energy_j", err) : -1;
    int ec = mc >= 0 ? need_col(t, "opt_energy_j", err) : -1;
    int fc = ec >= 0 ? need_col(t, "opt_sm_clock_mhz", err) : -1;
    int xc = wl_results_table_col(t, "coefficients");
    int nc = wl_results_table_col(t, "not_runnable");
    if (fc < 0)
        return WL_EPARSE;
    size_t n = wl_results_table_rows(t);
    double *mx = malloc((n + 1) * sizeof *mx), *op = malloc((n + 1) * sizeof *op),
           *fo = malloc((n + 1) * sizeof *fo);
    char (*lab)[160] = malloc((n + 1) * sizeof *lab), (*clk)[24] = malloc((n + 1) * sizeof *clk);
    const char **tl = malloc((n + 1) * sizeof *tl), **why = calloc(n + 1, sizeof *why);
    char (*whyt)[64] = malloc((n + 1) * sizeof *whyt);
    int rc = (!mx || !op || !fo || !lab || !clk || !tl || !why || !whyt) ? WL_ENOMEM : WL_OK;
    for (size_t r = 0; !rc && r < n; r++) {
        rc = num_cell(t, r, mc, &mx[r], err);
        if (!rc)
            rc = num_cell(t, r, ec, &op[r], err);
        if (!rc)
            rc = num_cell(t, r, fc, &fo[r], err);
        int transferred = xc >= 0 && strncmp(wl_results_table_cell(t, r, xc), "transferred", 11) == 0;
        snprintf(lab[r], sizeof lab[r], "%s%s", wl_results_table_cell(t, r, gc), transferred ? "+" : "");
        snprintf(clk[r], sizeof clk[r], "%.0f", fo[r]);
        tl[r] = clk[r];
        /* why a GPU has no bars: "cannot run: has no bf16 math (...)",
         * its id left out where the reason starts with it */
        const char *nr = nc >= 0 ? wl_results_table_cell(t, r, nc) : "";
        const char *g = wl_results_table_cell(t, r, gc);
        size_t gl = strlen(g);
        if (gl && !strncmp(nr, g, gl) && nr[gl] == ' ')
            nr += gl + 1;
        size_t wl = strcspn(nr, "(;:");
        while (wl && nr[wl - 1] == ' ')
            wl--;
        snprintf(whyt[r], sizeof whyt[r], "cannot run: %.*s", (int)(wl < 50 ? wl : 50), nr);
        why[r] = nr[0] ? whyt[r] : NULL;
    }
    static const char *const ln[2] = {"at max clock", "at optimum (MHz at bar)"};
    static const int colors[2] = {1, 2};
    int any_tr = 0;
    for (size_t r = 0; xc >= 0 && r < n; r++)
        any_tr |= strncmp(wl_results_table_cell(t, r, xc), "transferred", 11) == 0;
    bars_style bs = {"Energy", "J", ln, colors, any_tr ? "+ transferred coefficients" : NULL, 2, 0,
                     NULL, why};
    const double *vv[2] = {mx, op};
    if (!rc)
        rc = bars_figure(t, o, path, n, vv, lab, &bs, tl, err);
    free(mx); free(op); free(fo); free(lab); free(clk); free(tl); free(why); free(whyt);
    return rc;
}

/* What `wattlas plot`, study files and the help know the kind by; kinds.c
 * lists it (plot/kinds/list.h). */
const wl_plot_kind wl_plot_kind_compare = {
    .name = "compare",
    .summary = "energy at the maximum and at the optimal clock per GPU (compare output)",
    .fn = wl_plot_compare,
    .options = "",
};
