/* Energy-runtime Pareto fronts and operating-point selection. */
#ifndef WATTLAS_PARETO_H
#define WATTLAS_PARETO_H

#include <stddef.h>
#include <stdio.h>
#include "../core/wattlas_core.h"

/* Non-dominated points of n points with k objectives (all minimised), given
 * row-major in pts (n x k). on_front[i] = 1 for points no other point
 * dominates (a dominates b: a <= b everywhere and a < b somewhere; equal
 * points do not dominate each other). O(n log n) for k = 2 and 3 (sort and
 * sweep with a staircase), sort-filter-skyline for k >= 4. NaN objectives
 * are never on the front. */
int wl_pareto_front(const double *pts, size_t n, int k, unsigned char *on_front);

/* Objectives for picking one point: a const type object looked up by name,
 * e.g. "energy", "edp", "ed2p", "energy-within-slowdown=5",
 * "time-within-power=250". */
typedef struct wl_pareto_objective_type wl_pareto_objective_type;
typedef struct {
    const wl_pareto_objective_type *type;
    double param; /* slowdown percent or power watts */
    char text[64];
} wl_pareto_objective;

int wl_pareto_objective_parse(const char *text, wl_pareto_objective *out, wl_error *err);
const char *wl_pareto_objective_name(const wl_pareto_objective *o);

/* Index of the chosen point among n (time, power, energy), or -1 when no
 * point qualifies (e.g. every point above the power cap). Ties go to the
 * faster point. */
long wl_pareto_choose(const wl_pareto_objective *o, const double *time_ms,
                      const double *power_w, const double *energy_j, size_t n);

/* Per-kernel-class clock schedule: nc classes, nk candidate clocks each,
 * class c at clock k takes t[c*nk+k] ms and e[c*nk+k] J. Switching the
 * clock costs switch_us (at switch_w watts) each time a launch runs at a
 * clock other than the schedule's base clock (the clock of the class with
 * the most time), twice per launch (there and back) -- a conservative count.
 * Minimises energy with total time <= budget_ms (Lagrangian relaxation over
 * the time constraint, each class then independent). choice gets the clock
 * index per class. Returns WL_ENOTFOUND when no schedule meets the budget. */
typedef struct {
    double time_ms, energy_j;
    double switches;
} wl_pareto_schedule_result;

int wl_pareto_schedule(int nc, int nk, const double *t, const double *e, const double *launches,
                       double switch_us, double switch_w, double budget_ms, int *choice,
                       wl_pareto_schedule_result *res);

#endif
