/* Measurements, prediction of measured rows, accuracy metrics and fitting of
 * the per-GPU coefficients (GSL nonlinear least squares). */
#ifndef WATTLAS_CALIB_H
#define WATTLAS_CALIB_H

#include <stdio.h>
#include "../core/wattlas_core.h"

/* One measured row, schema of shared/data/measurements. */
typedef struct {
    char gpu[64], model[64], dtype[16], mode[16], attention[16];
    long long batch, seq; /* seq 0: not applicable (vision) */
    double sm_clock_mhz, measured_clock_mhz, time_ms, energy_j, power_w, temp_c;
    int line;
    int usable; /* measured values are physically possible */
} wl_calib_row;

typedef struct wl_calib_set wl_calib_set;

int wl_calib_load(const char *path, wl_calib_set **out, wl_error *err);
void wl_calib_free(wl_calib_set *s);
size_t wl_calib_count(const wl_calib_set *s);
const wl_calib_row *wl_calib_row_at(const wl_calib_set *s, size_t i);
const char *wl_calib_raw(const wl_calib_set *s, size_t i);  /* input line text */
const char *wl_calib_header(const wl_calib_set *s);         /* input header text */

/* A set of rows bound to a GPU: each row's workload is built once (from a
 * trace in traces_dir when one exists, else from the model preset). Rows that
 * cannot be modelled get a reason. */
typedef struct wl_calib_problem wl_calib_problem;

int wl_calib_problem_create(const wl_core_gpu *gpu, const wl_calib_set *set,
                            const char *traces_dir, wl_calib_problem **out, wl_error *err);
void wl_calib_problem_free(wl_calib_problem *p);
/* Row modelled? If not, reason is set. */
int wl_calib_row_ok(const wl_calib_problem *p, size_t row, const char **reason);
/* Whether the row's workload came from a trace. */
int wl_calib_row_traced(const wl_calib_problem *p, size_t row);
/* Replace the GPU (e.g. new coefficients). */
void wl_calib_problem_set_gpu(wl_calib_problem *p, const wl_core_gpu *gpu);
const wl_core_gpu *wl_calib_problem_gpu(const wl_calib_problem *p);
const wl_calib_set *wl_calib_problem_set(const wl_calib_problem *p);
int wl_calib_predict(const wl_calib_problem *p, size_t row, wl_core_result *res);

typedef struct {
    size_t n;                        /* rows scored */
    double mape_time, mape_power, mape_energy; /* percent */
    size_t n_regret;                 /* workloads with >= 5 clocks */
    double worst_regret;             /* percent */
    char worst_regret_workload[128];
    double mean_regret;
} wl_calib_metrics;

/* Scores rows with mask[i] != 0 (NULL: all modelled, usable rows). */
int wl_calib_score(const wl_calib_problem *p, const unsigned char *mask, wl_calib_metrics *m);
/* Per-workload regret callback for reports. */
typedef void (*wl_calib_regret_fn)(void *user, const char *workload, double best_meas_clock,
                                   double pred_best_clock, double regret_pct);
void wl_calib_regrets(const wl_calib_problem *p, const unsigned char *mask,
                      wl_calib_regret_fn fn, void *user);

/* Fits the coefficients to rows with mask[i] != 0, starting from the
 * problem's GPU; writes the fitted GPU to out. */
typedef struct {
    int iterations;
    double cost_initial, cost_final;
    int status; /* GSL status */
} wl_calib_fit_info;

typedef struct {
    double prior_weight; /* pull towards the physical defaults (0: none) */
    double huber_k;      /* robust loss threshold on log ratios (0: plain LS) */
    int irls_rounds;     /* reweighting rounds */
} wl_calib_fit_options;

/* Defaults: prior weight 0.3 (chosen by leave-one-model-out cross-validation),
 * Huber threshold 0.05, 4 rounds. */
void wl_calib_fit_options_default(wl_calib_fit_options *o);

/* opts NULL: defaults. */
int wl_calib_fit(const wl_calib_problem *p, const unsigned char *mask,
                 const wl_calib_fit_options *opts, wl_core_gpu *out, wl_calib_fit_info *info);

/* Workload key "model b8 s128 bf16 eager" of a row. */
void wl_calib_workload_key(const wl_calib_row *r, char *buf, size_t n);

#endif
