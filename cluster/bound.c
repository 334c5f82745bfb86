/* Lower bounds on a training configuration's iteration time and energy,
 * from its pieces' costs alone, without simulating its pipeline: what
 * `cluster search` uses to leave out the configurations that a simulated
 * one already beats in both (branch and bound).
 *
 * Time. Every schedule wattlas runs starts stage i with micro-batch 0's
 * forward of chunk 0, which needs that forward on stages 0..i-1 and their
 * sends first (head_i), and then keeps stage i busy for all of its tasks
 * and the sends that block it (busy_i): stage i is free no earlier than
 * head_i + busy_i. Without a split weight-gradient pass (1F1B, interleaved,
 * GPipe) every stage's last task is micro-batch m-1's backward of chunk 0
 * (pipeline.c's orders), which stages i-1..0 then run in turn, each after
 * the one above has sent it: stage j <= i is free no earlier than that plus
 * the backward chunks between. An iteration ends when the slowest stage
 * has also synchronised its gradients (what its last micro-batch's backward
 * does not hide) and stepped its optimizer, so
 *     T >= max over j <= i of  head_i + busy_i + sum_{k=j}^{i-1} (b_k + send)
 *                              + dp_j + opt_j.
 * zb-h1's weight-gradient passes may follow the last backward: stage i
 * runs one before its next task whenever more than i wait, so at most
 * i + 1 of them (w_i each) come after it, and stage j still runs its own
 * last one after it: the chain starts w (i + 1) earlier and each stage
 * below adds its w_j.
 * With equal stages and 1F1B this is (p - 1)(f + b) + m (f + b), the
 * schedule's own time: the bound is tight where the pipeline is regular.
 *
 * Energy. One GPU of stage i draws its tasks' energies and, in every gap of
 * the timeline, the idle power of the clock it last ran (cluster.c's
 * run_at), so its energy over T is at least its tasks' plus idle(f) over T
 * less their durations; the network and the rest of the nodes draw their
 * power for T. All of that grows with T, so T's bound gives the energy's.
 *
 * The board power limit only lowers clocks, so the time bound holds under
 * it; a throttled stage may spend less energy, though. A stage's average
 * power at clock f, whatever the others run at, is at most
 *     P(f) = idle(f) + (its tasks' energy - idle(f) x their time) / T_lb
 * (its gaps draw idle(f), and the run is no shorter than T_lb). When
 * P(top) is within its cap the stage is not throttled. Otherwise the clock
 * the limit leaves it (wl_cluster_run's bracket: every clock it rejected
 * was over the cap, so over P's too) is no lower than the highest clock
 * f_cap whose P meets the cap, as P rises with the clock (dynamic power
 * V^2 f, idle power rising); the stage's energy is then at least the
 * least of its bound at the grid's clocks from f_cap to the top (at f the
 * run is also no shorter than the stage's own busy time there, which P's
 * denominator takes when longer). *e_valid is 0 only where that scan
 * reaches the lowest clock without meeting it. */
#include "cluster_internal.h"

#include <math.h>

/* Stage i's terms with every GPU at f (chunk costs already at f): its
 * tasks' time (work, with the gradient sync's exposed part and the
 * optimizer) and energy, and its busy time (tasks and the sends that
 * block it) and exposed sync, optimizer time. */
typedef struct {
    double work, ework, busy, dpx, opt_t;
} stage_terms;

static int terms(wl_cluster *c, int i, double f, stage_terms *o)
{
    int p = c->p, v = c->v, V = p * v, split = wl_cluster_schedule_splits_w(c->cfg.schedule);
    double m = (double)c->m, send = p > 1 ? c->send_s : 0;
    double work = 0, ework = 0, sends = 0, window = 0, fwin = 0;
    for (int ch = 0; ch < v; ch++) {
        size_t k = (size_t)i * (size_t)v + (size_t)ch;
        int vs = ch * p + i;
        double w = split ? c->w_s[k] : 0;
        work += m * (c->f_s[k] + c->b_s[k] + w);
        ework += m * (c->fe[k] + c->be[k] + (split ? c->we[k] : 0));
        sends += m * ((vs < V - 1 ? send : 0) + (vs > 0 ? send : 0));
        window += c->b_s[k] + w;
        fwin += c->f_s[k];
    }
    /* as wl_cluster_run: the sync behind the last micro-batch's backward,
     * ZeRO-1's all-gather behind the first forwards */
    double t_dp, tied, t_ag, opt_t, opt_e;
    wl_cluster_stage_sync(c, i, &t_dp, &tied, &t_ag);
    double win = c->cfg.no_dp_overlap ? 0 : window;
    double dpx = (t_dp - win > 0 ? t_dp - win : 0) + tied;
    dpx += fmax(0, t_ag - (c->cfg.no_dp_overlap ? 0 : fwin));
    /* stages with the same parameters share one optimizer (opt_of); its
     * step at f is kept in the run's scratch (f_prev, t_prev, e_stage)
     * under the first such stage */
    int oi = c->opt_of[i];
    if (c->f_prev[oi] == f) {
        opt_t = c->t_prev[oi];
        opt_e = c->e_stage[oi];
    } else if (wl_cluster_stage_optimizer(c, i, f, &opt_t, &opt_e)) {
        return WL_EINVAL;
    } else {
        c->f_prev[oi] = f;
        c->t_prev[oi] = opt_t;
        c->e_stage[oi] = opt_e;
    }
    double idle = wl_core_gpu_idle_w(&c->gpu, f);
    *o = (stage_terms){.work = work + dpx + opt_t, .ework = ework + dpx * idle + opt_e,
                       .busy = work + sends, .dpx = dpx, .opt_t = opt_t};
    return WL_OK;
}

int wl_cluster_bound(wl_cluster *c, double clock_mhz, double *t_lb, double *e_lb, int *e_valid)
{
    *t_lb = 0;
    *e_lb = 0;
    *e_valid = 0;
    const wl_core_gpu *g = &c->gpu;
    if (c->cfg.mode != WL_MODE_TRAIN || !wl_core_gpu_clock_in_range(g, clock_mhz))
        return WL_EINVAL;
    int p = c->p, v = c->v, split = wl_cluster_schedule_splits_w(c->cfg.schedule);
    double m = (double)c->m, send = p > 1 ? c->send_s : 0;
    double T = 0, head = 0;
    for (int i = 0; i < p; i++)
        c->f_prev[i] = -1; /* no optimizer step kept (terms) */
    /* scratch (wl_cluster_run's, unused between runs): per stage its
     * free time's bound (thr_lo), tasks' time (thr_hi) and energy (thr_plo)
     * at the clock, then the least energy bound found (thr_phi) */
    for (int i = 0; i < p; i++) {
        stage_terms st;
        if (wl_cluster_chunk_costs(c, i, clock_mhz, clock_mhz) || terms(c, i, clock_mhz, &st))
            return WL_EINVAL;
        c->dp_exp[i] = st.dpx;
        c->opt_t[i] = st.opt_t;
        c->thr_lo[i] = head + st.busy;
        c->thr_hi[i] = st.work;
        c->thr_plo[i] = st.ework;
        head += c->f_s[(size_t)i * (size_t)v] + send;
    }
    for (int i = 0; i < p; i++) {
        T = fmax(T, c->thr_lo[i] + c->dp_exp[i] + c->opt_t[i]);
        /* when micro-batch m-1's backward of chunk 0 has left stage i: at
         * the end of its work, less what may follow that backward there
         * (zb-h1: the weight-gradient passes it holds back, at most i + 1,
         * since it runs one first whenever more than i wait) */
        double held = split ? fmin(i + 1, m) * c->w_s[(size_t)i * (size_t)v] : 0;
        double x = c->thr_lo[i] - held;
        for (int j = i - 1; j >= 0; j--) {
            size_t k = (size_t)j * (size_t)v;
            double out = x + c->b_s[k] + (j > 0 ? send : 0);
            /* stage j is free after that backward, its send and (zb-h1)
             * at least its own weight gradient */
            T = fmax(T, out + (split ? c->w_s[k] : 0) + c->dp_exp[j] + c->opt_t[j]);
            x = out;
        }
    }
    *t_lb = T;
    /* energy: each stage at the top clock unless its power bound there
     * exceeds its cap; those scanned down the grid (open) */
    int open = 0;
    double idle = wl_core_gpu_idle_w(g, clock_mhz);
    for (int i = 0; i < p; i++) {
        double gap = T - c->thr_hi[i];
        c->thr_phi[i] = c->thr_plo[i] + idle * (gap > 0 ? gap : 0);
        double cap = c->stage_cap[i] * g->coef.power_cap_frac;
        double over = c->thr_plo[i] - idle * c->thr_hi[i];
        c->thr_ok[i] = !(cap > 0 && T > 0 && idle + (over > 0 ? over : 0) / T > cap);
        open += !c->thr_ok[i];
    }
    double step = g->sm_clock_step_mhz, fmin_ = wl_core_gpu_floor_mhz(g);
    for (int n = 1; open > 0; n++) {
        /* the grid's clocks below the top: wl_cluster_run's bracket */
        double f = fmin_ + step * floor((clock_mhz - fmin_) / step - n + 0.5);
        if (f < fmin_ - 1e-9)
            return WL_OK; /* a stage over its cap at every clock: no energy bound */
        double idle_f = wl_core_gpu_idle_w(g, f);
        for (int i = 0; i < p; i++) {
            if (c->thr_ok[i])
                continue;
            stage_terms st;
            if (wl_cluster_chunk_costs(c, i, f, f) || terms(c, i, f, &st))
                return WL_EINVAL;
            double gap = T - st.work;
            c->thr_phi[i] = fmin(c->thr_phi[i], st.ework + idle_f * (gap > 0 ? gap : 0));
            double cap = c->stage_cap[i] * g->coef.power_cap_frac;
            double over = st.ework - idle_f * st.work;
            /* at f the run lasts at least this stage's own busy time too:
             * below the V-f knee a stage's dynamic energy no longer falls
             * with the clock, and over the top clock's T alone its power
             * bound would stay over the cap at every clock */
            double Tf = fmax(T, st.busy);
            if (idle_f + (over > 0 ? over : 0) / Tf <= cap) {
                c->thr_ok[i] = 1;
                open--;
            }
        }
    }
    double e_gpu = 0;
    for (int i = 0; i < p; i++)
        e_gpu += c->thr_phi[i] * c->cfg.tp * c->dpc;
    double nics = (double)c->nodes * c->sys.nics_per_node;
    long long sw = c->nodes > 1 ? wl_cluster_fat_tree_switches((long long)nics, c->sys.switch_ports) : 0;
    double net_w = c->nodes > 1 ? nics * c->sys.nic_w + (double)sw * c->sys.switch_w : 0;
    *e_lb = e_gpu + T * (net_w + c->nodes * c->sys.node_other_w);
    *e_valid = 1;
    return WL_OK;
}
