/* Binding measured rows to workloads; prediction and accuracy metrics. */
#include "calib_internal.h"
#include "../presets/wattlas_presets.h"
#include "../results/wattlas_results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    char key[256];
    wl_core_workload *wl;
    wl_core_evaluator *ev;
    int traced;
    const char *reason;
    char reason_buf[512];
    size_t n_rel, n_abs; /* its rows of relative and of absolute time (n_rel:
                            predictions scaled) */
    double scale;  /* by this, the fit of its rows at the GPU in place */
} wl_calib_wl;

struct wl_calib_problem {
    wl_core_gpu gpu;
    const wl_calib_set *set;
    size_t n;
    int *wl_of_row;      /* -1: not modelled */
    const char **reason; /* per row when not modelled */
    const char **bad;    /* per row when its measurement is impossible */
    char *bad_buf;       /* storage for bad[] texts, 160 bytes per row */
    wl_calib_wl *wls;
    size_t nwl;
};

/* Loads the row's trace from the first of DIRS (a comma-separated list of
 * directories) that has DIR/<model>_<dtype>_b<batch>[_s<seq>]_<mode>.json,
 * or the same gzipped (as torch.profiler and 'wattlas.measure profile'
 * write profiles): 1 found and loaded, 0 absent, -1 present but
 * unreadable (reason set). */
static int try_trace(const char *dirs, const wl_calib_row *r, const char *dtype,
                     wl_calib_wl *w)
{
    char seq[32] = "";
    if (r->seq > 0)
        snprintf(seq, sizeof seq, "_s%lld", r->seq);
    /* a trace is named by a model's name: one with a '/' would reach out
     * of the folder (issue 77) */
    if (strchr(r->model, '/'))
        return 0;
    for (const char *d = dirs; d && *d;) {
        size_t len = strcspn(d, ",");
        for (int gz = 0; gz < 2; gz++) {
            char *path = wl_core_strprintf("%.*s/%s_%s_b%lld%s_%s.json%s", (int)len, d, r->model,
                                           dtype, r->batch, seq, r->mode, gz ? ".gz" : "");
            if (!path) {
                snprintf(w->reason_buf, sizeof w->reason_buf, "out of memory");
                return -1;
            }
            struct stat st;
            if (stat(path, &st) != 0) {
                free(path);
                continue;
            }
            wl_error err = {0};
            int rc = wl_core_trace_load(path, &w->wl, &err);
            free(path);
            if (rc) {
                wl_error_format(&err, w->reason_buf, sizeof w->reason_buf);
                return -1;
            }
            /* the row's stack decides its ops' kernels (EnergAIzer's A100
             * rows: hf4) */
            wl_stack stk = WL_STACK_HF5;
            if (r->stack[0])
                wl_stack_parse(r->stack, &stk);
            if (wl_core_workload_set_stack(w->wl, stk)) {
                snprintf(w->reason_buf, sizeof w->reason_buf, "out of memory");
                return -1;
            }
            w->traced = 1;
            return 1;
        }
        d += len;
        d += *d == ',';
    }
    return 0;
}

/* The mode and its options from the row's columns, with predict's defaults
 * where a column is absent or empty (a train row: AdamW with fp32 master
 * weights; a decode row: eager launches; its gen_tokens has no default, as
 * the generation's length is most of what it measures). */
static int row_shape(const wl_calib_row *r, wl_core_shape *sh, char *why, size_t n)
{
    if (wl_mode_parse(r->mode, &sh->mode)) {
        snprintf(why, n, "unknown mode '%s' (prefill, train or decode)", r->mode);
        return -1;
    }
    sh->grad_accum = 1;
    if (r->optimizer[0] && wl_optimizer_parse(r->optimizer, &sh->optimizer)) {
        snprintf(why, n, "unknown optimizer '%s' (adamw, sgd or none)", r->optimizer);
        return -1;
    }
    if (r->master_dtype[0] && strcmp(r->master_dtype, "fp32") && strcmp(r->master_dtype, "none")) {
        snprintf(why, n, "unknown master_dtype '%s' (fp32 or none)", r->master_dtype);
        return -1;
    }
    sh->master_none = strcmp(r->master_dtype, "none") == 0;
    if (r->launch[0] && wl_launch_parse(r->launch, &sh->launch)) {
        snprintf(why, n, "unknown launch '%s' (eager or graphs)", r->launch);
        return -1;
    }
    if (r->stack[0] && wl_stack_parse(r->stack, &sh->stack)) {
        snprintf(why, n, "unknown stack '%s' (hf5 or hf4)", r->stack);
        return -1;
    }
    if (r->impl[0] && wl_impl_parse(r->impl, &sh->impl)) {
        snprintf(why, n, "unknown impl '%s' (hf-eager or fused)", r->impl);
        return -1;
    }
    if (sh->mode == WL_MODE_DECODE && r->gen_tokens <= 0) {
        snprintf(why, n, "a decode row needs gen_tokens (the tokens generated)");
        return -1;
    }
    sh->gen = r->gen_tokens;
    return 0;
}

/* An fp32 row from a half-precision trace of the same shape, retyped as
 * eager PyTorch runs the model in fp32 (wl_core_workload_retype). */
static int try_retyped_trace(const char *dir, const wl_calib_row *r, wl_dtype dt,
                             wl_calib_wl *w)
{
    static const char *const halves[] = {"bf16", "fp16"};
    if (!dir || dt != WL_DT_FP32)
        return 0;
    for (int i = 0; i < 2; i++) {
        int got = try_trace(dir, r, halves[i], w);
        if (got <= 0) {
            if (got < 0)
                return -1;
            continue;
        }
        wl_core_workload *f32 = NULL;
        wl_error err = {0};
        int rc = wl_core_workload_retype(w->wl, WL_DT_FP32, &f32, &err);
        wl_core_workload_free(w->wl);
        w->wl = f32;
        if (rc) {
            wl_error_format(&err, w->reason_buf, sizeof w->reason_buf);
            w->traced = 0;
            return -1;
        }
        return 1;
    }
    return 0;
}

/* Where a row's kernels come from, first match wins: an exact trace in
 * traces_dir (--traces: traces over builders); the native builder; an fp32
 * row from a bf16/fp16 trace in traces_dir or fallback_dir, retyped; an
 * exact trace in fallback_dir (the traces recorded beside the
 * measurements, for models with no builder). */
static int build_for_row(const wl_calib_row *r, const char *source, const char *traces_dir,
                         const char *fallback_dir,
                         wl_calib_wl *w)
{
    wl_dtype dt;
    wl_attention at;
    if (wl_dtype_parse(r->dtype, &dt)) {
        snprintf(w->reason_buf, sizeof w->reason_buf, "unknown dtype '%s'", r->dtype);
        return -1;
    }
    /* an empty attention column is the eager path (the shared data's
     * untagged rows ran it); sdpa's fused kernels are modelled as flash */
    if (!r->attention[0] || strcmp(r->attention, "sdpa") == 0)
        at = r->attention[0] ? WL_ATTN_FLASH : WL_ATTN_EAGER;
    else if (wl_attention_parse(r->attention, &at)) {
        snprintf(w->reason_buf, sizeof w->reason_buf, "unknown attention '%s'", r->attention);
        return -1;
    }
    const char *dn = wl_dtype_name(dt); /* traces are named by the canonical dtype */
    int got = try_trace(traces_dir, r, dn, w);
    if (got)
        return got > 0 ? 0 : -1;
    wl_error err = {0};
    wl_core_model m;
    /* a model the row names by a file is found under the data's folder (a
     * hub id, "org/name", is a name) */
    char model[4096];
    int named = wl_preset_model_resolve(r->model) != NULL;
    int found = named || !wl_results_row_path(source, r->line, "model", r->model, model,
                                              sizeof model, &err);
    if (!found || wl_preset_model_load(named ? r->model : model, &m, &err)) {
        const char *dirs[2] = {traces_dir, fallback_dir};
        for (int i = 0; i < 2; i++) {
            if ((got = try_retyped_trace(dirs[i], r, dt, w)) != 0)
                return got > 0 ? 0 : -1;
        }
        if ((got = try_trace(fallback_dir, r, dn, w)) != 0)
            return got > 0 ? 0 : -1;
        if (found)
            snprintf(w->reason_buf, sizeof w->reason_buf, "unknown model '%s' and no trace",
                     r->model);
        else
            snprintf(w->reason_buf, sizeof w->reason_buf, "%s, and no trace", err.text);
        return -1;
    }
    int vision = wl_core_model_is_vision(&m);
    wl_core_shape sh = {.batch = r->batch, .seq = vision ? 1 : r->seq, .dtype = dt, .attention = at};
    if (row_shape(r, &sh, w->reason_buf, sizeof w->reason_buf))
        return -1;
    if (r->seq <= 0 && !vision) {
        snprintf(w->reason_buf, sizeof w->reason_buf, "model '%s' needs seq", r->model);
        return -1;
    }
    wl_core_scope scope = !strcmp(r->scope, "layer") ? WL_SCOPE_LAYER
                          : !strcmp(r->scope, "layer-in-model") ? WL_SCOPE_LAYER_IN_MODEL
                                                                : WL_SCOPE_MODEL;
    if (scope != WL_SCOPE_MODEL && m.style == WL_STYLE_RESNET) {
        snprintf(w->reason_buf, sizeof w->reason_buf, "a ResNet has no transformer layer (scope %s)",
                 r->scope);
        return -1;
    }
    if (wl_core_build_scope(&m, &sh, scope, &w->wl, &err)) {
        wl_error_format(&err, w->reason_buf, sizeof w->reason_buf);
        return -1;
    }
    return 0;
}

/* Each relative-time workload's scale: exp(mean ln(measured / predicted
 * time)) over its rows with a usable measurement, the factor that fits
 * them best in the least-squares sense the fit uses (ln ratios). */
static void relative_scales(wl_calib_problem *p)
{
    for (size_t w = 0; w < p->nwl; w++) {
        wl_calib_wl *x = &p->wls[w];
        if (!x->n_rel || !x->ev)
            continue;
        double s = 0;
        size_t n = 0;
        for (size_t i = 0; i < p->n; i++) {
            const wl_calib_row *r = wl_calib_row_at(p->set, i);
            if (p->wl_of_row[i] != (int)w || p->bad[i] || !(r->time_ms > 0))
                continue;
            wl_core_op op = {.sm_clock_mhz = r->sm_clock_mhz,
                             .power_limit_w = isnan(r->power_limit_w) ? 0 : r->power_limit_w};
            wl_core_result res;
            if (wl_core_evaluator_run(x->ev, &op, &res) || !(res.time_ms > 0))
                continue;
            s += log(r->time_ms / res.time_ms);
            n++;
        }
        x->scale = n ? exp(s / (double)n) : 1.0;
    }
}

static int out_of_range(const wl_core_gpu *g, double mhz)
{
    return (g->sm_clock_max_mhz > 0 && mhz > g->sm_clock_max_mhz * 1.02) ||
           (g->sm_clock_min_mhz > 0 && mhz < g->sm_clock_min_mhz * 0.98);
}

/* "lines 2, 3, 4 and 5 more" for the rows of workload w with time_relative
 * equal to rel */
static void lines_of(const wl_calib_problem *p, int w, int rel, char *buf, size_t len)
{
    size_t l = 0, k = 0, more = 0;
    buf[0] = 0;
    for (size_t i = 0; i < p->n; i++) {
        const wl_calib_row *r = wl_calib_row_at(p->set, i);
        if (p->wl_of_row[i] != w || (r->time_relative != 0) != rel)
            continue;
        if (k++ < 4 && l < len)
            l += (size_t)snprintf(buf + l, len - l, "%s%d", k > 1 ? ", " : "", r->line);
        else
            more++;
    }
    if (more && l < len)
        snprintf(buf + l, len - l, " and %zu more", more);
}

/* A workload whose rows say both "this is how long it takes" and "this is
 * only how time changes" has no one reading: its absolute times would be
 * scaled away without a word (issue 77). The rows are named. */
static void mixed_error(const wl_calib_problem *p, int w, wl_error *err)
{
    size_t first = 0;
    while (first < p->n && (p->wl_of_row[first] != w ||
                            !wl_calib_row_at(p->set, first)->time_relative))
        first++;
    const wl_calib_row *r = wl_calib_row_at(p->set, first);
    char key[256], rel[96], abs_[96];
    wl_calib_workload_key(r, key, sizeof key);
    lines_of(p, w, 1, rel, sizeof rel);
    lines_of(p, w, 0, abs_, sizeof abs_);
    wl_error_set(err, wl_calib_source(p->set), r->line, "time_relative",
                 "workload %s mixes rows of relative time (time_relative = 1: lines %s) with rows "
                 "of absolute time (lines %s); a workload's times are all relative or all absolute",
                 key, rel, abs_);
}

int wl_calib_problem_create(const wl_core_gpu *gpu, const wl_calib_set *set,
                            const char *traces_dir, wl_calib_problem **out, wl_error *err)
{
    *out = NULL;
    wl_calib_problem *p = calloc(1, sizeof *p);
    if (!p)
        return WL_ENOMEM;
    p->gpu = *gpu;
    p->set = set;
    p->n = wl_calib_count(set);
    p->wl_of_row = calloc(p->n, sizeof *p->wl_of_row);
    p->reason = calloc(p->n, sizeof *p->reason);
    p->bad = calloc(p->n, sizeof *p->bad);
    p->bad_buf = calloc(p->n, 160);
    p->wls = calloc(p->n, sizeof *p->wls);
    if (!p->wl_of_row || !p->reason || !p->bad || !p->bad_buf || !p->wls) {
        wl_calib_problem_free(p);
        return WL_ENOMEM;
    }
    for (size_t i = 0; i < p->n; i++) {
        const wl_calib_row *r = wl_calib_row_at(set, i);
        char key[256];
        snprintf(key, sizeof key, "%s|%s|%lld|%lld|%s|%s|%s|%s|%lld|%s|%s|%s|%s", r->model, r->dtype,
                 r->batch, r->seq, r->attention, r->mode, r->optimizer, r->master_dtype,
                 r->gen_tokens, r->launch, r->stack, r->impl, r->scope);
        size_t w;
        for (w = 0; w < p->nwl; w++)
            if (strcmp(p->wls[w].key, key) == 0)
                break;
        if (w == p->nwl) {
            wl_calib_wl *nw = &p->wls[p->nwl++];
            snprintf(nw->key, sizeof nw->key, "%s", key);
            nw->scale = 1.0;
            if (build_for_row(r, wl_calib_source(set), traces_dir, wl_calib_fallback_traces(set),
                              nw) == 0) {
                if (wl_core_evaluator_create(&p->gpu, nw->wl, NULL, &nw->ev)) {
                    wl_calib_problem_free(p);
                    return WL_ENOMEM;
                }
            } else {
                nw->reason = nw->reason_buf;
            }
        }
        if (p->wls[w].reason) {
            p->wl_of_row[i] = -1;
            p->reason[i] = p->wls[w].reason;
        } else if (!wl_preset_gpu_names(r->gpu, gpu->id)) {
            p->wl_of_row[i] = -1;
            p->reason[i] = "row is for another GPU";
        } else {
            p->wl_of_row[i] = (int)w;
        }
        char *b = p->bad_buf + 160 * i;
        /* a clock the board cannot lock is not modelled (issue 77: one row
         * at 99999 MHz on a 210-1410 MHz A100 was predicted at 9714 MHz and
         * took in-sample power from 1.70% to 9.50%); 2% either side for a
         * clock a tool rounds */
        if (p->wl_of_row[i] >= 0 && out_of_range(gpu, r->sm_clock_mhz)) {
            snprintf(b, 160, "clock %.0f MHz is outside the GPU's %.0f-%.0f MHz", r->sm_clock_mhz,
                     gpu->sm_clock_min_mhz, gpu->sm_clock_max_mhz);
            p->wl_of_row[i] = -1;
            p->reason[i] = b;
            continue;
        }
        /* measurements that cannot be physical are reported and excluded */
        double idle = wl_core_gpu_idle_w(gpu, r->measured_clock_mhz);
        double implied = r->time_ms > 0 ? r->energy_j / r->time_ms * 1e3 : 0;
        int pw = wl_calib_row_has_power(r); /* else time only */
        if (!(r->time_ms > 0) || (pw && !(r->energy_j > 0 && r->power_w > 0)))
            snprintf(b, 160, pw ? "time, energy or power is not positive" : "time is not positive");
        /* only a measured idle table can rule a row out: below a rule-based
         * idle curve it is the rule that is wrong, and the row must count */
        else if (pw && !(gpu->vf_rule & WL_VF_RULE_IDLE) && r->power_w < 0.9 * idle)
            snprintf(b, 160, "power %.1f W is below the GPU's idle power %.1f W at %.0f MHz",
                     r->power_w, idle, r->measured_clock_mhz);
        else if (pw && fabs(implied / r->power_w - 1) > 0.05)
            snprintf(b, 160, "power %.2f W disagrees with energy/time = %.2f W", r->power_w,
                     implied);
        /* a board holds its average power to its limit (the row's, or the
         * GPU's): far above it, the row is another GPU's or in other units */
        else if (pw && (isnan(r->power_limit_w) ? gpu->power_limit_w : r->power_limit_w) > 0 &&
                 r->power_w > 1.15 * (isnan(r->power_limit_w) ? gpu->power_limit_w : r->power_limit_w))
            snprintf(b, 160, "power %.1f W is above the board's %.0f W limit (another GPU's row, "
                     "or other units?)", r->power_w,
                     isnan(r->power_limit_w) ? gpu->power_limit_w : r->power_limit_w);
        if (!b[0] && (r->measured_clock_mhz > r->sm_clock_mhz * 1.02 ||
                      !(r->measured_clock_mhz > 0)))
            snprintf(b, 160, "measured clock %.0f MHz is above the requested %.0f MHz",
                     r->measured_clock_mhz, r->sm_clock_mhz);
        if (b[0])
            p->bad[i] = b;
        if (p->wl_of_row[i] >= 0) {
            wl_calib_wl *x = &p->wls[p->wl_of_row[i]];
            x->n_rel += r->time_relative != 0;
            x->n_abs += r->time_relative == 0;
        }
    }
    for (size_t w = 0; w < p->nwl; w++)
        if (p->wls[w].n_rel && p->wls[w].n_abs) {
            mixed_error(p, (int)w, err);
            wl_calib_problem_free(p);
            return WL_EINVAL;
        }
    relative_scales(p);
    *out = p;
    return WL_OK;
}

void wl_calib_problem_free(wl_calib_problem *p)
{
    if (!p)
        return;
    for (size_t w = 0; p->wls && w < p->nwl; w++) {
        wl_core_evaluator_free(p->wls[w].ev);
        wl_core_workload_free(p->wls[w].wl);
    }
    free(p->wls);
    free(p->wl_of_row);
    free(p->reason);
    free(p->bad);
    free(p->bad_buf);
    free(p);
}

int wl_calib_row_ok(const wl_calib_problem *p, size_t row, const char **reason)
{
    if (row >= p->n)
        return 0;
    if (p->wl_of_row[row] < 0) {
        if (reason)
            *reason = p->reason[row];
        return 0;
    }
    return 1;
}

int wl_calib_row_scored(const wl_calib_problem *p, size_t row, const char **why)
{
    if (!wl_calib_row_ok(p, row, why))
        return 0;
    if (p->bad[row]) {
        if (why)
            *why = p->bad[row];
        return 0;
    }
    return 1;
}

int wl_calib_row_traced(const wl_calib_problem *p, size_t row)
{
    return row < p->n && p->wl_of_row[row] >= 0 && p->wls[p->wl_of_row[row]].traced;
}

int wl_calib_row_repeated(const wl_calib_problem *p, size_t row)
{
    return row < p->n && p->wl_of_row[row] >= 0 &&
           wl_core_workload_repeated(p->wls[p->wl_of_row[row]].wl);
}

unsigned wl_calib_row_phases(const wl_calib_problem *p, size_t row)
{
    if (!(row < p->n && p->wl_of_row[row] >= 0))
        return 0;
    const wl_core_workload *wl = p->wls[p->wl_of_row[row]].wl;
    unsigned m = 0;
    for (size_t i = 0, n = wl_core_workload_count(wl); i < n; i++)
        m |= 1u << wl_core_workload_kernel(wl, i)->phase;
    return m;
}

void wl_calib_problem_set_gpu(wl_calib_problem *p, const wl_core_gpu *gpu)
{
    p->gpu = *gpu;
    for (size_t w = 0; w < p->nwl; w++)
        if (p->wls[w].ev)
            wl_core_evaluator_set_gpu(p->wls[w].ev, gpu);
    relative_scales(p);
}

void wl_calib_i_problem_exact(wl_calib_problem *p, int exact)
{
    for (size_t w = 0; w < p->nwl; w++)
        wl_core_evaluator_set_exact(p->wls[w].ev, exact);
}

const wl_core_gpu *wl_calib_problem_gpu(const wl_calib_problem *p) { return &p->gpu; }

int wl_calib_i_workload_of(const wl_calib_problem *p, size_t row)
{
    return wl_calib_row_ok(p, row, NULL) ? p->wl_of_row[row] : -1;
}

int wl_calib_predict(const wl_calib_problem *p, size_t row, wl_core_result *res)
{
    return wl_calib_i_predict_cached(p, row, NULL, res);
}

int wl_calib_i_predict_cached(const wl_calib_problem *p, size_t row,
                              wl_core_throttle_cache *cache, wl_core_result *res)
{
    if (!wl_calib_row_ok(p, row, NULL))
        return WL_EUNSUPPORTED;
    const wl_calib_row *r = wl_calib_row_at(p->set, row);
    wl_core_op op = {.sm_clock_mhz = r->sm_clock_mhz,
                     .power_limit_w = isnan(r->power_limit_w) ? 0 : r->power_limit_w};
    const wl_calib_wl *w = &p->wls[p->wl_of_row[row]];
    int rc = wl_core_evaluator_run_cached(w->ev, &op, cache, res);
    if (!rc && w->n_rel) {
        /* the workload's unstated amount of work: power is a rate and
         * stands; time and energy scale together */
        res->time_ms *= w->scale;
        res->energy_j *= w->scale;
    }
    return rc;
}

static int scored(const wl_calib_problem *p, const unsigned char *mask, size_t i)
{
    if (mask && !mask[i])
        return 0;
    return wl_calib_row_scored(p, i, NULL);
}

/* Scored and with an energy to compare clocks by (not time only). */
static int scored_energy(const wl_calib_problem *p, const unsigned char *mask, size_t i)
{
    return scored(p, mask, i) && wl_calib_row_has_power(wl_calib_row_at(p->set, i));
}

/* Under a power limit the clock is the controller's, not the row's axis. */
static int limited_row(const wl_calib_row *r) { return isfinite(r->power_limit_w); }

/* A row measured slower than a lower clock of the same workload by more
 * than WL_CALIB_STALL_FRAC is a host stall, not the GPU at that clock: at
 * a locked clock and no power limit a kernel sequence cannot take longer
 * at a higher clock (the memory clock is fixed), and repeat noise is under
 * 3% in time (shared/data README: a sweep repeated in one session), while
 * launch-bound GPT-2 b8 s128 on the A100 PCIe jumps 25% from one clock to
 * the next (9.96 ms at 780 MHz between 8.01 at 690 and 7.90 at 870). Such
 * a row says nothing about the energy at its clock, so the regret neither
 * takes it as the measured best nor scores a prediction by it. Each clock
 * is compared on the clock the row measured where it states one. */
#define WL_CALIB_STALL_FRAC 0.10

static double row_clock(const wl_calib_row *r)
{
    return isfinite(r->measured_clock_mhz) && r->measured_clock_mhz > 0 ? r->measured_clock_mhz
                                                                        : r->sm_clock_mhz;
}

/* A row judged or compared: time and a clock, no power limit. */
typedef struct {
    int wl;
    double clock;
    size_t row;
} stall_key;

static int stall_cmp(const void *a, const void *b)
{
    const stall_key *x = a, *y = b;
    if (x->wl != y->wl)
        return x->wl < y->wl ? -1 : 1;
    return x->clock < y->clock ? -1 : x->clock > y->clock;
}

/* One pass over each workload's rows by clock, the fastest lower clock
 * carried along: O(n log n) for the whole set (a row against every other
 * row was O(n^2), and ran twice per score). */
int wl_calib_stalled_rows(const wl_calib_problem *p, const unsigned char *mask,
                          unsigned char *stalled)
{
    memset(stalled, 0, p->n);
    stall_key *k = p->n ? malloc(p->n * sizeof *k) : NULL;
    if (p->n && !k)
        return WL_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < p->n; i++) {
        const wl_calib_row *r = wl_calib_row_at(p->set, i);
        double f = row_clock(r);
        if (!limited_row(r) && r->time_ms > 0 && isfinite(f))
            k[m++] = (stall_key){p->wl_of_row[i], f, i};
    }
    if (m)
        qsort(k, m, sizeof *k, stall_cmp);
    for (size_t i = 0; i < m;) {
        double best = INFINITY; /* fastest scored row at a lower clock */
        size_t g = i;
        while (g < m && k[g].wl == k[i].wl) {
            size_t e = g;
            while (e < m && k[e].wl == k[g].wl && k[e].clock == k[g].clock)
                e++;
            for (size_t j = g; j < e; j++)
                stalled[k[j].row] = wl_calib_row_at(p->set, k[j].row)->time_ms >
                                    best * (1.0 + WL_CALIB_STALL_FRAC);
            for (size_t j = g; j < e; j++)
                if (scored(p, mask, k[j].row))
                    best = fmin(best, wl_calib_row_at(p->set, k[j].row)->time_ms);
            g = e;
        }
        i = g;
    }
    free(k);
    return WL_OK;
}

static void regrets_of(const wl_calib_problem *p, const unsigned char *mask,
                       const unsigned char *stalled, unsigned char *done,
                       wl_calib_regret_fn fn, void *user)
{
    for (size_t i = 0; i < p->n; i++) {
        if (done[i] || !scored_energy(p, mask, i))
            continue;
        int w = p->wl_of_row[i];
        size_t cnt = 0, best_m = i, best_p = i;
        double em = INFINITY, ep = INFINITY;
        for (size_t j = i; j < p->n; j++) {
            if (p->wl_of_row[j] != w || !scored_energy(p, mask, j))
                continue;
            done[j] = 1;
            if (stalled[j])
                continue;
            cnt++;
            const wl_calib_row *r = wl_calib_row_at(p->set, j);
            wl_core_result res;
            if (wl_calib_predict(p, j, &res))
                continue;
            if (r->energy_j < em) {
                em = r->energy_j;
                best_m = j;
            }
            if (res.energy_j < ep) {
                ep = res.energy_j;
                best_p = j;
            }
        }
        if (cnt < 5)
            continue;
        char key[256];
        wl_calib_workload_key(wl_calib_row_at(p->set, i), key, sizeof key);
        double regret = (wl_calib_row_at(p->set, best_p)->energy_j / em - 1.0) * 100.0;
        fn(user, key, wl_calib_row_at(p->set, best_m), wl_calib_row_at(p->set, best_p), regret);
    }
}

void wl_calib_regrets(const wl_calib_problem *p, const unsigned char *mask,
                      wl_calib_regret_fn fn, void *user)
{
    unsigned char *flags = calloc(2 * p->n + 1, 1);
    if (flags && !wl_calib_stalled_rows(p, mask, flags))
        regrets_of(p, mask, flags, flags + p->n, fn, user);
    free(flags);
}

void wl_calib_point_text(const wl_calib_row *r, char *buf, size_t len)
{
    if (limited_row(r))
        snprintf(buf, len, "%.0f W", r->power_limit_w);
    else
        snprintf(buf, len, "%.0f MHz", r->sm_clock_mhz);
}

typedef struct {
    wl_calib_metrics *m;
    double sum;
} regret_acc;

static void acc_regret(void *user, const char *wl, const wl_calib_row *bm,
                       const wl_calib_row *bp, double regret)
{
    (void)bm;
    (void)bp;
    regret_acc *a = user;
    a->m->n_regret++;
    a->sum += regret;
    if (regret > a->m->worst_regret || a->m->n_regret == 1) {
        a->m->worst_regret = regret;
        snprintf(a->m->worst_regret_workload, sizeof a->m->worst_regret_workload, "%s", wl);
    }
}

void wl_calib_mape_text(char *buf, size_t len, size_t n, size_t np, double mape_time,
                        double mape_power, double mape_energy)
{
    if (np == n)
        snprintf(buf, len, "time %.2f%%  power %.2f%%  energy %.2f%%", mape_time, mape_power,
                 mape_energy);
    else if (np)
        snprintf(buf, len, "time %.2f%%  power %.2f%%  energy %.2f%% (power and energy: the %zu "
                 "rows with power)", mape_time, mape_power, mape_energy, np);
    else
        snprintf(buf, len, "time %.2f%% (rows of time only)", mape_time);
}

int wl_calib_score(const wl_calib_problem *p, const unsigned char *mask, wl_calib_metrics *m)
{
    memset(m, 0, sizeof *m);
    double st = 0, sp = 0, se = 0;
    for (size_t i = 0; i < p->n; i++) {
        if (!scored(p, mask, i))
            continue;
        wl_core_result res;
        if (wl_calib_predict(p, i, &res))
            continue;
        const wl_calib_row *r = wl_calib_row_at(p->set, i);
        st += fabs(res.time_ms / r->time_ms - 1.0);
        m->n++;
        if (!wl_calib_row_has_power(r))
            continue;
        sp += fabs(res.power_w / r->power_w - 1.0);
        se += fabs(res.energy_j / r->energy_j - 1.0);
        m->n_power++;
    }
    if (m->n)
        m->mape_time = 100.0 * st / (double)m->n;
    if (m->n_power) {
        m->mape_power = 100.0 * sp / (double)m->n_power;
        m->mape_energy = 100.0 * se / (double)m->n_power;
    }
    /* the stalls once, for their count and for the regrets */
    unsigned char *flags = calloc(2 * p->n + 1, 1);
    if (!flags || wl_calib_stalled_rows(p, mask, flags)) {
        free(flags);
        return WL_ENOMEM;
    }
    for (size_t i = 0; i < p->n; i++)
        m->n_stalled += scored_energy(p, mask, i) && flags[i];
    regret_acc a = {m, 0};
    regrets_of(p, mask, flags, flags + p->n, acc_regret, &a);
    free(flags);
    if (m->n_regret)
        m->mean_regret = a.sum / (double)m->n_regret;
    return m->n ? WL_OK : WL_EINVAL;
}

const wl_calib_set *wl_calib_problem_set(const wl_calib_problem *p) { return p->set; }

int wl_calib_row_interval(wl_calib_problem *p, size_t row, const wl_calib_uncertainty *u,
                          double level, const wl_core_result *center, wl_calib_iv *iv)
{
    if (!wl_calib_row_ok(p, row, NULL))
        return WL_EUNSUPPORTED;
    const wl_calib_row *r = wl_calib_row_at(p->set, row);
    wl_core_op op = {0};
    op.sm_clock_mhz = r->sm_clock_mhz;
    return wl_calib_interval(p->wls[p->wl_of_row[row]].ev, &p->gpu, u, &op, level, center, iv);
}
