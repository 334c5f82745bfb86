/* Finishing a sweep spec: defaults for the axes not given, each GPU's
 * clocks, the models and traces loaded and checked, the grid's size, and
 * the warnings and notes a caller shows. */
#include "sweep_internal.h"
#include "../presets/wattlas_presets.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add_default(wl_core_strlist *l, const char *v)
{
    wl_error e;
    return l->n ? WL_OK : wl_core_parse_names(v, "", 0, "", l, &e);
}

static int add_default_num(wl_core_numlist *l, double v)
{
    if (l->n)
        return WL_OK;
    wl_error e;
    char t[WL_CORE_NUM_TEXT];
    wl_core_num_text(t, sizeof t, v);
    return wl_core_parse_list(t, -1e300, 1e300, 0, "", 0, "", l, &e);
}

/* The precision a trace was recorded in: that of its first tensor-core
 * GEMM, else of its first GEMM. */
static wl_dtype trace_dtype(const wl_core_workload *wl)
{
    wl_dtype first = WL_DT_FP32;
    int seen = 0;
    for (size_t i = 0; i < wl_core_workload_count(wl); i++) {
        const wl_kernel *k = wl_core_workload_kernel(wl, i);
        if (k->kind != WL_K_GEMM)
            continue;
        if (k->tensor_core && k->in_dtype != WL_DT_TF32)
            return k->in_dtype;
        if (!seen)
            first = k->in_dtype, seen = 1;
    }
    return first == WL_DT_TF32 ? WL_DT_FP32 : first;
}

/* Each GPU sweeps its own clocks: its whole grid, its own maximum, or the
 * requested clocks that lie in its range (where its V-f curve is defined;
 * any clock with a fixed voltage). Clipped ones are counted for a note. */
/* A profile's recorded clock is the anchor of every kernel's time: one no
 * board of the profile's could run at (10000 MHz on a 1980 MHz GPU) is
 * refused, naming the board's range. Checked against the board it ran on
 * when it says, else against every GPU swept (on which it is then taken
 * as recorded); a quarter above the top clock and half the lowest are
 * the bounds, room for a board's boost bins and a preset's table. */
static int recorded_clock_fits(const wl_sweep_spec *s, size_t i, const wl_core_gpu *rg,
                               wl_error *err)
{
    double f = wl_core_workload_recorded_clock(s->trace_wl[i]);
    if (!(f > 0))
        return WL_OK;
    for (size_t k = 0; k < (rg ? 1 : s->gpus.n); k++) {
        const wl_core_gpu *g = rg ? rg : &s->gpu[k];
        if (f > 1.25 * g->sm_clock_max_mhz || f < 0.5 * g->sm_clock_min_mhz) {
            wl_error_set(err, s->traces.v[i], 0, "sm_clock_mhz",
                         "recorded at %g MHz, which %s (%g-%g MHz) cannot run: give the clock "
                         "it ran at (--profile-clock) or the board (--profile-gpu)",
                         f, g->id, g->sm_clock_min_mhz, g->sm_clock_max_mhz);
            return WL_EINVAL;
        }
    }
    return WL_OK;
}

static int gpu_clocks(wl_sweep_spec *s, int requested, wl_error *err)
{
    size_t ng = s->gpus.n;
    s->gclk = calloc(ng, sizeof *s->gclk);
    s->clipped = calloc(ng, sizeof *s->clipped);
    if (!s->gclk || !s->clipped)
        return WL_ENOMEM;
    s->maxclk = 0;
    for (size_t i = 0; i < ng; i++) {
        const wl_core_gpu *g = &s->gpu[i];
        wl_core_numlist *l = &s->gclk[i];
        size_t n = s->clock_max ? 1 : requested ? s->clocks.n : wl_core_gpu_clock_count(g);
        if (!(l->v = malloc(n * sizeof *l->v)))
            return WL_ENOMEM;
        l->cap = n;
        for (size_t k = 0; k < n; k++) {
            double f = s->clock_max ? g->sm_clock_max_mhz
                       : requested  ? s->clocks.v[k]
                                    : wl_core_gpu_clock(g, k);
            if (requested && !s->vfix.n && !wl_core_gpu_clock_in_range(g, f))
                s->clipped[i]++;
            else
                l->v[l->n++] = f;
        }
        if (!l->n) {
            wl_error_set(err, s->o_clock.source, s->o_clock.line, "clock",
                         "no requested clock lies in %s's range %.0f-%.0f MHz", g->id,
                         g->sm_clock_min_mhz, g->sm_clock_max_mhz);
            return WL_EINVAL;
        }
        if (l->n > s->maxclk)
            s->maxclk = l->n;
    }
    return WL_OK;
}

/* Whether a prefill shape builds (its errors name batch or seq). */
static int build_check(const wl_sweep_spec *s, const wl_core_model *m, const wl_core_shape *sh,
                       wl_error *err)
{
    wl_core_workload *w = NULL;
    int rc = wl_core_build_scope(m, sh, wl_sweep_core_scope(s->scope), &w, err);
    wl_core_workload_free(w);
    return rc;
}

static int add_warning(wl_sweep_spec *s, const char *text)
{
    return wl_sweep_i_add_text(&s->warnings, text);
}

/* The grid's size, with the axes that make it: past 1e8 points a warning
 * before work starts (half an hour and more at the bench's 50,000 points/s
 * on two cores), past 1e15 an error (points are indexed in 64 bits, and no
 * run would finish). The error names the largest axis, where it was given. */
#define GRID_WARN_POINTS 1e8
#define GRID_MAX_POINTS 1e15

typedef struct {
    const char *name;
    double n;
    const origin *o;
} grid_axis;

static int grid_size(wl_sweep_spec *s, wl_error *err)
{
    grid_axis ax[10 + MAX_SET];
    size_t na = 0;
    ax[na++] = (grid_axis){"gpu", (double)s->gpus.n, &s->o_gpu};
    for (size_t k = 0; k < s->nset; k++)
        ax[na++] = (grid_axis){s->set[k].key, (double)s->set[k].vals.n, &s->set[k].o};
    if (s->traces.n) {
        ax[na++] = (grid_axis){"trace", (double)s->n_workloads, &s->o_trace};
        ax[na++] = (grid_axis){"dtype", (double)(s->ndt + (s->ndt == 0)), &s->o_dtype};
    } else {
        ax[na++] = (grid_axis){"model", (double)s->n_workloads, &s->o_model};
        ax[na++] = (grid_axis){"batch", (double)s->batch.n, &s->o_batch};
        ax[na++] = (grid_axis){"seq", (double)s->seq.n, &s->o_seq};
        ax[na++] = (grid_axis){"dtype", (double)s->ndt, &s->o_dtype};
        ax[na++] = (grid_axis){"attention", (double)s->nattn, &s->o_attn};
        ax[na++] = (grid_axis){"mode", (double)s->nmode, &s->o_mode};
    }
    ax[na++] = (grid_axis){s->vfix.n ? "voltage_mv" : "voltage_offset_mv",
                           (double)wl_sweep_i_volts(s)->n, s->vfix.n ? &s->o_vfix : &s->o_voff};
    ax[na++] = (grid_axis){"clock", (double)s->maxclk, &s->o_clock};
    double n = 1;
    size_t big = 0;
    for (size_t i = 0; i < na; i++) {
        n *= ax[i].n;
        if (ax[i].n > ax[big].n)
            big = i;
    }
    if (!(n > GRID_WARN_POINTS))
        return WL_OK;
    char axes[600] = "";
    size_t used = 0;
    for (size_t i = 0; i < na && used < sizeof axes; i++) {
        if (ax[i].n <= 1)
            continue;
        int w = snprintf(axes + used, sizeof axes - used, "%s%.40s %.0f", used ? " x " : "",
                         ax[i].name, ax[i].n);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (n > GRID_MAX_POINTS) {
        wl_error_set(err, ax[big].o->source, ax[big].o->line, ax[big].name,
                     "the grid has %.3g points (%s), more than the %.0e a sweep can index; "
                     "split it into several sweeps", n, axes, GRID_MAX_POINTS);
        return WL_EINVAL;
    }
    char t[800];
    snprintf(t, sizeof t, "the grid has %.3g points (%s): about %.3g hours at 50,000 points/s; "
             "--shard I/N splits it over processes or machines", n, axes, n / 5e4 / 3600);
    return add_warning(s, t);
}

static int finish(wl_sweep_spec *s, wl_error *err)
{
    if (s->traces.n && (s->models.n || s->batch.n || s->seq.n || s->nattn)) {
        wl_error_set(err, s->o_trace.source, s->o_trace.line, "trace",
                     "a trace fixes its model and shape: give no model, batch, seq or attention");
        return WL_EINVAL;
    }
    if (s->traces.n) {
        for (size_t i = 0; i < s->nmode; i++)
            if (s->modes[i] != WL_MODE_PREFILL) {
                wl_error_set(err, s->o_mode.source, s->o_mode.line, "mode",
                             "a trace is the forward pass it recorded: mode %s needs a model",
                             wl_mode_name(s->modes[i]));
                return WL_EINVAL;
            }
    }
    if (s->traces.n && wl_sweep_core_scope(s->scope) != WL_SCOPE_MODEL) {
        wl_error_set(err, s->o_trace.source, s->o_trace.line, "scope",
                     "scope layer needs models, not traces");
        return WL_EINVAL;
    }
    if (s->vfix.n && s->voff.n) {
        wl_error_set(err, s->o_vfix.source, s->o_vfix.line, "voltage_mv",
                     "a fixed voltage and a voltage offset exclude each other");
        return WL_EINVAL;
    }
    int rc = WL_OK;
    if ((rc = add_default(&s->gpus, "a100-pcie-40gb")) ||
        (!s->traces.n && (rc = add_default(&s->models, "gpt2"))) ||
        (rc = add_default_num(&s->batch, 1)) || (rc = add_default_num(&s->seq, 128)))
        return rc;
    if (!s->vfix.n && (rc = add_default_num(&s->voff, 0)))
        return rc;
    if (!s->nattn) {
        s->attn = calloc(1, sizeof *s->attn);
        if (!s->attn)
            return WL_ENOMEM;
        s->nattn = 1;
        /* a serving engine's attention is a fused kernel */
        if (s->opts.launch == WL_LAUNCH_GRAPHS)
            s->attn[0] = WL_ATTN_FLASH;
    }
    if (!s->nmode) {
        s->modes = calloc(1, sizeof *s->modes);
        if (!s->modes)
            return WL_ENOMEM;
        s->nmode = 1;
    }
    if (!s->opts.gen)
        s->opts.gen = 128;
    if (!s->opts.grad_accum)
        s->opts.grad_accum = 1;
    size_t ng = s->gpus.n;
    s->gpu = calloc(ng, sizeof *s->gpu);
    if (!s->gpu)
        return WL_ENOMEM;
    for (size_t i = 0; i < ng; i++)
        if ((rc = wl_preset_gpu_load(s->gpus.v[i], &s->gpu[i], err))) {
            if (rc == WL_ENOTFOUND)
                wl_error_locate(err, s->o_gpu.source, s->o_gpu.line);
            return rc;
        }
    /* measured idle tables replace the presets' idle curves before any set */
    if ((rc = wl_preset_apply_idle_specs(s->gpu, ng, (const char *const *)s->idle.v, s->idle.n,
                                         NULL, err))) {
        if (!strcmp(err->field, "idle"))
            wl_error_locate(err, s->o_idle.source, s->o_idle.line);
        return rc;
    }
    /* the host issues every GPU's kernels: it replaces each preset's host */
    if (s->host.n > 1) {
        wl_error_set(err, s->o_host.source, s->o_host.line, "host",
                     "one host per run (got %zu); run once per host", s->host.n);
        return WL_EINVAL;
    }
    if (s->host.n && (rc = wl_preset_gpus_set_host(s->host.v[0], s->gpu, ng, err))) {
        if (rc == WL_ENOTFOUND)
            wl_error_locate(err, s->o_host.source, s->o_host.line);
        return rc;
    }
    for (size_t i = 0; i < ng; i++)
        if ((rc = wl_sweep_i_name_edited_copy(s, i)))
            return rc;
    if (s->level > 0) {
        s->unc = calloc(ng, sizeof *s->unc);
        if (!s->unc)
            return WL_ENOMEM;
        for (size_t i = 0; i < ng; i++)
            if ((rc = wl_calib_uncertainty_load(s->gpus.v[i], &s->unc[i], err)))
                return rc;
            else if (s->same_board)
                memset(&s->unc[i].board, 0, sizeof s->unc[i].board);
    }
    int requested = s->clocks.n > 0 && !s->clock_max;
    if (s->clock_max) {
        char t[WL_CORE_NUM_TEXT];
        wl_core_num_text(t, sizeof t, s->gpu[0].sm_clock_max_mhz);
        if ((rc = wl_core_parse_list(t, 0, 1e6, 0, "", 0, "clock", &s->clocks, err)))
            return rc;
    }
    if (!s->clocks.n) {
        const wl_core_gpu *g = &s->gpu[0];
        size_t n = wl_core_gpu_clock_count(g);
        s->clocks.v = malloc(n * sizeof *s->clocks.v);
        if (!s->clocks.v)
            return WL_ENOMEM;
        s->clocks.cap = n;
        for (size_t i = 0; i < n; i++)
            s->clocks.v[s->clocks.n++] = wl_core_gpu_clock(g, i);
    }
    if ((rc = gpu_clocks(s, requested, err)))
        return rc;
    if (s->traces.n) {
        s->trace_wl = calloc(s->traces.n, sizeof *s->trace_wl);
        s->trace_dt = calloc(s->traces.n, sizeof *s->trace_dt);
        if (!s->trace_wl || !s->trace_dt)
            return WL_ENOMEM;
        for (size_t i = 0; i < s->traces.n; i++) {
            if ((rc = wl_core_trace_load_as(s->traces.v[i], &s->recorded, &s->trace_wl[i], err))) {
                /* a recorded clock or limit for a kernel trace: the
                 * option (or spec line) is what is wrong */
                int clk = !strcmp(err->field, "profile_clock");
                int gpu = !strcmp(err->field, "profile_gpu");
                int step = !strcmp(err->field, "profile_step_ms");
                if (rc == WL_EINVAL &&
                    (clk || gpu || step || !strcmp(err->field, "profile_power_limit_w"))) {
                    const origin *o = clk ? &s->o_rclock : gpu ? &s->o_rgpu
                                                     : step ? &s->o_rstep : &s->o_rlimit;
                    wl_error_set(err, o->source, o->line, err->field,
                                 "%s is a kernel trace, which measured nothing: only a PyTorch "
                                 "profile has a recorded clock, power limit and GPU",
                                 s->traces.v[i]);
                }
                return rc;
            }
            if ((rc = wl_core_workload_set_stack(s->trace_wl[i], s->opts.stack)))
                return rc;
            /* the board the profile ran on, when it says: anchored there */
            const char *rid = wl_core_workload_recorded_gpu_id(s->trace_wl[i]);
            wl_core_gpu rg;
            wl_error e2 = {0};
            int own = rid[0] && wl_preset_gpu_load(rid, &rg, &e2) == WL_OK;
            if ((rc = recorded_clock_fits(s, i, own ? &rg : NULL, err)))
                return rc;
            if (rid[0]) {
                if (own) {
                    if ((rc = wl_core_workload_set_recorded_gpu(s->trace_wl[i], &rg)))
                        return rc;
                } else if (s->o_rgpu.given) {
                    wl_error_set(err, s->o_rgpu.source, s->o_rgpu.line, "profile_gpu",
                                 "'%.200s' is no GPU preset or file: %.300s", rid, e2.text);
                    return WL_EINVAL;
                } else {
                    /* a board of no preset (the harness's NVML name): the
                     * profile is taken as recorded on the GPU asked about */
                    char *t = wl_core_strprintf(
                        "%s: ran on '%.200s', which names no GPU preset: anchored on the GPU "
                        "asked about (--profile-gpu names the board it ran on)",
                        s->traces.v[i], rid);
                    rc = t ? wl_sweep_i_add_text(&s->notes, t) : WL_ENOMEM;
                    free(t);
                    if (rc)
                        return rc;
                }
            }
            /* what makes a profile's prediction doubtful */
            const char *wt = wl_core_workload_warning(s->trace_wl[i]);
            if (wt[0]) {
                char *t = wl_core_strprintf("%s: %s", s->traces.v[i], wt);
                rc = t ? wl_sweep_i_add_text(&s->warnings, t) : WL_ENOMEM;
                free(t);
                if (rc)
                    return rc;
            }
            /* what a profile's import kept at measured times */
            const char *nt = wl_core_workload_note(s->trace_wl[i]);
            if (nt[0]) {
                char *t = wl_core_strprintf("%s: %s", s->traces.v[i], nt);
                rc = t ? wl_sweep_i_add_text(&s->notes, t) : WL_ENOMEM;
                free(t);
                if (rc)
                    return rc;
            }
            s->trace_dt[i] = trace_dtype(s->trace_wl[i]);
            /* a trace runs as recorded, or retyped to fp32 as eager PyTorch would */
            for (size_t d = 0; d < s->ndt; d++)
                if (s->dtypes[d] != s->trace_dt[i] && s->dtypes[d] != WL_DT_FP32) {
                    wl_error_set(err, s->o_dtype.source, s->o_dtype.line, "dtype",
                                 "%s was recorded in %s: it runs as %s or retyped to fp32, "
                                 "not as %s", s->traces.v[i], wl_dtype_name(s->trace_dt[i]),
                                 wl_dtype_name(s->trace_dt[i]), wl_dtype_name(s->dtypes[d]));
                    return WL_EINVAL;
                }
        }
        s->n_workloads = s->traces.n;
    } else {
        if (!s->ndt) {
            s->dtypes = calloc(1, sizeof *s->dtypes);
            if (!s->dtypes)
                return WL_ENOMEM;
            s->dtypes[0] = WL_DT_BF16;
            s->ndt = 1;
        }
        s->model = calloc(s->models.n, sizeof *s->model);
        if (!s->model)
            return WL_ENOMEM;
        for (size_t i = 0; i < s->models.n; i++)
            if ((rc = wl_preset_model_load(s->models.v[i], &s->model[i], err))) {
                if (rc == WL_ENOTFOUND)
                    wl_error_locate(err, s->o_model.source, s->o_model.line);
                return rc;
            }
        /* a built-in model named by another spelling ("GPT-3-13B") is
         * written under its id, so tables of one model agree */
        for (size_t i = 0; i < s->models.n; i++) {
            const char *nm = s->models.v[i], *id = NULL;
            size_t l = strlen(nm);
            if (!strchr(nm, '/') && !(l > 4 && !strcmp(nm + l - 4, ".ini")) &&
                !wl_preset_text(WL_PRESET_MODEL, nm))
                id = wl_preset_model_resolve(nm);
            char *copy = id ? strdup(id) : NULL;
            if (id && !copy)
                return WL_ENOMEM;
            if (copy) {
                free(s->models.v[i]);
                s->models.v[i] = copy;
            }
        }
        s->n_workloads = s->models.n;
        /* every shape must build: errors name the batch and seq origins.
         * The builders' limits (positive dimensions, the tensor-size caps)
         * bound quantities that grow with batch and with seq, so the corners
         * of the batch x seq grid decide for the shapes between them; a
         * sweep of 10^5 batches no longer builds 10^5 models to start. */
        double bx[2] = {INFINITY, -INFINITY}, qx[2] = {INFINITY, -INFINITY};
        for (size_t b = 0; b < s->batch.n; b++) {
            bx[0] = fmin(bx[0], s->batch.v[b]);
            bx[1] = fmax(bx[1], s->batch.v[b]);
        }
        for (size_t q = 0; q < s->seq.n; q++) {
            qx[0] = fmin(qx[0], s->seq.v[q]);
            qx[1] = fmax(qx[1], s->seq.v[q]);
        }
        size_t nb = s->batch.n ? (bx[0] < bx[1] ? 2 : 1) : 0;
        size_t nq = s->seq.n ? (qx[0] < qx[1] ? 2 : 1) : 0;
        /* a mode's own limits (a model it cannot train or decode, the
         * length of a generation) are checked on the smallest shape, the
         * sizes on the corners */
        for (size_t m = 0; m < s->models.n; m++)
            for (size_t md = 0; md < s->nmode; md++)
                for (size_t b = 0; b < nb; b++)
                    for (size_t q = 0; q < nq; q++) {
                        wl_core_shape sh = s->opts;
                        sh.batch = (long long)bx[b];
                        sh.seq = (long long)qx[q];
                        sh.dtype = s->dtypes[0];
                        sh.attention = s->attn[0];
                        sh.mode = s->modes[md];
                        if (sh.mode == WL_MODE_DECODE && (b || q))
                            continue; /* a generation's size grows with seq and gen only */
                        if (sh.mode == WL_MODE_DECODE)
                            sh.seq = (long long)qx[nq - 1];
                        wl_core_build_info info;
                        rc = sh.mode == WL_MODE_PREFILL
                                 ? build_check(s, &s->model[m], &sh, err)
                                 : wl_core_build_info_of(&s->model[m], &sh, 0, &info, err);
                        if (rc) {
                            const origin *o = !strcmp(err->field, "batch") ? &s->o_batch
                                              : !strcmp(err->field, "seq") ? &s->o_seq
                                              : !strcmp(err->field, "mode") ? &s->o_mode
                                              : !strcmp(err->field, "gen") ||
                                                        !strcmp(err->field, "grad_accum") ||
                                                        !strcmp(err->field, "finetune") ||
                                                        !strcmp(err->field, "lora_rank") ||
                                                        !strcmp(err->field, "lora_targets") ||
                                                        !strcmp(err->field, "freeze")
                                                  ? &s->o_train
                                                  : &s->o_model;
                            wl_error_locate(err, o->source, o->line);
                            return rc;
                        }
                    }
    }
    /* a context past a model's learned position table cannot run (PyTorch
     * indexes past the table); the prediction is still made, and said so */
    for (size_t m = 0; !s->traces.n && m < s->models.n; m++) {
        const wl_core_model *md = &s->model[m];
        double longest = 0;
        for (size_t q = 0; q < s->seq.n; q++)
            longest = fmax(longest, s->seq.v[q]);
        int decodes = 0;
        for (size_t k = 0; k < s->nmode; k++)
            decodes |= s->modes[k] == WL_MODE_DECODE;
        if (decodes)
            longest += (double)s->opts.gen;
        if (md->positions == WL_POS_LEARNED && md->max_positions > 0 && longest > md->max_positions) {
            char t[300];
            snprintf(t, sizeof t, "%.60s has %d learned positions: a context of %.0f tokens%s "
                     "cannot run in PyTorch (its position table ends at %d); predicted as if it "
                     "could", s->models.v[m], md->max_positions, longest,
                     decodes ? " (prompt and generation)" : "", md->max_positions);
            if ((rc = add_warning(s, t)))
                return rc;
        }
    }
    if ((rc = grid_size(s, err)))
        return rc;
    /* every GPU variant must be valid */
    return wl_sweep_i_check_variants(s, err);
}

size_t wl_sweep_spec_warning_count(const wl_sweep_spec *s)
{
    return s->finished ? s->warnings.n : 0;
}

const char *wl_sweep_spec_warning(const wl_sweep_spec *s, size_t i)
{
    return s->finished && i < s->warnings.n ? s->warnings.v[i] : NULL;
}

size_t wl_sweep_spec_note_count(const wl_sweep_spec *s)
{
    return s->finished ? s->notes.n : 0;
}

const char *wl_sweep_spec_note(const wl_sweep_spec *s, size_t i)
{
    return s->finished && i < s->notes.n ? s->notes.v[i] : NULL;
}

size_t wl_sweep_spec_clipped(const wl_sweep_spec *s, size_t gpu)
{
    return s->finished && gpu < s->gpus.n ? s->clipped[gpu] : 0;
}

int wl_sweep_spec_finish(wl_sweep_spec *s, wl_error *err)
{
    if (s->finished)
        return WL_OK;
    int rc = finish(s, err);
    /* decode's two launch modes answer different questions; ttft_ms in
     * particular does not grow with --batch under graphs */
    if (!rc && !s->traces.n && wl_sweep_spec_has_mode(s, WL_MODE_DECODE) &&
        s->opts.launch == WL_LAUNCH_GRAPHS)
        rc = wl_sweep_i_add_text(&s->notes,
                                 "decode with --launch graphs is a continuous-batching server's "
                                 "steady state: --batch requests running, each step replayed from "
                                 "a CUDA graph; ttft_ms is one arriving request's own prefill with "
                                 "no queue, whatever --batch (--launch eager: static batching, "
                                 "ttft_ms the batch's prefill)");
    if (rc == WL_ENOMEM)
        wl_error_set(err, "sweep", 0, "", "out of memory");
    if (!rc)
        s->finished = 1;
    return rc;
}
