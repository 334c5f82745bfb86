/* Partitions: the layers split over the pipeline stages (uniform, as
 * Megatron-LM; balanced by the busiest GPU's work; by parameters; a list),
 * and the refinement of a split by moving layers between stages. */
#include "cluster_internal.h"
#include "../results/wattlas_results.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What balanced minimises, from a run with every GPU at the top clock and
 * the power limit applied: the busiest GPU's pipeline work (its chunks:
 * the water-filling's load), then the iteration's time. */
typedef struct {
    double busiest_s, time_s;
} split_score;

static int score_split(wl_cluster *c, split_score *sc, double *load, wl_error *err)
{
    wl_cluster_result r;
    int rc = wl_cluster_stage_optimizers(c);
    if (rc) {
        wl_error_set(err, "cluster", 0, "", "out of memory");
        return rc;
    }
    if ((rc = wl_cluster_run(c, c->gpu.sm_clock_max_mhz, NULL, &r, err)))
        return rc;
    sc->busiest_s = 0;
    sc->time_s = r.time_s;
    for (int i = 0; i < c->p; i++) {
        load[i] = wl_cluster_sim_stage(c->sim, i)->busy_s;
        sc->busiest_s = fmax(sc->busiest_s, load[i]);
    }
    return WL_OK;
}

static int split_better(const split_score *a, const split_score *b)
{
    double tol = 1e-9 * b->busiest_s;
    return a->busiest_s < b->busiest_s - tol ||
           (a->busiest_s <= b->busiest_s + tol && a->time_s < b->time_s * (1 - 1e-12));
}

/* The i-th least loaded GPU other than `not` (-1: none). */
static int nth_least(const double *load, int p, int not, int nth)
{
    for (int i = 0; i < p; i++) {
        if (i == not)
            continue;
        int below = 0; /* GPUs before i in (load, index) order */
        for (int j = 0; j < p; j++)
            if (j != not && j != i && (load[j] < load[i] || (load[j] == load[i] && j < i)))
                below++;
        if (below == nth)
            return i;
    }
    return -1;
}

/* balanced, after the water-filling: the power limit slows each GPU by
 * its own average power, which per-layer costs at the top clock cannot
 * see, so a split the limit throttles is refined on simulated runs (one
 * it does not is optimal already: the simulation's busy time is the
 * water-filled load). Uniform (when the layers divide) is a start too, and
 * the better start is kept; then a layer moves from the busiest GPU's
 * largest chunk to the smallest chunk of one of the three least busy GPUs
 * while that lowers the score. */
int wl_cluster_refine_split(wl_cluster *c, wl_error *err)
{
    if (c->cfg.partition != WL_CLUSTER_PART_BALANCED || c->p == 1)
        return WL_OK;
    int V = c->p * c->v, L = c->model.layers, p = c->p, rc;
    int *keep = malloc(sizeof(int) * (size_t)V);
    double *load = malloc(sizeof(double) * 2 * (size_t)p), *best_load = load + p;
    split_score best, sc;
    if (!keep || !load) {
        wl_error_set(err, "cluster", 0, "", "out of memory");
        rc = WL_ENOMEM;
        goto done;
    }
    memcpy(keep, c->lay, sizeof(int) * (size_t)V);
    if ((rc = score_split(c, &best, best_load, err)))
        goto done;
    int throttled = 0;
    for (int i = 0; i < 2 * p; i++)
        throttled |= c->stage_clock[i] < c->gpu.sm_clock_max_mhz;
    if (!throttled)
        goto done;
    if (L % V == 0) {
        for (int k = 0; k < V; k++)
            c->lay[k] = L / V;
        if ((rc = score_split(c, &sc, load, err)))
            goto done;
        if (split_better(&sc, &best)) {
            best = sc;
            memcpy(best_load, load, sizeof(double) * (size_t)p);
            memcpy(keep, c->lay, sizeof(int) * (size_t)V);
        }
        memcpy(c->lay, keep, sizeof(int) * (size_t)V);
    }
    for (int iter = 0, moved = 1; iter < 4 * V && moved; iter++) {
        moved = 0;
        int hi = 0;
        for (int i = 1; i < p; i++)
            if (best_load[i] > best_load[hi])
                hi = i;
        /* the busiest GPU's largest chunk gives a layer */
        int kh = -1;
        for (int ch = 0; ch < c->v; ch++) {
            int k = ch * p + hi;
            if (c->lay[k] > 1 && (kh < 0 || c->lay[k] > c->lay[kh]))
                kh = k;
        }
        for (int tries = 0; kh >= 0 && tries < 3 && !moved; tries++) {
            int lo = nth_least(best_load, p, hi, tries);
            if (lo < 0)
                break;
            int kl = lo;
            for (int ch = 1; ch < c->v; ch++)
                if (c->lay[ch * p + lo] < c->lay[kl])
                    kl = ch * p + lo;
            c->lay[kh]--;
            c->lay[kl]++;
            if ((rc = score_split(c, &sc, load, err)))
                goto done;
            if (split_better(&sc, &best)) {
                best = sc;
                memcpy(best_load, load, sizeof(double) * (size_t)p);
                moved = 1;
            } else {
                c->lay[kh]++;
                c->lay[kl]--;
            }
        }
    }
done:
    free(keep);
    free(load);
    if (!rc && (rc = wl_cluster_stage_optimizers(c)))
        wl_error_set(err, "cluster", 0, "", "out of memory");
    return rc;
}

/* Layers per virtual stage (c->lay). Uniform and listed splits are as
 * given. balanced and parameters fill layers one at a time into the GPU
 * whose load is least (within it, its least-loaded chunk), starting from one
 * layer per chunk beside the fixed loads of the embedding (first chunk) and
 * the head (last): for loads that grow by the same amount per layer this
 * water-filling minimises the largest GPU load over every split with at
 * least a layer per chunk, Megatron's uniform split among them, so balanced
 * is never slower than uniform. The loads: balanced, the pipeline work per
 * micro-batch at the GPU's top clock (a forward, backward and weight
 * gradients in training; the prompt and gen - 1 steps in decode) as the
 * simulation costs it, embedding, head and loss included; parameters
 * (DeepSpeed's partition_method), parameter counts, the embedding table on
 * the first stage and its tied copy on the last. The optimizer step, a few
 * percent of an iteration, is left out of the balance. */
int wl_cluster_partition_layers(wl_cluster *c, wl_error *err)
{
    const wl_cluster_config *g = &c->cfg;
    int V = c->p * c->v, L = c->model.layers;
    if (g->partition == WL_CLUSTER_PART_UNIFORM) {
        for (int k = 0; k < V; k++)
            c->lay[k] = L / V;
        return WL_OK;
    }
    if (g->partition == WL_CLUSTER_PART_LIST) {
        /* pp counts with vp 1, or pp x vp: config_check has seen to it */
        for (int k = 0; k < V; k++)
            c->lay[k] = g->stage_layers[k];
        return WL_OK;
    }
    double ell, first, last;
    if (g->partition == WL_CLUSTER_PART_PARAMETERS) {
        ell = wl_cluster_layer_params(&c->model, g->tp);
        wl_cluster_embedding_params(c, &first, &last);
    } else {
        int train = g->mode == WL_MODE_TRAIN, split = wl_cluster_schedule_splits_w(g->schedule);
        double f = c->gpu.sm_clock_max_mhz, steps = c->decode ? (double)g->gen - 1 : 0;
        double t[PC_COUNT] = {0}, t2[PC_COUNT] = {0};
        static const int ids[] = {PC_LAYER_F, PC_LAYER_B, PC_LAYER_W, PC_EMB_F, PC_EMB_B,
                                  PC_HEAD_F,  PC_HEAD_B,  PC_WIN_HEAD};
        for (size_t k = 0; k < sizeof ids / sizeof *ids; k++) {
            int id = ids[k];
            cost a = {0}, a2 = {0};
            if (id == PC_WIN_HEAD && !split)
                continue; /* only a window then */
            if (wl_cluster_piece_cost(c->pc, &c->gpu, id, f, 1, &a) ||
                (c->decode && wl_cluster_piece_cost(c->pc2, &c->gpu, id, f, 1, &a2))) {
                wl_error_set(err, "cluster", 0, "partition", "cannot evaluate the layers' kernels");
                return WL_EINVAL;
            }
            t[id] = a.t;
            t2[id] = a2.t;
        }
        /* a MoE model's layers as its MoE layers (the dense few, DeepSeek-
         * V3's first three, are weighed alike) */
        int lf = PC_LAYER_F, lb_ = PC_LAYER_B, lw = PC_LAYER_W;
        if (wl_core_model_is_moe(&c->model)) {
            cost a = {0}, a2 = {0};
            static const int moe_ids[] = {PC_MOE_F, PC_MOE_B, PC_MOE_W};
            for (int k = 0; k < 3; k++) {
                if (wl_cluster_piece_cost(c->pc, &c->gpu, moe_ids[k], f, 1, &a) ||
                    (c->decode && wl_cluster_piece_cost(c->pc2, &c->gpu, moe_ids[k], f, 1, &a2))) {
                    wl_error_set(err, "cluster", 0, "partition", "cannot evaluate the layers' kernels");
                    return WL_EINVAL;
                }
                t[moe_ids[k]] = a.t;
                t2[moe_ids[k]] = a2.t;
            }
            lf = PC_MOE_F, lb_ = PC_MOE_B, lw = PC_MOE_W;
        }
        ell = t[lf] + steps * t2[lf] + (train ? t[lb_] + t[lw] : 0);
        first = t[PC_EMB_F] + steps * t2[PC_EMB_F] + (train ? t[PC_EMB_B] : 0);
        last = t[PC_HEAD_F] + steps * t2[PC_HEAD_F] + (train ? t[PC_HEAD_B] + t[PC_WIN_HEAD] : 0);
    }
    /* the GPUs' loads in c->params, scratch until wl_cluster_stage_params */
    double *gl = c->params;
    for (int i = 0; i < c->p; i++)
        gl[i] = 0;
    for (int k = 0; k < V; k++) {
        c->lay[k] = 1;
        gl[k % c->p] += ell + (k == 0 ? first : 0) + (k == V - 1 ? last : 0);
    }
    for (int left = L - V; left > 0; left--) {
        int gi = 0;
        for (int i = 1; i < c->p; i++)
            if (gl[i] < gl[gi])
                gi = i;
        /* the GPU's chunk with the least load */
        int best = gi;
        double bl = INFINITY;
        for (int ch = 0; ch < c->v; ch++) {
            int k = ch * c->p + gi;
            double l = c->lay[k] * ell + (k == 0 ? first : 0) + (k == V - 1 ? last : 0);
            if (l < bl) {
                bl = l;
                best = k;
            }
        }
        c->lay[best]++;
        gl[gi] += ell;
    }
    return WL_OK;
}
