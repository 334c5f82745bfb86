/* The task graph of a simulated timeline, and the clock plans searched on it.
 *
 * A simulated timeline as a graph: every pipeline task (each micro-batch's
 * forward, backward and weight-gradient chunk on each stage) waits for the
 * previous task on its stage (plus that one's send) and for its input from
 * another stage (plus the transfer). The order of each stage's tasks is
 * kept as the run at the plan's starting clocks had it, as Perseus keeps
 * 1F1B's; the iteration is then the longest path through the graph plus
 * each stage's gradient synchronisation and optimizer step, and the energy
 * is the tasks' plus idle power in every gap, accounted as wl_cluster_run
 * does (the graph at the starting clocks gives its time and GPU energy).
 * Each task's duration and energy at every clock of the grid are the
 * stage's chunk costs (wl_cluster_chunk_costs), so evaluating a plan is two
 * passes over the tasks, not a simulation. */
#include "cluster_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void wl_cluster_graph_free(cl_graph *d)
{
    free(d->clk);
    free(d->t);
    free(d->pred);
    free(d->xdelay);
    free(d->last);
    free(d->tail_s);
    free(d->opt_t);
    memset(d, 0, sizeof *d);
}

int wl_cluster_graph_clock(const cl_graph *d, double f)
{
    int best = 0;
    for (int j = 1; j < d->nclk; j++)
        if (fabs(d->clk[j] - f) < fabs(d->clk[best] - f))
            best = j;
    return best;
}

/* The graph of c's last run (which must be the start's: its timeline, stage
 * clocks and tails) with r its result. */
int wl_cluster_graph_build(wl_cluster *c, const wl_cluster_result *r, cl_graph *d, wl_error *err)
{
    memset(d, 0, sizeof *d);
    const wl_core_gpu *g = &c->gpu;
    int p = c->p, v = c->v, rows = p * v * 4;
    size_t nt = wl_cluster_sim_task_count(c->sim), n = 0;
    int nclk = (int)wl_core_gpu_clock_count(g);
    d->p = p;
    d->nclk = nclk;
    d->clk = malloc(sizeof(double) * 2 * (size_t)nclk);
    d->t = malloc(sizeof(double) * 2 * (size_t)rows * (size_t)nclk);
    d->pred = malloc(sizeof(int) * 9 * (nt ? nt : 1));
    d->xdelay = malloc(sizeof(double) * 5 * (nt ? nt : 1));
    d->last = malloc(sizeof(int) * 5 * (size_t)p);
    d->tail_s = malloc(sizeof(double) * 6 * (size_t)p);
    d->opt_t = malloc(sizeof(double) * 2 * (size_t)p * (size_t)nclk);
    if (!d->clk || !d->t || !d->pred || !d->xdelay || !d->last || !d->tail_s || !d->opt_t)
        goto oom;
    d->opt_e = d->opt_t + (size_t)p * (size_t)nclk;
    d->idle = d->clk + nclk;
    d->e = d->t + (size_t)rows * (size_t)nclk;
    d->prev = d->pred + nt;
    d->next = d->prev + nt;
    d->row = d->next + nt;
    d->var = d->row + nt;
    d->top = d->var + nt;
    d->ci = d->top + nt;
    d->micro = d->ci + nt;
    d->code = d->micro + nt;
    d->send = d->xdelay + nt;
    d->es = d->send + nt;
    d->le = d->es + nt;
    d->dur = d->le + nt;
    d->f0 = d->last + p;
    d->fb = d->f0 + p;
    d->fprev = d->fb + p;
    d->tail_ci = d->fprev + p;
    d->tail_e = d->tail_s + p;
    d->tprev = d->tail_e + p;
    d->t_dp = d->tprev + p;
    d->tied = d->t_dp + p;
    d->t_ag = d->tied + p;
    if (wl_cluster_sim_graph(c->sim, d->pred, d->xdelay, &n))
        goto oom;
    d->n = (int)n;
    d->m = c->m;
    d->train = c->cfg.mode == WL_MODE_TRAIN;
    d->overlap = !c->cfg.no_dp_overlap;
    for (int j = 0; j < nclk; j++) {
        d->clk[j] = wl_core_gpu_clock(g, (size_t)j);
        d->idle[j] = wl_core_gpu_idle_w(g, d->clk[j]);
    }
    for (int i = 0; i < p; i++) {
        d->last[i] = -1;
        d->f0[i] = wl_cluster_graph_clock(d, c->stage_clock[2 * i]);
        d->fb[i] = d->tail_ci[i] = wl_cluster_graph_clock(d, c->stage_clock[2 * i + 1]);
        d->t_dp[i] = d->tied[i] = d->t_ag[i] = 0;
        if (d->train)
            wl_cluster_stage_sync(c, i, &d->t_dp[i], &d->tied[i], &d->t_ag[i]);
        for (int j = 0; j < nclk; j++) {
            size_t q = (size_t)i * (size_t)nclk + (size_t)j;
            d->opt_t[q] = d->opt_e[q] = 0;
            if (d->train && wl_cluster_stage_optimizer(c, i, d->clk[j], &d->opt_t[q], &d->opt_e[q])) {
                wl_error_set(err, "cluster", 0, "", "cannot evaluate the optimizer");
                wl_cluster_graph_free(d);
                return WL_EINVAL;
            }
        }
    }
    for (size_t k = 0; k < n; k++) {
        const wl_cluster_task *t = wl_cluster_sim_task(c->sim, k);
        int i = t->stage, code = t->kind == 'B' ? 1 : t->kind == 'W' ? 2
                                : c->decode && t->micro >= c->m ? 3 : 0;
        d->prev[k] = d->last[i];
        d->next[k] = -1;
        if (d->last[i] >= 0)
            d->next[d->last[i]] = (int)k;
        d->last[i] = (int)k;
        d->send[k] = t->send_s;
        d->micro[k] = t->micro;
        d->code[k] = code;
        d->row[k] = (i * v + t->chunk) * 4 + code;
        d->var[k] = 2 * i + (code != 0);
        d->top[k] = d->ci[k] = code ? d->fb[i] : d->f0[i];
    }
    /* every row at every clock: the chunk costs of each stage, both phases
     * at the clock */
    for (int j = 0; j < nclk; j++)
        for (int i = 0; i < p; i++) {
            if (wl_cluster_chunk_costs(c, i, d->clk[j], d->clk[j])) {
                wl_error_set(err, "cluster", 0, "", "cannot evaluate stage %d's kernels", i);
                wl_cluster_graph_free(d);
                return WL_EINVAL;
            }
            for (int ch = 0; ch < v; ch++) {
                size_t q = (size_t)i * (size_t)v + (size_t)ch, r0 = q * 4 * (size_t)nclk + (size_t)j;
                double tt[4] = {c->f_s[q], c->b_s[q], c->w_s[q], c->f2_s[q]};
                double ee[4] = {c->fe[q], c->be[q], c->we[q], c->fe2[q]};
                for (int k = 0; k < 4; k++) {
                    d->t[r0 + (size_t)k * (size_t)nclk] = tt[k];
                    d->e[r0 + (size_t)k * (size_t)nclk] = ee[k];
                }
            }
        }
    d->gpus = (double)c->cfg.tp * c->dpc;
    d->rest_w = r->time_s > 0 ? (r->energy_j - r->energy_gpu_j) / r->time_s : 0;
    return WL_OK;
oom:
    wl_cluster_graph_free(d);
    wl_error_set(err, "cluster", 0, "", "out of memory");
    return WL_ENOMEM;
}

#define DT(d, k, j) ((d)->t[(size_t)(d)->row[k] * (size_t)(d)->nclk + (size_t)(j)])
#define DE(d, k, j) ((d)->e[(size_t)(d)->row[k] * (size_t)(d)->nclk + (size_t)(j)])

void wl_cluster_graph_reset(cl_graph *d)
{
    for (int k = 0; k < d->n; k++)
        d->ci[k] = d->top[k];
    for (int i = 0; i < d->p; i++)
        d->tail_ci[i] = d->fb[i];
}

void wl_cluster_graph_uniform(cl_graph *d, int j)
{
    for (int k = 0; k < d->n; k++)
        d->ci[k] = j < d->top[k] ? j : d->top[k];
    for (int i = 0; i < d->p; i++)
        d->tail_ci[i] = j < d->fb[i] ? j : d->fb[i];
}

/* Each stage's tails at the tasks' clocks: the gradient sync less what its
 * last micro-batch's backward hides, the tied embedding's all-reduce, the
 * parameter all-gather less its forward chunks, and the optimizer step at
 * the tails' clock (wl_cluster_run's rule). */
static void graph_tails(cl_graph *d)
{
    for (int k = 0; k < d->n; k++)
        d->dur[k] = DT(d, k, d->ci[k]);
    for (int i = 0; i < d->p; i++)
        d->tail_s[i] = d->tail_e[i] = 0; /* scratch: windows */
    double *win = d->tail_s, *fwin = d->tail_e;
    if (!d->train)
        return;
    for (int k = 0; k < d->n; k++) {
        int i = d->var[k] / 2;
        if ((d->code[k] == 1 || d->code[k] == 2) && d->micro[k] == d->m - 1)
            win[i] += d->dur[k];
        else if (d->code[k] == 0 && d->micro[k] == 0)
            fwin[i] += d->dur[k];
    }
    for (int i = 0; i < d->p; i++) {
        double w = d->overlap ? win[i] : 0, fw = d->overlap ? fwin[i] : 0;
        double dpx = (d->t_dp[i] - w > 0 ? d->t_dp[i] - w : 0) + d->tied[i];
        dpx += d->t_ag[i] - fw > 0 ? d->t_ag[i] - fw : 0;
        size_t q = (size_t)i * (size_t)d->nclk + (size_t)d->tail_ci[i];
        d->tail_s[i] = dpx + d->opt_t[q];
        d->tail_e[i] = dpx * d->idle[d->tail_ci[i]] + d->opt_e[q];
    }
}

/* Earliest starts at the tasks' clocks (ci; durations into dur); returns
 * the iteration time. */
static double graph_forward(cl_graph *d)
{
    graph_tails(d);
    const int *prev = d->prev, *pred = d->pred;
    const double *dur = d->dur, *send = d->send, *xd = d->xdelay;
    double *es = d->es;
    for (int k = 0; k < d->n; k++) {
        double s = 0;
        int a = prev[k], b = pred[k];
        if (a >= 0)
            s = es[a] + dur[a] + send[a];
        if (b >= 0) {
            double x = es[b] + dur[b] + xd[b];
            s = x > s ? x : s;
        }
        es[k] = s;
    }
    double T = 0;
    for (int i = 0; i < d->p; i++) {
        int k = d->last[i];
        double end = (k >= 0 ? es[k] + dur[k] + send[k] : 0) + d->tail_s[i];
        T = end > T ? end : T;
    }
    return T;
}

/* The iteration time and the energy of scope at the tasks' clocks:
 * wl_cluster_run's accounting (gaps at the idle power of the clock the
 * stage last ran, the tails at its backward clock). */
static double graph_energy(cl_graph *d, wl_cluster_energy_scope scope, double T)
{
    double E = 0;
    for (int i = 0; i < d->p; i++) {
        d->tprev[i] = 0;
        d->fprev[i] = -1; /* before its first task, a stage idles at that task's clock */
    }
    for (int k = 0; k < d->n; k++) {
        int i = d->var[k] / 2, j = d->ci[k];
        double gap = d->es[k] - d->tprev[i];
        if (d->fprev[i] < 0)
            d->fprev[i] = j;
        if (gap > 0)
            E += gap * d->idle[d->fprev[i]];
        E += DE(d, k, j);
        d->tprev[i] = d->es[k] + d->dur[k];
        d->fprev[i] = j;
    }
    for (int i = 0; i < d->p; i++) {
        if (d->fprev[i] < 0)
            d->fprev[i] = d->f0[i];
        int k = d->last[i];
        double end = k >= 0 ? d->es[k] + DT(d, k, d->ci[k]) + d->send[k] : 0;
        if (end > d->tprev[i])
            E += (end - d->tprev[i]) * d->idle[d->fprev[i]];
        E += d->tail_e[i];
        double t_end = end + d->tail_s[i];
        int f = d->tail_s[i] > 0 ? d->tail_ci[i] : d->fprev[i];
        if (T > t_end)
            E += (T - t_end) * d->idle[f];
    }
    E *= d->gpus;
    return E + (scope == WL_CLUSTER_ENERGY_ALL ? d->rest_w * T : 0);
}

void wl_cluster_graph_eval(cl_graph *d, wl_cluster_energy_scope scope, double *T_out, double *E_out)
{
    double T = graph_forward(d);
    *T_out = T;
    *E_out = graph_energy(d, scope, T);
}

/* ---- a clock per computation ---------------------------------------------------
 * Perseus (Chung et al., SOSP'24) slows each computation off the critical
 * path of the iteration's graph into its slack. With the deadline D fixed,
 * the energy is each task's own plus idle power over the rest, so a task
 * moved from clock j to a slower j' saves
 *   (e(j) - P_idle(j) t(j)) - (e(j') - P_idle(j') t(j'))
 * (its energy above idle) and spends t(j') - t(j) of slack. The fill sets
 * the slowest clocks the slack admits by passes over the graph: a forward
 * pass gives each task's earliest start, then a backward pass in reverse
 * topological order gives each task's latest end (D less its stage's tails
 * for a stage's last task, else its successors' latest starts less the
 * transfers) and lowers its clock while the saving per second of slack is
 * at least a price lambda and the task still ends in time. A task lowered
 * in the backward pass leaves its predecessors, visited later, its latest
 * start as their deadline, so every pass keeps the iteration within D.
 * The price falls geometrically from the best saving rate over the passes,
 * so the slack of a path shared by several tasks goes to the best savings
 * per second first (the equal-marginal rule of the time-cost trade-off),
 * not to whichever task the pass meets first; at price 0 every task ends
 * at its least energy above idle or at its slack. */
/* The energy of task k at clock j with the idle gap that follows it on
 * its stage, slot seconds from its start (the gap is charged at the idle
 * power of the clock the GPU ran last, as wl_cluster_run charges it). */
static double slot_j(const cl_graph *d, int k, int j, double slot)
{
    double t = DT(d, k, j);
    return DE(d, k, j) + d->idle[j] * (slot > t ? slot - t : 0);
}

static int fill_pass(cl_graph *d, double D, double lambda)
{
    graph_forward(d);
    for (int k = 0; k < d->n; k++)
        d->le[k] = INFINITY;
    for (int i = 0; i < d->p; i++)
        if (d->last[i] >= 0)
            d->le[d->last[i]] = D - d->tail_s[i] - d->send[d->last[i]];
    int moved = 0;
    for (int k = d->n - 1; k >= 0; k--) {
        int j = d->ci[k];
        double L = d->le[k];
        /* the slot to the next task's start (the stage's end for its last) */
        double slot = (d->next[k] >= 0 ? d->es[d->next[k]] : d->es[k] + DT(d, k, j) + d->send[k]) -
                      d->es[k];
        while (j > 0) {
            double dt = DT(d, k, j - 1) - DT(d, k, j);
            double gain = slot_j(d, k, j, slot) - slot_j(d, k, j - 1, fmax(slot, DT(d, k, j - 1)));
            if (!(gain > 0) || (dt > 0 && gain < lambda * dt) || d->es[k] + DT(d, k, j - 1) > L + 1e-12)
                break;
            j--;
            moved = 1;
        }
        d->ci[k] = j;
        double ls = L - DT(d, k, j);
        if (d->prev[k] >= 0)
            d->le[d->prev[k]] = fmin(d->le[d->prev[k]], ls - d->send[d->prev[k]]);
        if (d->pred[k] >= 0)
            d->le[d->pred[k]] = fmin(d->le[d->pred[k]], ls - d->xdelay[d->pred[k]]);
    }
    return moved;
}

/* The per-computation plan within deadline D from the start's clocks. */
void wl_cluster_graph_fill(cl_graph *d, double D, const int *start)
{
    double rmax = 0;
    if (start) {
        memcpy(d->ci, start, sizeof(int) * (size_t)d->n);
        memcpy(d->tail_ci, start + d->n, sizeof(int) * (size_t)d->p);
    } else {
        wl_cluster_graph_reset(d);
    }
    graph_forward(d);
    for (int k = 0; k < d->n; k++) {
        int j = d->ci[k];
        if (j > 0) {
            double slot = (d->next[k] >= 0 ? d->es[d->next[k]] : d->es[k] + DT(d, k, j) + d->send[k]) -
                          d->es[k];
            double dt = DT(d, k, j - 1) - DT(d, k, j);
            double t1 = DT(d, k, j - 1);
            double gain = slot_j(d, k, j, slot) - slot_j(d, k, j - 1, slot > t1 ? slot : t1);
            if (gain > 0 && dt > 0 && gain / dt > rmax)
                rmax = gain / dt;
        }
    }
    /* prices from the best rate down by 0.7 a level to a thousandth of it,
     * then 0; a level's passes stop when nothing moves */
    for (double lambda = rmax; ; lambda *= 0.7) {
        double lam = lambda < rmax * 1e-3 ? 0 : lambda;
        for (int pass = 0; pass < 16 && fill_pass(d, D, lam); pass++)
            ;
        if (lam == 0)
            break;
    }
}

/* ---- a clock per stage and phase on the graph -----------------------------------
 * The coarse plans: all of a stage's forwards at one clock, its backwards
 * (and weight gradients, optimizer, decode steps) at another. A greedy
 * descent lowers, one step at a time, the (stage, phase) whose step saves
 * the most energy per second it adds, saving without adding time first,
 * while the iteration stays within the bound; each candidate is costed on
 * the graph (two passes over the tasks). The descent is lazy (Minoux's
 * accelerated greedy): candidates wait in a heap under the score they had
 * when last costed, and only the top one is costed again; when it still
 * beats the next one's old score it is taken, else it goes back under its
 * new score. Scores change little as other stages move, so a step costs a
 * few graph passes, not one per (stage, phase). */
typedef struct {
    double score;
    int v, at; /* at: the moves taken when it was scored */
} cand;

static void heap_push(cand *h, int *n, cand c)
{
    int i = (*n)++;
    while (i > 0 && h[(i - 1) / 2].score < c.score) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = c;
}

static cand heap_pop(cand *h, int *n)
{
    cand top = h[0], x = h[--(*n)];
    int i = 0;
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        double best = x.score;
        if (l < *n && h[l].score > best) {
            m = l;
            best = h[l].score;
        }
        if (r < *n && h[r].score > best)
            m = r;
        if (m == i)
            break;
        h[i] = h[m];
        i = m;
    }
    if (*n > 0)
        h[i] = x;
    return top;
}

void wl_cluster_graph_set_stages(cl_graph *d, const int *pv)
{
    for (int k = 0; k < d->n; k++)
        d->ci[k] = pv[d->var[k]];
    for (int i = 0; i < d->p; i++)
        d->tail_ci[i] = pv[2 * i + 1];
}

/* The score of lowering variable v by `step` grid clocks from plan pv
 * (T, E: the plan's); -1 when the step is out of the grid, breaks the
 * bound or saves nothing. */
static double stage_score(cl_graph *d, int *pv, int v, int step, double bound, wl_cluster_energy_scope scope,
                          double T, double E, double *Tn, double *En)
{
    if (pv[v] - step < 0)
        return -1;
    pv[v] -= step;
    wl_cluster_graph_set_stages(d, pv);
    pv[v] += step;
    *Tn = graph_forward(d);
    if (*Tn > bound * (1 + 1e-12))
        return -1;
    *En = graph_energy(d, scope, *Tn);
    double de = E - *En, dt = *Tn - T;
    if (!(de > 0))
        return -1;
    return dt <= 0 ? 1e30 + de : de / dt;
}

/* Lazy greedy descent from plan pv (clock indices, 2 p), in place. */
int wl_cluster_graph_descend(cl_graph *d, int *pv, int step, double bound,
                             wl_cluster_energy_scope scope, cl_graph_visit visit, void *ctx)
{
    int nv = 2 * d->p, nh = 0;
    cand *h = malloc(sizeof *h * (size_t)nv);
    if (!h)
        return WL_ENOMEM;
    double T, E, Tn, En;
    wl_cluster_graph_set_stages(d, pv);
    wl_cluster_graph_eval(d, scope, &T, &E);
    for (int v = 0; v < nv; v++) {
        double s = stage_score(d, pv, v, step, bound, scope, T, E, &Tn, &En);
        if (s > 0)
            heap_push(h, &nh, (cand){s, v, 0});
    }
    int rc = WL_OK, moves = 0;
    while (nh > 0) {
        cand c = heap_pop(h, &nh);
        double s = c.score;
        if (c.at != moves) {
            s = stage_score(d, pv, c.v, step, bound, scope, T, E, &Tn, &En);
            if (!(s > 0))
                continue;
            if (nh > 0 && s < h[0].score) {
                heap_push(h, &nh, (cand){s, c.v, moves});
                continue;
            }
        } else {
            stage_score(d, pv, c.v, step, bound, scope, T, E, &Tn, &En);
        }
        pv[c.v] -= step;
        moves++;
        T = Tn;
        E = En;
        if (visit && (rc = visit(ctx, pv, T, E)))
            break;
        double s2 = stage_score(d, pv, c.v, step, bound, scope, T, E, &Tn, &En);
        if (s2 > 0)
            heap_push(h, &nh, (cand){s2, c.v, moves});
    }
    free(h);
    return rc;
}

/* A stage plan's clocks as grid indices, each no faster than the start ran
 * (top): the forward's and the backward's of each stage. */
void wl_cluster_graph_stage_start(const cl_graph *d, double f, int *pv)
{
    int j = wl_cluster_graph_clock(d, f);
    for (int i = 0; i < d->p; i++) {
        pv[2 * i] = j < d->f0[i] ? j : d->f0[i];
        pv[2 * i + 1] = j < d->fb[i] ? j : d->fb[i];
    }
}

/* A per-computation plan as stage clocks: each stage's forward and
 * backward clocks, means weighted by the computations' times. */
void wl_cluster_graph_means(const cl_graph *d, double *plan)
{
    int nv = 2 * d->p;
    for (int v = 0; v < nv; v++)
        plan[v] = plan[nv + v] = 0;
    for (int k = 0; k < d->n; k++) {
        double t = DT(d, k, d->ci[k]);
        plan[d->var[k]] += t * d->clk[d->ci[k]];
        plan[nv + d->var[k]] += t;
    }
    for (int v = 0; v < nv; v++)
        plan[v] = plan[nv + v] > 0 ? plan[v] / plan[nv + v] : NAN;
}

