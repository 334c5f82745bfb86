/* Evaluation: a run's time and energy at one clock, per-module power,
 * temperature-dependent leakage and the board power limit (the kernels'
 * pieces: core/kpower.c; the timeline and governor: core/governor.c; the
 * evaluator's setup and profile anchoring: core/evaluator.c). */
#include "eval_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void eval_at(const wl_core_evaluator *ev, double f_mhz, const wl_core_op *op,
                    wl_core_targets *kept, wl_core_result *r);
static void solve_cap(const wl_core_evaluator *ev, const wl_core_op *op, double f, double cap,
                      wl_core_targets *kept, const wl_core_result *at_f, wl_core_result *res);

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
                      wl_core_targets *kept, wl_core_result *r, double *kx, double *kt)
{
    const wl_core_gpu *gpu = &ev->gpu;
    const wl_core_coeffs *c = &gpu->coef;
    const wl_core_workload *wl = ev->wl;
    double f = f_mhz * 1e-3;
    double idle_w = wl_core_gpu_idle_w(gpu, f_mhz);
    double cap = wl_core_i_op_cap_w(gpu, op);
    wl_core_i_sums s = {0};

    double tbuf[WL_CORE_TBUF], gbuf[WL_CORE_TBUF], tgbuf[WL_CORE_TBUF];
    memset(r->cls, 0, sizeof r->cls);
    memset(r->phase, 0, sizeof r->phase);
    double gap_total_us = 0;
    double n_issued = 0; /* kernels the host issues one by one */
    double n_ph[WL_PHASE_COUNT] = {0}, n_drv = 0; /* of them: by phase, libraries' second kernels */
    int held = 0;        /* some kernel draws more than the cap at f */
    /* the kernel that draws the most at f, by the quick estimate */
    double peak_quick = 0, peak_dyn_v = 0, peak_dyn_0 = 0;
    double v_f = wl_core_i_op_voltage(gpu, op, f_mhz);
    double va_f = pow(v_f > 0 ? v_f * 1e-3 : 0, c->v_exponent);
    double idle_f = wl_core_i_op_idle_w(gpu, op, f_mhz, v_f);
    if (kept && !(kept->serial == ev->serial && kept->cap == cap &&
                  kept->voltage_mv == op->voltage_mv &&
                  kept->voltage_offset_mv == op->voltage_offset_mv)) {
        kept->serial = ev->serial;
        kept->cap = cap;
        kept->voltage_mv = op->voltage_mv;
        kept->voltage_offset_mv = op->voltage_offset_mv;
        for (size_t u = 0; u < ev->nu && u < WL_CORE_TBUF; u++)
            kept->k[u].top = 0;
    }
    for (size_t u = 0; u < ev->nu; u++) {
        const wl_kprep *p = &ev->prep[u];
        wl_core_class_stats *cs = &r->cls[p->cls];
        cs->launches += (long long)p->count;
        r->phase[p->phase].launches += (long long)p->count;
        if (p->is_gap) {
            gap_total_us += p->gap_us * p->count;
            continue;
        }
        if (!p->graphed) {
            n_issued += p->count;
            if (p->internal)
                n_drv += p->count;
            else
                n_ph[p->phase] += p->count;
        }
        r->phase[p->phase].flops += p->flops * p->count;
        cs->flops += p->flops * p->count;
        cs->dram_bytes += p->dram_bytes * p->count;
        double t = wl_core_i_kernel_us(ev, p, f), g = f_mhz, t_g = t, pc, pm, p0;
        wl_core_i_kernel_power(ev, p, f, t, &pc, &pm, &p0);
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
            p_f = wl_core_i_board_w(ev, op, f_mhz, pc + pm + pg, p0);
        wl_core_i_kernel_target(ev, op, p, f_mhz, t, p_f, cap,
                                kept && u < WL_CORE_TBUF ? &kept->k[u] : NULL, &g, &t_g);
        if (g < f_mhz)
            held = 1;
        if (u < WL_CORE_TBUF) {
            tbuf[u] = t;
            gbuf[u] = g;
            tgbuf[u] = t_g;
        }
        if (kx) {
            kx[u] = f_mhz;
            kt[u] = t * p->count;
        }
        wl_core_i_add_parts(p, t, f_mhz, p->count, p->count, pc, pm, p0, &s, r);
    }
    double busy_us = s.busy_us;

    /* The host's issue cost per kernel (the timeline: core/governor.c).
     * Runs repeated back to back with no sync (wl_core_workload_set_repeated)
     * are an op called in a bare loop: no module code around it, so they
     * pay the bare op's issue cost
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
    /* Per phase and per launch: a generation's decode steps run generate's
     * loop, a warm and repeated graph of Python calls (host_decode_launch_us
     * where the host states it); a library's second kernel inside one op
     * (cuBLAS split-K's reduce) costs the host a driver launch only
     * (host_driver_launch_us), not another op's dispatch and module code. */
    double h_drv = c->host_driver_launch_us > 0 ? c->host_driver_launch_us + (h - issue_us) : h;
    /* the other phases where the host states them, else the workload's own
     * (wl_core_coeffs_phase_launch_us: a step's backward and optimizer
     * follow its cost, a decode step the forward's, which are issue_us) */
    double h_ph[WL_PHASE_COUNT] = {[WL_PHASE_FORWARD] = h};
    for (int k = WL_PHASE_FORWARD + 1; k < WL_PHASE_COUNT; k++)
        h_ph[k] = steady ? h : wl_core_coeffs_phase_launch_us(c, k) + (h - issue_us);
    /* a profile's timeline: its gaps hold the host's own measured times */
    if (wl->host_timed) {
        h_drv = 0;
        for (int k = 0; k < WL_PHASE_COUNT; k++)
            h_ph[k] = 0;
    }
    double host_us = n_drv * h_drv;
    for (int k = 0; k < WL_PHASE_COUNT; k++)
        host_us += n_ph[k] * h_ph[k];
    wl_core_i_walk_in in = {.f_mhz = f_mhz, .cap = cap, .va_f = va_f, .idle_f = idle_f,
                            .h_drv = h_drv,
                            .host_left = host_us + gap_total_us, .held = held,
                            .tbuf = tbuf, .gbuf = gbuf, .tgbuf = tgbuf};
    memcpy(in.h_ph, h_ph, sizeof h_ph);
    double ph_time[WL_PHASE_COUNT] = {0};
    double end = wl_core_i_timeline(ev, op, &in, &s, r, kx, kt, ph_time);
    if (held)
        busy_us = s.busy_us;
    double total_us = end;
    if (total_us <= 0)
        total_us = 1e-9;
    double T = total_us * 1e-6;
    double ec_v = s.ec_v, em_v = s.em_v, em_0 = s.em_0, latency_us = s.latency_us;

    /* Power counted once. Between kernels, while the GPU waits on the
     * host, the clocks keep toggling (c_gap_w f V^a: not gated at
     * microsecond scale), but the idle table is taken at each locked
     * clock, so it already holds the clock power an idle die draws there:
     * P_idle(f) = P_0 + k_idle f V^a, which the static part below charges
     * over the whole runtime, gaps included. So a gap adds only
     *     (c_gap_w - k_idle) f V^a      (ev->gap_w; k_idle from the
     * table's slope where the voltage is flat, wl_core_gpu_idle_clock_w).
     * Charging all of c_gap_w counted k_idle twice: on host-bound rows
     * (decode, small prefill) that measure 4-7 W above idle it added 16-20
     * W at 1980 MHz. A kernel's own launch latency (its fixed microseconds,
     * the front end and the SMs filling and draining) is not idle: it
     * pays c_gap_w whole. */
    double gap_s = (total_us - busy_us) * 1e-6;
    ec_v += f * (c->c_gap_w * latency_us * 1e-6 + (gap_s > 0 ? ev->gap_w * gap_s : 0));

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
    idle_w = wl_core_i_op_idle_w(gpu, op, f_mhz, v_mv);

    r->requested_clock_mhz = f_mhz;
    /* the clock NVML would average: each kernel's own, the request between */
    r->effective_clock_mhz = held ? (s.clk_us + (total_us - busy_us) * f_mhz) / total_us : f_mhz;
    r->throttled = held;
    r->peak_power_w = peak_quick > 0 ? wl_core_i_board_w(ev, op, f_mhz, peak_dyn_v, peak_dyn_0) : 0.0;
    /* the voltage the clock ran at: held below the request, the curve's
     * at the effective clock on the hot die, plus the offset, not the
     * request's (a 1980 MHz request held at 1294 MHz runs near 830 mV, not
     * 1025); a fixed voltage is what it is */
    r->voltage_mv = held && !(op->voltage_mv > 0)
                        ? wl_core_gpu_voltage_mv(gpu, r->effective_clock_mhz +
                                                          c->vf_temp_mhz_per_c * dT) +
                              op->voltage_offset_mv
                        : v_mv;
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
    /* phases: their kernels' dynamic energy, their launch latencies' and
     * host gaps' clock power (as above) and the static power over their time */
    double p_static = idle_w + p_leak;
    for (int k = 0; k < WL_PHASE_COUNT; k++) {
        wl_core_phase_stats *ps = &r->phase[k];
        double gk = s.ph_lat[k] * 1e-6, gh = (ph_time[k] - s.ph_busy[k]) * 1e-6;
        ps->time_ms = ph_time[k] * 1e-3;
        ps->busy_ms = s.ph_busy[k] * 1e-3;
        ps->energy_j = s.ph_v[k] * va + s.ph_0[k] + f * (c->c_gap_w * gk + (gh > 0 ? ev->gap_w * gh : 0)) * va +
                       p_static * ph_time[k] * 1e-6 + s.ph_idle_dj[k];
    }
}

static void eval_at(const wl_core_evaluator *ev, double f_mhz, const wl_core_op *op,
                    wl_core_targets *kept, wl_core_result *r)
{
    eval_core(ev, f_mhz, op, kept, r, NULL, NULL);
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
                      wl_core_targets *kept, const wl_core_result *at_f, wl_core_result *res)
{
    const wl_core_gpu *gpu = &ev->gpu;
    double top = f > gpu->sm_clock_max_mhz ? f : gpu->sm_clock_max_mhz;
    double floor_mhz = wl_core_gpu_floor_mhz(gpu), fmin_ = floor_mhz < f ? floor_mhz : f;
    wl_core_result tmp, hi_r;
    if (top == f)
        hi_r = *at_f;
    else
        eval_at(ev, top, op, kept, &hi_r);
    /* q(x) = log((P - idle) / (cap - idle)): power above idle is close to a
     * power law in the clock (f^g V^a), so q is nearly linear in log x */
    double lo = fmin_, hi = top, qlo = NAN, qhi;
    double ih = wl_core_gpu_idle_w(gpu, top);
    /* no range to search (the floor at the top): the floor is the answer;
     * the loop below would not evaluate once (a zero result: issue 77) */
    if (!(cap > ih) || !(hi_r.power_w > ih) || !(hi - lo > 1e-3)) {
        eval_at(ev, fmin_, op, kept, &tmp);
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
        eval_at(ev, x, op, kept, &tmp);
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
    if (!(wl_core_i_op_voltage(gpu, op, f) > 0))
        return WL_EINVAL;
    double cap = wl_core_i_op_cap_w(gpu, op);
    /* the held kernels' targets, found once for the run and its solve, or
     * kept across a scan */
    wl_core_targets own, *kept = cache && cache->targets ? cache->targets : &own;
    own.cap = NAN;
    /* the result without the limit stands when no kernel draws more than
     * the cap: otherwise the governor holds those kernels */
    if (unlimited && !(cap > 0 && unlimited->peak_power_w > cap))
        *res = *unlimited;
    else
        eval_at(ev, f, op, kept, res);
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
    solve_cap(ev, op, f, cap, kept, &at_f, res);
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

wl_core_targets *wl_core_targets_create(void)
{
    wl_core_targets *t = malloc(sizeof *t);
    if (t)
        t->cap = NAN; /* holds nothing yet */
    return t;
}

void wl_core_targets_free(wl_core_targets *t) { free(t); }

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
    eval_core(ev, f_mhz, op, NULL, r, kx, kt);
}

void wl_core_i_solve_cap(const wl_core_evaluator *ev, const wl_core_op *op, double f, double cap,
                         const wl_core_result *at_f, wl_core_result *res)
{
    solve_cap(ev, op, f, cap, NULL, at_f, res);
}
