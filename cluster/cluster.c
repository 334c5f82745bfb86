/* One parallel configuration on a system: created (its layers' pieces, the
 * split: partition.c), then run: the simulated timeline of every chunk at
 * the pieces' costs (stage.c), the gradient synchronisation and the
 * optimizer, and the energy of every GPU over the timeline plus the network
 * and the nodes. */
#include "cluster_internal.h"
#include "../results/wattlas_results.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void wl_cluster_free(wl_cluster *c)
{
    if (!c)
        return;
    if (c->piece_entry)
        wl_cluster_piece_cache_put(c->piece_entry);
    else {
        wl_cluster_free_pieces(c->pc);
        wl_cluster_free_pieces(c->pc2);
    }
    for (int i = 0; c->opt_ev && i < c->p; i++) {
        wl_core_evaluator_free(c->opt_ev[i]);
        wl_core_workload_free(c->opt_wl[i]);
    }
    free(c->opt_ev);
    free(c->opt_wl);
    free(c->opt_of);
    free(c->params);
    free(c->eparams);
    free(c->tparams);
    free(c->lay_moe);
    free(c->lay);
    wl_cluster_sim_free(c->sim);
    free(c->f_s);
    free(c->stage_clock);
    free(c->peak);
    free(c);
}

int wl_cluster_stages(const wl_cluster *c)
{
    return c->p;
}

int wl_cluster_create(const wl_cluster_system *sys, const wl_core_gpu *gpu,
                      const wl_core_model *model, const wl_cluster_config *cfg, wl_cluster **out,
                      wl_error *err)
{
    return wl_cluster_create_cached(sys, gpu, model, cfg, NULL, out, err);
}

int wl_cluster_create_cached(const wl_cluster_system *sys, const wl_core_gpu *gpu,
                             const wl_core_model *model, const wl_cluster_config *cfg,
                             wl_cluster_piece_cache *cache, wl_cluster **out, wl_error *err)
{
    *out = NULL;
    int rc = wl_cluster_system_check(sys, err);
    if (rc)
        return rc;
    int gpus = sys->nodes * sys->gpus_per_node;
    if ((rc = wl_cluster_config_check(cfg, model, gpus, err)))
        return rc;
    wl_cluster *c = calloc(1, sizeof *c);
    if (!c)
        goto oom;
    c->sys = *sys;
    c->gpu = *gpu;
    if (cfg->dtype == WL_DT_FP8 && !(gpu->tc_flop_per_clk_sm[WL_DT_FP8] > 0)) {
        wl_error_set(err, "cluster", 0, "dtype", "%s has no fp8 tensor cores (Hopper and later do)",
                     gpu->id);
        rc = WL_EINVAL;
        goto fail;
    }
    c->model = *model;
    c->cfg = *cfg;
    if (!c->cfg.schedule)
        c->cfg.schedule = cfg->vp > 1 ? wl_cluster_interleaved : wl_cluster_1f1b;
    c->p = cfg->pp;
    c->v = cfg->vp;
    c->m = (int)(cfg->global_batch / (cfg->micro_batch * cfg->dp));
    c->gpus = gpus;
    c->nodes = sys->nodes;
    c->vocab = wl_cluster_padded_vocab(model, cfg->tp);
    /* Megatron's rank order: tensor-parallel ranks adjacent, then data,
     * then pipeline */
    wl_cluster_group_of(sys, cfg->tp, 1, &c->tp_g);
    /* Megatron-Core's order tp-cp-dp-pp: the context-parallel ranks of a
     * sequence next to the tensor-parallel ones; the gradients and the
     * distributed optimizer span data x context parallel ranks */
    c->cp = cfg->cp > 0 ? cfg->cp : 1;
    c->dpc = cfg->dp * c->cp;
    wl_cluster_group_of(sys, c->cp, cfg->tp, &c->cp_g);
    wl_cluster_group_of(sys, c->dpc, cfg->tp, &c->dp_g);
    wl_cluster_group_of(sys, 2, cfg->tp * c->dpc, &c->pp_g);
    /* Megatron-Core's expert ranks: ep consecutive data-parallel ranks
     * (stride tp), their replicas the rest of the data-parallel group */
    c->ep = cfg->ep > 0 ? cfg->ep : 1;
    wl_cluster_group_of(sys, c->ep, cfg->tp * c->cp, &c->ep_g);
    wl_cluster_group_of(sys, c->dpc / c->ep, cfg->tp * c->ep, &c->edp_g);
    c->ncomms = (cfg->tp > 1) + (cfg->dp > 1) + (cfg->pp > 1) + (c->ep > 1) + (c->cp > 1);
    c->decode = cfg->mode == WL_MODE_DECODE;
    c->rounds = c->decode ? (int)cfg->gen : 1;
    /* a generation: the prompt's pass (prefill pieces), then a step per
     * token at the mean context (attention is linear in it) */
    c->kv_len = cfg->seq + cfg->gen / 2;
    wl_cluster_config prompt = c->cfg;
    if (c->decode)
        prompt.mode = WL_MODE_PREFILL;
    /* A serving engine (decode with CUDA graphs) batches continuously, as
     * predict's generation does (builder.c): in steady state (Little's
     * law) micro_batch / gen requests finish and arrive per step, the
     * first round is one arriving request's prompt (time to first token)
     * and the micro-batch's other prompts are prefilled in chunks inside
     * the gen - 1 steps. */
    c->serve = c->decode && cfg->launch == WL_LAUNCH_GRAPHS;
    long long chunk = 0;
    if (c->serve) {
        prompt.micro_batch = 1;
        if (cfg->gen > 1)
            chunk = llround((double)(cfg->micro_batch - 1) * (double)cfg->seq / (double)(cfg->gen - 1));
    }
    cl_build b = {.gpu = gpu, .m = model, .cfg = &prompt, .tp = c->tp_g, .vocab = c->vocab,
                  .split_w = wl_cluster_schedule_splits_w(c->cfg.schedule) &&
                             cfg->mode == WL_MODE_TRAIN,
                  .ep = c->ep_g,
                  .cp = c->cp_g};
    cl_build b2 = b;
    b2.cfg = &c->cfg;
    b2.kv_len = c->kv_len;
    b2.chunk = chunk;
    if (cache) {
        if ((rc = wl_cluster_piece_cache_get(cache, sys, &b, c->decode ? &b2 : NULL, c->pc, c->pc2,
                                             &c->piece_entry, err)))
            goto fail;
    } else if ((rc = wl_cluster_build_pieces(&b, c->pc, err)) ||
               (c->decode && (rc = wl_cluster_build_pieces(&b2, c->pc2, err)))) {
        goto fail;
    }
    c->lay = calloc((size_t)c->p * (size_t)c->v, sizeof *c->lay);
    c->params = calloc((size_t)c->p, sizeof *c->params);
    c->eparams = calloc((size_t)c->p, sizeof *c->eparams);
    c->tparams = calloc((size_t)c->p, sizeof *c->tparams);
    c->lay_moe = calloc((size_t)c->p * (size_t)c->v, sizeof *c->lay_moe);
    c->opt_wl = calloc((size_t)c->p, sizeof *c->opt_wl);
    c->opt_ev = calloc((size_t)c->p, sizeof *c->opt_ev);
    c->opt_of = calloc((size_t)c->p, sizeof *c->opt_of);
    if (!c->lay || !c->params || !c->eparams || !c->tparams || !c->lay_moe || !c->opt_wl || !c->opt_ev || !c->opt_of)
        goto oom;
    /* the activation a stage sends: T x d; with tensor parallelism each
     * rank sends its 1/t and the receiver all-gathers (Megatron's
     * scatter-gather optimisation), sequence parallel activations are split
     * already */
    double S = (double)cfg->micro_batch * (double)cfg->seq * model->d_model *
               wl_dtype_bytes(wl_cluster_act_dtype(cfg->dtype));
    S /= c->cp; /* a context-parallel rank's share of the sequence */
    c->send_s = wl_cluster_coll_time(&c->pp_g, WL_COLL_SEND, S / cfg->tp);
    if (cfg->tp > 1 && !cfg->sequence_parallel)
        c->send_s += wl_cluster_coll_time(&c->tp_g, WL_COLL_ALL_GATHER, S);
    c->act_layer_b = wl_cluster_layer_act_bytes(model, cfg);
    c->act_peak_b = cfg->recompute == WL_RECOMPUTE_FULL ? wl_cluster_layer_act_peak_bytes(model, cfg) : 0;
    size_t pv = (size_t)c->p * (size_t)c->v;
    c->f_s = calloc(pv * 10 + (size_t)c->p * 11, sizeof(double));
    c->stage_clock = calloc((size_t)c->p * 12, sizeof(double));
    c->peak = calloc((size_t)c->p * 2, sizeof(int));
    c->sim = wl_cluster_sim_create();
    if (!c->f_s || !c->stage_clock || !c->peak || !c->sim)
        goto oom;
    c->req = c->stage_clock + 2 * c->p;
    c->cur = c->req + 2 * c->p;
    c->thr_lo = c->cur + 2 * c->p;
    c->thr_hi = c->thr_lo + c->p;
    c->stage_try = c->thr_hi + c->p;
    c->stage_cap = c->stage_try + c->p;
    c->thr_plo = c->stage_cap + c->p;
    c->thr_phi = c->thr_plo + c->p;
    for (int i = 0; i < c->p; i++)
        c->stage_cap[i] = gpu->power_limit_w;
    c->thr_ok = c->peak + c->p;
    c->b_s = c->f_s + pv;
    c->w_s = c->b_s + pv;
    c->fe = c->w_s + pv;
    c->be = c->fe + pv;
    c->we = c->be + pv;
    c->coll_s = c->we + pv;
    c->f2_s = c->coll_s + pv;
    c->fe2 = c->f2_s + pv;
    c->coll2_s = c->fe2 + pv;
    double *q = c->coll2_s + pv;
    double **per_stage[] = {&c->sends, &c->window, &c->dp_exp, &c->opt_t, &c->opt_e,
                            &c->e_stage, &c->t_prev, &c->f_prev, &c->tpc};
    for (size_t k = 0; k < sizeof per_stage / sizeof *per_stage; k++, q += c->p)
        *per_stage[k] = q;
    if ((rc = wl_cluster_partition_layers(c, err)))
        goto fail;
    if (wl_cluster_stage_optimizers(c))
        goto oom;
    *out = c;
    return WL_OK;
oom:
    wl_error_set(err, "cluster", 0, "", "out of memory");
    rc = WL_ENOMEM;
fail:
    wl_cluster_free(c);
    return rc;
}

static double model_flop(const wl_cluster *c)
{
    /* 6 N per token for the matmul parameters (the LM head once) plus
     * 12 layers d s for attention's score and value products (PaLM,
     * Chowdhery et al. 2022, app. B; the form of Narayanan et al. SC'21,
     * 72 B s l h^2 (1 + s/6h + V/12hl)); a forward pass a third */
    const wl_core_model *m = &c->model;
    double tokens = (double)c->cfg.global_batch * (double)c->cfg.seq;
    double d = m->d_model, H = m->heads;
    /* biases and norms are not matmul parameters */
    double kvh = m->kv_heads > 0 ? m->kv_heads : m->heads, hd = d / H, ad = d;
    double attn = d * (H * hd + 2 * kvh * hd) + H * hd * d;
    if (wl_core_model_is_mla(m)) {
        double qk = m->qk_nope_head_dim + m->qk_rope_head_dim, qr = m->q_lora_rank;
        double kvr = m->kv_lora_rank;
        attn = (qr > 0 ? d * qr + qr * H * qk : d * H * qk) + d * (kvr + m->qk_rope_head_dim) +
               kvr * H * (m->qk_nope_head_dim + m->v_head_dim) + H * m->v_head_dim * d;
        ad = H * (qk + m->v_head_dim) / 2; /* the score and value products' width */
    }
    double sw = m->activation == WL_ACT_SWIGLU ? 3.0 : 2.0;
    double N = m->layers * (attn + sw * d * m->d_ff) + (double)c->vocab * d;
    if (wl_core_model_is_moe(m)) {
        /* the parameters a token meets: its top-k and the shared experts,
         * and the router */
        double fe = m->d_ff_expert > 0 ? m->d_ff_expert : m->d_ff;
        double moe = attn + d * m->experts + (m->experts_per_token + m->shared_experts) * sw * d * fe;
        N = m->dense_layers * (attn + sw * d * m->d_ff) + (m->layers - m->dense_layers) * moe +
            (double)c->vocab * d;
    }
    double f = (6.0 * N + 12.0 * m->layers * ad * (double)c->cfg.seq) * tokens;
    /* LoRA (core/builder.c's rule): the forward and the input gradients of
     * the base, 4 N + 12 L d s, and the adapters' 6 N_lora (unsharded) */
    wl_cluster_config one = c->cfg;
    one.tp = 1;
    double na = m->layers * wl_cluster_lora_layer_params(m, &one);
    if (na > 0 && c->cfg.mode == WL_MODE_TRAIN)
        return (4.0 * N + 6.0 * na + 12.0 * m->layers * ad * (double)c->cfg.seq) * tokens;
    if (c->decode) /* the prompt, then gen - 1 steps of a token at the mean context */
        return f / 3.0 + (2.0 * N + 4.0 * m->layers * ad * (double)c->kv_len) *
                             (double)c->cfg.global_batch * (double)(c->cfg.gen - 1);
    return c->cfg.mode == WL_MODE_TRAIN ? f : f / 3.0;
}

/* One simulation at the clocks of every stage and phase (clocks[2 p],
 * checked), without the power limit: wl_cluster_run applies it. */
static int run_at(wl_cluster *c, const double *clocks, wl_cluster_result *res, wl_error *err)
{
    memset(res, 0, sizeof *res);
    int p = c->p, train = c->cfg.mode == WL_MODE_TRAIN;
    for (int i = 0; i < p; i++) {
        double ff = clocks[2 * i], fb = clocks[2 * i + 1];
        c->stage_clock[2 * i] = ff;
        c->stage_clock[2 * i + 1] = fb;
        if (wl_cluster_chunk_costs(c, i, ff, fb)) {
            wl_error_set(err, "cluster", 0, "", "cannot evaluate stage %d's kernels", i);
            return WL_EINVAL;
        }
    }
    for (int i = 0; i < p; i++)
        c->sends[i] = c->send_s; /* the same link size everywhere */
    /* a generation's tokens: the sampled ids of a micro-batch, back to the
     * first stage */
    double ring = c->decode ? wl_cluster_coll_time(&c->pp_g, WL_COLL_SEND, 8.0 * (double)c->cfg.micro_batch)
                            : 0;
    /* a serving engine (CUDA graphs) schedules each micro-batch's next
     * step on the host before it starts: the host preset's serve_step_us +
     * serve_seq_us x its sequences (the core's engine step, builder.c) */
    double engine = c->decode && c->cfg.launch == WL_LAUNCH_GRAPHS
                        ? wl_core_coeffs_engine_step_us(&c->gpu.coef, (double)c->cfg.micro_batch) * 1e-6
                        : 0;
    wl_cluster_pipeline pl = {.schedule = c->cfg.schedule, .stages = p, .chunks = c->v,
                              .micro = c->m * c->rounds, .forward_only = !train, .f_s = c->f_s,
                              .b_s = c->b_s,
                              .w_s = wl_cluster_schedule_splits_w(c->cfg.schedule) ? c->w_s : NULL,
                              .send_s = c->sends, .round_micro = c->decode ? c->m : 0,
                              .f2_s = c->f2_s, .ring_send_s = ring, .round_host_s = engine};
    int rc = wl_cluster_sim_run(c->sim, &pl, err);
    if (rc)
        return rc;
    /* one pass over the tasks: their power and collectives, and per stage
     * the last micro-batch's backward, which hides the gradient sync */
    size_t nt = wl_cluster_sim_task_count(c->sim);
    memset(c->window, 0, sizeof(double) * (size_t)p);
    for (size_t k = 0; k < nt; k++) {
        wl_cluster_task *t = wl_cluster_sim_task(c->sim, k);
        size_t q = (size_t)t->stage * (size_t)c->v + (size_t)t->chunk;
        if (c->decode && t->micro >= c->m) { /* a decode step */
            t->power_w = t->dur_s > 0 ? c->fe2[q] / t->dur_s : 0;
            t->comm_s = c->coll2_s[q];
            continue;
        }
        double e = t->kind == 'F' ? c->fe[q] : t->kind == 'B' ? c->be[q] : c->we[q];
        t->power_w = t->dur_s > 0 ? e / t->dur_s : 0;
        /* the chunk's collectives apportioned over its F, B and W by duration */
        double tot = c->f_s[q] + (train ? c->b_s[q] + c->w_s[q] : 0);
        t->comm_s = tot > 0 ? c->coll_s[q] * t->dur_s / tot : 0;
        if (t->kind != 'F' && t->micro == c->m - 1)
            c->window[t->stage] += t->dur_s;
    }
    double end_max = 0;
    int crit = 0;
    for (int i = 0; i < p; i++) {
        double fb = c->stage_clock[2 * i + 1];
        double end = wl_cluster_sim_stage(c->sim, i)->end_s, dpx = 0;
        c->opt_t[i] = c->opt_e[i] = 0;
        if (train) {
            double t_dp, tied, t_ag, fwin = 0;
            wl_cluster_stage_sync(c, i, &t_dp, &tied, &t_ag);
            /* overlapped with the last micro-batch's backward chunks on
             * this stage (PyTorch DDP / Megatron --overlap-grad-reduce) */
            double window = c->cfg.no_dp_overlap ? 0 : c->window[i];
            dpx = (t_dp - window > 0 ? t_dp - window : 0) + tied;
            /* the distributed optimizer's all-gather of the updated
             * parameters, overlapped with the next iteration's first
             * micro-batch forward on this stage, which needs them first
             * (Megatron's --overlap-param-gather) */
            for (int ch = 0; ch < c->v && !c->cfg.no_dp_overlap; ch++)
                fwin += c->f_s[(size_t)i * (size_t)c->v + (size_t)ch];
            dpx += fmax(0, t_ag - fwin);
            if (wl_cluster_stage_optimizer(c, i, fb, &c->opt_t[i], &c->opt_e[i])) {
                wl_error_set(err, "cluster", 0, "", "cannot evaluate the optimizer");
                return WL_EINVAL;
            }
            wl_cluster_task d = {.stage = i, .micro = -1, .kind = 'D', .start_s = end, .dur_s = dpx,
                                 .comm_s = dpx, .power_w = wl_core_gpu_idle_w(&c->gpu, fb)};
            wl_cluster_task o = {.stage = i, .micro = -1, .kind = 'O', .start_s = end + dpx,
                                 .dur_s = c->opt_t[i],
                                 .power_w = c->opt_t[i] > 0 ? c->opt_e[i] / c->opt_t[i] : 0};
            if ((dpx > 0 && wl_cluster_sim_append(c->sim, &d)) || wl_cluster_sim_append(c->sim, &o)) {
                wl_error_set(err, "cluster", 0, "", "out of memory for the pipeline simulation");
                return WL_ENOMEM;
            }
            end += dpx + c->opt_t[i];
        }
        c->dp_exp[i] = dpx;
        if (end > end_max) {
            end_max = end;
            crit = i;
        }
    }
    double T = end_max;
    /* energy per stage, one pass: tasks, and the gaps before them at the
     * clock of the phase the GPU last ran (its forward clock at first) */
    for (int i = 0; i < p; i++) {
        c->e_stage[i] = c->t_prev[i] = c->tpc[i] = 0;
        c->f_prev[i] = c->stage_clock[2 * i];
    }
    nt = wl_cluster_sim_task_count(c->sim);
    for (size_t k = 0; k < nt; k++) {
        const wl_cluster_task *t = wl_cluster_sim_task(c->sim, k);
        int i = t->stage;
        double gap = t->start_s - c->t_prev[i];
        if (gap > 0)
            c->e_stage[i] += gap * wl_core_gpu_idle_w(&c->gpu, c->f_prev[i]);
        c->e_stage[i] += t->power_w * t->dur_s;
        if (t->kind == 'F' || t->kind == 'B' || t->kind == 'W')
            c->tpc[i] += t->comm_s;
        c->t_prev[i] = t->start_s + t->dur_s;
        /* decode steps run at the second phase's clock */
        c->f_prev[i] = c->stage_clock[2 * i + (t->kind != 'F' || (c->decode && t->micro >= c->m))];
    }
    double e_gpu = 0, tp_comm = 0, pp_comm = 0, dp_comm = 0, busy = 0, busy_max = 0;
    for (int i = 0; i < p; i++) {
        const wl_cluster_stage_stats *st = wl_cluster_sim_stage(c->sim, i);
        double e = c->e_stage[i];
        if (T > c->t_prev[i])
            e += (T - c->t_prev[i]) * wl_core_gpu_idle_w(&c->gpu, c->f_prev[i]);
        c->e_stage[i] = e; /* one GPU's, over the whole timeline */
        e_gpu += e * c->cfg.tp * c->dpc;
        tp_comm += c->tpc[i];
        pp_comm += st->send_s + st->recv_wait_s;
        dp_comm += c->dp_exp[i];
        busy += st->busy_s + c->opt_t[i];
        busy_max = fmax(busy_max, st->busy_s + c->opt_t[i]);
        c->peak[i] = st->peak_in_flight;
    }
    double nics = (double)c->nodes * c->sys.nics_per_node;
    long long sw = c->nodes > 1 ? wl_cluster_fat_tree_switches((long long)nics, c->sys.switch_ports) : 0;
    double e_net = c->nodes > 1 ? T * (nics * c->sys.nic_w + (double)sw * c->sys.switch_w) : 0;
    double e_node = T * c->nodes * c->sys.node_other_w;
    res->time_s = T;
    res->energy_gpu_j = e_gpu;
    res->energy_network_j = e_net;
    res->energy_node_j = e_node;
    res->energy_j = e_gpu + e_net + e_node;
    res->power_w = T > 0 ? res->energy_j / T : 0;
    res->model_tflop = model_flop(c) * 1e-12;
    res->tflops_per_gpu = T > 0 ? res->model_tflop / T / c->gpus : 0;
    /* MFU against the datasheet's dense peak (989 TFLOPS bf16 on an H100
     * SXM, stated at 1830 MHz), as Megatron-LM and the Llama 3 report count
     * it, not the 1980 MHz top clock's 1070; fp8 training's against the
     * bf16 peak, as the Llama 3 and DeepSeek-V3 reports count it */
    double peak = wl_core_gpu_datasheet_peak_flops(&c->gpu, wl_cluster_act_dtype(c->cfg.dtype));
    res->mfu = peak > 0 ? res->tflops_per_gpu * 1e12 / peak : 0;
    /* the all-to-alls: never hidden, so their sum over the MoE layers each
     * micro-batch passes (and each decode step) */
    double a2a = 0;
    for (int k = 0; k < p * c->v; k++)
        a2a += c->lay_moe[k] * ((double)c->m * (c->pc[PC_MOE_F].a2a_s + (train ? c->pc[PC_MOE_B].a2a_s : 0)) +
                                (c->decode ? (double)c->m * (c->rounds - 1) * c->pc2[PC_MOE_F].a2a_s : 0));
    res->ep_comm_exposed_s = a2a / p;
    tp_comm -= a2a;
    res->tp_comm_exposed_s = tp_comm / p;
    res->pp_comm_exposed_s = pp_comm / p;
    res->dp_comm_exposed_s = dp_comm / p;
    res->compute_s = (busy - tp_comm) / p;
    double idle = T - (busy + pp_comm + dp_comm) / p;
    res->bubble_s = idle > 0 ? idle : 0;
    res->tokens = (double)c->cfg.global_batch * (double)(c->decode ? c->cfg.gen : c->cfg.seq);
    if (c->decode) {
        /* the batch's first tokens: the prompt's pass out of the last stage */
        double first = 0, one = INFINITY;
        for (size_t k = 0; k < nt; k++) {
            const wl_cluster_task *t = wl_cluster_sim_task(c->sim, k);
            if (t->kind == 'F' && t->micro < c->m && t->stage == p - 1) {
                first = fmax(first, t->start_s + t->dur_s);
                one = fmin(one, t->start_s + t->dur_s);
            }
        }
        /* serving: one arriving request's prompt through the pipeline */
        res->ttft_s = c->serve ? one : first;
        res->tpot_s = c->cfg.gen > 1 ? (T - first) / (double)(c->cfg.gen - 1) : NAN;
    } else {
        res->ttft_s = res->tpot_s = NAN;
    }
    res->tokens_per_s = T > 0 ? res->tokens / T : 0;
    res->energy_per_token_j = res->tokens > 0 ? res->energy_j / res->tokens : 0;
    res->gpus = c->gpus;
    res->nodes = c->nodes;
    res->micro_batches = c->m;
    res->critical_stage = crit;
    res->imbalance_pct = busy > 0 ? (busy_max / (busy / p) - 1) * 100 : 0;
    res->memory_gb = wl_cluster_memory_gb(c);
    res->fits = c->gpu.mem_capacity_gb > 0 ? res->memory_gb <= c->gpu.mem_capacity_gb : 1;
    return WL_OK;
}

/* The board power limit, held on each GPU's average power over the
 * simulated timeline: a stage whose average exceeds the cap runs at the
 * highest clock (both phases, never above what was asked) whose average
 * meets it, found by bisection on the clock grid for all such stages at
 * once, the others' timelines following. Where the GPU's governor holds a
 * single kernel above the cap within a few hundred microseconds (Hopper,
 * power_tau_us 300; core/eval.c), the pieces are costed with it already
 * (wl_cluster_chunk_costs): a stage's long GEMMs slow while its memory-bound
 * kernels keep the clock, and the average then rarely exceeds the cap. */
int wl_cluster_run(wl_cluster *c, double clock_mhz, const double *clocks, wl_cluster_result *res,
                   wl_error *err)
{
    int p = c->p, rc;
    const wl_core_gpu *g = &c->gpu;
    /* a stop asked for (wl_stop_watch): every plan, frontier and search
     * runs the model through here, a few milliseconds a time */
    if (wl_stop_requested()) {
        wl_error_set(err, "cluster", 0, "", "stopped");
        return WL_ESTOPPED;
    }
    for (int i = 0; i < 2 * p; i++) {
        double f = clocks ? clocks[i] : clock_mhz;
        if (!wl_core_gpu_clock_in_range(g, f)) {
            wl_error_set(err, "cluster", 0, "clock", "%g MHz is outside %s's %g-%g MHz", f, g->id,
                         g->sm_clock_min_mhz, g->sm_clock_max_mhz);
            return WL_EINVAL;
        }
        c->req[i] = f;
    }
    if ((rc = run_at(c, c->req, res, err)))
        return rc;
    /* the governor may go below the lockable range (wl_core_gpu_floor_mhz) */
    double frac = g->coef.power_cap_frac, step = g->sm_clock_step_mhz, fmin_ = wl_core_gpu_floor_mhz(g);
    int over = 0;
    for (int i = 0; i < p; i++) {
        double cap = c->stage_cap[i] * frac;
        c->thr_lo[i] = fmin_;
        c->thr_hi[i] = fmax(c->req[2 * i], c->req[2 * i + 1]);
        c->thr_ok[i] = cap > 0 && res->time_s > 0 && c->e_stage[i] / res->time_s > cap ? 0 : 1;
        c->thr_phi[i] = res->time_s > 0 ? c->e_stage[i] / res->time_s : 0;
        /* not simulated at the minimum: idle power there, a floor */
        c->thr_plo[i] = wl_core_gpu_idle_w(g, fmin_);
        over |= !c->thr_ok[i];
    }
    if (!over)
        return WL_OK;
    /* per throttled stage, a bracket on the clock grid: thr_lo meets the
     * cap (or is the minimum), thr_hi does not. Each pass tries the clock
     * where the chord between the bracket's average powers meets the cap
     * (regula falsi; average power rises smoothly and convexly with the
     * clock, so the chord's crossing lands within a step or two of the
     * answer), a step inside the bracket, and every other pass the
     * bracket's middle, so the bracket at least halves every two passes.
     * All throttled stages move at once: their timelines are coupled. */
    for (int pass = 0; pass < 24; pass++) {
        int open = 0;
        for (int i = 0; i < p; i++) {
            double lo = c->thr_lo[i], hi = c->thr_hi[i], try_ = hi;
            if (!c->thr_ok[i] && hi - lo <= step + 1e-9) {
                try_ = lo;
            } else if (!c->thr_ok[i]) {
                double cap = c->stage_cap[i] * frac, plo = c->thr_plo[i], phi = c->thr_phi[i];
                double x = pass % 2 == 0 && phi > plo ? lo + (hi - lo) * (cap - plo) / (phi - plo)
                                                     : 0.5 * (lo + hi);
                x = fmin_ + step * floor((x - fmin_) / step + 0.5);
                try_ = fmin(fmax(x, lo + step), hi - step);
                open = 1;
            }
            c->stage_try[i] = try_;
            c->cur[2 * i] = fmin(c->req[2 * i], try_);
            c->cur[2 * i + 1] = fmin(c->req[2 * i + 1], try_);
        }
        if ((rc = run_at(c, c->cur, res, err)))
            return rc;
        if (!open)
            break;
        for (int i = 0; i < p; i++) {
            if (c->thr_ok[i] || c->thr_hi[i] - c->thr_lo[i] <= step + 1e-9)
                continue;
            double pw = c->e_stage[i] / res->time_s;
            if (pw > c->stage_cap[i] * frac) {
                c->thr_hi[i] = c->stage_try[i];
                c->thr_phi[i] = pw;
            } else {
                c->thr_lo[i] = c->stage_try[i];
                c->thr_plo[i] = pw;
            }
        }
    }
    /* The brackets closed one stage at a time while the others moved: a
     * stage's clock met its cap with the others slower than they end up,
     * the iteration then longer and its average lower. Settle: a stage
     * over its cap with the final clocks steps down the grid until every
     * stage meets its own (the fitted A100 PCIe 80GB's 150 W run ended
     * 0.7% over before). */
    for (int pass = 0; pass < 8 * p; pass++) {
        int moved = 0;
        for (int i = 0; i < p; i++) {
            double cap = c->stage_cap[i] * frac;
            if (c->thr_ok[i] || !(res->time_s > 0) || c->e_stage[i] / res->time_s <= cap ||
                c->stage_try[i] - step < fmin_ - 1e-9)
                continue;
            c->stage_try[i] -= step;
            c->cur[2 * i] = fmin(c->req[2 * i], c->stage_try[i]);
            c->cur[2 * i + 1] = fmin(c->req[2 * i + 1], c->stage_try[i]);
            moved = 1;
        }
        if (!moved)
            break;
        if ((rc = run_at(c, c->cur, res, err)))
            return rc;
    }
    return WL_OK;
}

int wl_cluster_set_stage_power_limits(wl_cluster *c, const double *limits_w, int n,
                                      wl_error *err)
{
    if (limits_w && n != c->p) {
        wl_error_set(err, "cluster", 0, "stage_power_limits",
                     "%d limits for %d pipeline stages: give one per stage", n, c->p);
        return WL_EINVAL;
    }
    for (int i = 0; limits_w && i < n; i++)
        if (!(limits_w[i] > 0) || !isfinite(limits_w[i]) || limits_w[i] > 1e5) {
            wl_error_set(err, "cluster", 0, "stage_power_limits",
                         "stage %d: expected a limit in (0, 100000] W", i);
            return WL_EINVAL;
        }
    for (int i = 0; limits_w && i < n; i++)
        if (limits_w[i] < c->gpu.power_limit_min_w) {
            wl_error_set(err, "cluster", 0, "stage_power_limits",
                         "stage %d: %g W is below %s's lowest limit, %g W", i, limits_w[i], c->gpu.id,
                         c->gpu.power_limit_min_w);
            return WL_EINVAL;
        }
    for (int i = 0; i < c->p; i++)
        c->stage_cap[i] = limits_w ? limits_w[i] : c->gpu.power_limit_w;
    return WL_OK;
}

wl_cluster_sim *wl_cluster_swap_sim(wl_cluster *c, wl_cluster_sim *sim)
{
    wl_cluster_sim *old = c->sim;
    c->sim = sim;
    return old;
}

double wl_cluster_memory_floor_gb(wl_cluster *c)
{
    int train = c->cfg.mode == WL_MODE_TRAIN && !c->decode;
    const wl_cluster_schedule_type *t = c->cfg.schedule ? c->cfg.schedule : wl_cluster_1f1b;
    double worst = 0;
    for (int i = 0; i < c->p; i++) {
        /* the schedule's own peak where it is fixed by the order (the
         * simulation finds the same), the least where it is not */
        if (train)
            c->peak[i] = wl_cluster_schedule_peak(t, c->p, c->v, c->m, i);
        wl_cluster_memory mm;
        wl_cluster_stage_memory(c, i, &mm);
        worst = fmax(worst, mm.total_gb);
    }
    return worst;
}

double wl_cluster_stage_clock(const wl_cluster *c, int stage, int phase)
{
    return stage >= 0 && stage < c->p && (phase == 0 || phase == 1) ? c->stage_clock[2 * stage + phase]
                                                                     : NAN;
}

const wl_cluster_stage_stats *wl_cluster_sim_stage_of(const wl_cluster *c, int stage)
{
    return wl_cluster_sim_stage(c->sim, stage);
}

size_t wl_cluster_task_count(const wl_cluster *c)
{
    return wl_cluster_sim_task_count(c->sim);
}

const wl_cluster_task *wl_cluster_task_at(const wl_cluster *c, size_t i)
{
    return wl_cluster_sim_task(c->sim, i);
}
