/* Preset parsing (inih), built-in preset lookup, field access by key. */
#include "wattlas_presets.h"

#include <ini.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *kind, *id, *text;
} wl_preset_blob;
/* generated at build time from presets/gpus/ *.ini and presets/models/ *.ini */
extern const wl_preset_blob wl_preset_blobs[];
extern const size_t wl_preset_blob_count;

static const char *kind_dir(wl_preset_kind k) { return k == WL_PRESET_GPU ? "gpus" : "models"; }

size_t wl_preset_count(wl_preset_kind kind)
{
    size_t n = 0;
    for (size_t i = 0; i < wl_preset_blob_count; i++)
        n += strcmp(wl_preset_blobs[i].kind, kind_dir(kind)) == 0;
    return n;
}

const char *wl_preset_id(wl_preset_kind kind, size_t idx)
{
    for (size_t i = 0; i < wl_preset_blob_count; i++)
        if (strcmp(wl_preset_blobs[i].kind, kind_dir(kind)) == 0 && idx-- == 0)
            return wl_preset_blobs[i].id;
    return NULL;
}

const char *wl_preset_text(wl_preset_kind kind, const char *id)
{
    for (size_t i = 0; i < wl_preset_blob_count; i++)
        if (strcmp(wl_preset_blobs[i].kind, kind_dir(kind)) == 0 &&
            strcmp(wl_preset_blobs[i].id, id) == 0)
            return wl_preset_blobs[i].text;
    return NULL;
}

/* GPU names as tools write them: lower case, '-' for blanks and '_', no
 * vendor prefix ("NVIDIA A100-SXM4-80GB" -> "a100-sxm4-80gb"). */
static void normalize_gpu_name(const char *in, char *out, size_t cap)
{
    size_t n = 0;
    for (const char *p = in; *p && n + 1 < cap; p++) {
        char ch = *p;
        if (ch >= 'A' && ch <= 'Z')
            ch = (char)(ch - 'A' + 'a');
        if (ch == ' ' || ch == '_' || ch == '\t')
            ch = '-';
        if (ch == '-' && (n == 0 || out[n - 1] == '-'))
            continue;
        out[n++] = ch;
    }
    while (n && out[n - 1] == '-')
        n--;
    out[n] = 0;
    if (strncmp(out, "nvidia-", 7) == 0)
        memmove(out, out + 7, strlen(out + 7) + 1);
}

/* The [gpu] aliases list of a preset text ("aliases = a, b, c"), matched
 * after normalisation. */
static int text_has_alias(const char *text, const char *norm)
{
    const char *p = strstr(text, "\naliases");
    if (!p)
        return 0;
    p = strchr(p, '=');
    if (!p)
        return 0;
    p++;
    const char *end = p + strcspn(p, ";\n");
    while (p < end) {
        size_t len = strcspn(p, ",;\n");
        if (p + len > end)
            len = (size_t)(end - p);
        char one[128], nn[128];
        size_t k = len < sizeof one - 1 ? len : sizeof one - 1;
        memcpy(one, p, k);
        one[k] = 0;
        const char *slash = strrchr(one, '/'); /* hub ids match by their name */
        normalize_gpu_name(slash ? slash + 1 : one, nn, sizeof nn);
        if (nn[0] && strcmp(nn, norm) == 0)
            return 1;
        p += len + 1;
    }
    return 0;
}

static const char *resolve(const char *kind, const char *norm)
{
    for (size_t i = 0; i < wl_preset_blob_count; i++)
        if (strcmp(wl_preset_blobs[i].kind, kind) == 0 && strcmp(wl_preset_blobs[i].id, norm) == 0)
            return wl_preset_blobs[i].id;
    for (size_t i = 0; i < wl_preset_blob_count; i++)
        if (strcmp(wl_preset_blobs[i].kind, kind) == 0 &&
            text_has_alias(wl_preset_blobs[i].text, norm))
            return wl_preset_blobs[i].id;
    return NULL;
}

const char *wl_preset_gpu_resolve(const char *name)
{
    char norm[128];
    normalize_gpu_name(name, norm, sizeof norm);
    return resolve("gpus", norm);
}

int wl_preset_gpu_names(const char *name, const char *gpu_id)
{
    if (strcmp(name, gpu_id) == 0)
        return 1;
    const char *id = wl_preset_gpu_resolve(name);
    return id && strcmp(id, gpu_id) == 0;
}

const char *wl_preset_model_resolve(const char *name)
{
    /* a hub id names the model after its organisation: google/vit-large-... */
    const char *slash = strrchr(name, '/');
    char norm[128];
    normalize_gpu_name(slash ? slash + 1 : name, norm, sizeof norm);
    return resolve("models", norm);
}

/* ---- GPU keys ------------------------------------------------------------ */

typedef enum { F_DOUBLE, F_INT, F_STR } ftype;

typedef struct {
    const char *section, *key;
    size_t off;
    ftype type;
    size_t size;   /* for F_STR */
    int required;
} gpu_field;

#define D(sec, key, member, req) {sec, key, offsetof(wl_core_gpu, member), F_DOUBLE, 0, req}
#define C(key, member) {"calibration", #key, offsetof(wl_core_gpu, coef.member), F_DOUBLE, 0, 0}

static const gpu_field gpu_fields[] = {
    {"gpu", "id", offsetof(wl_core_gpu, id), F_STR, sizeof(((wl_core_gpu *)0)->id), 1},
    {"gpu", "name", offsetof(wl_core_gpu, name), F_STR, sizeof(((wl_core_gpu *)0)->name), 0},
    {"gpu", "sms", offsetof(wl_core_gpu, sms), F_INT, 0, 1},
    D("gpu", "sm_clock_min_mhz", sm_clock_min_mhz, 1),
    D("gpu", "sm_clock_max_mhz", sm_clock_max_mhz, 1),
    D("gpu", "sm_clock_step_mhz", sm_clock_step_mhz, 1),
    D("gpu", "power_limit_w", power_limit_w, 1),
    D("gpu", "tdp_w", tdp_w, 0),
    D("gpu", "process_nm", process_nm, 0),
    D("technology", "e_mac_fp32_pj", tech_mac_pj[WL_DT_FP32], 0),
    D("technology", "e_mac_tf32_pj", tech_mac_pj[WL_DT_TF32], 0),
    D("technology", "e_mac_fp16_pj", tech_mac_pj[WL_DT_FP16], 0),
    D("technology", "e_mac_bf16_pj", tech_mac_pj[WL_DT_BF16], 0),
    D("technology", "e_mac_fp8_pj", tech_mac_pj[WL_DT_FP8], 0),
    D("technology", "e_mac_int8_pj", tech_mac_pj[WL_DT_INT8], 0),
    D("technology", "e_reg_pj_per_byte", tech_reg_pj_per_byte, 0),
    D("technology", "e_smem_pj_per_byte", tech_smem_pj_per_byte, 0),
    D("technology", "e_l2_pj_per_byte", tech_l2_pj_per_byte, 0),
    D("technology", "e_dram_pj_per_bit", tech_dram_pj_per_bit, 0),
    D("compute", "tc_tf32_flop_per_clk_sm", tc_flop_per_clk_sm[WL_DT_TF32], 0),
    D("compute", "tc_fp16_flop_per_clk_sm", tc_flop_per_clk_sm[WL_DT_FP16], 0),
    D("compute", "tc_bf16_flop_per_clk_sm", tc_flop_per_clk_sm[WL_DT_BF16], 0),
    D("compute", "tc_fp8_flop_per_clk_sm", tc_flop_per_clk_sm[WL_DT_FP8], 0),
    D("compute", "tc_int8_op_per_clk_sm", tc_flop_per_clk_sm[WL_DT_INT8], 0),
    D("compute", "cuda_fp32_flop_per_clk_sm", cuda_flop_per_clk_sm[WL_DT_FP32], 1),
    D("compute", "cuda_fp16_flop_per_clk_sm", cuda_flop_per_clk_sm[WL_DT_FP16], 0),
    D("compute", "cuda_bf16_flop_per_clk_sm", cuda_flop_per_clk_sm[WL_DT_BF16], 0),
    D("compute", "sfu_op_per_clk_sm", sfu_op_per_clk_sm, 1),
    D("memory", "l2_size_mb", l2_size_mb, 1),
    D("memory", "l2_bw_bytes_per_clk", l2_bytes_per_clk, 1),
    {"memory", "dram_type", offsetof(wl_core_gpu, dram_type), F_STR,
     sizeof(((wl_core_gpu *)0)->dram_type), 1},
    D("memory", "dram_bw_gbs", dram_bw_gbs, 1),
    D("memory", "mem_clock_mhz", mem_clock_mhz, 1),
    D("memory", "smem_per_sm_kb", smem_per_sm_kb, 1),
    D("memory", "smem_bw_bytes_per_clk_sm", smem_bytes_per_clk_sm, 1),
    {"memory", "max_warps_per_sm", offsetof(wl_core_gpu, max_warps_per_sm), F_INT, 0, 1},
    {"compute", "cluster_multicast", offsetof(wl_core_gpu, cluster_multicast), F_INT, 0, 0},
    D("vf", "v_ref_mv", v_ref_mv, 1),
    D("vf", "vth_mv", vth_mv, 0),
    D("vf", "alpha_power", alpha_power, 0),
    D("vf", "vf_guardband_mv", vf_guardband_mv, 0),
    D("vf", "vmin_mv", vf_vmin_mv, 0),
    D("vf", "vmax_mv", vf_vmax_mv, 0),
    D("vf", "vf_knee_mhz", vf_knee_mhz, 0),
    D("vf", "idle_power_min_w", idle_min_w, 0),
    D("vf", "idle_power_max_w", idle_max_w, 0),
    D("vf", "idle_clock_slope", idle_clock_slope, 0),
    C(tc_eff, tc_eff),
    C(cuda_eff, cuda_eff),
    C(alu_eff, alu_eff),
    C(dram_eff, dram_eff),
    C(l2_eff, l2_eff),
    C(mem_bytes_per_clk, mem_bytes_per_clk),
    C(mem_path_gbs, mem_path_gbs),
    C(overlap_p, overlap_p),
    C(tile_overhead_clk, tile_overhead_clk),
    C(kernel_fixed_us, kernel_fixed_us),
    C(kernel_fixed_clk, kernel_fixed_clk),
    C(host_launch_us, host_launch_us),
    C(launch_clk, launch_clk),
    C(v_exponent, v_exponent),
    C(c_active_w, c_active_w),
    C(c_gap_w, c_gap_w),
    C(c_tc_w, c_tc_w),
    C(c_fp_w, c_fp_w),
    C(c_sfu_w, c_sfu_w),
    C(c_smem_w, c_smem_w),
    C(c_l2_w, c_l2_w),
    C(e_dram_pj_per_byte, e_dram_pj_per_byte),
    C(dram_background_w, dram_background_w),
    C(leak_w_per_c, leak_w_per_c),
    C(vf_temp_mhz_per_c, vf_temp_mhz_per_c),
    C(thermal_c_per_w, thermal_c_per_w),
    C(idle_temp_c, idle_temp_c),
    C(power_cap_frac, power_cap_frac),
};
#define N_GPU_FIELDS (sizeof gpu_fields / sizeof *gpu_fields)
_Static_assert(N_GPU_FIELDS <= 128, "ctx.seen is too small for the GPU keys");

/* informational keys of [calibration] and [vf], kept as text only */
static const char *const info_keys[] = {"source", "command", "fitted_rows", "data_hash",
                                         "fitted_on", "note", "aliases"};

typedef struct {
    const char *source;
    wl_core_gpu *gpu;
    wl_core_model *model;
    unsigned char seen[128];
    int list_seen[3];
    wl_error *err;
    int failed;
    int n_cal;               /* fitted [calibration] values seen */
    char transfer_from[128]; /* [calibration] transfer_from */
    int transfer_line;
} ctx;

static int is_info(const char *name)
{
    for (size_t i = 0; i < sizeof info_keys / sizeof *info_keys; i++)
        if (strcmp(name, info_keys[i]) == 0)
            return 1;
    return 0;
}

static int ctx_fail(ctx *c, const char *field, const char *fmt, const char *arg)
{
    if (!c->failed) {
        c->failed = 1;
        wl_error_set(c->err, c->source, 0, field, fmt, arg);
    }
    return 0;
}

static int parse_double(const char *s, double *out)
{
    char *e = NULL;
    errno = 0;
    double v = strtod(s, &e);
    if (e == s || errno || !isfinite(v))
        return -1;
    while (*e == ' ' || *e == '\t')
        e++;
    if (*e)
        return -1;
    *out = v;
    return 0;
}

/* Appends comma-separated numbers to a table column. */
static int append_list(ctx *c, const char *name, const char *value, double *arr, int *n)
{
    const char *p = value;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (!*p)
            break;
        char *e = NULL;
        errno = 0;
        double v = strtod(p, &e);
        if (e == p || errno || !isfinite(v))
            return ctx_fail(c, name, "not a number in list: '%s'", p);
        if (*n >= WL_VF_MAX)
            return ctx_fail(c, name, "more than 128 table points%s", "");
        arr[(*n)++] = v;
        p = e;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p && *p != ',')
            return ctx_fail(c, name, "expected ',' in list at '%s'", p);
    }
    return 1;
}

static int gpu_handler(void *user, const char *section, const char *name, const char *value)
{
    ctx *c = user;
    wl_core_gpu *g = c->gpu;
    if (strcmp(section, "covariance") == 0)
        return 1; /* read by calib/ (wl_calib_uncertainty_parse) */
    if (strcmp(section, "calibration") == 0 && strcmp(name, "transfer_from") == 0) {
        if (c->transfer_from[0])
            return ctx_fail(c, name, "duplicate key in [%s]", section);
        if (!value[0] || strlen(value) >= sizeof c->transfer_from)
            return ctx_fail(c, name, "empty or too long: '%s'", value);
        memcpy(c->transfer_from, value, strlen(value) + 1);
        return 1;
    }
    if (strcmp(section, "vf") == 0) {
        if (strcmp(name, "clock_mhz") == 0) {
            int n = c->list_seen[0];
            if (!append_list(c, name, value, g->vf.clock_mhz, &n))
                return 0;
            c->list_seen[0] = n;
            return 1;
        }
        if (strcmp(name, "voltage_mv") == 0) {
            int n = c->list_seen[1];
            if (!append_list(c, name, value, g->vf.voltage_mv, &n))
                return 0;
            c->list_seen[1] = n;
            return 1;
        }
        if (strcmp(name, "idle_power_w") == 0) {
            int n = c->list_seen[2];
            if (!append_list(c, name, value, g->vf.idle_w, &n))
                return 0;
            c->list_seen[2] = n;
            return 1;
        }
    }
    for (size_t i = 0; i < N_GPU_FIELDS; i++) {
        const gpu_field *f = &gpu_fields[i];
        if (strcmp(section, f->section) || strcmp(name, f->key))
            continue;
        if (c->seen[i])
            return ctx_fail(c, name, "duplicate key in [%s]", section);
        c->seen[i] = 1;
        c->n_cal += strcmp(f->section, "calibration") == 0;
        char *base = (char *)g + f->off;
        if (f->type == F_STR) {
            if (strlen(value) >= f->size || !value[0])
                return ctx_fail(c, name, "empty or too long: '%s'", value);
            memcpy(base, value, strlen(value) + 1);
            return 1;
        }
        double v;
        if (parse_double(value, &v))
            return ctx_fail(c, name, "not a number: '%s'", value);
        if (f->type == F_INT) {
            if (v != floor(v) || v < 0 || v > 1e9)
                return ctx_fail(c, name, "not a non-negative integer: '%s'", value);
            *(int *)(void *)base = (int)v;
        } else {
            *(double *)(void *)base = v;
        }
        return 1;
    }
    if ((strcmp(section, "calibration") == 0 || strcmp(section, "vf") == 0 ||
         strcmp(section, "gpu") == 0) && is_info(name))
        return 1;
    if (strcmp(section, "calibration") == 0 && strncmp(name, "stderr_", 7) == 0)
        return 1; /* standard errors written by calibrate */
    char what[160];
    snprintf(what, sizeof what, "[%s] %s", section, name);
    return ctx_fail(c, name, "unknown key %s", what);
}

static int finish_ini(int rc, ctx *c, wl_error *err)
{
    if (rc == -1) {
        wl_error_set(err, c->source, 0, "", "cannot open file");
        return WL_EIO;
    }
    if (rc == -2) {
        wl_error_set(err, c->source, 0, "", "out of memory");
        return WL_ENOMEM;
    }
    if (rc > 0) {
        if (!c->failed)
            wl_error_set(err, c->source, rc, "", "malformed line (expected key = value or [section])");
        else
            err->line = rc;
        return WL_EPARSE;
    }
    return WL_OK;
}

static int seen_key(const ctx *c, const char *key)
{
    for (size_t i = 0; i < N_GPU_FIELDS; i++)
        if (strcmp(gpu_fields[i].key, key) == 0)
            return c->seen[i];
    return 0;
}

/* Measured [vf] tables, or the documented rule (wl_core_gpu_vf_rule) for a
 * column that has no table: voltage from vmin_mv/vmax_mv/vf_knee_mhz, idle
 * from idle_power_min_w/idle_power_max_w. */
static int vf_tables(const ctx *c, wl_core_gpu *out, const char *source, wl_error *err)
{
    static const char *const vkeys[] = {"vmin_mv", "vmax_mv", "vf_knee_mhz"};
    static const char *const ikeys[] = {"idle_power_min_w", "idle_power_max_w"};
    int nc = c->list_seen[0], nv = c->list_seen[1], ni = c->list_seen[2];
    int vrule = 0, irule = 0;
    for (int i = 0; i < 3; i++)
        vrule |= seen_key(c, vkeys[i]);
    for (int i = 0; i < 2; i++)
        irule |= seen_key(c, ikeys[i]);
    if (vrule && nv) {
        wl_error_set(err, source, 0, "voltage_mv",
                     "[vf] has both a voltage_mv table and vmin_mv/vmax_mv/vf_knee_mhz; keep one");
        return WL_EPARSE;
    }
    if (irule && ni) {
        wl_error_set(err, source, 0, "idle_power_w",
                     "[vf] has both an idle_power_w table and idle_power_min_w/idle_power_max_w; keep one");
        return WL_EPARSE;
    }
    for (int i = 0; vrule && i < 3; i++)
        if (!seen_key(c, vkeys[i])) {
            wl_error_set(err, source, 0, vkeys[i], "the [vf] voltage rule needs vmin_mv, vmax_mv and vf_knee_mhz");
            return WL_EPARSE;
        }
    for (int i = 0; irule && i < 2; i++)
        if (!seen_key(c, ikeys[i])) {
            wl_error_set(err, source, 0, ikeys[i], "the [vf] idle rule needs idle_power_min_w and idle_power_max_w");
            return WL_EPARSE;
        }
    if (!nv && !vrule) {
        wl_error_set(err, source, 0, "voltage_mv",
                     "[vf] needs a voltage_mv table or the rule keys vmin_mv, vmax_mv, vf_knee_mhz");
        return WL_EPARSE;
    }
    if (!ni && !irule) {
        wl_error_set(err, source, 0, "idle_power_w",
                     "[vf] needs an idle_power_w table or the rule keys idle_power_min_w, idle_power_max_w");
        return WL_EPARSE;
    }
    if ((nv && nv != nc) || (ni && ni != nc)) {
        wl_error_set(err, source, 0, "clock_mhz",
                     "[vf] lists differ in length: clock_mhz %d, voltage_mv %d, idle_power_w %d",
                     nc, nv, ni);
        return WL_EPARSE;
    }
    if (nc && (!nv || !ni) && nc < 2) {
        wl_error_set(err, source, 0, "clock_mhz", "the [vf] table needs at least two points");
        return WL_EPARSE;
    }
    out->vf.n = nc;
    out->vf_rule = (vrule ? WL_VF_RULE_VOLTAGE : 0u) | (irule ? WL_VF_RULE_IDLE : 0u);
    if (out->vf_rule && wl_core_gpu_vf_rule(out, err)) {
        snprintf(err->source, sizeof err->source, "%s", source);
        return WL_EPARSE;
    }
    return WL_OK;
}

/* [calibration] transfer_from = ID|PATH: the coefficients come from a
 * calibrated GPU through wl_core_gpu_transfer. */
static int transfer(const ctx *c, wl_core_gpu *out, const char *source, wl_error *err)
{
    static _Thread_local int depth;
    if (c->n_cal) {
        wl_error_set(err, source, 0, "transfer_from",
                     "[calibration] has both transfer_from and fitted values; keep one");
        return WL_EPARSE;
    }
    if (strcmp(c->transfer_from, source) == 0 || strcmp(c->transfer_from, out->id) == 0) {
        wl_error_set(err, source, 0, "transfer_from", "a GPU cannot transfer from itself");
        return WL_EPARSE;
    }
    if (depth >= 4) {
        wl_error_set(err, source, 0, "transfer_from", "transfer_from chain longer than 4 (a cycle?)");
        return WL_EPARSE;
    }
    wl_core_gpu src;
    wl_error e2;
    depth++;
    int rc = wl_preset_gpu_load(c->transfer_from, &src, &e2);
    depth--;
    if (rc) {
        char msg[512];
        wl_error_format(&e2, msg, sizeof msg);
        wl_error_set(err, source, 0, "transfer_from", "cannot load '%s': %s", c->transfer_from, msg);
        return WL_EPARSE;
    }
    if (wl_core_gpu_transfer(&src, out, &e2)) {
        wl_error_set(err, source, 0, e2.field, "transfer from %s: %s", c->transfer_from, e2.text);
        return WL_EPARSE;
    }
    snprintf(out->coef_source, sizeof out->coef_source, "transferred from %s", src.id);
    return WL_OK;
}

int wl_preset_gpu_parse(const char *text, const char *source, wl_core_gpu *out, wl_error *err)
{
    memset(out, 0, sizeof *out);
    wl_core_coeffs_default(&out->coef);
    /* 7 nm-class defaults: Vth ~ 0.35 V, velocity-saturated alpha ~ 1.3,
     * vendor guardband ~ 50 mV */
    out->vth_mv = 350;
    out->alpha_power = 1.3;
    out->vf_guardband_mv = 50;
    /* idle power's linear clock term below the knee: +7% from 210 to
     * 1050 MHz in ../shared/data/gpu-tables/a100-sxm-80gb-idle.csv,
     * i.e. 0.12 per f_max of clock */
    out->idle_clock_slope = 0.12;
    ctx c = {0};
    c.source = source;
    c.gpu = out;
    c.err = err;
    int rc = finish_ini(ini_parse_string(text, gpu_handler, &c), &c, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < N_GPU_FIELDS; i++)
        if (gpu_fields[i].required && !c.seen[i]) {
            wl_error_set(err, source, 0, gpu_fields[i].key, "missing required key in [%s]",
                         gpu_fields[i].section);
            return WL_EPARSE;
        }
    if ((rc = vf_tables(&c, out, source, err)))
        return rc;
    if (c.transfer_from[0] && (rc = transfer(&c, out, source, err)))
        return rc;
    out->vf_anchor_mhz = out->vf.clock_mhz[out->vf.n > 0 ? out->vf.n - 1 : 0];
    out->vf_anchor_mv = out->vf.n > 0 ? out->vf.voltage_mv[out->vf.n - 1] : 0;
    if (wl_core_gpu_check(out, err)) {
        snprintf(err->source, sizeof err->source, "%s", source);
        return WL_EPARSE;
    }
    return WL_OK;
}

/* ---- models -------------------------------------------------------------- */

static int model_handler(void *user, const char *section, const char *name, const char *value)
{
    ctx *c = user;
    wl_core_model *m = c->model;
    if (strcmp(section, "model") != 0)
        return ctx_fail(c, name, "unknown section [%s]", section);
    static const char *const ints[] = {"layers", "d_model", "heads", "kv_heads", "d_ff",
                                       "qkv_bias", "pooler", "final_norm", "image_size_px",
                                       "patch_size_px", "channels", "classes", "pooler_dim",
                                       "base_width"};
    int *const iptr[] = {&m->layers, &m->d_model, &m->heads, &m->kv_heads, &m->d_ff,
                         &m->qkv_bias, &m->pooler, &m->final_norm, &m->image_size,
                         &m->patch_size, &m->channels, &m->classes, &m->pooler_dim,
                         &m->base_width};
    if (strcmp(name, "blocks") == 0) {
        if (c->seen[22])
            return ctx_fail(c, name, "duplicate key%s", "");
        c->seen[22] = 1;
        double v[WL_VF_MAX];
        int n = 0;
        if (!append_list(c, name, value, v, &n))
            return 0;
        if (n < 1 || n > WL_MAX_STAGES)
            return ctx_fail(c, name, "needs 1 to 8 stages: '%s'", value);
        for (int i = 0; i < n; i++) {
            if (v[i] != floor(v[i]) || v[i] < 1 || v[i] > 1000)
                return ctx_fail(c, name, "not a positive integer list: '%s'", value);
            m->blocks[i] = (int)v[i];
        }
        m->stages = n;
        return 1;
    }
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
        if (strcmp(name, ints[i]))
            continue;
        if (c->seen[i])
            return ctx_fail(c, name, "duplicate key%s", "");
        c->seen[i] = 1;
        double v;
        if (parse_double(value, &v) || v != floor(v) || v < 0 || v > 1e7)
            return ctx_fail(c, name, "not a non-negative integer: '%s'", value);
        *iptr[i] = (int)v;
        return 1;
    }
    if (strcmp(name, "id") == 0) {
        if (!value[0] || strlen(value) >= sizeof m->id)
            return ctx_fail(c, name, "empty or too long: '%s'", value);
        strcpy(m->id, value);
        c->seen[20] = 1;
    } else if (strcmp(name, "style") == 0) {
        if (wl_style_parse(value, &m->style))
            return ctx_fail(c, name, "unknown style '%s' (gpt2, bert, opt, llama, vit, resnet)", value);
        c->seen[21] = 1;
    } else if (strcmp(name, "activation") == 0) {
        if (wl_activation_parse(value, &m->activation))
            return ctx_fail(c, name, "unknown activation '%s' (relu, gelu, gelu-tanh, swiglu)",
                            value);
    } else if (strcmp(name, "norm") == 0) {
        if (strcmp(value, "layernorm") == 0)
            m->norm = WL_NORM_LAYERNORM;
        else if (strcmp(value, "rmsnorm") == 0)
            m->norm = WL_NORM_RMSNORM;
        else
            return ctx_fail(c, name, "unknown norm '%s' (layernorm, rmsnorm)", value);
    } else if (strcmp(name, "norm_placement") == 0) {
        if (strcmp(value, "pre") == 0)
            m->pre_norm = 1;
        else if (strcmp(value, "post") == 0)
            m->pre_norm = 0;
        else
            return ctx_fail(c, name, "unknown placement '%s' (pre, post)", value);
    } else if (strcmp(name, "positions") == 0) {
        if (strcmp(value, "learned") == 0)
            m->positions = WL_POS_LEARNED;
        else if (strcmp(value, "rotary") == 0)
            m->positions = WL_POS_ROTARY;
        else
            return ctx_fail(c, name, "unknown positions '%s' (learned, rotary)", value);
    } else if (!is_info(name) && strcmp(name, "name") != 0) {
        return ctx_fail(c, name, "unknown key '%s' in [model]", name);
    }
    return 1;
}

int wl_preset_model_parse(const char *text, const char *source, wl_core_model *out,
                          wl_error *err)
{
    memset(out, 0, sizeof *out);
    out->pre_norm = 1;
    out->final_norm = -1;
    out->kv_heads = -1;
    ctx c = {0};
    c.source = source;
    c.model = out;
    c.err = err;
    int rc = finish_ini(ini_parse_string(text, model_handler, &c), &c, err);
    if (rc)
        return rc;
    int cnn = c.seen[21] && out->style == WL_STYLE_RESNET;
    if (cnn && !c.seen[22]) {
        wl_error_set(err, source, 0, "blocks", "missing required key in [model] for style resnet");
        return WL_EPARSE;
    }
    if (out->style == WL_STYLE_VIT || cnn) {
        static const char *const vreq[] = {"image_size_px", "channels"};
        for (int i = 0; i < 2; i++)
            if (!c.seen[8 + 2 * i]) {
                wl_error_set(err, source, 0, vreq[i], "missing required key in [model] for a vision style");
                return WL_EPARSE;
            }
    }
    static const char *const req[] = {"layers", "d_model", "heads"};
    for (int i = 0; i < 3 && !cnn; i++)
        if (!c.seen[i]) {
            wl_error_set(err, source, 0, req[i], "missing required key in [model]");
            return WL_EPARSE;
        }
    if (!c.seen[4] && !cnn) {
        wl_error_set(err, source, 0, "d_ff", "missing required key in [model]");
        return WL_EPARSE;
    }
    if (!c.seen[20]) {
        wl_error_set(err, source, 0, "id", "missing required key in [model]");
        return WL_EPARSE;
    }
    if (!c.seen[21]) {
        wl_error_set(err, source, 0, "style", "missing required key in [model]");
        return WL_EPARSE;
    }
    if (out->kv_heads < 0)
        out->kv_heads = out->heads;
    if (out->final_norm < 0)
        out->final_norm = out->pre_norm;
    if (wl_core_model_check(out, err)) {
        snprintf(err->source, sizeof err->source, "%s", source);
        return WL_EPARSE;
    }
    return WL_OK;
}

/* ---- loading ------------------------------------------------------------- */

static int is_path(const char *s)
{
    size_t n = strlen(s);
    return strchr(s, '/') || (n > 4 && strcmp(s + n - 4, ".ini") == 0);
}

static int load(wl_preset_kind kind, const char *id, void *out, wl_error *err)
{
    char src[256];
    const char *hub = NULL;
    size_t idlen = strlen(id);
    /* "org/name" that is no file and no .ini: a model hub id */
    if (kind == WL_PRESET_MODEL && is_path(id) && !(idlen > 4 && strcmp(id + idlen - 4, ".ini") == 0)) {
        FILE *probe = fopen(id, "r");
        if (probe) {
            fclose(probe);
        } else if (!(hub = wl_preset_model_resolve(id))) {
            wl_error_set(err, id, 0, "model",
                         "neither a file nor a model preset or alias (see 'wattlas presets list')");
            return WL_ENOTFOUND;
        }
    }
    if (hub)
        id = hub;
    else if (is_path(id)) {
        char *text = NULL;
        int rc0 = wl_core_read_file(id, &text, NULL, err);
        if (rc0)
            return rc0;
        int rc = kind == WL_PRESET_GPU ? wl_preset_gpu_parse(text, id, out, err)
                                       : wl_preset_model_parse(text, id, out, err);
        free(text);
        return rc;
    }
    const char *text = wl_preset_text(kind, id);
    if (!text) {
        const char *canon = kind == WL_PRESET_GPU ? wl_preset_gpu_resolve(id) : wl_preset_model_resolve(id);
        if (canon) {
            id = canon;
            text = wl_preset_text(kind, id);
        }
    }
    if (!text) {
        wl_error_set(err, id, 0, kind == WL_PRESET_GPU ? "gpu" : "model",
                     "no such preset (see 'wattlas presets list')");
        return WL_ENOTFOUND;
    }
    snprintf(src, sizeof src, "presets/%s/%s.ini", kind_dir(kind), id);
    return kind == WL_PRESET_GPU ? wl_preset_gpu_parse(text, src, out, err)
                                 : wl_preset_model_parse(text, src, out, err);
}

int wl_preset_gpu_load(const char *id_or_path, wl_core_gpu *out, wl_error *err)
{
    return load(WL_PRESET_GPU, id_or_path, out, err);
}

int wl_preset_model_load(const char *id_or_path, wl_core_model *out, wl_error *err)
{
    return load(WL_PRESET_MODEL, id_or_path, out, err);
}

/* ---- field access ---------------------------------------------------------- */

static const gpu_field *find_numeric(const char *key)
{
    for (size_t i = 0; i < N_GPU_FIELDS; i++)
        if (gpu_fields[i].type != F_STR && strcmp(gpu_fields[i].key, key) == 0)
            return &gpu_fields[i];
    return NULL;
}

int wl_preset_gpu_set(wl_core_gpu *gpu, const char *key, double value)
{
    const gpu_field *f = find_numeric(key);
    if (!f)
        return WL_ENOTFOUND;
    char *base = (char *)gpu + f->off;
    if (f->type == F_INT) {
        if (value != floor(value) || value < 0 || value > 1e9)
            return WL_EINVAL;
        *(int *)(void *)base = (int)value;
    } else {
        *(double *)(void *)base = value;
    }
    /* a rule key takes its column over from a measured table */
    unsigned col = 0;
    if (!strcmp(key, "vmin_mv") || !strcmp(key, "vmax_mv") || !strcmp(key, "vf_knee_mhz"))
        col = WL_VF_RULE_VOLTAGE;
    else if (!strcmp(key, "idle_power_min_w") || !strcmp(key, "idle_power_max_w") ||
             !strcmp(key, "idle_clock_slope"))
        col = WL_VF_RULE_IDLE;
    if (col) {
        wl_core_gpu_vf_rule_from_table(gpu);
        gpu->vf_rule |= col;
        wl_error e;
        if (wl_core_gpu_vf_rule(gpu, &e))
            return WL_EINVAL;
    }
    return WL_OK;
}

int wl_preset_gpu_apply(wl_core_gpu *gpu, const char *const *keys, const double *values,
                        size_t n, const char **failed_key)
{
    wl_core_gpu base = *gpu;
    int spec = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < n; i++) {
            const gpu_field *f = find_numeric(keys[i]);
            if (!f) {
                *failed_key = keys[i];
                return WL_ENOTFOUND;
            }
            int is_spec = strcmp(f->section, "vf") != 0 && strcmp(f->section, "calibration") != 0;
            if (is_spec != (pass == 0))
                continue;
            int rc = wl_preset_gpu_set(gpu, keys[i], values[i]);
            if (rc) {
                *failed_key = keys[i];
                return rc;
            }
            spec |= is_spec;
        }
        if (pass == 0 && spec) {
            wl_error e;
            wl_core_gpu changed = *gpu;
            if (wl_core_gpu_transfer(&base, &changed, &e) == WL_OK)
                gpu->coef = changed.coef;
        }
    }
    return WL_OK;
}

int wl_preset_gpu_get(const wl_core_gpu *gpu, const char *key, double *value)
{
    const gpu_field *f = find_numeric(key);
    if (!f)
        return WL_ENOTFOUND;
    const char *base = (const char *)gpu + f->off;
    *value = f->type == F_INT ? (double)*(const int *)(const void *)base
                              : *(const double *)(const void *)base;
    return WL_OK;
}

void wl_preset_write_calibration(FILE *out, const wl_core_gpu *gpu)
{
    fprintf(out, "[calibration]\n");
    for (size_t i = 0; i < N_GPU_FIELDS; i++) {
        if (strcmp(gpu_fields[i].section, "calibration"))
            continue;
        double v = 0;
        wl_preset_gpu_get(gpu, gpu_fields[i].key, &v);
        fprintf(out, "%s = %.10g\n", gpu_fields[i].key, v);
    }
}
