/* A parallel configuration: its defaults, what the GPU count fills in, the
 * checks against the model and the system, and the partition names. */
#include "cluster_internal.h"
#include "../results/wattlas_results.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void wl_cluster_config_default(wl_cluster_config *c)
{
    memset(c, 0, sizeof *c);
    c->tp = c->pp = c->dp = c->vp = 1;
    c->global_batch = 0;
    c->micro_batch = 1;
    c->seq = 2048;
    c->gen = 128;
    c->dtype = WL_DT_BF16;
    c->attention = WL_ATTN_EAGER;
    c->mode = WL_MODE_TRAIN;
    c->recompute = WL_RECOMPUTE_NONE;
    c->ep = 1;
    c->cp = 1;
    c->capacity_factor = 1.0;
}

int wl_cluster_config_fill(wl_cluster_config *c, int gpus, wl_error *err)
{
    if (c->dp <= 0) {
        long long tpp = (long long)c->tp * c->pp * (c->cp > 0 ? c->cp : 1);
        if (tpp <= 0 || gpus % tpp) {
            wl_error_set(err, "cluster", 0, "tp", "tp x cp x pp = %lld does not divide the %d GPUs",
                         tpp, gpus);
            return WL_EINVAL;
        }
        c->dp = (int)(gpus / tpp);
    }
    /* Megatron's examples: four micro-batches a pipeline stage */
    if (c->global_batch <= 0)
        c->global_batch = c->micro_batch * c->dp * 4 * c->pp;
    return WL_OK;
}

static int bad(wl_error *err, const char *field, const char *fmt, long long a, long long b)
{
    wl_error_set(err, "cluster", 0, field, fmt, a, b);
    return WL_EINVAL;
}

int wl_cluster_config_check(const wl_cluster_config *c, const wl_core_model *m, int gpus,
                            wl_error *err)
{
    if (c->tp < 1 || c->pp < 1 || c->dp < 1 || c->vp < 1)
        return bad(err, "tp", "tp, pp, dp and vp must be at least 1 (tp %lld, pp %lld)", c->tp, c->pp);
    if (c->tp_comm_overlap && !(c->sequence_parallel && c->tp > 1)) {
        wl_error_set(err, "cluster", 0, "tp_comm_overlap", "tensor-parallel communication overlap "
                     "pipelines sequence parallelism's all-gathers and reduce-scatters: it needs "
                     "--sequence-parallel and tp > 1");
        return WL_EINVAL;
    }
    if (c->ep_overlap && !wl_core_model_is_moe(m)) {
        wl_error_set(err, "cluster", 0, "ep_overlap", "all-to-all overlap hides a mixture-of-"
                     "experts layer's token exchange; %s has no experts", m->id);
        return WL_EINVAL;
    }
    if (c->mode == WL_MODE_TRAIN) {
        /* the single-GPU builders' rule for what a fine-tuning means */
        wl_core_shape ft = {.mode = WL_MODE_TRAIN, .finetune = c->finetune,
                            .lora_rank = c->lora_rank, .lora_targets = c->lora_targets};
        if (wl_core_finetune_check(m, &ft, err)) {
            wl_error_locate(err, "cluster", 0); /* a configuration's, as the others here */
            return WL_EINVAL;
        }
        if (c->finetune == WL_FT_LORA && (wl_core_model_is_moe(m) || wl_core_model_is_mla(m))) {
            wl_error_set(err, "cluster", 0, "finetune", "LoRA is modelled on dense attention "
                         "and MLP projections; %s has %s", m->id,
                         wl_core_model_is_moe(m) ? "experts" : "latent attention");
            return WL_EINVAL;
        }
    }
    if (c->cp < 0)
        return bad(err, "cp", "expected at least 1, got %lld (of %lld)", c->cp, 1);
    int cp = c->cp > 0 ? c->cp : 1;
    if ((long long)c->tp * cp * c->pp * c->dp != gpus) {
        wl_error_set(err, "cluster", 0, "dp",
                     "tp x cp x pp x dp = %d x %d x %d x %d = %lld, but the system has %d GPUs", c->tp,
                     cp, c->pp, c->dp, (long long)c->tp * cp * c->pp * c->dp, gpus);
        return WL_EINVAL;
    }
    if (cp > 1) {
        if (c->seq % (2 * cp))
            return bad(err, "cp", "context parallelism splits each sequence into 2 cp = %lld "
                       "load-balanced chunks; seq %lld does not divide", 2LL * cp, c->seq);
        if (c->attention != WL_ATTN_FLASH) {
            wl_error_set(err, "cluster", 0, "cp", "context parallelism runs Transformer Engine's "
                         "fused attention: add --attention flash");
            return WL_EINVAL;
        }
        if (c->mode == WL_MODE_DECODE)
            return bad(err, "cp", "context parallelism (cp %lld) splits training and prefill "
                       "sequences, not decode steps (%lld)", cp, 1);
    }
    if (wl_core_model_is_vision(m) || m->style == WL_STYLE_RESNET) {
        wl_error_set(err, "cluster", 0, "model", "%s: cluster takes transformer language models",
                     m->id);
        return WL_EINVAL;
    }
    if (m->moe_every > 1) {
        wl_error_set(err, "cluster", 0, "model", "%s interleaves dense and MoE layers "
                     "(moe_every %d): wattlas serve models it, cluster's stages do not yet",
                     m->id, m->moe_every);
        return WL_EINVAL;
    }
    if (m->heads % c->tp)
        return bad(err, "tp", "the %lld attention heads do not divide over tp %lld", m->heads, c->tp);
    int kvh = m->kv_heads > 0 ? m->kv_heads : m->heads;
    if (kvh >= c->tp ? kvh % c->tp : c->tp % kvh)
        return bad(err, "tp", "the %lld key/value heads do not divide over tp %lld", kvh, c->tp);
    if (m->d_ff % c->tp)
        return bad(err, "tp", "the FFN width %lld does not divide over tp %lld", m->d_ff, c->tp);
    int ep = c->ep > 0 ? c->ep : 1;
    if (c->ep < 0)
        return bad(err, "ep", "expected at least 1, got %lld (of %lld)", c->ep, 1);
    if (ep > 1 && !wl_core_model_is_moe(m)) {
        wl_error_set(err, "cluster", 0, "ep", "%s has no experts to split over %d ranks", m->id, ep);
        return WL_EINVAL;
    }
    if (c->dp % ep)
        return bad(err, "ep", "expert parallelism %lld must divide dp %lld (Megatron-Core carves the "
                   "expert-parallel groups out of the data-parallel ranks)", ep, c->dp);
    if (wl_core_model_is_moe(m) && m->experts % ep)
        return bad(err, "ep", "the %lld experts do not divide over ep %lld", m->experts, ep);
    if (wl_core_model_is_moe(m) && (m->d_ff_expert > 0 ? m->d_ff_expert : m->d_ff) % c->tp)
        return bad(err, "tp", "the experts' FFN width %lld does not divide over tp %lld",
                   m->d_ff_expert > 0 ? m->d_ff_expert : m->d_ff, c->tp);
    if (c->capacity_factor < 0 || c->capacity_factor > 64 || !isfinite(c->capacity_factor)) {
        wl_error_set(err, "cluster", 0, "capacity_factor",
                     "--capacity-factor %g: expected a factor in (0, 64]", c->capacity_factor);
        return WL_EINVAL;
    }
    if ((unsigned)c->partition >= WL_CLUSTER_PART_COUNT)
        return bad(err, "partition", "unknown partition %lld (of %lld)", c->partition,
                   WL_CLUSTER_PART_COUNT);
    if (c->partition == WL_CLUSTER_PART_UNIFORM && m->layers % (c->pp * c->vp)) {
        wl_error_set(err, "cluster", 0, "pp",
                     "%d layers do not divide into pp x vp = %d x %d chunks (Megatron-LM's "
                     "uniform split gives every chunk the same number; --partition balanced or "
                     "a list splits them unevenly)", m->layers, c->pp, c->vp);
        return WL_EINVAL;
    }
    if (m->layers < (long long)c->pp * c->vp) {
        wl_error_set(err, "cluster", 0, "pp", "%d layers cannot fill pp x vp = %d x %d chunks",
                     m->layers, c->pp, c->vp);
        return WL_EINVAL;
    }
    if (c->partition == WL_CLUSTER_PART_LIST) {
        long long sum = 0;
        if (!c->stage_layers || (c->nstage_layers != c->pp * c->vp &&
                                 !(c->vp == 1 && c->nstage_layers == c->pp))) {
            wl_error_set(err, "cluster", 0, "partition",
                         "%d layer counts listed for pp x vp = %d x %d chunks", c->nstage_layers,
                         c->pp, c->vp);
            return WL_EINVAL;
        }
        for (int i = 0; i < c->nstage_layers; i++) {
            if (c->stage_layers[i] < 1)
                return bad(err, "partition", "chunk %lld has %lld layers: each needs at least 1",
                           i, c->stage_layers[i]);
            sum += c->stage_layers[i];
        }
        if (sum != m->layers) {
            wl_error_set(err, "cluster", 0, "partition",
                         "the listed layers add up to %lld, but %s has %d", sum, m->id, m->layers);
            return WL_EINVAL;
        }
    }
    if (c->vp > 1 && c->pp == 1)
        return bad(err, "vp", "virtual stages need pipeline stages (vp %lld with pp %lld)", c->vp, c->pp);
    if (c->micro_batch < 1 || c->seq < 1 || c->micro_batch > WL_MAX_BATCH || c->seq > WL_MAX_SEQ)
        return bad(err, "micro_batch", "micro-batch %lld and seq %lld must be positive", c->micro_batch,
                   c->seq);
    if (c->global_batch < 1 || c->global_batch % (c->micro_batch * c->dp)) {
        wl_error_set(err, "cluster", 0, "global_batch",
                     "global batch %lld is not a multiple of micro-batch x dp = %lld x %d",
                     c->global_batch, c->micro_batch, c->dp);
        return WL_EINVAL;
    }
    long long mb = c->global_batch / (c->micro_batch * c->dp);
    if (mb > 1000000)
        return bad(err, "global_batch", "%lld micro-batches per pipeline is too many (at most %lld)",
                   mb, 1000000);
    const wl_cluster_schedule_type *t = c->schedule;
    if (t && c->vp > 1 && !wl_cluster_schedule_interleaves(t)) {
        wl_error_set(err, "cluster", 0, "schedule", "--vp %d needs the interleaved schedule, not %s",
                     c->vp, wl_cluster_schedule_name(t));
        return WL_EINVAL;
    }
    if (c->vp > 1 && c->mode == WL_MODE_TRAIN && mb % c->pp)
        return bad(err, "global_batch",
                   "interleaving needs micro-batches (%lld) a multiple of pp (%lld)", mb, c->pp);
    if (c->sequence_parallel && c->tp > 1 && (c->micro_batch * c->seq) % c->tp)
        return bad(err, "seq", "sequence parallelism splits %lld tokens over tp %lld unevenly",
                   c->micro_batch * c->seq, c->tp);
    if (c->zero != 0 && c->zero != 1)
        return bad(err, "zero", "--zero takes 0 or 1, got %lld (of %lld levels)", c->zero, 2);
    if (c->mode == WL_MODE_DECODE) {
        if (c->vp > 1)
            return bad(err, "vp", "decode runs one chunk per stage (--vp %lld); interleaving is a "
                       "training schedule (%lld)", c->vp, 1);
        if (c->gen < 1 || c->gen > 1000000)
            return bad(err, "gen", "--gen %lld: expected 1 to %lld tokens", c->gen, 1000000);
        if ((double)c->pp * (double)mb * (double)c->gen > 2e7)
            return bad(err, "gen", "%lld decode rounds of pp x micro-batches = %lld tasks is more than "
                       "the simulation takes; use fewer tokens or larger micro-batches", c->gen,
                       (long long)c->pp * mb);
    }
    if (c->dtype != WL_DT_BF16 && c->dtype != WL_DT_FP16 && c->dtype != WL_DT_FP32 &&
        c->dtype != WL_DT_FP8) {
        wl_error_set(err, "cluster", 0, "dtype", "cluster trains in bf16, fp16, fp8 or fp32, not %s",
                     wl_dtype_name(c->dtype));
        return WL_EINVAL;
    }
    return WL_OK;
}

static const char *const partition_names[WL_CLUSTER_PART_COUNT] = {"uniform", "balanced",
                                                                    "parameters", "list"};

const char *wl_cluster_partition_name(wl_cluster_partition p)
{
    return (unsigned)p < WL_CLUSTER_PART_COUNT ? partition_names[p] : NULL;
}

int wl_cluster_partition_lookup(const char *name, wl_cluster_partition *out)
{
    for (int i = 0; i < WL_CLUSTER_PART_LIST; i++)
        if (!strcmp(name, partition_names[i])) {
            *out = (wl_cluster_partition)i;
            return WL_OK;
        }
    return WL_EINVAL;
}

int wl_cluster_partition_parse(const char *text, wl_cluster_partition *part, int *layers, int *n,
                               wl_error *err)
{
    *n = 0;
    if (!wl_cluster_partition_lookup(text, part))
        return WL_OK;
    const char *q = text;
    while (*q) {
        char *end;
        long long v;
        if (*n >= WL_CLUSTER_MAX_LIST) {
            wl_error_set(err, "cluster", 0, "partition", "more than %d stages listed",
                         WL_CLUSTER_MAX_LIST);
            return WL_EINVAL;
        }
        errno = 0;
        v = strtoll(q, &end, 10);
        if (end == q || errno || v < 1 || v > 100000 || (*end && *end != ',')) {
            wl_error_set(err, "cluster", 0, "partition",
                         "expected uniform, balanced, parameters or a comma list of layer counts "
                         "(each at least 1), got '%.60s'", text);
            return WL_EINVAL;
        }
        layers[(*n)++] = (int)v;
        q = *end ? end + 1 : end;
        if (*end && !*q) {
            wl_error_set(err, "cluster", 0, "partition", "a list ends with a count, not ','");
            return WL_EINVAL;
        }
    }
    if (!*n) {
        wl_error_set(err, "cluster", 0, "partition", "empty");
        return WL_EINVAL;
    }
    *part = WL_CLUSTER_PART_LIST;
    return WL_OK;
}

wl_dtype wl_cluster_act_dtype(wl_dtype dtype)
{
    return dtype == WL_DT_FP8 ? WL_DT_BF16 : dtype;
}
