/* What a model is, read from its fields alone: the helpers the builders,
 * memory, cluster and serve share (no calls out, so every file may call
 * them). */
#include "wattlas_core.h"

int wl_core_model_is_moe(const wl_core_model *m)
{
    return m->experts > 0;
}

int wl_core_model_is_mla(const wl_core_model *m)
{
    return m->kv_lora_rank > 0;
}

/* Gemma 2/3's interleaving (HF Gemma3TextConfig layer_types): layer i is
 * global when (i + 1) % global_every == 0, else local. */
int wl_core_model_layer_local(const wl_core_model *m, int layer)
{
    return m->sliding_window > 0 && m->global_every > 1 && (layer + 1) % m->global_every != 0;
}

/* The MoE layers: from dense_layers on, every one, or with moe_every k
 * every k-th (HF Llama4TextConfig: moe_layers = interleave_moe_layer_step - 1,
 * then every step: layers 1, 3, 5, ... at 2). */
int wl_core_model_layer_moe(const wl_core_model *m, int layer)
{
    return m->experts > 0 && layer >= m->dense_layers &&
           (m->moe_every <= 1 || (layer + 1) % m->moe_every == 0);
}

/* The query/key/value heads' width: the config's head_dim where it gives
 * one (HF's Qwen3Config, Gemma3TextConfig: 128 and 256 beside d_model /
 * heads of 80 or 240), else d_model / heads, every other family's rule. */
int wl_core_model_head_dim(const wl_core_model *m)
{
    return m->head_dim > 0 ? m->head_dim : m->heads > 0 ? m->d_model / m->heads : 0;
}
