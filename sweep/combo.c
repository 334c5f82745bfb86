/* A combination of the grid as a case: its workload's name, precision and
 * shape, its workload (built, or a recorded trace), its memory footprint on
 * a GPU variant and the learned model's use for it; and the spec's one case
 * (wl_sweep_spec_workload, wl_sweep_spec_learned) for predict. */
#include "sweep_internal.h"

#include <math.h>
#include <string.h>

const char *wl_sweep_i_workload_name(const wl_sweep_spec *s, const combo *c)
{
    if (s->traces.n) {
        const char *p = strrchr(s->traces.v[c->wl], '/');
        return p ? p + 1 : s->traces.v[c->wl];
    }
    return s->models.v[c->wl];
}

wl_mode wl_sweep_i_combo_mode(const wl_sweep_spec *s, const combo *c)
{
    if (!s->traces.n)
        return s->modes[c->md];
    if (s->trace_wl && wl_core_workload_training(s->trace_wl[c->wl]))
        return WL_MODE_TRAIN;
    /* the harness names a profile <model>_<mode>_b<batch>_..., as the
     * shared data's are: a decode profile is a forward per token */
    return strstr(wl_sweep_i_workload_name(s, c), "_decode_") ? WL_MODE_DECODE : WL_MODE_PREFILL;
}

wl_dtype wl_sweep_i_combo_dtype(const wl_sweep_spec *s, const combo *c)
{
    if (s->traces.n)
        return s->ndt ? s->dtypes[c->dt] : s->trace_dt[c->wl];
    return s->dtypes[c->dt];
}

void wl_sweep_i_combo_shape(const wl_sweep_spec *s, const combo *c, wl_core_shape *sh)
{
    *sh = s->opts;
    sh->batch = (long long)s->batch.v[c->b];
    sh->seq = (long long)s->seq.v[c->sq];
    sh->dtype = s->dtypes[c->dt];
    sh->attention = s->attn[c->at];
    sh->mode = s->modes[c->md];
}

int wl_sweep_i_shape_workload(const wl_sweep_spec *s, const combo *c, wl_core_workload **wl,
                              int *own, wl_error *err)
{
    *own = 0;
    if (s->traces.n) {
        *wl = s->trace_wl[c->wl];
        if (wl_sweep_i_combo_dtype(s, c) == s->trace_dt[c->wl])
            return WL_OK;
        *own = 1;
        return wl_core_workload_retype(s->trace_wl[c->wl], WL_DT_FP32, wl, err);
    }
    wl_core_shape sh;
    wl_sweep_i_combo_shape(s, c, &sh);
    const wl_core_model *m = &s->model[c->wl];
    *own = 1;
    return wl_core_build_scope(m, &sh, wl_sweep_core_scope(s->scope), wl, err);
}

/* The footprint of a combination on its GPU variant: a model's from its
 * architecture and shape; a trace records kernels, not tensors, so its
 * footprint is unknown (NaN, fits -1). A layer-scope point needs the whole
 * model in memory all the same. */
void wl_sweep_i_combo_memory(const wl_sweep_spec *s, const combo *c, const wl_core_gpu *g,
                             wl_core_memory *mem, int *fits)
{
    memset(mem, 0, sizeof *mem);
    mem->total_gb = NAN;
    *fits = -1;
    if (s->traces.n)
        return;
    wl_core_shape sh;
    wl_sweep_i_combo_shape(s, c, &sh);
    wl_error e = {0};
    if (wl_core_memory_estimate(&s->model[c->wl], &sh, mem, &e))
        mem->total_gb = NAN;
    else
        *fits = wl_core_memory_fits(g, mem);
}

/* The learned model's use for combination c's workload. */
void wl_sweep_i_learned_use(const wl_sweep_spec *s, const combo *c, wl_learn_use *u)
{
    wl_core_shape ls;
    wl_sweep_i_combo_shape(s, c, &ls);
    *u = (wl_learn_use){.model = s->learned,
                        .shape = s->traces.n ? NULL : &s->model[c->wl],
                        .c = {.batch = ls.batch, .seq = ls.seq, .dtype = wl_sweep_i_combo_dtype(s, c),
                              .mode = s->traces.n ? WL_MODE_PREFILL : ls.mode,
                              .attention = s->traces.n ? WL_ATTN_EAGER : ls.attention}};
}

int wl_sweep_spec_learned(const wl_sweep_spec *s, wl_learn_use *u)
{
    memset(u, 0, sizeof *u);
    if (!s->finished || !s->learned)
        return 0;
    combo c;
    wl_sweep_i_decode(s, 0, &c);
    wl_sweep_i_learned_use(s, &c, u);
    return 1;
}

int wl_sweep_spec_workload(const wl_sweep_spec *s, const wl_core_workload **wl,
                           wl_core_workload **owned, wl_sweep_shape_id *id, wl_error *err)
{
    *wl = NULL;
    *owned = NULL;
    memset(id, 0, sizeof *id);
    if (!s->finished) {
        wl_error_set(err, "sweep", 0, "", "the spec is not finished");
        return WL_EINVAL;
    }
    combo c;
    wl_sweep_i_decode(s, 0, &c);
    int own = 0;
    wl_core_workload *w = NULL;
    int rc = wl_sweep_i_shape_workload(s, &c, &w, &own, err);
    if (rc)
        return rc;
    /* a trace as recorded is the spec's (a copy made before lost its
     * repeated and host-timed flags: compare added the host's launch
     * cost to a profile's measured gaps) */
    wl_core_workload *mine = own ? w : NULL;
    snprintf(id->model, sizeof id->model, "%s", wl_sweep_i_workload_name(s, &c));
    wl_core_gpu g;
    if ((rc = wl_sweep_i_variant_gpu(s, c.gpu, c.variant, &g, err))) {
        wl_core_workload_free(mine);
        return rc;
    }
    wl_sweep_i_combo_memory(s, &c, &g, &id->memory, &id->fits);
    id->traced = s->traces.n > 0;
    id->max_batch = -1;
    if (!id->traced && id->fits == 0) {
        wl_core_shape sh;
        wl_sweep_i_combo_shape(s, &c, &sh);
        wl_error e = {0};
        if (wl_core_memory_max_batch(&g, &s->model[c.wl], &sh, &id->max_batch, &e))
            id->max_batch = -1;
    }
    id->dtype = wl_sweep_i_combo_dtype(s, &c);
    if (!id->traced) {
        id->batch = (long long)s->batch.v[c.b];
        id->seq = wl_core_model_is_vision(&s->model[c.wl]) ? 0 : (long long)s->seq.v[c.sq];
        id->attention = s->attn[c.at];
        wl_sweep_i_combo_shape(s, &c, &id->shape);
    }
    *wl = w;
    *owned = mine;
    return WL_OK;
}
