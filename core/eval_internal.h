/* Private to core/'s evaluation (eval.c, kpower.c, governor.c) and
 * evaluator.c: the evaluator's state and the evaluation's pieces. */
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
    double gap_w;      /* a host gap's clock power above the idle table (W per GHz
                          at 1 V): c_gap_w less wl_core_gpu_idle_clock_w, >= 0 */
    /* smooth-max ratios below which the smaller term cannot change the sum
     * (see smax), for the exponents p and 2p */
    double tiny_p, tiny_2p;
    int exact_walk; /* the governor walks launch by launch (tests) */
    unsigned long long serial; /* new at each setup (wl_core_targets' key) */
};

#define WL_CORE_TBUF 2048 /* distinct kernels whose times are cached on the stack */

/* Running sums of the kernels' time and energy (see eval.c's eval_core). */
typedef struct {
    double ec_v, em_v, em_0; /* compute and L2 energy without V^a; DRAM energy */
    double busy_us, latency_us, clk_us; /* clk_us: the sum of clock (MHz) x time */
    double cls_v[WL_CLASS_COUNT], cls_0[WL_CLASS_COUNT];
    double ph_v[WL_PHASE_COUNT], ph_0[WL_PHASE_COUNT];
    double ph_busy[WL_PHASE_COUNT], ph_lat[WL_PHASE_COUNT];
    /* idle power is the clock's: a held kernel's idle(x) - idle(f) times
     * its time (J), over the run and per phase */
    double idle_dj, ph_idle_dj[WL_PHASE_COUNT];
} wl_core_i_sums;

/* A distinct kernel's clock under the cap (kpower.c's kernel_target), kept
 * across the evaluations of one run (the average limit's solve) or of a
 * scan over clocks: the clock where its board power meets the cap, found
 * below top (0: not yet), and its time there. */
typedef struct {
    double top, r, t_r;
} wl_core_i_target;
struct wl_core_targets {
    /* what the kept targets are for: the evaluator (its serial), the cap
     * and the op's voltage */
    unsigned long long serial;
    double cap, voltage_mv, voltage_offset_mv;
    wl_core_i_target k[WL_CORE_TBUF];
};

/* kpower.c: one distinct kernel's time (us) at f_ghz; the op's voltage
 * (mV) and idle power (W) at a clock; the board's cap for op (W, 0: none);
 * a kernel's dynamic power at clock x (GHz) taking t us, without the V^a
 * factor: SMs pc, L2 pm, DRAM p0; the board's power at x_mhz for dynamic
 * power dyn_v (without V^a) and dyn_0; n launches added to the sums (nv:
 * n times their voltage factor (V(x) / V(f))^a); the same from the
 * kernel's power at x_mhz (add_kernel, vr the factor); a
 * kernel's target clock g under the cap and its time t_g there. */
double wl_core_i_kernel_us(const wl_core_evaluator *ev, const wl_kprep *p, double f_ghz);
/* the same as a cubic in z over clocks 1/(ym + yh z), z in [-1, 1] (t[4]);
 * 0 where it cannot (a kink inside, or a truncation error over 1e-8) */
int wl_core_i_kernel_us_series(const wl_core_evaluator *ev, const wl_kprep *p, double ym, double yh,
                               double *t);
double wl_core_i_op_voltage(const wl_core_gpu *gpu, const wl_core_op *op, double f_mhz);
double wl_core_i_op_idle_w(const wl_core_gpu *gpu, const wl_core_op *op, double f_mhz, double v_mv);
/* idle power measured at the curve's v_tab_mv, at v_mv at the same clock: x (v / v_tab)^2 */
double wl_core_i_idle_off_curve(double idle_tab_w, double v_mv, double v_tab_mv);
double wl_core_i_op_cap_w(const wl_core_gpu *gpu, const wl_core_op *op);
void wl_core_i_kernel_power(const wl_core_evaluator *ev, const wl_kprep *p, double x, double t,
                            double *pc, double *pm, double *p0);
double wl_core_i_board_w(const wl_core_evaluator *ev, const wl_core_op *op, double x_mhz,
                         double dyn_v, double dyn_0);
void wl_core_i_add_parts(const wl_kprep *p, double t, double x_mhz, double n, double nv,
                         double pc, double pm, double p0, wl_core_i_sums *s, wl_core_result *r);
void wl_core_i_add_kernel(const wl_core_evaluator *ev, const wl_kprep *p, double t, double x_mhz,
                          double n, double vr, wl_core_i_sums *s, wl_core_result *r);
void wl_core_i_kernel_target(const wl_core_evaluator *ev, const wl_core_op *op,
                             const wl_kprep *p, double f_mhz, double t_f, double p_f, double cap,
                             wl_core_i_target *slot, double *g, double *t_g);

/* What a run's timeline starts from (eval.c, after its per-kernel sums at
 * the request): the request and cap; V(f)^a and idle(f); the host's issue
 * time per kernel and all its time to come; whether some kernel is held;
 * per distinct kernel (u < WL_CORE_TBUF) its time at the request, target
 * clock and time there. */
typedef struct {
    double f_mhz, cap, va_f, idle_f, host_left;
    double h_ph[WL_PHASE_COUNT], h_drv; /* a kernel by its phase, a library's second one */
    int held;
    const double *tbuf, *gbuf, *tgbuf;
} wl_core_i_walk_in;

/* governor.c: the run's timeline, the host issuing and the GPU running
 * each launch; returns the run's end (us) and each phase's share of it
 * (ph_time). With some kernel held, every launch has the governor's clock
 * and s, r's class times and kx, kt (each distinct kernel's time-weighted
 * clock and time, or NULL) are summed again along the walk. */
double wl_core_i_timeline(const wl_core_evaluator *ev, const wl_core_op *op,
                          const wl_core_i_walk_in *in, wl_core_i_sums *s, wl_core_result *r,
                          double *kx, double *kt, double *ph_time);

/* eval.c: one evaluation at f_mhz without the average-power limit (kx,
 * kt: each distinct kernel's time-weighted clock and time, or NULL); the
 * clock at which a run's average meets the cap. */
void wl_core_i_eval_core(const wl_core_evaluator *ev, double f_mhz, const wl_core_op *op,
                         wl_core_result *r, double *kx, double *kt);
/* ... with the kernels' targets kept in kept (NULL: none) */
void wl_core_i_eval_kept(const wl_core_evaluator *ev, double f_mhz, const wl_core_op *op,
                         wl_core_targets *kept, wl_core_result *r);
void wl_core_i_solve_cap(const wl_core_evaluator *ev, const wl_core_op *op, double f, double cap,
                         const wl_core_result *at_f, wl_core_result *res);

#endif
