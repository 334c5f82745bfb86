/* wattlas evaluation core: GPU + workload + operating point -> time, power, energy.
 * Plain data (GPU description, kernels, results) is visible; the workload and
 * the evaluator own memory and are opaque handles with create/free (free
 * accepts NULL). Functions return WL_OK or an error code and write results
 * through out-parameters. */
#ifndef WATTLAS_CORE_H
#define WATTLAS_CORE_H
#include <stddef.h>
#define WL_VERSION "0.1.0"
/* EINVAL: bad argument or input; EIO: a file unread or unwritten; EPARSE: malformed
 * input (the error struct); EUNSUPPORTED: the GPU lacks what the kernel needs;
 * ENOCONV: no convergence; ESTOPPED: a stop was asked for (wl_stop_watch) */
enum { WL_OK = 0, WL_EINVAL = 1, WL_ENOMEM = 2, WL_EIO = 3, WL_EPARSE = 4, WL_ENOTFOUND = 5,
       WL_EUNSUPPORTED = 6, WL_ENOCONV = 7, WL_ESTOPPED = 8 };
/* Long calls poll *flag (the caller's signal handler sets it; NULL: none) and return WL_ESTOPPED. */
void wl_stop_watch(volatile int *flag);
int wl_stop_requested(void);

const char *wl_core_strerror(int status);
/* "; did you mean X, Y?" for a word none of the n candidates is (cand_of
 * gives the i-th, NULL to skip it): those that contain it, or else those a
 * few edits away (case-insensitive Levenshtein); empty when none is close. */
void wl_core_name_hint(const char *(*cand_of)(void *user, size_t i), void *user, size_t n,
                       const char *word, char *buf, size_t cap);
/* Parse/validation error, filled by parsers (jansson style). */
typedef struct {
    char source[256]; /* file name or "<preset:ID>" */
    int line;         /* 1-based, 0 when not line-specific */
    char field[64];   /* key or column, may be empty */
    char text[256];
} wl_error;

void wl_error_set(wl_error *err, const char *source, int line, const char *field,
                  const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Names where an error came from when its finder could not: sets source and line. */
void wl_error_locate(wl_error *err, const char *source, int line);
/* "source:line: field: text" into buf. */
void wl_error_format(const wl_error *err, char *buf, size_t n);

/* ---- the one grammar of numbers, lists and ranges (options, specs, presets, cells)
 *  number: the whole text as strtod reads it in the C locale, blanks around it allowed; finite.
 *  list:   items separated by commas, blanks around them ignored; an item is
 *          a number or a range MIN:MAX:STEP (MIN, MIN + STEP, ... up to MAX,
 *          STEP > 0, MIN <= MAX). An empty item (",,", a trailing comma) or
 *          an empty list is an error; in an axis (a row per value), a value twice.
 * Errors go to err with the given source, line and field and say what was
 * expected ("expected a number in [1, 1e+06], got 'abc'"). */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
/* fuzz builds: the same checks at a size one execution takes microseconds for */
#define WL_LIST_MAX 4096
#else
#define WL_LIST_MAX 1000000 /* values in one list or range */
#endif
#define WL_CORE_NUM_TEXT 40 /* a number for a message: integers without exponent, else %g */
void wl_core_num_text(char *buf, size_t n, double v);
int wl_core_parse_number(const char *s, double *out); /* WL_OK or WL_EINVAL */
const char *wl_core_number_why(const char *s); /* why s is no number; NULL: it is one */
/* " ('1.4GHz' carries the unit GHz; --clock takes plain MHz: write 1400)", or "" */
void wl_core_unit_hint(const char *text, const char *source, const char *field, char *buf, size_t n);
int wl_core_parse_real(const char *s, double lo, double hi, const char *source, int line,
                       const char *field, double *out, wl_error *err);
int wl_core_parse_int(const char *s, long long lo, long long hi, const char *source, int line,
                      const char *field, long long *out, wl_error *err);

typedef struct { double *v; size_t n, cap; } wl_core_numlist;
/* Appends a list's values in [lo, hi] (whole numbers when integers); axis: none twice. */
int wl_core_parse_list(const char *s, double lo, double hi, int integers, const char *source,
                       int line, const char *field, wl_core_numlist *out, wl_error *err);
int wl_core_parse_axis(const char *s, double lo, double hi, int integers, const char *source,
                       int line, const char *field, wl_core_numlist *out, wl_error *err);
int wl_core_cmp_double(const void *a, const void *b); /* qsort: ascending doubles */
void wl_core_numlist_free(wl_core_numlist *l);

typedef struct { char **v; size_t n; } wl_core_strlist;
/* Appends the items of a comma-separated list of names (blanks trimmed). */
int wl_core_parse_names(const char *s, const char *source, int line, const char *field,
                        wl_core_strlist *out, wl_error *err);
void wl_core_strlist_free(wl_core_strlist *l);
/* Shape limits shared by the builders, traces and every input that gives
 * them: one tensor of a kernel holds at most WL_MAX_TENSOR_ELEMENTS. */
#define WL_MAX_BATCH 1000000LL
#define WL_MAX_SEQ 10000000LL
#define WL_MAX_TENSOR_ELEMENTS 1e15

/* Reads a whole file into a NUL-terminated buffer (free with free()); at
 * most WL_MAX_FILE_BYTES (an endless device is an error, not all memory). */
#define WL_MAX_FILE_BYTES (1 << 30)
int wl_core_read_file(const char *path, char **out, size_t *len, wl_error *err);
/* The git commit the library was built from ("unknown" outside a checkout;
 * "+modified" with uncommitted changes). */
const char *wl_core_build_commit(void);
/* printf into a new string of the length it needs (free(); NULL: out of memory). */
char *wl_core_strprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* A line formatted into a bounded buffer (1200 bytes, cut beyond) and
 * handed to say: how the library's runs report their lines and notes
 * through a caller's callback (NULL: nothing). */
void wl_core_say(void (*say)(void *user, const char *line), void *user, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- precisions ---------------------------------------------------------- */
typedef enum { WL_DT_FP32 = 0, WL_DT_TF32, WL_DT_FP16, WL_DT_BF16, WL_DT_FP8, WL_DT_INT8,
               WL_DT_COUNT } wl_dtype;
const char *wl_dtype_name(wl_dtype dt);
int wl_dtype_parse(const char *s, wl_dtype *out); /* WL_OK or WL_EINVAL */
double wl_dtype_bytes(wl_dtype dt);               /* storage bytes per element */

/* ---- GPU description ----------------------------------------------------- */
#define WL_VF_MAX 128

/* Measured or derived curve: voltage and idle board power vs SM clock,
 * linearly interpolated, clamped at the ends. */
typedef struct {
    int n;
    double clock_mhz[WL_VF_MAX];
    double voltage_mv[WL_VF_MAX];
    double idle_w[WL_VF_MAX];
} wl_core_vf;

/* Per-GPU model coefficients. Latency ones are dimensionless efficiencies or
 * times; power ones are effective switched capacitances expressed as watts at
 * full activity, 1 V and 1 GHz (P = c * u * V^a * f, a = v_exponent, 2 for
 * pure switching; short-circuit current makes it steeper), or energies per byte. */
typedef struct {
    /* latency */
    double tc_eff;            /* mainloop fraction of tensor-core peak */
    double cuda_eff;          /* mainloop fraction of CUDA-core peak (SIMT GEMM) */
    double alu_eff;           /* memory-bound kernels: useful FP ops per issued
                                 instruction slot (index math, loads, converts) */
    double dram_eff;          /* achievable fraction of DRAM bandwidth */
    double l2_eff;            /* achievable fraction of L2 bandwidth */
    double mem_bytes_per_clk; /* DRAM-sourced bytes per SM clock the chip can keep in
                                 flight (Little's law: outstanding misses / latency in
                                 SM cycles), so streaming bandwidth falls with clock */
    double mem_path_gbs;      /* the clock-independent part of that path (DRAM
                                 latency in ns) as a bandwidth: the miss path takes
                                 bytes/(mem_bytes_per_clk f) + bytes/mem_path_gbs */
    double overlap_p;         /* smooth-max exponent for compute/memory overlap */
    double tile_overhead_clk; /* prologue+epilogue SM cycles per GEMM tile */
    double kernel_fixed_us;   /* device launch latency + tail, clock independent */
    double kernel_fixed_clk;  /* block scheduling/ramp cycles, scales with 1/f */
    double host_launch_us;    /* host time to issue one kernel of a model's forward
                                 pass (eager framework: the op's dispatch plus the
                                 module code around it) */
    double host_op_launch_us; /* host time per kernel of one op called in a bare
                                 loop (a repeated workload: a kernel
                                 microbenchmark), with no module code around it;
                                 0: host_launch_us */
    double host_train_launch_us; /* ... per kernel of a training step (0: host_launch_us) */
    /* ... per backward, optimizer kernel of a step (0: host_train_launch_us);
     * per decode-step kernel, per wl_kernel.internal one (0: the workload's) */
    double host_backward_launch_us, host_optimizer_launch_us;
    double host_decode_launch_us, host_driver_launch_us;
    double host_serve_step_us; /* a serving engine's host time per decode step the
                                  GPU waits for: scheduling, inputs, the sampled
                                  tokens (0: not modelled) */
    double host_serve_seq_us;  /* ... and per running sequence in the step */
    double launch_clk;        /* GPU front-end cycles per launch that serialise with
                                 the host when the queue is empty */
    /* power */
    double v_exponent;        /* dynamic power ~ V^v_exponent * f (2 for pure CV^2f) */
    double c_active_w;        /* SM activity baseline (clocks, schedulers, RF) */
    double c_gap_w;           /* clock power over launch latency and host gaps,
                                 less the idle table's own (core/eval.c) */
    double c_tc_w;            /* tensor cores at full utilisation */
    double c_fp_w;            /* FP/ALU pipes at full utilisation */
    double c_sfu_w;           /* special-function units */
    double c_smem_w;          /* shared memory / L1 at full bandwidth */
    double c_l2_w;            /* L2 at full bandwidth */
    double e_dram_pj_per_byte;/* DRAM access energy (memory clock is fixed) */
    double dram_background_w; /* DRAM/PHY power while busy, beyond idle */
    double leak_w_per_c;      /* leakage slope vs die temperature at v_ref */
    double vf_temp_mhz_per_c; /* V-f curve shift under load: the voltage at clock f
                                 is the idle table's at f + k (T - T_idle) */
    double thermal_c_per_w;   /* die temperature rise per watt above idle */
    double idle_temp_c;       /* die temperature at idle power */
    double power_cap_frac;    /* governor target as a fraction of the limit */
    double tc_fp8_power_ratio; /* a busy fp8 tensor-core cycle's power over a bf16
                                  one's, measured (0: core/tech.c's rule) */
} wl_core_coeffs;

typedef struct {
    char id[64];
    char name[128];
    int sms;
    double sm_clock_min_mhz, sm_clock_max_mhz, sm_clock_step_mhz;
    /* the SM clock the datasheet states its tensor rates at (H100 SXM:
     * 989 TFLOPS bf16 = 132 SMs x 4096 x 1830 MHz, below its 1980 MHz top
     * clock); 0: sm_clock_max_mhz. MFU's peak, as papers count it */
    double datasheet_clock_mhz;
    /* dense FLOP (or OP) per SM per clock; 0 = not supported */
    double tc_flop_per_clk_sm[WL_DT_COUNT];
    double cuda_flop_per_clk_sm[WL_DT_COUNT];
    double sfu_op_per_clk_sm;
    /* INT32 operations per SM per clock: the pipe that the index math,
     * address and conversion instructions of memory-bound kernels issue to.
     * Hopper doubled FP32 (128 lanes per SM) but kept 64 INT32 lanes (16 per
     * SM sub-partition, H100 whitepaper), as did GA102 and Ada; 0 = half
     * the FP32 rate, at most 64 */
    double cuda_int32_op_per_clk_sm;
    double l2_size_mb;
    double l2_bytes_per_clk;   /* whole-chip L2 bandwidth, scales with SM clock */
    double l2_clock_min_mhz;   /* the L2 and crossbar clock follows the SM clock
                                  down to this floor and no lower (0 = none) */
    char dram_type[16];
    double dram_bw_gbs;
    double mem_clock_mhz;
    double smem_per_sm_kb;
    double smem_bytes_per_clk_sm;
    int max_warps_per_sm;
    int gemm_stream_k;         /* the GEMM library balances the work over all SMs
                                  (stream-K: cuBLAS on Hopper), so no wave
                                  quantisation and no idle SMs on small grids */
    int cluster_multicast;     /* CTAs of a cluster sharing operand loads via
                                  TMA multicast (Hopper+: 2); 0 or 1 = none */
    double mem_capacity_gb;    /* device memory in GB (1e9 B), 0 = unknown */
    double power_limit_w;
    /* time constant of the governor's clock response to a kernel above the
     * cap (core/eval.c); 0: not given, WL_POWER_TAU_DEFAULT_US */
    double power_tau_us;
    double power_limit_min_w;  /* the lowest limit the board accepts
                                  (nvidia-smi -q -d POWER "Min Power Limit";
                                  0 = unknown) */
    double tdp_w;
    double process_nm;         /* effective feature size (0 = unknown), for transfer */
    /* [technology]: energies that override the node-scaled tables (0 = from
     * the table): per MAC (FMA for fp32) by precision, per byte of shared
     * memory and of L2, DRAM device + PHY per bit */
    double tech_mac_pj[WL_DT_COUNT];
    double tech_reg_pj_per_byte;
    double tech_smem_pj_per_byte, tech_l2_pj_per_byte, tech_dram_pj_per_bit;
    double v_ref_mv;           /* voltage at which leakage slope is given */
    /* timing feasibility (alpha-power law, Sakurai-Newton 1990):
     * f_max(V) ~ (V - vth)^alpha / V, anchored at the top of the V-f curve
     * less the guardband */
    double vth_mv, alpha_power;
    double vf_guardband_mv;
    /* the silicon's critical point: the top of the preset's own V-f curve,
     * fixed when the preset is read, so that a design change of the curve
     * (--set vmin_mv=...) is judged against the chip, not against itself */
    double vf_anchor_mhz, vf_anchor_mv;
    /* Rule-based curves for GPUs without a measured table ([vf] vmin_mv,
     * vmax_mv, vf_knee_mhz, idle_power_min_w, idle_power_max_w): see
     * wl_core_gpu_vf_rule. vf_rule says which columns the rule owns. */
    double vf_vmin_mv, vf_vmax_mv, vf_knee_mhz;
    double idle_min_w, idle_max_w, idle_clock_slope;
    unsigned vf_rule;
    char vf_voltage_from[128]; /* [vf] voltage_from: the rows calib/vf.c derived it from */
    wl_core_vf vf;
    wl_core_coeffs coef;
    char coef_source[256];     /* "" (own), "transferred from ID", how an edited
                                  spec got them, or that they are defaults */
    char fit_info[224];        /* what the preset says they were fitted on (rows,
                                  file, hash, held out), or ""; a source's if transferred */
    char host_id[64];          /* the host whose issue cost coef.host_launch_us is (set_host);
                                  "" when [calibration] gives host_launch_us itself */
} wl_core_gpu;

/* ---- hosts ----------------------------------------------------------------
 * The machine that issues the kernels: CPU, driver and framework. Eager
 * PyTorch spends a fixed host time on every kernel (Python, the ATen
 * dispatcher, the CUDA launch call); a workload whose kernels are shorter
 * than that runs at the host's pace whatever the GPU: a faster CPU or a
 * newer framework speeds up small workloads, not large ones. */
typedef struct {
    char id[64];
    char name[128];
    double launch_us;        /* host time per kernel of a model's forward pass,
                                eager PyTorch with its module code (HF models) */
    double launch_us_stderr; /* its standard error (0: not stated) */
    double op_launch_us;     /* host time per kernel of one op called in a bare
                                Python loop (0: not stated, launch_us) */
    double op_launch_us_stderr;
    double train_launch_us;  /* ... of a training step (0: not stated, launch_us) */
    double train_launch_us_stderr;
    double backward_launch_us, backward_launch_us_stderr;   /* ... of its backward, */
    double optimizer_launch_us, optimizer_launch_us_stderr; /* optimizer (0: train's) */
    double decode_launch_us, driver_launch_us; /* a decode step's, a library's 2nd (0: none) */
    double serve_step_us;    /* an engine's host time per decode step (0: none) */
    double serve_seq_us;     /* ... plus this per running sequence */
} wl_core_host;

/* Host time per kernel of a bare op in a loop: host_op_launch_us, else host_launch_us. */
double wl_core_coeffs_op_launch_us(const wl_core_coeffs *c);
/* ... of a training step: host_train_launch_us, else host_launch_us; of phase
 * ph (wl_phase): backward, optimizer where stated, else that; decode's, else the forward's. */
double wl_core_coeffs_train_launch_us(const wl_core_coeffs *c);
double wl_core_coeffs_phase_launch_us(const wl_core_coeffs *c, int ph);
/* A serving engine's host step, us: host_serve_step_us + host_serve_seq_us x seqs. */
double wl_core_coeffs_engine_step_us(const wl_core_coeffs *c, double seqs);
/* Whether a coefficient (wl_core_coeffs member name) is a host's issue cost,
 * which a host preset owns (the host_* members). */
int wl_core_coef_is_host(const char *name);
/* The i-th cost of a host preset ([host] key, wl_core_host member offset,
 * upper bound in us), launch_us first; NULL past the last. */
const char *wl_core_host_cost(size_t i, size_t *off, double *hi);
/* WL_EINVAL unless launch_us is in (0, 10000] and every other cost in range. */
int wl_core_host_check(const wl_core_host *host, wl_error *err);
/* Puts the host's issue cost into gpu->coef and its id into gpu->host_id;
 * nothing else of the GPU changes. */
void wl_core_gpu_set_host(wl_core_gpu *gpu, const wl_core_host *host);
/* Interpolated V(f) in mV and idle power in W. */
double wl_core_gpu_voltage_mv(const wl_core_gpu *gpu, double sm_clock_mhz);
double wl_core_gpu_idle_w(const wl_core_gpu *gpu, double sm_clock_mhz);
/* The idle table's clock power, W per GHz at 1 V, and the lowest clock the
 * power governor holds a kernel at (core/gpu.c). */
double wl_core_gpu_idle_clock_w(const wl_core_gpu *gpu);
double wl_core_gpu_floor_mhz(const wl_core_gpu *gpu);
/* Highest clock the silicon sustains at a voltage (alpha-power law), and
 * whether (clock, voltage) is feasible. */
double wl_core_gpu_fmax_mhz(const wl_core_gpu *gpu, double voltage_mv);
int wl_core_gpu_feasible(const wl_core_gpu *gpu, double sm_clock_mhz, double voltage_mv);
/* The GPU's clock grid: min, min + step, ..., and max (always included). */
size_t wl_core_gpu_clock_count(const wl_core_gpu *gpu);
/* INT32 operations per SM per clock (cuda_int32_op_per_clk_sm, or half
 * the FP32 rate up to 64 when the preset does not give it). */
double wl_core_gpu_alu_rate(const wl_core_gpu *gpu);
/* The governor's time constant in us (power_tau_us, or the default). */
double wl_core_gpu_power_tau_us(const wl_core_gpu *gpu);
/* Dense peak FLOP/s of the precision's matrix math at a clock, as PyTorch
 * runs it: tensor cores for half precision and tf32, CUDA cores for fp32
 * (matmuls do not use TF32 by default); 0 when the GPU has neither. */
double wl_core_gpu_peak_flops(const wl_core_gpu *gpu, wl_dtype dt, double sm_clock_mhz);
/* The datasheet's dense peak of the precision (wl_core_gpu_peak_flops at
 * datasheet_clock_mhz): the denominator of MFU as Megatron-LM, PaLM and the
 * Llama 3 report count it (989 TFLOPS bf16 on an H100 SXM). */
double wl_core_gpu_datasheet_peak_flops(const wl_core_gpu *gpu, wl_dtype dt);
double wl_core_gpu_clock(const wl_core_gpu *gpu, size_t i);
/* Whether a requested clock lies in the GPU's range (where its V-f curve is
 * defined); the check names the clock and the range in err (field "clock"). */
int wl_core_gpu_clock_in_range(const wl_core_gpu *gpu, double sm_clock_mhz);
int wl_core_gpu_clock_check(const wl_core_gpu *gpu, double sm_clock_mhz, const char *source,
                            int line, wl_error *err);
/* Rule-based V-f and idle curves (written into gpu->vf):
 *  V(f) = vmin for f <= knee, then linear to vmax at sm_clock_max_mhz
 *         (the DVFS shape of the measured A100 tables: flat floor, then a rise);
 *  idle(f) = idle_min (1 + s (f - fmin) / fmax)            clock tree, linear in f
 *          + D (V(f) - vmin) / (vmax - vmin)                leakage, rises with V
 *  with s = idle_clock_slope and D chosen so idle(fmax) = idle_max.
 * Missing knots are generated over the clock range; only the columns named
 * in gpu->vf_rule are rewritten. */
#define WL_VF_RULE_VOLTAGE 1u
#define WL_VF_RULE_IDLE 2u
int wl_core_gpu_vf_rule(wl_core_gpu *gpu, wl_error *err);
/* Fills rule parameters that are unset (0) from the current table, so a rule
 * can take over a measured column (vmin, vmax at the ends, knee = last clock
 * within 1 mV of the floor, idle at the ends). */
void wl_core_gpu_vf_rule_from_table(wl_core_gpu *gpu);
/* Energy per operation scales with feature size as L^WL_NODE_ENERGY_EXP
 * (fit between the 45 nm and 7 nm tables, see core/gpu.c). */
#define WL_NODE_ENERGY_EXP 0.567
double wl_core_node_energy_scale(double from_nm, double to_nm);
/* DRAM device + PHY access energy in pJ/bit by technology (HBM2, HBM2e,
 * HBM3, HBM3e, GDDR6, GDDR6X; case-insensitive), or 0 when unknown. */
double wl_core_dram_pj_per_bit(const char *dram_type);
/* Carries calibrated coefficients from src to dst by explicit scaling rules
 * (documented at the definition in core/gpu.c): architecture efficiencies
 * and host costs stay, switched capacitances scale with the unit count and
 * the process node, DRAM energy with the memory technology, leakage with
 * the idle power, thermal resistance with the TDP. dst's spec sheet is
 * unchanged; only dst->coef is written. Identity when src and dst agree.
 * WL_EINVAL (err names the field) when a rule lacks an input. */
int wl_core_gpu_transfer(const wl_core_gpu *src, wl_core_gpu *dst, wl_error *err);
/* 1 when a and b are the same die (SM count, L2, process node and top SM
 * clock agree: the H100 and H200's GH100), whatever their memory and board. */
int wl_core_gpu_same_die(const wl_core_gpu *a, const wl_core_gpu *b);
/* Checks that every field is physically meaningful; WL_EINVAL with err set. */
int wl_core_gpu_check(const wl_core_gpu *gpu, wl_error *err);
/* Default coefficients (uncalibrated priors, documented in core/gpu.c). */
void wl_core_coeffs_default(wl_core_coeffs *c);

/* ---- kernels and workloads ------------------------------------------------ */
typedef enum {
    WL_K_GEMM = 0,    /* dense or batched GEMM (also conv as implicit GEMM) */
    WL_K_ATTN_FLASH,  /* fused attention: QK^T, softmax, PV in one kernel */
    WL_K_SOFTMAX,
    WL_K_LAYERNORM,
    WL_K_RMSNORM,
    WL_K_REDUCE,      /* row reduction (mean, sum) */
    WL_K_ELEMENTWISE,
    WL_K_GAP,         /* explicit host-side gap (sync, data loading) */
    WL_K_MEASURED,    /* known only by its measured time (a profile's kernel
                         no mapping covers, a memset or memcpy): taken as
                         memory-bound, measured_us at every SM clock */
    WL_K_COUNT
} wl_kernel_kind;
typedef enum {
    WL_EW_ADD = 0,      /* pointwise_add: two tensor inputs */
    WL_EW_MUL,          /* pointwise_mul */
    WL_EW_SCALAR_ADD,   /* one tensor input */
    WL_EW_SCALAR_MUL,
    WL_EW_RELU,
    WL_EW_GELU,         /* erf GELU */
    WL_EW_SILU,
    WL_EW_TANH,
    WL_EW_CAST_FP32,    /* typecast_to_fp32: reads dtype, writes fp32 */
    WL_EW_CAST_BF16,    /* typecast_to_bf16: reads fp32, writes bf16 */
    WL_EW_UNSPEC_SCALAR,/* one input, e.g. pow, div by scalar, neg */
    WL_EW_UNSPEC_TENSOR,/* two inputs, e.g. where(mask, x, y) */
    WL_EW_COPY,         /* contiguous copy / cat */
    WL_EW_TERNARY,      /* three tensor inputs: addcmul, addcdiv, where */
    WL_EW_DROPOUT,      /* native_dropout: Philox draws, writes output and
                           a one-byte mask */
    WL_EW_DROPOUT_BWD,  /* native_dropout_backward: grad x mask x scale */
    WL_EW_FILL,         /* write-only: zero_(), fill_(), ones_like */
    WL_EW_SILU_MUL,     /* silu(a) * b over the two halves of one input
                           (vLLM's silu_and_mul): n outputs, 2n inputs */
    WL_EW_COUNT
} wl_ew_op;
const char *wl_kernel_kind_name(wl_kernel_kind k);
const char *wl_ew_op_name(wl_ew_op op);
int wl_ew_op_parse(const char *s, wl_ew_op *out);
/* The phase of a step a kernel belongs to: a prefill (or any forward-only
 * pass) is all WL_PHASE_FORWARD; a training step adds the backward pass
 * (recomputed forwards included) and the optimizer step; a generation is a
 * prefill (time to first token) and its decode steps. */
typedef enum {
    WL_PHASE_FORWARD = 0,
    WL_PHASE_BACKWARD,
    WL_PHASE_OPTIMIZER,
    WL_PHASE_DECODE,
    WL_PHASE_COUNT
} wl_phase;
const char *wl_phase_name(wl_phase p); /* forward, backward, optimizer, decode */

/* One kernel launch. Field use by kind:
 *  GEMM:       m, n, k, batch (independent GEMMs), in/acc dtype, tensor_core
 *  ATTN_FLASH: batch = batch*heads, m = query length, n = key length,
 *              k = head dim, causal, groups (query heads per key/value
 *              head, 0 = 1: grouped-query attention reads k and v once
 *              per group)
 *  SOFTMAX, LAYERNORM, RMSNORM, REDUCE: batch = rows, n = row length; a
 *              softmax with causal = 1 is ATen's over a causally masked row,
 *              causal = 2 Megatron's fused scaled_upper_triang_masked
 *              softmax (core/latency.c); a norm with residual = 1 has the
 *              residual add fused in (vLLM's fused_add_rms_norm: reads x and
 *              the residual, writes the sum and the normalised rows)
 *  ELEMENTWISE: n = elements, op
 *  GAP:        gap_us; with engine = 1 also the host's serving-engine step
 *              (coef.host_serve_step_us + host_serve_seq_us x batch, batch =
 *              the running sequences) */
typedef struct {
    wl_kernel_kind kind;
    wl_ew_op op;
    wl_dtype in_dtype;
    wl_dtype acc_dtype;
    int tensor_core, causal;
    long long m, n, k, batch;
    double gap_us;
    /* GEMM from an implicit-GEMM convolution (0 = a plain GEMM): filter taps
     * r*s and stride. The A operand is the im2col view of the input, which
     * DRAM holds only once: its bytes are M K stride^2 / taps (at most M K). */
    int conv_taps, conv_stride;
    int phase;     /* wl_phase */
    int bwd;       /* the backward kernel of the kind (softmax, norms, flash
                      attention, unary elementwise ops): reads the incoming
                      gradient beside the saved tensor */
    int graphed;   /* replayed from a CUDA graph: no host issue cost */
    int internal;  /* a library's second kernel in one op: a driver launch */
    int sync;      /* GAP only: the host first waits for the GPU to finish
                      (.item(), a sampled token read back) */
    int groups;    /* ATTN_FLASH: query heads per key/value head (0 = 1) */
    int residual;  /* norms: the residual add fused in */
    int engine;    /* GAP only: a serving engine's host step (see above) */
    /* ELEMENTWISE: the path ATen's TensorIterator takes (0: vectorized,
     * contiguous operands; 1: an operand broadcast or not contiguous, so
     * every element's offsets are computed per dimension; 2: cat's batched
     * copy of a strided input; 3: a foreach op's multi_tensor_apply, one
     * CTA per 64Ki-element chunk; 4: the dynamic-casting path of an
     * operand whose dtype is not the op's, a half-precision upcast; see
     * core/latency.c) */
    int strided;
    /* GEMM: a row of an operand is not 16-byte aligned (a weight dimension
     * that is not a multiple of 8 elements in 16 bits: a 50257-word
     * vocabulary), which rules out Hopper's TMA kernels (core/latency.c) */
    int unaligned;
    /* From a profile: the launch's measured duration and the SM clock it ran
     * at (0: not measured). A measured kernel is anchored: its predicted
     * time at any clock is the model's time there scaled by measured_us over
     * the model's time at measured_mhz (see core/eval.c). */
    double measured_us;
    double measured_mhz;
} wl_kernel;

typedef struct wl_core_workload wl_core_workload;
wl_core_workload *wl_core_workload_create(const char *name);
void wl_core_workload_free(wl_core_workload *wl);
int wl_core_workload_add(wl_core_workload *wl, const wl_kernel *k);
/* Adds one launch that stands for n (1 to 1e12) launches of the same
 * kernel: a long generation's decode steps are built a few per block of
 * steps, each standing for its block (core/build_gen.c). The launches
 * added with the same n from a wl_core_workload_begin_stretch on form a
 * stretch that ran n times over, back to back, before the next: the
 * evaluator counts their launches, time and energy n times, the
 * stretch's wall time (its host gaps included) n times, and carries the
 * power governor's clock from one repetition to the next. */
int wl_core_workload_add_n(wl_core_workload *wl, const wl_kernel *k, long long n);
/* The next launch added begins a stretch (see add_n). */
void wl_core_workload_begin_stretch(wl_core_workload *wl);
/* Whether launch i begins a stretch. */
int wl_core_workload_stretch_start(const wl_core_workload *wl, size_t i);
/* The launches launch i stands for (1 unless added by add_n). */
long long wl_core_workload_repeat(const wl_core_workload *wl, size_t i);
/* Adds k as src's launch i is added: standing for as many, beginning a
 * stretch where it does (a copy that changes the kernels). */
int wl_core_workload_add_as(wl_core_workload *wl, const wl_core_workload *src, size_t i,
                            const wl_kernel *k);
size_t wl_core_workload_count(const wl_core_workload *wl);
/* The launches that run on the GPU (all but the host's gaps). */
size_t wl_core_workload_launches(const wl_core_workload *wl);
const wl_kernel *wl_core_workload_kernel(const wl_core_workload *wl, size_t i);
const char *wl_core_workload_name(const wl_core_workload *wl);
/* Number of distinct kernels (identical launches are evaluated once). */
size_t wl_core_workload_unique_count(const wl_core_workload *wl);
/* A repeated workload is measured as many back-to-back runs with no sync
 * between them (a kernel microbenchmark: time and energy per launch). The
 * host issues ahead while the GPU runs, so in the steady state a run takes
 * the larger of the host's issue time and the GPU's busy time, not their
 * sum as a single run from an idle queue does. */
void wl_core_workload_set_repeated(wl_core_workload *wl, int repeated);
int wl_core_workload_repeated(const wl_core_workload *wl);
/* Whether it is a training step: a kernel of the backward pass (its kernels
 * pay the host's host_train_launch_us). */
int wl_core_workload_training(const wl_core_workload *wl);
/* What importing the workload left out or assumed (note), and what makes
 * its prediction doubtful (warning), for the user; "" when nothing. */
const char *wl_core_workload_note(const wl_core_workload *wl);
const char *wl_core_workload_warning(const wl_core_workload *wl);
/* Whether the GPU can run every matrix kernel of wl: a precision needs a
 * tensor-core or CUDA-core rate (tf32 runs as fp32 without TF32 tensor
 * cores, as PyTorch does); else WL_EINVAL, err's field "dtype". */
int wl_core_gpu_runs(const wl_core_gpu *gpu, const wl_core_workload *wl, wl_error *err);
/* Total tensor/CUDA-core FLOPs of the workload. */
double wl_core_workload_flops(const wl_core_workload *wl);
/* Two kernels describe the same work. */
int wl_kernel_equal(const wl_kernel *a, const wl_kernel *b);
/* Whether a kernel describes possible work: positive dimensions, no tensor
 * above WL_MAX_TENSOR_ELEMENTS, a gap of at most an hour, known enums.
 * WL_EINVAL with the offending field in err (source and line as given). */
int wl_kernel_check(const wl_kernel *k, const char *source, int line, wl_error *err);
/* Whether the host's issue times are the workload's own GAP kernels (a
 * profile's timeline): then no kernel pays the model's host_launch_us. */
void wl_core_workload_set_host_timed(wl_core_workload *wl, int host_timed);
int wl_core_workload_host_timed(const wl_core_workload *wl);
/* What a profile recorded (core/evaluator.c anchors its kernels there):
 * the power limit it ran under (W; 0: unknown, the GPU's default, tdp_w),
 * so that a prediction under another limit starts from what was recorded;
 * the clock it was requested at (0: none); the board it ran on, by name
 * ("" unknown) and as loaded (a copy; NULL unloads): each kernel's
 * measured / model ratio on that board carries to the GPU asked about
 * (without one, the profile is taken as recorded on the GPU asked about). */
void wl_core_workload_set_recorded_limit(wl_core_workload *wl, double watts);
double wl_core_workload_recorded_limit(const wl_core_workload *wl);
double wl_core_workload_recorded_clock(const wl_core_workload *wl);
void wl_core_workload_set_recorded_gpu_id(wl_core_workload *wl, const char *id);
const char *wl_core_workload_recorded_gpu_id(const wl_core_workload *wl);
int wl_core_workload_set_recorded_gpu(wl_core_workload *wl, const wl_core_gpu *gpu);
const wl_core_gpu *wl_core_workload_recorded_gpu(const wl_core_workload *wl);
/* Import a kernel trace: the JSON list of shared/data/traces, or a PyTorch
 * profiler Chrome trace (core/profile.c), either of them gzipped or not. */
int wl_core_trace_load(const char *path, wl_core_workload **out, wl_error *err);
/* What a profile's file may not say (0 or "": the file's "wattlas"
 * metadata, else the clock in its name, the GPU's default limit and the
 * GPU asked about); with rec, giving any for a kernel trace, which
 * measured nothing, is WL_EINVAL (field profile_clock, ...). */
typedef struct {
    double sm_clock_mhz, power_limit_w, step_ms; /* step_ms: the unprofiled step's wall time */
    char gpu[256]; /* a preset id or INI file */
} wl_core_recorded;
int wl_core_trace_load_as(const char *path, const wl_core_recorded *rec, wl_core_workload **out,
                          wl_error *err);
int wl_core_trace_parse(const char *text, size_t len, const char *source,
                        wl_core_workload **out, wl_error *err);
/* A PyTorch profiler trace's text as a workload (core/profile.c): each
 * kernel mapped through its aten op and anchored to its measured time at
 * the clock, limit and board it ran at (rec, else the trace's "wattlas"
 * metadata, else as wl_core_recorded says), unmapped kernels, memsets and
 * memcpys kept at their measured times, the host's gaps and syncs from its
 * timeline. The workload's note counts what was kept unmapped. */
int wl_core_profile_parse(const char *text, size_t len, const char *source,
                          const wl_core_recorded *rec, wl_core_workload **out, wl_error *err);
/* The same launches in fp32, as eager PyTorch runs a half-precision model
 * in fp32: casts dropped, matmuls on CUDA cores, convolutions (conv_taps > 0)
 * on TF32 tensor cores. Only to == WL_DT_FP32 (WL_EUNSUPPORTED otherwise, or
 * for fused attention). */
int wl_core_workload_retype(const wl_core_workload *src, wl_dtype to, wl_core_workload **out,
                            wl_error *err);

/* ---- model builder --------------------------------------------------------- */
typedef enum { WL_ACT_RELU = 0, WL_ACT_GELU, WL_ACT_GELU_TANH, WL_ACT_SWIGLU } wl_activation;
typedef enum { WL_NORM_LAYERNORM = 0, WL_NORM_RMSNORM } wl_norm;
typedef enum { WL_POS_LEARNED = 0, WL_POS_ROTARY } wl_positions;
/* Which framework implementation's kernel sequence to reproduce. */
typedef enum {
    WL_STYLE_GPT2 = 0,
    WL_STYLE_BERT,
    WL_STYLE_OPT,
    WL_STYLE_LLAMA,
    WL_STYLE_VIT,    /* HF ViT: patch-embedding conv, pre-norm BERT-like encoder */
    WL_STYLE_RESNET  /* torchvision ResNet v1.5 bottlenecks, eval mode */
} wl_style;
#define WL_MAX_STAGES 8
typedef enum { WL_ATTN_EAGER = 0, WL_ATTN_FLASH } wl_attention;

typedef struct {
    char id[64];
    wl_style style;
    int layers, d_model;
    int heads, kv_heads, d_ff;
    int head_dim;      /* a head's width: 0 is d_model / heads (Qwen3, Gemma 3 set theirs) */
    int sliding_window, global_every; /* local attention over the last sliding_window keys
                                         but on every global_every-th layer (0: none) */
    wl_activation activation;
    wl_norm norm;
    int pre_norm;      /* 1 = pre-norm, 0 = post-norm */
    wl_positions positions;
    int qkv_bias;      /* informational; bias is fused into the GEMM epilogue */
    int pooler;        /* BERT pooler: dense + tanh on the first token */
    int final_norm;    /* a norm after the last layer */
    /* vision */
    int image_size;    /* input edge in pixels (square) */
    int patch_size;    /* ViT patch edge */
    int channels;      /* input channels (3) */
    int classes;       /* classifier outputs (ResNet fc) */
    int pooler_dim;    /* pooler output width (0 = d_model) */
    int base_width;    /* ResNet: bottleneck width of the first stage */
    int stages;        /* ResNet: number of stages */
    int blocks[WL_MAX_STAGES]; /* ResNet: bottlenecks per stage */
    /* embedding tables (weights only; the builders record no gathers):
     * 0 = not given, not counted */
    int vocab_size;
    int max_positions;   /* learned position table rows (OPT: 2048 + 2) */
    int type_vocab_size; /* BERT token types */
    /* training */
    int untied_head;          /* the LM head has its own weight (Llama-3);
                                 0: tied to the token embedding (HF default) */
    double hidden_dropout;    /* dropout after embeddings and each sublayer */
    double attention_dropout; /* dropout on the attention probabilities */
    /* mixture of experts (Shazeer et al. 2017; Mixtral, Jiang et al. 2024;
     * DeepSeek-V3, 2024): each MoE layer's FFN is `experts` routed experts
     * of width d_ff_expert, each token sent to experts_per_token of them,
     * beside shared_experts always-active ones; the first dense_layers
     * layers keep a dense FFN of d_ff. experts 0: a dense model. */
    int experts, experts_per_token;
    int d_ff_expert;          /* 0: d_ff */
    int shared_experts, dense_layers, moe_every; /* moe_every k > 1: only every k-th
                                 layer MoE, the others dense (Llama 4 Maverick: 2) */
    int router_bias;          /* a per-expert routing bias (DeepSeek-V3's
                                 e_score_correction_bias) */
    int route_nodes;          /* node-limited routing: each token's experts
                                 on at most this many nodes, each node sent
                                 the token once (DeepSeek-V3's M = 4);
                                 0: no limit */
    /* multi-head latent attention (DeepSeek-V2/V3): kv_lora_rank > 0
     * compresses keys and values to that rank (queries to q_lora_rank,
     * 0: none); query/key heads are qk_nope_head_dim + qk_rope_head_dim
     * wide (the second part rotary, its key shared by all heads), value
     * heads v_head_dim */
    int q_lora_rank, kv_lora_rank;
    int qk_nope_head_dim, qk_rope_head_dim, v_head_dim;
} wl_core_model;
/* Whether the model has MoE layers or latent attention, which wattlas
 * cluster models and the single-GPU builders refuse. */
int wl_core_model_is_moe(const wl_core_model *m);
int wl_core_model_is_mla(const wl_core_model *m);
int wl_core_model_head_dim(const wl_core_model *m); /* head_dim, else d_model / heads */
int wl_core_model_layer_local(const wl_core_model *m, int layer); /* a sliding-window layer */
int wl_core_model_layer_moe(const wl_core_model *m, int layer);   /* a MoE layer */
/* Whether the model is a vision model (its input is images, not tokens). */
int wl_core_model_is_vision(const wl_core_model *m);
/* What a workload does with the model: one forward pass over the prompt,
 * one optimizer step of training, or the generation of new tokens. */
typedef enum { WL_MODE_PREFILL = 0, WL_MODE_TRAIN, WL_MODE_DECODE, WL_MODE_COUNT } wl_mode;
typedef enum { WL_OPTIM_ADAMW = 0, WL_OPTIM_SGD, WL_OPTIM_NONE /* forward, backward */ } wl_optimizer;
typedef enum { WL_RECOMPUTE_NONE = 0, WL_RECOMPUTE_SELECTIVE, WL_RECOMPUTE_FULL } wl_recompute;
typedef enum { WL_FT_FULL = 0, WL_FT_LORA } wl_finetune; /* what a training step trains */
/* LoRA's target projections, as bits (parse: q,k,v,o,gate,up,down, attention, mlp, all) */
enum { WL_LORA_Q = 1, WL_LORA_K = 2, WL_LORA_V = 4, WL_LORA_O = 8, WL_LORA_GATE = 16,
       WL_LORA_UP = 32, WL_LORA_DOWN = 64, WL_LORA_ALL = 127, WL_LORA_ATTENTION = 15,
       WL_LORA_RANK_DEFAULT = 16 }; /* the defaults: the attention's projections, rank 16 */
typedef enum { WL_LAUNCH_EAGER = 0, WL_LAUNCH_GRAPHS } wl_launch;
/* The software stack whose kernels a model launches: HF transformers 5.x on
 * PyTorch 2.11, what 'wattlas.measure' runs (shared/data/profiles), or the
 * transformers 4.x of EnergAIzer's A100 sets (shared/data/traces). */
typedef enum { WL_STACK_HF5 = 0, WL_STACK_HF4, WL_STACK_COUNT } wl_stack;
/* Which implementation runs the model: HF's eager modules (the stack's
 * kernel sequence), or a fused one (Megatron/TransformerEngine, vLLM,
 * torch.compile: fused norms, projections and attention). */
typedef enum { WL_IMPL_HF_EAGER = 0, WL_IMPL_FUSED, WL_IMPL_COUNT } wl_impl;
/* Zero: an eager prefill; train and decode fields apply in their modes. */
typedef struct {
    long long batch;     /* sequences (train: the micro-batch) */
    long long seq;       /* tokens per sequence (decode: the prompt) */
    wl_dtype dtype;
    wl_attention attention;
    wl_mode mode;
    /* train */
    wl_optimizer optimizer;
    int master_none;     /* 1: no fp32 master copy: weights, gradients and
                            optimizer state all in dtype ("--master-dtype none") */
    wl_recompute recompute;
    int grad_accum;      /* micro-batches per optimizer step (0 counts as 1) */
    /* fine-tuning (core/build_train.c): LoRA adapters of lora_rank (0: the
     * default) on the lora_targets (0: the default) of a frozen model; freeze > 0 freezes
     * the embeddings and the first freeze layers of a full fine-tuning */
    wl_finetune finetune;
    int lora_rank, freeze;
    unsigned lora_targets;
    /* decode */
    long long gen;       /* tokens generated (>= 1) */
    int gen_exact;       /* 1: every decode step built; 0: beyond
                            WL_GEN_EXACT_STEPS steps, blocks of steps (core/build_gen.c) */
    wl_launch launch;
    /* the software that runs it (zero: HF eager on transformers 5.x) */
    wl_stack stack;
    wl_impl impl;
} wl_core_shape;

const char *wl_mode_name(wl_mode m);
int wl_mode_parse(const char *s, wl_mode *out); /* also inference/forward, training */
const char *wl_optimizer_name(wl_optimizer o);
int wl_optimizer_parse(const char *s, wl_optimizer *out);
const char *wl_recompute_name(wl_recompute r);
int wl_recompute_parse(const char *s, wl_recompute *out);
const char *wl_finetune_name(wl_finetune f); /* full, lora */
int wl_finetune_parse(const char *s, wl_finetune *out);
int wl_lora_targets_parse(const char *s, unsigned *out); /* a comma list; WL_EINVAL */
int wl_core_finetune_check(const wl_core_model *m, const wl_core_shape *sh, wl_error *err);
const char *wl_launch_name(wl_launch l);
int wl_launch_parse(const char *s, wl_launch *out);
const char *wl_stack_name(wl_stack s); /* hf5, hf4 */
/* Marks a loaded trace's kernels as the stack runs them (hf5: a
 * half-precision upcast is ATen's dynamic-casting copy; hf4: unchanged). A
 * trace records ops; the stack decides their kernels. */
int wl_core_workload_set_stack(wl_core_workload *wl, wl_stack stack);
int wl_stack_parse(const char *s, wl_stack *out);
const char *wl_impl_name(wl_impl i);   /* hf-eager, fused */
int wl_impl_parse(const char *s, wl_impl *out);
#define WL_MAX_GRAD_ACCUM 4096
#define WL_MAX_GEN 1000000LL
/* Decode steps built one by one; longer: in blocks (core/build_gen.c). */
#define WL_GEN_EXACT_STEPS 512LL

const char *wl_style_name(wl_style s);
int wl_style_parse(const char *s, wl_style *out);
const char *wl_activation_name(wl_activation a);
int wl_activation_parse(const char *s, wl_activation *out);
int wl_attention_parse(const char *s, wl_attention *out);
const char *wl_attention_name(wl_attention a);
int wl_core_model_check(const wl_core_model *m, wl_error *err);
/* The workload of a shape as the eager framework launches it: a prefill
 * forward pass, a training step (forward, loss, backward, optimizer; see
 * core/builder.c and core/build_*.c for the kernel sequences and their
 * sources) or a generation (prefill, then one decode step per token). */
int wl_core_build(const wl_core_model *model, const wl_core_shape *shape,
                  wl_core_workload **out, wl_error *err);
/* The kernels of one transformer layer only (train: its forward, backward
 * and its share of the optimizer step; decode: its share of every step),
 * called alone: block(x), no mask, no KV cache (core/builder.c). */
int wl_core_build_layer(const wl_core_model *model, const wl_core_shape *shape,
                        wl_core_workload **out, wl_error *err);
/* By scope; a ResNet's layer scope is its whole pass */
typedef enum { WL_SCOPE_MODEL = 0, WL_SCOPE_LAYER, WL_SCOPE_LAYER_IN_MODEL } wl_core_scope;
int wl_core_build_scope(const wl_core_model *model, const wl_core_shape *shape, wl_core_scope scope,
                        wl_core_workload **out, wl_error *err);
/* One step of a serving engine (serve/; core/build_gen.c): `decode` running
 * sequences of one token each over `context` keys on average, `chunk` prompt
 * tokens of `prefills` requests over `chunk_context` keys (token-weighted);
 * tokens padded to `padded` (a CUDA-graph size), a graph when `graph`;
 * `sampled` rows through the LM head and `sampler`; the engine's host step
 * over `seqs` sequences when `host_step` (synchronous scheduling);
 * vLLM's penalties first when `penalties`; tp > 1: one tensor-parallel rank's
 * shard. Samplers: argmax; temperature; top-k/top-p by a sort or FlashInfer's. */
typedef enum { WL_SAMPLER_GREEDY, WL_SAMPLER_RANDOM, WL_SAMPLER_SORT, WL_SAMPLER_FLASHINFER } wl_core_sampler;
typedef struct {
    long long decode, context, chunk, chunk_context, prefills, padded, sampled, seqs;
    int graph, host_step, penalties, tp, ep; /* ep: experts split over the tp ranks */
    wl_core_sampler sampler;
} wl_core_serve_step;
int wl_core_build_serve_step(const wl_core_model *model, const wl_core_shape *shape,
                             const wl_core_serve_step *st, wl_core_workload **out, wl_error *err);
/* A served model's activations (and KV cache): bf16 for 8-bit weights (W8A8), fp32 for tf32. */
wl_dtype wl_core_serve_act_dtype(wl_dtype dtype);
long long wl_core_serve_vocab(const wl_core_model *m); /* padded to 64 (vLLM's LM head) */
/* What a step does beside its kernels. */
typedef struct {
    double params;          /* parameters of the model the mode runs (train:
                               with its LM head or classifier, and adapters) */
    double trainable_params; /* train: those the optimizer steps */
    double matmul_params;   /* N of the 6N rule: the parameters that multiply
                               activations (input embedding tables left out; a
                               tied LM head counted once) */
    double tokens;          /* tokens a step processes (train: batch x seq x
                               grad_accum; decode: batch x (seq + gen - 1)) */
    double model_flop;      /* train: (6 N + 12 layers d_model seq) tokens
                               (PaLM, Chowdhery et al. 2022, app. B); a forward
                               pass a third of that; decode: the forward's
                               rule at each step's context length */
    double saved_gb;        /* train: activations kept for the backward pass at
                               their peak */
    double kv_cache_gb;     /* decode: the cache at the last token */
} wl_core_build_info;
int wl_core_build_info_of(const wl_core_model *model, const wl_core_shape *shape, int layer_only,
                          wl_core_build_info *out, wl_error *err);

/* ---- memory footprint -----------------------------------------------------
 * What a prefill forward pass holds on the GPU in eager PyTorch (core/memory.c
 * gives the lifetimes it follows), in GB (1e9 bytes). */
typedef struct {
    double params;         /* parameter count (weights and biases) */
    double weights_gb;     /* parameters and buffers in the pass's dtype */
    double activations_gb; /* peak live activations (one layer's worst moment) */
    double kv_cache_gb;    /* keys and values a decoder's forward returns
                              (decode: the cache at the last token) */
    double workspace_gb;   /* CUDA context and cuBLAS workspace */
    /* train */
    double master_gb;      /* fp32 master weights (mixed precision) */
    double grads_gb;       /* gradients (fp32 main gradients with a master) */
    double optimizer_gb;   /* AdamW moments / SGD momentum */
    double total_gb;
} wl_core_memory;
/* Parameter count from the architecture (embedding tables as given). */
int wl_core_model_params(const wl_core_model *m, double *params);
int wl_core_memory_estimate(const wl_core_model *m, const wl_core_shape *shape,
                            wl_core_memory *out, wl_error *err);
/* 1: total_gb fits the GPU's memory, 0: not, -1: unknown (no capacity). */
int wl_core_memory_fits(const wl_core_gpu *gpu, const wl_core_memory *mem);
/* The footprint's nonzero parts, in GB to 0.1 ("weights 16.1, activations
 * 43.7, fp32 master weights 32.1, ..."): every part total_gb sums. */
void wl_core_memory_parts_text(const wl_core_memory *mem, char *buf, size_t n);
/* The largest batch (1 to WL_MAX_BATCH) of shape that fits gpu's memory,
 * the rest of the shape as given; for a serving engine's decode the most
 * sequences its paged cache holds at once. 0 when not even one fits,
 * -1 when the GPU states no capacity. */
int wl_core_memory_max_batch(const wl_core_gpu *gpu, const wl_core_model *m,
                             const wl_core_shape *shape, long long *out, wl_error *err);

/* ---- evaluation ------------------------------------------------------------ */
typedef struct {
    double sm_clock_mhz;      /* requested clock */
    double voltage_mv;        /* 0: from the V-f curve */
    double voltage_offset_mv; /* added to the curve voltage */
    int ignore_power_limit;   /* 1: report the unthrottled point */
    double power_limit_w;     /* the board power limit for this point (nvidia-smi
                                 -pl); 0: the GPU's power_limit_w */
} wl_core_op;

/* Per kernel-class totals (for --kernels). */
typedef struct {
    long long launches;
    double busy_ms, energy_j, flops, dram_bytes;
    double tc_busy_ms; /* of busy_ms, on tensor cores */
} wl_core_class_stats;
enum {
    WL_CLASS_GEMM = 0,
    WL_CLASS_BATCHED_GEMM, /* batched GEMMs (eager attention QK^T, PV) */
    WL_CLASS_FLASH,
    WL_CLASS_SOFTMAX,
    WL_CLASS_NORM,
    WL_CLASS_ELEMENTWISE,
    WL_CLASS_GAP,
    WL_CLASS_OTHER,        /* WL_K_MEASURED: kernels known only by their time */
    WL_CLASS_COUNT
};
const char *wl_core_class_name(int cls);
/* The class a kernel's launches are counted in. */
int wl_core_kernel_class(const wl_kernel *k);

/* Per phase: wall time from the end of the previous phase's last kernel to
 * the end of its own (host waits included), energy with its share of
 * static power and inter-kernel gaps; the phases sum to the totals. */
typedef struct {
    long long launches;
    double time_ms, busy_ms, energy_j, flops;
} wl_core_phase_stats;

/* Hopper's governor: see core/gpu.c, wl_core_gpu_power_tau_us */
#define WL_POWER_TAU_DEFAULT_US 300.0

typedef struct {
    double requested_clock_mhz;
    double effective_clock_mhz; /* below requested when power-limited */
    double voltage_mv;
    int throttled;              /* the governor held the run or some kernel below
                                   the requested clock */
    double time_ms;
    double busy_ms;             /* GPU executing kernels */
    double power_w;             /* average board power */
    double energy_j;
    double energy_dyn_compute_j, energy_dyn_memory_j;
    double energy_static_j;     /* idle(f) + temperature-dependent leakage */
    double temp_c;              /* predicted mean die temperature */
    double peak_power_w;        /* the most one kernel draws at the requested clock
                                   (run back to back, before the governor holds it) */
    double launch_bound_frac;   /* share of runtime the GPU waits on the host */
    wl_core_class_stats cls[WL_CLASS_COUNT];
    wl_core_phase_stats phase[WL_PHASE_COUNT];
} wl_core_result;

/* Kernel latency model: a const type object looked up by name. */
typedef struct wl_core_latency_type wl_core_latency_type;
extern const wl_core_latency_type *wl_core_latency_tiled;    /* default */
extern const wl_core_latency_type *wl_core_latency_roofline; /* no tiling */
const wl_core_latency_type *wl_core_latency_lookup(const char *name);
const char *wl_core_latency_name(const wl_core_latency_type *t);
/* Evaluator: precomputes clock-independent work per distinct kernel once;
 * wl_core_evaluator_run then allocates nothing and may be called from many
 * threads at once. The workload must outlive the evaluator. */
typedef struct wl_core_evaluator wl_core_evaluator;
int wl_core_evaluator_create(const wl_core_gpu *gpu, const wl_core_workload *wl,
                             const wl_core_latency_type *lat,
                             wl_core_evaluator **out);
void wl_core_evaluator_free(wl_core_evaluator *ev);
/* Re-reads coefficients from gpu (same structure, e.g. while fitting). */
void wl_core_evaluator_set_gpu(wl_core_evaluator *ev, const wl_core_gpu *gpu);
int wl_core_evaluator_run(const wl_core_evaluator *ev, const wl_core_op *op,
                          wl_core_result *res);
/* exact 1: the governor walked launch by launch, smooth to rounding for
 * fits; 0 (default): by each kernel's band of clocks, within 1e-6, fast. */
void wl_core_evaluator_set_exact(wl_core_evaluator *ev, int exact);
/* For scans over clocks: once a clock throttles, every higher clock (up to
 * the GPU's maximum) settles at the same cap clock, which the cache keeps,
 * so a scan solves for it once. Results equal wl_core_evaluator_run's. A
 * cache serves one voltage setting at a time and starts zeroed; targets
 * (NULL: none) keeps the clocks the governor holds kernels at, too. */
typedef struct wl_core_targets wl_core_targets;
wl_core_targets *wl_core_targets_create(void);
void wl_core_targets_free(wl_core_targets *t);
typedef struct {
    int valid;
    double voltage_mv, voltage_offset_mv, power_limit_w;
    double throttled_from_mhz;
    wl_core_result at;
    wl_core_targets *targets;
} wl_core_throttle_cache;
int wl_core_evaluator_run_cached(const wl_core_evaluator *ev, const wl_core_op *op,
                                 wl_core_throttle_cache *cache, wl_core_result *res);
/* Whether the cache answers op without any evaluation. */
int wl_core_throttle_cache_covers(const wl_core_evaluator *ev, const wl_core_throttle_cache *cache,
                                  const wl_core_op *op);
/* The power limit applied to a result evaluated without it at op's clock
 * (wl_core_evaluator_run with ignore_power_limit): the same as evaluating
 * with the limit, without evaluating that clock again. Two GPUs that differ
 * only in their power limit share unlimited results, so a sweep of power
 * limits evaluates each clock once. */
int wl_core_evaluator_limit(const wl_core_evaluator *ev, const wl_core_op *op,
                            const wl_core_result *unlimited, wl_core_throttle_cache *cache,
                            wl_core_result *res);
/* Latency of distinct kernel i at a clock, in microseconds (for tests). */
double wl_core_evaluator_kernel_us(const wl_core_evaluator *ev, size_t unique_index,
                                   double sm_clock_mhz);
/* One-shot convenience. */
int wl_core_predict(const wl_core_gpu *gpu, const wl_core_workload *wl,
                    const wl_core_op *op, wl_core_result *res);
/* ---- first-principles energy ---------------------------------------------- */
/* Energy of one multiply and its accumulate-add at a precision, in pJ, on a
 * tensor core (a dot product's fixed-point sum) or a CUDA core (an FMA),
 * from the 7 nm table (core/tech.c, Jouppi et al. ISCA 2021) scaled to
 * process_nm. WL_EINVAL for an unknown node or precision. */
int wl_core_mac_energy_pj(wl_dtype dt, int tensor_core, double process_nm, double *mult_pj,
                          double *add_pj);
/* A GPU's energies: its [technology] value where given, else the table at its
 * node (SRAM: Horowitz's 45 nm 32 KB and 1 MB figures, 2.5 and 12.5 pJ/B,
 * scaled by the node law; DRAM: wl_core_dram_pj_per_bit). 0 when unknown. */
double wl_core_gpu_mac_pj(const wl_core_gpu *gpu, wl_dtype dt, int tensor_core);
double wl_core_gpu_smem_pj_per_byte(const wl_core_gpu *gpu);
double wl_core_gpu_l2_pj_per_byte(const wl_core_gpu *gpu);
double wl_core_gpu_dram_pj_per_bit(const wl_core_gpu *gpu);
/* Board-level energy per operation at peak against the arithmetic alone. */
typedef struct {
    wl_dtype dtype;
    int tensor_core;
    double clock_mhz, peak_tflops, board_w;
    double board_pj_per_flop;    /* board_w / peak */
    double mult_pj, add_pj;      /* per MAC at the node */
    double arith_pj_per_flop;    /* (mult + add) / 2 */
    double reg_pj_per_byte;      /* register file access */
    double operand_pj_per_flop;  /* register operands of a MAC / 2 */
    double residual_pj_per_flop; /* board - arithmetic - register operands:
                                    shared memory, L2, DRAM, control, clocks,
                                    static and idle */
    /* the model at an n^3 GEMM at the maximum clock, unthrottled (0: n/a) */
    long long gemm_mnk;
    double model_power_w, model_tflops, model_pj_per_flop;
    double model_compute_pj, model_memory_pj, model_static_pj;
} wl_core_energy_check;
/* Register-file energy in pJ/B ([technology] e_reg_pj_per_byte, else the
 * 45 nm 8 KB SRAM figure by the node law), register bytes per MAC (16 for
 * an FFMA, 0.4375 x element bytes for a tensor-core MAC), and a MAC with
 * its operands. */
double wl_core_gpu_reg_pj_per_byte(const wl_core_gpu *g);
double wl_core_operand_bytes_per_mac(int tensor_core, wl_dtype dt);
double wl_core_gpu_op_pj(const wl_core_gpu *g, wl_dtype dt, int tensor_core);
/* Power of a busy tensor-core cycle at dt against bf16's (1 for fp16, bf16):
 * the board's measured ratio where it has one, else the rule alone. */
double wl_core_gpu_tc_power_scale(const wl_core_gpu *g, wl_dtype dt);
double wl_core_gpu_tc_power_rule(const wl_core_gpu *g, wl_dtype dt);
int wl_core_energy_check_run(const wl_core_gpu *gpu, wl_dtype dt, wl_core_energy_check *out,
                             wl_error *err);
#endif
