/* wattlas._wattlas: _cluster, the multi-GPU configurations, searches and
 * their rows, as 'wattlas cluster'. */
#include "wattlas_py.h"

#include <math.h>
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One (key, value) of a configuration or a search. Values come as text
 * (the package writes them as the command line takes them). */
static int cluster_key(wl_cluster_config *c, wl_cluster_search_spec *sp, int *layers,
                       const char *key, const char *v, wl_error *err)
{
    static const struct {
        const char *key;
        int off, lo, hi;
    } ints[] = {
        {"tp", offsetof(wl_cluster_config, tp), 1, 1 << 20},
        {"pp", offsetof(wl_cluster_config, pp), 1, 1 << 20},
        {"dp", offsetof(wl_cluster_config, dp), 1, 1 << 24},
        {"vp", offsetof(wl_cluster_config, vp), 1, 1024},
        {"ep", offsetof(wl_cluster_config, ep), 1, 1 << 20},
        {"cp", offsetof(wl_cluster_config, cp), 1, 1 << 16},
        {"zero", offsetof(wl_cluster_config, zero), 0, 1},
        {"sequence_parallel", offsetof(wl_cluster_config, sequence_parallel), 0, 1},
        {"tp_comm_overlap", offsetof(wl_cluster_config, tp_comm_overlap), 0, 1},
        {"ep_overlap", offsetof(wl_cluster_config, ep_overlap), 0, 1},
        {"no_dp_overlap", offsetof(wl_cluster_config, no_dp_overlap), 0, 1},
    };
    long long n;
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++)
        if (!strcmp(key, ints[i].key)) {
            if (wl_core_parse_int(v, ints[i].lo, ints[i].hi, key, 0, key, &n, err))
                return WL_EINVAL;
            *(int *)((char *)c + ints[i].off) = (int)n;
            if (!strcmp(key, "zero"))
                sp->zero = 1u << n;
            if (!strcmp(key, "sequence_parallel"))
                sp->sequence_parallel = 1u << n;
            return WL_OK;
        }
    if (!strcmp(key, "global_batch") || !strcmp(key, "micro_batch") || !strcmp(key, "seq") ||
        !strcmp(key, "gen"))
        return wl_core_parse_int(v, 1, !strcmp(key, "seq") ? WL_MAX_SEQ : WL_MAX_BATCH, key, 0,
                                 key, !strcmp(key, "global_batch") ? &c->global_batch
                                      : !strcmp(key, "micro_batch") ? &c->micro_batch
                                      : !strcmp(key, "seq")         ? &c->seq
                                                                    : &c->gen, err);
    if (!strcmp(key, "capacity_factor"))
        return wl_core_parse_real(v, 0.01, 64, key, 0, key, &c->capacity_factor, err);
    int bad = 0;
    if (!strcmp(key, "mode"))
        bad = wl_mode_parse(v, &c->mode);
    else if (!strcmp(key, "dtype"))
        bad = wl_dtype_parse(v, &c->dtype);
    else if (!strcmp(key, "attention"))
        bad = wl_attention_parse(v, &c->attention);
    else if (!strcmp(key, "launch"))
        bad = wl_launch_parse(v, &c->launch);
    else if (!strcmp(key, "finetune"))
        bad = wl_finetune_parse(v, &c->finetune);
    else if (!strcmp(key, "lora_targets"))
        bad = wl_lora_targets_parse(v, &c->lora_targets);
    else if (!strcmp(key, "lora_rank")) {
        if (wl_core_parse_int(v, 1, 65536, key, 0, key, &n, err))
            return WL_EINVAL;
        c->lora_rank = (int)n;
        return WL_OK;
    } else if (!strcmp(key, "freeze")) {
        wl_error_set(err, key, 0, key, "the cluster models LoRA (finetune='lora'); a frozen "
                     "prefix of layers across pipeline stages is not modelled");
        return WL_EINVAL;
    }
    else if (!strcmp(key, "partition") &&
             !wl_cluster_partition_parse(v, &c->partition, layers, &c->nstage_layers, err)) {
        /* a name, or the layers of each stage ("5,6,6,7") */
        c->stage_layers = c->partition == WL_CLUSTER_PART_LIST ? layers : NULL;
        sp->partitions = c->partition == WL_CLUSTER_PART_LIST ? 0 : 1u << c->partition;
        return WL_OK;
    } else if (!strcmp(key, "recompute") || !strcmp(key, "schedule") || !strcmp(key, "partition")) {
        /* one value, or for a search a comma list of those to try */
        char buf[256];
        if (strlen(v) >= sizeof buf) {
            wl_error_set(err, key, 0, key, "too long a list of values");
            return WL_EINVAL;
        }
        snprintf(buf, sizeof buf, "%s", v);
        unsigned mask = 0;
        int count = 0;
        for (char *tok = strtok(buf, ","); tok && !bad; tok = strtok(NULL, ","), count++) {
            if (!strcmp(key, "recompute")) {
                wl_recompute r;
                bad = wl_recompute_parse(tok, &r);
                c->recompute = r;
                mask |= 1u << r;
            } else if (!strcmp(key, "schedule")) {
                const wl_cluster_schedule_type *t = wl_cluster_schedule_lookup(tok);
                bad = !t;
                c->schedule = t;
                for (int i = 0; t && wl_cluster_schedule_at(i); i++)
                    if (wl_cluster_schedule_at(i) == t)
                        mask |= 1u << i;
            } else { /* a search's partitions to try: uniform,balanced */
                wl_cluster_partition pa;
                bad = wl_cluster_partition_lookup(tok, &pa);
                c->partition = pa;
                mask |= 1u << pa;
            }
        }
        if (!strcmp(key, "recompute"))
            sp->recomputes = mask;
        else if (!strcmp(key, "schedule"))
            sp->schedules = mask;
        else
            sp->partitions = mask;
    } else if (!strcmp(key, "max_tp") || !strcmp(key, "max_pp") || !strcmp(key, "max_vp") ||
               !strcmp(key, "max_micro_batch")) {
        if (wl_core_parse_int(v, 1, 1 << 20, key, 0, key, &n, err))
            return WL_EINVAL;
        if (!strcmp(key, "max_tp"))
            sp->max_tp = (int)n;
        else if (!strcmp(key, "max_pp"))
            sp->max_pp = (int)n;
        else if (!strcmp(key, "max_vp"))
            sp->max_vp = (int)n;
        else
            sp->max_micro_batch = n;
        return WL_OK;
    } else {
        wl_error_set(err, key, 0, key, "not an option of cluster");
        return WL_EINVAL;
    }
    if (bad) {
        wl_error_set(err, key, 0, key, "'%.60s' is not a value of %s", v, key);
        return WL_EINVAL;
    }
    return WL_OK;
}

/* Rows of configurations and results as columns; choice: a first column
 * naming the front's points (a search), or NULL. */
typedef struct {
    const wl_cluster_system *sys;
    const wl_core_model *m;
    const wl_cluster_config *cfgs;
    const wl_cluster_result *res;
    const char *const *choice;
    size_t n;
    double clock, tokens;
    const char *part_text;
} cluster_rows_ctx;

static int fill_cluster_rows(void *ctx, wl_results_writer *w)
{
    const cluster_rows_ctx *x = ctx;
    size_t off = x->choice ? 1 : 0;
    for (size_t i = 0; i < x->n; i++) {
        wl_results_cell c[WL_CLUSTER_ROW_COLS + 1];
        if (x->choice)
            c[0] = (wl_results_cell){x->choice[i], NAN};
        wl_cluster_row_cells(c + off, x->sys->id, x->m->id, &x->cfgs[i], &x->res[i], x->clock,
                             x->tokens, x->part_text);
        if (wl_results_writer_row(w, c))
            return WL_ENOMEM;
    }
    return WL_OK;
}

static PyObject *cluster_rows(const cluster_rows_ctx *x)
{
    size_t nc = WL_CLUSTER_ROW_COLS - WL_CLUSTER_ROW_NOPT, off = x->choice ? 1 : 0;
    wl_results_col cols[WL_CLUSTER_ROW_COLS + 1];
    if (x->choice)
        cols[0] = (wl_results_col)WL_RESULTS_COL("choice", WL_COL_TEXT, 0, 0);
    memcpy(cols + off, wl_cluster_row_cols(), nc * sizeof *cols);
    return wl_py_rows_as_columns(cols, nc + off, fill_cluster_rows, (void *)x);
}

/* One configuration's view (wl_cluster_view) as rows. */
typedef struct {
    const wl_cluster_system *sys;
    const wl_core_gpu *gpu;
    const wl_core_model *m;
    const wl_cluster_config *cfg;
    const wl_cluster_view *v;
    wl_cluster_view_info info;
    wl_error err;
    int rc;
} view_ctx;

static int fill_view(void *ctx, wl_results_writer *w)
{
    view_ctx *x = ctx;
    PyThreadState *ts = PyEval_SaveThread();
    x->rc = wl_cluster_view_rows(x->sys, x->gpu, x->m, x->cfg, x->v, w, &x->info, &x->err);
    PyEval_RestoreThread(ts);
    return x->rc;
}

/* A list of positive numbers up to 100000 (None: none) into l; what names
 * them in errors ("limits in W"). */
static int numbers_of(PyObject *o, const char *key, const char *what, wl_core_numlist *l,
                      wl_error *err)
{
    memset(l, 0, sizeof *l);
    if (!o || o == Py_None)
        return WL_OK;
    PyObject *seq = PySequence_Fast(o, "expected a list of numbers");
    if (!seq)
        return WL_EINVAL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int rc = n < 1 || n > 4096 ? WL_EINVAL : WL_OK;
    if (rc)
        wl_error_set(err, key, 0, key, "expected 1 to 4096 %s", what);
    if (!rc && !(l->v = malloc((size_t)n * sizeof *l->v)))
        rc = WL_ENOMEM;
    for (Py_ssize_t i = 0; !rc && i < n; i++) {
        double w = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
        if (PyErr_Occurred() || !isfinite(w) || w <= 0 || w > 100000) {
            PyErr_Clear();
            wl_error_set(err, key, 0, key, "expected %s, (0, 100000]", what);
            rc = WL_EINVAL;
        } else {
            l->v[l->n++] = w;
        }
    }
    Py_DECREF(seq);
    if (rc)
        wl_core_numlist_free(l);
    return rc;
}

/* A list of watts (None: none) into l. */
static int watts_of(PyObject *o, const char *key, wl_core_numlist *l, wl_error *err)
{
    return numbers_of(o, key, "limits in W", l, err);
}

/* The view of one configuration, as columns or (fmt) the command line's
 * text; the timeline (a path) written atomically. */
static PyObject *cluster_view(const wl_cluster_system *sys, const wl_core_gpu *gpu,
                              const wl_core_model *m, const wl_cluster_config *cfg,
                              PyObject *view, double clock, double tokens, const char *part_text)
{
    wl_cluster_view v;
    wl_cluster_view_default(&v);
    v.clock_mhz = clock;
    v.tokens = tokens;
    v.part_text = part_text;
    wl_error err = {0};
    const char *scope = NULL, *timeline = NULL, *fmt = NULL;
    PyObject *limits = NULL, *stage_limits = NULL, *slow = NULL, *clocks = NULL;
    static char *names[] = {"optimize", "stages", "frontier", "max_slowdown_pct", "energy_scope",
                            "power_limits", "stage_power_limits", "timeline", "fmt", "all",
                            "clocks", NULL};
    PyObject *empty = PyTuple_New(0);
    int ok = empty && PyArg_ParseTupleAndKeywords(empty, view, "|pppOzOOzzpO", names, &v.optimize,
                                                  &v.stages, &v.frontier, &slow, &scope, &limits,
                                                  &stage_limits, &timeline, &fmt, &v.all, &clocks);
    Py_XDECREF(empty);
    if (!ok)
        return NULL;
    if (slow && slow != Py_None) {
        v.max_slowdown_pct = PyFloat_AsDouble(slow);
        if (PyErr_Occurred() || !(v.max_slowdown_pct >= 0 && v.max_slowdown_pct <= 1000)) {
            PyErr_Clear();
            wl_error_set(&err, "max_slowdown_pct", 0, "max_slowdown_pct",
                         "expected a percentage, 0 to 1000");
            return wl_py_raise(WL_EINVAL, &err);
        }
    }
    if (scope && wl_cluster_energy_scope_lookup(scope, &v.scope)) {
        wl_error_set(&err, "energy_scope", 0, "energy_scope", "expected gpu or all, got '%.40s'",
                     scope);
        return wl_py_raise(WL_EINVAL, &err);
    }
    if (limits && limits != Py_None && !v.frontier &&
        (v.optimize || v.stages || timeline)) {
        wl_error_set(&err, "power_limits", 0, "power_limits",
                     "power_limits gives a row per limit (or, with frontier, the caps' "
                     "frontier); it does not combine with optimize, stages or timeline");
        return wl_py_raise(WL_EINVAL, &err);
    }
    wl_core_numlist lim, slim, clk;
    int rc = watts_of(limits, "power_limits", &lim, &err);
    if (!rc && (rc = watts_of(stage_limits, "stage_power_limits", &slim, &err)))
        wl_core_numlist_free(&lim);
    if (!rc && (rc = numbers_of(clocks, "clock", "clocks in MHz", &clk, &err))) {
        wl_core_numlist_free(&lim);
        wl_core_numlist_free(&slim);
    }
    if (!rc && clk.n > 1 && (v.optimize || v.stages || v.frontier || lim.n || timeline)) {
        wl_error_set(&err, "clock", 0, "clock", "several clocks give a row each; they do not "
                     "combine with optimize, stages, frontier, power_limits or timeline");
        wl_core_numlist_free(&lim);
        wl_core_numlist_free(&slim);
        wl_core_numlist_free(&clk);
        rc = WL_EINVAL;
    }
    if (rc)
        return PyErr_Occurred() ? NULL : wl_py_raise(rc, &err);
    if (clk.n > 1) {
        v.clocks = clk.v;
        v.nclocks = clk.n;
    }
    v.limits = lim.v;
    v.nlimits = lim.n;
    v.stage_limits = slim.v;
    v.nstage_limits = slim.n;
    wl_results_out *tl = NULL;
    PyObject *out = NULL;
    if (timeline && !v.frontier && !v.nlimits) {
        if ((rc = wl_results_out_open(timeline, &tl, &err))) {
            wl_py_raise(rc, &err);
            goto done;
        }
        v.timeline = wl_results_out_stream(tl);
    }
    wl_results_col cols[WL_CLUSTER_VIEW_COLS];
    size_t nc = wl_cluster_view_cols(&v, cols);
    view_ctx x = {.sys = sys, .gpu = gpu, .m = m, .cfg = cfg, .v = &v};
    if (fmt) {
        char *text = NULL;
        size_t len = 0;
        wl_results_format format;
        FILE *f = NULL;
        wl_results_writer *w = NULL;
        if (wl_results_format_parse(fmt, &format)) {
            wl_error_set(&err, "fmt", 0, "fmt", "expected table, csv, ndjson or json");
            wl_py_raise(WL_EINVAL, &err);
        } else if (!(f = open_memstream(&text, &len)) ||
                   wl_results_writer_create(f, format, cols, nc, &w)) {
            PyErr_NoMemory();
        } else {
            fill_view(&x, w);
            if (x.rc)
                wl_results_writer_free(w);
            else
                wl_results_writer_finish(w);
        }
        if (f && fclose(f) == 0 && !PyErr_Occurred() && !x.rc)
            out = PyUnicode_DecodeUTF8(text ? text : "", (Py_ssize_t)len, "strict");
        free(text);
    } else {
        out = wl_py_rows_as_columns(cols, nc, fill_view, &x);
    }
    if (x.rc) {
        Py_CLEAR(out);
        PyErr_Clear();
        wl_py_raise(x.rc, &x.err);
    }
    if (tl) {
        if (!out)
            wl_results_out_abort(tl);
        else if ((rc = wl_results_out_commit(tl, &err))) {
            Py_CLEAR(out);
            wl_py_raise(rc, &err);
        }
        tl = NULL;
    }
done:
    wl_results_out_abort(tl);
    wl_core_numlist_free(&lim);
    wl_core_numlist_free(&slim);
    wl_core_numlist_free(&clk);
    return out;
}

/* _cluster(inputs, set, options, search, threads, front_only, clock, tokens[, view])
 * -> columns (or with view's fmt, text); view: a dict of wl_cluster_view's
 * options (optimize, stages, frontier, max_slowdown_pct, energy_scope,
 * power_limits, stage_power_limits, timeline) and fmt.
 * inputs: (system, nodes, model, host or None); set: [(key, float)];
 * options: [(key, text)]. One configuration (its row), or every
 * configuration of a search (front_only: the time-energy front alone,
 * with a choice column). */
PyObject *wl_py_cluster(PyObject *self, PyObject *args)
{
    (void)self;
    const char *system, *model, *host;
    int nodes, search, threads, front_only;
    PyObject *set, *opts;
    double clock, tokens;
    PyObject *view = NULL;
    if (!PyArg_ParseTuple(args, "(sisz)OOpipdd|O!", &system, &nodes, &model, &host, &set, &opts,
                          &search, &threads, &front_only, &clock, &tokens, &PyDict_Type, &view))
        return NULL;
    const char *keys[WL_CLUSTER_MAX_SET];
    double vals[WL_CLUSTER_MAX_SET];
    Py_ssize_t ns = PySequence_Size(set);
    if (ns < 0)
        return NULL;
    if (ns > WL_CLUSTER_MAX_SET) {
        PyErr_SetString(wl_py_error_class(), "set: at most 64 settings");
        return NULL;
    }
    PyObject *held = PyList_New(0); /* keeps the keys' strings alive */
    if (!held)
        return NULL;
    for (Py_ssize_t i = 0; i < ns; i++) {
        PyObject *it = PySequence_GetItem(set, i);
        const char *k;
        if (!it || !PyArg_ParseTuple(it, "sd", &k, &vals[i]) || PyList_Append(held, it)) {
            Py_XDECREF(it);
            Py_DECREF(held);
            return NULL;
        }
        keys[i] = k;
        Py_DECREF(it);
    }
    wl_error err = {0};
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model m;
    wl_cluster_inputs in = {.system = system, .model = model, .host = host, .nodes = nodes,
                            .set_key = keys, .set_val = vals, .nset = (size_t)ns};
    int rc = wl_cluster_load(&in, &sys, &gpu, &m, &err);
    Py_DECREF(held);
    if (rc)
        return wl_py_raise(rc, &err);
    wl_cluster_config cfg;
    wl_cluster_config_default(&cfg);
    cfg.dp = 0;
    wl_cluster_search_spec sp;
    wl_cluster_search_default(&sp);
    int layers[WL_CLUSTER_MAX_LIST];
    const char *part_text = NULL;
    Py_ssize_t no = PySequence_Size(opts);
    for (Py_ssize_t i = 0; i < no; i++) {
        PyObject *it = PySequence_GetItem(opts, i);
        const char *k, *v;
        if (!it || !PyArg_ParseTuple(it, "ss", &k, &v)) {
            Py_XDECREF(it);
            return NULL;
        }
        rc = cluster_key(&cfg, &sp, layers, k, v, &err);
        /* a list of layers is written as given (the tuple stays alive in opts) */
        if (!rc && !strcmp(k, "partition") && cfg.partition == WL_CLUSTER_PART_LIST)
            part_text = v;
        Py_DECREF(it);
        if (rc)
            return wl_py_raise(rc, &err);
    }
    int gpus = sys.nodes * sys.gpus_per_node;
    double f = clock > 0 ? clock : gpu.sm_clock_max_mhz;
    PyObject *out = NULL;
    if (!search && view) {
        if ((rc = wl_cluster_config_fill(&cfg, gpus, &err)))
            return wl_py_raise(rc, &err);
        return cluster_view(&sys, &gpu, &m, &cfg, view, clock, tokens, part_text);
    }
    if (!search) {
        wl_cluster *cl = NULL;
        wl_cluster_result r;
        if ((rc = wl_cluster_config_fill(&cfg, gpus, &err)) ||
            (rc = wl_cluster_create(&sys, &gpu, &m, &cfg, &cl, &err)) ||
            (rc = wl_cluster_refine_split(cl, &err)) || (rc = wl_cluster_run(cl, f, NULL, &r, &err))) {
            wl_cluster_free(cl);
            return wl_py_raise(rc, &err);
        }
        wl_cluster_free(cl);
        cluster_rows_ctx x = {&sys, &m, &cfg, &r, NULL, 1, f, tokens, part_text};
        return cluster_rows(&x);
    }
    sp.base = cfg;
    if (sp.base.global_batch <= 0)
        sp.base.global_batch = gpus;
    wl_cluster_config *cfgs = NULL;
    size_t n = 0;
    if ((rc = wl_cluster_search_configs(&sp, &m, gpus, sys.gpus_per_node, &cfgs, &n, &err)))
        return wl_py_raise(rc, &err);
    wl_cluster_search_row *rows = calloc(n ? n : 1, sizeof *rows);
    unsigned char *front = calloc(n ? n : 1, 1);
    const char **choice = calloc(n ? n : 1, sizeof *choice);
    wl_cluster_result *res = calloc(n ? n : 1, sizeof *res);
    wl_cluster_config *kept = calloc(n ? n : 1, sizeof *kept);
    if (!rows || !front || !choice || !res || !kept) {
        PyErr_NoMemory();
        goto done;
    }
    wl_py_stop stop;
    wl_py_stop_begin(&stop);
    Py_BEGIN_ALLOW_THREADS
    rc = wl_cluster_search_eval(&sys, &gpu, &m, cfgs, n, f, threads, front_only, rows, NULL, NULL,
                                &err);
    Py_END_ALLOW_THREADS
    if (wl_py_stop_end(&stop))
        goto done;
    if (rc) {
        wl_py_raise(rc, &err);
        goto done;
    }
    long fast = -1, least = -1;
    if (wl_cluster_search_pick(rows, n, front, &fast, &least)) {
        PyErr_NoMemory();
        goto done;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *ch = (long)i == fast && (long)i == least ? "fastest+least_energy"
                         : (long)i == fast                  ? "fastest"
                         : (long)i == least                 ? "least_energy"
                         : front[i]                         ? "front"
                                                            : "";
        if (front_only && !front[i])
            continue;
        choice[k] = ch;
        res[k] = rows[i].r;
        kept[k++] = cfgs[i];
    }
    cluster_rows_ctx x = {&sys, &m, kept, res, choice, k, f, tokens, NULL};
    out = cluster_rows(&x);
done:
    free(rows);
    free(front);
    free(choice);
    free(res);
    free(kept);
    free(cfgs);
    return out;
}

