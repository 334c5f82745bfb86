/* The evaluator's setup: each distinct kernel prepared by the latency
 * model, and a profile's measured kernels anchored to their measurements
 * (the evaluation itself: core/eval.c). */
#include "eval_internal.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static atomic_ullong serials;

/* r^p <= 2^-53 makes 1 + r^p round to 1: below r = 2^(-53/p), less a
 * margin far wider than pow's error, the smooth maximum is the maximum. */
static void set_tiny(wl_core_evaluator *ev)
{
    double p = ev->gpu.coef.overlap_p;
    ev->tiny_p = p > 0 ? pow(2.0, -53.0 / p) * (1 - 1e-9) : 0;
    ev->tiny_2p = p > 0 ? pow(2.0, -53.0 / (2 * p)) * (1 - 1e-9) : 0;
    /* targets kept for an evaluator (wl_core_targets) are for its GPU */
    ev->serial = atomic_fetch_add(&serials, 1) + 1;
}

/* A kernel the model times and a profile measured: anchored. (A kernel
 * known only by its measured time, and a host gap, have nothing to anchor.) */
static int anchored(const wl_kernel *k)
{
    return k->measured_us > 0 && k->measured_mhz > 0 && k->kind != WL_K_MEASURED &&
           k->kind != WL_K_GAP;
}

/* Anchors every measured kernel of the profile's clock f_req at the clock
 * kx gives it (kernels of other clocks at their own). */
static void anchor_at(wl_core_evaluator *ev, double f_req, const double *kx)
{
    const wl_core_workload *wl = ev->wl;
    for (size_t u = 0; u < ev->nu; u++) {
        const wl_kernel *k = &wl->k[u];
        wl_kprep *p = &ev->prep[u];
        if (!anchored(k))
            continue;
        double fu = k->measured_mhz == f_req ? kx[u] : k->measured_mhz;
        p->anchor = 1.0;
        double t0 = wl_core_evaluator_kernel_us(ev, u, fu);
        if (t0 > 0 && isfinite(t0))
            p->anchor = k->measured_us / t0;
    }
}

/* The board power limit the profile ran under: the one it recorded, else
 * the board's default (its TDP: nvidia-smi's "Default Power Limit"), never
 * the limit a prediction asks for. A profile anchored at the asked limit
 * took a throttled kernel's recorded time for the clock the new limit
 * allows, so a lower limit ran it faster (issue 59: at 990 MHz, 169 ms at
 * 700 W but 121 ms at 400 W). */
static double recorded_limit_w(const wl_core_evaluator *ev)
{
    double w = wl_core_workload_recorded_limit(ev->wl);
    if (w > 0)
        return w;
    return ev->gpu.tdp_w > 0 ? ev->gpu.tdp_w : ev->gpu.power_limit_w;
}

/* The clock each kernel ran at in a run at f_req under the limit the
 * profile was recorded under (the governor's per kernel, the whole run's
 * when its average is capped) into kx; kt is scratch. */
static void run_clocks(const wl_core_evaluator *ev, double f_req, double *kx, double *kt)
{
    wl_core_op op = {.sm_clock_mhz = f_req, .power_limit_w = recorded_limit_w(ev)};
    wl_core_result r, capped;
    wl_core_i_eval_core(ev, f_req, &op, &r, kx, kt);
    double cap = wl_core_i_op_cap_w(&ev->gpu, &op);
    if (!(cap > 0) || r.power_w <= cap)
        return;
    wl_core_i_solve_cap(ev, &op, f_req, cap, &r, &capped);
    wl_core_i_eval_core(ev, capped.requested_clock_mhz, &op, &r, kx, kt);
}

/* Anchors measured kernels (a profile's) to their measurements: a kernel
 * measured to take t_m at clock f_m takes t_m model(f) / model(f_m) at
 * clock f. The model supplies only how the time moves with the clock (its
 * compute/memory split), the measurement the level, so the model's error
 * in a kernel's level, and kernels the builders do not know, cancel.
 * A profile taken at a requested clock ran at the clocks the board's
 * power limit allowed: each kernel is anchored at the clock the model
 * gives it in that run (a fixed point: the anchors change the kernels'
 * power, which changes their clocks; a few rounds settle it, damped after
 * the fourth), so that predicting the profile's own clock returns its
 * measured times, throttled or not. */
static void anchor_all(wl_core_evaluator *ev)
{
    const wl_core_workload *wl = ev->wl;
    double f_req = 0;
    for (size_t u = 0; u < ev->nu; u++) {
        const wl_kernel *k = &wl->k[u];
        if (anchored(k)) {
            f_req = k->measured_mhz;
            break;
        }
    }
    if (!(f_req > 0))
        return;
    double *kx = ev->work, *kn = ev->work + ev->nu, *kt = ev->work + 2 * ev->nu;
    for (size_t u = 0; u < ev->nu; u++)
        kx[u] = f_req;
    for (int round = 0; round < 16; round++) {
        anchor_at(ev, f_req, kx);
        run_clocks(ev, f_req, kn, kt);
        double diff = 0;
        for (size_t u = 0; u < ev->nu; u++) {
            double d = fabs(kn[u] - kx[u]);
            if (anchored(&wl->k[u]) && d > diff)
                diff = d;
        }
        if (diff < 0.05)
            break;
        for (size_t u = 0; u < ev->nu; u++)
            kx[u] = round < 4 ? kn[u] : 0.5 * (kx[u] + kn[u]);
    }
    /* the anchors stay at the last clocks tried */
}

static int create(const wl_core_gpu *gpu, const wl_core_workload *wl,
                  const wl_core_latency_type *lat, int own_board, wl_core_evaluator **out);

/* A profile taken on another board is anchored there: its measured
 * kernels' ratios of measurement to model are the recorded board's, and
 * carry to this GPU's model (wl_core_workload_set_recorded_gpu). */
static int anchor_from_recorded(wl_core_evaluator *ev)
{
    wl_core_evaluator *er = NULL;
    int rc = create(ev->wl->recorded_gpu, ev->wl, ev->lat, 1, &er);
    if (rc)
        return rc;
    for (size_t u = 0; u < ev->nu; u++)
        ev->prep[u].anchor = er->prep[u].anchor;
    wl_core_evaluator_free(er);
    return WL_OK;
}

/* own_board: anchor on this GPU even when the workload names another */
/* What a host gap draws above the idle table (core/eval.c). */
static void set_gap(wl_core_evaluator *ev)
{
    double g = ev->gpu.coef.c_gap_w - wl_core_gpu_idle_clock_w(&ev->gpu);
    ev->gap_w = g > 0 ? g : 0.0;
}

static int prepare_all(wl_core_evaluator *ev, int own_board)
{
    const wl_core_workload *wl = ev->wl;
    for (size_t u = 0; u < ev->nu; u++) {
        const wl_kernel *k = &wl->k[u];
        wl_kprep *p = &ev->prep[u];
        memset(p, 0, sizeof *p);
        ev->lat->prepare(&ev->gpu, k, p);
        p->count = (double)wl->ucount[u];
        p->cls = wl_core_kernel_class(k);
        p->phase = k->phase;
        p->graphed = k->graphed;
        p->internal = k->internal;
        p->sync = k->sync;
        p->anchor = 1.0;
    }
    if (!own_board && wl->recorded_gpu)
        return anchor_from_recorded(ev);
    anchor_all(ev);
    return WL_OK;
}

static int create(const wl_core_gpu *gpu, const wl_core_workload *wl,
                  const wl_core_latency_type *lat, int own_board, wl_core_evaluator **out)
{
    if (!gpu || !wl || !out)
        return WL_EINVAL;
    *out = NULL;
    wl_core_evaluator *ev = calloc(1, sizeof *ev);
    if (!ev)
        return WL_ENOMEM;
    ev->gpu = *gpu;
    ev->wl = wl;
    ev->lat = lat ? lat : wl_core_latency_tiled;
    ev->nu = wl->nu;
    ev->prep = calloc(ev->nu ? ev->nu : 1, sizeof *ev->prep);
    ev->work = calloc(3 * (ev->nu ? ev->nu : 1), sizeof *ev->work);
    if (!ev->prep || !ev->work) {
        wl_core_evaluator_free(ev);
        return WL_ENOMEM;
    }
    set_tiny(ev);
    set_gap(ev);
    ev->training = wl_core_workload_training(wl);
    for (size_t i = wl->n; i-- > 0;) {
        const wl_kernel *k = wl_core_workload_kernel(wl, i);
        if (k->kind == WL_K_GAP && k->sync) {
            ev->after_sync = i + 1;
            break;
        }
    }
    int rc = prepare_all(ev, own_board);
    if (rc) {
        wl_core_evaluator_free(ev);
        return rc;
    }
    *out = ev;
    return WL_OK;
}

int wl_core_evaluator_create(const wl_core_gpu *gpu, const wl_core_workload *wl,
                             const wl_core_latency_type *lat, wl_core_evaluator **out)
{
    return create(gpu, wl, lat, 0, out);
}

void wl_core_evaluator_free(wl_core_evaluator *ev)
{
    if (!ev)
        return;
    free(ev->prep);
    free(ev->work);
    free(ev);
}

void wl_core_evaluator_set_exact(wl_core_evaluator *ev, int exact)
{
    if (ev)
        ev->exact_walk = exact != 0;
}

void wl_core_evaluator_set_gpu(wl_core_evaluator *ev, const wl_core_gpu *gpu)
{
    ev->gpu = *gpu;
    set_tiny(ev);
    set_gap(ev);
    /* out of memory for the recorded board's anchors: this GPU's own */
    if (prepare_all(ev, 0) != WL_OK)
        prepare_all(ev, 1);
}

/* One prediction without keeping an evaluator: set up, run, free (here,
 * above the evaluation, so that eval.c never calls back into its setup). */
int wl_core_predict(const wl_core_gpu *gpu, const wl_core_workload *wl, const wl_core_op *op,
                    wl_core_result *res)
{
    wl_core_evaluator *ev = NULL;
    int rc = wl_core_evaluator_create(gpu, wl, NULL, &ev);
    if (rc)
        return rc;
    rc = wl_core_evaluator_run(ev, op, res);
    wl_core_evaluator_free(ev);
    return rc;
}
