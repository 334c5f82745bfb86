/* Measurements, prediction of measured rows, accuracy metrics and fitting of
 * the per-GPU coefficients (GSL nonlinear least squares). */
#ifndef WATTLAS_CALIB_H
#define WATTLAS_CALIB_H

#include <stdio.h>
#include "../core/wattlas_core.h"
#include "../results/wattlas_results.h"

/* One measured row, schema of shared/data/measurements. */
typedef struct {
    char gpu[64], model[64], dtype[16], mode[16], attention[16];
    long long batch, seq; /* seq 0: not applicable (vision) */
    /* energy_j and power_w are NaN in a time-only row (both cells empty:
     * launch overhead timed without a power counter); such a row is fitted
     * and scored on its time alone */
    double sm_clock_mhz, measured_clock_mhz, time_ms, energy_j, power_w, temp_c;
    /* optional columns, as measure writes them (empty or absent: the default
     * of 'wattlas predict'): the board power limit the row ran under (NaN:
     * the GPU's); a train row's optimizer and master_dtype; a decode row's
     * gen_tokens (0: not given) and launch */
    double power_limit_w;
    long long gen_tokens;
    char optimizer[16], master_dtype[16], launch[16];
    /* the software it ran on (stack: hf5 or hf4, impl: hf-eager or fused).
     * A row that does not say is hf5 (today's stack), except a row in
     * EnergAIzer's 13-column schema (no column of the measurement
     * harness's: power_limit_w, gen_tokens, optimizer, master_dtype,
     * launch, repeats, throttle_reasons) that is of EnergAIzer's kind: an
     * A100 row, or a whole model (a built-in model preset) with its power
     * on any GPU (EnergAIzer's H100 rows). EnergAIzer's artifact ran
     * transformers 4.x; the 13-column files ../shared/data measured on
     * PyTorch 2.11 are time-only host rows and one-kernel databases. */
    char stack[16], impl[16];
    /* what was timed: "" or model (the whole pass), layer (one block called
     * on its own, as 'measure models --scope layer' times it) or
     * layer-in-model (wl_core_build_scope) */
    char scope[16];
    /* time_relative = 1: time_ms says only how time changes between the
     * rows of one workload (its work is not stated, as in Perseus's stage
     * profiles): each such workload's predicted times and energies are
     * scaled by the factor that fits its rows best (the geometric mean of
     * measured over predicted time), and its power stands as measured */
    int time_relative;
    int line;
} wl_calib_row;

/* Whether the row measured power (and so energy), not time alone. */
int wl_calib_row_has_power(const wl_calib_row *r);

typedef struct wl_calib_set wl_calib_set;

/* Reads a measurements CSV. Every number is checked (finite, within what
 * an instrument could report); errors name the file, line and column. */
int wl_calib_load(const char *path, wl_calib_set **out, wl_error *err);
int wl_calib_load_mem(const char *data, size_t len, const char *source, wl_calib_set **out,
                      wl_error *err);
void wl_calib_free(wl_calib_set *s);
size_t wl_calib_count(const wl_calib_set *s);
const wl_calib_row *wl_calib_row_at(const wl_calib_set *s, size_t i);
const char *wl_calib_header(const wl_calib_set *s);         /* input header text */
const char *wl_calib_source(const wl_calib_set *s);         /* the file it was read from */
size_t wl_calib_ncols(const wl_calib_set *s);
const char *wl_calib_col(const wl_calib_set *s, size_t i);
/* A row's input fields (wl_calib_ncols of them). */
size_t wl_calib_fields(const wl_calib_set *s, size_t row, const char **fields);
/* Traces consulted only for rows the native builders cannot build (a model
 * without a builder, or an fp32 row with only a bf16/fp16 trace); NULL or
 * "" for none. WL_ENOMEM when the name cannot be kept. */
int wl_calib_set_fallback_traces(wl_calib_set *s, const char *dir);
const char *wl_calib_fallback_traces(const wl_calib_set *s);

/* A set of rows bound to a GPU: each row's workload is built once (from a
 * trace in traces_dir when one exists, else from the model preset). Rows that
 * cannot be modelled get a reason. */
typedef struct wl_calib_problem wl_calib_problem;

int wl_calib_problem_create(const wl_core_gpu *gpu, const wl_calib_set *set,
                            const char *traces_dir, wl_calib_problem **out, wl_error *err);
void wl_calib_problem_free(wl_calib_problem *p);
/* Row modelled? If not, reason is set. */
int wl_calib_row_ok(const wl_calib_problem *p, size_t row, const char **reason);
/* Row modelled and its measurement physically possible (positive, not below
 * idle power, power consistent with energy/time, clock not above the
 * request)? If not, why is set. Only such rows are fitted and scored. */
int wl_calib_row_scored(const wl_calib_problem *p, size_t row, const char **why);
/* Whether the row's workload came from a trace. */
int wl_calib_row_traced(const wl_calib_problem *p, size_t row);
/* Whether the row's workload is repeated back to back (a one-kernel trace:
 * a bare op in a loop, wl_core_workload_set_repeated). */
int wl_calib_row_repeated(const wl_calib_problem *p, size_t row);
/* The phases a row's workload runs, 1 << WL_PHASE_x for each (a training
 * step has WL_PHASE_BACKWARD, its optimizer WL_PHASE_OPTIMIZER, a
 * generation WL_PHASE_DECODE); 0 for a row with no workload. */
unsigned wl_calib_row_phases(const wl_calib_problem *p, size_t row);
/* Replace the GPU (e.g. new coefficients). */
void wl_calib_problem_set_gpu(wl_calib_problem *p, const wl_core_gpu *gpu);
const wl_core_gpu *wl_calib_problem_gpu(const wl_calib_problem *p);
const wl_calib_set *wl_calib_problem_set(const wl_calib_problem *p);
int wl_calib_predict(const wl_calib_problem *p, size_t row, wl_core_result *res);

typedef struct {
    size_t n;                        /* rows scored */
    size_t n_power;                  /* of them, rows with power (not time only) */
    double mape_time, mape_power, mape_energy; /* percent; power and energy over
                                                  the n_power rows */
    size_t n_regret;                 /* workloads with >= 5 operating points */
    double worst_regret;             /* percent */
    char worst_regret_workload[128];
    double mean_regret;
    size_t n_stalled;                /* rows the regret leaves out as host stalls */
    /* cross-validation: the folds whose refit failed (their rows are not
     * in n), the rows they held, and the first one's reason */
    int n_failed_folds, first_failed_fold;
    size_t n_failed_rows;
    char failed_why[200];
} wl_calib_metrics;

/* "time T%  power P%  energy E%" for n rows scored, np of them with power:
 * with time-only rows among them, power and energy say over how many rows
 * they are; with none, only time is given. */
void wl_calib_mape_text(char *buf, size_t len, size_t n, size_t np, double mape_time,
                        double mape_power, double mape_energy);

/* Scores rows with mask[i] != 0 (NULL: all modelled, usable rows). */
int wl_calib_score(const wl_calib_problem *p, const unsigned char *mask, wl_calib_metrics *m);
/* Per-workload regret callback for reports. A workload's operating points
 * are its rows, at locked clocks and under power limits alike (the settings
 * a user chooses among): best_meas is the row measured cheapest in energy,
 * best_pred the row predicted cheapest (wl_calib_point_text names either).
 * Rows wl_calib_stalled_rows calls host stalls take no part. */
typedef void (*wl_calib_regret_fn)(void *user, const char *workload, const wl_calib_row *best_meas,
                                   const wl_calib_row *best_pred, double regret_pct);
void wl_calib_regrets(const wl_calib_problem *p, const unsigned char *mask,
                      wl_calib_regret_fn fn, void *user);
/* stalled[i] (p's row count of bytes) = 1 where row i is measured over 10%
 * slower than a lower clock of its workload among the rows mask scores (no
 * power limit on either): a host stall, not the GPU at its clock. */
int wl_calib_stalled_rows(const wl_calib_problem *p, const unsigned char *mask,
                          unsigned char *stalled);
/* A row's operating point: "1290 MHz", or "400 W" for a row under a power limit. */
void wl_calib_point_text(const wl_calib_row *r, char *buf, size_t len);

/* Uncertainty of fitted coefficients: covariance in the fit's internal
 * scale (log for positive coefficients, logit for bounded ones) and the
 * spread of the residual ln(pred/meas), for prediction intervals. */
#define WL_CALIB_MAXP 40
/* How far another board of the same product, and another host, may sit
 * from the one a preset was fitted on: standard deviations of ln factors
 * (wl_calib_board_spread_class gives the spread of the boards measured so
 * far, and says where each figure comes from). A prediction interval for a
 * board nobody measured adds them; one for the board the preset was
 * calibrated on does not (all zero). */
typedef struct {
    double dyn_power_sd; /* the dynamic power at a clock (binning, voltage) */
    double setpoint_sd;  /* the power at which the controller holds a
                            throttled kernel (power_cap_frac) */
    double host_sd;      /* the host's issue cost per kernel */
} wl_calib_board_spread;
/* Where a run's time goes, for its residual: a kernel class on tensor cores
 * (2 cls + 1), on CUDA cores (2 cls), or waiting on the host (the last). A
 * result's largest share is its bucket; its shares weigh the buckets'
 * residuals in wl_calib_interval. Names: "gemm_tc", "gemm", ..., "host". */
#define WL_CALIB_NBUCKETS (2 * WL_CLASS_COUNT + 1)
int wl_calib_time_bucket(const wl_core_result *r);
void wl_calib_time_shares(const wl_core_result *r, double share[WL_CALIB_NBUCKETS]);
const char *wl_calib_bucket_name(int b, char *buf, size_t n);
/* The spread between the boards and hosts measured for this project. */
wl_calib_board_spread wl_calib_board_spread_class(void);

typedef struct {
    int np;
    char names[WL_CALIB_MAXP][32];
    double x[WL_CALIB_MAXP];
    double cov[WL_CALIB_MAXP * WL_CALIB_MAXP]; /* np x np, row-major */
    double sigma_time, sigma_power, sigma_energy;
    /* the time residual of the rows whose time goes mostly to one bucket
     * (wl_calib_time_bucket; 0: too few rows, sigma_time stands) */
    double sigma_time_bucket[WL_CALIB_NBUCKETS];
    /* the fitted fp8/bf16 tensor-core cycle ratio and its standard error
     * ([calibration] tc_fp8_power_ratio, stderr_tc_fp8_power_ratio; 0: none
     * fitted), outside the covariance: its own fit (calib/tc_ratio.c) */
    double tc_fp8_ratio, tc_fp8_stderr;
    int valid;
    wl_calib_board_spread board; /* wl_calib_uncertainty_load: the class's;
                                    parse: none */
    char data_hash[40];          /* [calibration] data_hash of the rows the
                                    preset was fitted on ("fnv1a64:..."; "":
                                    not stated) */
} wl_calib_uncertainty;

/* Whether the preset behind u was fitted on exactly this measurements
 * file (its data_hash is the file's): then the rows come from the board it
 * carries. */
int wl_calib_fitted_on(const wl_calib_uncertainty *u, const char *data_path);

/* Fitted coefficients, in the order of wl_calib_param_name. */
int wl_calib_param_count(void);
const char *wl_calib_param_name(int i);
/* Index of a coefficient by name, or -1. */
int wl_calib_param_index(const char *name);
/* Standard errors of the coefficients themselves (delta method). */
void wl_calib_stderr(const wl_calib_uncertainty *u, double *se);

/* An informational "key = value" line, wrapped onto indented continuation
 * lines so that no line exceeds what the preset reader takes (value NULL:
 * empty). */
void wl_calib_write_info(FILE *f, const char *key, const char *value);

/* [covariance] section of a calibrated preset. */
void wl_calib_uncertainty_write(FILE *f, const wl_calib_uncertainty *u);
/* Reads it from preset text; WL_ENOTFOUND when the preset has none. */
int wl_calib_uncertainty_parse(const char *text, const char *source, wl_calib_uncertainty *u,
                               wl_error *err);
/* From a built-in preset id or a preset file, with the class's board
 * spread (u->board; zero it for the board the preset was fitted on). */
int wl_calib_uncertainty_load(const char *gpu_id_or_path, wl_calib_uncertainty *u,
                              wl_error *err);

/* Prediction and confidence intervals at a level (e.g. 0.95), from the
 * coefficient covariance by first-order propagation of ln time, ln power and
 * ln energy; the prediction interval adds the residual spread and, where
 * u->board is not zero, the board-to-board spread (each factor's effect at
 * one standard deviation either way, the larger taken: the throttle and the
 * host bound are one-sided). The evaluator is re-pointed at perturbed
 * coefficients and restored. */
typedef struct {
    double time_lo_ms, time_hi_ms, power_lo_w, power_hi_w, energy_lo_j, energy_hi_j;
    double conf_time_lo_ms, conf_time_hi_ms, conf_power_lo_w, conf_power_hi_w;
    double conf_energy_lo_j, conf_energy_hi_j;
} wl_calib_iv;
int wl_calib_interval(wl_core_evaluator *ev, const wl_core_gpu *gpu,
                      const wl_calib_uncertainty *u, const wl_core_op *op, double level,
                      const wl_core_result *center, wl_calib_iv *iv);

/* The interval for a measured row (its workload's evaluator). */
int wl_calib_row_interval(wl_calib_problem *p, size_t row, const wl_calib_uncertainty *u,
                          double level, const wl_core_result *center, wl_calib_iv *iv);

/* Fits the coefficients to rows with mask[i] != 0, starting from the
 * problem's GPU; writes the fitted GPU to out. */
typedef struct {
    int iterations;
    double cost_initial, cost_final;
    int status; /* GSL status */
    char message[200]; /* why the fit was refused or failed */
    wl_calib_uncertainty unc;
    unsigned long long fitted; /* the coefficients fitted (bit i:
                                  wl_calib_param_name(i)): free_mask less those
                                  the rows cannot move (the bare-op issue cost
                                  without a repeated row, the model issue cost
                                  without another), or auto_select's choice */
    /* auto_select: the coefficients fitted (bit i: wl_calib_param_name(i)),
     * most informed first, with the information the rows carry on each
     * alone (1 = as much as the prior's) */
    unsigned long long identified;
    int n_chosen;
    int chosen[WL_CALIB_MAXP];
    double gain[WL_CALIB_MAXP];
} wl_calib_fit_info;

typedef struct {
    double prior_weight; /* pull towards the physical defaults (0: none) */
    double huber_k;      /* robust loss threshold on log ratios (0: plain LS) */
    int irls_rounds;     /* reweighting rounds */
    int from_defaults;   /* start from the physical defaults, not from the
                            problem's GPU: results then never depend on an
                            earlier calibration (held-out fits stay honest) */
    unsigned long long free_mask; /* bit i: coefficient i (wl_calib_param_name)
                                     is fitted, the others stay at the problem
                                     GPU's values; 0: all are fitted */
    int prior_at_start;  /* centre the prior on the problem GPU's values (a
                            transfer or an earlier fit) instead of the
                            physical defaults */
    /* Few-shot (a handful of rows of a GPU whose coefficients are a
     * transfer): the problem GPU's coefficients are the prior, each with a
     * standard deviation of transfer_rel of its value (plus prior_unc's
     * variance, the source calibration's, when given); rows count with the
     * residual spread sigma_time, sigma_power (prior_unc's when given). Only
     * the coefficients among free_mask (0: all) that the rows identify are
     * fitted: those on which the rows carry at least the prior's Fisher
     * information (alone they would halve its variance), jointly by MAP with
     * the prior, so coefficients the rows see only together share what the
     * rows say and their covariance shows it. The others stay exactly at
     * the prior and keep its variance in the covariance. No Huber rounds, no
     * minimum row or clock count; the noise is taken as known (no s^2 from
     * few degrees of freedom). */
    int auto_select;
    double transfer_rel;              /* default 0.3 */
    double sigma_time, sigma_power;   /* default 0.06, 0.045 */
    const wl_calib_uncertainty *prior_unc; /* may be NULL */
    /* 1: a refit whose coefficients only score held-out rows
     * (wl_calib_crossval's, learn's folds), 2-5x faster: the evaluators
     * walk the power governor by each kernel's band of clocks (within 1e-6
     * of launch by launch) and the fit stops once a step moves no
     * coefficient's log or logit by more than 1e-4 of it (1e-8 otherwise),
     * a tenth or less of the smallest standard error of the A100 fit's
     * coefficients (power_cap_frac's, 0.5%). On the A100 DVFS rows the
     * held-out MAPE agrees with the full fit's to the printed 0.01 point.
     * 0 (default): launch by launch and 1e-8, for coefficients kept. */
    int scoring;
    /* wl_calib_crossval calls it after each fold (NULL: none) */
    void (*fold_done)(void *user);
    void *fold_user;
} wl_calib_fit_options;

/* Defaults: prior weight 0.3 (chosen by leave-one-model-out cross-validation),
 * Huber threshold 0.05, 4 rounds, start from the physical defaults. */
void wl_calib_fit_options_default(wl_calib_fit_options *o);

/* opts NULL: defaults. */
int wl_calib_fit(const wl_calib_problem *p, const unsigned char *mask,
                 const wl_calib_fit_options *opts, wl_core_gpu *out, wl_calib_fit_info *info);

/* Cross-validation: fold[i] in [0, nfolds) holds row i out in that fold;
 * -1 keeps it in every training set; -2 leaves it out of everything. Each fold is fitted on the other rows
 * (from the problem's GPU, as scoring refits) and scored on its own; pooled gets the held-out
 * metrics over all folds (MAPE weighted by rows, worst and mean regret over
 * the folds' workloads), per_fold (nfolds entries, may be NULL) each fold's.
 * A fold whose training set is too small is skipped (its n stays 0). */
int wl_calib_crossval(const wl_calib_problem *p, const int *fold, int nfolds,
                      const wl_calib_fit_options *opts, wl_calib_metrics *pooled,
                      wl_calib_metrics *per_fold);
/* Folds: one per model (leave-one-model-out), or K folds of whole workloads
 * (all clocks of a workload stay together), assigned round-robin in order
 * of first appearance. Fill fold (one per row); return the number of folds;
 * names (may be NULL) gets each fold's model for by-model folds. */
int wl_calib_folds_by_model(const wl_calib_problem *p, int *fold, char names[][64], int max);
int wl_calib_folds_kfold(const wl_calib_problem *p, int k, int *fold);

/* Per-workload residuals of the scored rows with mask[i] != 0. */
typedef struct {
    char key[160];
    size_t n, n_power;                          /* rows; of them with power */
    double mape_time, mape_power, mape_energy;  /* percent (power, energy: n_power rows) */
    double bias_time, bias_power, bias_energy;  /* mean signed error, percent */
} wl_calib_wl_stats;
typedef void (*wl_calib_wl_fn)(void *user, const wl_calib_wl_stats *s);
void wl_calib_per_workload(const wl_calib_problem *p, const unsigned char *mask,
                           wl_calib_wl_fn fn, void *user);

/* ---- validation of a measurements file ------------------------------------- */

/* The board that measured the rows: the preset's own when it was fitted
 * on this very file (AUTO), or as the user says. */
enum { WL_CALIB_BOARD_AUTO = 0, WL_CALIB_BOARD_SAME = 1, WL_CALIB_BOARD_OTHER = 2 };

typedef struct {
    const char *traces_dir;         /* predict rows from traces there when one exists */
    const char *gpu;                /* only this GPU's rows, on this preset (NULL: each
                                       GPU named in the rows on its own preset) */
    const char *host;               /* host preset for every GPU (NULL: each preset's) */
    const char *const *idle_specs;  /* [ID=]TABLE.csv measured idle tables */
    size_t n_idle;
    int beside;                     /* look beside DATA/measurements/X.csv: DATA/traces
                                       for rows no builder covers, DATA/gpu-tables/
                                       <id>-idle.csv for rule-based idle curves */
    double level;                   /* prediction intervals (0: none) */
    int board;                      /* whose board the rows are (WL_CALIB_BOARD_*):
                                       the intervals add the spread between
                                       boards unless it is the preset's own */
    void (*note)(void *user, const char *text); /* what was found beside, tables used */
    void *note_user;
} wl_calib_validation_options;

typedef struct wl_calib_validation wl_calib_validation;
int wl_calib_validation_create(const char *path, const wl_calib_validation_options *o,
                               wl_calib_validation **out, wl_error *err);
void wl_calib_validation_free(wl_calib_validation *v);
const wl_calib_set *wl_calib_validation_set(const wl_calib_validation *v);
size_t wl_calib_validation_gpus(const wl_calib_validation *v);
const wl_core_gpu *wl_calib_validation_gpu(const wl_calib_validation *v, size_t k);
wl_calib_problem *wl_calib_validation_problem(wl_calib_validation *v, size_t k);
/* The output columns: the input's, then predicted_effective_clock_mhz,
 * predicted_time_ms, predicted_power_w, predicted_energy_j (and the
 * interval bounds predicted_*_lo/hi with a level). */
const wl_results_col *wl_calib_validation_cols(const wl_calib_validation *v, size_t *n);
/* Row i as cells: WL_OK when predicted (*why says why it is not scored, or
 * NULL), WL_ENOTFOUND when it cannot be modelled (*why says why; the
 * prediction cells are empty). Rows are taken in order, once each. */
int wl_calib_validation_row(wl_calib_validation *v, size_t i, wl_results_cell *cells,
                            const char **why);
/* Row i's analytical prediction on its GPU (*gpu), without counting it:
 * WL_ENOTFOUND when it cannot be modelled; *scored as wl_calib_row_scored. */
int wl_calib_validation_predict(wl_calib_validation *v, size_t i, const wl_core_gpu **gpu,
                                wl_core_result *res, int *scored);
typedef struct {
    size_t scored, not_modelled, traced, covered;
    size_t scored_power;                      /* of the scored, rows with power */
    double mape_time, mape_power, mape_energy; /* pooled over GPUs, by rows (power
                                                  and energy: rows with power) */
    double coverage_pct[3];                   /* time, power, energy */
} wl_calib_validation_summary;
/* After the rows: the pooled figures. */
void wl_calib_validation_counts(const wl_calib_validation *v, wl_calib_validation_summary *s);

/* ---- the V-f curve from a board's rows (vf.c) --------------------------------- */

#define WL_CALIB_VF_PTS 32
/* The voltage the compute-bound rows of a kernel database imply (GEMMs the
 * clock paces and no limit holds): at each measured clock, the median over
 * those kernels of y(f) / y(floor), y = (P - P_idle(f) - P_leak) / f, made
 * non-decreasing, and V = floor_mv sqrt(ratio) (CV^2f), each point at its
 * loaded clock (f + vf_temp_mhz_per_c dT). */
typedef struct {
    int n;                                  /* measured clocks, rising */
    double clock_mhz[WL_CALIB_VF_PTS];      /* as requested */
    double load_clock_mhz[WL_CALIB_VF_PTS]; /* where the model reads the curve under load */
    double ratio[WL_CALIB_VF_PTS];          /* y(f) / y(floor), >= 1 */
    double voltage_mv[WL_CALIB_VF_PTS];
    double floor_mv;                        /* the rule's vmin_mv */
    int kernels, rows;                      /* what it was derived from */
    char names[512];                        /* those kernels, "model dtype, ..." */
} wl_calib_vf_derived;
/* From the rows of mask (NULL: all) scored on p, whose GPU gpu gives the
 * idle table, the leakage and the temperature rule: WL_OK, or WL_ENOTFOUND
 * when no workload qualifies at three clocks or more. */
int wl_calib_vf_derive(const wl_calib_problem *p, const wl_calib_set *set,
                       const unsigned char *mask, const wl_core_gpu *gpu, wl_calib_vf_derived *d);
/* The derived curve onto gpu's [vf] knots (the idle table's clocks); the
 * voltage is then a table, not the rule. */
void wl_calib_vf_apply(const wl_calib_vf_derived *d, wl_core_gpu *gpu);
/* The preset's [vf] for gpu (its table after wl_calib_vf_apply), with the
 * derivation, its rows and the command above it, and the idle table's own
 * note (idle_note, or the comment lines of preset_text's [vf] that are not
 * about the voltage): malloc'd, NULL when out of memory. */
char *wl_calib_vf_text(const wl_core_gpu *gpu, const wl_calib_vf_derived *d, const char *preset_text,
                       const char *idle_note, const char *data_path, const char *command);

/* ---- calibrated presets -------------------------------------------------------- */

/* A [vf] section from a measured idle table (60 MHz knots, as
 * wl_preset_gpu_idle_table smooths it), keeping the GPU's leakage
 * reference voltage, and its V-f curve where the table has no voltage
 * column (NVML reads none): malloc'd text in *out. */
int wl_calib_vf_section(const char *idle_path, const wl_core_gpu *gpu, char **out, wl_error *err);
typedef struct {
    const char *preset_text; /* the GPU preset as given */
    const char *vf_text;     /* a [vf] section replacing the preset's, or NULL */
    const char *data_path;   /* the measurements (fingerprinted) */
    const char *command;     /* the command that made it */
    size_t fitted_rows;
    const wl_calib_metrics *in_sample;
    const char *few_shot;    /* what a few-shot fit moved and kept, or NULL */
    const char *kept;        /* the coefficients a partial fit kept, and whence, or NULL */
    const char *held_out;    /* --holdout's list, or NULL */
    size_t held_out_rows;
    const wl_calib_metrics *held_out_metrics; /* their scores, or NULL */
    double tc_fp8_stderr_rel; /* the fp8 cycle ratio's error over the ratio, from
                                 the input preset or its transfer's source (0: none) */
} wl_calib_preset_info;
/* The preset's text without the sections calibration rewrites (and without
 * its [gpu] host key when the fitted GPU owns its issue cost: host_id ""),
 * then [calibration] with the fitted values, their standard errors, the rows, the
 * data's fingerprint and the command, and [covariance]. */
void wl_calib_write_preset(FILE *f, const wl_core_gpu *fitted, const wl_calib_fit_info *info,
                           const wl_calib_preset_info *pi);
/* The spec-sheet part of a preset text with vf_text (may be NULL) in place
 * of its [vf] section, for checking that it parses. */
char *wl_calib_preset_spec(const char *preset_text, const char *vf_text);

/* Workload key "model b8 s128 bf16 eager" of a row. */
void wl_calib_workload_key(const wl_calib_row *r, char *buf, size_t n);

/* ---- a board's fp8 tensor-core cycle (calib/tc_ratio.c) -------------------- */

/* tc_fp8_power_ratio from pairs of a bf16 and an fp8 GEMM of one shape run on
 * one board under one power limit (dtype,m,n,k,measured_clock_mhz,time_ms,
 * power_w,throttle_reasons; data/h100-serve-2026-11/fp8-gemm.csv): each
 * pair's ratio at which the model's powers at the measured clocks compare as
 * the measured ones; every second pair held out. */
typedef struct {
    double ratio, stderr_ratio;
    double rule;                  /* core/tech.c's rule on this GPU */
    size_t rows, fitted, held;    /* rows read; pairs fitted, held out */
    double fit_mape, held_mape;   /* |model / measured power ratio - 1|, % */
    char held_out[512];           /* the held-out shapes, MxNxK,... */
} wl_calib_tc_ratio;
int wl_calib_tc_ratio_fit(const wl_core_gpu *gpu, const char *path, wl_calib_tc_ratio *out,
                          wl_error *err);

/* ---- a whole calibration ---------------------------------------------------- */

/* 'wattlas calibrate' as one call (the command line and Python share it). */
typedef struct {
    const char *path;     /* the measurements CSV */
    const char *gpu;      /* GPU preset id or INI file */
    const char *host;     /* host preset the rows ran on (NULL: the preset's) */
    const char *idle;     /* a measured idle table for the [vf] section (NULL: none) */
    const char *traces;   /* kernel traces for rows no builder covers (NULL: none) */
    const char *holdout;  /* models kept out of the fit and scored alone (comma list,
                             or every:K: every K-th model name in sorted order) */
    const char *fit;      /* gpu, host, gpu,host, auto or coefficient names; NULL: the
                             GPU's coefficients, or auto when they are a transfer */
    const char *out;      /* the fitted GPU preset (the host preset for fit = host) */
    const char *host_out; /* the fitted host preset (fit gpu,host or auto) */
    const char *command;  /* recorded in the presets (may be NULL) */
    int kfold;            /* k-fold cross-validation by workload (0: none) */
    int lomo;             /* leave-one-model-out cross-validation */
    int quiet;            /* leave out per-row exclusions and per-workload residuals */
    int vf_keep;          /* keep the preset's voltage; 0: a voltage that is the rule, or
                             was derived from rows before, is derived from these rows'
                             compute-bound kernels where they have them (calib/vf.c) */
    wl_calib_fit_options fit_options; /* fold_done is the run's own */
    void (*say)(void *user, const char *line); /* the report, a line at a time */
    /* after each fit: the main fit and each cross-validation fold's */
    void (*progress)(void *user, unsigned long long done, unsigned long long total);
    void *user;
} wl_calib_run_options;
void wl_calib_run_options_default(wl_calib_run_options *o);

typedef struct {
    size_t rows, excluded, used, held;   /* rows read, not scored, fitted, held out */
    wl_calib_metrics before, after;      /* in-sample, the GPU as given and fitted */
    wl_calib_metrics held_out, kfold, lomo;
    int has_held_out, kfold_folds, lomo_folds; /* which of those were computed */
    wl_calib_fit_info info;
    wl_core_gpu gpu, fitted;             /* before and after */
    double stderr_of[WL_CALIB_MAXP];     /* standard errors (wl_calib_param_name order) */
    int few_shot, host_fitted;
    const char *gpu_written, *host_written; /* paths written (NULL: none) */
} wl_calib_run_result;
/* Errors name the option as source ("--fit", "--holdout") for bad options,
 * else the file and line. */
int wl_calib_run(const wl_calib_run_options *o, wl_calib_run_result *r, wl_error *err);

#endif
