/* Clock plans of a parallel configuration: a clock per stage and phase
 * (EnvPipe's and Perseus's coarse plans), a clock per computation (each
 * micro-batch's forward and backward on each stage, Perseus's plans), their
 * time-energy frontiers, and the frontier over board power caps (Zeus's
 * knob). The timelines are cluster.c's simulations; the plans search the
 * simulated timeline's task graph. */
#include "cluster_internal.h"
#include "../pareto/wattlas_pareto.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- clocks per stage ------------------------------------------------------------
 * Greedy descent on the clocks of every (stage, phase), the EnvPipe/Perseus
 * idea as a search on the simulated timeline: from every GPU at its
 * maximum clock, repeatedly lower the one (stage, phase) clock whose next
 * step down saves the most energy per second it adds to the iteration
 * (moves that save energy without adding time first), as long as the
 * iteration stays within the slowdown bound. Stages off the critical path
 * have slack, so their clocks fall first; a step that slows the iteration
 * past the bound is never taken. Steps of two grid clocks keep a 64-stage
 * search to a few thousand simulations. */

const char *wl_cluster_energy_scope_name(wl_cluster_energy_scope s)
{
    return s == WL_CLUSTER_ENERGY_GPU ? "gpu" : s == WL_CLUSTER_ENERGY_ALL ? "all" : NULL;
}

int wl_cluster_energy_scope_lookup(const char *name, wl_cluster_energy_scope *out)
{
    for (int s = 0; s <= WL_CLUSTER_ENERGY_ALL; s++)
        if (!strcmp(name, wl_cluster_energy_scope_name((wl_cluster_energy_scope)s))) {
            *out = (wl_cluster_energy_scope)s;
            return WL_OK;
        }
    return WL_EINVAL;
}

/* The energy a clock plan is judged by: the GPUs' own (what NVML measures
 * and what Perseus and EnvPipe report; clocks change nothing else but the
 * time), or the whole cluster's, where the nodes' and the network's power
 * over a longer iteration counts against a lower clock. */
static double scoped_j(const wl_cluster_result *r, wl_cluster_energy_scope s)
{
    return s == WL_CLUSTER_ENERGY_GPU ? r->energy_gpu_j : r->energy_j;
}

/* The plans a descent passes through, for the frontier. */
typedef struct {
    int n;                 /* clocks per plan */
    size_t len, cap;
    wl_cluster_frontier_point *pts;
    double *plans;
} path;

static int path_push_te(path *pa, const double *plan, double T, double E, int fixed)
{
    if (!pa)
        return WL_OK;
    if (pa->len == pa->cap) {
        size_t nc = pa->cap ? 2 * pa->cap : 64;
        wl_cluster_frontier_point *np = realloc(pa->pts, nc * sizeof *np);
        if (!np)
            return WL_ENOMEM;
        pa->pts = np;
        double *nq = realloc(pa->plans, nc * (size_t)pa->n * sizeof *nq);
        if (!nq)
            return WL_ENOMEM;
        pa->plans = nq;
        pa->cap = nc;
    }
    pa->pts[pa->len] = (wl_cluster_frontier_point){.time_s = T, .energy_j = E, .fixed = fixed};
    memcpy(pa->plans + pa->len * (size_t)pa->n, plan, sizeof(double) * (size_t)pa->n);
    pa->len++;
    return WL_OK;
}

/* A graph descent's plans onto a path. */
typedef struct {
    path *pa;
    const cl_graph *d;
    double *plan;
} path_ctx;

static int path_visit(void *ctx, const int *pv, double T, double E)
{
    path_ctx *x = ctx;
    for (int v = 0; v < x->pa->n; v++)
        x->plan[v] = x->d->clk[pv[v]];
    return path_push_te(x->pa, x->plan, T, E, 0);
}

static int path_push(path *pa, const double *plan, const wl_cluster_result *r,
                     wl_cluster_energy_scope scope, int fixed)
{
    return path_push_te(pa, plan, r->time_s, scoped_j(r, scope), fixed);
}

static int descend(wl_cluster *c, double *plan, int n, double bound, double step,
                   wl_cluster_energy_scope scope, wl_cluster_result *cur, path *pa, wl_error *err)
{
    double fmin = c->gpu.sm_clock_min_mhz, fmax = c->gpu.sm_clock_max_mhz;
    for (;;) {
        int best = -1;
        double best_score = 0;
        wl_cluster_result best_r = *cur;
        for (int i = 0; i < n; i++) {
            if (plan[i] - step < fmin - 1e-9)
                continue;
            double keep = plan[i];
            plan[i] = keep - step;
            wl_cluster_result r;
            int rc = wl_cluster_run(c, fmax, plan, &r, err);
            plan[i] = keep;
            if (rc)
                return rc;
            double de = scoped_j(cur, scope) - scoped_j(&r, scope), dt = r.time_s - cur->time_s;
            if (r.time_s > bound || de <= 0)
                continue;
            /* energy saved per second added; a free saving ranks first */
            double score = dt <= 0 ? 1e30 + de : de / dt;
            if (score > best_score) {
                best_score = score;
                best = i;
                best_r = r;
            }
        }
        if (best < 0)
            return WL_OK;
        plan[best] -= step;
        *cur = best_r;
        if (path_push(pa, plan, cur, scope, 0)) {
            wl_error_set(err, "cluster", 0, "", "out of memory");
            return WL_ENOMEM;
        }
    }
}

/* The single clock for every GPU with the least energy whose iteration
 * takes at most `bound` seconds; at_max (the top clock's run) when none
 * saves. With the graph d of the top clock's run, the clocks are screened
 * on it (each stage at the clock or the one the power limit held it to)
 * and only the choice is simulated, moving up the grid while the
 * simulation breaks the bound. A balanced split of an unbalanced
 * configuration may miss a bound set by the unbalanced one's time only if
 * it is slower, which balancing never is. */
static int best_fixed(wl_cluster *c, cl_graph *d, double bound, wl_cluster_energy_scope scope,
                      const wl_cluster_result *at_max, wl_cluster_result *best, double *clock,
                      wl_error *err)
{
    const wl_core_gpu *g = &c->gpu;
    *best = *at_max;
    *clock = g->sm_clock_max_mhz;
    size_t nclk = wl_core_gpu_clock_count(g);
    if (d && d->n > 0) {
        int bj = -1;
        double bE = scoped_j(at_max, scope);
        for (int j = 0; j < d->nclk; j++) {
            wl_cluster_graph_uniform(d, j);
            double T, E;
            wl_cluster_graph_eval(d, scope, &T, &E);
            if (T <= bound * (1 + 1e-12) && E < bE) {
                bE = E;
                bj = j;
            }
        }
        for (int j = bj; j >= 0 && j < d->nclk; j++) {
            wl_cluster_result r;
            int rc = wl_cluster_run(c, d->clk[j], NULL, &r, err);
            if (rc)
                return rc;
            if (r.time_s <= bound) {
                if (scoped_j(&r, scope) < scoped_j(best, scope)) {
                    *best = r;
                    *clock = d->clk[j];
                }
                break;
            }
        }
        return WL_OK;
    }
    for (size_t k = 0; k < nclk; k++) {
        double f = wl_core_gpu_clock(g, k);
        wl_cluster_result r;
        int rc = wl_cluster_run(c, f, NULL, &r, err);
        if (rc)
            return rc;
        if (r.time_s <= bound && scoped_j(&r, scope) < scoped_j(best, scope)) {
            *best = r;
            *clock = f;
        }
    }
    return WL_OK;
}

/* A stage plan's descent on the graph, coarse to fine: steps of twice
 * stp grid clocks, then of stp from where those stop (fewer graph passes
 * at 64 stages, and plans at least as good: the coarse steps pass over
 * clocks where a single step saves too little to be taken first). */
static int stage_descent(cl_graph *d, int *pv, int stp, double bound, wl_cluster_energy_scope scope,
                         cl_graph_visit visit, void *ctx)
{
    int rc = wl_cluster_graph_descend(d, pv, 2 * stp, bound, scope, visit, ctx);
    return rc ? rc : wl_cluster_graph_descend(d, pv, stp, bound, scope, visit, ctx);
}

/* The per-computation plan with the least energy (of scope) within the
 * bound: fills at deadlines from the start's time to the bound (the
 * energy of scope all also counts the time), from the start's clocks and
 * from start2 (a stage plan's: what it saves the fill keeps; NULL: none),
 * and start2 itself. */
static void best_fill(cl_graph *d, double t0, double bound, wl_cluster_energy_scope scope,
                      const int *start2, double *T_out, double *E_out)
{
    int Q = bound > t0 ? 4 : 0;
    double bT = 0, bE = INFINITY, T, E;
    if (start2) {
        memcpy(d->ci, start2, sizeof(int) * (size_t)d->n);
        memcpy(d->tail_ci, start2 + d->n, sizeof(int) * (size_t)d->p);
        wl_cluster_graph_eval(d, scope, &T, &E);
        if (T <= bound * (1 + 1e-12)) {
            bE = E;
            bT = T;
        }
    }
    for (int s = 0; s < (start2 ? 2 : 1); s++)
        for (int q = 0; q <= Q; q++) {
            wl_cluster_graph_fill(d, t0 + (bound - t0) * (Q ? (double)q / Q : 0), s ? start2 : NULL);
            wl_cluster_graph_eval(d, scope, &T, &E);
            if (E < bE) {
                bE = E;
                bT = T;
            }
        }
    *T_out = bT;
    *E_out = bE;
}

/* A slowdown bound in [0, 1000] % and a known energy scope, else the
 * error naming the field. */
static int bad_plan_args(double max_slowdown_pct, wl_cluster_energy_scope scope, wl_error *err)
{
    if (!(max_slowdown_pct >= 0 && max_slowdown_pct <= 1000)) {
        wl_error_set(err, "cluster", 0, "max_slowdown_pct", "expected a slowdown in [0, 1000] %%");
        return 1;
    }
    if (!wl_cluster_energy_scope_name(scope)) {
        wl_error_set(err, "cluster", 0, "energy_scope", "expected gpu or all");
        return 1;
    }
    return 0;
}

int wl_cluster_optimize(wl_cluster *c, double max_slowdown_pct, wl_cluster_energy_scope scope,
                        double *plan, wl_cluster_plan_result *out, wl_error *err)
{
    memset(out, 0, sizeof *out);
    if (bad_plan_args(max_slowdown_pct, scope, err))
        return WL_EINVAL;
    out->scope = scope;
    const wl_core_gpu *g = &c->gpu;
    double fmax = g->sm_clock_max_mhz;
    double step = 2 * g->sm_clock_step_mhz;
    int n = 2 * c->p, rc;
    if ((rc = wl_cluster_run(c, fmax, NULL, &out->at_max, err)))
        return rc;
    /* where the power limit holds a stage below the top clock, lowering its
     * requested clock changes nothing until it passes the clock it runs
     * at: the descent starts from the clocks the stages ran (on the grid),
     * where every step it tries changes something */
    for (int i = 0; i < n; i++)
        plan[i] = c->stage_clock[i];
    double bound = out->at_max.time_s * (1 + max_slowdown_pct / 100.0);
    /* the graph of the top clocks' run: its order stays under every plan
     * except where weight gradients fill the bubbles as the timeline lets
     * them (zb-h1), whose stage plans are simulated */
    cl_graph d, db;
    memset(&db, 0, sizeof db);
    if ((rc = wl_cluster_graph_build(c, &out->at_max, &d, err)))
        return rc;
    int graph = !wl_cluster_schedule_splits_w(c->cfg.schedule);
    int *pv = malloc(sizeof(int) * 2 * (size_t)n);
    double *alt = malloc(sizeof(double) * (size_t)n);
    if (!pv || !alt) {
        wl_error_set(err, "cluster", 0, "", "out of memory");
        rc = WL_ENOMEM;
        goto done;
    }
    if ((rc = best_fixed(c, graph ? &d : NULL, bound, scope, &out->at_max, &out->best_fixed,
                         &out->best_fixed_clock_mhz, err)))
        goto done;
    /* the same configuration with balanced stages, at its best single
     * clock within the same bound: what rebalancing gives without DVFS */
    if (c->p > 1 && c->cfg.partition != WL_CLUSTER_PART_BALANCED) {
        wl_cluster_config bc = c->cfg;
        bc.partition = WL_CLUSTER_PART_BALANCED;
        wl_cluster *b = NULL;
        wl_cluster_result bmax;
        if ((rc = wl_cluster_create(&c->sys, &c->gpu, &c->model, &bc, &b, err)) ||
            (rc = wl_cluster_refine_split(b, err)) ||
            (rc = wl_cluster_run(b, fmax, NULL, &bmax, err)) ||
            (graph && (rc = wl_cluster_graph_build(b, &bmax, &db, err))) ||
            (rc = best_fixed(b, graph ? &db : NULL, bound, scope, &bmax, &out->balanced_fixed,
                             &out->balanced_fixed_clock_mhz, err))) {
            wl_cluster_free(b);
            goto done;
        }
        wl_cluster_free(b);
    } else {
        out->balanced_fixed = out->best_fixed;
        out->balanced_fixed_clock_mhz = out->best_fixed_clock_mhz;
    }
    /* descend from every GPU at the maximum (the clocks it runs there) and
     * from the best single clock; keep the plan that uses less energy
     * (never more than either start) */
    if (graph) {
        int *pa_ = pv, *pb = pv + n, stp = (int)lround(step / g->sm_clock_step_mhz);
        double Ta, Ea, Tb, Eb;
        wl_cluster_graph_stage_start(&d, fmax, pa_);
        if ((rc = stage_descent(&d, pa_, stp, bound, scope, NULL, NULL)))
            goto oom;
        wl_cluster_graph_set_stages(&d, pa_);
        wl_cluster_graph_eval(&d, scope, &Ta, &Ea);
        for (int i = 0; i < n; i++)
            plan[i] = d.clk[pa_[i]];
        if (out->best_fixed_clock_mhz != fmax) {
            wl_cluster_graph_stage_start(&d, out->best_fixed_clock_mhz, pb);
            if ((rc = stage_descent(&d, pb, stp, bound, scope, NULL, NULL)))
                goto oom;
            wl_cluster_graph_set_stages(&d, pb);
            wl_cluster_graph_eval(&d, scope, &Tb, &Eb);
            if (Eb < Ea)
                for (int i = 0; i < n; i++)
                    plan[i] = d.clk[pb[i]];
        }
        if ((rc = wl_cluster_run(c, fmax, plan, &out->planned, err)))
            goto done;
    }
    if (!graph || out->planned.time_s > bound * (1 + 1e-9)) {
        /* simulated descents (and the graph's plan if the simulation of it
         * broke the bound) */
        wl_cluster_result ra = out->at_max, rb = out->best_fixed;
        for (int i = 0; i < n; i++) {
            plan[i] = d.clk[i % 2 ? d.fb[i / 2] : d.f0[i / 2]];
            alt[i] = out->best_fixed_clock_mhz;
        }
        rc = descend(c, plan, n, bound, step, scope, &ra, NULL, err);
        if (!rc && out->best_fixed_clock_mhz != fmax)
            rc = descend(c, alt, n, bound, step, scope, &rb, NULL, err);
        if (!rc && out->best_fixed_clock_mhz != fmax && scoped_j(&rb, scope) < scoped_j(&ra, scope))
            memcpy(plan, alt, sizeof(double) * (size_t)n);
        if (rc)
            goto done;
    }
    /* Perseus's plan space: a clock per computation, the order kept */
    double T0, E0, Tc, Ec;
    wl_cluster_graph_reset(&d);
    wl_cluster_graph_eval(&d, scope, &T0, &E0);
    /* from the start's clocks, and from the stage plan's */
    int *start2 = malloc(sizeof(int) * ((size_t)d.n + (size_t)d.p));
    if (!start2)
        goto oom;
    for (int i = 0; i < n; i++)
        pv[i] = wl_cluster_graph_clock(&d, plan[i]);
    wl_cluster_graph_set_stages(&d, pv);
    memcpy(start2, d.ci, sizeof(int) * (size_t)d.n);
    memcpy(start2 + d.n, d.tail_ci, sizeof(int) * (size_t)d.p);
    best_fill(&d, T0, bound, scope, graph ? start2 : NULL, &Tc, &Ec);
    free(start2);
    out->computation_time_s = Tc;
    out->computation_energy_j = Ec;
    out->computation_saving_pct = E0 > 0 ? 100 * (E0 - Ec) / E0 : 0;
    out->computation_slowdown_pct = T0 > 0 ? 100 * (Tc - T0) / T0 : 0;
    /* leave the handle's last run on the plan (for the timeline) */
    if ((rc = wl_cluster_run(c, fmax, plan, &out->planned, err)))
        goto done;
    double e0 = scoped_j(&out->at_max, scope), t0 = out->at_max.time_s;
    double ep = scoped_j(&out->planned, scope), ef = scoped_j(&out->best_fixed, scope);
    out->energy_saving_pct = e0 > 0 ? 100 * (e0 - ep) / e0 : 0;
    out->saving_vs_fixed_pct = ef > 0 ? 100 * (ef - ep) / ef : 0;
    double eb = scoped_j(&out->balanced_fixed, scope);
    out->saving_vs_balanced_pct = eb > 0 ? 100 * (eb - ep) / eb : 0;
    out->slowdown_pct = t0 > 0 ? 100 * (out->planned.time_s - t0) / t0 : 0;
    goto done;
oom:
    wl_error_set(err, "cluster", 0, "", "out of memory");
done:
    wl_cluster_graph_free(&d);
    wl_cluster_graph_free(&db);
    free(pv);
    free(alt);
    return rc;
}

/* The frontier: every single clock for all GPUs, and the plans the descent
 * passes through from all-at-max and from the fixed clocks on the way down
 * (each step is the best plan the greedy rule knows at its time), within
 * the slowdown bound; what no other point dominates in (time, energy) is
 * kept, fastest first. */
/* The points of (time, energy) pairs xy[2 n] that no other beats in both,
 * as indices into ord, fastest first; returns how many. front: n bytes of
 * scratch. */
static size_t front_by_time(const double *xy, size_t n, unsigned char *front, size_t *ord)
{
    wl_pareto_front(xy, n, 2, front);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (front[i])
            ord[k++] = i;
    for (size_t i = 1; i < k; i++)
        for (size_t j = i; j > 0 && xy[2 * ord[j]] < xy[2 * ord[j - 1]]; j--) {
            size_t t = ord[j];
            ord[j] = ord[j - 1];
            ord[j - 1] = t;
        }
    return k;
}

/* The front of pa's points [lo, hi) as indices into pa, fastest first, in
 * ord; returns how many. xy, front: scratch of pa's length. */
static size_t front_of(const path *pa, size_t lo, size_t hi, double *xy, unsigned char *front,
                       size_t *ord)
{
    for (size_t i = lo; i < hi; i++) {
        xy[2 * (i - lo)] = pa->pts[i].time_s;
        xy[2 * (i - lo) + 1] = pa->pts[i].energy_j;
    }
    size_t k = front_by_time(xy, hi - lo, front, ord);
    for (size_t j = 0; j < k; j++)
        ord[j] += lo;
    return k;
}

int wl_cluster_frontier(wl_cluster *c, double max_slowdown_pct, wl_cluster_energy_scope scope,
                        wl_cluster_frontier_point **pts, double **plans, size_t *n_out,
                        wl_error *err)
{
    *pts = NULL;
    *plans = NULL;
    *n_out = 0;
    if (bad_plan_args(max_slowdown_pct, scope, err))
        return WL_EINVAL;
    const wl_core_gpu *g = &c->gpu;
    int n = 2 * c->p, rc;
    double fmax = g->sm_clock_max_mhz, step = 2 * g->sm_clock_step_mhz;
    int stp = (int)lround(step / g->sm_clock_step_mhz);
    path pa = {.n = n};
    cl_graph d;
    memset(&d, 0, sizeof d);
    double *plan = malloc(sizeof(double) * 2 * (size_t)n);
    int *pv = malloc(sizeof(int) * (size_t)n);
    unsigned char *front = NULL, *exact = NULL;
    size_t *ord = NULL;
    double *xy = NULL;
    wl_cluster_result r0, r;
    if (!plan || !pv)
        goto oom;
    if ((rc = wl_cluster_run(c, fmax, NULL, &r0, err)) || (rc = wl_cluster_graph_build(c, &r0, &d, err)))
        goto done;
    int graph = !wl_cluster_schedule_splits_w(c->cfg.schedule);
    double bound = r0.time_s * (1 + max_slowdown_pct / 100.0);
    size_t nclk = wl_core_gpu_clock_count(g);
    /* the fixed clocks, and a descent from each fixed clock the bound
     * admits: from the maximum the stages off the critical path slow
     * first; from lower clocks the plan raises none, so those starts add
     * the plans around them. The graph costs the descents' plans (not
     * simulated: exact 0); the front's are simulated below. */
    for (size_t k = nclk; k-- > 0;) {
        double f = wl_core_gpu_clock(g, k);
        if ((rc = wl_cluster_run(c, f, NULL, &r, err)))
            goto done;
        if (r.time_s > bound)
            continue;
        for (int i = 0; i < n; i++)
            plan[i] = f;
        if (path_push(&pa, plan, &r, scope, 1))
            goto oom;
        if (!(f == fmax || k % 4 == 0))
            continue;
        if (graph) {
            wl_cluster_graph_stage_start(&d, f, pv);
            path_ctx pc = {&pa, &d, plan};
            if (stage_descent(&d, pv, stp, bound, scope, path_visit, &pc))
                goto oom;
            continue;
        }
        /* from the top: the clocks the power limit lets the stages run
         * (wl_cluster_optimize says why) */
        if (f == fmax)
            for (int i = 0; i < n; i++)
                plan[i] = c->stage_clock[i];
        if ((rc = descend(c, plan, n, bound, step, scope, &r, &pa, err)))
            goto done;
    }
    /* and from the best single clock, which --optimize descends from too */
    size_t bf = pa.len;
    for (size_t i = 0; i < pa.len; i++)
        if (pa.pts[i].fixed && (bf == pa.len || pa.pts[i].energy_j < pa.pts[bf].energy_j))
            bf = i;
    if (bf < pa.len) {
        double f = pa.plans[bf * (size_t)n];
        size_t kb = (size_t)wl_cluster_graph_clock(&d, f);
        if (f != fmax && kb % 4 != 0) {
            if (graph) {
                wl_cluster_graph_stage_start(&d, f, pv);
                path_ctx pc = {&pa, &d, plan};
                if (stage_descent(&d, pv, stp, bound, scope, path_visit, &pc))
                    goto oom;
            } else {
                if ((rc = wl_cluster_run(c, f, NULL, &r, err)))
                    goto done;
                for (int i = 0; i < n; i++)
                    plan[i] = f;
                if ((rc = descend(c, plan, n, bound, step, scope, &r, &pa, err)))
                    goto done;
            }
        }
    }
    /* the per-computation plans at deadlines from the top's time to the
     * bound, their own front beside the stage plans' */
    size_t first_comp = pa.len;
    for (int q = 0; q <= 16; q++) {
        double T, E;
        wl_cluster_graph_fill(&d, r0.time_s + (bound - r0.time_s) * q / 16.0, NULL);
        wl_cluster_graph_eval(&d, scope, &T, &E);
        wl_cluster_graph_means(&d, plan);
        if (path_push_te(&pa, plan, T, E, 0))
            goto oom;
    }
    xy = malloc(sizeof(double) * 2 * (pa.len ? pa.len : 1));
    front = calloc(pa.len ? pa.len : 1, 1);
    exact = calloc(pa.len ? pa.len : 1, 1);
    ord = malloc(sizeof *ord * (pa.len ? pa.len : 1));
    if (!xy || !front || !exact || !ord)
        goto oom;
    for (size_t i = 0; i < pa.len; i++) {
        pa.pts[i].computation = i >= first_comp;
        /* simulated: the fixed clocks, every plan without the graph; the
         * per-computation plans have no simulation but the graph's */
        exact[i] = pa.pts[i].fixed || !graph || pa.pts[i].computation;
    }
    /* the fronts, fastest first: the fixed clocks' and the stage plans',
     * the coarse option, then the per-computation plans' beside them. The
     * stage plans on the first are simulated until it holds only simulated
     * points (a simulated plan can fall behind one the graph costed, which
     * is then simulated in turn). */
    size_t k = 0;
    for (;;) {
        k = front_of(&pa, 0, first_comp, xy, front, ord);
        int again = 0;
        for (size_t j = 0; j < k; j++) {
            size_t i = ord[j];
            if (exact[i])
                continue;
            if ((rc = wl_cluster_run(c, fmax, pa.plans + i * (size_t)n, &r, err)))
                goto done;
            exact[i] = 1;
            pa.pts[i].time_s = r.time_s > bound * (1 + 1e-9) ? INFINITY : r.time_s;
            pa.pts[i].energy_j = scoped_j(&r, scope);
            again = 1;
        }
        if (!again)
            break;
    }
    k += front_of(&pa, first_comp, pa.len, xy, front, ord + k);
    /* one of each point (a plan and a fixed clock can meet) */
    size_t u = 0;
    for (size_t j = 0; j < k; j++) {
        const wl_cluster_frontier_point *q = &pa.pts[ord[j]];
        if (!isfinite(q->time_s))
            continue;
        if (u && q->computation == pa.pts[ord[u - 1]].computation &&
            q->time_s == pa.pts[ord[u - 1]].time_s && q->energy_j == pa.pts[ord[u - 1]].energy_j)
            continue;
        ord[u++] = ord[j];
    }
    wl_cluster_frontier_point *out_pts = malloc(sizeof *out_pts * (u ? u : 1));
    double *out_plans = malloc(sizeof(double) * (size_t)n * (u ? u : 1));
    if (!out_pts || !out_plans) {
        free(out_pts);
        free(out_plans);
        goto oom;
    }
    double e0 = scoped_j(&r0, scope);
    for (size_t j = 0; j < u; j++) {
        out_pts[j] = pa.pts[ord[j]];
        out_pts[j].slowdown_pct = 100 * (out_pts[j].time_s - r0.time_s) / r0.time_s;
        out_pts[j].energy_saving_pct = 100 * (e0 - out_pts[j].energy_j) / e0;
        memcpy(out_plans + j * (size_t)n, pa.plans + ord[j] * (size_t)n, sizeof(double) * (size_t)n);
    }
    *pts = out_pts;
    *plans = out_plans;
    *n_out = u;
    rc = WL_OK;
    goto done;
oom:
    wl_error_set(err, "cluster", 0, "", "out of memory");
    rc = WL_ENOMEM;
done:
    wl_cluster_graph_free(&d);
    free(pa.pts);
    free(pa.plans);
    free(plan);
    free(pv);
    free(xy);
    free(front);
    free(exact);
    free(ord);
    return rc;
}

/* Zeus's knob beside the clock plans: every GPU capped alike, requested at
 * its top clock, each cap's split refined as wl_cluster_power_limit_sweep
 * does; the caps no other cap beats in both time and energy, fastest
 * first, against the same baseline as wl_cluster_frontier (every GPU at
 * its maximum clock under the GPU's own limit). */
int wl_cluster_cap_frontier(const wl_cluster_system *sys, const wl_core_gpu *gpu,
                            const wl_core_model *m, const wl_cluster_config *cfg,
                            const double *limits, size_t n, wl_cluster_energy_scope scope,
                            wl_cluster_frontier_point **pts, double **limits_out, size_t *n_out,
                            wl_error *err)
{
    *pts = NULL;
    *limits_out = NULL;
    *n_out = 0;
    if (!wl_cluster_energy_scope_name(scope)) {
        wl_error_set(err, "cluster", 0, "energy_scope", "expected gpu or all");
        return WL_EINVAL;
    }
    if (n < 1) {
        wl_error_set(err, "cluster", 0, "power_limit_w", "no power limits");
        return WL_EINVAL;
    }
    wl_cluster_result r0, *res = calloc(n, sizeof *res);
    double *xy = malloc(sizeof(double) * 2 * n);
    unsigned char *front = calloc(n, 1);
    size_t *ord = malloc(sizeof *ord * n);
    wl_cluster_frontier_point *out = malloc(sizeof *out * n);
    double *lim = malloc(sizeof *lim * n);
    wl_cluster *c = NULL;
    int rc = WL_ENOMEM;
    if (!res || !xy || !front || !ord || !out || !lim) {
        wl_error_set(err, "cluster", 0, "", "out of memory");
        goto done;
    }
    double top = gpu->sm_clock_max_mhz;
    if ((rc = wl_cluster_create(sys, gpu, m, cfg, &c, err)) || (rc = wl_cluster_refine_split(c, err)) ||
        (rc = wl_cluster_run(c, top, NULL, &r0, err)))
        goto done;
    if ((rc = wl_cluster_power_limit_sweep(sys, gpu, m, cfg, top, limits, n, res, err)))
        goto done;
    for (size_t i = 0; i < n; i++) {
        xy[2 * i] = res[i].time_s;
        xy[2 * i + 1] = scoped_j(&res[i], scope);
    }
    size_t k = front_by_time(xy, n, front, ord);
    double e0 = scoped_j(&r0, scope);
    size_t u = 0;
    for (size_t j = 0; j < k; j++) {
        size_t i = ord[j];
        /* caps above the draw all give the same run: keep the lowest */
        if (u && xy[2 * i] == out[u - 1].time_s && xy[2 * i + 1] == out[u - 1].energy_j) {
            lim[u - 1] = fmin(lim[u - 1], limits[i]);
            continue;
        }
        out[u] = (wl_cluster_frontier_point){
            .time_s = xy[2 * i], .energy_j = xy[2 * i + 1],
            .slowdown_pct = 100 * (xy[2 * i] - r0.time_s) / r0.time_s,
            .energy_saving_pct = 100 * (e0 - xy[2 * i + 1]) / e0, .fixed = 0};
        lim[u++] = limits[i];
    }
    *pts = out;
    *limits_out = lim;
    *n_out = u;
    out = NULL;
    lim = NULL;
    rc = WL_OK;
done:
    wl_cluster_free(c);
    free(res);
    free(xy);
    free(front);
    free(ord);
    free(out);
    free(lim);
    return rc;
}

int wl_cluster_power_limit_sweep(const wl_cluster_system *sys, const wl_core_gpu *gpu,
                                 const wl_core_model *m, const wl_cluster_config *cfg,
                                 double clock_mhz, const double *limits, size_t n,
                                 wl_cluster_result *res, wl_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (!(limits[i] > 0) || !isfinite(limits[i]) || limits[i] > 1e5) {
            wl_error_set(err, "cluster", 0, "power_limit_w", "expected a limit in (0, 100000] W");
            return WL_EINVAL;
        }
        if (limits[i] < gpu->power_limit_min_w) {
            wl_error_set(err, "cluster", 0, "power_limit_w",
                         "%g W is below %s's lowest limit, %g W (nvidia-smi -pl refuses it)",
                         limits[i], gpu->id, gpu->power_limit_min_w);
            return WL_EINVAL;
        }
        wl_core_gpu g = *gpu;
        g.power_limit_w = limits[i];
        wl_cluster *c = NULL;
        int rc = wl_cluster_create(sys, &g, m, cfg, &c, err);
        if (!rc)
            rc = wl_cluster_refine_split(c, err);
        if (!rc)
            rc = wl_cluster_run(c, clock_mhz, NULL, &res[i], err);
        wl_cluster_free(c);
        if (rc)
            return rc;
    }
    return WL_OK;
}
