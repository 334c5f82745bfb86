/* What the study (report.c) and its index (report_index.c) share: the
 * report being built in its temporary directory and the chosen points. */
#ifndef WL_PLOT_REPORT_INTERNAL_H
#define WL_PLOT_REPORT_INTERNAL_H

#include "plot_internal.h"
#include "../pareto/wattlas_pareto.h"
#include "../sweep/wattlas_sweep.h"

typedef struct {
    char *base, *caption;
} figure_rec;

typedef struct {
    const wl_plot_report_options *o;
    char *tmp;        /* the temporary directory */
    figure_rec *figs;
    size_t nfigs, figcap;
    size_t omitted;   /* energy-vs-clock figures left out */
    wl_results_table *t;      /* the sweep */
    wl_results_table *base;   /* the sweep, one row per point (kernel scope: first class) */
    int *param;       /* parameter columns of base (before sm_clock_mhz) */
    size_t nparam;
    unsigned long long learned_outside; /* points outside a learned model's domain */
} report;

typedef struct {
    wl_pareto_set *set;
    wl_pareto_saving *sv;
    wl_pareto_objective obj;
} choice_table;

/* NAME in the report's temporary directory (malloc'd; NULL: no memory). */
static inline char *in_tmp(const report *r, const char *name)
{
    return wl_core_strprintf("%s/%s", r->tmp, name);
}

/* index.md and index.html of the study: the headline, the chosen points,
 * schedules, caveats, provenance and the files, in the temporary directory. */
int wl_plot_report_index(report *r, const wl_sweep_spec *spec, const char *title,
                         const char *objective, unsigned long long points,
                         const choice_table *opt, const choice_table *sav, int sched,
                         wl_error *err);

#endif
