/* First-principles energy per operation, and the board-level check. */
#include "wattlas_core.h"

#include <math.h>
#include <string.h>

/* Per-operation energies in pJ at 7 nm, Jouppi et al., "Ten lessons from
 * three generations shaped Google's TPUv4i", ISCA 2021, table of operation
 * energies (45 nm column from Horowitz, ISSCC 2014). A multiply-accumulate
 * is one multiply at the input precision plus one add at the accumulator's:
 * fp32 add 0.38, int32 add 0.03. TF32 has FP16's 10-bit mantissa, so it
 * takes FP16's multiplier; FP8's 3-bit mantissa product is taken at INT8's
 * 8x8 multiplier, an upper bound. */
static const struct {
    wl_dtype dt;
    double mult_pj, add_pj;
} mac7[] = {
    {WL_DT_FP32, 1.31, 0.38}, {WL_DT_TF32, 0.34, 0.38}, {WL_DT_FP16, 0.34, 0.38},
    {WL_DT_BF16, 0.21, 0.38}, {WL_DT_FP8, 0.07, 0.38},  {WL_DT_INT8, 0.07, 0.03},
};

int wl_core_mac_energy_pj(wl_dtype dt, double process_nm, double *mult_pj, double *add_pj)
{
    if (!(process_nm > 0))
        return WL_EINVAL;
    double s = wl_core_node_energy_scale(7.0, process_nm);
    for (size_t i = 0; i < sizeof mac7 / sizeof *mac7; i++)
        if (mac7[i].dt == dt) {
            *mult_pj = mac7[i].mult_pj * s;
            *add_pj = mac7[i].add_pj * s;
            return WL_OK;
        }
    return WL_EINVAL;
}

double wl_core_gpu_mac_pj(const wl_core_gpu *g, wl_dtype dt)
{
    if ((unsigned)dt < WL_DT_COUNT && g->tech_mac_pj[dt] > 0)
        return g->tech_mac_pj[dt];
    double m, a;
    return wl_core_mac_energy_pj(dt, g->process_nm, &m, &a) ? 0.0 : m + a;
}

/* Register file: a small SRAM, Horowitz ISSCC 2014's 8 KB array, 10 pJ per
 * 64-bit read at 45 nm = 1.25 pJ/B, scaled by the node law. */
double wl_core_gpu_reg_pj_per_byte(const wl_core_gpu *g)
{
    if (g->tech_reg_pj_per_byte > 0)
        return g->tech_reg_pj_per_byte;
    return g->process_nm > 0 ? 1.25 * wl_core_node_energy_scale(45.0, g->process_nm) : 0.0;
}

/* Register-file bytes per MAC. A CUDA-core FFMA reads three 4-byte operands
 * and writes one: 16 B (an upper bound: operand reuse caches save some). A
 * tensor-core mma.sync m16n8kK (PTX ISA; K x element size = 32 B: k8 tf32,
 * k16 fp16/bf16, k32 fp8/int8) reads the A 16xK and B Kx8 tiles and the
 * 16x8 32-bit accumulator and writes it back: 512 + 256 + 512 + 512 B per
 * 128 K MACs = 0.4375 B x element size (0.875 B for bf16). */
double wl_core_operand_bytes_per_mac(int tensor_core, wl_dtype dt)
{
    if (!tensor_core)
        return 16.0;
    double eb = dt == WL_DT_TF32 ? 4.0 : wl_dtype_bytes(dt);
    return 1792.0 / (128.0 * 32.0 / eb);
}

/* Energy of one MAC with its register operands: what the transfer scales
 * a pipe's capacitance by. */
double wl_core_gpu_op_pj(const wl_core_gpu *g, wl_dtype dt, int tensor_core)
{
    double mac = wl_core_gpu_mac_pj(g, dt), reg = wl_core_gpu_reg_pj_per_byte(g);
    return mac > 0 && reg > 0 ? mac + wl_core_operand_bytes_per_mac(tensor_core, dt) * reg : 0.0;
}

/* Power of a busy tensor-core cycle at precision dt against a 16-bit one,
 * the precision the fitted c_tc_w describes (every board is calibrated on
 * bf16 GEMMs). A busy cycle does rate(dt) / rate(bf16) MACs, each costing
 * op_pj(dt) (the multiply-add and its register operands, the table above)
 * against op_pj(bf16): on Hopper an fp8 cycle does twice the MACs at 0.66
 * of the energy each, 1.32x the power, which is why fp8 GEMMs are held to a
 * lower clock than bf16 ones under the same power limit (1324 against 1485
 * MHz for 8192^3 on an H100, data/h100-serve-2026-11). fp16 and bf16 run on
 * one 16-bit multiplier array at one rate: both 1. TF32 is 1 too: its 10-bit
 * mantissa is fp16's, so it runs on that array at half the rate (two passes
 * per MAC), each busy cycle switching as a 16-bit one does; the table's
 * per-MAC energy at half the rate would put its cycle at 0.76 of bf16's,
 * and the A100's fp32 ResNet-101 rows (TF32 convolutions, 900 MHz, not
 * fitted on) then come out 11-13% low in power at batch 16-64 (24% at 8),
 * against 7-9% (21%) with 1. */
double wl_core_gpu_tc_power_scale(const wl_core_gpu *g, wl_dtype dt)
{
    if (dt == WL_DT_FP16 || dt == WL_DT_BF16 || dt == WL_DT_TF32 || (unsigned)dt >= WL_DT_COUNT)
        return 1.0;
    double r16 = g->tc_flop_per_clk_sm[WL_DT_BF16], r = g->tc_flop_per_clk_sm[dt];
    double e16 = wl_core_gpu_op_pj(g, WL_DT_BF16, 1), e = wl_core_gpu_op_pj(g, dt, 1);
    if (!(r16 > 0 && r > 0 && e16 > 0 && e > 0))
        return 1.0;
    return r / r16 * e / e16;
}

double wl_core_gpu_smem_pj_per_byte(const wl_core_gpu *g)
{
    if (g->tech_smem_pj_per_byte > 0)
        return g->tech_smem_pj_per_byte;
    return g->process_nm > 0 ? 2.5 * wl_core_node_energy_scale(45.0, g->process_nm) : 0.0;
}

double wl_core_gpu_l2_pj_per_byte(const wl_core_gpu *g)
{
    if (g->tech_l2_pj_per_byte > 0)
        return g->tech_l2_pj_per_byte;
    return g->process_nm > 0 ? 12.5 * wl_core_node_energy_scale(45.0, g->process_nm) : 0.0;
}

double wl_core_gpu_dram_pj_per_bit(const wl_core_gpu *g)
{
    return g->tech_dram_pj_per_bit > 0 ? g->tech_dram_pj_per_bit : wl_core_dram_pj_per_bit(g->dram_type);
}

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
    } else if (wl_core_mac_energy_pj(dt, g->process_nm, &out->mult_pj, &out->add_pj)) {
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
