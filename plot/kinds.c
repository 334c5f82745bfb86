/* The list of figure kinds (each in its own file of plot/kinds/, listed in
 * plot/kinds/list.h) and what looks a kind up, checks its options and draws
 * it. */
#include "plot_internal.h"
#include "kinds_internal.h"
#include "../pareto/wattlas_pareto.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Every kind in plot/kinds/, in the order of plot/kinds/list.h. */
static const wl_plot_kind *const kinds[] = {
#define WL_PLOT_KIND(id) &wl_plot_kind_##id,
#include "kinds/list.h"
#undef WL_PLOT_KIND
};

size_t wl_plot_kind_count(void) { return sizeof kinds / sizeof *kinds; }

const wl_plot_kind *wl_plot_kind_at(size_t i)
{
    return i < wl_plot_kind_count() ? kinds[i] : NULL;
}

const wl_plot_kind *wl_plot_kind_find(const char *name)
{
    for (size_t i = 0; i < wl_plot_kind_count(); i++)
        if (strcmp(kinds[i]->name, name) == 0)
            return kinds[i];
    return NULL;
}

wl_plot_kind_fn wl_plot_kind_lookup(const char *name)
{
    const wl_plot_kind *k = wl_plot_kind_find(name);
    return k ? k->fn : NULL;
}

int wl_plot_kind_has_option(const wl_plot_kind *k, const char *opt)
{
    size_t l = strlen(opt);
    for (const char *p = k->options; p && *p;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == l && !strncmp(p, opt, l))
            return 1;
        p = e ? e + 1 : p + n;
    }
    return 0;
}

/* The kind options given (set in k) that kind does not read are refused,
 * as are values outside their words; errors name the option ("--facet"). */
int wl_plot_kind_options_check(const wl_plot_kind *kind, const wl_plot_kind_options *k,
                               const wl_plot_options *o, wl_error *err)
{
    const struct {
        int given;
        const char *name;
    } given[] = {{k->panels != NULL, "panels"},   {k->facet != NULL, "facet"},
                 {k->x != NULL, "x"},             {k->y != NULL, "y"},
                 {k->z != NULL, "z"},             {k->metric != NULL, "metric"},
                 {k->against != NULL, "against"}, {k->stack != 0, "stack"},
                 {k->normalize != 0, "normalize"}, {k->objective != NULL, "objective"},
                 {k->edp != 0, "edp"},            {k->reduce != NULL, "reduce"},
                 {k->show_infeasible != 0, "show-infeasible"}};
    char opt[32];
    for (size_t i = 0; i < sizeof given / sizeof *given; i++) {
        if (!given[i].given || wl_plot_kind_has_option(kind, given[i].name))
            continue;
        snprintf(opt, sizeof opt, "--%s", given[i].name);
        wl_error_set(err, opt, 0, "", "not an option of %s (its kind options: %s)", kind->name,
                     *kind->options ? kind->options : "none");
        return WL_EINVAL;
    }
    const struct {
        const char *value, *option, *allowed[4];
    } words[] = {{o->palette, "--palette", {"viridis", "cividis"}},
                 {k->metric, "--metric", {"time", "power", "energy"}},
                 {k->against, "--against", {"max-clock", "fastest"}},
                 {k->reduce, "--reduce", {"min", "mean"}}};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        if (!words[i].value)
            continue;
        int ok = 0;
        size_t na = 0;
        for (; na < 4 && words[i].allowed[na]; na++)
            ok |= !strcmp(words[i].value, words[i].allowed[na]);
        if (ok)
            continue;
        wl_error_set(err, words[i].option, 0, "", "expected %s%s%s%s%s, got '%.60s'",
                     words[i].allowed[0], na > 2 ? ", " : " or ", words[i].allowed[1],
                     na > 2 ? " or " : "", na > 2 ? words[i].allowed[2] : "", words[i].value);
        return WL_EINVAL;
    }
    if (k->stack < 0 || k->stack > WL_PLOT_STACK_PHASES) {
        wl_error_set(err, "--stack", 0, "", "expected parts or phases");
        return WL_EINVAL;
    }
    if (k->objective) {
        wl_pareto_objective obj;
        wl_error e2 = {0};
        if (wl_pareto_objective_parse(k->objective, &obj, &e2)) {
            wl_error_set(err, "--objective", 0, "", "%s", e2.text);
            return WL_EINVAL;
        }
    }
    if (k->panels) {
        wl_core_strlist l = {0};
        int rc = wl_core_parse_names(k->panels, "--panels", 0, "", &l, err);
        for (size_t i = 0; !rc && i < l.n; i++)
            if (strcmp(l.v[i], "power") && strcmp(l.v[i], "time") && strcmp(l.v[i], "energy")) {
                wl_error_set(err, "--panels", 0, "", "expected power, time and energy, got "
                                                     "'%.60s'", l.v[i]);
                rc = WL_EINVAL;
            }
        if (!rc && l.n > 3) {
            wl_error_set(err, "--panels", 0, "", "at most three panels");
            rc = WL_EINVAL;
        }
        wl_core_strlist_free(&l);
        if (rc)
            return rc;
    }
    return WL_OK;
}

int wl_plot_draw(const wl_plot_kind *kind, const wl_results_table *t, const char *in_path,
                 const wl_plot_kind_options *k, const wl_plot_options *o, const char *path,
                 wl_error *err)
{
    int rc = wl_plot_kind_options_check(kind, k, o, err);
    if (rc)
        return rc;
    if (kind->file_fn) {
        if (!in_path) {
            wl_error_set(err, kind->name, 0, "", "draws from a file (a trace), not a table");
            return WL_EINVAL;
        }
        return kind->file_fn(in_path, o, path, err);
    }
    wl_results_table *own = NULL;
    if (!t && (rc = wl_results_table_load(in_path, &own, err)))
        return rc;
    rc = kind->fn(t ? t : own, k, o, path, err);
    wl_results_table_free(own);
    return rc;
}
