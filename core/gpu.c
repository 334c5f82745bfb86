/* GPU description helpers: V-f and idle interpolation, validation, priors. */
#include "core_internal.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* Piecewise-linear interpolation over ascending x, clamped at the ends;
 * *hint (NULL: none) is the interval found last, where a caller's
 * arguments move slowly (core/governor.c's walk): the search starts there
 * and finds the same interval as the bisection. */
double wl_core_i_interp(const double *x, const double *y, int n, double at, int *hint)
{
    if (n <= 0)
        return 0.0;
    if (at <= x[0] || n == 1)
        return y[0];
    if (at >= x[n - 1])
        return y[n - 1];
    int lo = 0;
    if (hint) {
        lo = *hint < 0 ? 0 : (*hint > n - 2 ? n - 2 : *hint);
        while (lo > 0 && x[lo] > at)
            lo--;
        while (lo < n - 2 && x[lo + 1] <= at)
            lo++;
        *hint = lo;
    } else {
        int hi = n - 1;
        while (hi - lo > 1) {
            int mid = (lo + hi) / 2;
            if (x[mid] <= at)
                lo = mid;
            else
                hi = mid;
        }
    }
    double t = (at - x[lo]) / (x[lo + 1] - x[lo]);
    return y[lo] + t * (y[lo + 1] - y[lo]);
}

static double interp(const double *x, const double *y, int n, double at)
{
    return wl_core_i_interp(x, y, n, at, NULL);
}

double wl_core_gpu_voltage_mv(const wl_core_gpu *gpu, double sm_clock_mhz)
{
    return interp(gpu->vf.clock_mhz, gpu->vf.voltage_mv, gpu->vf.n, sm_clock_mhz);
}

double wl_core_gpu_idle_w(const wl_core_gpu *gpu, double sm_clock_mhz)
{
    return interp(gpu->vf.clock_mhz, gpu->vf.idle_w, gpu->vf.n, sm_clock_mhz);
}

/* Alpha-power law: gate delay ~ V / (V - Vth)^alpha, so f_max ~ (V - Vth)^alpha / V.
 * The top of the vendor V-f curve, less its guardband, is on the critical
 * line; everything else scales from there. */
static double alpha_g(const wl_core_gpu *gpu, double v_mv)
{
    double d = v_mv - gpu->vth_mv;
    return d > 0 ? pow(d, gpu->alpha_power) / v_mv : 0.0;
}

/* The clock power an idle die draws, as the idle table holds it: where the
 * voltage is flat (below the knee) the table's rise with the clock is
 * clock power alone, P_idle(f) = P_0 + k f V^a, so k is the least-squares
 * slope there (W per GHz) over V_floor^a. Below the H100's knee the table
 * rises 1.5 W from 360 to 990 MHz at 720 mV: k = 4.5 W/GHz at 1 V (a = 2);
 * the A100 PCIe's 3.7 W from 210 to 990 MHz at 694 mV: 9.8. Needs 200 MHz
 * of flat voltage; 0 otherwise (nothing to subtract). */
double wl_core_gpu_idle_clock_w(const wl_core_gpu *gpu)
{
    const wl_core_vf *t = &gpu->vf;
    if (t->n < 2)
        return 0.0;
    double v0 = t->voltage_mv[0], sx = 0, sy = 0, sxx = 0, sxy = 0;
    int m = 0;
    for (int i = 0; i < t->n && fabs(t->voltage_mv[i] - v0) <= 1.0; i++, m++) {
        double x = t->clock_mhz[i] * 1e-3, y = t->idle_w[i];
        sx += x;
        sy += y;
        sxx += x * x;
        sxy += x * y;
    }
    if (m < 2 || t->clock_mhz[m - 1] - t->clock_mhz[0] < 200.0)
        return 0.0;
    double den = m * sxx - sx * sx;
    double k = den > 0 ? (m * sxy - sx * sy) / den : 0.0;
    double va = pow(v0 * 1e-3, gpu->coef.v_exponent);
    return k > 0 && va > 0 ? k / va : 0.0;
}

/* sm_clock_min_mhz is the lowest clock a user may lock (nvidia-smi -lgc);
 * the governor holding a power limit goes below it where it must, down to
 * the lowest clock the board has a voltage and idle power for (its V-f
 * table's first), as a cap is enforced whatever the locked range (issue
 * 77: --set sm_clock_min_mhz=1979 drew 890 W on a 700 W H100). The
 * presets' ranges start at that clock or below it, so for them it is
 * sm_clock_min_mhz. */
double wl_core_gpu_floor_mhz(const wl_core_gpu *gpu)
{
    double f = gpu->sm_clock_min_mhz;
    if (gpu->vf.n && gpu->vf.clock_mhz[0] > 0 && gpu->vf.clock_mhz[0] < f)
        f = gpu->vf.clock_mhz[0];
    return f > 0 ? f : 1.0;
}

double wl_core_gpu_fmax_mhz(const wl_core_gpu *gpu, double voltage_mv)
{
    double f_top, v_top;
    if (gpu->vf_anchor_mhz > 0 && gpu->vf_anchor_mv > 0) {
        f_top = gpu->vf_anchor_mhz;
        v_top = gpu->vf_anchor_mv - gpu->vf_guardband_mv;
    } else {
        f_top = gpu->vf.n ? gpu->vf.clock_mhz[gpu->vf.n - 1] : gpu->sm_clock_max_mhz;
        v_top = wl_core_gpu_voltage_mv(gpu, f_top) - gpu->vf_guardband_mv;
    }
    double g_top = alpha_g(gpu, v_top);
    return g_top > 0 ? f_top * alpha_g(gpu, voltage_mv) / g_top : 0.0;
}

int wl_core_gpu_feasible(const wl_core_gpu *gpu, double sm_clock_mhz, double voltage_mv)
{
    return sm_clock_mhz <= wl_core_gpu_fmax_mhz(gpu, voltage_mv) * (1 + 1e-9);
}

/* ---- clock grid ------------------------------------------------------------
 * The clocks a GPU is locked to in practice (nvidia-smi -lgc takes any clock
 * and snaps it to the driver's table, which steps sm_clock_step_mhz from the
 * minimum): min, min + step, ..., and the maximum itself, so a scan always
 * reaches the top clock. */

size_t wl_core_gpu_clock_count(const wl_core_gpu *g)
{
    if (!(g->sm_clock_step_mhz > 0) || !(g->sm_clock_max_mhz >= g->sm_clock_min_mhz))
        return 1;
    double span = (g->sm_clock_max_mhz - g->sm_clock_min_mhz) / g->sm_clock_step_mhz;
    if (!(span < (double)WL_LIST_MAX))
        span = (double)WL_LIST_MAX;
    size_t n = (size_t)floor(span + 1e-9) + 1;
    double last = g->sm_clock_min_mhz + (double)(n - 1) * g->sm_clock_step_mhz;
    return last < g->sm_clock_max_mhz - 1e-6 ? n + 1 : n;
}

double wl_core_gpu_clock(const wl_core_gpu *g, size_t i)
{
    double f = g->sm_clock_min_mhz + (double)i * g->sm_clock_step_mhz;
    return f > g->sm_clock_max_mhz || i + 1 >= wl_core_gpu_clock_count(g) ? g->sm_clock_max_mhz : f;
}

int wl_core_gpu_clock_in_range(const wl_core_gpu *g, double mhz)
{
    return mhz >= g->sm_clock_min_mhz - 1e-9 && mhz <= g->sm_clock_max_mhz + 1e-9;
}

int wl_core_gpu_clock_check(const wl_core_gpu *g, double mhz, const char *source, int line,
                            wl_error *err)
{
    if (wl_core_gpu_clock_in_range(g, mhz))
        return WL_OK;
    char t[WL_CORE_NUM_TEXT];
    wl_core_num_text(t, sizeof t, mhz);
    wl_error_set(err, source, line, "clock",
                 "%s MHz is outside %s's range %.0f-%.0f MHz (its V-f curve is not defined "
                 "there; give a fixed voltage to force it)",
                 t, g->id, g->sm_clock_min_mhz, g->sm_clock_max_mhz);
    return WL_EINVAL;
}

int wl_core_gpu_runs(const wl_core_gpu *gpu, const wl_core_workload *wl, wl_error *err)
{
    for (size_t i = 0; i < wl_core_workload_count(wl); i++) {
        const wl_kernel *k = wl_core_workload_kernel(wl, i);
        if (k->kind != WL_K_GEMM && k->kind != WL_K_ATTN_FLASH)
            continue;
        wl_dtype dt = k->in_dtype;
        if (dt == WL_DT_TF32 && !(gpu->tc_flop_per_clk_sm[dt] > 0))
            dt = WL_DT_FP32;
        int tc = k->tensor_core && gpu->tc_flop_per_clk_sm[dt] > 0;
        if (!tc && !(gpu->cuda_flop_per_clk_sm[dt] > 0)) {
            wl_error_set(err, gpu->id, 0, "dtype", "%s has no %s math (neither tensor cores nor "
                         "CUDA cores)", gpu->id, wl_dtype_name(k->in_dtype));
            return WL_EINVAL;
        }
    }
    return WL_OK;
}

double wl_core_coeffs_op_launch_us(const wl_core_coeffs *c)
{
    return c->host_op_launch_us > 0 ? c->host_op_launch_us : c->host_launch_us;
}

double wl_core_coeffs_train_launch_us(const wl_core_coeffs *c)
{
    return c->host_train_launch_us > 0 ? c->host_train_launch_us : c->host_launch_us;
}

/* The host's cost per kernel by phase. In a training step the forward
 * records the autograd graph, the backward's kernels come from the
 * autograd engine's thread, one node at a time, and AdamW's foreach ops
 * group and walk every parameter tensor on the host: three costs, measured
 * apart where a host states them (measure host times a forward with
 * autograd, a forward and backward, and a whole step), else one for the
 * step. A generation's decode steps run generate's warm loop: its own cost
 * where stated, else the forward's. */
double wl_core_coeffs_phase_launch_us(const wl_core_coeffs *c, int ph)
{
    if (ph == WL_PHASE_DECODE)
        return c->host_decode_launch_us > 0 ? c->host_decode_launch_us : c->host_launch_us;
    double v = ph == WL_PHASE_BACKWARD    ? c->host_backward_launch_us
               : ph == WL_PHASE_OPTIMIZER ? c->host_optimizer_launch_us
                                          : 0;
    return v > 0 ? v : wl_core_coeffs_train_launch_us(c);
}

double wl_core_coeffs_engine_step_us(const wl_core_coeffs *c, double seqs)
{
    return c->host_serve_step_us + c->host_serve_seq_us * seqs;
}

int wl_core_coef_is_host(const char *name)
{
    return !strncmp(name, "host_", 5);
}

/* A host's costs, each in [0, hi] us (launch_us, the first, positive): the
 * one list the check and the host preset's reader and writer go by. */
static const struct {
    const char *key;
    size_t off;
    double hi;
} host_costs[] = {
        {"launch_us", offsetof(wl_core_host, launch_us), 10000},
        {"launch_us_stderr", offsetof(wl_core_host, launch_us_stderr), 10000},
        {"op_launch_us", offsetof(wl_core_host, op_launch_us), 10000},
        {"op_launch_us_stderr", offsetof(wl_core_host, op_launch_us_stderr), 10000},
        {"train_launch_us", offsetof(wl_core_host, train_launch_us), 10000},
        {"train_launch_us_stderr", offsetof(wl_core_host, train_launch_us_stderr), 10000},
        {"backward_launch_us", offsetof(wl_core_host, backward_launch_us), 10000},
        {"backward_launch_us_stderr", offsetof(wl_core_host, backward_launch_us_stderr), 10000},
        {"optimizer_launch_us", offsetof(wl_core_host, optimizer_launch_us), 10000},
        {"optimizer_launch_us_stderr", offsetof(wl_core_host, optimizer_launch_us_stderr), 10000},
        {"decode_launch_us", offsetof(wl_core_host, decode_launch_us), 10000},
        {"driver_launch_us", offsetof(wl_core_host, driver_launch_us), 1000},
        {"serve_step_us", offsetof(wl_core_host, serve_step_us), 100000},
        {"serve_seq_us", offsetof(wl_core_host, serve_seq_us), 10000},
};
#define N_HOST_COSTS (sizeof host_costs / sizeof *host_costs)

const char *wl_core_host_cost(size_t i, size_t *off, double *hi)
{
    if (i >= N_HOST_COSTS)
        return NULL;
    *off = host_costs[i].off;
    *hi = host_costs[i].hi;
    return host_costs[i].key;
}

int wl_core_host_check(const wl_core_host *host, wl_error *err)
{
    const char *src = host->id[0] ? host->id : "host";
    for (size_t i = 0; i < N_HOST_COSTS; i++) {
        double v = *(const double *)(const void *)((const char *)host + host_costs[i].off);
        int open = i == 0;
        if (!((open ? v > 0 : v >= 0) && v <= host_costs[i].hi)) {
            wl_error_set(err, src, 0, host_costs[i].key, "must be in %s0, %g] us", open ? "(" : "[",
                         host_costs[i].hi);
            return WL_EINVAL;
        }
    }
    return WL_OK;
}

void wl_core_gpu_set_host(wl_core_gpu *gpu, const wl_core_host *host)
{
    gpu->coef.host_launch_us = host->launch_us;
    gpu->coef.host_op_launch_us = host->op_launch_us;
    gpu->coef.host_train_launch_us = host->train_launch_us;
    gpu->coef.host_backward_launch_us = host->backward_launch_us;
    gpu->coef.host_optimizer_launch_us = host->optimizer_launch_us;
    gpu->coef.host_decode_launch_us = host->decode_launch_us;
    gpu->coef.host_driver_launch_us = host->driver_launch_us;
    gpu->coef.host_serve_step_us = host->serve_step_us;
    gpu->coef.host_serve_seq_us = host->serve_seq_us;
    snprintf(gpu->host_id, sizeof gpu->host_id, "%s", host->id);
}

/* Uncalibrated priors for an Ampere-class datacenter GPU. They are starting
 * points for calibration, not results: every shipped preset overrides them. */
void wl_core_coeffs_default(wl_core_coeffs *c)
{
    memset(c, 0, sizeof *c);
    c->tc_eff = 0.85;           /* cuBLAS bf16 GEMMs reach ~85-90% of peak on A100 */
    c->cuda_eff = 0.90;         /* cuBLAS SGEMM reaches ~18 of 19.5 TFLOPS on A100 */
    c->alu_eff = 0.3;           /* ~3 issue slots of address/convert/load per op */
    c->dram_eff = 0.85;         /* STREAM-like copy reaches ~85% of HBM peak */
    c->l2_eff = 0.70;
    c->mem_bytes_per_clk = 1500.0; /* ~ HBM2 bandwidth at ~1 GHz */
    c->mem_path_gbs = 10000.0;
    c->overlap_p = 3.0;
    c->tile_overhead_clk = 2000.0; /* pipeline fill (3 stages x ~600 clk) + epilogue */
    c->kernel_fixed_us = 2.5;   /* launch latency + drain, a few us on A100 */
    c->kernel_fixed_clk = 2000.0;
    c->host_launch_us = 30.0;   /* eager PyTorch op dispatch, ~20-40 us */
    /* a library's second kernel inside one op is launched by the library
     * (cublasLt, cuDNN) from C++: no Python, no dispatcher, only the
     * driver's launch call, 2-4 us on current hosts. Unstated (0) it costs
     * the op's own: a host's launch_us fitted to PyTorch's kernel count
     * already spreads the op's cost over both (server-2023, fitted to GPT-2
     * b1 s8 forwards whose projections split K, rose from 20.7 to 23.3 us a
     * kernel with the reduces at 3 us, and this repository's H200 board B's
     * whole models went from 7.8 to 16.7% time) */
    c->host_driver_launch_us = 0.0;
    c->launch_clk = 500.0;
    c->v_exponent = 2.0;
    c->c_active_w = 40.0;
    c->c_gap_w = 10.0;
    /* per-op energies at 1 V, times the chip's ops per GHz: ~1.2 pJ per
     * tensor-core flop (A100 board: ~1.3 pJ/op all-in at 400 W, 312 TFLOPS),
     * ~18 pJ per FP32 thread instruction with its register-file traffic
     * (Horowitz ISSCC'14 scaled to 7 nm) */
    c->c_tc_w = 270.0;
    c->c_fp_w = 130.0;
    c->c_sfu_w = 20.0;
    c->c_smem_w = 40.0;
    c->c_l2_w = 40.0;
    c->e_dram_pj_per_byte = 31.0; /* HBM2 ~3.9 pJ/bit (O'Connor et al., MICRO'17) */
    c->dram_background_w = 10.0;
    c->leak_w_per_c = 0.5;
    c->vf_temp_mhz_per_c = 3.0; /* GPU Boost: ~15 MHz bin per ~5 C */
    c->thermal_c_per_w = 0.1;   /* ~15 C from 90 to 240 W in shared/data */
    c->idle_temp_c = 50.0;
    c->power_cap_frac = 0.96;
}

#define CHECK(cond, field, ...)                                                    \
    do {                                                                           \
        if (!(cond)) {                                                             \
            wl_error_set(err, gpu->id, 0, field, __VA_ARGS__);                     \
            return WL_EINVAL;                                                      \
        }                                                                          \
    } while (0)

void wl_core_gpu_vf_rule_from_table(wl_core_gpu *gpu)
{
    const wl_core_vf *t = &gpu->vf;
    if (t->n < 2)
        return;
    if (!(gpu->vf_vmin_mv > 0))
        gpu->vf_vmin_mv = t->voltage_mv[0];
    if (!(gpu->vf_vmax_mv > 0))
        gpu->vf_vmax_mv = t->voltage_mv[t->n - 1];
    if (!(gpu->vf_knee_mhz > 0)) {
        int k = 0;
        while (k + 1 < t->n && t->voltage_mv[k + 1] <= t->voltage_mv[0] + 1.0)
            k++;
        gpu->vf_knee_mhz = t->clock_mhz[k];
    }
    if (!(gpu->idle_min_w > 0))
        gpu->idle_min_w = t->idle_w[0];
    if (!(gpu->idle_max_w > 0))
        gpu->idle_max_w = t->idle_w[t->n - 1];
}

int wl_core_gpu_vf_rule(wl_core_gpu *gpu, wl_error *err)
{
    wl_core_vf *t = &gpu->vf;
    double f_lo = gpu->sm_clock_min_mhz, f_hi = gpu->sm_clock_max_mhz;
    if (!(f_hi > f_lo && f_lo > 0)) {
        wl_error_set(err, gpu->id, 0, "sm_clock_max_mhz", "the rule needs a clock range");
        return WL_EINVAL;
    }
    if (gpu->vf_rule & WL_VF_RULE_VOLTAGE) {
        if (!(gpu->vf_vmin_mv > 0 && gpu->vf_vmax_mv >= gpu->vf_vmin_mv)) {
            wl_error_set(err, gpu->id, 0, "vmin_mv", "needs 0 < vmin_mv <= vmax_mv");
            return WL_EINVAL;
        }
        if (!(gpu->vf_knee_mhz >= f_lo && gpu->vf_knee_mhz <= f_hi)) {
            wl_error_set(err, gpu->id, 0, "vf_knee_mhz", "must lie within the clock range");
            return WL_EINVAL;
        }
    }
    if ((gpu->vf_rule & WL_VF_RULE_IDLE) &&
        !(gpu->idle_min_w > 0 && gpu->idle_max_w >= gpu->idle_min_w &&
          gpu->idle_clock_slope >= 0)) {
        wl_error_set(err, gpu->id, 0, "idle_power_min_w",
                     "needs 0 < idle_power_min_w <= idle_power_max_w, idle_clock_slope >= 0");
        return WL_EINVAL;
    }
    if (t->n < 2) {
        /* knots on the clock grid, at most 64 of them */
        double step = gpu->sm_clock_step_mhz > 0 ? gpu->sm_clock_step_mhz : 15.0;
        while ((f_hi - f_lo) / step > 63.0)
            step *= 2.0;
        int n = 0;
        for (double f = f_lo; f < f_hi - 1e-9 && n < WL_VF_MAX - 1; f += step)
            t->clock_mhz[n++] = f;
        t->clock_mhz[n++] = f_hi;
        /* the knee itself is a knot, so the corner is exact */
        if (gpu->vf_rule & WL_VF_RULE_VOLTAGE && n < WL_VF_MAX) {
            double kf = gpu->vf_knee_mhz;
            int at = 0;
            while (at < n && t->clock_mhz[at] < kf)
                at++;
            if (at < n && fabs(t->clock_mhz[at] - kf) > 1e-9) {
                memmove(&t->clock_mhz[at + 1], &t->clock_mhz[at], (size_t)(n - at) * sizeof(double));
                t->clock_mhz[at] = kf;
                n++;
            }
        }
        t->n = n;
    }
    double vmin = gpu->vf_vmin_mv, vmax = gpu->vf_vmax_mv, knee = gpu->vf_knee_mhz;
    for (int i = 0; i < t->n; i++) {
        double f = t->clock_mhz[i];
        if (gpu->vf_rule & WL_VF_RULE_VOLTAGE)
            t->voltage_mv[i] = f <= knee || f_hi <= knee
                                   ? vmin
                                   : vmin + (vmax - vmin) * (fmin(f, f_hi) - knee) / (f_hi - knee);
    }
    if (gpu->vf_rule & WL_VF_RULE_IDLE) {
        double s = gpu->idle_clock_slope;
        double v_lo = t->voltage_mv[0], v_hi = wl_core_gpu_voltage_mv(gpu, f_hi);
        double clk_top = gpu->idle_min_w * (1.0 + s * (f_hi - f_lo) / f_hi);
        double d = gpu->idle_max_w - clk_top;
        for (int i = 0; i < t->n; i++) {
            double f = t->clock_mhz[i];
            double u = v_hi > v_lo ? (t->voltage_mv[i] - v_lo) / (v_hi - v_lo) : (f - f_lo) / (f_hi - f_lo);
            t->idle_w[i] = gpu->idle_min_w * (1.0 + s * (f - f_lo) / f_hi) + d * u;
        }
    }
    return WL_OK;
}

static double tc_rate(const wl_core_gpu *g, wl_dtype *dt)
{
    if (g->tc_flop_per_clk_sm[WL_DT_BF16] > 0) {
        *dt = WL_DT_BF16;
        return g->tc_flop_per_clk_sm[WL_DT_BF16];
    }
    *dt = WL_DT_FP16;
    return g->tc_flop_per_clk_sm[WL_DT_FP16];
}

/* The die, not the board: the SMs, the L2 and the node. The top clock is
 * the bin's: a lower bin of one die (--set sm_clock_max_mhz=1500 on an
 * H100) keeps its SMs' bytes in flight per clock, so its kernels at 990
 * MHz take what the full bin's do (the bandwidth rule below, which scaled
 * them by the top clocks' ratio, made them 4.8% faster). */
int wl_core_gpu_same_die(const wl_core_gpu *a, const wl_core_gpu *b)
{
    return a->sms == b->sms && a->l2_size_mb == b->l2_size_mb && a->process_nm == b->process_nm;
}

/* Transfer rules. A coefficient c in P = c u V^a f is a switched
 * capacitance of the whole chip at full activity, so it scales with the
 * number of units that switch (SMs x per-SM rate) and with the energy per
 * operation of the node (wl_core_node_energy_scale). Latency
 * efficiencies, per-kernel and host costs are properties of the software
 * stack and the SM design and stay. The DRAM energy per byte is split into
 * the device + PHY part (technology table) and the on-die part (controller,
 * NoC: the rest of the fitted value), which scales with the node. The miss
 * path keeps the same balance to the DRAM bandwidth at f_max (designers size
 * in-flight capacity for their bandwidth: Little's law), except on the same
 * die with a faster memory, whose in-flight capacity is the die's. Leakage scales with
 * the idle power at the lowest clock (static-dominated), thermal resistance
 * with 1/TDP (the cooler is sized to the TDP). */
int wl_core_gpu_transfer(const wl_core_gpu *src, wl_core_gpu *dst, wl_error *err)
{
    if (!(src->process_nm > 0) || !(dst->process_nm > 0)) {
        wl_error_set(err, src->process_nm > 0 ? dst->id : src->id, 0, "process_nm",
                     "needed to transfer coefficients");
        return WL_EINVAL;
    }
    double pj_s = wl_core_gpu_dram_pj_per_bit(src), pj_d = wl_core_gpu_dram_pj_per_bit(dst);
    if (!(pj_s > 0) || !(pj_d > 0)) {
        wl_error_set(err, pj_s > 0 ? dst->id : src->id, 0, "dram_type",
                     "unknown memory technology '%s' (HBM2, HBM2e, HBM3, HBM3e, GDDR6, GDDR6X, GDDR5)",
                     pj_s > 0 ? dst->dram_type : src->dram_type);
        return WL_EINVAL;
    }
    wl_dtype dts, dtd;
    double tcs = tc_rate(src, &dts), tcd = tc_rate(dst, &dtd);
    const wl_core_coeffs *a = &src->coef;
    wl_core_coeffs c = *a;
    double node = wl_core_node_energy_scale(src->process_nm, dst->process_nm);
    double n_sm = (double)dst->sms / src->sms;
    double tc_ratio = tcs > 0 && tcd > 0 ? (dst->sms * tcd) / (src->sms * tcs) : n_sm;
    double fp_ratio = (dst->sms * dst->cuda_flop_per_clk_sm[WL_DT_FP32]) /
                      (src->sms * src->cuda_flop_per_clk_sm[WL_DT_FP32]);
    double smem_ratio = (dst->sms * dst->smem_bytes_per_clk_sm) / (src->sms * src->smem_bytes_per_clk_sm);
    double sfu_ratio = (dst->sms * dst->sfu_op_per_clk_sm) / (src->sms * src->sfu_op_per_clk_sm);
    c.c_active_w = a->c_active_w * n_sm * node;
    c.c_gap_w = a->c_gap_w * n_sm * node;
    /* energy per operation or byte: the [technology] figures where given,
     * else the node law; defaults on both sides reduce to `node` */
    double e_tc = wl_core_gpu_op_pj(dst, dtd, 1) / wl_core_gpu_op_pj(src, dts, 1);
    double e_fp = wl_core_gpu_op_pj(dst, WL_DT_FP32, 0) / wl_core_gpu_op_pj(src, WL_DT_FP32, 0);
    double e_sm = wl_core_gpu_smem_pj_per_byte(dst) / wl_core_gpu_smem_pj_per_byte(src);
    double e_l2 = wl_core_gpu_l2_pj_per_byte(dst) / wl_core_gpu_l2_pj_per_byte(src);
    if (!(tcs > 0 && tcd > 0) || !isfinite(e_tc) || !(e_tc > 0))
        e_tc = node;
    c.c_tc_w = a->c_tc_w * tc_ratio * e_tc;
    /* a measured fp8/bf16 cycle ratio is the datapath's: it goes with the
     * coefficients, by as much as the rule says the two parts differ */
    c.tc_fp8_power_ratio = a->tc_fp8_power_ratio > 0 && src->tc_flop_per_clk_sm[WL_DT_FP8] > 0 &&
                                   dst->tc_flop_per_clk_sm[WL_DT_FP8] > 0
                               ? a->tc_fp8_power_ratio * wl_core_gpu_tc_power_rule(dst, WL_DT_FP8) /
                                     wl_core_gpu_tc_power_rule(src, WL_DT_FP8)
                               : 0.0; /* the rule is positive: 1 where it lacks a figure */
    c.c_fp_w = a->c_fp_w * fp_ratio * e_fp;
    c.c_sfu_w = a->c_sfu_w * sfu_ratio * node;
    c.c_smem_w = a->c_smem_w * smem_ratio * e_sm;
    c.c_l2_w = a->c_l2_w * (dst->l2_bytes_per_clk / src->l2_bytes_per_clk) * e_l2;
    double dev_s = 8.0 * pj_s, dev_d = 8.0 * pj_d;
    double ondie = a->e_dram_pj_per_byte > dev_s ? a->e_dram_pj_per_byte - dev_s : 0.0;
    c.e_dram_pj_per_byte = (a->e_dram_pj_per_byte > dev_s ? dev_d : a->e_dram_pj_per_byte * pj_d / pj_s) +
                           ondie * node;
    double bw = dst->dram_bw_gbs / src->dram_bw_gbs;
    c.dram_background_w = a->dram_background_w * bw * pj_d / pj_s;
    /* the same die with another memory (H200: GH100 with HBM3e) keeps its
     * SMs' in-flight capacity: the H200 kernel database fits 2797 bytes
     * per clock against the H100's 2749, where the balance rule gave 3939 */
    c.mem_bytes_per_clk = wl_core_gpu_same_die(src, dst)
                              ? a->mem_bytes_per_clk
                              : a->mem_bytes_per_clk * bw *
                                    (src->sm_clock_max_mhz / dst->sm_clock_max_mhz);
    c.mem_path_gbs = a->mem_path_gbs * bw;
    /* static power by the idle power at the board's lowest clock, not at the lockable
     * range's end: --set sm_clock_min_mhz moved leakage (issue 77) */
    double idle_s = wl_core_gpu_idle_w(src, wl_core_gpu_floor_mhz(src));
    double idle_d = wl_core_gpu_idle_w(dst, wl_core_gpu_floor_mhz(dst));
    if (idle_s > 0 && idle_d > 0)
        c.leak_w_per_c = a->leak_w_per_c * idle_d / idle_s;
    double tdp_s = src->tdp_w > 0 ? src->tdp_w : src->power_limit_w;
    double tdp_d = dst->tdp_w > 0 ? dst->tdp_w : dst->power_limit_w;
    c.thermal_c_per_w = a->thermal_c_per_w * tdp_s / tdp_d;
    dst->coef = c;
    return WL_OK;
}

int wl_core_gpu_check(const wl_core_gpu *gpu, wl_error *err)
{
    CHECK(gpu->sms > 0, "sms", "must be a positive integer");
    CHECK(gpu->sm_clock_min_mhz > 0 && gpu->sm_clock_max_mhz >= gpu->sm_clock_min_mhz,
          "sm_clock_max_mhz", "clock range must satisfy 0 < sm_clock_min_mhz <= sm_clock_max_mhz "
          "(%g and %g MHz)", gpu->sm_clock_min_mhz, gpu->sm_clock_max_mhz);
    CHECK(gpu->sm_clock_step_mhz > 0, "sm_clock_step_mhz", "must be positive");
    /* the grid every scan and plan walks: a step that makes it longer than
     * a list may be is refused, not cut short without a word */
    CHECK((gpu->sm_clock_max_mhz - gpu->sm_clock_min_mhz) / gpu->sm_clock_step_mhz <
              (double)WL_LIST_MAX,
          "sm_clock_step_mhz",
          "%g MHz makes %.3g clocks from %g to %g MHz, more than %d: a coarser step",
          gpu->sm_clock_step_mhz,
          floor((gpu->sm_clock_max_mhz - gpu->sm_clock_min_mhz) / gpu->sm_clock_step_mhz) + 1,
          gpu->sm_clock_min_mhz, gpu->sm_clock_max_mhz, WL_LIST_MAX);
    CHECK(gpu->cuda_flop_per_clk_sm[WL_DT_FP32] > 0, "cuda_fp32_flop_per_clk_sm",
          "must be positive");
    for (int i = 0; i < WL_DT_COUNT; i++) {
        CHECK(gpu->tc_flop_per_clk_sm[i] >= 0 && isfinite(gpu->tc_flop_per_clk_sm[i]),
              "tensor throughput", "must be >= 0");
        CHECK(gpu->cuda_flop_per_clk_sm[i] >= 0 && isfinite(gpu->cuda_flop_per_clk_sm[i]),
              "cuda throughput", "must be >= 0");
    }
    CHECK(gpu->sfu_op_per_clk_sm > 0, "sfu_op_per_clk_sm", "must be positive");
    CHECK(gpu->l2_size_mb > 0, "l2_size_mb", "must be positive");
    CHECK(gpu->l2_bytes_per_clk > 0, "l2_bw_bytes_per_clk", "must be positive");
    CHECK(gpu->dram_bw_gbs > 0, "dram_bw_gbs", "must be positive");
    CHECK(gpu->smem_bytes_per_clk_sm > 0, "smem_bw_bytes_per_clk_sm", "must be positive");
    CHECK(gpu->smem_per_sm_kb > 0, "smem_per_sm_kb", "must be positive");
    CHECK(gpu->max_warps_per_sm > 0, "max_warps_per_sm", "must be positive");
    CHECK(gpu->power_limit_w > 0, "power_limit_w", "must be positive");
    CHECK(gpu->power_limit_w >= gpu->power_limit_min_w, "power_limit_w",
          "%g W is below the board's lowest limit, power_limit_min_w = %g W (nvidia-smi -pl "
          "refuses it)", gpu->power_limit_w, gpu->power_limit_min_w);
    CHECK(gpu->process_nm >= 0 && gpu->process_nm < 1000, "process_nm", "must be in [0, 1000) nm");
    for (int i = 0; i < WL_DT_COUNT; i++)
        CHECK(gpu->tech_mac_pj[i] >= 0 && gpu->tech_mac_pj[i] < 1e4, "e_mac_*_pj",
              "[technology] energies must be >= 0 pJ");
    CHECK(gpu->tech_reg_pj_per_byte >= 0 && gpu->tech_smem_pj_per_byte >= 0 &&
              gpu->tech_l2_pj_per_byte >= 0 &&
              gpu->tech_dram_pj_per_bit >= 0,
          "e_*_pj_per_*", "[technology] energies must be >= 0 pJ");
    CHECK(gpu->v_ref_mv > 0, "v_ref_mv", "must be positive");
    CHECK(gpu->vth_mv >= 0 && gpu->alpha_power >= 1 && gpu->alpha_power <= 2 &&
              gpu->vf_guardband_mv >= 0,
          "alpha_power", "needs vth_mv >= 0, alpha_power in [1, 2], vf_guardband_mv >= 0");
    CHECK(gpu->vf.n >= 2, "clock_mhz", "the V-f table needs at least two points");
    for (int i = 0; i < gpu->vf.n; i++) {
        CHECK(gpu->vf.voltage_mv[i] > 0, "voltage_mv", "point %d: must be positive", i + 1);
        CHECK(gpu->vf.idle_w[i] >= 0, "idle_power_w", "point %d: must be >= 0", i + 1);
        if (i > 0)
            CHECK(gpu->vf.clock_mhz[i] > gpu->vf.clock_mhz[i - 1], "clock_mhz",
                  "point %d: clocks must be strictly ascending", i + 1);
    }
    const wl_core_coeffs *c = &gpu->coef;
    CHECK(c->tc_eff > 0 && c->tc_eff <= 1, "tc_eff", "must be in (0, 1]");
    CHECK(c->cuda_eff > 0 && c->cuda_eff <= 1, "cuda_eff", "must be in (0, 1]");
    CHECK(c->alu_eff > 0 && c->alu_eff <= 1, "alu_eff", "must be in (0, 1]");
    CHECK(c->dram_eff > 0 && c->dram_eff <= 1, "dram_eff", "must be in (0, 1]");
    CHECK(c->l2_eff > 0 && c->l2_eff <= 1, "l2_eff", "must be in (0, 1]");
    CHECK(c->overlap_p >= 1, "overlap_p", "must be >= 1");
    CHECK(c->mem_bytes_per_clk > 0, "mem_bytes_per_clk", "must be positive");
    CHECK(c->mem_path_gbs > 0, "mem_path_gbs", "must be positive");
    CHECK(c->tile_overhead_clk >= 0 && c->kernel_fixed_us >= 0 && c->kernel_fixed_clk >= 0 &&
              c->host_launch_us >= 0 && c->host_op_launch_us >= 0 && c->launch_clk >= 0,
          "kernel overheads", "must be >= 0");
    CHECK(c->c_active_w >= 0 && c->c_gap_w >= 0 && c->c_tc_w >= 0 && c->c_fp_w >= 0 && c->c_sfu_w >= 0 &&
              c->c_smem_w >= 0 && c->c_l2_w >= 0 && c->e_dram_pj_per_byte >= 0 &&
              c->dram_background_w >= 0,
          "power coefficients", "must be >= 0");
    CHECK(c->v_exponent >= 1 && c->v_exponent <= 5, "v_exponent", "must be in [1, 5]");
    CHECK(c->leak_w_per_c >= 0 && c->thermal_c_per_w >= 0, "leak_w_per_c", "must be >= 0");
    CHECK(c->vf_temp_mhz_per_c >= 0 && c->vf_temp_mhz_per_c < 100, "vf_temp_mhz_per_c",
          "must be in [0, 100)");
    CHECK(c->leak_w_per_c * c->thermal_c_per_w < 0.5, "leak_w_per_c",
          "thermal feedback leak*thermal must stay below 0.5 (runaway)");
    CHECK(c->power_cap_frac > 0 && c->power_cap_frac <= 1.05, "power_cap_frac",
          "must be in (0, 1.05]");

    return WL_OK;
}

/* The governor's clock response to a kernel above the cap (core/eval.c).
 * Hopper's is fast: in the H200 profiles of shared/data the GEMMs of steps
 * whose average power is far below the cap run slower at 1980 MHz than
 * their clock allows, and time constants of 200-500 us bring their time
 * at 990 MHz, predicted from 1980 and back, within 5% for every prefill
 * and training step (an immediate governor leaves them 9-16% off, 20 us
 * 8-10%): 300 us, the default. A GPU whose board holds only its average
 * sets a long one (the A100 presets). */
double wl_core_gpu_power_tau_us(const wl_core_gpu *gpu)
{
    return gpu->power_tau_us > 0 ? gpu->power_tau_us : WL_POWER_TAU_DEFAULT_US;
}

double wl_core_gpu_alu_rate(const wl_core_gpu *gpu)
{
    if (gpu->cuda_int32_op_per_clk_sm > 0)
        return gpu->cuda_int32_op_per_clk_sm;
    double lanes = gpu->cuda_flop_per_clk_sm[WL_DT_FP32] * 0.5;
    return lanes < 64.0 ? lanes : 64.0;
}

double wl_core_gpu_datasheet_peak_flops(const wl_core_gpu *gpu, wl_dtype dt)
{
    double f = gpu->datasheet_clock_mhz > 0 ? gpu->datasheet_clock_mhz : gpu->sm_clock_max_mhz;
    return wl_core_gpu_peak_flops(gpu, dt, f);
}

double wl_core_gpu_peak_flops(const wl_core_gpu *gpu, wl_dtype dt, double sm_clock_mhz)
{
    if ((unsigned)dt >= WL_DT_COUNT)
        return 0;
    double rate = dt == WL_DT_FP32 ? 0 : gpu->tc_flop_per_clk_sm[dt];
    if (!(rate > 0))
        rate = gpu->cuda_flop_per_clk_sm[dt == WL_DT_TF32 ? WL_DT_FP32 : dt];
    return gpu->sms * rate * sm_clock_mhz * 1e6;
}
