/* Private to core/eval.c and core/evaluator.c: the evaluator's state and
 * the evaluation's pieces its setup calls. */
#ifndef WATTLAS_EVAL_INTERNAL_H
#define WATTLAS_EVAL_INTERNAL_H

#include "core_internal.h"

struct wl_core_evaluator {
    wl_core_gpu gpu;
    const wl_core_workload *wl;
    const wl_core_latency_type *lat;
    wl_kprep *prep;  /* one per distinct kernel */
    double *work;    /* 3 per distinct kernel: anchoring's clocks */
    size_t nu;
    size_t after_sync; /* launches from here on have no host sync after them */
    int training;      /* a training step (wl_core_workload_training) */
    /* smooth-max ratios below which the smaller term cannot change the sum
     * (see smax), for the exponents p and 2p */
    double tiny_p, tiny_2p;
};

/* eval.c: one evaluation at f_mhz without the average-power limit (kx,
 * kt: each distinct kernel's time-weighted clock and time, or NULL); the
 * board's cap for op; the clock at which a run's average meets the cap. */
void wl_core_i_eval_core(const wl_core_evaluator *ev, double f_mhz, const wl_core_op *op,
                         wl_core_result *r, double *kx, double *kt);
double wl_core_i_op_cap_w(const wl_core_gpu *gpu, const wl_core_op *op);
void wl_core_i_solve_cap(const wl_core_evaluator *ev, const wl_core_op *op, double f, double cap,
                         const wl_core_result *at_f, wl_core_result *res);

#endif
