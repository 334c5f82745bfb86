/* Figure kind importance: feature importances of a learned model per target
 * (learn --importance output). */
#include "../plot_internal.h"
#include "../kinds_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Feature importances from `wattlas learn --importance`: a bar per target
 * for each feature, the most important (by the mean over targets) first;
 * features that no split uses are left out. */
int wl_plot_importance(const wl_results_table *t, const wl_plot_kind_options *k,
                       const wl_plot_options *o, const char *path, wl_error *err)
{
    (void)k;
    static const char *const cols[3] = {"time_importance", "power_importance", "energy_importance"};
    int fc = need_col(t, "feature", err), c[3];
    for (int i = 0; i < 3 && fc >= 0; i++)
        if ((c[i] = need_col(t, cols[i], err)) < 0)
            return WL_EPARSE;
    if (fc < 0)
        return WL_EPARSE;
    size_t n = wl_results_table_rows(t), m = 0;
    double *v = malloc((n + 1) * 4 * sizeof *v);
    size_t *ord = malloc((n + 1) * sizeof *ord);
    char (*lab)[160] = malloc((n + 1) * sizeof *lab);
    int rc = v && ord && lab ? WL_OK : WL_ENOMEM;
    for (size_t r = 0; !rc && r < n; r++) {
        double x[3], mean = 0;
        for (int i = 0; !rc && i < 3; i++) {
            rc = num_cell(t, r, c[i], &x[i], err);
            mean += isfinite(x[i]) ? x[i] / 3 : 0;
        }
        if (rc || !(mean > 0))
            continue;
        size_t j = m++;
        while (j > 0 && v[4 * (ord[j - 1]) + 3] < mean) {
            ord[j] = ord[j - 1];
            j--;
        }
        ord[j] = r;
        for (int i = 0; i < 3; i++)
            v[4 * r + (size_t)i] = x[i];
        v[4 * r + 3] = mean;
    }
    double *cols3 = rc ? NULL : malloc((m + 1) * 3 * sizeof *cols3);
    if (!rc && !cols3)
        rc = WL_ENOMEM;
    if (!rc && !m) {
        wl_error_set(err, table_path(t), 0, "feature", "no feature has any importance");
        rc = WL_EINVAL;
    }
    for (size_t j = 0; !rc && j < m; j++) {
        for (int i = 0; i < 3; i++)
            cols3[(size_t)i * m + j] = 100 * v[4 * ord[j] + (size_t)i];
        snprintf(lab[j], sizeof lab[j], "%s", wl_results_table_cell(t, ord[j], fc));
    }
    static const char *const ln[3] = {"time", "power", "energy"};
    static const int colors[3] = {0, 1, 2};
    bars_style bs = {"Share of split gain", "%", ln, colors, NULL, 3, 0, NULL, NULL};
    if (!rc) {
        const double *vv[3] = {cols3, cols3 + m, cols3 + 2 * m};
        rc = bars_figure(t, o, path, m, vv, lab, &bs, NULL, err);
    }
    free(v);
    free(ord);
    free(lab);
    free(cols3);
    return rc;
}

/* What `wattlas plot`, study files and the help know the kind by; kinds.c
 * lists it (plot/kinds/list.h). */
const wl_plot_kind wl_plot_kind_importance = {
    .name = "importance",
    .summary = "feature importances of a learned model per target, the most important first "
               "(learn --importance output)",
    .fn = wl_plot_importance,
    .options = "",
};
