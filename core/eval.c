/* Evaluation: timeline of host issue and GPU execution, per-module power,
 * temperature-dependent leakage and the board power limit (the
 * evaluator's setup and profile anchoring: core/evaluator.c). */
#include "eval_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


static void eval_at(const wl_core_evaluator *ev, double f_mhz, const wl_core_op *op,
                    wl_core_result *r);
static void eval_core(const wl_core_evaluator *ev, double f_mhz, const wl_core_op *op,
                      wl_core_result *r, double *kx, double *kt);
static double op_cap_w(const wl_core_gpu *gpu, const wl_core_op *op);
static void solve_cap(const wl_core_evaluator *ev, const wl_core_op *op, double f, double cap,
                      const wl_core_result *at_f, wl_core_result *res);

/* Smooth maximum (a^p + b^p)^(1/p): p -> inf is perfect overlap of memory
 * and compute, p = 1 is none. Computed as m (1 + r^p)^(1/p) with m the
 * larger and r = smaller / m (the larger's own term is exactly 1); when r is
 * below `tiny` the result is m exactly, with no pow at all. */
static double smax(double a, double b, double p, double tiny)
{
    if (a <= 0)
        return b;
    if (b <= 0)
        return a;
    double m = a > b ? a : b;
    double r = (a > b ? b : a) / m;
    if (r < tiny)
        return m;
    return m * pow(1.0 + pow(r, p), 1.0 / p);
}

static double kernel_us(const wl_core_evaluator *ev, const wl_kprep *p, double f_ghz)
{
    const wl_core_gpu *gpu = &ev->gpu;
    if (p->is_gap)
        return 0.0;
    /* the memory path (L2 slices, crossbar) runs on a clock that follows
     * the SM clock down to a floor (l2_clock_min_mhz): on the H100 the
     * memory-bound kernels take the same time at 510 and 630 MHz */
    double fl = fmax(f_ghz, gpu->l2_clock_min_mhz * 1e-3);
    double tc = p->comp_clk / f_ghz * 1e-3;
    double tl = p->l2_clk / fl * 1e-3;
    double td = p->dram_clk / fl * 1e-3 + p->path_us;
    if (td < p->dram_us)
        td = p->dram_us;
    double tm = smax(tl, td, 2.0 * gpu->coef.overlap_p, ev->tiny_2p);
    double t = p->fixed_us + p->fixed_clk / f_ghz * 1e-3 +
               smax(tc, tm, gpu->coef.overlap_p, ev->tiny_p);
    if (p->xfer_fixed_us > 0) {
        double xl = p->xfer_l2_clk / fl * 1e-3;
        double xd = p->xfer_dram_clk / fl * 1e-3 + p->xfer_path_us;
        if (xd < p->xfer_dram_us)
            xd = p->xfer_dram_us;
        t += p->xfer_fixed_us + smax(xl, xd, 2.0 * gpu->coef.overlap_p, ev->tiny_2p);
    }
    return t * p->anchor;
}

double wl_core_evaluator_kernel_us(const wl_core_evaluator *ev, size_t u, double sm_clock_mhz)
{
    if (u >= ev->nu || sm_clock_mhz <= 0)
        return NAN;
    return kernel_us(ev, &ev->prep[u], sm_clock_mhz * 1e-3);
}

static double clamp01(double x) { return x < 0 ? 0 : (x > 1 ? 1 : x); }

static double op_voltage(const wl_core_gpu *gpu, const wl_core_op *op, double f_mhz)
{
    if (op->voltage_mv > 0)
        return op->voltage_mv;
    return wl_core_gpu_voltage_mv(gpu, f_mhz) + op->voltage_offset_mv;
}

/* The power the governor holds the board at: the set limit times the
 * fitted share it actually holds (power_cap_frac: 0.986 on the H100 at
 * 700 W, 0.82 on the H200 of the shared kernel database); 0: no limit. */
static double op_cap_w(const wl_core_gpu *gpu, const wl_core_op *op)
{
    if (op->ignore_power_limit)
        return 0.0;
    return (op->power_limit_w > 0 ? op->power_limit_w : gpu->power_limit_w) *
           gpu->coef.power_cap_frac;
}

/* Idle power at clock f_mhz and voltage v_mv: the idle table holds at the
 * table's voltage; off the curve (fixed voltage or an offset) idle power,
 * mostly leakage and clock power, scales as V^2. */
static double op_idle_w(const wl_core_gpu *gpu, const wl_core_op *op, double f_mhz, double v_mv)
{
    double idle = wl_core_gpu_idle_w(gpu, f_mhz);
    double v_tab = wl_core_gpu_voltage_mv(gpu, f_mhz);
    if ((op->voltage_mv > 0 || op->voltage_offset_mv != 0) && v_tab > 0)
        idle *= (v_mv / v_tab) * (v_mv / v_tab);
    return idle;
}

#define TBUF 2048 /* distinct kernels whose times are cached on the stack */

/* One kernel's dynamic power at clock x (GHz) when it takes t us:
 * P = c * u * V^a * f, without the V^a factor, apart for the SMs (pc), the
 * L2 (pm) and DRAM (p0, at the fixed memory clock: no V^a). SMs are active
 * only after the clock-independent launch latency; that latency is spent
 * like a gap between kernels. */
static void kernel_power(const wl_core_evaluator *ev, const wl_kprep *p, double x, double t,
                         double *pc, double *pm, double *p0)
{
    const wl_core_gpu *gpu = &ev->gpu;
    const wl_core_coeffs *c = &gpu->coef;
    double cyc = t * x * 1e3; /* SM cycles elapsed */
    double u_tc = clamp01(p->tc_clk / cyc), u_fp = clamp01(p->fp_clk / cyc);
    double u_sfu = clamp01(p->sfu_clk / cyc), u_smem = clamp01(p->smem_clk / cyc);
    double u_l2 = clamp01(p->l2_bytes / gpu->l2_bytes_per_clk / cyc);
    double active = (t - p->fixed_us * p->anchor) / t;
    *pc = x * (c->c_active_w * p->sm_frac * active + c->c_tc_w * p->tc_w * u_tc +
               c->c_fp_w * u_fp + c->c_sfu_w * u_sfu + c->c_smem_w * u_smem);
    *pm = x * c->c_l2_w * u_l2;
    *p0 = c->dram_background_w * active + c->e_dram_pj_per_byte * p->dram_bytes / t * 1e-6;
}

/* Board power at clock x_mhz of a run drawing dyn_v (dynamic power without
 * the V^a factor) and dyn_0 (DRAM): the same voltage and temperature
 * solve as a whole run's (eval_core): dT = R P_dyn / (1 - lambda R), the
 * voltage at x + k dT on the curve, leakage lambda dT above idle. */
static double board_w(const wl_core_evaluator *ev, const wl_core_op *op, double x_mhz,
                      double dyn_v, double dyn_0)
{
    const wl_core_gpu *gpu = &ev->gpu;
    const wl_core_coeffs *c = &gpu->coef;
    double v_mv = op_voltage(gpu, op, x_mhz), p_dyn = 0, lam = 0, dT = 0;
    for (int it = 0; it < 4; it++) {
        double v = v_mv * 1e-3;
        p_dyn = dyn_v * pow(v > 0 ? v : 0, c->v_exponent) + dyn_0;
        double vr = v_mv / gpu->v_ref_mv;
        lam = c->leak_w_per_c * vr * vr;
        double denom = 1.0 - lam * c->thermal_c_per_w;
        dT = c->thermal_c_per_w * p_dyn / (denom < 0.05 ? 0.05 : denom);
        if (op->voltage_mv > 0 || c->vf_temp_mhz_per_c <= 0)
            break;
        double next = wl_core_gpu_voltage_mv(gpu, x_mhz + c->vf_temp_mhz_per_c * dT) +
                      op->voltage_offset_mv;
        if (next == v_mv)
            break;
        v_mv = next;
    }
    return p_dyn + op_idle_w(gpu, op, x_mhz, v_mv) + lam * dT;
}

/* Board power while one kernel runs back to back at clock x_mhz: its
 * dynamic power at the curve voltage, its launch latency's clock power,
 * idle power and the leakage of the die it heats (the same terms as a
 * whole run's, below, with the kernel alone). */
static double kernel_board_w(const wl_core_evaluator *ev, const wl_core_op *op, const wl_kprep *p,
                             double x_mhz)
{
    const wl_core_gpu *gpu = &ev->gpu;
    const wl_core_coeffs *c = &gpu->coef;
    double x = x_mhz * 1e-3, t = kernel_us(ev, p, x), pc, pm, p0;
    if (!(t > 0))
        return 0.0;
    kernel_power(ev, p, x, t, &pc, &pm, &p0);
    double pg = x * c->c_gap_w * p->fixed_us * p->anchor / t;
    return board_w(ev, op, x_mhz, pc + pm + pg, p0);
}

/* The clock at which the governor holds a kernel that would draw more
 * than the cap at f_mhz: its board power equals the cap there (power rises
 * with the clock, so the root is bracketed by [min clock, f]). Power above
 * idle is close to a power law in the clock, so the search is false
 * position (Illinois) on log P in log x: three to five evaluations. */
static double kernel_cap_clock(const wl_core_evaluator *ev, const wl_core_op *op,
                               const wl_kprep *p, double f_mhz, double p_f, double cap)
{
    double lo = ev->gpu.sm_clock_min_mhz > 0 ? ev->gpu.sm_clock_min_mhz : 1.0;
    if (lo >= f_mhz)
        return f_mhz;
    double p_lo = kernel_board_w(ev, op, p, lo);
    if (!(p_lo < cap))
        return lo;
    double a = log(lo), qa = log(p_lo / cap), b = log(f_mhz), qb = log(p_f / cap);
    double x = f_mhz;
    int side = 0;
    /* converged to rounding: a calibration differentiates through it */
    for (int it = 0; it < 60; it++) {
        double xl = (a * qb - b * qa) / (qb - qa);
        if (!(xl > a && xl < b))
            xl = 0.5 * (a + b);
        x = exp(xl);
        double px = kernel_board_w(ev, op, p, x);
        double q = log(px / cap);
        if (fabs(q) < 1e-12 || b - a < 1e-13)
            break;
        if (q > 0) {
            b = xl, qb = q;
            if (side == 1)
                qa *= 0.5;
            side = 1;
        } else {
            a = xl, qa = q;
            if (side == -1)
                qb *= 0.5;
            side = -1;
        }
    }
    return x;
}

/* Running sums of the kernels' time and energy (see eval_at). */
typedef struct {
    double ec_v, em_v, em_0; /* compute and L2 energy without V^a; DRAM energy */
    double busy_us, latency_us, clk_us; /* clk_us: the sum of clock (MHz) x time */
    double cls_v[WL_CLASS_COUNT], cls_0[WL_CLASS_COUNT];
    double ph_v[WL_PHASE_COUNT], ph_0[WL_PHASE_COUNT];
    double ph_busy[WL_PHASE_COUNT], ph_lat[WL_PHASE_COUNT];
    /* idle power is the clock's: a held kernel's idle(x) - idle(f) times
     * its time (J), over the run and per phase */
    double idle_dj, ph_idle_dj[WL_PHASE_COUNT];
} eval_sums;

/* Adds n launches of one kernel taking t us at clock x_mhz, drawing the
 * dynamic power pc, pm, p0 (kernel_power); vr is (V(x) / V(f))^a, the
 * voltage factor against the run's. */
static void add_parts(const wl_kprep *p, double t, double x_mhz, double n, double vr, double pc,
                      double pm, double p0, eval_sums *s, wl_core_result *r)
{
    double ts = t * 1e-6 * n, fixed_us = p->fixed_us * p->anchor;
    s->ec_v += pc * vr * ts;
    s->em_v += pm * vr * ts;
    s->em_0 += p0 * ts;
    s->latency_us += fixed_us * n;
    s->busy_us += t * n;
    s->clk_us += x_mhz * t * n;
    r->cls[p->cls].busy_ms += t * n * 1e-3;
    s->cls_v[p->cls] += (pc + pm) * vr * ts;
    s->cls_0[p->cls] += p0 * ts;
    s->ph_v[p->phase] += (pc + pm) * vr * ts;
    s->ph_0[p->phase] += p0 * ts;
    s->ph_busy[p->phase] += t * n;
    s->ph_lat[p->phase] += fixed_us * n;
}

static void add_kernel(const wl_core_evaluator *ev, const wl_kprep *p, double t, double x_mhz,
                       double n, double vr, eval_sums *s, wl_core_result *r)
{
    double pc, pm, p0;
    kernel_power(ev, p, x_mhz * 1e-3, t, &pc, &pm, &p0);
    add_parts(p, t, x_mhz, n, vr, pc, pm, p0, s, r);
}

/* The board's power controller (Hopper: throttle reason 0x4, SW power cap)
 * acts within a kernel, not on the average of a step: in the shared H200
 * kernel database every bf16 GEMM asked for 1980 MHz runs at 1507-1635 MHz
 * holding 530-591 W, while in the same board's eager Qwen2 prefill (a 563 W
 * average with elementwise kernels between the GEMMs) the 150 us MLP GEMMs
 * run 1.64-1.82x faster at 1980 than at 990 MHz, the elementwise kernels
 * beside them 1.6-1.8x and the 27 us projections 1.82-1.92x (shared/data
 * profiles). So each kernel has a target clock, the one at which its own
 * board power meets the cap (the request when it draws less), and the
 * clock follows the targets with a first-order lag of time constant
 * power_tau_us: over a kernel of duration t with target g, starting at c,
 * the mean clock is g + (c - g) tau/t (1 - e^(-t/tau)) and it ends at
 * g + (c - g) e^(-t/tau); between kernels it recovers toward the request.
 * Short power spikes pass, long GEMMs are held, and a chain of GEMMs keeps
 * the clock down. The walk is per launch, so it runs only when some kernel
 * draws more than the cap at the requested clock. */
typedef struct {
    double f, tau, c; /* request (MHz), time constant (us), clock now */
    double a;         /* the product of the steps' decay factors (held_stretch) */
} governor;

/* A kernel's target clock and its time there, given its time t_f and
 * board power p_f at the request (p_f < 0: not known yet). */
static void kernel_target(const wl_core_evaluator *ev, const wl_core_op *op, const wl_kprep *p,
                          double f_mhz, double t_f, double p_f, double cap, double *g,
                          double *t_g)
{
    *g = f_mhz;
    *t_g = t_f;
    if (!(cap > 0))
        return;
    if (p_f < 0)
        p_f = kernel_board_w(ev, op, p, f_mhz);
    if (p_f > cap) {
        *g = kernel_cap_clock(ev, op, p, f_mhz, p_f, cap);
        *t_g = kernel_us(ev, p, *g * 1e-3);
    }
}

/* Mean clock over a kernel (target g, duration t_g at it) and the clock it
 * leaves; an idle wait of w us first lets the clock recover. */
static double governor_step(governor *gv, double g, double t_g, double w)
{
    if (gv->tau <= 0) {
        gv->c = g;
        return g;
    }
    if (w > 0 && gv->c != gv->f) {
        double ew = exp(-w / gv->tau);
        gv->c = gv->f + (gv->c - gv->f) * ew;
        gv->a *= ew;
    }
    if (gv->c == g || !(t_g > 0))
        return gv->c;
    double e = exp(-t_g / gv->tau);
    gv->a *= e;
    double mean = g + (gv->c - g) * gv->tau / t_g * (1.0 - e);
    gv->c = g + (gv->c - g) * e;
    return mean;
}

/* The state of one walk over the launches under the governor. */
typedef struct {
    const wl_core_evaluator *ev;
    const wl_core_op *op;
    double f_mhz, cap, va_f, idle_f; /* request, cap, V(f)^a, idle(f) */
    double shift_mhz; /* the V-f curve's shift on a die held at the cap, k dT (MHz) */
    double v_f_shift; /* V(f + shift), the request's voltage on that curve (mV) */
    const double *tbuf, *gbuf, *tgbuf;
    governor gv;
    eval_sums *s;
    wl_core_result *r;
    double *kx, *kt;
} held_walk;

/* A distinct kernel's time at the request, target clock and time there. */
static void held_kernel(const held_walk *w, const wl_kprep *p, size_t u, double *t_f, double *g,
                        double *t_g)
{
    if (u < TBUF) {
        *t_f = w->tbuf[u], *g = w->gbuf[u], *t_g = w->tgbuf[u];
        return;
    }
    *t_f = kernel_us(w->ev, p, w->f_mhz * 1e-3);
    kernel_target(w->ev, w->op, p, w->f_mhz, *t_f, -1.0, w->cap, g, t_g);
}

/* One launch after an idle wait of `wait` us: its clock under the
 * governor, its time there (returned) and its share of the sums, n times
 * (a launch standing for n: wl_core_workload_add_n). */
static double held_launch(held_walk *w, const wl_kprep *p, size_t u, double wait, double n)
{
    const wl_core_gpu *gpu = &w->ev->gpu;
    double t_f, g, t_g;
    held_kernel(w, p, u, &t_f, &g, &t_g);
    double x = governor_step(&w->gv, g, t_g, wait);
    double t = t_f, vr = 1.0;
    if (x != w->f_mhz) {
        t = kernel_us(w->ev, p, x * 1e-3);
        double vx = op_voltage(gpu, w->op, x);
        /* its voltage against the run's, both on the hot die's curve: the
         * solve after the walk multiplies by V(f + k dT)^a */
        if (w->v_f_shift > 0) {
            double va = wl_core_gpu_voltage_mv(gpu, x + w->shift_mhz) + w->op->voltage_offset_mv;
            if (va > 0)
                vr = pow(va / w->v_f_shift, gpu->coef.v_exponent);
        } else if (w->va_f > 0)
            vr = pow(vx > 0 ? vx * 1e-3 : 0, gpu->coef.v_exponent) / w->va_f;
        double dj = (op_idle_w(gpu, w->op, x, vx) - w->idle_f) * t * 1e-6 * n;
        w->s->idle_dj += dj;
        w->s->ph_idle_dj[p->phase] += dj;
    }
    add_kernel(w->ev, p, t, x, n, vr, w->s, w->r);
    if (w->kx) {
        w->kx[u] += x * t * n;
        w->kt[u] += t * n;
    }
    return t;
}

/* The timeline of a walk over the launches (eval_core): when the host has
 * issued the launches so far and when the GPU is done with them (us), the
 * host time still to come, the GPU's busy time walked, and each phase's
 * share of the end's advance and of the busy time. With repeats
 * (wl_core_workload_add_n) issue and end are one repetition's, and the
 * run's end is rep_end. */
typedef struct {
    double host_left, done_busy, rep_end;
    double ph_time[WL_PHASE_COUNT], ph_done[WL_PHASE_COUNT];
    double issue, end; /* last: not summed over repetitions (held_stretch) */
} timeline;

/* Launch i, standing for nr launches, on the timeline: the host issues a
 * kernel h us after the last (none from a CUDA graph), a sync gap first
 * waits for the GPU; the GPU starts a kernel when it has arrived and the
 * previous one is done. w: the governor's walk, NULL when none is held;
 * tbuf: the kernels' times at f_ghz. */
static void walk_launch(const wl_core_evaluator *ev, held_walk *w, const double *tbuf,
                        double f_ghz, double h, size_t i, double nr, timeline *tl)
{
    size_t u = ev->wl->uidx[i];
    const wl_kprep *p = &ev->prep[u];
    if (p->is_gap) {
        if (p->sync && tl->end > tl->issue)
            tl->issue = tl->end;
        tl->issue += p->gap_us;
        tl->host_left -= p->gap_us * nr;
        return;
    }
    if (!p->graphed) {
        tl->issue += h;
        tl->host_left -= h * nr;
    }
    double start = tl->issue > tl->end ? tl->issue : tl->end;
    double t = w ? held_launch(w, p, u, start - tl->end, nr)
               : u < TBUF ? tbuf[u] : kernel_us(ev, p, f_ghz);
    tl->ph_time[p->phase] += (start + t - tl->end) * nr;
    tl->rep_end += (start + t - tl->end) * nr; /* read only with repeats */
    tl->end = start + t;
    tl->done_busy += t * nr;
    tl->ph_done[p->phase] += t * nr;
}

/* Where the stretch of launches from i on ends (wl_core_workload_add_n):
 * at a change of repeat count or the next stretch's first launch. */
static size_t stretch_end(const wl_core_workload *wl, size_t i)
{
    long long n = llabs(wl->rep[i]);
    size_t j = i + 1;
    while (j < wl->n && wl->rep[j] == n)
        j++;
    return j;
}

/* Everything a walk sums, as one vector of doubles (held_stretch). */
typedef struct {
    eval_sums s;
    double cls_busy_ms[WL_CLASS_COUNT];
    timeline tl;
} walk_sums;
#define WALK_NV (sizeof(walk_sums) / sizeof(double))
_Static_assert(sizeof(walk_sums) % sizeof(double) == 0, "walk_sums holds doubles only");

static void walk_pack(double *v, const held_walk *w, const timeline *tl)
{
    walk_sums x = {.s = *w->s, .tl = *tl};
    for (int k = 0; k < WL_CLASS_COUNT; k++)
        x.cls_busy_ms[k] = w->r->cls[k].busy_ms;
    memcpy(v, &x, sizeof x);
}

/* A stretch of n repetitions under the governor. Its clock carries over
 * from one repetition to the next: over one repetition it maps c to
 * A c + B (each kernel's and wait's step is affine in c, A the product of
 * their decay factors), so repetition j starts at c* + A^j (c0 - c*),
 * c* = B / (1 - A), and its sums are S_inf + (S_0 - S_inf) A^j to first
 * order in the clock's offset. Two repetitions walked give A (the
 * second's), S_0, S_1 and S_inf =
 * (S_1 - A S_0) / (1 - A); the stretch sums to n S_inf + (S_0 - S_inf)
 * (1 - A^n) / (1 - A) and leaves the clock at c* + A^n (c0 - c*). A clock
 * that does not move (converged, or no lag) gives S_0 + (n - 1) S_1. The
 * per-kernel clocks (kx, kt) keep the two walked repetitions' weights. */
static void held_stretch(const wl_core_evaluator *ev, held_walk *w, double f_ghz, double h,
                         size_t i0, size_t i1, long long n, timeline *tl)
{
    double x0[WALK_NV], x1[WALK_NV], x2[WALK_NV];
    walk_pack(x0, w, tl);
    double c0 = w->gv.c;
    for (size_t i = i0; i < i1; i++)
        walk_launch(ev, w, NULL, f_ghz, h, i, 1.0, tl);
    walk_pack(x1, w, tl);
    double c1 = w->gv.c;
    w->gv.a = 1.0;
    for (size_t i = i0; i < i1; i++)
        walk_launch(ev, w, NULL, f_ghz, h, i, 1.0, tl);
    walk_pack(x2, w, tl);
    double nn = (double)n;
    double A = fabs(c1 - c0) > 1e-9 * w->f_mhz ? w->gv.a : 0.0;
    int lag = A > 1e-12 && A < 1.0 - 1e-12;
    double G = lag ? (1.0 - pow(A, nn)) / (1.0 - A) : 0.0;
    for (size_t k = 0; k < WALK_NV; k++) {
        double s0 = x1[k] - x0[k], s1 = x2[k] - x1[k];
        if (!lag) {
            x2[k] = x0[k] + s0 + (nn - 1.0) * s1;
            continue;
        }
        double sinf = (s1 - A * s0) / (1.0 - A);
        x2[k] = x0[k] + nn * sinf + (s0 - sinf) * G;
    }
    walk_sums x;
    memcpy(&x, x2, sizeof x);
    *w->s = x.s;
    for (int k = 0; k < WL_CLASS_COUNT; k++)
        w->r->cls[k].busy_ms = x.cls_busy_ms[k];
    double issue = tl->issue, end = tl->end;
    *tl = x.tl;
    tl->issue = issue;
    tl->end = end;
    if (lag) {
        double cs = (c1 - A * c0) / (1.0 - A);
        w->gv.c = cs + pow(A, nn) * (c0 - cs);
    }
}

/* Evaluate at one clock, no power limit on the average (each kernel is
 * held at the cap by the governor above). Per-kernel times live in stack
 * buffers (no allocation, thread-safe); a workload with more distinct
 * kernels than that recomputes them in the timeline. kx and kt, when
 * given, get each distinct kernel's time-weighted mean clock and its time
 * (profile anchoring).
 *
 * Time does not depend on voltage, so energies are first summed without the
 * V^a factor (compute and L2: e_v; DRAM: e_0) and the voltage is solved
 * afterwards with the die temperature in a few scalar steps: under load the
 * V-f curve shifts by vf_temp_mhz_per_c per degree above idle (GPU Boost
 * temperature bins), and leakage rises with temperature. A kernel the
 * governor holds below the request carries its own voltage as a factor
 * (V(x) / V(f))^a on the curve. */
static void eval_core(const wl_core_evaluator *ev, double f_mhz, const wl_core_op *op,
                      wl_core_result *r, double *kx, double *kt)
{
    const wl_core_gpu *gpu = &ev->gpu;
    const wl_core_coeffs *c = &gpu->coef;
    const wl_core_workload *wl = ev->wl;
    double f = f_mhz * 1e-3;
    double idle_w = wl_core_gpu_idle_w(gpu, f_mhz);
    double cap = op_cap_w(gpu, op);
    eval_sums s = {0};

    double tbuf[TBUF], gbuf[TBUF], tgbuf[TBUF];
    memset(r->cls, 0, sizeof r->cls);
    memset(r->phase, 0, sizeof r->phase);
    double gap_total_us = 0;
    double n_issued = 0; /* kernels the host issues one by one */
    int held = 0;        /* some kernel draws more than the cap at f */
    /* the kernel that draws the most at f, by the quick estimate */
    double peak_quick = 0, peak_dyn_v = 0, peak_dyn_0 = 0;
    double v_f = op_voltage(gpu, op, f_mhz);
    double va_f = pow(v_f > 0 ? v_f * 1e-3 : 0, c->v_exponent);
    double idle_f = op_idle_w(gpu, op, f_mhz, v_f);
    for (size_t u = 0; u < ev->nu; u++) {
        const wl_kprep *p = &ev->prep[u];
        wl_core_class_stats *cs = &r->cls[p->cls];
        cs->launches += (long long)p->count;
        r->phase[p->phase].launches += (long long)p->count;
        if (p->is_gap) {
            gap_total_us += p->gap_us * p->count;
            continue;
        }
        if (!p->graphed)
            n_issued += p->count;
        r->phase[p->phase].flops += p->flops * p->count;
        cs->flops += p->flops * p->count;
        cs->dram_bytes += p->dram_bytes * p->count;
        double t = kernel_us(ev, p, f), g = f_mhz, t_g = t, pc, pm, p0;
        kernel_power(ev, p, f, t, &pc, &pm, &p0);
        double pg = f * c->c_gap_w * p->fixed_us * p->anchor / t;
        /* at the curve's voltage (a lower bound: the hot die's shift
         * raises it a few percent); solved in full near the cap */
        double p_f = (pc + pm + pg) * va_f + p0 + idle_f;
        if (p_f > peak_quick) {
            peak_quick = p_f;
            peak_dyn_v = pc + pm + pg;
            peak_dyn_0 = p0;
        }
        if (cap > 0 && p_f > cap / 1.25)
            p_f = board_w(ev, op, f_mhz, pc + pm + pg, p0);
        kernel_target(ev, op, p, f_mhz, t, p_f, cap, &g, &t_g);
        if (g < f_mhz)
            held = 1;
        if (u < TBUF) {
            tbuf[u] = t;
            gbuf[u] = g;
            tgbuf[u] = t_g;
        }
        if (kx) {
            kx[u] = f_mhz;
            kt[u] = t * p->count;
        }
        add_parts(p, t, f_mhz, p->count, 1.0, pc, pm, p0, &s, r);
    }
    double busy_us = s.busy_us;

    /* Timeline: the host issues a kernel every host_launch_us (none for a
     * kernel replayed from a CUDA graph); the GPU starts it when both the
     * launch has arrived and the previous kernel is done; a sync gap makes
     * the host wait for the GPU first. Once the GPU lags the host by more
     * than all the host time still to come, and no sync is left, the host
     * can never catch up: the rest is the remaining busy time, and the walk
     * stops early (GPU-bound workloads end in a few hundred steps whatever
     * their length). Each kernel's advance of the end is its phase's time.
     * With the governor holding kernels, every launch has its own clock:
     * the sums are redone launch by launch and the walk goes to the end. */
    /* Runs repeated back to back with no sync (wl_core_workload_set_repeated):
     * the host queues the next run's launches while the GPU works, so the
     * steady state is the slower of the two sides; each phase keeps its
     * share of the GPU's busy time. Such a run is an op called in a bare
     * loop: no module code around it, so it pays the bare op's issue cost
     * (host_op_launch_us), not the per-kernel cost inside a model's forward
     * (an HF forward on PyTorch 2.x spends ~20-26 us per kernel where the
     * same ops in a loop take 9-19 us: shared/data README, H100 host rows).
     * A training step's kernels cost the host more than a forward's: the
     * forward records the autograd graph, the backward runs through the
     * autograd engine, and AdamW's foreach ops walk every parameter tensor
     * on the host (host_train_launch_us: the H200 host's unprofiled steps
     * take 26-35 us a kernel where its forward takes 21). */
    int steady = wl->repeated && ev->after_sync == 0;
    double issue_us = steady        ? wl_core_coeffs_op_launch_us(c)
                      : ev->training ? wl_core_coeffs_train_launch_us(c)
                                     : c->host_launch_us;
    double h = issue_us + c->launch_clk / f * 1e-3;
    /* a profile's timeline: its gaps hold the host's own measured times */
    if (wl->host_timed)
        h = 0;
    timeline tl = {.host_left = n_issued * h + gap_total_us};
    double *ph_time = tl.ph_time, end = 0;
    const size_t *ui = wl->uidx;
    const long long *rep = wl->rep; /* see the walk below */
    held_walk w = {.ev = ev, .op = op, .f_mhz = f_mhz, .cap = cap, .tbuf = tbuf, .gbuf = gbuf,
                   .tgbuf = tgbuf, .gv = {.f = f_mhz, .tau = wl_core_gpu_power_tau_us(gpu), .c = f_mhz},
                   .s = &s, .r = r, .kx = kx, .kt = kt};
    if (held) {
        w.va_f = va_f;
        w.idle_f = idle_f;
        /* A kernel's board power is P = p_dyn + idle + lambda dT with
         * dT = R p_dyn / (1 - lambda R) (board_w), that is P = idle + dT / R:
         * held at the cap it heats the die by R (cap - idle), and its
         * voltage is the curve's at x + k R (cap - idle), as its target
         * clock was found (kernel_board_w). Without the shift a kernel held
         * on the curve's slope below a flat top took V(x), and a GEMM loop
         * held at the cap drew 7% under it (test_governor_hot_die). A run
         * averaging under the cap is cooler; its V(f + k dT) in the solve
         * carries that to the held kernels. */
        if (c->vf_temp_mhz_per_c > 0 && cap > idle_f && !(op->voltage_mv > 0)) {
            w.shift_mhz = c->vf_temp_mhz_per_c * c->thermal_c_per_w * (cap - idle_f);
            w.v_f_shift = wl_core_gpu_voltage_mv(gpu, f_mhz + w.shift_mhz) + op->voltage_offset_mv;
        }
        eval_sums zero = {0};
        s = zero;
        for (int k = 0; k < WL_CLASS_COUNT; k++)
            r->cls[k].busy_ms = 0;
        for (size_t u = 0; kx && u < ev->nu; u++)
            kx[u] = kt[u] = 0;
    }
    if (steady) {
        if (held) {
            /* a loop's periodic state: over one pass the clock maps c to
             * A c + B (each kernel's step is affine in c), so the pass
             * that repeats starts from B / (1 - A) */
            double A = 1.0;
            w.gv.c = 0.0;
            for (size_t i = 0; i < wl->n; i++) {
                const wl_kprep *p = &ev->prep[ui[i]];
                double t_f, g, t_g;
                if (p->is_gap)
                    continue;
                held_kernel(&w, p, ui[i], &t_f, &g, &t_g);
                (void)governor_step(&w.gv, g, t_g, 0.0);
                if (w.gv.tau > 0)
                    A *= exp(-t_g / w.gv.tau);
            }
            w.gv.c = A < 1.0 ? w.gv.c / (1.0 - A) : f_mhz;
            for (size_t i = 0; i < wl->n; i++)
                if (!ev->prep[ui[i]].is_gap)
                    (void)held_launch(&w, &ev->prep[ui[i]], ui[i], 0.0,
                                      rep ? (double)llabs(rep[i]) : 1.0);
            busy_us = s.busy_us;
        }
        end = tl.host_left > busy_us ? tl.host_left : busy_us;
        for (int k = 0; k < WL_PHASE_COUNT; k++)
            ph_time[k] = busy_us > 0 ? s.ph_busy[k] * end / busy_us : 0.0;
    }
    /* A launch standing for n (wl_core_workload_add_n) is one of n
     * repetitions of the stretch between two host syncs around it: the
     * walk runs through one repetition, and its advance of the end counts
     * n times in the run's time (under the governor, whose clock carries
     * over between repetitions: held_stretch). The early stop below needs
     * the walk's end to be the run's, so such a workload walks to its end. */
    size_t n = steady ? 0 : wl->n;
    for (size_t i = 0; i < n;) {
        long long nr = rep ? llabs(rep[i]) : 1;
        if (held && nr > 1) {
            size_t j = stretch_end(wl, i);
            held_stretch(ev, &w, f, h, i, j, nr, &tl);
            i = j;
            continue;
        }
        walk_launch(ev, held ? &w : NULL, tbuf, f, h, i, (double)nr, &tl);
        if (!held && !rep && i >= ev->after_sync && tl.end - tl.issue > tl.host_left) {
            tl.end += busy_us - tl.done_busy;
            for (int k = 0; k < WL_PHASE_COUNT; k++)
                ph_time[k] += s.ph_busy[k] - tl.ph_done[k];
            break;
        }
        i++;
    }
    if (!steady)
        end = rep ? tl.rep_end : tl.end;
    if (held) {
        busy_us = s.busy_us;
        for (size_t u = 0; kx && u < ev->nu; u++)
            kx[u] = kt[u] > 0 ? kx[u] / kt[u] : f_mhz;
    }
    double total_us = end;
    if (total_us <= 0)
        total_us = 1e-9;
    double T = total_us * 1e-6;
    double ec_v = s.ec_v, em_v = s.em_v, em_0 = s.em_0, latency_us = s.latency_us;

    /* Gaps between kernels: idle power (in the static part below) plus clock
     * power that is not gated at microsecond scale. */
    double gap_s = (total_us - busy_us + latency_us) * 1e-6;
    if (gap_s > 0)
        ec_v += f * c->c_gap_w * gap_s;

    /* Voltage and temperature: dT = R (P_dyn(V) + lambda(V) dT), so
     * dT = R P_dyn / (1 - lambda R) with lambda = leak_w_per_c (V/V_ref)^2;
     * V = V_table(f + k dT) + offset unless the voltage is fixed. A few
     * fixed-point steps converge (k dT moves V by millivolts). */
    double v_mv = op->voltage_mv > 0 ? op->voltage_mv
                                     : wl_core_gpu_voltage_mv(gpu, f_mhz) + op->voltage_offset_mv;
    double va = 1, dT = 0, lam = 0;
    for (int it = 0; it < 4; it++) {
        double v = v_mv * 1e-3;
        va = pow(v > 0 ? v : 0, c->v_exponent);
        double p_dyn = ((ec_v + em_v) * va + em_0) / T;
        double vr = v_mv / gpu->v_ref_mv;
        lam = c->leak_w_per_c * vr * vr;
        double denom = 1.0 - lam * c->thermal_c_per_w;
        if (denom < 0.05)
            denom = 0.05;
        dT = c->thermal_c_per_w * p_dyn / denom;
        if (op->voltage_mv > 0 || c->vf_temp_mhz_per_c <= 0)
            break;
        double next = wl_core_gpu_voltage_mv(gpu, f_mhz + c->vf_temp_mhz_per_c * dT) +
                      op->voltage_offset_mv;
        if (next == v_mv)
            break; /* a fixed point: another step would repeat this one */
        v_mv = next;
    }
    double p_leak = lam * dT;
    /* the idle table holds at the table's voltage; off the curve (fixed
     * voltage or an offset) idle power, mostly leakage and clock power,
     * scales as V^2 */
    idle_w = op_idle_w(gpu, op, f_mhz, v_mv);

    r->requested_clock_mhz = f_mhz;
    /* the clock NVML would average: each kernel's own, the request between */
    r->effective_clock_mhz = held ? (s.clk_us + (total_us - busy_us) * f_mhz) / total_us : f_mhz;
    r->throttled = held;
    r->peak_power_w = peak_quick > 0 ? board_w(ev, op, f_mhz, peak_dyn_v, peak_dyn_0) : 0.0;
    r->voltage_mv = v_mv;
    r->time_ms = total_us * 1e-3;
    r->busy_ms = busy_us * 1e-3;
    r->energy_dyn_compute_j = ec_v * va;
    r->energy_dyn_memory_j = em_v * va + em_0;
    r->energy_static_j = (idle_w + p_leak) * T + s.idle_dj;
    r->energy_j = r->energy_dyn_compute_j + r->energy_dyn_memory_j + r->energy_static_j;
    r->power_w = r->energy_j / T;
    r->temp_c = c->idle_temp_c + dT;
    double wait = total_us - busy_us;
    r->launch_bound_frac = wait > 0 ? wait / total_us : 0.0;
    for (int k = 0; k < WL_CLASS_COUNT; k++)
        r->cls[k].energy_j = s.cls_v[k] * va + s.cls_0[k];
    /* phases: their kernels' dynamic energy, their gaps' clock power and
     * the static power over their time */
    double p_static = idle_w + p_leak;
    for (int k = 0; k < WL_PHASE_COUNT; k++) {
        wl_core_phase_stats *ps = &r->phase[k];
        double gk = (ph_time[k] - s.ph_busy[k] + s.ph_lat[k]) * 1e-6;
        ps->time_ms = ph_time[k] * 1e-3;
        ps->busy_ms = s.ph_busy[k] * 1e-3;
        ps->energy_j = s.ph_v[k] * va + s.ph_0[k] + (gk > 0 ? f * c->c_gap_w * gk * va : 0) +
                       p_static * ph_time[k] * 1e-6 + s.ph_idle_dj[k];
    }
}

static void eval_at(const wl_core_evaluator *ev, double f_mhz, const wl_core_op *op,
                    wl_core_result *r)
{
    eval_core(ev, f_mhz, op, r, NULL, NULL);
}

/* Power-limited: the governor lowers the clock until average power meets
 * the cap. Power rises with clock, so the root is bracketed by [min clock,
 * top], with the top the GPU's maximum clock (or the request, above it):
 * the same bracket for every requested clock, so the cap clock does not
 * depend on which clock was asked for, and a scan can reuse it.
 *
 * Each evaluation walks the whole model, so the solve takes as few as it
 * can: power above idle is close to a power law in the clock (P_d ~ f^g
 * V^a, g between 0 for a memory-bound run and 1 for a compute-bound one,
 * V rising above the knee), so q(x) = log((P - idle) / (cap - idle)) is
 * nearly linear in log x and secant steps on it converge in three or four
 * evaluations, the first from the top with slope 2; a step that leaves
 * the bracket the evaluations have closed falls back to Illinois false
 * position on it (bisection while its lower end is unknown). False position
 * on P over [min, top] took six to eight; the tolerance is the same. */
static void solve_cap(const wl_core_evaluator *ev, const wl_core_op *op, double f, double cap,
                      const wl_core_result *at_f, wl_core_result *res)
{
    const wl_core_gpu *gpu = &ev->gpu;
    double top = f > gpu->sm_clock_max_mhz ? f : gpu->sm_clock_max_mhz;
    double fmin_ = gpu->sm_clock_min_mhz < f ? gpu->sm_clock_min_mhz : f;
    wl_core_result tmp, hi_r;
    if (top == f)
        hi_r = *at_f;
    else
        eval_at(ev, top, op, &hi_r);
    /* q(x) = log((P - idle) / (cap - idle)): power above idle is close to a
     * power law in the clock (f^g V^a), so q is nearly linear in log x */
    double lo = fmin_, hi = top, qlo = NAN, qhi;
    double ih = wl_core_gpu_idle_w(gpu, top);
    if (!(cap > ih) || !(hi_r.power_w > ih)) {
        eval_at(ev, fmin_, op, &tmp);
        *res = tmp;
        return;
    }
    qhi = log((hi_r.power_w - ih) / (cap - ih));
    /* first step: slope 2 in log-log (dynamic power ~ V^a f above the knee) */
    double xl = log(hi) - qhi / 2.0, xp = log(hi), qp = qhi;
    int side = 0;
    for (int it = 0; it < 60 && hi - lo > 1e-3; it++) {
        double x = exp(xl);
        if (!(x > lo && x < hi)) {
            x = isnan(qlo) ? 0.5 * (lo + hi)
                           : exp((log(lo) * qhi - log(hi) * qlo) / (qhi - qlo));
            if (!(x > lo && x < hi))
                x = 0.5 * (lo + hi);
        }
        eval_at(ev, x, op, &tmp);
        double gx = tmp.power_w - cap;
        if (fabs(gx) < 1e-4 * cap)
            break;
        double ix = wl_core_gpu_idle_w(gpu, x);
        if (!(cap > ix) || !(tmp.power_w > ix)) { /* at idle: halve */
            hi = x;
            xl = log(0.5 * (lo + hi));
            continue;
        }
        double q = log((tmp.power_w - ix) / (cap - ix));
        if (gx > 0) {
            hi = x;
            qhi = q;
            if (side == 1 && !isnan(qlo))
                qlo *= 0.5;
            side = 1;
        } else {
            lo = x;
            qlo = q;
            if (side == -1)
                qhi *= 0.5;
            side = -1;
        }
        double lx = log(x);
        xl = q != qp ? lx - q * (lx - xp) / (q - qp) : log(0.5 * (lo + hi));
        xp = lx;
        qp = q;
    }
    *res = tmp;
}

int wl_core_throttle_cache_covers(const wl_core_evaluator *ev, const wl_core_throttle_cache *cache,
                                  const wl_core_op *op)
{
    return cache && cache->valid && !op->ignore_power_limit &&
           cache->voltage_mv == op->voltage_mv &&
           cache->voltage_offset_mv == op->voltage_offset_mv &&
           cache->power_limit_w == op->power_limit_w &&
           op->sm_clock_mhz <= ev->gpu.sm_clock_max_mhz &&
           op->sm_clock_mhz >= cache->throttled_from_mhz;
}

/* throttled says what effective_clock_mhz shows: the clock held below the
 * request, by more than the 0.05 MHz that prints as the request (0.1 MHz
 * digits). A kernel of tens of microseconds drawing over the cap moves the
 * governor's clock by thousandths of a MHz within its time constant (an
 * A100 PCIe GPT-3 1.3B layer at 1290 MHz: held to 1289.994 at 107 W on a
 * 250 W board), which no reading of the clock would show (issue 59). */
static void flag_throttled(double f, wl_core_result *res)
{
    res->throttled = res->effective_clock_mhz < f - 0.05;
}

/* unlimited: the result at op's clock without the power limit, when the
 * caller has it (a sweep reusing a curve); NULL: evaluate it. */
static int run(const wl_core_evaluator *ev, const wl_core_op *op, const wl_core_result *unlimited,
               wl_core_throttle_cache *cache, wl_core_result *res)
{
    if (!ev || !op || !res || !(op->sm_clock_mhz > 0) || !isfinite(op->sm_clock_mhz) ||
        !(op->power_limit_w >= 0) || !isfinite(op->power_limit_w))
        return WL_EINVAL;
    const wl_core_gpu *gpu = &ev->gpu;
    double f = op->sm_clock_mhz;
    if (!(op_voltage(gpu, op, f) > 0))
        return WL_EINVAL;
    double cap = op_cap_w(gpu, op);
    /* the result without the limit stands when no kernel draws more than
     * the cap: otherwise the governor holds those kernels */
    if (unlimited && !(cap > 0 && unlimited->peak_power_w > cap))
        *res = *unlimited;
    else
        eval_at(ev, f, op, res);
    res->requested_clock_mhz = f;
    /* The board also holds its average power over a window longer than a
     * step (what NVML reports, and all a slow governor acts on): a run whose
     * average is still above the cap, from the governor's lag or from many
     * kernels each under it, runs at the clock where the average meets it. */
    if (op->ignore_power_limit || res->power_w <= cap) {
        flag_throttled(f, res);
        return WL_OK;
    }
    /* That solve does not depend on the request: its bracket is [min clock,
     * top clock] whatever was asked, so every request whose own run draws
     * more than the cap settles at the same cap clock, and a result cached
     * from one is what solving again would give, bit for bit. Only the
     * request's own run tells whether it needs the solve: a kernel the
     * governor holds at the request carries the request's voltage into the
     * run, so a higher request can draw less (an fp32 LayerNorm loop on an
     * A100 PCIe at -50 mV under 215 W: over the cap asked 1335 MHz, 205.5 W
     * asked 1410) and stand unsolved; a row does not depend on which clocks
     * came before it (issue 59). */
    if (wl_core_throttle_cache_covers(ev, cache, op)) {
        *res = cache->at;
        res->requested_clock_mhz = f;
        flag_throttled(f, res);
        return WL_OK;
    }
    wl_core_result at_f = *res;
    solve_cap(ev, op, f, cap, &at_f, res);
    res->requested_clock_mhz = f;
    flag_throttled(f, res);
    if (cache && f <= gpu->sm_clock_max_mhz) {
        cache->valid = 1;
        cache->voltage_mv = op->voltage_mv;
        cache->voltage_offset_mv = op->voltage_offset_mv;
        cache->power_limit_w = op->power_limit_w;
        cache->throttled_from_mhz = f;
        cache->at = *res;
    }
    return WL_OK;
}

int wl_core_evaluator_run(const wl_core_evaluator *ev, const wl_core_op *op, wl_core_result *res)
{
    return run(ev, op, NULL, NULL, res);
}

int wl_core_evaluator_run_cached(const wl_core_evaluator *ev, const wl_core_op *op,
                                 wl_core_throttle_cache *cache, wl_core_result *res)
{
    return run(ev, op, NULL, cache, res);
}

int wl_core_evaluator_limit(const wl_core_evaluator *ev, const wl_core_op *op,
                            const wl_core_result *unlimited, wl_core_throttle_cache *cache,
                            wl_core_result *res)
{
    return run(ev, op, unlimited, cache, res);
}

/* The evaluation's pieces that the evaluator's setup (core/evaluator.c:
 * profile anchoring) calls, outside the hot path. */
void wl_core_i_eval_core(const wl_core_evaluator *ev, double f_mhz, const wl_core_op *op,
                         wl_core_result *r, double *kx, double *kt)
{
    eval_core(ev, f_mhz, op, r, kx, kt);
}

double wl_core_i_op_cap_w(const wl_core_gpu *gpu, const wl_core_op *op)
{
    return op_cap_w(gpu, op);
}

void wl_core_i_solve_cap(const wl_core_evaluator *ev, const wl_core_op *op, double f, double cap,
                         const wl_core_result *at_f, wl_core_result *res)
{
    solve_cap(ev, op, f, cap, at_f, res);
}
