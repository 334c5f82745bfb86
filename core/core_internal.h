/* Private to core/: workload internals shared by the evaluator. */
#ifndef WATTLAS_CORE_INTERNAL_H
#define WATTLAS_CORE_INTERNAL_H

#include "wattlas_core.h"

struct wl_core_workload {
    char name[128];
    wl_kernel *k;        /* the distinct kernels, in the order of their first
                            launch: each stored once (a profile of 10^7
                            launches held 10^7 copies, 1.4 GB) */
    size_t *uidx;        /* launch -> its distinct kernel in k */
    long long *rep;      /* launch -> launches it stands for, negative on a
                            stretch's first launch (NULL: all 1; see
                            wl_core_workload_add_n) */
    int stretch_next;    /* the next launch begins a stretch */
    size_t n, cap, repcap;
    long long *ucount;   /* launches per distinct kernel */
    size_t nu, ucap;
    size_t *hslot;       /* index of distinct kernels (see workload.c) */
    size_t hcap;
    int repeated;        /* see wl_core_workload_set_repeated */
    int host_timed;      /* see wl_core_workload_set_host_timed */
    double recorded_limit_w; /* see wl_core_workload_set_recorded_limit */
    char recorded_gpu_id[256]; /* the board it was profiled on, as named */
    wl_core_gpu *recorded_gpu; /* ... and that board, when loaded (owned) */
    char note[600];      /* what importing it left out or assumed ("" none) */
    char warning[400];   /* what makes its prediction doubtful ("" none) */
};

/* zin.c: a file that may be gzipped, read once in pieces (a pipe or FIFO
 * too). open fails on a directory; read gives up to n bytes: the count, 0
 * at the end, -1 an error (in err: a corrupt or cut-short gzip stream,
 * bytes after it, more than limit bytes out). close accepts NULL. */
typedef struct wl_core_zin wl_core_zin;
int wl_core_zin_open(const char *path, unsigned long long limit, wl_core_zin **out, wl_error *err);
long wl_core_zin_read(wl_core_zin *z, char *buf, size_t n, wl_error *err);
void wl_core_zin_close(wl_core_zin *z);
/* wl_core_profile_parse from a stream whose first headlen bytes (head)
 * were read already (core/trace.c reads them to tell a profile). */
int wl_core_profile_parse_z(wl_core_zin *in, const char *head, size_t headlen,
                            const char *source, const wl_core_recorded *rec,
                            wl_core_workload **out, wl_error *err);

/* Gives one kernel the ATen path the stack runs it on (hf5: a plain
 * half-precision upcast becomes the dynamic-casting copy, strided 4);
 * 1 when it changed. The one rule of builders and loaded traces. */
int wl_core_kernel_on_stack(wl_kernel *k, wl_stack stack);

/* gpu.c: piecewise-linear interpolation over ascending x, clamped at the
 * ends, from the interval *hint found last (NULL: a bisection). */
double wl_core_i_interp(const double *x, const double *y, int n, double at, int *hint);

/* Tensor-/CUDA-core FLOPs of one launch. */
double wl_core_kernel_flops(const wl_kernel *k);

/* WL_EINVAL (err names the key) for a model the single-GPU builders do
 * not build: mixture of experts, latent attention. */
int wl_core_single_gpu_check(const wl_core_model *m, wl_error *err);

#endif

/* Clock-independent description of one distinct kernel, prepared once by a
 * latency model. Times at clock f (GHz):
 *   t = fixed_us + fixed_clk/f
 *       + smax(comp_clk/f, smax(l2_clk/f, max(dram_us, dram_clk/f + path_us))) */
typedef struct {
    double count;       /* launches */
    int cls;            /* WL_CLASS_* */
    int phase;          /* wl_phase */
    int graphed;        /* no host issue cost */
    int internal;       /* a library's second kernel: a driver launch only */
    int sync;           /* a gap that first waits for the GPU */
    int is_gap;
    double gap_us;
    double fixed_us;
    double fixed_clk;
    double comp_clk;    /* critical-path SM cycles of the math */
    double l2_clk;      /* L2 traffic in L2 cycles (scales with the SM clock) */
    double dram_us;     /* DRAM traffic time at the fixed memory clock */
    double dram_clk;    /* the same traffic through the miss path: cycles ... */
    double path_us;     /* ... plus its clock-independent latency share */
    /* activity for the power model, per launch */
    double tc_clk;      /* tensor-core busy cycles summed over SMs / sms */
    double tc_w;        /* their power against a bf16 cycle's (1 for non-GEMMs) */
    double fp_clk;      /* FP/ALU pipe cycles / sms */
    double sfu_clk;     /* SFU cycles / sms */
    double smem_clk;    /* shared-memory cycles / sms */
    double l2_bytes;
    double dram_bytes;
    double sm_frac;     /* share of SMs the kernel occupies */
    double flops;
    /* a serial streaming phase after the math (layout transforms a library
     * runs around the kernel): L2 cycles, DRAM time, miss path, launches */
    double xfer_l2_clk, xfer_dram_us, xfer_dram_clk, xfer_path_us, xfer_fixed_us;
    /* a measured kernel's time over the model's at the clock it ran at
     * (1 otherwise): every time of the kernel is scaled by it */
    double anchor;
} wl_kprep;

/* A latency model fills everything but count and cls in a zeroed wl_kprep. */
struct wl_core_latency_type {
    const char *name;
    void (*prepare)(const wl_core_gpu *gpu, const wl_kernel *k, wl_kprep *out);
};
