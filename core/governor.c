/* The run's timeline and the power governor: the host issues each launch,
 * the GPU runs it when it has arrived and the previous one is done, and a
 * kernel drawing more than the cap is held at its own clock (the kernels'
 * time and power: core/kpower.c). */
#include "eval_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The board's power controller (Hopper: throttle reason 0x4, SW power cap)
 * acts within a kernel, not on the average of a step: in the shared H200
 * kernel database every bf16 GEMM asked for 1980 MHz runs at 1507-1635 MHz
 * holding 530-591 W, while in the same board's eager Qwen2 prefill (a 563 W
 * average with elementwise kernels between the GEMMs) the 150 us MLP GEMMs
 * run 1.64-1.82x faster at 1980 than at 990 MHz, the elementwise kernels
 * beside them 1.6-1.8x and the 27 us projections 1.82-1.92x (shared/data
 * profiles). So each kernel has a target clock, the one at which its own
 * board power meets the cap (the request when it draws less), and the
 * clock follows the targets with a first-order lag of time constant
 * power_tau_us: over a kernel of duration t with target g, starting at c,
 * the mean clock is g + (c - g) tau/t (1 - e^(-t/tau)) and it ends at
 * g + (c - g) e^(-t/tau); between kernels it recovers toward the request.
 * Short power spikes pass, long GEMMs are held, and a chain of GEMMs keeps
 * the clock down. The walk is per launch, so it runs only when some kernel
 * draws more than the cap at the requested clock. */
typedef struct {
    double f, tau, c; /* request (MHz), time constant (us), clock now */
    double a;         /* the product of the steps' decay factors (held_stretch) */
} governor;

/* Mean clock over a kernel (target g, duration t_g at it) and the clock it
 * leaves; an idle wait of w us first lets the clock recover. */
static double governor_step(governor *gv, double g, double t_g, double w)
{
    if (gv->tau <= 0) {
        gv->c = g;
        return g;
    }
    if (w > 0 && gv->c != gv->f) {
        double ew = exp(-w / gv->tau);
        gv->c = gv->f + (gv->c - gv->f) * ew;
        gv->a *= ew;
    }
    if (gv->c == g || !(t_g > 0))
        return gv->c;
    double e = exp(-t_g / gv->tau);
    gv->a *= e;
    double mean = g + (gv->c - g) * gv->tau / t_g * (1.0 - e);
    gv->c = g + (gv->c - g) * e;
    return mean;
}

/* The state of one walk over the launches under the governor. */
typedef struct {
    const wl_core_evaluator *ev;
    const wl_core_op *op;
    double f_mhz, cap, va_f, idle_f; /* request, cap, V(f)^a, idle(f) */
    double shift_mhz; /* the V-f curve's shift on a die held at the cap, k dT (MHz) */
    double v_f_shift; /* V(f + shift), the request's voltage on that curve (mV) */
    const double *tbuf, *gbuf, *tgbuf;
    governor gv;
    wl_core_i_sums *s;
    wl_core_result *r;
    double *kx, *kt;
} held_walk;

/* A distinct kernel's time at the request, target clock and time there. */
static void held_kernel(const held_walk *w, const wl_kprep *p, size_t u, double *t_f, double *g,
                        double *t_g)
{
    if (u < WL_CORE_TBUF) {
        *t_f = w->tbuf[u], *g = w->gbuf[u], *t_g = w->tgbuf[u];
        return;
    }
    *t_f = wl_core_i_kernel_us(w->ev, p, w->f_mhz * 1e-3);
    wl_core_i_kernel_target(w->ev, w->op, p, w->f_mhz, *t_f, -1.0, w->cap, NULL, g, t_g);
}

/* The board's table y (voltage or idle power) at a clock, from the knot
 * found last (*j): a walk's clocks move slowly. */
static double table_at(const wl_core_vf *vf, const double *y, double at, int *j)
{
    return wl_core_i_interp(vf->clock_mhz, y, vf->n, at, j);
}

/* A launch's voltage factor (V(x) / V(f))^a at its clock x and its idle
 * power above the request's (W); hint: the table knots found last (3).
 * The op's voltage and idle power as core/kpower.c's op_voltage and
 * op_idle_w, on table_at. */
static double held_vr(const held_walk *w, double x, double *d_idle, int *hint)
{
    const wl_core_gpu *gpu = &w->ev->gpu;
    const wl_core_op *op = w->op;
    const wl_core_vf *vf = &gpu->vf;
    double vr = 1.0, vx = 0.0, v_tab = 0.0;
    *d_idle = 0.0;
    if (x == w->f_mhz)
        return vr;
    int offset = op->voltage_mv > 0 || op->voltage_offset_mv != 0;
    if (offset || !(w->v_f_shift > 0)) {
        v_tab = table_at(vf, vf->voltage_mv, x, &hint[0]);
        vx = op->voltage_mv > 0 ? op->voltage_mv : v_tab + op->voltage_offset_mv;
    }
    /* its voltage against the run's, both on the hot die's curve: the
     * solve after the walk multiplies by V(f + k dT)^a */
    if (w->v_f_shift > 0) {
        double va = table_at(vf, vf->voltage_mv, x + w->shift_mhz, &hint[1]) +
                    op->voltage_offset_mv;
        if (va > 0)
            vr = exp(gpu->coef.v_exponent * log(va / w->v_f_shift));
    } else if (w->va_f > 0) {
        vr = pow(vx > 0 ? vx * 1e-3 : 0, gpu->coef.v_exponent) / w->va_f;
    }
    double idle = table_at(vf, vf->idle_w, x, &hint[2]);
    if (offset)
        idle = wl_core_i_idle_off_curve(idle, vx, v_tab);
    *d_idle = idle - w->idle_f;
    return vr;
}

/* n launches of p at clock x taking t us, added to the walk's sums. */
static void held_sums(held_walk *w, const wl_kprep *p, double x, double t, double n)
{
    int hint[3] = {0, 0, 0};
    double d_idle, vr = held_vr(w, x, &d_idle, hint), dj = d_idle * t * 1e-6 * n;
    w->s->idle_dj += dj;
    w->s->ph_idle_dj[p->phase] += dj;
    wl_core_i_add_kernel(w->ev, p, t, x, n, vr, w->s, w->r);
}

/* One launch after an idle wait of `wait` us: its clock under the
 * governor, its time there (returned) and its share of the sums, n times
 * (a launch standing for n: wl_core_workload_add_n). */
static double held_launch(held_walk *w, const wl_kprep *p, size_t u, double wait, double n)
{
    double t_f, g, t_g;
    held_kernel(w, p, u, &t_f, &g, &t_g);
    double x = governor_step(&w->gv, g, t_g, wait);
    double t = x != w->f_mhz ? wl_core_i_kernel_us(w->ev, p, x * 1e-3) : t_f;
    held_sums(w, p, x, t, n);
    if (w->kx) {
        w->kx[u] += x * t * n;
        w->kt[u] += t * n;
    }
    return t;
}

/* The timeline of a walk over the launches (eval_core): when the host has
 * issued the launches so far and when the GPU is done with them (us), the
 * host time still to come, the GPU's busy time walked, and each phase's
 * share of the end's advance and of the busy time. With repeats
 * (wl_core_workload_add_n) issue and end are one repetition's, and the
 * run's end is rep_end. */
typedef struct {
    double host_left, done_busy, rep_end;
    double h_ph[WL_PHASE_COUNT], h_drv; /* the issue cost of a kernel by its phase, of a library's second one */
    double ph_time[WL_PHASE_COUNT], ph_done[WL_PHASE_COUNT];
    double issue, end; /* last: not summed over repetitions (held_stretch) */
} timeline;

/* Launch i, standing for nr launches, on the timeline: the host issues a
 * kernel h us after the last (none from a CUDA graph), a sync gap first
 * waits for the GPU; the GPU starts a kernel when it has arrived and the
 * previous one is done. w: the governor's walk, NULL when none is held;
 * tbuf: the kernels' times at f_ghz. */
/* The host's side of launch p, standing for nr: a gap (returns 0) or a
 * kernel's issue (returns 1, *start: when the GPU can start it). */
static int tl_issue(timeline *tl, const wl_kprep *p, double nr, double *start)
{
    if (p->is_gap) {
        if (p->sync && tl->end > tl->issue)
            tl->issue = tl->end;
        tl->issue += p->gap_us;
        tl->host_left -= p->gap_us * nr;
        return 0;
    }
    if (!p->graphed) {
        double hk = p->internal ? tl->h_drv : tl->h_ph[p->phase];
        tl->issue += hk;
        tl->host_left -= hk * nr;
    }
    *start = tl->issue > tl->end ? tl->issue : tl->end;
    return 1;
}

/* The GPU's side: the kernel runs t us from start. */
static void tl_run(timeline *tl, const wl_kprep *p, double start, double t, double nr)
{
    tl->ph_time[p->phase] += (start + t - tl->end) * nr;
    tl->rep_end += (start + t - tl->end) * nr; /* read only with repeats */
    tl->end = start + t;
    tl->done_busy += t * nr;
    tl->ph_done[p->phase] += t * nr;
}

static void walk_launch(const wl_core_evaluator *ev, held_walk *w, const double *tbuf,
                        double f_ghz, size_t i, double nr, timeline *tl)
{
    size_t u = ev->wl->uidx[i];
    const wl_kprep *p = &ev->prep[u];
    double start;
    if (!tl_issue(tl, p, nr, &start))
        return;
    double t = w ? held_launch(w, p, u, start - tl->end, nr)
               : u < WL_CORE_TBUF ? tbuf[u] : wl_core_i_kernel_us(ev, p, f_ghz);
    tl_run(tl, p, start, t, nr);
}

/* Where the stretch of launches from i on ends (wl_core_workload_add_n):
 * at a change of repeat count or the next stretch's first launch. */
static size_t stretch_end(const wl_core_workload *wl, size_t i)
{
    long long n = llabs(wl->rep[i]);
    size_t j = i + 1;
    while (j < wl->n && wl->rep[j] == n)
        j++;
    return j;
}

/* Everything a walk sums, as one vector of doubles (held_stretch). */
typedef struct {
    wl_core_i_sums s;
    double cls_busy_ms[WL_CLASS_COUNT], cls_tc_busy_ms[WL_CLASS_COUNT];
    timeline tl;
} walk_sums;
#define WALK_NV (sizeof(walk_sums) / sizeof(double))
_Static_assert(sizeof(walk_sums) % sizeof(double) == 0, "walk_sums holds doubles only");

static void walk_pack(double *v, const held_walk *w, const timeline *tl)
{
    walk_sums x = {.s = *w->s, .tl = *tl};
    for (int k = 0; k < WL_CLASS_COUNT; k++)
        x.cls_busy_ms[k] = w->r->cls[k].busy_ms, x.cls_tc_busy_ms[k] = w->r->cls[k].tc_busy_ms;
    memcpy(v, &x, sizeof x);
}

/* A stretch of n repetitions under the governor. Its clock carries over
 * from one repetition to the next: over one repetition it maps c to
 * A c + B (each kernel's and wait's step is affine in c, A the product of
 * their decay factors), so repetition j starts at c* + A^j (c0 - c*),
 * c* = B / (1 - A), and its sums are S_inf + (S_0 - S_inf) A^j to first
 * order in the clock's offset. Two repetitions walked give A (the
 * second's), S_0, S_1 and S_inf =
 * (S_1 - A S_0) / (1 - A); the stretch sums to n S_inf + (S_0 - S_inf)
 * (1 - A^n) / (1 - A) and leaves the clock at c* + A^n (c0 - c*). A clock
 * that does not move (converged, or no lag) gives S_0 + (n - 1) S_1. The
 * per-kernel clocks (kx, kt) keep the two walked repetitions' weights. */
static void held_stretch(const wl_core_evaluator *ev, held_walk *w, double f_ghz,
                         size_t i0, size_t i1, long long n, timeline *tl)
{
    double x0[WALK_NV], x1[WALK_NV], x2[WALK_NV];
    walk_pack(x0, w, tl);
    double c0 = w->gv.c;
    for (size_t i = i0; i < i1; i++)
        walk_launch(ev, w, NULL, f_ghz, i, 1.0, tl);
    walk_pack(x1, w, tl);
    double c1 = w->gv.c;
    w->gv.a = 1.0;
    for (size_t i = i0; i < i1; i++)
        walk_launch(ev, w, NULL, f_ghz, i, 1.0, tl);
    walk_pack(x2, w, tl);
    double nn = (double)n;
    double A = fabs(c1 - c0) > 1e-9 * w->f_mhz ? w->gv.a : 0.0;
    int lag = A > 1e-12 && A < 1.0 - 1e-12;
    double G = lag ? (1.0 - pow(A, nn)) / (1.0 - A) : 0.0;
    for (size_t k = 0; k < WALK_NV; k++) {
        double s0 = x1[k] - x0[k], s1 = x2[k] - x1[k];
        if (!lag) {
            x2[k] = x0[k] + s0 + (nn - 1.0) * s1;
            continue;
        }
        double sinf = (s1 - A * s0) / (1.0 - A);
        x2[k] = x0[k] + nn * sinf + (s0 - sinf) * G;
    }
    walk_sums x;
    memcpy(&x, x2, sizeof x);
    *w->s = x.s;
    for (int k = 0; k < WL_CLASS_COUNT; k++)
        w->r->cls[k].busy_ms = x.cls_busy_ms[k], w->r->cls[k].tc_busy_ms = x.cls_tc_busy_ms[k];
    double issue = tl->issue, end = tl->end;
    *tl = x.tl;
    tl->issue = issue;
    tl->end = end;
    if (lag) {
        double cs = (c1 - A * c0) / (1.0 - A);
        w->gv.c = cs + pow(A, nn) * (c0 - cs);
    }
}

/* The walk under the governor without a kernel model per launch. A
 * launch's time and its kernel's power are smooth functions of the clock
 * it runs at, the governor's mean clock x over it, and each distinct
 * kernel's launches run at clocks in a narrow band [lo, hi]: on y = 1/x
 * they are interpolated by a cubic over the band (exact for a time fixed
 * + C/x, the form of every compute- and memory-bound kernel away from the
 * overlap's knee), the kernel model's own Taylor series in y where it has
 * no kink there and falls fast (wl_core_i_kernel_us_series: one pass
 * through the formula), else the cubic through four Chebyshev nodes. The
 * factors from the board's tables, the voltage's (V(x) / V(f))^a and idle
 * power, have kinks at the tables' knots (and the hot die's shifted
 * knots); between them they are smooth, and are cubics there too
 * (tab_segs). A launch then costs its clock (the lag's step, affine in the
 * clock before it, with the decay e^(-t_g/tau) and mean factor tau/t_g (1
 * - e^(-t_g/tau)) kept per distinct kernel), its time on the cubic (for
 * the timeline), its two table factors, and sums of z^0..3 (z: y's place
 * in the band) plain and weighted by each factor. The sums over all
 * launches are then the nodes' values weighted by the Lagrange basis
 * summed over those z: no evaluation of the kernel model per launch, and
 * none per node but its power, whatever the number of launches. The
 * bands come from the governor's steps alone (a wait only raises a clock:
 * fast_walk). A kernel whose launches all run at one clock, that is
 * launched once or twice, or whose band the cubic does not hold to 1e-6
 * (fast_fits), is walked launch by launch (held_launch's sums), as is the
 * whole walk for anchoring, repeated stretches, more distinct kernels than
 * FAST_MAX and fits (wl_core_evaluator_set_exact); test_governor_fast
 * holds the two walks together. */
#define FAST_MAX 1024 /* distinct kernels of the fast walk (170 KB of stack) */
#define NODES 4       /* the cubic's nodes */

typedef struct {
    double e, k; /* the lag's decay and mean factor over the kernel at its target */
    union {
        struct {
            double lo, hi; /* the band (fast_walk) */
        } w1;
        struct {
            double ym, yh;      /* y = 1/x = ym + yh z */
            double t[NODES];    /* time: sum of t[d] z^d */
            /* sums of z^0..3 over the launches: plain, times the voltage
             * factor, times the idle power above the request's */
            double m[NODES], mv[NODES], mi[NODES], mx[NODES];
            double m0[NODES]; /* m where the walk became GPU-bound (fast_pass) */
            int exact; /* walked launch by launch */
        } w2;
    };
} fast_u;

/* The Chebyshev nodes of the cubic, cos((2k + 1) pi / 8), and each one's
 * Lagrange basis polynomial as coefficients of z^0..3 (basis[k][d]). */
static const double node_z[NODES] = {-0.92387953251128674, -0.38268343236508978,
                                     0.38268343236508978, 0.92387953251128674};

static void lagrange_basis(double basis[NODES][NODES])
{
    for (int k = 0; k < NODES; k++) {
        double c[NODES] = {1.0, 0.0, 0.0, 0.0}, den = 1.0;
        int deg = 0;
        for (int j = 0; j < NODES; j++) {
            if (j == k)
                continue;
            /* c(z) *= (z - z_j) */
            for (int d = ++deg; d > 0; d--)
                c[d] = c[d - 1] - node_z[j] * c[d];
            c[0] *= -node_z[j];
            den *= node_z[k] - node_z[j];
        }
        for (int d = 0; d < NODES; d++)
            basis[k][d] = c[d] / den;
    }
}

static double poly(const double *c, double z)
{
    return c[0] + z * (c[1] + z * (c[2] + z * c[3]));
}

/* A launch at band position z and clock x, standing for n, on kernel q's
 * four sums of z^0..3: plain, times the voltage factor vr, times the idle
 * power above the request's, times the clock */
static void moments3(double *m, double *mv, double *mi, double *mx, double z, double n,
                     double vr, double d_idle, double x)
{
    double z1 = z * n, z2 = z * z1, z3 = z * z2;
    mx[0] += n * x;
    mx[1] += z1 * x;
    mx[2] += z2 * x;
    mx[3] += z3 * x;
    m[0] += n;
    m[1] += z1;
    m[2] += z2;
    m[3] += z3;
    mv[0] += n * vr;
    mv[1] += z1 * vr;
    mv[2] += z2 * vr;
    mv[3] += z3 * vr;
    mi[0] += n * d_idle;
    mi[1] += z1 * d_idle;
    mi[2] += z2 * d_idle;
    mi[3] += z3 * d_idle;
}

/* The board's table factors along the fast walk (held_vr's voltage factor
 * and idle power above the request's) without a table look-up and a power
 * per launch. Both are smooth between the tables' knots, where the voltage
 * on the hot die's curve, V(x + k dT), and idle(x) are linear in the clock
 * (the voltage factor is then (alpha + beta x)^a, within a few percent of
 * constant over a knot interval); so the clocks the walk can reach are cut
 * at every knot x_i and every x_i - k dT, and on each piece both factors
 * are the cubics through its four Chebyshev nodes in the clock, built the
 * first time a launch falls there and checked against held_vr at the
 * piece's ends to 1e-10 (a piece that fails is taken exactly, launch by
 * launch, as is a clock outside the pieces and a walk cut into more than
 * SEG_MAX). */
#define SEG_MAX 64

typedef struct {
    int n, hint;                    /* pieces (0: none), the one found last */
    double edge[SEG_MAX + 1];       /* piece s: [edge[s], edge[s + 1]] */
    signed char state[SEG_MAX];     /* 0: not built, 1: cubic, -1: exact */
    double mid[SEG_MAX], ih[SEG_MAX]; /* the piece's z = (x - mid) ih */
    double cv[SEG_MAX][NODES], ci[SEG_MAX][NODES]; /* the two cubics in z */
} tab_segs;

/* The pieces over [lo, hi]: cut at the knots and at the knots less the
 * hot die's shift, two sorted lists merged. */
static void segs_init(tab_segs *sg, const held_walk *w, double lo, double hi)
{
    const wl_core_vf *vf = &w->ev->gpu.vf;
    double sh = w->v_f_shift > 0 ? w->shift_mhz : 0.0;
    int n = 0, i = 0, j = 0, nv = vf->n;
    sg->n = 0;
    sg->hint = 0;
    if (!(hi > lo))
        return;
    sg->edge[n++] = lo;
    while (i < nv || j < nv) {
        double a = i < nv ? vf->clock_mhz[i] : HUGE_VAL;
        double b = sh > 0 && j < nv ? vf->clock_mhz[j] - sh : HUGE_VAL;
        double k = a < b ? a : b;
        if (a <= b)
            i++;
        if (b <= a)
            j++;
        if (!(k < HUGE_VAL))
            break;
        if (k <= sg->edge[n - 1] || k >= hi)
            continue;
        if (n >= SEG_MAX)
            return; /* too many pieces: every launch exactly */
        sg->edge[n++] = k;
    }
    sg->edge[n] = hi;
    sg->n = n;
    memset(sg->state, 0, (size_t)n);
}

static void segs_build(tab_segs *sg, const held_walk *w, int s, double basis[NODES][NODES])
{
    int hint[3] = {0, 0, 0};
    double a = sg->edge[s], b = sg->edge[s + 1], h = 0.5 * (b - a);
    sg->mid[s] = 0.5 * (a + b);
    sg->ih[s] = 1.0 / h;
    double v[NODES], d[NODES];
    for (int k = 0; k < NODES; k++)
        v[k] = held_vr(w, sg->mid[s] + h * node_z[k], &d[k], hint);
    for (int e = 0; e < NODES; e++) {
        sg->cv[s][e] = sg->ci[s][e] = 0.0;
        for (int k = 0; k < NODES; k++) {
            sg->cv[s][e] += v[k] * basis[k][e];
            sg->ci[s][e] += d[k] * basis[k][e];
        }
    }
    sg->state[s] = 1;
    for (int i = 0; i < 2; i++) {
        double x = i ? b : a, z = i ? 1.0 : -1.0, di, vr = held_vr(w, x, &di, hint);
        if (!(fabs(poly(sg->cv[s], z) - vr) <= 1e-10 * vr) ||
            !(fabs(poly(sg->ci[s], z) - di) <= 1e-10 * (w->idle_f + fabs(di))))
            sg->state[s] = -1;
    }
}

/* held_vr at clock x, from the pieces where they hold it. */
static double segs_vr(tab_segs *sg, const held_walk *w, double x, double *d_idle,
                      double basis[NODES][NODES], int *hint)
{
    int s = sg->hint;
    if (sg->n > 0 && x >= sg->edge[0] && x <= sg->edge[sg->n]) {
        while (s > 0 && x < sg->edge[s])
            s--;
        while (s < sg->n - 1 && x > sg->edge[s + 1])
            s++;
        sg->hint = s;
        if (!sg->state[s])
            segs_build(sg, w, s, basis);
        if (sg->state[s] > 0) {
            double z = (x - sg->mid[s]) * sg->ih[s];
            *d_idle = poly(sg->ci[s], z);
            return poly(sg->cv[s], z);
        }
    }
    return held_vr(w, x, d_idle, hint);
}

/* The governor's step over kernel u (fast_u's e, k: governor_step). */
static double fast_step(governor *gv, const fast_u *q, double g, double wait)
{
    if (gv->tau <= 0) {
        gv->c = g;
        return g;
    }
    if (wait > 0 && gv->c != gv->f)
        gv->c = gv->f + (gv->c - gv->f) * exp(-wait / gv->tau);
    double x = g + (gv->c - g) * q->k;
    gv->c = g + (gv->c - g) * q->e;
    return x;
}

/* The walk over the launches from the clock c0 with each kernel's time on
 * its cubic and the sums (see fast_u); with steady, a loop's pass without
 * the host. Once the GPU lags the host by more than all the host time to
 * come (the early stop of wl_core_i_timeline), no launch waits again: the
 * rest is the governor's steps alone, with no timeline, and each kernel's
 * time there is its cubic over the sums added since, added once at the
 * end. */
/* A launch of kernel u at clock x, standing for nr, added to the walk's
 * sums: exactly when its kernel is walked so or a wait raised the clock
 * above its band (returns 1), else on its cubic's sums (returns 0); *t is
 * its time either way. */
static int fast_launch(const wl_core_evaluator *ev, held_walk *w, fast_u *q, size_t u, double x,
                       double nr, tab_segs *sg, double basis[NODES][NODES], int *hint, double *t)
{
    const wl_kprep *p = &ev->prep[u];
    double z = q->w2.exact ? 0.0 : (1.0 / x - q->w2.ym) / q->w2.yh;
    if (q->w2.exact || !(fabs(z) <= 1.0)) {
        *t = x == w->f_mhz ? w->tbuf[u] : wl_core_i_kernel_us(ev, p, x * 1e-3);
        held_sums(w, p, x, *t, nr);
        return 1;
    }
    double d_idle, vr = segs_vr(sg, w, x, &d_idle, basis, hint);
    moments3(q->w2.m, q->w2.mv, q->w2.mi, q->w2.mx, z, nr, vr, d_idle, x);
    *t = poly(q->w2.t, z);
    return 0;
}

static void fast_pass(const wl_core_evaluator *ev, held_walk *w, fast_u *fu, tab_segs *sg,
                      double basis[NODES][NODES], int steady, double c0, timeline *tl)
{
    const wl_core_workload *wl = ev->wl;
    int hint[3] = {0, 0, 0};
    size_t i = 0;
    int bound = 0;
    w->gv.c = c0;
    for (; i < wl->n && !bound; i++) {
        size_t u = wl->uidx[i];
        const wl_kprep *p = &ev->prep[u];
        fast_u *q = &fu[u];
        double start = 0, nr = wl->rep ? (double)llabs(wl->rep[i]) : 1.0;
        if (steady ? p->is_gap : !tl_issue(tl, p, nr, &start))
            continue;
        double x = fast_step(&w->gv, q, w->gbuf[u], steady ? 0.0 : start - tl->end), t;
        (void)fast_launch(ev, w, q, u, x, nr, sg, basis, hint, &t);
        if (steady)
            continue;
        tl_run(tl, p, start, t, nr);
        bound = !wl->rep && i >= ev->after_sync && tl->end - tl->issue > tl->host_left;
    }
    if (!bound)
        return;
    for (size_t u = 0; u < ev->nu; u++)
        memcpy(fu[u].w2.m0, fu[u].w2.m, sizeof fu[u].w2.m0);
    double ph_t[WL_PHASE_COUNT] = {0};
    for (; i < wl->n; i++) {
        size_t u = wl->uidx[i];
        const wl_kprep *p = &ev->prep[u];
        fast_u *q = &fu[u];
        if (p->is_gap)
            continue;
        double t, x = fast_step(&w->gv, q, w->gbuf[u], 0.0);
        /* a time on a cubic comes from its sums below */
        if (fast_launch(ev, w, q, u, x, 1.0, sg, basis, hint, &t))
            ph_t[p->phase] += t;
    }
    for (size_t u = 0; u < ev->nu; u++) {
        const fast_u *q = &fu[u];
        if (ev->prep[u].is_gap || q->w2.exact)
            continue;
        for (int d = 0; d < NODES; d++)
            ph_t[ev->prep[u].phase] += q->w2.t[d] * (q->w2.m[d] - q->w2.m0[d]);
    }
    for (int k = 0; k < WL_PHASE_COUNT; k++) {
        tl->ph_time[k] += ph_t[k];
        tl->ph_done[k] += ph_t[k];
        tl->end += ph_t[k];
        tl->done_busy += ph_t[k];
    }
}

/* A kernel's time and dynamic energy at band position z (the exact model). */
static void node_values(const wl_core_evaluator *ev, const wl_kprep *p, const fast_u *q, double z,
                        double *x, double *t, double *pc, double *pm, double *p0)
{
    *x = 1.0 / (q->w2.ym + q->w2.yh * z);
    *t = wl_core_i_kernel_us(ev, p, *x * 1e-3);
    wl_core_i_kernel_power(ev, p, *x * 1e-3, *t, pc, pm, p0);
}

/* Whether the cubic holds a kernel's time and dynamic energy over its
 * band to 1e-6 (checked at its ends, where a smooth curve strays most
 * from the nodes' cubic; e: the energy at the nodes): a band across a
 * kink (the L2 clock's floor, a unit's utilisation reaching 1) does not,
 * and its launches are walked one by one; with series, the time at the
 * ends is the kernel model's series (its own bound holds it). */
static int fast_fits(const wl_core_evaluator *ev, const wl_kprep *p, const fast_u *q,
                     double basis[NODES][NODES], const double *e, int series)
{
    double ec[NODES] = {0};
    for (int k = 0; k < NODES; k++)
        for (int d = 0; d < NODES; d++)
            ec[d] += e[k] * basis[k][d];
    for (int i = 0; i < 2; i++) {
        double z = i ? 1.0 : -1.0, x, t, pc, pm, p0;
        if (series) {
            x = 1.0 / (q->w2.ym + q->w2.yh * z);
            t = poly(q->w2.t, z);
            wl_core_i_kernel_power(ev, p, x * 1e-3, t, &pc, &pm, &p0);
        } else {
            node_values(ev, p, q, z, &x, &t, &pc, &pm, &p0);
        }
        double en = (pc + pm + p0) * t;
        if (!(fabs(poly(q->w2.t, z) - t) <= 1e-6 * t) ||
            !(fabs(poly(ec, z) - en) <= 1e-6 * fabs(en) + 1e-300))
            return 0;
    }
    return 1;
}

/* The held walk (see fast_u); c0: the clock it starts at. */
static void fast_walk(const wl_core_evaluator *ev, held_walk *w, int steady, double c0,
                      timeline *tl)
{
    fast_u fu[FAST_MAX];
    double basis[NODES][NODES];
    lagrange_basis(basis);
    const wl_core_workload *wl = ev->wl;
    double f = w->f_mhz, tau = w->gv.tau;
    for (size_t u = 0; u < ev->nu; u++) {
        const wl_kprep *p = &ev->prep[u];
        fast_u *q = &fu[u];
        if (p->is_gap)
            continue;
        double t_g = w->tgbuf[u], e = tau > 0 && t_g > 0 ? exp(-t_g / tau) : 1.0;
        q->e = e;
        q->k = tau > 0 && t_g > 0 ? tau / t_g * (1.0 - e) : 1.0;
        q->w1.lo = HUGE_VAL;
        q->w1.hi = -HUGE_VAL;
    }
    /* The bands, from the governor's steps alone: a host wait only lets
     * the clock recover toward the request, and a step's clock rises with
     * the clock before it, so each launch's clock is at least the one of
     * the walk with no wait. Past the point where the GPU lags the host for
     * good there is no wait, and most launches are there in a long run; a
     * launch before it that a wait raised above its band is walked exactly
     * (fast_pass). */
    w->gv.c = c0;
    for (size_t i = 0; i < wl->n; i++) {
        size_t u = wl->uidx[i];
        fast_u *q = &fu[u];
        if (ev->prep[u].is_gap)
            continue;
        double x = fast_step(&w->gv, q, w->gbuf[u], 0.0);
        q->w1.lo = x < q->w1.lo ? x : q->w1.lo;
        q->w1.hi = x > q->w1.hi ? x : q->w1.hi;
    }
    double xlo = HUGE_VAL, xhi = -HUGE_VAL; /* the bands' clocks */
    for (size_t u = 0; u < ev->nu; u++) {
        const wl_kprep *p = &ev->prep[u];
        fast_u *q = &fu[u];
        if (p->is_gap)
            continue;
        double lo = q->w1.lo, hi = q->w1.hi;
        memset(&q->w2, 0, sizeof q->w2);
        if (!(hi >= lo))
            continue; /* never launched */
        /* every launch at one clock (a loop's steady state), or a kernel
         * launched once or twice: walked one by one, exactly */
        q->w2.exact = !(hi - lo > 1e-9 * f) || p->count <= 2;
        if (q->w2.exact)
            continue;
        /* the band, widened by a tenth and at least 0.2% for the launches
         * a wait raises above the walk with none (the rest are walked
         * exactly: fast_pass) */
        double pad = 0.1 * (hi - lo) > 2e-3 * hi ? 0.1 * (hi - lo) : 2e-3 * hi;
        /* no clock rises above the request */
        double top = hi + pad < f ? hi + pad : (hi > f ? hi : f);
        double ylo = 1.0 / top, yhi = 1.0 / (lo - pad > 0.5 * lo ? lo - pad : 0.5 * lo);
        xlo = 1.0 / yhi < xlo ? 1.0 / yhi : xlo;
        xhi = 1.0 / ylo > xhi ? 1.0 / ylo : xhi;
        q->w2.ym = 0.5 * (yhi + ylo);
        q->w2.yh = 0.5 * (yhi - ylo);
        /* the time's cubic: the kernel model's series over the band, else
         * through its values at the nodes */
        double e[NODES];
        int series = wl_core_i_kernel_us_series(ev, p, q->w2.ym, q->w2.yh, q->w2.t);
        for (int k = 0; k < NODES; k++) {
            double x, t, pc, pm, p0;
            if (series) {
                x = 1.0 / (q->w2.ym + q->w2.yh * node_z[k]);
                t = poly(q->w2.t, node_z[k]);
                wl_core_i_kernel_power(ev, p, x * 1e-3, t, &pc, &pm, &p0);
            } else {
                node_values(ev, p, q, node_z[k], &x, &t, &pc, &pm, &p0);
                for (int d = 0; d < NODES; d++)
                    q->w2.t[d] += t * basis[k][d];
            }
            e[k] = (pc + pm + p0) * t;
        }
        q->w2.exact = !fast_fits(ev, p, q, basis, e, series);
    }
    /* the table factors' pieces over the clocks of the bands */
    tab_segs sg;
    segs_init(&sg, w, xlo, xhi > f ? xhi : f);
    fast_pass(ev, w, fu, &sg, basis, steady, c0, tl);
    for (size_t u = 0; u < ev->nu; u++) {
        const wl_kprep *p = &ev->prep[u];
        const fast_u *q = &fu[u];
        if (p->is_gap || !(q->w2.m[0] > 0) || q->w2.exact)
            continue;
        for (int k = 0; k < NODES; k++) {
            /* node k's share: its basis summed over the launches' z */
            double n = 0, nv = 0, ni = 0, x, t, pc, pm, p0;
            for (int d = 0; d < NODES; d++) {
                n += basis[k][d] * q->w2.m[d];
                nv += basis[k][d] * q->w2.mv[d];
                ni += basis[k][d] * q->w2.mi[d];
            }
            x = 1.0 / (q->w2.ym + q->w2.yh * node_z[k]);
            t = poly(q->w2.t, node_z[k]);
            wl_core_i_kernel_power(ev, p, x * 1e-3, t, &pc, &pm, &p0);
            wl_core_i_add_parts(p, t, x, n, nv, pc, pm, p0, w->s, w->r);
            double dj = t * 1e-6 * ni;
            w->s->idle_dj += dj;
            w->s->ph_idle_dj[p->phase] += dj;
            w->s->clk_us -= x * t * n;
        }
        /* the clock-weighted time from the launches' own clocks, sum of x
         * t(z): x = 1/y is no cubic in z over a wide band (a long run's
         * clock drifting far under the lag) */
        for (int d = 0; d < NODES; d++)
            w->s->clk_us += q->w2.t[d] * q->w2.mx[d];
    }
}

/* Timeline: the host issues a kernel every h us (none for a kernel
 * replayed from a CUDA graph); the GPU starts it when both the launch has
 * arrived and the previous kernel is done; a sync gap makes the host wait
 * for the GPU first. Once the GPU lags the host by more than all the host
 * time still to come, and no sync is left, the host can never catch up:
 * the rest is the remaining busy time, and the walk stops early (GPU-bound
 * workloads end in a few hundred steps whatever their length). Each
 * kernel's advance of the end is its phase's time. With the governor
 * holding kernels, every launch has its own clock: the sums are redone
 * launch by launch and the walk goes to the end. Runs repeated back to back
 * with no sync (wl_core_workload_set_repeated): the host queues the next
 * run's launches while the GPU works, so the steady state is the slower of
 * the two sides; each phase keeps its share of the GPU's busy time. */
double wl_core_i_timeline(const wl_core_evaluator *ev, const wl_core_op *op,
                          const wl_core_i_walk_in *in, wl_core_i_sums *s, wl_core_result *r,
                          double *kx, double *kt, double *ph_time)
{
    const wl_core_gpu *gpu = &ev->gpu;
    const wl_core_coeffs *c = &gpu->coef;
    const wl_core_workload *wl = ev->wl;
    double f_mhz = in->f_mhz, f = f_mhz * 1e-3, cap = in->cap, idle_f = in->idle_f;
    double busy_us = s->busy_us;
    int held = in->held, steady = wl->repeated && ev->after_sync == 0;
    /* the walk without a kernel model per launch (fast_walk), but for
     * anchoring (kx), repeated stretches and more distinct kernels than
     * the buffers hold */
    int fast = !kx && !ev->exact_walk && ev->nu <= FAST_MAX && (steady || !wl->rep);
    timeline tl = {.host_left = in->host_left, .h_drv = in->h_drv};
    memcpy(tl.h_ph, in->h_ph, sizeof tl.h_ph);
    double *pt = tl.ph_time, end = 0;
    const size_t *ui = wl->uidx;
    const long long *rep = wl->rep; /* see the walk below */
    held_walk w = {.ev = ev, .op = op, .f_mhz = f_mhz, .cap = cap, .tbuf = in->tbuf, .gbuf = in->gbuf,
                   .tgbuf = in->tgbuf, .gv = {.f = f_mhz, .tau = wl_core_gpu_power_tau_us(gpu), .c = f_mhz},
                   .s = s, .r = r, .kx = kx, .kt = kt};
    if (held) {
        w.va_f = in->va_f;
        w.idle_f = idle_f;
        /* A kernel's board power is P = p_dyn + idle + lambda dT with
         * dT = R p_dyn / (1 - lambda R) (board_w), that is P = idle + dT / R:
         * held at the cap it heats the die by R (cap - idle), and its
         * voltage is the curve's at x + k R (cap - idle), as its target
         * clock was found (kernel_board_w). Without the shift a kernel held
         * on the curve's slope below a flat top took V(x), and a GEMM loop
         * held at the cap drew 7% under it (test_governor_hot_die). A run
         * averaging under the cap is cooler; its V(f + k dT) in the solve
         * carries that to the held kernels. */
        if (c->vf_temp_mhz_per_c > 0 && cap > idle_f && !(op->voltage_mv > 0)) {
            w.shift_mhz = c->vf_temp_mhz_per_c * c->thermal_c_per_w * (cap - idle_f);
            w.v_f_shift = wl_core_gpu_voltage_mv(gpu, f_mhz + w.shift_mhz) + op->voltage_offset_mv;
        }
        *s = (wl_core_i_sums){0};
        for (int k = 0; k < WL_CLASS_COUNT; k++)
            r->cls[k].busy_ms = r->cls[k].tc_busy_ms = 0;
        for (size_t u = 0; kx && u < ev->nu; u++)
            kx[u] = kt[u] = 0;
    }
    if (steady) {
        if (held) {
            /* a loop's periodic state: over one pass the clock maps c to
             * A c + B (each kernel's step is affine in c), so the pass
             * that repeats starts from B / (1 - A) */
            double A = 1.0;
            w.gv.c = 0.0;
            for (size_t i = 0; i < wl->n; i++) {
                const wl_kprep *p = &ev->prep[ui[i]];
                double t_f, g, t_g;
                if (p->is_gap)
                    continue;
                held_kernel(&w, p, ui[i], &t_f, &g, &t_g);
                (void)governor_step(&w.gv, g, t_g, 0.0);
                if (w.gv.tau > 0)
                    A *= exp(-t_g / w.gv.tau);
            }
            w.gv.c = A < 1.0 ? w.gv.c / (1.0 - A) : f_mhz;
            if (fast)
                fast_walk(ev, &w, 1, w.gv.c, &tl);
            for (size_t i = 0; !fast && i < wl->n; i++)
                if (!ev->prep[ui[i]].is_gap)
                    (void)held_launch(&w, &ev->prep[ui[i]], ui[i], 0.0,
                                      rep ? (double)llabs(rep[i]) : 1.0);
            busy_us = s->busy_us;
        }
        end = tl.host_left > busy_us ? tl.host_left : busy_us;
        for (int k = 0; k < WL_PHASE_COUNT; k++)
            pt[k] = busy_us > 0 ? s->ph_busy[k] * end / busy_us : 0.0;
    }
    /* A launch standing for n (wl_core_workload_add_n) is one of n
     * repetitions of the stretch between two host syncs around it: the
     * walk runs through one repetition, and its advance of the end counts
     * n times in the run's time (under the governor, whose clock carries
     * over between repetitions: held_stretch). The early stop below needs
     * the walk's end to be the run's, so such a workload walks to its end. */
    size_t n = steady ? 0 : wl->n;
    if (held && fast && !steady && !rep) {
        fast_walk(ev, &w, 0, f_mhz, &tl);
        n = 0;
    }
    for (size_t i = 0; i < n;) {
        long long nr = rep ? llabs(rep[i]) : 1;
        if (held && nr > 1) {
            size_t j = stretch_end(wl, i);
            held_stretch(ev, &w, f, i, j, nr, &tl);
            i = j;
            continue;
        }
        walk_launch(ev, held ? &w : NULL, in->tbuf, f, i, (double)nr, &tl);
        if (!held && !rep && i >= ev->after_sync && tl.end - tl.issue > tl.host_left) {
            tl.end += busy_us - tl.done_busy;
            for (int k = 0; k < WL_PHASE_COUNT; k++)
                pt[k] += s->ph_busy[k] - tl.ph_done[k];
            break;
        }
        i++;
    }
    if (!steady)
        end = rep ? tl.rep_end : tl.end;
    for (size_t u = 0; held && kx && u < ev->nu; u++)
        kx[u] = kt[u] > 0 ? kx[u] / kt[u] : f_mhz;
    memcpy(ph_time, tl.ph_time, sizeof tl.ph_time);
    return end;
}
