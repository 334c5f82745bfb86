/* Evaluator: timeline of host issue and GPU execution, per-module power,
 * temperature-dependent leakage and the board power limit. */
#include "core_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct wl_core_evaluator {
    wl_core_gpu gpu;
    const wl_core_workload *wl;
    const wl_core_latency_type *lat;
    wl_kprep *prep;  /* one per distinct kernel */
    size_t nu;
    size_t after_sync; /* launches from here on have no host sync after them */
    /* smooth-max ratios below which the smaller term cannot change the sum
     * (see smax), for the exponents p and 2p */
    double tiny_p, tiny_2p;
};

/* r^p <= 2^-53 makes 1 + r^p round to 1: below r = 2^(-53/p), less a
 * margin far wider than pow's error, the smooth maximum is the maximum. */
static void set_tiny(wl_core_evaluator *ev)
{
    double p = ev->gpu.coef.overlap_p;
    ev->tiny_p = p > 0 ? pow(2.0, -53.0 / p) * (1 - 1e-9) : 0;
    ev->tiny_2p = p > 0 ? pow(2.0, -53.0 / (2 * p)) * (1 - 1e-9) : 0;
}

static double kernel_us(const wl_core_evaluator *ev, const wl_kprep *p, double f_ghz);
static void eval_at(const wl_core_evaluator *ev, double f_mhz, const wl_core_op *op,
                    wl_core_result *r);
static void solve_cap(const wl_core_evaluator *ev, const wl_core_op *op, double f, double cap,
                      const wl_core_result *at_f, wl_core_result *res);

/* A kernel the model times and a profile measured: anchored. (A kernel
 * known only by its measured time, and a host gap, have nothing to anchor.) */
static int anchored(const wl_kernel *k)
{
    return k->measured_us > 0 && k->measured_mhz > 0 && k->kind != WL_K_MEASURED &&
           k->kind != WL_K_GAP;
}

/* Anchors every measured kernel of the profile's clock f_req at clock f
 * (kernels of other clocks at their own), then returns the clock the run
 * at f_req settles at under the board's own limit. */
static double anchored_cap_clock(wl_core_evaluator *ev, double f_req, double f)
{
    const wl_core_workload *wl = ev->wl;
    for (size_t u = 0; u < ev->nu; u++) {
        const wl_kernel *k = &wl->k[wl->uniq[u]];
        wl_kprep *p = &ev->prep[u];
        if (!anchored(k))
            continue;
        double fu = k->measured_mhz == f_req ? f : k->measured_mhz;
        p->anchor = 1.0;
        double t0 = kernel_us(ev, p, fu * 1e-3);
        if (t0 > 0 && isfinite(t0))
            p->anchor = k->measured_us / t0;
    }
    wl_core_op op = {.sm_clock_mhz = f_req};
    wl_core_result r, capped;
    eval_at(ev, f_req, &op, &r);
    double cap = ev->gpu.power_limit_w * ev->gpu.coef.power_cap_frac;
    if (!(cap > 0) || r.power_w <= cap)
        return f_req;
    solve_cap(ev, &op, f_req, cap, &r, &capped);
    return capped.effective_clock_mhz;
}

/* Anchors measured kernels (a profile's) to their measurements: a kernel
 * measured to take t_m at clock f_m takes t_m model(f) / model(f_m) at
 * clock f. The model supplies only how the time moves with the clock (its
 * compute/memory split), the measurement the level, so the model's error
 * in a kernel's level, and kernels the builders do not know, cancel.
 * A profile taken at a requested clock ran at the clock the board's
 * power limit allowed: its kernels are anchored at the effective clock
 * the model gives for that run (a fixed point: the anchors change the
 * run's power, which changes the clock; two or three rounds settle it),
 * so that predicting the profile's own clock returns its measured times,
 * throttled or not. */
static void anchor_all(wl_core_evaluator *ev)
{
    const wl_core_workload *wl = ev->wl;
    double f_req = 0;
    for (size_t u = 0; u < ev->nu; u++) {
        const wl_kernel *k = &wl->k[wl->uniq[u]];
        if (anchored(k)) {
            f_req = k->measured_mhz;
            break;
        }
    }
    if (!(f_req > 0))
        return;
    /* h(f) = capped clock with the anchors at f, less f: its root, by
     * fixed-point steps, then secant steps on h */
    double f0 = f_req, h0 = anchored_cap_clock(ev, f_req, f0) - f0;
    if (fabs(h0) < 0.05)
        return;
    double f1 = f0 + h0, h1 = anchored_cap_clock(ev, f_req, f1) - f1;
    for (int round = 0; round < 12 && fabs(h1) >= 0.05; round++) {
        double f2 = h1 != h0 ? f1 - h1 * (f1 - f0) / (h1 - h0) : f1 + h1;
        double lo = ev->gpu.sm_clock_min_mhz > 0 ? ev->gpu.sm_clock_min_mhz : 1.0;
        if (!(f2 >= lo && f2 <= f_req))
            f2 = f1 + h1;
        f0 = f1, h0 = h1;
        f1 = f2;
        h1 = anchored_cap_clock(ev, f_req, f1) - f1;
    }
    /* the anchors stay at the last clock tried */
}

static void prepare_all(wl_core_evaluator *ev)
{
    const wl_core_workload *wl = ev->wl;
    for (size_t u = 0; u < ev->nu; u++) {
        const wl_kernel *k = &wl->k[wl->uniq[u]];
        wl_kprep *p = &ev->prep[u];
        memset(p, 0, sizeof *p);
        ev->lat->prepare(&ev->gpu, k, p);
        p->count = (double)wl->ucount[u];
        p->cls = wl_core_kernel_class(k);
        p->phase = k->phase;
        p->graphed = k->graphed;
        p->sync = k->sync;
        p->anchor = 1.0;
    }
    anchor_all(ev);
}

int wl_core_evaluator_create(const wl_core_gpu *gpu, const wl_core_workload *wl,
                             const wl_core_latency_type *lat, wl_core_evaluator **out)
{
    if (!gpu || !wl || !out)
        return WL_EINVAL;
    *out = NULL;
    wl_core_evaluator *ev = calloc(1, sizeof *ev);
    if (!ev)
        return WL_ENOMEM;
    ev->gpu = *gpu;
    ev->wl = wl;
    ev->lat = lat ? lat : wl_core_latency_tiled;
    ev->nu = wl->nu;
    ev->prep = calloc(ev->nu ? ev->nu : 1, sizeof *ev->prep);
    if (!ev->prep) {
        free(ev);
        return WL_ENOMEM;
    }
    set_tiny(ev);
    for (size_t i = wl->n; i-- > 0;)
        if (wl->k[i].kind == WL_K_GAP && wl->k[i].sync) {
            ev->after_sync = i + 1;
            break;
        }
    prepare_all(ev);
    *out = ev;
    return WL_OK;
}

void wl_core_evaluator_free(wl_core_evaluator *ev)
{
    if (!ev)
        return;
    free(ev->prep);
    free(ev);
}

void wl_core_evaluator_set_gpu(wl_core_evaluator *ev, const wl_core_gpu *gpu)
{
    ev->gpu = *gpu;
    set_tiny(ev);
    prepare_all(ev);
}

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

#define TBUF 2048 /* distinct kernels whose times are cached on the stack */

/* Evaluate at one clock, no power limit. Per-kernel times live in a stack
 * buffer (no allocation, thread-safe); a workload with more distinct kernels
 * than that recomputes them in the timeline.
 *
 * Time does not depend on voltage, so energies are first summed without the
 * V^a factor (compute and L2: e_v; DRAM: e_0) and the voltage is solved
 * afterwards with the die temperature in a few scalar steps: under load the
 * V-f curve shifts by vf_temp_mhz_per_c per degree above idle (GPU Boost
 * temperature bins), and leakage rises with temperature. */
static void eval_at(const wl_core_evaluator *ev, double f_mhz, const wl_core_op *op,
                    wl_core_result *r)
{
    const wl_core_gpu *gpu = &ev->gpu;
    const wl_core_coeffs *c = &gpu->coef;
    const wl_core_workload *wl = ev->wl;
    double f = f_mhz * 1e-3;
    double idle_w = wl_core_gpu_idle_w(gpu, f_mhz);
    double cls_v[WL_CLASS_COUNT] = {0}, cls_0[WL_CLASS_COUNT] = {0};
    double ph_v[WL_PHASE_COUNT] = {0}, ph_0[WL_PHASE_COUNT] = {0};
    double ph_busy[WL_PHASE_COUNT] = {0}, ph_lat[WL_PHASE_COUNT] = {0};
    double ph_time[WL_PHASE_COUNT] = {0}, ph_done[WL_PHASE_COUNT] = {0};

    double tbuf[TBUF];
    memset(r->cls, 0, sizeof r->cls);
    memset(r->phase, 0, sizeof r->phase);
    double ec_v = 0, em_v = 0, em_0 = 0, busy_us = 0, latency_us = 0, gap_total_us = 0;
    double n_issued = 0; /* kernels the host issues one by one */
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
        double t = kernel_us(ev, p, f);
        if (u < TBUF)
            tbuf[u] = t;
        double cyc = t * f * 1e3; /* SM cycles elapsed */
        double u_tc = clamp01(p->tc_clk / cyc), u_fp = clamp01(p->fp_clk / cyc);
        double u_sfu = clamp01(p->sfu_clk / cyc), u_smem = clamp01(p->smem_clk / cyc);
        double u_l2 = clamp01(p->l2_bytes / gpu->l2_bytes_per_clk / cyc);
        /* SMs are active only after the clock-independent launch latency;
         * that latency is spent like a gap between kernels */
        double fixed_us = p->fixed_us * p->anchor;
        double active = (t - fixed_us) / t;
        /* P = c * u * V^a * f: the V^a factor is applied once V is known */
        double pc = f * (c->c_active_w * p->sm_frac * active + c->c_tc_w * p->tc_w * u_tc +
                         c->c_fp_w * u_fp + c->c_sfu_w * u_sfu + c->c_smem_w * u_smem);
        double pm = f * c->c_l2_w * u_l2;
        double p0 = c->dram_background_w * active +
                    c->e_dram_pj_per_byte * p->dram_bytes / t * 1e-6; /* pJ/us = uW */
        double ts = t * 1e-6 * p->count;
        ec_v += pc * ts;
        em_v += pm * ts;
        em_0 += p0 * ts;
        latency_us += fixed_us * p->count;
        busy_us += t * p->count;
        cs->busy_ms += t * p->count * 1e-3;
        cls_v[p->cls] += (pc + pm) * ts;
        cls_0[p->cls] += p0 * ts;
        ph_v[p->phase] += (pc + pm) * ts;
        ph_0[p->phase] += p0 * ts;
        ph_busy[p->phase] += t * p->count;
        ph_lat[p->phase] += fixed_us * p->count;
        r->phase[p->phase].flops += p->flops * p->count;
        cs->flops += p->flops * p->count;
        cs->dram_bytes += p->dram_bytes * p->count;
    }

    /* Timeline: the host issues a kernel every host_launch_us (none for a
     * kernel replayed from a CUDA graph); the GPU starts it when both the
     * launch has arrived and the previous kernel is done; a sync gap makes
     * the host wait for the GPU first. Once the GPU lags the host by more
     * than all the host time still to come, and no sync is left, the host
     * can never catch up: the rest is the remaining busy time, and the walk
     * stops early (GPU-bound workloads end in a few hundred steps whatever
     * their length). Each kernel's advance of the end is its phase's time. */
    /* Runs repeated back to back with no sync (wl_core_workload_set_repeated):
     * the host queues the next run's launches while the GPU works, so the
     * steady state is the slower of the two sides; each phase keeps its
     * share of the GPU's busy time. Such a run is an op called in a bare
     * loop: no module code around it, so it pays the bare op's issue cost
     * (host_op_launch_us), not the per-kernel cost inside a model's forward
     * (an HF forward on PyTorch 2.x spends ~20-26 us per kernel where the
     * same ops in a loop take 9-19 us: shared/data README, H100 host rows). */
    int steady = wl->repeated && ev->after_sync == 0;
    double issue_us = steady ? wl_core_coeffs_op_launch_us(c) : c->host_launch_us;
    double h = issue_us + c->launch_clk / f * 1e-3;
    /* a profile's timeline: its gaps hold the host's own measured times */
    if (wl->host_timed)
        h = 0;
    double issue = 0, end = 0, done_busy = 0;
    double host_left = n_issued * h + gap_total_us;
    if (steady) {
        end = host_left > busy_us ? host_left : busy_us;
        for (int k = 0; k < WL_PHASE_COUNT; k++)
            ph_time[k] = busy_us > 0 ? ph_busy[k] * end / busy_us : 0.0;
    }
    size_t n = steady ? 0 : wl->n;
    const size_t *ui = wl->uidx;
    for (size_t i = 0; i < n; i++) {
        const wl_kprep *p = &ev->prep[ui[i]];
        if (p->is_gap) {
            if (p->sync && end > issue)
                issue = end;
            issue += p->gap_us;
            host_left -= p->gap_us;
            continue;
        }
        if (!p->graphed) {
            issue += h;
            host_left -= h;
        }
        double start = issue > end ? issue : end;
        double t = ui[i] < TBUF ? tbuf[ui[i]] : kernel_us(ev, p, f);
        ph_time[p->phase] += start + t - end;
        end = start + t;
        done_busy += t;
        ph_done[p->phase] += t;
        if (i >= ev->after_sync && end - issue > host_left) {
            end += busy_us - done_busy;
            for (int k = 0; k < WL_PHASE_COUNT; k++)
                ph_time[k] += ph_busy[k] - ph_done[k];
            break;
        }
    }
    double total_us = end;
    if (total_us <= 0)
        total_us = 1e-9;
    double T = total_us * 1e-6;

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
    double v_tab = wl_core_gpu_voltage_mv(gpu, f_mhz);
    if ((op->voltage_mv > 0 || op->voltage_offset_mv != 0) && v_tab > 0)
        idle_w *= (v_mv / v_tab) * (v_mv / v_tab);

    r->effective_clock_mhz = f_mhz;
    r->voltage_mv = v_mv;
    r->time_ms = total_us * 1e-3;
    r->busy_ms = busy_us * 1e-3;
    r->energy_dyn_compute_j = ec_v * va;
    r->energy_dyn_memory_j = em_v * va + em_0;
    r->energy_static_j = (idle_w + p_leak) * T;
    r->energy_j = r->energy_dyn_compute_j + r->energy_dyn_memory_j + r->energy_static_j;
    r->power_w = r->energy_j / T;
    r->temp_c = c->idle_temp_c + dT;
    double wait = total_us - busy_us;
    r->launch_bound_frac = wait > 0 ? wait / total_us : 0.0;
    for (int k = 0; k < WL_CLASS_COUNT; k++)
        r->cls[k].energy_j = cls_v[k] * va + cls_0[k];
    /* phases: their kernels' dynamic energy, their gaps' clock power and
     * the static power over their time */
    double p_static = idle_w + p_leak;
    for (int k = 0; k < WL_PHASE_COUNT; k++) {
        wl_core_phase_stats *ps = &r->phase[k];
        double gk = (ph_time[k] - ph_busy[k] + ph_lat[k]) * 1e-6;
        ps->time_ms = ph_time[k] * 1e-3;
        ps->busy_ms = ph_busy[k] * 1e-3;
        ps->energy_j = ph_v[k] * va + ph_0[k] + (gk > 0 ? f * c->c_gap_w * gk * va : 0) +
                       p_static * ph_time[k] * 1e-6;
    }
}

static double op_voltage(const wl_core_gpu *gpu, const wl_core_op *op, double f_mhz)
{
    if (op->voltage_mv > 0)
        return op->voltage_mv;
    return wl_core_gpu_voltage_mv(gpu, f_mhz) + op->voltage_offset_mv;
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
    /* the governor holds the board at the set limit times the fitted share
     * it actually holds (power_cap_frac: 0.986 on the H100 at 700 W) */
    double cap = (op->power_limit_w > 0 ? op->power_limit_w : gpu->power_limit_w) *
                 gpu->coef.power_cap_frac;
    /* A clock at or above one seen throttled throttles too (power rises
     * with clock) and settles at the same cap clock: the cached result is
     * what solving again would give, bit for bit. */
    if (wl_core_throttle_cache_covers(ev, cache, op)) {
        *res = cache->at;
        res->requested_clock_mhz = f;
        res->throttled = 1;
        return WL_OK;
    }
    if (unlimited)
        *res = *unlimited;
    else
        eval_at(ev, f, op, res);
    res->requested_clock_mhz = f;
    res->throttled = 0;
    if (op->ignore_power_limit || res->power_w <= cap)
        return WL_OK;
    wl_core_result at_f = *res;
    solve_cap(ev, op, f, cap, &at_f, res);
    res->requested_clock_mhz = f;
    res->throttled = 1;
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

int wl_core_predict(const wl_core_gpu *gpu, const wl_core_workload *wl, const wl_core_op *op,
                    wl_core_result *res)
{
    wl_core_evaluator *ev = NULL;
    int rc = wl_core_evaluator_create(gpu, wl, NULL, &ev);
    if (rc)
        return rc;
    rc = wl_core_evaluator_run(ev, op, res);
    wl_core_evaluator_free(ev);
    return rc;
}
