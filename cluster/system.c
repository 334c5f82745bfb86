/* System presets: GPUs per node, fabric, network and the power outside the
 * GPUs. One field table drives parsing, --set and the ranges, as the GPU
 * presets' table does. */
#include "wattlas_cluster.h"
#include "../presets/wattlas_presets.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef enum { SF_DOUBLE, SF_INT, SF_STR } sf_type;

typedef struct {
    const char *section, *key;
    size_t off;
    sf_type type;
    size_t size;
    int required;
    double lo, hi; /* the range: no machine has more (not physics, absurdity) */
} sys_field;

#define SD(sec, key, req, lo, hi) {sec, #key, offsetof(wl_cluster_system, key), SF_DOUBLE, 0, req, lo, hi}
#define SI(sec, key, req, lo, hi) {sec, #key, offsetof(wl_cluster_system, key), SF_INT, 0, req, lo, hi}
#define SS(sec, key, req) \
    {sec, #key, offsetof(wl_cluster_system, key), SF_STR, sizeof(((wl_cluster_system *)0)->key), req, 0, 0}

static const sys_field sys_fields[] = {
    SS("system", id, 1),
    SS("system", name, 0),
    SS("system", gpu, 1),
    SI("system", gpus_per_node, 1, 1, 1024),
    SS("fabric", fabric, 1),
    SD("fabric", fabric_bw_gbs, 1, 0.01, 1e6),
    SD("fabric", fabric_latency_us, 1, 0, 1e4),
    SD("fabric", fabric_eff, 1, 0.01, 1),
    SI("network", nics_per_node, 1, 0, 1024),
    SD("network", nic_gbps, 1, 0, 1e6),
    SD("network", net_latency_us, 1, 0, 1e5),
    SD("network", net_eff, 1, 0.01, 1),
    SS("network", topology, 1),
    SI("network", switch_ports, 1, 2, 100000),
    SD("power", nic_w, 1, 0, 1e4),
    SD("power", switch_w, 1, 0, 1e5),
    SD("power", node_other_w, 1, 0, 1e6),
};
#define N_SYS (sizeof sys_fields / sizeof *sys_fields)

/* informational keys any section may have */
static const char *const sys_info[] = {"source", "aliases", "note", "command"};

typedef struct {
    wl_cluster_system *s;
    const char *source;
    wl_error *err;
    int line[N_SYS];
} sys_ctx;

static int set_field(wl_cluster_system *s, const sys_field *f, double v)
{
    char *base = (char *)s + f->off;
    if (f->type == SF_INT)
        *(int *)(void *)base = (int)v;
    else
        *(double *)(void *)base = v;
    return WL_OK;
}

static int sys_handler(void *user, const char *section, const char *name, const char *value,
                       int line)
{
    sys_ctx *c = user;
    size_t i;
    for (i = 0; i < N_SYS; i++)
        if (!strcmp(section, sys_fields[i].section) && !strcmp(name, sys_fields[i].key))
            break;
    if (i == N_SYS) {
        int known_sec = 0;
        for (size_t j = 0; j < N_SYS; j++)
            known_sec |= !strcmp(section, sys_fields[j].section);
        if (!known_sec) {
            wl_error_set(c->err, c->source, line, name,
                         "unknown section [%.60s] (a system preset has [system], [fabric], "
                         "[network], [power])", section);
            return 0;
        }
        for (size_t j = 0; j < sizeof sys_info / sizeof *sys_info; j++)
            if (!strcmp(name, sys_info[j]))
                return 1;
        wl_error_set(c->err, c->source, line, name, "unknown key in [%.60s]", section);
        return 0;
    }
    const sys_field *f = &sys_fields[i];
    if (c->line[i]) {
        wl_error_set(c->err, c->source, line, name, "duplicate key (first on line %d)", c->line[i]);
        return 0;
    }
    c->line[i] = line;
    if (f->type == SF_STR) {
        size_t n = strlen(value);
        if (!n || n >= f->size) {
            wl_error_set(c->err, c->source, line, name, "empty or longer than %zu characters",
                         f->size - 1);
            return 0;
        }
        memcpy((char *)c->s + f->off, value, n + 1);
        return 1;
    }
    double v;
    if (f->type == SF_INT) {
        long long iv;
        if (wl_core_parse_int(value, (long long)f->lo, (long long)f->hi, c->source, line, name, &iv,
                              c->err))
            return 0;
        v = (double)iv;
    } else if (wl_core_parse_real(value, f->lo, f->hi, c->source, line, name, &v, c->err)) {
        return 0;
    }
    set_field(c->s, f, v);
    return 1;
}

int wl_cluster_system_check(const wl_cluster_system *s, wl_error *err)
{
    const char *src = s->id[0] ? s->id : "system";
    if (strcmp(s->fabric, "nvswitch") && strcmp(s->fabric, "nvlink") && strcmp(s->fabric, "pcie")) {
        wl_error_set(err, src, 0, "fabric", "expected nvswitch, nvlink or pcie, got '%.40s'",
                     s->fabric);
        return WL_EINVAL;
    }
    if (strcmp(s->topology, "fat-tree")) {
        wl_error_set(err, src, 0, "topology", "expected fat-tree, got '%.40s'", s->topology);
        return WL_EINVAL;
    }
    if (s->nodes < 1 || s->nodes > 1000000) {
        wl_error_set(err, src, 0, "nodes", "expected 1 to 1000000 nodes, got %d", s->nodes);
        return WL_EINVAL;
    }
    if (s->nodes > 1 && (s->nics_per_node < 1 || s->nic_gbps <= 0)) {
        wl_error_set(err, src, 0, "nics_per_node",
                     "%d nodes need a network: nics_per_node and nic_gbps must be positive",
                     s->nodes);
        return WL_EINVAL;
    }
    return WL_OK;
}

int wl_cluster_system_parse(const char *text, const char *source, wl_cluster_system *out,
                            wl_error *err)
{
    memset(out, 0, sizeof *out);
    sys_ctx c = {.s = out, .source = source, .err = err};
    int rc = wl_preset_ini_parse(text, strlen(text), source, sys_handler, &c, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < N_SYS; i++)
        if (sys_fields[i].required && !c.line[i]) {
            wl_error_set(err, source, 0, sys_fields[i].key, "missing required key in [%s]",
                         sys_fields[i].section);
            return WL_EPARSE;
        }
    out->nodes = 1;
    if (wl_cluster_system_check(out, err)) {
        for (size_t i = 0; i < N_SYS; i++)
            if (!strcmp(sys_fields[i].key, err->field))
                wl_error_locate(err, source, c.line[i]);
        return WL_EPARSE;
    }
    return WL_OK;
}

int wl_cluster_system_load(const char *id_or_path, wl_cluster_system *out, wl_error *err)
{
    char src[256];
    const char *text;
    char *owned = NULL;
    int rc = wl_preset_find(WL_PRESET_SYSTEM, id_or_path, &text, &owned, src, sizeof src, err);
    if (!rc)
        rc = wl_cluster_system_parse(text, owned ? id_or_path : src, out, err);
    free(owned);
    return rc;
}

int wl_cluster_system_set(wl_cluster_system *s, const char *key, double value, wl_error *err)
{
    if (!strcmp(key, "nodes")) {
        if (!(value >= 1 && value <= 1000000) || value != floor(value)) {
            wl_error_set(err, "", 0, "nodes", "expected a whole number of nodes in [1, 1000000]");
            return WL_EINVAL;
        }
        s->nodes = (int)value;
        return WL_OK;
    }
    for (size_t i = 0; i < N_SYS; i++) {
        const sys_field *f = &sys_fields[i];
        if (strcmp(f->key, key))
            continue;
        if (f->type == SF_STR)
            return WL_ENOTFOUND;
        if (!(value >= f->lo && value <= f->hi) || (f->type == SF_INT && value != floor(value))) {
            char lo[WL_CORE_NUM_TEXT], hi[WL_CORE_NUM_TEXT];
            wl_core_num_text(lo, sizeof lo, f->lo);
            wl_core_num_text(hi, sizeof hi, f->hi);
            wl_error_set(err, "", 0, key, "expected %s in [%s, %s]",
                         f->type == SF_INT ? "a whole number" : "a number", lo, hi);
            return WL_EINVAL;
        }
        return set_field(s, f, value);
    }
    return WL_ENOTFOUND;
}

long long wl_cluster_fat_tree_switches(long long nics, int ports)
{
    if (nics <= 1)
        return 0;
    long long k = ports, half = k / 2 > 0 ? k / 2 : 1;
    if (nics <= k)
        return 1;
    if (nics <= k * half) {
        long long leaves = (nics + half - 1) / half;
        /* every leaf sends half its ports up; spines take k of those links */
        long long spines = (leaves * half + k - 1) / k;
        return leaves + spines;
    }
    /* three levels: pods of k/2 leaves and k/2 aggregation switches each
     * serve k^2/4 NICs; the core takes half of the aggregation up-links */
    long long pod = half * half;
    long long pods = (nics + pod - 1) / pod;
    long long core = (pods * half * half + k - 1) / k;
    return pods * 2 * half + core;
}

/* ---- the catalogue of built-in presets (wattlas presets list) ------------------ */

static const wl_results_col catalog_cols[] = {
    WL_RESULTS_COL("kind", WL_COL_TEXT, 0, 5),
    WL_RESULTS_COL("id", WL_COL_TEXT, 0, 0),   /* widths: the longest (catalog_width) */
    WL_RESULTS_COL("name", WL_COL_TEXT, 0, 0),
    WL_RESULTS_COL("sms", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("sm_clock_min_mhz", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("sm_clock_max_mhz", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("dram_bw_gbs", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("dram_type", WL_COL_TEXT, 0, 6),
    WL_RESULTS_COL("power_limit_w", WL_COL_NUM, 0, 0),
    WL_RESULTS_COL("style", WL_COL_TEXT, 0, 6),
    WL_RESULTS_COL("layers", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("d_model", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("heads", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("kv_heads", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("d_ff", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("activation", WL_COL_TEXT, 0, 0),
    WL_RESULTS_COL("host", WL_COL_TEXT, 0, 0),
    WL_RESULTS_COL("launch_us", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("mem_capacity_gb", WL_COL_NUM, 1, 0),
    WL_RESULTS_COL("params_m", WL_COL_NUM, 1, 0),
};
#define NLIST (sizeof catalog_cols / sizeof *catalog_cols)

_Static_assert(NLIST == WL_CLUSTER_CATALOG_COLS, "the catalogue's column count");

/* The name a catalogue row gives a preset (NULL: none, as for models). */
static const char *preset_name(wl_preset_kind k, const char *id, char *buf, size_t n)
{
    wl_error err;
    int ok = 0;
    if (k == WL_PRESET_SYSTEM) {
        wl_cluster_system sy;
        if ((ok = wl_cluster_system_load(id, &sy, &err) == WL_OK))
            snprintf(buf, n, "%s", sy.name);
    } else if (k == WL_PRESET_HOST) {
        wl_core_host h;
        if ((ok = wl_preset_host_load(id, &h, &err) == WL_OK))
            snprintf(buf, n, "%s", h.name);
    } else if (k == WL_PRESET_GPU) {
        wl_core_gpu g;
        if ((ok = wl_preset_gpu_load(id, &g, &err) == WL_OK))
            snprintf(buf, n, "%s", g.name);
    } else if (k == WL_PRESET_WORKLOAD) {
        ok = wl_preset_name(k, id, buf, n, &err) == WL_OK;
    } else {
        return NULL;
    }
    return ok ? buf : "(invalid preset)";
}

size_t wl_cluster_catalog_cols(int only, wl_results_col *cols)
{
    memcpy(cols, catalog_cols, sizeof catalog_cols);
    for (int kind = 0; kind < WL_PRESET_KINDS; kind++) {
        if (only >= 0 && kind != only)
            continue;
        wl_preset_kind k = (wl_preset_kind)kind;
        for (size_t i = 0; i < wl_preset_count(k); i++) {
            char buf[128];
            const char *id = wl_preset_id(k, i), *name = preset_name(k, id, buf, sizeof buf);
            int li = (int)strlen(id), ln = name ? (int)strlen(name) : 0;
            cols[1].width = li > cols[1].width ? li : cols[1].width;
            cols[2].width = ln > cols[2].width ? ln : cols[2].width;
        }
    }
    return NLIST;
}

int wl_cluster_catalog_rows(int only, wl_results_writer *w)
{
    int rc = WL_OK;
    wl_results_cell cells[NLIST];
    for (int kind = 0; kind < WL_PRESET_KINDS && !rc; kind++) {
        if (only >= 0 && kind != only)
            continue;
        wl_preset_kind k = (wl_preset_kind)kind;
        for (size_t i = 0; i < wl_preset_count(k) && !rc; i++) {
            for (size_t c = 0; c < NLIST; c++)
                cells[c] = (wl_results_cell){NULL, NAN};
            const char *id = wl_preset_id(k, i);
            cells[0].s = wl_preset_kind_name(k);
            cells[1].s = id;
            wl_error err;
            wl_core_gpu g;
            wl_core_model m;
            wl_core_host h;
            wl_cluster_system sy;
            char wname[128];
            if (k == WL_PRESET_SYSTEM && wl_cluster_system_load(id, &sy, &err) == WL_OK) {
                /* a system: its name, and its GPU in the host column's place */
                cells[2].s = sy.name;
                cells[16].s = sy.gpu;
            } else if (k == WL_PRESET_HOST && wl_preset_host_load(id, &h, &err) == WL_OK) {
                cells[2].s = h.name;
                cells[17].v = h.launch_us;
            } else if (!kind && wl_preset_gpu_load(id, &g, &err) == WL_OK) {
                cells[2].s = g.name;
                const double v[6] = {g.sms, g.sm_clock_min_mhz, g.sm_clock_max_mhz,
                                     g.dram_bw_gbs, NAN, g.power_limit_w};
                for (int j = 0; j < 6; j++)
                    cells[3 + j].v = v[j];
                cells[7].s = g.dram_type;
                cells[16].s = g.host_id[0] ? g.host_id : NULL;
                cells[17].v = g.coef.host_launch_us;
                cells[18].v = g.mem_capacity_gb > 0 ? g.mem_capacity_gb : NAN;
            } else if (kind == 1 && wl_preset_model_load(id, &m, &err) == WL_OK) {
                cells[9].s = wl_style_name(m.style);
                double np = 0;
                wl_core_model_params(&m, &np);
                cells[19].v = np / 1e6;
                const double v[5] = {m.layers, m.d_model, m.heads, m.kv_heads, m.d_ff};
                for (int j = 0; j < 5 && !wl_core_model_is_vision(&m); j++)
                    cells[10 + j].v = v[j];
                cells[15].s = wl_activation_name(m.activation);
            } else if (k == WL_PRESET_WORKLOAD) {
                cells[2].s = preset_name(k, id, wname, sizeof wname); /* serve/ reads the rest */
            } else {
                cells[2].s = "(invalid preset)";
            }
            if (wl_results_writer_row(w, cells))
                rc = WL_EIO;
        }
    }
    return rc;
}

/* ---- a cluster's inputs ------------------------------------------------------- */

int wl_cluster_load(const wl_cluster_inputs *in, wl_cluster_system *sys, wl_core_gpu *gpu,
                    wl_core_model *model, wl_error *err)
{
    int rc;
    if ((rc = wl_cluster_system_load(in->system, sys, err))) {
        if (!strcmp(err->field, "system"))
            wl_error_locate(err, "system", 0);
        return rc;
    }
    if ((rc = wl_preset_gpu_load(sys->gpu, gpu, err)))
        return rc;
    if ((rc = wl_preset_model_load(in->model, model, err))) {
        if (!strcmp(err->field, "model"))
            wl_error_locate(err, "model", 0);
        return rc;
    }
    if (in->host && (rc = wl_preset_gpus_set_host(in->host, gpu, 1, err))) {
        wl_error_locate(err, "host", 0);
        return rc;
    }
    sys->nodes = in->nodes > 0 ? in->nodes : 1;
    /* a system key, else a GPU key (power_limit_w: every GPU) */
    const char *gk[WL_CLUSTER_MAX_SET];
    double gv[WL_CLUSTER_MAX_SET];
    size_t ng = 0;
    if (in->nset > WL_CLUSTER_MAX_SET) {
        wl_error_set(err, "set", 0, "set", "at most %d settings", WL_CLUSTER_MAX_SET);
        return WL_EINVAL;
    }
    for (size_t i = 0; i < in->nset; i++) {
        rc = wl_cluster_system_set(sys, in->set_key[i], in->set_val[i], err);
        if (rc == WL_ENOTFOUND) {
            gk[ng] = in->set_key[i];
            gv[ng++] = in->set_val[i];
        } else if (rc) {
            wl_error_locate(err, "set", 0);
            return rc;
        }
    }
    size_t failed = 0;
    if (ng && (rc = wl_preset_gpu_apply(gpu, gk, gv, ng, &failed, err))) {
        wl_error_locate(err, "set", 0);
        return rc;
    }
    return WL_OK;
}
