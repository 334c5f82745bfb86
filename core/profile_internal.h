/* Private to core/'s PyTorch profile import: profile.c reads a trace's
 * events into these records, profile_map.c maps them to kernels and builds
 * the workload with the host's timeline. */
#ifndef WATTLAS_PROFILE_INTERNAL_H
#define WATTLAS_PROFILE_INTERNAL_H

#include "core_internal.h"

#include <stddef.h>

/* ---- what is kept of the events ------------------------------------------ */

#define PF_IN 4    /* tensor inputs kept per op */
#define PF_DIMS 6  /* dimensions kept per tensor */

enum { DEV_KERNEL = 0, DEV_MEMSET, DEV_MEMCPY };

typedef struct {
    double ts, dur;
    long long ext, corr;
    int type;
    int aux; /* a helper kernel of a library call (split-K reduction, ...) */
    int dtoh;
    int strided; /* ATen's elementwise path, from the kernel's name (wl_kernel) */
    int unaligned; /* a GEMM kernel built for rows not 16-byte aligned (its name) */
} pf_dev;

typedef struct {
    double ts, dur;
    long long corr;
    int sync;
    long long tid;
} pf_call;

/* A tensor input: ndim >= 0 with dims; -1 not a tensor; -2 a tensor list
 * (numel: the list's total elements, count: its tensors). */
typedef struct {
    int ndim;
    int dt; /* wl_dtype, or -1 for integer/bool tensors */
    int itemsize;
    long long dim[PF_DIMS];
    double numel;
    long long count;
} pf_in;

typedef struct {
    long long ext;
    long long tid;
    double ts;
    int name;       /* index into the interned names */
    int nin;
    pf_in in[PF_IN];
    int causal;     /* attention: is_causal among the concrete inputs */
    double red_n;   /* reductions: elements per reduced row (0: unknown) */
    int red_outer;  /* ... and the innermost dim is not reduced: a column sum */
    int nkernels;   /* kernels it launched (filled after reading) */
    int seen;       /* of them walked so far */
} pf_op;

typedef struct {
    double ts, end;
} pf_range;

typedef struct {
    const char *source;
    wl_error *err;
    int rc;
    pf_dev *dev;
    size_t ndev, capdev;
    pf_call *call;
    size_t ncall, capcall;
    pf_op *op;
    size_t nop, capop;
    pf_range *opt;
    size_t nopt, capopt;
    char **names;
    size_t nnames, capnames;
    size_t *nhash;  /* name -> its index + 1 (intern: no scan of the names) */
    size_t nhcap;
    size_t *ohash;  /* ext -> op + 1 */
    size_t ohcap;
    size_t *chash;  /* correlation -> call + 1 (launch calls) */
    size_t chcap;
    double clock_mhz;
    double limit_w;   /* the board power limit it ran under (0: not stated) */
    char gpu[256];    /* the board it ran on, as named ("" not stated) */
    wl_dtype main_dt; /* the precision of the profile's matmuls */
    double *opts;     /* start times of every recorded cpu_op, sorted */
    size_t nopts, capopts;
    pf_range *ovh;    /* the profiler's own stalls ("overhead" events) */
    size_t novh, capovh;
    double wall_ms;   /* the unprofiled wall time per step, when stated */
    const char *wall_src; /* where it was stated (NULL: nowhere) */
    double per_op_us; /* the profiler's cost per recorded op taken off */
} pf;

/* Host time before a device event: from a to b on the host's clock, the
 * ops recorded in it and the profiler's stalls in it; sync: the host first
 * waited for the GPU. */
typedef struct {
    double us, ovh_us;
    double ops;
    int sync;
    size_t before; /* the device event it precedes */
} pf_seg;

/* profile.c */
int wl_core_pf_grow(void **a, size_t *cap, size_t n, size_t elem);
const pf_op *wl_core_pf_op_of(const pf *P, long long ext);
const pf_call *wl_core_pf_call_of(const pf *P, long long corr);

/* Reads traceEvents one event at a time, and the top-level "wattlas":
 * {"sm_clock_mhz": N, "power_limit_w": W, "wall_ms_per_step": T} the
 * measurement harness adds, from the text (in NULL) or from the stream in
 * after its first len bytes (text: what the caller read to tell a profile
 * from a kernel trace; the rest is never held whole, only the event being
 * read): 0, -1 a parse error (in P->err), -2 out of memory, -3 the
 * stream's error (a corrupt or cut-short gzip stream, a read error). */
int wl_core_pf_read(pf *P, const char *text, size_t len, wl_core_zin *in);
void wl_core_pf_free(pf *P);

#endif
