/* The board-level energy check: the datasheet's energy per FLOP at the top
 * clock against first principles (tech.c) and against the model's own
 * prediction of a large GEMM (the evaluator). Above the evaluator, so that
 * tech.c, which the GPU's power coefficients read, never calls back up. */
#include "wattlas_core.h"

#include <math.h>
#include <string.h>

int wl_core_energy_check_run(const wl_core_gpu *g, wl_dtype dt, wl_core_energy_check *out,
                             wl_error *err)
{
    memset(out, 0, sizeof *out);
    out->dtype = dt;
    out->tensor_core = g->tc_flop_per_clk_sm[dt] > 0;
    double rate = out->tensor_core ? g->tc_flop_per_clk_sm[dt] : g->cuda_flop_per_clk_sm[dt];
    if (!(rate > 0)) {
        wl_error_set(err, g->id, 0, "dtype", "%s has no %s throughput", g->id, wl_dtype_name(dt));
        return WL_EUNSUPPORTED;
    }
    if (g->tech_mac_pj[dt] > 0) {
        out->mult_pj = g->tech_mac_pj[dt]; /* given whole by [technology] */
        out->add_pj = 0;
    } else if (wl_core_mac_energy_pj(dt, out->tensor_core, g->process_nm, &out->mult_pj, &out->add_pj)) {
        wl_error_set(err, g->id, 0, "process_nm", "needed for the first-principles energy");
        return WL_EINVAL;
    }
    out->clock_mhz = g->sm_clock_max_mhz;
    out->peak_tflops = g->sms * rate * out->clock_mhz * 1e-6;
    out->board_w = g->tdp_w > 0 ? g->tdp_w : g->power_limit_w;
    out->board_pj_per_flop = out->board_w / out->peak_tflops; /* W / (TFLOP/s) = pJ */
    out->arith_pj_per_flop = 0.5 * (out->mult_pj + out->add_pj); /* a MAC is 2 FLOP */
    out->reg_pj_per_byte = wl_core_gpu_reg_pj_per_byte(g);
    out->operand_pj_per_flop =
        0.5 * wl_core_operand_bytes_per_mac(out->tensor_core, dt) * out->reg_pj_per_byte;
    out->residual_pj_per_flop =
        out->board_pj_per_flop - out->arith_pj_per_flop - out->operand_pj_per_flop;

    /* the model's own account at a large, compute-bound GEMM */
    const long long n = 8192;
    wl_core_workload *wl = wl_core_workload_create("energy-check-gemm");
    if (!wl)
        return WL_ENOMEM;
    wl_kernel k = {0};
    k.kind = WL_K_GEMM;
    k.in_dtype = dt;
    k.acc_dtype = dt == WL_DT_INT8 ? WL_DT_INT8 : WL_DT_FP32;
    k.tensor_core = out->tensor_core;
    k.m = k.n = k.k = n;
    k.batch = 1;
    wl_core_result r;
    wl_core_op op = {.sm_clock_mhz = out->clock_mhz, .ignore_power_limit = 1};
    int rc = wl_core_workload_add(wl, &k);
    if (!rc)
        rc = wl_core_predict(g, wl, &op, &r);
    wl_core_workload_free(wl);
    if (rc == WL_OK) {
        double dn = (double)n, flop = 2.0 * dn * dn * dn;
        out->gemm_mnk = n;
        out->model_power_w = r.power_w;
        out->model_tflops = flop / (r.time_ms * 1e-3) * 1e-12;
        out->model_pj_per_flop = r.energy_j / flop * 1e12;
        out->model_compute_pj = r.energy_dyn_compute_j / flop * 1e12;
        out->model_memory_pj = r.energy_dyn_memory_j / flop * 1e12;
        out->model_static_pj = r.energy_static_j / flop * 1e12;
    }
    return WL_OK;
}
