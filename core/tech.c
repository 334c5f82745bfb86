/* First-principles energy per operation: arithmetic, operands, SRAM, L2
 * and DRAM per bit, and their scaling with the process node (the board-level
 * check that uses them is energy_check.c). */
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

/* Device + PHY energy per bit moved. Sources: HBM2 3.9 and GDDR5 14 pJ/bit,
 * O'Connor et al., "Fine-grained DRAM", MICRO 2017; GDDR6 7.5 pJ/bit, Micron
 * TN-ED-04 GDDR6 design guide (2x better than GDDR5 per bit is the usual
 * quote); HBM2e 3.6 (lower I/O voltage, 1.2 V core as HBM2: assumed -8%);
 * HBM3 3.0 and HBM3e 2.6: JEDEC JESD238 lowers the I/O swing to 0.4 V and
 * VDDQ to 1.1 V; SK hynix quotes ~10-15% per generation. The HBM2e-to-HBM3e
 * figures are the least certain entries. */
/* Energy per operation vs feature size, E ~ L^0.57: the exponent is the
 * mean log ratio of the eight arithmetic energies (int8/int32/fp16/fp32 add
 * and multiply) tabulated at 45 nm (Horowitz, ISSCC 2014) and at 7 nm
 * (Jouppi et al., ISCA 2021): 0.348 for 45/7 = 6.4x in L. It also matches
 * TSMC's N7 -> N5 quote (-30% power iso-speed, some of it from voltage):
 * (5/7)^0.57 = 0.83 at fixed voltage. */
double wl_core_node_energy_scale(double from_nm, double to_nm)
{
    return from_nm > 0 && to_nm > 0 ? pow(to_nm / from_nm, WL_NODE_ENERGY_EXP) : 1.0;
}

double wl_core_dram_pj_per_bit(const char *dram_type)
{
    static const struct {
        const char *name;
        double pj;
    } tab[] = {{"HBM2", 3.9}, {"HBM2e", 3.6}, {"HBM3", 3.0}, {"HBM3e", 2.6},
               {"GDDR6", 7.5}, {"GDDR6X", 7.25}, {"GDDR5", 14.0}};
    for (size_t i = 0; dram_type && i < sizeof tab / sizeof *tab; i++) {
        const char *a = tab[i].name, *b = dram_type;
        while (*a && *b && ((*a | 32) == (*b | 32)))
            a++, b++;
        if (!*a && !*b)
            return tab[i].pj;
    }
    return 0.0;
}
