/* Learned predictors over measurements: a purely data-driven model of time,
 * power and energy (random forest or gradient-boosted trees), or a hybrid
 * that learns the log ratio of measurement to the analytical prediction and
 * multiplies the prediction by it. Training goes through XGBoost's C API
 * (Debian's libxgboost-dev); the trees are kept in wattlas's own model file
 * and evaluated here, without allocation, identically on any thread. */
#ifndef WATTLAS_LEARN_H
#define WATTLAS_LEARN_H

#include "../core/wattlas_core.h"
#include "../calib/wattlas_calib.h"

/* The features, in this order; a plain model uses the first
 * WL_LEARN_PLAIN_FEATURES, a hybrid all of them. */
enum {
    WL_LF_SMS = 0, WL_LF_PEAK_TFLOPS, WL_LF_DRAM_GBS, WL_LF_TDP_W, WL_LF_L2_MB,
    WL_LF_LAYERS, WL_LF_D_MODEL, WL_LF_HEADS, WL_LF_D_FF,
    WL_LF_BATCH, WL_LF_SEQ, WL_LF_DTYPE_BYTES, WL_LF_MODE, WL_LF_FLASH,
    WL_LF_CLOCK_MHZ, WL_LF_VOLTAGE_MV,
    WL_LEARN_PLAIN_FEATURES,
    WL_LF_LOG_TIME = WL_LEARN_PLAIN_FEATURES, WL_LF_COMPUTE_SHARE, WL_LF_MEMORY_SHARE,
    WL_LF_LAUNCH_SHARE, WL_LF_THROTTLED, WL_LF_CLOCK_RATIO,
    WL_LEARN_FEATURES
};
const char *wl_learn_feature_name(int f);

/* One case's features: the GPU, the model (NULL for a trace: its shape is
 * unknown, 0), the shape and operating point, and the analytical prediction
 * at it (for the voltage and, in a hybrid, the prediction's parts). */
typedef struct {
    long long batch, seq;
    wl_dtype dtype;
    wl_mode mode;
    wl_attention attention;
    double sm_clock_mhz;
} wl_learn_case;
void wl_learn_features(const wl_core_gpu *g, const wl_core_model *m, const wl_learn_case *c,
                       const wl_core_result *pred, double *x /* WL_LEARN_FEATURES */);

typedef enum { WL_LEARN_RF = 0, WL_LEARN_GBT } wl_learn_kind;
const char *wl_learn_kind_name(wl_learn_kind k);
int wl_learn_kind_parse(const char *s, wl_learn_kind *out);

/* A trained model (opaque). */
typedef struct wl_learn_model wl_learn_model;
void wl_learn_model_free(wl_learn_model *m);
int wl_learn_model_hybrid(const wl_learn_model *m);
/* What the model does outside its training domain, for warnings: "the
 * hybrid's correction fades to none there" or that a plain model
 * extrapolates. */
const char *wl_learn_outside_note(const wl_learn_model *m);
wl_learn_kind wl_learn_model_kind(const wl_learn_model *m);

/* Training rows: features (n x WL_LEARN_FEATURES) and per row the targets
 * time_ms, power_w, energy_j measured and predicted analytically. */
typedef struct {
    size_t n;
    double *x;
    double *meas; /* n x 3 */
    double *pred; /* n x 3 */
    char **workload; /* n: model/batch/seq/dtype/mode, for folds */
    char **model;    /* n: the model, for leave-one-model-out */
    char fingerprint[64]; /* "fnv1a64:..." of the measurements file */
    /* kept for refits: the validation, each row's source row, case, GPU
     * (index of the validation's) and model preset (-1: none, a trace) */
    wl_calib_validation *v;
    size_t *src;
    wl_learn_case *cases;
    int *gpu, *model_index;
    wl_core_model *models;
    size_t nmodels;
} wl_learn_data;
void wl_learn_data_free(wl_learn_data *d);
/* The scored rows of a measurements file, each predicted on its own GPU's
 * preset (as `wattlas validate`), with their features. */
int wl_learn_data_load(const char *path, const wl_calib_validation_options *vo,
                       wl_learn_data *out, wl_error *err);

typedef struct {
    wl_learn_kind kind;
    int hybrid;
    int trees;      /* rf: trees in the forest; gbt: boosting rounds (0: default) */
    int max_depth;  /* 0: default (rf 8, gbt 4; hybrid gbt 3) */
    unsigned seed;
    int threads;    /* XGBoost threads (0: 1, for reproducible files) */
    int no_shrink;  /* hybrid: keep the whole correction (else shrunk per
                       target by cross-validation inside the training rows) */
    int refit;      /* that inner cross-validation refits the analytical
                       coefficients per fold (slow: a fit per fold) */
    void (*fold_done)(void *user); /* wl_learn_crossval: after each fold (NULL: none) */
    void *fold_user;
} wl_learn_options;
void wl_learn_options_default(wl_learn_options *o);

/* Trains on the rows with mask[i] set (NULL: all). */
int wl_learn_train(const wl_learn_data *d, const unsigned char *mask, const wl_learn_options *o,
                   wl_learn_model **out, wl_error *err);

/* The model's output for one case. Plain: out = predicted (time, power,
 * energy); hybrid: out = the correction factors, multiplied into the
 * analytical prediction by wl_learn_apply. *domain gets how far inside the
 * training domain the case is: 1 inside, 0 beyond the fade margin (10% of
 * each feature's range; a hybrid's correction is then exactly 1), between
 * in the margin. No allocation. */
void wl_learn_eval(const wl_learn_model *m, const double *x, double out[3], double *domain);
/* A hybrid's correction applied to a prediction (time, power, energy and
 * the energy parts scaled by the energy factor). */
void wl_learn_apply(const wl_learn_model *m, const double *x, wl_core_result *r, double *domain);

/* A learned model applied to one workload's points: the case (its clock is
 * set per point) and the model's shape (NULL: a trace, whose shape is
 * unknown). */
typedef struct {
    const wl_learn_model *model;
    const wl_core_model *shape;
    wl_learn_case c;
} wl_learn_use;
/* u->model applied to r, the analytical prediction on g at the requested
 * clock mhz; returns how far inside the training domain the point is (as
 * wl_learn_eval's domain). No allocation. */
double wl_learn_use_apply(const wl_learn_use *u, const wl_core_gpu *g, double mhz,
                          wl_core_result *r);

/* The model file: JSON with the features, their domain, the training data's
 * fingerprint, the wattlas version, the options and the trees. */
int wl_learn_model_save(const wl_learn_model *m, const char *path, wl_error *err);
int wl_learn_model_load(const char *path, wl_learn_model **out, wl_error *err);
/* Feature importance: total gain of the splits on each feature, per
 * target, normalised to sum 1 (imp: 3 x WL_LEARN_FEATURES). */
void wl_learn_importance(const wl_learn_model *m, double *imp);
void wl_learn_set_fingerprint(wl_learn_model *m, const char *fp, size_t rows);
/* One line on the model: kind, rows, training data and, for a hybrid, the
 * correction chosen per target ("time none, power x0.982, energy trees at
 * 1/2"). */
void wl_learn_model_describe(const wl_learn_model *m, char *buf, size_t n);

/* Validation with a learned model: row i as wl_calib_validation_row gives
 * it, with the predicted time, power and energy replaced by the learned
 * ones; the tally sums the learned and the analytical errors of the scored
 * rows and counts those outside the training domain. */
typedef struct {
    size_t scored, outside, faded;
    double ape_learned[3], ape_analytical[3];
} wl_learn_tally;
int wl_learn_validation_row(const wl_learn_model *m, wl_calib_validation *v, size_t i,
                            wl_results_cell *cells, const char **why, wl_learn_tally *t);

/* Cross-validation: k folds by workload, one fold per model (leave one
 * model out; k is not used), or k folds of rows drawn at random (seeded by
 * o->seed): a row's workload is then in training at its other clocks, so
 * the split measures interpolation, as the A30 talk's figures do. MAPE per target for the analytical model and the
 * learned one on the same held-out rows. With refit, each fold also refits
 * the analytical model's coefficients without its held-out rows (GPUs
 * calibrated on their own data; a transfer stays), as `validate`'s
 * leave-one-model-out does, and a hybrid learns on those predictions: no
 * held-out row informs either model. */
typedef struct {
    size_t rows;
    int folds;
    double analytical[3], learned[3];
} wl_learn_cv;
typedef enum { WL_LEARN_BY_WORKLOAD = 0, WL_LEARN_BY_MODEL, WL_LEARN_BY_ROW } wl_learn_split;
int wl_learn_crossval(const wl_learn_data *d, const wl_learn_options *o, wl_learn_split by,
                      int k, int refit, wl_learn_cv *out, wl_error *err);
/* The folds wl_learn_crossval makes of d (-1: out of memory). */
int wl_learn_folds(const wl_learn_data *d, const wl_learn_options *o, wl_learn_split by, int k);

/* 'wattlas learn' as one call: cross-validated by workload (and by model,
 * and by rows at random, when asked), then trained on every row and saved
 * to out, its feature importances to importance (a CSV) when given. */
typedef struct {
    const char *path;        /* the measurements CSV */
    const char *out;         /* the model file (JSON) */
    const char *importance;  /* feature importances CSV (NULL: none) */
    wl_learn_options learn;  /* fold_done is the run's own */
    wl_calib_validation_options data; /* which GPU and host the rows are predicted on */
    int kfold;               /* folds by workload (default 4) */
    int lomo, random_split;  /* also leave one model out; also rows at random */
    int no_refit;            /* folds keep the analytical coefficients (faster) */
    void (*say)(void *user, const char *line); /* the report, a line at a time */
    /* after each model trained: every fold's and the final one */
    void (*progress)(void *user, unsigned long long done, unsigned long long total);
    void *user;
} wl_learn_run_options;
void wl_learn_run_options_default(wl_learn_run_options *o);

typedef struct {
    size_t rows;
    wl_learn_cv workload, model, random; /* folds 0: not run */
    char description[400];               /* wl_learn_model_describe of the saved model */
} wl_learn_run_result;
int wl_learn_run(const wl_learn_run_options *o, wl_learn_run_result *r, wl_error *err);

#endif
