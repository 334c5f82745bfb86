/* First-principles energy per operation: arithmetic, operands, SRAM, L2
 * and DRAM per bit, and their scaling with the process node (the board-level
 * check that uses them is energy_check.c). */
#include "wattlas_core.h"

#include <math.h>
#include <string.h>

/* Per-operation energies in pJ at 7 nm, Jouppi et al., "Ten lessons from
 * three generations shaped Google's TPUv4i", ISCA 2021, table of operation
 * energies (45 nm column from Horowitz, ISSCC 2014): the multiply at the
 * input precision and the add at the accumulator's (fp32 0.38, int32 0.03).
 * TF32 has FP16's 10-bit mantissa, so it takes FP16's multiplier; FP8's
 * 3-bit mantissa product is taken at INT8's 8x8 multiplier, an upper bound. */
static const struct {
    wl_dtype dt;
    double mult_pj, add_pj;
} mac7[] = {
    {WL_DT_FP32, 1.31, 0.38}, {WL_DT_TF32, 0.34, 0.38}, {WL_DT_FP16, 0.34, 0.38},
    {WL_DT_BF16, 0.21, 0.38}, {WL_DT_FP8, 0.07, 0.38},  {WL_DT_INT8, 0.07, 0.03},
};
#define INT32_ADD_PJ7 0.03

/* Products a tensor core sums before one accumulator add: the K of one
 * mma.sync m16n8kK (PTX ISA), K x element size = 32 B (k8 tf32, k16
 * fp16/bf16, k32 fp8/int8). The unit does not add each product in floating
 * point: it aligns the K products to their largest exponent and sums them
 * in fixed point, then rounds once into the fp32 accumulator (Fasi, Higham,
 * Mikaitis and Pranesh, "Numerical behavior of NVIDIA tensor cores", PeerJ
 * CS 7:e330, 2021, found 4-product blocks on the V100 and 8 on the A100; the
 * DeepSeek-V3 report, 2024, sec. 3.3.2, about 14 bits of fixed-point
 * accumulation for fp8 on Hopper). So a tensor-core MAC costs its multiply,
 * an integer add into the tree and 1/K of an fp32 add; charging a whole fp32
 * add per product, as an FFMA does, put the B200's arithmetic alone at 108%
 * (fp16) and 126% (fp8) of its board's energy per FLOP. K taken at the PTX
 * shape is an upper bound on the block: at the A100's measured 8 the fp32
 * add's share of a bf16 MAC is 0.05 pJ at 7 nm, against 0.024. */
static double dot_length(wl_dtype dt)
{
    return 32.0 / (dt == WL_DT_TF32 ? 4.0 : wl_dtype_bytes(dt));
}

int wl_core_mac_energy_pj(wl_dtype dt, int tensor_core, double process_nm, double *mult_pj,
                          double *add_pj)
{
    if (!(process_nm > 0))
        return WL_EINVAL;
    double s = wl_core_node_energy_scale(7.0, process_nm);
    for (size_t i = 0; i < sizeof mac7 / sizeof *mac7; i++)
        if (mac7[i].dt == dt) {
            double add = mac7[i].add_pj;
            if (tensor_core)
                add = INT32_ADD_PJ7 + add / dot_length(dt);
            *mult_pj = mac7[i].mult_pj * s;
            *add_pj = add * s;
            return WL_OK;
        }
    return WL_EINVAL;
}

double wl_core_gpu_mac_pj(const wl_core_gpu *g, wl_dtype dt, int tensor_core)
{
    if ((unsigned)dt < WL_DT_COUNT && g->tech_mac_pj[dt] > 0)
        return g->tech_mac_pj[dt];
    double m, a;
    return wl_core_mac_energy_pj(dt, tensor_core, g->process_nm, &m, &a) ? 0.0 : m + a;
}

/* Register file: a small SRAM, Horowitz ISSCC 2014's 8 KB array, 10 pJ per
 * 64-bit read at 45 nm = 1.25 pJ/B, scaled by the node law. */
double wl_core_gpu_reg_pj_per_byte(const wl_core_gpu *g)
{
    if (g->tech_reg_pj_per_byte > 0)
        return g->tech_reg_pj_per_byte;
    return g->process_nm > 0 ? 1.25 * wl_core_node_energy_scale(45.0, g->process_nm) : 0.0;
}

/* Register-file bytes per MAC. An FFMA at peak is an SGEMM's inner loop: it
 * reads its B operand and reads and writes its accumulator, 12 B, while
 * the A operand, the same register for a row of the thread's outer
 * product, comes from the operand reuse cache (SASS's .reuse flag; Jia et
 * al., "Dissecting the NVIDIA Volta GPU architecture via
 * microbenchmarking", 2018, sec. 2). All four operands from the register
 * file, 16 B, put an A10's fp32 arithmetic at 100.3% of its board's energy
 * per FLOP: GA10x doubled the FP32 lanes, not the register file's ports,
 * and reaches that peak only with reuse. A tensor-core mma.sync m16n8kK
 * (PTX ISA; K x element size = 32 B: k8 tf32, k16 fp16/bf16, k32
 * fp8/int8) reads the A 16xK and B Kx8 tiles and the 16x8 32-bit
 * accumulator and writes it back: 512 + 256 + 512 + 512 B per 128 K MACs
 * = 0.4375 B x element size (0.875 B for bf16). */
double wl_core_operand_bytes_per_mac(int tensor_core, wl_dtype dt)
{
    if (!tensor_core)
        return 12.0;
    double eb = dt == WL_DT_TF32 ? 4.0 : wl_dtype_bytes(dt);
    return 1792.0 / (128.0 * 32.0 / eb);
}

/* Energy of one MAC with its register operands: what the transfer scales
 * a pipe's capacitance by. */
double wl_core_gpu_op_pj(const wl_core_gpu *g, wl_dtype dt, int tensor_core)
{
    double mac = wl_core_gpu_mac_pj(g, dt, tensor_core), reg = wl_core_gpu_reg_pj_per_byte(g);
    return mac > 0 && reg > 0 ? mac + wl_core_operand_bytes_per_mac(tensor_core, dt) * reg : 0.0;
}

/* Power of a busy tensor-core cycle at precision dt against a 16-bit one,
 * the precision the fitted c_tc_w describes (every board is calibrated on
 * bf16 GEMMs). fp16 and bf16 run on one 16-bit multiplier array at one
 * rate: both 1. TF32 is 1 too: its 10-bit mantissa is fp16's, so it runs on
 * that array at half the rate (two passes per MAC), each busy cycle
 * switching as a 16-bit one does; the table's per-MAC energy at half the
 * rate would put its cycle at 0.76 of bf16's, and the A100's fp32
 * ResNet-101 rows (TF32 convolutions, 900 MHz, not fitted on) then come out
 * 11-13% low in power at batch 16-64 (24% at 8), against 7-9% (21%) with 1.
 *
 * fp8: the board's own measurement where it has one (tc_fp8_power_ratio,
 * fitted by calibrate from bf16 and fp8 GEMMs held under one limit,
 * calib/tc_ratio.c), else the rule: a busy cycle does rate(dt) / rate(bf16)
 * MACs at op_pj(dt) / op_pj(bf16) each. The rule gives an H100 0.94, yet
 * the H100 holds an fp8 8192^3 GEMM at 1324 MHz and a bf16 one at 1485
 * under the same limit (data/h100-serve-2026-11): its fp8 cycle draws more
 * than a bf16 one. The table prices the multipliers and adders; a
 * double-rate datapath also moves twice the products through its alignment
 * tree and operand network, which no per-operation table holds. The
 * transfer carries the measured ratio (core/gpu.c). */
double wl_core_gpu_tc_power_scale(const wl_core_gpu *g, wl_dtype dt)
{
    if (dt == WL_DT_FP16 || dt == WL_DT_BF16 || dt == WL_DT_TF32 || (unsigned)dt >= WL_DT_COUNT)
        return 1.0;
    if (dt == WL_DT_FP8 && g->coef.tc_fp8_power_ratio > 0)
        return g->coef.tc_fp8_power_ratio;
    return wl_core_gpu_tc_power_rule(g, dt);
}

double wl_core_gpu_tc_power_rule(const wl_core_gpu *g, wl_dtype dt)
{
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
