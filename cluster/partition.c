/* Partitions: the layers split over the pipeline stages (uniform, as
 * Megatron-LM; balanced by the busiest GPU's work; by parameters; a list)
 * when a cluster is created; refine.c refines a balanced split on
 * simulated runs. */
#include "cluster_internal.h"
#include "../results/wattlas_results.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
