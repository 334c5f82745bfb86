/* What calib's files share below the public header: the table of fitted
 * coefficients (params.c). */
#ifndef WATTLAS_CALIB_INTERNAL_H
#define WATTLAS_CALIB_INTERNAL_H

#include "wattlas_calib.h"

#include <stddef.h>

typedef enum { T_LOG, T_LOGIT } xform;

typedef struct {
    const char *name;
    size_t off; /* in wl_core_coeffs */
    xform t;
    double lo, hi; /* logit range */
    double prior_sd; /* in transformed units */
} fit_param;

/* the fitted coefficients, in the order of the fit's vector and of a
 * preset's [covariance] */
#define WL_CALIB_NPARAMS ((size_t)33)
extern const fit_param wl_calib_params[WL_CALIB_NPARAMS];

/* The coefficient i of c, where the fit reads and writes it. */
double *wl_calib_coef_at(wl_core_coeffs *c, size_t i);
/* A value into the parameter's fitted scale, and back. */
double wl_calib_to_x(const fit_param *p, double v);
double wl_calib_from_x(const fit_param *p, double x);

/* validate.c: the problem's evaluators walk the power governor launch by
 * launch (exact 1: a fit's finite differences need the model smooth to
 * rounding) or by each kernel's band of clocks (0: as predict does). */
void wl_calib_i_problem_exact(wl_calib_problem *p, int exact);
/* Row's prediction as wl_calib_predict's, through a throttle cache for
 * its workload's rows in rising clock order (equal results: the cap solve
 * is the request's own only below the clock it first throttles at); its
 * workload's index in *wl (-1: not predicted). */
int wl_calib_i_workload_of(const wl_calib_problem *p, size_t row);
int wl_calib_i_predict_cached(const wl_calib_problem *p, size_t row,
                              wl_core_throttle_cache *cache, wl_core_result *res);

/* calibrate --fit tc_fp8_power_ratio PAIRS.csv: the fit of calib/tc_ratio.c,
 * the --gpu preset's text written to -o with the ratio in [calibration]. */
int wl_calib_tc_ratio_run(const wl_calib_run_options *o, wl_error *err);

#endif
