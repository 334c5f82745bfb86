/* Kernel latency models. Each reduces a kernel to clock-independent cycle and
 * byte counts (wl_kprep); the evaluator turns them into time at any clock.
 *
 * "tiled": threadblock tiles, waves quantised over the SMs, L2/DRAM traffic
 * from the tiling (blocked-GEMM I/O bound), L2 residency of small tensors.
 * "roofline": the same traffic with perfect load balance and no tile
 * overheads -- a lower bound useful for comparison. */
#include "core_internal.h"

#include <math.h>
#include <string.h>

#define WARP_TILE 64.0 /* warp-level MMA tile edge: sets shared-memory reuse */
#define MTA_CHUNK 65536.0          /* multi_tensor_apply's kChunkSize */
#define MTA_ROUND_TRIP_CLK 400.0   /* its loop's round trip: SM cycles ... */
#define MTA_ROUND_TRIP_NS 40.0     /* ... and a clock-independent part ... */
#define MTA_LSU_BYTES_PER_CLK 64.0 /* ... and bytes an SM moves a clock (see below) */
#define COL_REDUCE_CLK 10000.0    /* a column sum's cross-CTA pass, SM cycles (see prepare) */
#define SMEM_PER_BLOCK_BYTES 49152.0 /* CUDA's sharedMemPerBlock without the opt-in */
#define MASKED_EXP_CLK 0.32       /* softmax: SM cycles per masked element (see below) */
#define LN_ROW_CLK 340.0          /* LayerNorm: SM cycles per row beside its elements (see below) */
#define DYN_CAST_OPS 11.0         /* ATen's dynamic-cast path, per element (see prep_memory_bound) */

typedef struct {
    double tm, tn;
} tile_shape;

static const tile_shape tc_tiles[] = {
    {256, 128}, {128, 256}, {128, 128}, {128, 64}, {64, 128}, {64, 64}};
static const tile_shape simt_tiles[] = {{128, 128}, {128, 64}, {64, 128}, {64, 64}, {32, 64}};

static double l2_capacity_bytes(const wl_core_gpu *gpu)
{
    /* Producer->consumer reuse sees about half the L2: A100's L2 is two
     * partitions and the hashing leaves part of it to other traffic. */
    return gpu->l2_size_mb * 1048576.0 * 0.5;
}

/* Fraction of a kernel's traffic served by L2 when its working set ws was just
 * produced by the previous kernel: all of it when ws fits, none when ws is
 * twice the capacity (LRU streaming thrashes), linear in between. */
static double l2_hit(const wl_core_gpu *gpu, double ws)
{
    double cap = l2_capacity_bytes(gpu);
    double h = 2.0 - ws / cap;
    return h < 0 ? 0 : (h > 1 ? 1 : h);
}

static double peak_math(const wl_core_gpu *gpu, const wl_kernel *k, int *on_tc)
{
    wl_dtype dt = k->in_dtype;
    if (k->tensor_core) {
        if (dt == WL_DT_FP32)
            dt = WL_DT_TF32;
        if (gpu->tc_flop_per_clk_sm[dt] > 0) {
            *on_tc = 1;
            return gpu->tc_flop_per_clk_sm[dt];
        }
    }
    *on_tc = 0;
    double p = gpu->cuda_flop_per_clk_sm[dt == WL_DT_TF32 ? WL_DT_FP32 : dt];
    return p > 0 ? p : gpu->cuda_flop_per_clk_sm[WL_DT_FP32];
}

static double dram_us_of(const wl_core_gpu *gpu, double bytes)
{
    return bytes / (gpu->dram_bw_gbs * 1e3 * gpu->coef.dram_eff); /* GB/s -> B/us */
}

static double l2_clk_of(const wl_core_gpu *gpu, double bytes)
{
    return bytes / (gpu->l2_bytes_per_clk * gpu->coef.l2_eff);
}

/* GEMM with a given tile; fills p and returns the estimated time at the max
 * clock, which is how the library heuristic picks a tile (it ignores DVFS). */
static double gemm_with_tile(const wl_core_gpu *gpu, const wl_kernel *k, tile_shape t,
                             int tiled, wl_kprep *p)
{
    int on_tc = 0;
    double peak = peak_math(gpu, k, &on_tc);
    double eff = on_tc ? gpu->coef.tc_eff : gpu->coef.cuda_eff;
    double bin = wl_dtype_bytes(k->in_dtype);
    double bout = bin;
    double M = (double)k->m, N = (double)k->n, K = (double)k->k, B = (double)k->batch;
    double sms = gpu->sms;
    double flops = 2.0 * M * N * K * B;

    double gm = ceil(M / t.tm), gn = ceil(N / t.tn);
    double tiles = gm * gn * B;
    /* resident CTAs per SM, limited by shared memory (3-stage pipeline of
     * 32-deep K slices) */
    double smem_cta = (t.tm + t.tn) * 32.0 * bin * 3.0;
    double ctas = floor(gpu->smem_per_sm_kb * 1024.0 / smem_cta);
    if (ctas < 1)
        ctas = 1;
    if (ctas > 4)
        ctas = 4;
    double main_clk = 2.0 * t.tm * t.tn * K / (peak * eff);
    /* stream-K is the Hopper tensor-core kernels' (CUTLASS 3's sm90
     * schedules); cuBLAS's CUDA-core SGEMM keeps whole tiles: an fp32
     * 16-token projection of 4096 x 4096 (32 tiles) runs 80 us at 1980 MHz
     * on the H200 (shared/data/measurements), the 32 SMs' share, not 132's */
    int streamk = tiled && gpu->gemm_stream_k && on_tc;
    if (tiled) {
        /* wave quantisation: the busiest SM runs ceil(tiles/sms) tiles; the
         * prologue/epilogue of one CTA overlaps the mainloop of another.
         * Stream-K (Osama et al., PPoPP 2023; cuBLAS's Hopper kernels) hands
         * every SM an equal share of the tiles' K iterations instead, so the
         * last wave is full and a small grid still uses every SM; the
         * partial tiles cost one more prologue/epilogue. */
        double per_sm = streamk ? tiles / sms : ceil(tiles / sms);
        double rounds = streamk ? ceil(per_sm) : ceil(per_sm / ctas);
        p->comp_clk = per_sm * main_clk + gpu->coef.tile_overhead_clk * rounds;
    } else {
        p->comp_clk = flops / (sms * peak * eff);
    }
    p->sm_frac = tiles >= sms || streamk ? 1.0 : tiles / sms;

    /* traffic: every tile streams its A and B panels through L2 */
    double a1 = M * K * bin, b1 = K * N * bin, c1 = M * N * bout;
    /* Hopper+ clusters: the CTAs of a cluster along one edge load the shared
     * operand panel once by TMA multicast, so that panel's L2 reads divide
     * by the cluster size (CUTLASS 3 default 2x1 clusters) */
    double mc = gpu->cluster_multicast > 1 ? gpu->cluster_multicast : 1.0;
    double l2b = B * (gm * gn * (t.tm + t.tn / mc) * K * bin + c1);
    if (!tiled)
        l2b = B * (a1 + b1 + c1);
    /* DRAM: blocked-GEMM I/O bound. The smaller operand is held in L2 in
     * chunks of the L2 capacity; the larger is re-streamed once per chunk. */
    double cap = l2_capacity_bytes(gpu);
    if (k->conv_taps > 0) {
        double s2 = (double)k->conv_stride * k->conv_stride, taps = k->conv_taps;
        a1 *= s2 < taps ? s2 / taps : 1.0;
    }
    double small = a1 < b1 ? a1 : b1, big = a1 < b1 ? b1 : a1;
    double reads = small + big * ceil(small / cap);
    /* ...but the tiles in flight at once share their panels through L2
     * whatever its size: cuBLAS and CUTLASS rasterise the grid in swizzled
     * blocks (CUTLASS GemmIdentityThreadblockSwizzle), so a wave of W
     * resident CTAs covers a near-square block of C, wm x wn tiles with
     * wm tm = wn tn, and reads wm tm rows of A and wn tn columns of B once.
     * Only K slices of those panels need to live in L2 (the accumulators
     * are in the SMs' registers), so on a small-L2 part (A10: 6 MB) this,
     * not the capacity blocking, is the traffic. */
    if (tiled) {
        double wave = fmin(sms * ctas, gm * gn);
        double wm = fmin(gm, fmax(1.0, floor(sqrt(wave * t.tn / t.tm))));
        double wn = fmin(gn, ceil(wave / wm));
        double waves = ceil(gm * gn / (wm * wn));
        /* a1 already carries the convolution's input saving */
        double reads_wave = waves * (fmin(wm * t.tm, M) / M * a1 + fmin(wn * t.tn, N) * K * bin);
        if (reads_wave < reads)
            reads = fmax(reads_wave, a1 + b1);
    }
    double dram = B * (reads + c1);
    p->l2_clk = l2_clk_of(gpu, l2b);
    p->dram_us = dram_us_of(gpu, dram);
    p->dram_clk = dram / gpu->coef.mem_bytes_per_clk;
    p->path_us = dram / (gpu->coef.mem_path_gbs * 1e3);
    p->l2_bytes = l2b;
    p->dram_bytes = dram;
    p->flops = flops;
    double busy_clk = flops / (sms * peak); /* pipe-busy cycles per SM at 100% */
    if (on_tc)
        p->tc_clk = busy_clk;
    else
        p->fp_clk = busy_clk;
    /* warps re-read fragments of A and B from shared memory:
     * per k, tm*tn/WARP_TILE*2 elements */
    double smem_bytes = B * gm * gn * K * bin * (t.tm * t.tn / WARP_TILE * 2.0 + t.tm + t.tn);
    p->smem_clk = smem_bytes / (sms * gpu->smem_bytes_per_clk_sm);

    double f = gpu->sm_clock_max_mhz * 1e-3;
    double tc = p->comp_clk / f / 1e3, tl = p->l2_clk / f / 1e3, td = p->dram_us;
    double tm = tl > td ? tl : td;
    return (tc > tm ? tc : tm);
}

static void prep_gemm(const wl_core_gpu *gpu, const wl_kernel *k, int tiled, wl_kprep *p)
{
    int on_tc = 0;
    peak_math(gpu, k, &on_tc);
    /* a CUDA-core GEMM of one row or column is a matrix-vector product:
     * cuBLAS dispatches it to its gemv kernels (gemv2T_kernel_val and
     * kin), which stream the matrix once and pad nothing; the H200's fp32
     * 1 x 8192 x 8192 runs at the memory's pace at every clock (172 us at
     * 510 MHz, 68 us at 1980), where a padded tile would be math-bound */
    if (!on_tc && k->batch == 1 && (k->m == 1 || k->n == 1))
        tiled = 0;
    const tile_shape *cand = on_tc ? tc_tiles : simt_tiles;
    size_t nc = on_tc ? sizeof tc_tiles / sizeof *tc_tiles : sizeof simt_tiles / sizeof *simt_tiles;
    if (!tiled)
        nc = 1;
    /* The library heuristic knows the architecture, not our fitted
     * efficiencies: rank tiles with the default coefficients, so that
     * calibration never flips a tile choice (a discontinuity). */
    wl_core_gpu sel = *gpu;
    wl_core_coeffs_default(&sel.coef);
    wl_kprep tmp;
    size_t best = 0;
    double best_t = INFINITY, best_c = INFINITY;
    for (size_t i = 0; i < nc; i++) {
        memset(&tmp, 0, sizeof tmp);
        double t = gemm_with_tile(&sel, k, cand[i], tiled, &tmp);
        /* a memory-bound GEMM ties on time at the top clock; of the tied
         * tiles the one with the least padded math wins (no library runs a
         * 256-row tile over 64 rows), then the larger tile */
        int tie = t < best_t * 1.001;
        if (t < best_t * 0.999 || (tie && tmp.comp_clk < best_c * 0.999)) {
            best_t = t < best_t ? t : best_t;
            best_c = tmp.comp_clk;
            best = i;
        }
    }
    gemm_with_tile(gpu, k, cand[best], tiled, p);
    /* Hopper's fast GEMMs load their tiles with TMA, which needs every
     * matrix's rows 16-byte aligned: a 16-bit GEMM whose weight has a
     * dimension that is not a multiple of 8 (k->unaligned: GPT-2's
     * 50257-word LM head) falls back to an Ampere-generation CUTLASS
     * kernel. On the H200 those run the LM
     * head's three GEMMs at 12% of the tensor-core peak (shared/data/
     * profiles, GPT-2 training: 4.8 ms each at 990 MHz for 316 GFLOP);
     * the math is taken at that share of what the aligned kernel does. */
    if (on_tc && k->unaligned && gpu->cluster_multicast >= 2 && wl_dtype_bytes(k->in_dtype) == 2.0)
        p->comp_clk /= 0.13; /* the same MACs (tc_clk) over a longer time */
}

/* FlashAttention-2's split-KV heuristic (num_splits_heuristic in its
 * flash_api.cpp, called with twice the SM count): when the 64-row query
 * blocks of all heads fill less than 80% of that, the keys are split so
 * that the CTAs fill whole waves: the fewest splits within 85% of the best
 * wave efficiency, at most 128 and one per key block, skipping counts that
 * give the same blocks per split as one fewer. */
static double kv_splits(double ctas, double slots, double key_blocks)
{
    if (ctas >= 0.8 * slots)
        return 1.0;
    double most = fmin(fmin(slots, key_blocks), 128.0), best = 0.0;
    double eff[129] = {0};
    for (int s = 1; s <= (int)most; s++) {
        if (s > 1 && ceil(key_blocks / s) == ceil(key_blocks / (s - 1)))
            continue; /* not eligible: eff[s] stays 0 */
        double waves = ctas * s / slots;
        eff[s] = waves / ceil(waves);
        if (eff[s] > best)
            best = eff[s];
    }
    for (int s = 1; s <= (int)most; s++)
        if (eff[s] > 0 && eff[s] >= 0.85 * best)
            return (double)s;
    return 1.0;
}

/* Fused attention (FlashAttention-2 style): one CTA per 128 query rows per
 * head, K and V streamed through L2, scores never reach DRAM.
 *
 * Grouped-query attention hands the kernel the key/value heads only, so
 * DRAM reads k and v once per group. A decode step (one query row per
 * head) is a different kernel shape (FlashAttention-2 >= 2.5, PyTorch's
 * SDPA and vLLM): the group's query heads are packed into the rows of one
 * 64-row block per key/value head (seqlenq_ngroups_swapped) and the keys
 * are split across CTAs (split-KV, "flash-decoding"), whose partial
 * outputs a combine pass reduces in fp32. Without that the per-head
 * 128-row tiles would be almost all padding and a decode step would look
 * compute-bound; with it, it streams the cache at memory speed. */
static void prep_flash(const wl_core_gpu *gpu, const wl_kernel *k, int tiled, wl_kprep *p)
{
    int on_tc = 0;
    double peak = peak_math(gpu, k, &on_tc);
    double eff = on_tc ? gpu->coef.tc_eff : gpu->coef.cuda_eff;
    double bin = wl_dtype_bytes(k->in_dtype);
    double BH = (double)k->batch, Sq = (double)k->m, Sk = (double)k->n, D = (double)k->k;
    double causal = k->causal ? 0.5 : 1.0;
    double sms = gpu->sms;
    double G = k->groups > 1 && !k->bwd ? (double)k->groups : 1.0;
    /* the backward (FlashAttention-2, Dao 2023): five matmuls to the
     * forward's two (S = QK^T again, dP = dO V^T, dV, dQ, dK), one CTA per
     * 128 keys streaming the queries, at ~85% of the forward's throughput
     * (the paper's A100 figures); it reads q, k, v, o, dO, writes dk, dv
     * and accumulates dq in fp32 */
    double work = k->bwd ? 2.5 : 1.0;
    if (k->bwd) {
        eff *= 0.85;
        double t = Sq;
        Sq = Sk;
        Sk = t; /* tiles over the keys, the queries streamed */
    }
    /* the causal mask skips the key blocks past a query block's diagonal,
     * the diagonal blocks are computed whole (FlashAttention-2's loop
     * bound): of nq query blocks of br rows against key blocks of bn, block
     * i runs ceil((i + 1) br / bn) of them */
    if (k->causal && !k->bwd && Sq == Sk && Sq > 1.0) {
        double brq = 128.0, bnk = D <= 64.0 ? 256.0 : D <= 128.0 ? 128.0 : 64.0;
        double nq = ceil(Sq / brq), done = 0.0;
        for (double i = 0; i < nq; i++)
            done += fmin(Sk, ceil((i + 1.0) * brq / bnk) * bnk);
        causal = done / (nq * Sk);
    }
    double flops = 4.0 * work * BH * Sq * Sk * D * causal;
    /* rows of one CTA's block and the blocks: per head, or per key/value
     * head with its group's queries packed in (a decode step) */
    int packed = !k->bwd && Sq == 1.0 && G > 1.0;
    double heads = packed ? BH / G : BH, rows = packed ? G : Sq;
    double splits = 1.0, partial = 0.0;
    if (!k->bwd) {
        double bn = D <= 64.0 ? 256.0 : D <= 128.0 ? 128.0 : 64.0;
        splits = kv_splits(ceil(rows / 64.0) * heads, 2.0 * sms, ceil(Sk / bn));
        if (splits > 1.0) /* fp32 partial outputs and row sums, written and read back */
            partial = 2.0 * BH * Sq * splits * (D + 1.0) * 4.0;
    }
    /* the split kernel's blocks are 64 rows; the plain forward's 128 */
    double br = rows <= 64.0 || splits > 1.0 ? 64.0 : 128.0;
    double mblocks = ceil(rows / br) * heads;
    double tiles = mblocks * splits, keys = Sk / splits;
    /* between its two matmuls each warp turns its scores into
     * probabilities: per score one exp2 on the SFU (MUFU.EX2, sfu_op_per_
     * clk_sm a clock) and about four FP32 instructions (scale and subtract
     * the running max, the max, the running sum, the convert to 16 bits)
     * on the FP32 pipe beside it; the busier of the two is issued in turn
     * with the MMAs, not beside them, as FlashAttention-2 runs (FlashAttention-
     * 3's ping-pong overlaps them; PyTorch's SDPA on Hopper is not it). On
     * the H200 (shared/data kernels, causal bf16) 64 x 4096 x 128 comes out
     * within 6% at 510, 1080 and 1755 MHz, 256 x 1024 x 64 (short rows)
     * 3-16% slow; the former flat 0.75 of the tensor cores' efficiency was
     * 6-14% and 24-32% fast. The backward recomputes P (one exp a score)
     * and forms dS = P (dP - D), alike. */
    double sm_clk = fmax(1.0 / gpu->sfu_op_per_clk_sm, 4.0 * 2.0 / gpu->cuda_flop_per_clk_sm[WL_DT_FP32]);
    double tile_clk = 4.0 * work * br * keys * D * causal / (peak * eff) + br * keys * causal * sm_clk;
    if (tiled) {
        double per_sm = ceil(tiles / sms);
        p->comp_clk = per_sm * tile_clk + gpu->coef.tile_overhead_clk * per_sm;
    } else {
        p->comp_clk = flops / (sms * peak * eff) + BH * Sq * Sk * causal * sm_clk / sms;
    }
    p->sm_frac = tiles >= sms ? 1.0 : tiles / sms;
    double qo = 2.0 * BH * Sq * D * bin, kv = 2.0 * BH / G * Sk * D * bin;
    if (k->bwd) { /* here Sq is the keys: k, v, dk, dv; the queries: q, o, dO, dq */
        qo *= 2.0;
        kv = BH * Sk * D * (3.0 * bin + 8.0);
    }
    double l2b = qo + partial + tiles * 2.0 * keys * D * bin * causal;
    double dram = qo + kv + partial;
    p->l2_bytes = l2b;
    p->dram_bytes = dram;
    p->l2_clk = l2_clk_of(gpu, l2b);
    p->dram_us = dram_us_of(gpu, dram);
    p->dram_clk = dram / gpu->coef.mem_bytes_per_clk;
    p->path_us = dram / (gpu->coef.mem_path_gbs * 1e3);
    p->flops = flops;
    p->tc_clk = flops / (sms * peak);
    double scores = BH * Sq * Sk * causal;
    p->sfu_clk = scores / (sms * gpu->sfu_op_per_clk_sm);
    p->fp_clk = 4.0 * work * scores / (sms * gpu->cuda_flop_per_clk_sm[WL_DT_FP32]);
    p->smem_clk = tiles * keys * D * bin * 2.0 * causal * 4.0 * work /
                  (sms * gpu->smem_bytes_per_clk_sm);
}

/* Per-element cost of memory-bound kernels: bytes moved, FP/ALU operations
 * and SFU operations. Half-precision math runs in fp32 after conversion.
 * fp_ops are the element's own operations, each carrying the loop's
 * index, load, store and convert instructions (1/alu_eff issue slots);
 * math_ops are the extra arithmetic of a function evaluated in registers
 * (a polynomial's FMAs), one issue slot each. */
typedef struct {
    double bytes_per_elem_in;  /* multiples of the input element size */
    double extra_out_bytes;    /* output bytes per element when dtype changes */
    double fp_ops, sfu_ops;
    double math_ops;
} ew_cost;

static ew_cost ew_cost_of(const wl_kernel *k)
{
    ew_cost c = {2.0, 0.0, 1.0, 0.0, 0.0};
    switch (k->op) {
    case WL_EW_ADD: case WL_EW_MUL: case WL_EW_UNSPEC_TENSOR:
        c.bytes_per_elem_in = 3.0; break;
    case WL_EW_SCALAR_ADD: case WL_EW_SCALAR_MUL: case WL_EW_RELU: break;
    /* PyTorch is not built with fast math: its activations call CUDA's
     * accurate expf, erff and tanhf and divide with IEEE rounding; expf is
     * a range reduction around ex2.approx, the division a Newton step
     * around rcp.approx. math_ops are FP32 instructions (twice as many per
     * clock per SM on Hopper as on Ampere). SiLU, x / (1 + exp(-x)), from
     * the H100 (data/h100-vm-2026-11: torch 2.11 over 268M bf16 elements
     * at 1200 and 1980 MHz): about 4 elements per clock per SM, which is
     * 14 FP32 instructions beside the loop's overhead and two SFU calls;
     * the earlier guess (4 ops with the overhead each, the SFU calls
     * serialised after them) was 2.4x slower than measured. GELU keeps its
     * guess, 14 ops with the overhead: the H100 runs F.gelu in half that
     * time, but the A100 whole-model rows (BERT) fit worse with the faster
     * cost (900 MHz transformer energy 5.6% -> 6.1%), and one kernel on one
     * board does not settle it. tanhf (not measured) keeps its A100 cost:
     * 18 FP32 instructions. */
    case WL_EW_GELU: c.fp_ops = 14.0; break;
    case WL_EW_SILU: c.math_ops = 14.0; c.sfu_ops = 2.0; break;
    case WL_EW_TANH: c.math_ops = 18.0; break;
    case WL_EW_UNSPEC_SCALAR: c.fp_ops = 3.0; break;
    case WL_EW_CAST_FP32: c.bytes_per_elem_in = 1.0; c.extra_out_bytes = 4.0; break;
    case WL_EW_CAST_BF16: c.bytes_per_elem_in = 1.0; c.extra_out_bytes = 2.0; break;
    case WL_EW_COPY: c.fp_ops = 0.0; break;
    case WL_EW_TERNARY: c.bytes_per_elem_in = 4.0; c.fp_ops = 2.0; break;
    /* native_dropout: x in, y and a one-byte mask out. Philox-4x32-10 is
     * ~20 integer instructions per element (10 rounds of two 32-bit
     * mul.hi/lo pairs and ~4 xor/adds per four outputs); one op of this
     * model costs 1/alu_eff issue slots, which on the calibrated A100
     * (alu_eff 0.27) makes them ~5 ops */
    case WL_EW_DROPOUT: c.extra_out_bytes = 1.0; c.fp_ops = 6.0; break;
    case WL_EW_DROPOUT_BWD: c.extra_out_bytes = 1.0; c.fp_ops = 2.0; break;
    case WL_EW_FILL: c.bytes_per_elem_in = 1.0; c.fp_ops = 0.0; break;
    case WL_EW_SILU_MUL: c.bytes_per_elem_in = 3.0; c.math_ops = 15.0; c.sfu_ops = 2.0; break;
    default: break;
    }
    /* *_backward of a unary op: reads the gradient and the saved tensor,
     * writes the input's gradient, with the derivative's arithmetic */
    if (k->bwd) {
        c.bytes_per_elem_in = 3.0;
        c.fp_ops += 2.0;
    }
    return c;
}

static void prep_memory_bound(const wl_core_gpu *gpu, const wl_kernel *k, int tiled, wl_kprep *p)
{
    double b = wl_dtype_bytes(k->in_dtype);
    double sms = gpu->sms;
    double elems, bytes, fp_ops, sfu_ops, math_ops = 0.0, rows = 1.0, row_clk = 0.0;
    double reread = 0.0, reread_hit = 0.0; /* a row op's second passes (softmax) */
    int fast_exp = 0; /* exp as one SFU op (fast math), not a library call */
    if (k->kind == WL_K_ELEMENTWISE) {
        ew_cost c = ew_cost_of(k);
        elems = (double)k->n;
        bytes = elems * (c.bytes_per_elem_in * b + c.extra_out_bytes);
        /* half precision converts each input to fp32 and the result back */
        double conv = b < 4 ? (c.bytes_per_elem_in >= 3.0 ? 3.0 : 2.0) : 0.0;
        if (k->op == WL_EW_CAST_FP32 || k->op == WL_EW_CAST_BF16)
            conv = 1.0;
        /* ATen's non-vectorized path (elementwise_kernel with an
         * OffsetCalculator): each element's offset into every operand is
         * computed from its linear index, a division and a multiply-add per
         * dimension and operand: 4 dimensions x the operands, each an op
         * (1/alu_eff issue slots). On the H200 a broadcast add over
         * 4x12x1024x1024 then takes 0.70 SM cycles per element at 990 MHz
         * (shared/data/profiles: 270 us), 12 such ops beside the add's own.
         * cat's batched copy of a strided input (CatArrayBatchedCopy:
         * 64-bit index arithmetic per dimension) takes 1.56-1.61 SM cycles
         * an element at 990 MHz in the same profiles (the GPT-2 and Llama
         * caches' cats), 36 ops beside the copy's. */
        /* ATen's dynamic-casting path (strided 4: unrolled_elementwise_kernel
         * with LoadWithCast/StoreWithCast), taken when an operand's dtype is
         * not the op's: every element it loads and stores goes through a
         * switch on the runtime dtype, one element per access. PyTorch 2.x's
         * copy has a vectorized fast path for fp32 -> bf16/fp16
         * (bfloat16_copy_kernel_cuda) but none for the upcast, so
         * x.to(float32) from bf16 takes it. The H100 kernel database's
         * 134M-element bf16 -> fp32 cast takes 0.54 SM cycles an element at
         * 510 MHz (1.078 ms), and the H200 profiles' upcasts (RMSNorm's
         * x.to(float32), softmax's dtype=float32, the loss's logits:
         * 6.3M-206M elements) 0.55-0.61 at 510 MHz, 0.58-0.67 at 990 and
         * 0.64-0.78 at 1980, where memory latency shows; the vectorized
         * downcast takes about 0.1. At Hopper's fitted alu_eff (0.37 on 64
         * INT32 lanes) 0.55 cycles are 13 ops: 11 beside the element's own
         * and its convert. Only the builders of the current stack (hf5) and
         * PyTorch profiles mark it: EnergAIzer's A100 rows, on their older
         * stack, fit worse with it (DVFS energy 3.1% -> 4.1%), and their
         * traces do not say which kernel ran. */
        double index_ops = k->strided == 1 ? 4.0 * c.bytes_per_elem_in
                         : k->strided == 2 ? 36.0 : k->strided == 4 ? DYN_CAST_OPS : 0.0;
        fp_ops = elems * (c.fp_ops + conv + index_ops);
        math_ops = elems * c.math_ops;
        sfu_ops = elems * c.sfu_ops;
    } else {
        rows = (double)k->batch;
        elems = rows * (double)k->n;
        switch (k->kind) {
        case WL_K_SOFTMAX: /* max, exp, sum, scale: one read, one write */
            bytes = 2.0 * elems * b;
            fp_ops = 5.0 * elems;
            sfu_ops = elems + rows;
            /* A row too long for ATen's warp softmax (over 1024 elements)
             * that does not fit a block's shared memory either (a loss's
             * log_softmax over a vocabulary) runs cunn_SoftMaxForward, which
             * reads its row three times: the max, the sum of exponentials,
             * the epilogue (aten/src/ATen/native/cuda/SoftMax.cu; the row
             * must fit sharedMemPerBlock, 48 KB without the opt-in, for
             * cunn_SoftMaxForwardSmem to keep it on chip). The two
             * re-reads come from L2 as far as the rows in flight, two
             * 1024-thread blocks an SM, fit it. On the H200 (2026-11-26) a
             * log_softmax over 4096 x 50257 fp32 takes 1.89/1.25/0.76 ms at
             * 510/990/1980 MHz, against 1.21/0.74/0.42 for one read. */
            /* A causal mask's entries (-inf, the dtype's minimum or -1e4:
             * alike) take the accurate expf's underflow path: on the H200
             * (2026-11-26) a softmax over 4 x 12 x 1024 x 1024 with the
             * upper triangle masked takes 219/421 us at 990/510 MHz against
             * 159/297 unmasked, bf16 or fp32 alike: 0.32 SM cycles a masked
             * element. The queries are the last m of the row's n keys (m 0:
             * as many as keys), row i masking m - 1 - i of them. The
             * backward is not slowed (its y is 0 there). */
            if (!k->bwd && k->causal == 1) {
                double q = k->m > 0 && k->m <= k->n ? (double)k->m : (double)k->n;
                row_clk = MASKED_EXP_CLK * (q - 1.0) / 2.0;
            }
            if (k->n > 1024 && (double)k->n * b > SMEM_PER_BLOCK_BYTES) {
                double ws = 2.0 * sms * (double)k->n * b;
                reread = 2.0 * elems * b; /* (the backward's: below) */
                reread_hit = l2_hit(gpu, ws);
            }
            if (k->bwd) { /* dx = y (dy - sum(dy y)): reads dy and y */
                bytes = 3.0 * elems * b;
                fp_ops = 4.0 * elems;
                sfu_ops = 0.0;
                reread *= 0.5; /* cunn_SoftMaxBackward reads dy twice: the sum, the epilogue */
            }
            if (k->causal == 2) {
                /* Megatron-LM's fused scaled_upper_triang_masked_softmax
                 * (megatron/fused_kernels, FusedScaleMaskSoftmax for a
                 * causal mask, rows up to 2048 keys in Korthikanti et al.'s
                 * version, 4096 in Megatron-Core's): a warp per row in registers;
                 * row i loads and exponentiates only its first i + 1
                 * elements and stores the whole row, zeros past the
                 * diagonal; the backward loads dy and y over the same
                 * triangle and stores the whole row. Over the rows the
                 * triangle is (n + 1) / 2n of the elements. Built with
                 * --use_fast_math: exp is __expf (a multiply and one
                 * MUFU.EX2), not the accurate expf whose surrounding
                 * instructions the row ops' SFU count stands for. */
                double tri = ((double)k->n + 1.0) / (2.0 * (double)k->n);
                bytes = (k->bwd ? 2.0 * tri + 1.0 : tri + 1.0) * elems * b;
                fp_ops = (k->bwd ? 4.0 : 5.0) * tri * elems;
                sfu_ops = k->bwd ? 0.0 : tri * elems;
                fast_exp = 1;
                reread = 0.0;
            }
            break;
        case WL_K_LAYERNORM: /* Welford mean/var, normalise, affine */
            bytes = 2.0 * elems * b + 2.0 * (double)k->n * b;
            /* ATen's vectorized_layer_norm_kernel gives each row a block: a
             * Welford pass, a block reduction through shared memory with
             * two barriers, then the normalising pass. Isolated on the H200
             * (2026-11-26, data/h200-vm-2026-11 README) bf16 rows of 768 take
             * 0.71 SM cycles an element and rows of 2048 0.435, at 510, 990
             * and 1980 MHz alike: 340 cycles a row (LN_ROW_CLK) and 0.27 an
             * element, which at Hopper's fitted alu_eff is 6.5 ops. The
             * H100 and H200 databases' 2048-wide rows agree (0.43). */
            fp_ops = 6.5 * elems;
            sfu_ops = rows;
            row_clk = LN_ROW_CLK;
            if (k->bwd) { /* reads dy and x (mean, rstd per row), writes dx */
                bytes = 3.0 * elems * b + (double)k->n * b + rows * 8.0;
                fp_ops = 10.0 * elems;
                sfu_ops = 0.0;
                row_clk = 0.0; /* another kernel: in GPT-2's AdamW step on the H200
                                * it is 12-21% short without the row cost
                                * and 44% over with it */
            }
            break;
        case WL_K_RMSNORM:
            bytes = 2.0 * elems * b + (double)k->n * b;
            fp_ops = 5.0 * elems;
            sfu_ops = rows;
            if (k->bwd) {
                bytes = 3.0 * elems * b + (double)k->n * b + rows * 4.0;
                fp_ops = 7.0 * elems;
                sfu_ops = 0.0;
            }
            break;
        default: /* WL_K_REDUCE */
            bytes = elems * b + rows * b;
            fp_ops = elems;
            sfu_ops = 0.0;
            break;
        }
        /* a fused residual add also reads the residual and writes the sum */
        if (k->residual && (k->kind == WL_K_LAYERNORM || k->kind == WL_K_RMSNORM)) {
            bytes += 2.0 * elems * b;
            fp_ops += elems;
        }
    }
    double hit = tiled ? l2_hit(gpu, bytes) : 0.0;
    p->l2_bytes = bytes + reread;
    p->dram_bytes = bytes * (1.0 - hit) + reread * (1.0 - reread_hit);
    bytes += reread;
    p->l2_clk = l2_clk_of(gpu, bytes);
    p->dram_us = dram_us_of(gpu, p->dram_bytes);
    p->dram_clk = p->dram_bytes / gpu->coef.mem_bytes_per_clk;
    p->path_us = p->dram_bytes / (gpu->coef.mem_path_gbs * 1e3);
    /* issue slots: each useful op costs 1/alu_eff instructions (index math,
     * loads, stores, converts). Those are integer and conversion
     * instructions, so their rate is the INT32 pipe's: Hopper's doubled FP32
     * lanes do not speed a LayerNorm or a cast up (the H100 kernel database:
     * 2.3 LayerNorm elements per clock per SM, as the A100 model gives). */
    /* the pipes and register file burn energy per issued instruction; the
     * power model counts them in FP32-lane cycles, the unit of c_fp_w */
    double fp_lanes = gpu->cuda_flop_per_clk_sm[WL_DT_FP32] * 0.5; /* FMA counts 2 */
    double issue_clk = fp_ops / (sms * wl_core_gpu_alu_rate(gpu)) / gpu->coef.alu_eff +
                       math_ops / (sms * fp_lanes);
    p->fp_clk = (fp_ops / gpu->coef.alu_eff + math_ops) / (sms * fp_lanes);
    p->sfu_clk = sfu_ops / (sms * gpu->sfu_op_per_clk_sm);
    /* an activation's SFU calls run beside its ALU work: the busier pipe
     * sets the pace. A row op's SFU count stands for accurate library
     * calls (softmax's expf, the norms' rsqrt) whose surrounding
     * instructions were calibrated as 1/alu_eff issue slots per call
     * (softmax within 3% on the H100 kernel database). */
    if (k->kind == WL_K_ELEMENTWISE)
        p->comp_clk = issue_clk > p->sfu_clk ? issue_clk : p->sfu_clk;
    else
        p->comp_clk = issue_clk + p->sfu_clk / (fast_exp ? 1.0 : gpu->coef.alu_eff) +
                      rows * row_clk / sms;
    /* rows map to CTAs; a small grid leaves SMs idle */
    int mta = k->kind == WL_K_ELEMENTWISE && k->strided == 3;
    double ctas = mta ? ceil(elems / MTA_CHUNK) : k->kind == WL_K_ELEMENTWISE ? ceil(elems / 2048.0)
                                                                            : rows / 4.0;
    p->sm_frac = ctas >= sms ? 1.0 : (ctas < 1 ? 1.0 / sms : ctas / sms);
    if (tiled && p->sm_frac < 1.0) {
        /* fewer SMs issue memory requests: bandwidth falls with them */
        p->l2_clk /= p->sm_frac;
        p->dram_us /= sqrt(p->sm_frac);
        p->dram_clk /= p->sm_frac;
        p->path_us /= p->sm_frac;
        p->comp_clk /= p->sm_frac;
    }
    if (mta) {
        /* multi_tensor_apply (ATen/native/cuda/MultiTensorApply.cuh): one
         * CTA of 512 threads per chunk of 65536 elements, each thread
         * loading kILP = 4 elements of every list per loop iteration, 32
         * iterations a chunk, and the next iteration's loads wait for this
         * one's: a chain of round trips, not a stream. Two such CTAs fit
         * an SM (their registers), so a launch of up to 320 chunks runs in
         * ceil(CTAs / 2 SMs) waves of 32 iterations. An iteration costs a
         * round trip of MTA_ROUND_TRIP_CLK SM cycles and MTA_ROUND_TRIP_NS,
         * and its two CTAs' bytes (2 x 2048 elements) through the SM's
         * load/store path at MTA_LSU_BYTES_PER_CLK. The three constants are
         * the H200 profiles' (shared/data): AdamW's foreach kernels over
         * full launches take 28.4/48.6 us (one bf16 list in place, 4 bytes
         * an element), 35.0/58.3 (two lists, 6) and 39.9/67.7 (three, 8)
         * at 1980/990 MHz: 396 + 57.8 B cycles and ~40 ns an iteration,
         * 1.70x from 990 to 1980 MHz where a bandwidth-bound kernel moves
         * 1.1x. The chain replaces the miss path's streaming time; DRAM
         * bandwidth still bounds it from below. */
        double iters = ceil((elems < MTA_CHUNK ? elems : MTA_CHUNK) / (512.0 * 4.0));
        double waves = ceil(ctas / (2.0 * sms));
        double per_elem = elems > 0 ? bytes / elems : 0.0;
        p->dram_clk = waves * iters *
                      (MTA_ROUND_TRIP_CLK + 2.0 * 2048.0 * per_elem / MTA_LSU_BYTES_PER_CLK);
        p->path_us = waves * iters * MTA_ROUND_TRIP_NS * 1e-3;
    }
    /* every byte passes the SM's load/store path (L1); reductions also
     * exchange partial sums through shared memory */
    p->smem_clk = (bytes + (k->kind == WL_K_ELEMENTWISE ? 0.0 : elems * 4.0)) /
                  (sms * gpu->smem_bytes_per_clk_sm);
}

/* cuDNN's half-precision tensor-core convolutions work in NHWC; given
 * PyTorch's default NCHW tensors they transpose the input to NHWC and the
 * output back (cuDNN Developer Guide, "Tensor Transformations"; the reason
 * channels_last speeds fp16 convolutions up). Two streaming kernels after
 * the math: each reads and writes its tensor once, through shared memory.
 * TF32 convolutions are taken to read NCHW directly: not documented, but the
 * A100 fp32 ResNet rows fit without transposes and are ~25% slow with them. */
static void add_layout_transforms(const wl_core_gpu *gpu, const wl_kernel *k, wl_kprep *p)
{
    if (k->conv_taps <= 0 || !(k->in_dtype == WL_DT_FP16 || k->in_dtype == WL_DT_BF16))
        return;
    double b = wl_dtype_bytes(k->in_dtype);
    double s2 = (double)k->conv_stride * k->conv_stride, taps = k->conv_taps;
    double in = (double)k->m * (double)k->k * b * (s2 < taps ? s2 / taps : 1.0);
    double out = (double)k->m * (double)k->n * b;
    double bytes = 2.0 * (in + out) * (double)k->batch;
    p->xfer_l2_clk = l2_clk_of(gpu, bytes);
    p->xfer_dram_us = dram_us_of(gpu, bytes);
    p->xfer_dram_clk = bytes / gpu->coef.mem_bytes_per_clk;
    p->xfer_path_us = bytes / (gpu->coef.mem_path_gbs * 1e3);
    p->xfer_fixed_us = 2.0 * gpu->coef.kernel_fixed_us;
    p->l2_bytes += bytes;
    p->dram_bytes += bytes;
    p->smem_clk += bytes / (gpu->sms * gpu->smem_bytes_per_clk_sm);
}

static void prepare(const wl_core_gpu *gpu, const wl_kernel *k, int tiled, wl_kprep *p)
{
    switch (k->kind) {
    case WL_K_GEMM:
        prep_gemm(gpu, k, tiled, p);
        add_layout_transforms(gpu, k, p);
        break;
    case WL_K_ATTN_FLASH:
        prep_flash(gpu, k, tiled, p);
        break;
    case WL_K_GAP:
        p->is_gap = 1;
        p->gap_us = k->gap_us;
        if (k->engine)
            p->gap_us += wl_core_coeffs_engine_step_us(&gpu->coef, (double)k->batch);
        return;
    case WL_K_MEASURED: {
        /* known only by its time: the launch latency, then memory-bound at
         * the fixed memory clock for the rest (its time does not move with
         * the SM clock), streaming at the achievable DRAM bandwidth for the
         * power model, on every SM */
        double t = k->measured_us;
        p->fixed_us = t < gpu->coef.kernel_fixed_us ? t : gpu->coef.kernel_fixed_us;
        p->dram_us = t - p->fixed_us;
        p->dram_bytes = p->dram_us * gpu->dram_bw_gbs * gpu->coef.dram_eff * 1e3;
        p->l2_bytes = p->dram_bytes;
        p->smem_clk = 0.0;
        p->sm_frac = 1.0;
        p->tc_w = 1.0;
        return;
    }
    default:
        prep_memory_bound(gpu, k, tiled, p);
        break;
    }
    p->fixed_us = gpu->coef.kernel_fixed_us;
    p->fixed_clk = gpu->coef.kernel_fixed_clk;
    /* A column sum (a bias or norm weight's gradient, sum over dim 0):
     * ATen's reduce splits each column over many CTAs (ctas_per_output),
     * which write partials to global memory, count themselves in on a
     * semaphore, and the last to arrive sums the partials: a serial tail of
     * round trips after the streaming pass. Isolated on the H200
     * (2026-11-26) sum(0) over 4096 x 768 and 4096 x 3072 bf16 takes
     * 10.3-11.2k and 14.3-16.9k SM cycles beyond the streaming model at
     * 510-1980 MHz; COL_REDUCE_CLK is the smaller. */
    if (k->kind == WL_K_REDUCE && k->strided == 1)
        p->fixed_clk += COL_REDUCE_CLK;
    p->tc_w = p->tc_clk > 0 ? wl_core_gpu_tc_power_scale(
                                  gpu, k->in_dtype == WL_DT_FP32 ? WL_DT_TF32 : k->in_dtype)
                            : 1.0;
}

static void prepare_tiled(const wl_core_gpu *gpu, const wl_kernel *k, wl_kprep *p)
{
    prepare(gpu, k, 1, p);
}

static void prepare_roofline(const wl_core_gpu *gpu, const wl_kernel *k, wl_kprep *p)
{
    prepare(gpu, k, 0, p);
}

static const wl_core_latency_type tiled_type = {"tiled", prepare_tiled};
static const wl_core_latency_type roofline_type = {"roofline", prepare_roofline};
const wl_core_latency_type *wl_core_latency_tiled = &tiled_type;
const wl_core_latency_type *wl_core_latency_roofline = &roofline_type;

const wl_core_latency_type *wl_core_latency_lookup(const char *name)
{
    static const wl_core_latency_type *const all[] = {&tiled_type, &roofline_type};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        if (strcmp(all[i]->name, name) == 0)
            return all[i];
    return NULL;
}

const char *wl_core_latency_name(const wl_core_latency_type *t)
{
    return t ? t->name : "?";
}
