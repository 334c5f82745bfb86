/* A distinct kernel's time and power at a clock, the board's power around
 * it, and the clock at which the governor holds it (the pieces of an
 * evaluation: core/eval.c sums them over a run, core/governor.c walks the
 * launches under the power governor). */
#include "eval_internal.h"

#include <math.h>
#include <string.h>

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

double wl_core_i_kernel_us(const wl_core_evaluator *ev, const wl_kprep *p, double f_ghz)
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

/* A kernel's time as a Taylor series in z over a band of clocks, y = 1/x
 * = ym + yh z (MHz^-1), z in [-1, 1], from one pass through kernel_us's
 * formula in truncated power series (order JET - 1): every time there is
 * affine in y but for the smooth maxima, and a series' power costs one
 * pow and a recurrence (for b = a^p: n a_0 b_n = sum_{k=1..n}
 * (p k - n + k) a_k b_{n-k}, from a b' = p a' b). What four evaluations at
 * nodes and two checks cost the governor's fast walk (core/governor.c),
 * this does in one. It declines (returns 0) where the formula has a kink
 * inside the band -- the L2 clock's floor, DRAM's time floor -- or where
 * the series does not fall fast enough for its cubic to hold the time to
 * 1e-8 at the band's ends: its fourth-order term, the truncation error
 * there, over 1e-8 of the time, or its third over 1e-5 (the fast walk
 * holds its cubics to 1e-6). */
#define JET 5
typedef double jet[JET];

static void jet_mul(const double *a, const double *b, double *c)
{
    double r[JET];
    for (int n = 0; n < JET; n++) {
        r[n] = 0.0;
        for (int k = 0; k <= n; k++)
            r[n] += a[k] * b[n - k];
    }
    memcpy(c, r, sizeof r);
}

static void jet_div(const double *a, const double *b, double *c)
{
    double r[JET];
    for (int n = 0; n < JET; n++) {
        double v = a[n];
        for (int k = 1; k <= n; k++)
            v -= b[k] * r[n - k];
        r[n] = v / b[0];
    }
    memcpy(c, r, sizeof r);
}

static void jet_pow(const double *a, double e, double *b)
{
    double r[JET];
    r[0] = pow(a[0], e);
    for (int n = 1; n < JET; n++) {
        double v = 0.0;
        for (int k = 1; k <= n; k++)
            v += (e * k - (n - k)) * a[k] * r[n - k];
        r[n] = v / (n * a[0]);
    }
    memcpy(b, r, sizeof r);
}

/* smax of two series, as smax: the larger at the band's centre over the
 * other, in (1 + r^p)^(1/p) (analytic across the band whichever is
 * larger there) */
static void jet_smax(const double *a, const double *b, double p, double tiny, double *c)
{
    if (a[0] <= 0) {
        memcpy(c, b, sizeof(jet));
        return;
    }
    if (b[0] <= 0) {
        memcpy(c, a, sizeof(jet));
        return;
    }
    const double *m = a[0] > b[0] ? a : b, *o = a[0] > b[0] ? b : a;
    jet r, h;
    jet_div(o, m, r);
    if (r[0] < tiny) {
        memcpy(c, m, sizeof(jet));
        return;
    }
    jet_pow(r, p, h);
    h[0] += 1.0;
    jet_pow(h, 1.0 / p, h);
    jet_mul(m, h, c);
}

/* c0 + c1 y as a series in z; max(that, floor): 0 where the two cross
 * inside the band */
static int jet_affine_max(double c0, double c1, double ym, double yh, double floor, double *j)
{
    memset(j, 0, sizeof(jet));
    double lo = c0 + c1 * (ym - yh), hi = c0 + c1 * (ym + yh);
    if (lo >= floor && hi >= floor) {
        j[0] = c0 + c1 * ym;
        j[1] = c1 * yh;
        return 1;
    }
    if (lo < floor && hi < floor) {
        j[0] = floor;
        return 1;
    }
    return 0;
}

int wl_core_i_kernel_us_series(const wl_core_evaluator *ev, const wl_kprep *p, double ym, double yh,
                               double *t)
{
    const wl_core_gpu *gpu = &ev->gpu;
    if (p->is_gap || !(ym > yh) || !(yh > 0))
        return 0;
    /* 1/fl (us per cycle over 1e-3): y, or 1/floor where the band is all
     * below the L2 clock's floor */
    double l2 = gpu->l2_clock_min_mhz, pp = gpu->coef.overlap_p;
    double fl0 = 0, fl1 = 0; /* 1/fl = fl0 + fl1 y */
    if (!(l2 > 0) || 1.0 / (ym + yh) >= l2)
        fl1 = 1.0;
    else if (1.0 / (ym - yh) <= l2)
        fl0 = 1.0 / l2;
    else
        return 0;
    jet tc = {p->comp_clk * ym, p->comp_clk * yh}, tl = {0}, td, tm, s;
    tl[0] = p->l2_clk * (fl0 + fl1 * ym);
    tl[1] = p->l2_clk * fl1 * yh;
    if (!jet_affine_max(p->dram_clk * fl0 + p->path_us, p->dram_clk * fl1, ym, yh, p->dram_us, td))
        return 0;
    jet_smax(tl, td, 2.0 * pp, ev->tiny_2p, tm);
    jet_smax(tc, tm, pp, ev->tiny_p, s);
    s[0] += p->fixed_us + p->fixed_clk * ym;
    s[1] += p->fixed_clk * yh;
    if (p->xfer_fixed_us > 0) {
        jet xl = {p->xfer_l2_clk * (fl0 + fl1 * ym), p->xfer_l2_clk * fl1 * yh}, xd, xs;
        if (!jet_affine_max(p->xfer_dram_clk * fl0 + p->xfer_path_us, p->xfer_dram_clk * fl1, ym,
                            yh, p->xfer_dram_us, xd))
            return 0;
        jet_smax(xl, xd, 2.0 * pp, ev->tiny_2p, xs);
        xs[0] += p->xfer_fixed_us;
        for (int k = 0; k < JET; k++)
            s[k] += xs[k];
    }
    for (int k = 0; k < JET; k++)
        s[k] *= p->anchor;
    if (!(s[0] > 0) || !(fabs(s[JET - 1]) <= 1e-8 * s[0]) || !(fabs(s[JET - 2]) <= 1e-5 * s[0]))
        return 0;
    for (int k = 0; k < JET - 1; k++)
        t[k] = s[k];
    return 1;
}

double wl_core_evaluator_kernel_us(const wl_core_evaluator *ev, size_t u, double sm_clock_mhz)
{
    if (u >= ev->nu || sm_clock_mhz <= 0)
        return NAN;
    return wl_core_i_kernel_us(ev, &ev->prep[u], sm_clock_mhz * 1e-3);
}

static double clamp01(double x) { return x < 0 ? 0 : (x > 1 ? 1 : x); }

double wl_core_i_op_voltage(const wl_core_gpu *gpu, const wl_core_op *op, double f_mhz)
{
    if (op->voltage_mv > 0)
        return op->voltage_mv;
    return wl_core_gpu_voltage_mv(gpu, f_mhz) + op->voltage_offset_mv;
}

/* The power the governor holds the board at: the set limit times the
 * fitted share it actually holds (power_cap_frac: 0.986 on the H100 at
 * 700 W, 0.82 on the H200 of the shared kernel database); 0: no limit. */
double wl_core_i_op_cap_w(const wl_core_gpu *gpu, const wl_core_op *op)
{
    if (op->ignore_power_limit)
        return 0.0;
    return (op->power_limit_w > 0 ? op->power_limit_w : gpu->power_limit_w) *
           gpu->coef.power_cap_frac;
}

/* Idle power off the board's curve. The idle table is measured at the
 * table's own voltage v_tab_mv for each clock; at another voltage v_mv (a
 * fixed voltage or an offset) at the same clock, idle power -- the clock
 * tree's switching, C V^2 f, and leakage, which over a DVFS range's few
 * hundred millivolts rises about as V^2 too (the same V^2 as lambda(V) in
 * the run's solve, core/eval.c) -- scales as (v_mv / v_tab_mv)^2. The one
 * rule for a whole run (op_idle_w) and for each clock the governor holds a
 * kernel at (core/governor.c). */
double wl_core_i_idle_off_curve(double idle_tab_w, double v_mv, double v_tab_mv)
{
    if (!(v_tab_mv > 0))
        return idle_tab_w;
    double r = v_mv / v_tab_mv;
    return idle_tab_w * r * r;
}

/* Idle power at clock f_mhz and voltage v_mv: the table's, moved off the
 * curve when the op fixes or offsets the voltage. */
double wl_core_i_op_idle_w(const wl_core_gpu *gpu, const wl_core_op *op, double f_mhz, double v_mv)
{
    double idle = wl_core_gpu_idle_w(gpu, f_mhz);
    if (op->voltage_mv > 0 || op->voltage_offset_mv != 0)
        idle = wl_core_i_idle_off_curve(idle, v_mv, wl_core_gpu_voltage_mv(gpu, f_mhz));
    return idle;
}


/* One kernel's dynamic power at clock x (GHz) when it takes t us:
 * P = c * u * V^a * f, without the V^a factor, apart for the SMs (pc), the
 * L2 (pm) and DRAM (p0, at the fixed memory clock: no V^a). SMs are active
 * only after the clock-independent launch latency; that latency is spent
 * like a gap between kernels. */
void wl_core_i_kernel_power(const wl_core_evaluator *ev, const wl_kprep *p, double x, double t,
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
double wl_core_i_board_w(const wl_core_evaluator *ev, const wl_core_op *op, double x_mhz,
                      double dyn_v, double dyn_0)
{
    const wl_core_gpu *gpu = &ev->gpu;
    const wl_core_coeffs *c = &gpu->coef;
    double v_mv = wl_core_i_op_voltage(gpu, op, x_mhz), p_dyn = 0, lam = 0, dT = 0;
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
    return p_dyn + wl_core_i_op_idle_w(gpu, op, x_mhz, v_mv) + lam * dT;
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
    double x = x_mhz * 1e-3, t = wl_core_i_kernel_us(ev, p, x), pc, pm, p0;
    if (!(t > 0))
        return 0.0;
    wl_core_i_kernel_power(ev, p, x, t, &pc, &pm, &p0);
    double pg = x * c->c_gap_w * p->fixed_us * p->anchor / t;
    return wl_core_i_board_w(ev, op, x_mhz, pc + pm + pg, p0);
}

/* The clock at which the governor holds a kernel that would draw more
 * than the cap at f_mhz: its board power equals the cap there (power rises
 * with the clock, so the root is bracketed by [min clock, f]). Power above
 * idle is close to a power law in the clock, so the search is false
 * position (Illinois) on log P in log x: three to five evaluations. */
static double kernel_cap_clock(const wl_core_evaluator *ev, const wl_core_op *op,
                               const wl_kprep *p, double f_mhz, double p_f, double cap)
{
    double lo = wl_core_gpu_floor_mhz(&ev->gpu);
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


/* Adds n launches of one kernel taking t us at clock x_mhz, drawing the
 * dynamic power pc, pm, p0 (kernel_power); vr is (V(x) / V(f))^a, the
 * voltage factor against the run's. */
void wl_core_i_add_parts(const wl_kprep *p, double t, double x_mhz, double n, double nv, double pc,
                         double pm, double p0, wl_core_i_sums *s, wl_core_result *r)
{
    double ts = t * 1e-6 * n, tv = t * 1e-6 * nv, fixed_us = p->fixed_us * p->anchor;
    s->ec_v += pc * tv;
    s->em_v += pm * tv;
    s->em_0 += p0 * ts;
    s->latency_us += fixed_us * n;
    s->busy_us += t * n;
    s->clk_us += x_mhz * t * n;
    r->cls[p->cls].busy_ms += t * n * 1e-3;
    if (p->tc_clk > 0)
        r->cls[p->cls].tc_busy_ms += t * n * 1e-3;
    s->cls_v[p->cls] += (pc + pm) * tv;
    s->cls_0[p->cls] += p0 * ts;
    s->ph_v[p->phase] += (pc + pm) * tv;
    s->ph_0[p->phase] += p0 * ts;
    s->ph_busy[p->phase] += t * n;
    s->ph_lat[p->phase] += fixed_us * n;
}

void wl_core_i_add_kernel(const wl_core_evaluator *ev, const wl_kprep *p, double t, double x_mhz,
                       double n, double vr, wl_core_i_sums *s, wl_core_result *r)
{
    double pc, pm, p0;
    wl_core_i_kernel_power(ev, p, x_mhz * 1e-3, t, &pc, &pm, &p0);
    wl_core_i_add_parts(p, t, x_mhz, n, n * vr, pc, pm, p0, s, r);
}

/* A kernel's target clock and its time there, given its time t_f and
 * board power p_f at the request (p_f < 0: not known yet). The root is
 * bracketed by [min clock, top], top the GPU's top clock (or a request
 * above it), whatever the request: a target kept in slot (NULL: none) then
 * serves every request below top, and a result does not depend on which
 * request found it. */
void wl_core_i_kernel_target(const wl_core_evaluator *ev, const wl_core_op *op, const wl_kprep *p,
                             double f_mhz, double t_f, double p_f, double cap,
                             wl_core_i_target *slot, double *g, double *t_g)
{
    *g = f_mhz;
    *t_g = t_f;
    if (!(cap > 0))
        return;
    if (p_f < 0)
        p_f = kernel_board_w(ev, op, p, f_mhz);
    if (!(p_f > cap))
        return;
    double top = f_mhz > ev->gpu.sm_clock_max_mhz ? f_mhz : ev->gpu.sm_clock_max_mhz;
    wl_core_i_target own = {0}, *k = slot ? slot : &own;
    if (k->top != top) {
        double p_top = top == f_mhz ? p_f : kernel_board_w(ev, op, p, top);
        k->top = top;
        k->r = p_top > cap ? kernel_cap_clock(ev, op, p, top, p_top, cap) : top;
        k->t_r = wl_core_i_kernel_us(ev, p, k->r * 1e-3);
    }
    if (k->r < f_mhz) {
        *g = k->r;
        *t_g = k->t_r;
    }
}

