/* The coefficients a fit can move: each one's place in wl_core_coeffs, the
 * transform it is fitted in (ln, or the logit of a bounded range) and its
 * prior width, read by the fit (fit.c) and by the uncertainty it leaves
 * (uncertainty.c). */
#include "calib_internal.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#define P_LOG(m, sd) {#m, offsetof(wl_core_coeffs, m), T_LOG, 0, 0, sd}
#define P_LOGIT(m, lo, hi, sd) {#m, offsetof(wl_core_coeffs, m), T_LOGIT, lo, hi, sd}

const fit_param wl_calib_params[WL_CALIB_NPARAMS] = {
    P_LOGIT(tc_eff, 0.05, 1.0, 2.0),
    P_LOGIT(cuda_eff, 0.05, 1.0, 2.0),
    /* alu_eff is weakly identified (low-clock slope of memory-bound kernels);
     * its prior width was chosen by leave-one-model-out CV: pooled held-out
     * energy MAPE 8.3% at sd 2, 7.3% at 1, 6.8% at 0.75, 6.5% at 0.6 and
     * 0.5, 6.5% at 0.25 */
    P_LOGIT(alu_eff, 0.01, 1.0, 0.6),
    P_LOGIT(dram_eff, 0.2, 1.0, 2.0),
    P_LOGIT(l2_eff, 0.05, 1.0, 2.0),
    P_LOG(mem_bytes_per_clk, 2.0),
    P_LOG(mem_path_gbs, 2.0),
    P_LOG(overlap_p, 1.0),
    P_LOG(kernel_fixed_clk, 2.0),
    P_LOG(host_launch_us, 2.0),
    P_LOG(host_op_launch_us, 2.0),
    P_LOG(host_train_launch_us, 2.0),
    /* a step's backward and optimizer apart: only from training rows with
     * and without an optimizer, and only where the rows see them (fit.c).
     * No prior (0): a host's cost per phase has no physical default, and a
     * step's rows see the optimizer's through its few kernels (a GPT-2
     * step's AdamW is ~50 of ~1000), so a prior of the width the GPU's
     * coefficients take (0.3 / 2 in ln units against ln-ratio residuals)
     * would outweigh a handful of rows and hold it at the default. */
    P_LOG(host_backward_launch_us, 0),
    P_LOG(host_optimizer_launch_us, 0),
    /* a generation's decode steps apart, from rows of generations, where
     * they see it; no prior, as the step's phases */
    P_LOG(host_decode_launch_us, 0),
    P_LOG(launch_clk, 2.0),
    P_LOG(kernel_fixed_us, 2.0),
    P_LOG(tile_overhead_clk, 2.0),
    P_LOGIT(v_exponent, 1.5, 4.5, 2.0),
    P_LOG(c_active_w, 2.0),
    P_LOG(c_gap_w, 2.0),
    P_LOG(c_tc_w, 2.0),
    P_LOG(c_fp_w, 2.0),
    P_LOG(c_sfu_w, 2.0),
    P_LOG(c_smem_w, 2.0),
    P_LOG(c_l2_w, 2.0),
    P_LOG(e_dram_pj_per_byte, 1.0),
    P_LOG(dram_background_w, 2.0),
    P_LOG(leak_w_per_c, 2.0),
    P_LOG(vf_temp_mhz_per_c, 1.0),
    P_LOG(thermal_c_per_w, 1.0),
    P_LOG(idle_temp_c, 1.0),
    /* the power a board holds under its limit, over the limit: the A100 PCIe
     * holds 240 W under 250 (0.96); the H100 SXM 697-710 W under 700, a
     * little over it on average (the limiter acts over ~100 ms windows), so
     * the range reaches past 1 */
    P_LOGIT(power_cap_frac, 0.8, 1.05, 2.0),
};
_Static_assert(sizeof wl_calib_params / sizeof *wl_calib_params == WL_CALIB_NPARAMS,
               "WL_CALIB_NPARAMS counts the table");

int wl_calib_param_count(void) { return (int)WL_CALIB_NPARAMS; }

const char *wl_calib_param_name(int i)
{
    return (i >= 0 && (size_t)i < WL_CALIB_NPARAMS) ? wl_calib_params[i].name : NULL;
}

int wl_calib_param_index(const char *name)
{
    for (size_t i = 0; i < WL_CALIB_NPARAMS; i++)
        if (!strcmp(wl_calib_params[i].name, name))
            return (int)i;
    return -1;
}

double *wl_calib_coef_at(wl_core_coeffs *c, size_t i)
{
    return (double *)(void *)((char *)c + wl_calib_params[i].off);
}

double wl_calib_to_x(const fit_param *p, double v)
{
    if (p->t == T_LOG)
        return log(v > 1e-12 ? v : 1e-12);
    double u = (v - p->lo) / (p->hi - p->lo);
    if (u < 1e-6) u = 1e-6;
    if (u > 1 - 1e-6) u = 1 - 1e-6;
    return log(u / (1 - u));
}

double wl_calib_from_x(const fit_param *p, double x)
{
    if (p->t == T_LOG)
        return exp(x);
    return p->lo + (p->hi - p->lo) / (1.0 + exp(-x));
}
