/* GPU presets: the field table that drives parsing, --set and printing;
 * parsing a GPU preset (inih) with its [vf] tables, transferred
 * coefficients, host and calibrated spec; loading one by name; field
 * access by key. (The built-in presets and finding one: builtin.c; models:
 * model.c; hosts: hosts.c.) */
#include "preset_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---- GPU keys ------------------------------------------------------------
 * One table drives parsing, --set, printing and the range of every key. The
 * ranges are not physics (wl_core_gpu_check has the relations); they reject
 * what no GPU could have -- a 1e30 W power limit, 1e-300 GB/s of DRAM -- so
 * that an absurd number is an error naming its key, not a result printed
 * with 300 digits. */

typedef enum { F_DOUBLE, F_INT, F_STR } ftype;

typedef struct {
    const char *section, *key;
    size_t off;
    ftype type;
    size_t size;   /* for F_STR */
    int required;
    double lo, hi; /* allowed range; lo excluded when lo_open */
    int lo_open;
} gpu_field;

#define BIG 1e9
#define D(sec, key, member, req, lo, hi, open) \
    {sec, key, offsetof(wl_core_gpu, member), F_DOUBLE, 0, req, lo, hi, open}
#define I(sec, key, member, req, lo, hi) \
    {sec, key, offsetof(wl_core_gpu, member), F_INT, 0, req, lo, hi, 0}
#define S(sec, key, member, req) \
    {sec, key, offsetof(wl_core_gpu, member), F_STR, sizeof(((wl_core_gpu *)0)->member), req, 0, 0, 0}
#define C(key, lo, hi, open) \
    {"calibration", #key, offsetof(wl_core_gpu, coef.key), F_DOUBLE, 0, 0, lo, hi, open}
#define POS 1 /* lower bound excluded */

static const gpu_field gpu_fields[] = {
    S("gpu", "id", id, 1),
    S("gpu", "name", name, 0),
    S("gpu", "host", host_id, 0),
    I("gpu", "sms", sms, 1, 1, 100000),
    D("gpu", "sm_clock_min_mhz", sm_clock_min_mhz, 1, 0, 100000, POS),
    D("gpu", "sm_clock_max_mhz", sm_clock_max_mhz, 1, 0, 100000, POS),
    D("gpu", "sm_clock_step_mhz", sm_clock_step_mhz, 1, 0, 100000, POS),
    D("gpu", "power_limit_w", power_limit_w, 1, 0, 100000, POS),
    D("gpu", "power_tau_us", power_tau_us, 0, 0, 1e7, 0),
    D("gpu", "power_limit_min_w", power_limit_min_w, 0, 0, 100000, 0),
    D("gpu", "tdp_w", tdp_w, 0, 0, 100000, 0),
    D("gpu", "process_nm", process_nm, 0, 0, 1000, 0),
    D("technology", "e_mac_fp32_pj", tech_mac_pj[WL_DT_FP32], 0, 0, 10000, 0),
    D("technology", "e_mac_tf32_pj", tech_mac_pj[WL_DT_TF32], 0, 0, 10000, 0),
    D("technology", "e_mac_fp16_pj", tech_mac_pj[WL_DT_FP16], 0, 0, 10000, 0),
    D("technology", "e_mac_bf16_pj", tech_mac_pj[WL_DT_BF16], 0, 0, 10000, 0),
    D("technology", "e_mac_fp8_pj", tech_mac_pj[WL_DT_FP8], 0, 0, 10000, 0),
    D("technology", "e_mac_int8_pj", tech_mac_pj[WL_DT_INT8], 0, 0, 10000, 0),
    D("technology", "e_reg_pj_per_byte", tech_reg_pj_per_byte, 0, 0, 10000, 0),
    D("technology", "e_smem_pj_per_byte", tech_smem_pj_per_byte, 0, 0, 10000, 0),
    D("technology", "e_l2_pj_per_byte", tech_l2_pj_per_byte, 0, 0, 10000, 0),
    D("technology", "e_dram_pj_per_bit", tech_dram_pj_per_bit, 0, 0, 10000, 0),
    D("compute", "datasheet_clock_mhz", datasheet_clock_mhz, 0, 0, 100000, 0),
    D("compute", "tc_tf32_flop_per_clk_sm", tc_flop_per_clk_sm[WL_DT_TF32], 0, 0, 1e7, 0),
    D("compute", "tc_fp16_flop_per_clk_sm", tc_flop_per_clk_sm[WL_DT_FP16], 0, 0, 1e7, 0),
    D("compute", "tc_bf16_flop_per_clk_sm", tc_flop_per_clk_sm[WL_DT_BF16], 0, 0, 1e7, 0),
    D("compute", "tc_fp8_flop_per_clk_sm", tc_flop_per_clk_sm[WL_DT_FP8], 0, 0, 1e7, 0),
    D("compute", "tc_int8_op_per_clk_sm", tc_flop_per_clk_sm[WL_DT_INT8], 0, 0, 1e7, 0),
    D("compute", "cuda_fp32_flop_per_clk_sm", cuda_flop_per_clk_sm[WL_DT_FP32], 1, 0, 1e7, POS),
    D("compute", "cuda_fp16_flop_per_clk_sm", cuda_flop_per_clk_sm[WL_DT_FP16], 0, 0, 1e7, 0),
    D("compute", "cuda_bf16_flop_per_clk_sm", cuda_flop_per_clk_sm[WL_DT_BF16], 0, 0, 1e7, 0),
    D("compute", "sfu_op_per_clk_sm", sfu_op_per_clk_sm, 1, 0, 1e6, POS),
    D("compute", "cuda_int32_op_per_clk_sm", cuda_int32_op_per_clk_sm, 0, 0, 1e6, 0),
    I("compute", "cluster_multicast", cluster_multicast, 0, 0, 64),
    I("compute", "gemm_stream_k", gemm_stream_k, 0, 0, 1),
    D("memory", "l2_size_mb", l2_size_mb, 1, 0, 1e6, POS),
    D("memory", "l2_bw_bytes_per_clk", l2_bytes_per_clk, 1, 0, 1e8, POS),
    D("memory", "l2_clock_min_mhz", l2_clock_min_mhz, 0, 0, 100000, 0),
    S("memory", "dram_type", dram_type, 1),
    D("memory", "dram_bw_gbs", dram_bw_gbs, 1, 1, 1e7, 0),
    D("memory", "mem_capacity_gb", mem_capacity_gb, 0, 0, 1e6, 0),
    D("memory", "mem_clock_mhz", mem_clock_mhz, 1, 1, 1e6, 0),
    D("memory", "smem_per_sm_kb", smem_per_sm_kb, 1, 0, 1e6, POS),
    D("memory", "smem_bw_bytes_per_clk_sm", smem_bytes_per_clk_sm, 1, 0, 1e6, POS),
    I("memory", "max_warps_per_sm", max_warps_per_sm, 1, 1, 100000),
    D("vf", "v_ref_mv", v_ref_mv, 1, 100, 5000, 0),
    D("vf", "vth_mv", vth_mv, 0, 0, 5000, 0),
    D("vf", "alpha_power", alpha_power, 0, 1, 2, 0),
    D("vf", "vf_guardband_mv", vf_guardband_mv, 0, 0, 1000, 0),
    S("vf", "voltage_from", vf_voltage_from, 0),
    D("vf", "vmin_mv", vf_vmin_mv, 0, 100, 5000, 0),
    D("vf", "vmax_mv", vf_vmax_mv, 0, 100, 5000, 0),
    D("vf", "vf_knee_mhz", vf_knee_mhz, 0, 0, 100000, POS),
    D("vf", "idle_power_min_w", idle_min_w, 0, 0, 100000, 0),
    D("vf", "idle_power_max_w", idle_max_w, 0, 0, 100000, 0),
    D("vf", "idle_clock_slope", idle_clock_slope, 0, 0, 100, 0),
    C(tc_eff, 0, 1, POS),
    C(cuda_eff, 0, 1, POS),
    C(alu_eff, 0, 1, POS),
    C(dram_eff, 0, 1, POS),
    C(l2_eff, 0, 1, POS),
    C(mem_bytes_per_clk, 0, BIG, POS),
    C(mem_path_gbs, 0, BIG, POS),
    C(overlap_p, 1, 100, 0),
    C(tile_overhead_clk, 0, BIG, 0),
    C(kernel_fixed_us, 0, 1e6, 0),
    C(kernel_fixed_clk, 0, BIG, 0),
    C(host_launch_us, 0, 1e6, 0),
    C(host_op_launch_us, 0, 1e6, 0),
    C(host_train_launch_us, 0, 1e6, 0),
    C(host_backward_launch_us, 0, 1e6, 0),
    C(host_optimizer_launch_us, 0, 1e6, 0),
    C(host_decode_launch_us, 0, 1e6, 0),
    C(launch_clk, 0, BIG, 0),
    C(v_exponent, 1, 5, 0),
    C(c_active_w, 0, 1e6, 0),
    C(c_gap_w, 0, 1e6, 0),
    C(c_tc_w, 0, 1e6, 0),
    C(c_fp_w, 0, 1e6, 0),
    C(c_sfu_w, 0, 1e6, 0),
    C(c_smem_w, 0, 1e6, 0),
    C(c_l2_w, 0, 1e6, 0),
    C(e_dram_pj_per_byte, 0, 1e5, 0),
    C(dram_background_w, 0, 1e5, 0),
    C(leak_w_per_c, 0, 1e4, 0),
    C(vf_temp_mhz_per_c, 0, 100, 0),
    C(thermal_c_per_w, 0, 100, 0),
    C(idle_temp_c, -50, 150, 0),
    C(power_cap_frac, 0, 1.05, POS),
    C(tc_fp8_power_ratio, 0, 10, 0),
};
#define N_GPU_FIELDS (sizeof gpu_fields / sizeof *gpu_fields)
_Static_assert(N_GPU_FIELDS <= 128, "ctx.seen is too small for the GPU keys");

/* The [vf] table columns: lists, with their ranges. */
static const struct {
    const char *key;
    double lo, hi;
} vf_lists[3] = {{"clock_mhz", 1, 100000}, {"voltage_mv", 1, 5000}, {"idle_power_w", 0, 100000}};

/* A key's value that is not a number; one written with a unit ("700 W")
 * is told what to write. */
static int number_error(ctx *c, int line, const char *name, const char *value)
{
    char hint[200];
    wl_core_unit_hint(value, "", name, hint, sizeof hint);
    return wl_preset_i_fail(c, line, name, "expected a number, got '%.80s'%s", value, hint);
}

/* Checks v against a field's range; err names the key and the range. */
static int field_in_range(const gpu_field *f, double v, wl_error *err)
{
    int ok = (f->lo_open ? v > f->lo : v >= f->lo) && v <= f->hi &&
             (f->type != F_INT || v == floor(v));
    if (ok)
        return WL_OK;
    char lo[WL_CORE_NUM_TEXT], hi[WL_CORE_NUM_TEXT], got[WL_CORE_NUM_TEXT];
    wl_core_num_text(lo, sizeof lo, f->lo);
    wl_core_num_text(hi, sizeof hi, f->hi);
    wl_core_num_text(got, sizeof got, v);
    wl_error_set(err, "", 0, f->key, "expected %s in %s%s, %s], got %s",
                 f->type == F_INT ? "an integer" : "a number", f->lo_open ? "(" : "[", lo, hi, got);
    return WL_EINVAL;
}

/* Spec-sheet keys: what a design change (--set, an edited preset) moves
 * and the transfer rules read; not [vf] and not [calibration]. */
static int spec_field(const gpu_field *f)
{
    return strcmp(f->section, "vf") != 0 && strcmp(f->section, "calibration") != 0 &&
           (f->type != F_STR || strcmp(f->key, "dram_type") == 0);
}

/* A [calibrated_spec] key: a spec key's value as it was when the
 * coefficients were fitted (checked as the key itself is). */
static int calibrated_spec_key(ctx *c, const char *name, const char *value, int line)
{
    if (wl_preset_i_is_info(name))
        return 1;
    for (size_t i = 0; i < N_GPU_FIELDS; i++) {
        const gpu_field *f = &gpu_fields[i];
        if (strcmp(name, f->key) || !spec_field(f))
            continue;
        for (size_t k = 0; k < c->ncs; k++)
            if (c->cs[k].field == i)
                return wl_preset_i_fail(c, line, name, "duplicate key in [calibrated_spec] (first on line %d)",
                                c->cs[k].line);
        if (f->type == F_STR) {
            if (c->cs_dram[0])
                return wl_preset_i_fail(c, line, name, "duplicate key in [calibrated_spec]");
            if (!value[0] || strlen(value) >= sizeof c->cs_dram)
                return wl_preset_i_fail(c, line, name, "empty or longer than %zu characters",
                                sizeof c->cs_dram - 1);
            memcpy(c->cs_dram, value, strlen(value) + 1);
        } else {
            double v;
            if (wl_core_parse_number(value, &v))
                return number_error(c, line, name, value);
            if (field_in_range(f, v, c->err)) {
                wl_error_locate(c->err, c->source, line);
                return 0;
            }
            if (c->ncs == sizeof c->cs / sizeof *c->cs)
                return wl_preset_i_fail(c, line, name, "too many keys in [calibrated_spec]");
            c->cs[c->ncs].field = i;
            c->cs[c->ncs].v = v;
            c->cs[c->ncs++].line = line;
        }
        if (!c->cs_line)
            c->cs_line = line;
        return 1;
    }
    return wl_preset_i_fail(c, line, name, "not a spec-sheet key ([gpu], [compute], [memory], "
                    "[technology]) for [calibrated_spec]");
}

static int gpu_handler(void *user, const char *section, const char *name, const char *value,
                       int line)
{
    ctx *c = user;
    wl_core_gpu *g = c->gpu;
    if (strcmp(section, "covariance") == 0)
        return 1; /* read by calib/ (wl_calib_uncertainty_parse) */
    if (strcmp(section, "calibration") == 0 && strcmp(name, "transfer_from") == 0) {
        if (c->transfer_from[0])
            return wl_preset_i_fail(c, line, name, "duplicate key in [%s]", section);
        if (!value[0] || strlen(value) >= sizeof c->transfer_from)
            return wl_preset_i_fail(c, line, name, "empty or longer than %zu characters",
                            sizeof c->transfer_from - 1);
        memcpy(c->transfer_from, value, strlen(value) + 1);
        c->transfer_line = line;
        return 1;
    }
    if (strcmp(section, "calibration") == 0) {
        /* the fit's record, kept (bounded) for fit_info; longer text is
         * still accepted as information */
        char *keep = !strcmp(name, "fitted_rows")     ? c->fit_rows
                     : !strcmp(name, "data_hash")     ? c->fit_hash
                     : !strcmp(name, "held_out_rows") ? c->fit_held
                                                      : NULL;
        size_t cap = keep == c->fit_hash ? sizeof c->fit_hash : sizeof c->fit_rows;
        if (keep)
            snprintf(keep, cap, "%s", value);
    }
    if (strcmp(section, "vf") == 0)
        for (int i = 0; i < 3; i++)
            if (strcmp(name, vf_lists[i].key) == 0)
                return wl_preset_i_list_append(c, i, value, line);
    if (strcmp(section, "calibrated_spec") == 0)
        return calibrated_spec_key(c, name, value, line);
    for (size_t i = 0; i < N_GPU_FIELDS; i++) {
        const gpu_field *f = &gpu_fields[i];
        if (strcmp(section, f->section) || strcmp(name, f->key))
            continue;
        if (c->seen[i])
            return wl_preset_i_fail(c, line, name, "duplicate key in [%s] (first on line %d)", section,
                            c->seen_line[i]);
        c->seen[i] = 1;
        c->seen_line[i] = line;
        c->n_cal += strcmp(f->section, "calibration") == 0;
        char *base = (char *)g + f->off;
        if (f->type == F_STR) {
            if (strlen(value) >= f->size || !value[0])
                return wl_preset_i_fail(c, line, name, "empty or longer than %zu characters", f->size - 1);
            memcpy(base, value, strlen(value) + 1);
            return 1;
        }
        double v;
        if (wl_core_parse_number(value, &v))
            return number_error(c, line, name, value);
        if (field_in_range(f, v, c->err)) {
            wl_error_locate(c->err, c->source, line);
            return 0;
        }
        if (f->type == F_INT)
            *(int *)(void *)base = (int)v;
        else
            *(double *)(void *)base = v;
        return 1;
    }
    if ((strcmp(section, "calibration") == 0 || strcmp(section, "vf") == 0 ||
         strcmp(section, "gpu") == 0) && wl_preset_i_is_info(name))
        return 1;
    if (strcmp(section, "calibration") == 0 && strncmp(name, "stderr_", 7) == 0)
        return 1; /* standard errors written by calibrate */
    return wl_preset_i_fail(c, line, name, "unknown key in [%.60s]", section);
}

/* The line of a key's first appearance, for errors found after reading. */
static int key_line(const ctx *c, const char *key)
{
    for (size_t i = 0; i < N_GPU_FIELDS; i++)
        if (strcmp(gpu_fields[i].key, key) == 0)
            return c->seen_line[i];
    for (int i = 0; i < 3; i++)
        if (c->gpu && strcmp(vf_lists[i].key, key) == 0)
            return c->list[i].line;
    if (strcmp(key, "transfer_from") == 0)
        return c->transfer_line;
    return 0;
}

static int seen_key(const ctx *c, const char *key)
{
    return key_line(c, key) > 0;
}

/* Parses the [vf] lists into the table columns; returns the counts. */
static int vf_lists_parse(ctx *c, int n[3])
{
    for (int i = 0; i < 3; i++) {
        n[i] = 0;
        if (!c->list[i].text)
            continue;
        wl_core_numlist l = {0};
        int rc = wl_core_parse_list(c->list[i].text, vf_lists[i].lo, vf_lists[i].hi, 0, c->source,
                                    c->list[i].line, vf_lists[i].key, &l, c->err);
        if (!rc && l.n > WL_VF_MAX) {
            wl_error_set(c->err, c->source, c->list[i].line, vf_lists[i].key,
                         "more than %d table points", WL_VF_MAX);
            rc = WL_EPARSE;
        }
        double *dst = i == 0 ? c->gpu->vf.clock_mhz : i == 1 ? c->gpu->vf.voltage_mv
                                                              : c->gpu->vf.idle_w;
        for (size_t k = 0; !rc && k < l.n; k++)
            dst[k] = l.v[k];
        n[i] = (int)l.n;
        wl_core_numlist_free(&l);
        if (rc)
            return WL_EPARSE;
    }
    return WL_OK;
}

/* Measured [vf] tables, or the documented rule (wl_core_gpu_vf_rule) for a
 * column that has no table: voltage from vmin_mv/vmax_mv/vf_knee_mhz, idle
 * from idle_power_min_w/idle_power_max_w. */
static int vf_tables(ctx *c, wl_core_gpu *out, const char *source, wl_error *err)
{
    static const char *const vkeys[] = {"vmin_mv", "vmax_mv", "vf_knee_mhz"};
    static const char *const ikeys[] = {"idle_power_min_w", "idle_power_max_w"};
    int counts[3];
    if (vf_lists_parse(c, counts))
        return WL_EPARSE;
    int nc = counts[0], nv = counts[1], ni = counts[2];
    int vrule = 0, irule = 0;
    for (int i = 0; i < 3; i++)
        vrule |= seen_key(c, vkeys[i]);
    for (int i = 0; i < 2; i++)
        irule |= seen_key(c, ikeys[i]);
    int l_v = c->list[1].line, l_i = c->list[2].line, l_c = c->list[0].line;
    if (vrule && nv) {
        wl_error_set(err, source, l_v, "voltage_mv",
                     "[vf] has both a voltage_mv table and vmin_mv/vmax_mv/vf_knee_mhz; keep one");
        return WL_EPARSE;
    }
    if (irule && ni) {
        wl_error_set(err, source, l_i, "idle_power_w",
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
        wl_error_set(err, source, l_c, "clock_mhz",
                     "[vf] lists differ in length: clock_mhz %d, voltage_mv %d, idle_power_w %d",
                     nc, nv, ni);
        return WL_EPARSE;
    }
    if (nc && (!nv || !ni) && nc < 2) {
        wl_error_set(err, source, l_c, "clock_mhz", "the [vf] table needs at least two points");
        return WL_EPARSE;
    }
    if (out->vf_voltage_from[0] && !nv) {
        wl_error_set(err, source, key_line(c, "voltage_from"), "voltage_from",
                     "names the rows a voltage_mv table was derived from; this [vf] has no voltage_mv");
        return WL_EPARSE;
    }
    out->vf.n = nc;
    out->vf_rule = (vrule ? WL_VF_RULE_VOLTAGE : 0u) | (irule ? WL_VF_RULE_IDLE : 0u);
    if (out->vf_rule && wl_core_gpu_vf_rule(out, err)) {
        wl_error_locate(err, source, key_line(c, err->field));
        return WL_EPARSE;
    }
    return WL_OK;
}

/* [calibration] transfer_from = ID|PATH: the coefficients come from a
 * calibrated GPU through wl_core_gpu_transfer. */
static int transfer(const ctx *c, wl_core_gpu *out, const char *source, wl_error *err)
{
    static _Thread_local int depth;
    int line = c->transfer_line;
    if (c->n_cal) {
        wl_error_set(err, source, line, "transfer_from",
                     "[calibration] has both transfer_from and fitted values; keep one");
        return WL_EPARSE;
    }
    if (strcmp(c->transfer_from, source) == 0 || strcmp(c->transfer_from, out->id) == 0) {
        wl_error_set(err, source, line, "transfer_from", "a GPU cannot transfer from itself");
        return WL_EPARSE;
    }
    if (depth >= 4) {
        wl_error_set(err, source, line, "transfer_from", "transfer_from chain longer than 4 (a cycle?)");
        return WL_EPARSE;
    }
    wl_core_gpu src;
    wl_error e2 = {0};
    depth++;
    int rc = wl_preset_gpu_load(c->transfer_from, &src, &e2);
    depth--;
    if (rc) {
        char msg[512];
        wl_error_format(&e2, msg, sizeof msg);
        wl_error_set(err, source, line, "transfer_from", "cannot load '%s': %.180s",
                     c->transfer_from, msg);
        return WL_EPARSE;
    }
    if (wl_core_gpu_transfer(&src, out, &e2)) {
        wl_error_set(err, source, line, e2.field, "transfer from %s: %s", c->transfer_from, e2.text);
        return WL_EPARSE;
    }
    snprintf(out->coef_source, sizeof out->coef_source, "transferred from %s", src.id);
    if (src.fit_info[0])
        snprintf(out->fit_info, sizeof out->fit_info, "%.32s's %.180s", src.id, src.fit_info);
    return WL_OK;
}

/* What [calibration] says the coefficients were fitted on, as predict's
 * header and validate print it: "fitted on 106 rows of FILE (HASH), 3 held
 * out". Only for coefficients of this spec as written (not transferred, not
 * carried to an edited spec). */
static void fit_info(const ctx *c, wl_core_gpu *out)
{
    if (!c->n_cal || c->transfer_from[0] || out->coef_source[0] || !c->fit_rows[0])
        return;
    /* data_hash is "fnv1a64:HEX (FILE)": the file first, then its hash */
    const char *hash = c->fit_hash, *file = strchr(hash, '(');
    int hlen = file ? (int)(file - hash) : (int)strlen(hash);
    while (hlen > 0 && hash[hlen - 1] == ' ')
        hlen--;
    snprintf(out->fit_info, sizeof out->fit_info, "fitted on %s rows%s%.*s%s%.*s%s%s%s",
             c->fit_rows, file ? " of " : "", file ? (int)strcspn(file + 1, ")") : 0,
             file ? file + 1 : "", hlen ? ", " : "", hlen, hash, c->fit_held[0] ? ", " : "",
             c->fit_held, c->fit_held[0] ? " held out" : "");
}

/* [gpu] host = ID|PATH: the host class the GPU usually comes in owns the
 * per-kernel issue cost. A file whose [calibration] states host_launch_us
 * keeps its own; a file with neither takes the calibration host. */
static int gpu_host(const ctx *c, wl_core_gpu *out, const char *source, wl_error *err)
{
    int own = seen_key(c, "host_launch_us") || seen_key(c, "host_op_launch_us") ||
              seen_key(c, "host_train_launch_us") || seen_key(c, "host_backward_launch_us") ||
              seen_key(c, "host_optimizer_launch_us") || seen_key(c, "host_decode_launch_us");
    if (own && out->host_id[0]) {
        wl_error_set(err, source, key_line(c, "host"), "host",
                     "both [gpu] host and a [calibration] host_*_us cost; "
                     "the host preset sets the issue cost, keep one");
        return WL_EPARSE;
    }
    if (own)
        return WL_OK;
    const char *id = out->host_id[0] ? out->host_id : WL_PRESET_DEFAULT_HOST;
    wl_core_host h;
    wl_error e2 = {0};
    if (wl_preset_host_load(id, &h, &e2)) {
        char msg[512];
        wl_error_format(&e2, msg, sizeof msg);
        wl_error_set(err, source, key_line(c, "host"), "host", "cannot load host '%.60s': %.300s",
                     id, msg);
        return WL_EPARSE;
    }
    wl_core_gpu_set_host(out, &h);
    return WL_OK;
}

/* Coefficients belong to the spec they were fitted on. A preset whose
 * [calibrated_spec] differs from its own spec (a copy of a calibrated preset
 * with more SMs, faster DRAM, a higher limit) gets them through the transfer
 * rules from the GPU as calibrated, exactly as --set with the same changes;
 * coef_source says what changed. A preset with no [calibration] at all runs
 * on the physical defaults, and coef_source says that too. */
static int edited_spec(const ctx *c, wl_core_gpu *out, const char *source, wl_error *err)
{
    if (!c->n_cal && !c->transfer_from[0]) {
        if (c->cs_line) {
            wl_error_set(err, source, c->cs_line, "calibrated_spec",
                         "[calibrated_spec] without fitted [calibration] values");
            return WL_EPARSE;
        }
        snprintf(out->coef_source, sizeof out->coef_source,
                 "physical defaults (the preset has no [calibration]: uncalibrated)");
        return WL_OK;
    }
    if (!c->cs_line)
        return WL_OK; /* fitted for this spec as written */
    if (c->transfer_from[0]) {
        wl_error_set(err, source, c->cs_line, "calibrated_spec",
                     "[calibrated_spec] with transfer_from: the transfer already follows the spec");
        return WL_EPARSE;
    }
    wl_core_gpu src = *out;
    char what[sizeof out->coef_source] = "";
    size_t n = 0;
    for (size_t k = 0; k < c->ncs; k++) {
        const gpu_field *f = &gpu_fields[c->cs[k].field];
        double now;
        wl_preset_gpu_get(out, f->key, &now);
        wl_preset_gpu_set(&src, f->key, c->cs[k].v, err); /* in range: checked when read */
        /* as written in the file, to 10 digits */
        if (fabs(now - c->cs[k].v) > 1e-9 * fmax(fabs(now), fabs(c->cs[k].v)) && n < sizeof what - 1) {
            char a[WL_CORE_NUM_TEXT], b[WL_CORE_NUM_TEXT];
            wl_core_num_text(a, sizeof a, c->cs[k].v);
            wl_core_num_text(b, sizeof b, now);
            int w = snprintf(what + n, sizeof what - n, "%s%s %s -> %s", n ? ", " : "", f->key, a, b);
            n = w > 0 ? n + (size_t)w : n;
        }
    }
    if (c->cs_dram[0] && strcmp(c->cs_dram, out->dram_type)) {
        snprintf(src.dram_type, sizeof src.dram_type, "%s", c->cs_dram);
        if (n < sizeof what - 1) {
            int w = snprintf(what + n, sizeof what - n, "%sdram_type %s -> %s", n ? ", " : "",
                             c->cs_dram, out->dram_type);
            n = w > 0 ? n + (size_t)w : n;
        }
    }
    if (!n)
        return WL_OK;
    wl_error e2 = {0};
    if (wl_core_gpu_transfer(&src, out, &e2)) {
        wl_error_set(err, source, c->cs_line, e2.field,
                     "the spec differs from [calibrated_spec] (%.120s) and the transfer rules "
                     "cannot carry the coefficients over: %.100s", what, e2.text);
        return WL_EPARSE;
    }
    snprintf(out->coef_source, sizeof out->coef_source,
             "carried to the edited spec by the transfer rules (%.200s)", what);
    return WL_OK;
}

static int gpu_parse(ctx *c, const char *text, const char *source, wl_core_gpu *out,
                     wl_error *err)
{
    int rc = wl_preset_ini_parse(text, strlen(text), source, gpu_handler, c, err);
    if (rc)
        return rc;
    for (size_t i = 0; i < N_GPU_FIELDS; i++)
        if (gpu_fields[i].required && !c->seen[i]) {
            wl_error_set(err, source, 0, gpu_fields[i].key, "missing required key in [%s]",
                         gpu_fields[i].section);
            return WL_EPARSE;
        }
    if ((rc = vf_tables(c, out, source, err)))
        return rc;
    if (c->transfer_from[0] && (rc = transfer(c, out, source, err)))
        return rc;
    if ((rc = gpu_host(c, out, source, err)))
        return rc;
    if ((rc = edited_spec(c, out, source, err)))
        return rc;
    fit_info(c, out);
    out->vf_anchor_mhz = out->vf.clock_mhz[out->vf.n > 0 ? out->vf.n - 1 : 0];
    out->vf_anchor_mv = out->vf.n > 0 ? out->vf.voltage_mv[out->vf.n - 1] : 0;
    if (wl_core_gpu_check(out, err)) {
        wl_error_locate(err, source, key_line(c, err->field));
        return WL_EPARSE;
    }
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
    ctx c = {.source = source, .gpu = out, .err = err};
    int rc = gpu_parse(&c, text, source, out, err);
    wl_preset_i_lists_free(&c);
    return rc;
}

/* A preset by id, alias or path: found (builtin.c), then parsed. */
int wl_preset_gpu_load(const char *id_or_path, wl_core_gpu *out, wl_error *err)
{
    char src[256];
    const char *text;
    char *owned;
    int rc = wl_preset_find(WL_PRESET_GPU, id_or_path, &text, &owned, src, sizeof src, err);
    if (!rc)
        rc = wl_preset_gpu_parse(text, owned ? id_or_path : src, out, err);
    free(owned);
    return rc;
}

/* ---- field access ---------------------------------------------------------- */

static const gpu_field *find_numeric(const char *key)
{
    for (size_t i = 0; i < N_GPU_FIELDS; i++)
        if (gpu_fields[i].type != F_STR && strcmp(gpu_fields[i].key, key) == 0)
            return &gpu_fields[i];
    return NULL;
}

const char *wl_preset_gpu_differs(const wl_core_gpu *a, const wl_core_gpu *b)
{
    for (size_t i = 0; i < N_GPU_FIELDS; i++) {
        const gpu_field *f = &gpu_fields[i];
        const char *pa = (const char *)a + f->off, *pb = (const char *)b + f->off;
        if (f->type == F_STR ? strncmp(pa, pb, f->size) != 0
            : f->type == F_INT ? *(const int *)(const void *)pa != *(const int *)(const void *)pb
                               : memcmp(pa, pb, sizeof(double)) != 0)
            return f->key;
    }
    if (a->vf.n != b->vf.n)
        return "clock_mhz";
    for (int i = 0; i < a->vf.n; i++)
        if (a->vf.clock_mhz[i] != b->vf.clock_mhz[i] || a->vf.voltage_mv[i] != b->vf.voltage_mv[i])
            return "clock_mhz";
        else if (a->vf.idle_w[i] != b->vf.idle_w[i])
            return "idle_power_w";
    return NULL;
}

static const char *numeric_key_of(void *user, size_t i)
{
    (void)user;
    return gpu_fields[i].type != F_STR ? gpu_fields[i].key : NULL;
}

void wl_preset_gpu_key_error(const char *key, wl_error *err)
{
    char hint[200];
    wl_core_name_hint(numeric_key_of, NULL, N_GPU_FIELDS, key, hint, sizeof hint);
    wl_error_set(err, "", 0, key, "not a numeric GPU preset key%s ('wattlas presets show ID' "
                 "lists every key with its value)", hint);
}

int wl_preset_gpu_value_ok(const char *key, double value, wl_error *err)
{
    const gpu_field *f = find_numeric(key);
    if (!f) {
        wl_preset_gpu_key_error(key, err);
        return WL_ENOTFOUND;
    }
    return field_in_range(f, value, err);
}

/* A numeric field's value written into gpu (F_INT as an int). */
static void store(wl_core_gpu *gpu, const gpu_field *f, double value)
{
    char *base = (char *)gpu + f->off;
    if (f->type == F_INT)
        *(int *)(void *)base = (int)value;
    else
        *(double *)(void *)base = value;
}

int wl_preset_gpu_set(wl_core_gpu *gpu, const char *key, double value, wl_error *err)
{
    const gpu_field *f = find_numeric(key);
    if (!f) {
        wl_preset_gpu_key_error(key, err);
        return WL_ENOTFOUND;
    }
    if (field_in_range(f, value, err))
        return WL_EINVAL;
    store(gpu, f, value);
    if (wl_core_coef_is_host(key))
        gpu->host_id[0] = 0; /* the issue cost is now the GPU's own, not a host's */
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
        if (wl_core_gpu_vf_rule(gpu, err)) {
            wl_error_locate(err, "", 0);
            return WL_EINVAL;
        }
    }
    return WL_OK;
}

/* What a design change re-derives from a key it sets, as the presets
 * derive it, and what it holds as the preset gives it. The presets state
 * whole-chip L2 bandwidth per SM (A100's measured 5120 B/clk x sms / 108:
 * a30, h100-pcie, concept-n3, ...; the H100 SXM's 6258 = 5120 x 132/108), so
 * more SMs carry more L2 ports: l2_bw_bytes_per_clk scales with sms unless
 * the same change sets it. What a larger die would also change but no rule
 * gives (its L2 capacity, its power budget, its memory) is held, and said
 * so (wl_preset_gpu_held). The coefficients follow every spec key through
 * wl_core_gpu_transfer. */
typedef struct {
    const char *key;
    const char *derived[2]; /* scale with key's new / old value */
    const char *held[6];
} derive_rule;
static const derive_rule derive_rules[] = {
    {"sms", {"l2_bw_bytes_per_clk"},
     {"l2_size_mb", "dram_bw_gbs", "mem_capacity_gb", "power_limit_w", "tdp_w"}},
};

static const derive_rule *rule_of(const char *key)
{
    for (size_t i = 0; i < sizeof derive_rules / sizeof *derive_rules; i++)
        if (!strcmp(derive_rules[i].key, key))
            return &derive_rules[i];
    return NULL;
}

const char *wl_preset_gpu_derived(const char *key, size_t i)
{
    const derive_rule *r = rule_of(key);
    return r && i < sizeof r->derived / sizeof *r->derived ? r->derived[i] : NULL;
}

const char *wl_preset_gpu_held(const char *key, size_t i)
{
    const derive_rule *r = rule_of(key);
    return r && i < sizeof r->held / sizeof *r->held ? r->held[i] : NULL;
}

static int set_among(const char *const *keys, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(keys[i], key))
            return 1;
    return 0;
}

/* The derived keys of the keys set, from the unchanged GPU's values. */
static void derive(wl_core_gpu *gpu, const wl_core_gpu *base, const char *const *keys, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double was, now, d;
        const char *dk;
        if (wl_preset_gpu_get(base, keys[i], &was) || wl_preset_gpu_get(gpu, keys[i], &now) ||
            !(was > 0))
            continue;
        for (size_t j = 0; (dk = wl_preset_gpu_derived(keys[i], j)); j++)
            if (!set_among(keys, n, dk) && wl_preset_gpu_get(base, dk, &d) == WL_OK && d > 0) {
                const gpu_field *f = find_numeric(dk);
                store(gpu, f, f->type == F_INT ? (double)lround(d * now / was) : d * now / was);
            }
    }
}

int wl_preset_gpu_apply_values(wl_core_gpu *gpu, const char *const *keys, const double *values,
                               size_t n, size_t *failed, wl_error *err)
{
    wl_core_gpu base = *gpu;
    int spec = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < n; i++) {
            const gpu_field *f = find_numeric(keys[i]);
            int is_spec = f && strcmp(f->section, "vf") != 0 && strcmp(f->section, "calibration") != 0;
            if (f && is_spec != (pass == 0))
                continue;
            int rc = wl_preset_gpu_set(gpu, keys[i], values[i], err);
            if (rc) {
                if (failed)
                    *failed = i;
                return rc;
            }
            spec |= is_spec;
        }
        if (pass == 0 && spec)
            derive(gpu, &base, keys, n);
        if (pass == 0 && spec) {
            wl_error e;
            wl_core_gpu changed = *gpu;
            if (wl_core_gpu_transfer(&base, &changed, &e) == WL_OK)
                gpu->coef = changed.coef;
        }
    }
    return WL_OK;
}

int wl_preset_gpu_apply(wl_core_gpu *gpu, const char *const *keys, const double *values,
                        size_t n, size_t *failed, wl_error *err)
{
    int rc = wl_preset_gpu_apply_values(gpu, keys, values, n, failed, err);
    if (rc)
        return rc;
    /* The relations between keys, once every value is in (issue 77: serve
     * and cluster applied --set without them, so a cap under the board's
     * floor or a clock range turned inside out ran): the key whose field
     * broke is the one named, else the first. */
    if (n && wl_core_gpu_check(gpu, err)) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++)
            if (!strcmp(keys[i], err->field)) {
                k = i;
                break;
            }
        char text[256], field[sizeof err->field];
        snprintf(text, sizeof text, "%s", err->text);
        snprintf(field, sizeof field, "%s", err->field);
        wl_error_set(err, "", 0, field, "%s with these set values: %s", gpu->id, text);
        if (failed)
            *failed = k;
        return WL_EINVAL;
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

void wl_preset_write_calibrated_spec(FILE *out, const wl_core_gpu *gpu)
{
    fprintf(out, "[calibrated_spec]\n; the spec the [calibration] belongs to: a spec edited away from it gets\n"
                 "; the coefficients through the transfer rules, as --set does\n");
    for (size_t i = 0; i < N_GPU_FIELDS; i++) {
        const gpu_field *f = &gpu_fields[i];
        if (!spec_field(f))
            continue;
        if (f->type == F_STR) {
            fprintf(out, "%s = %s\n", f->key, gpu->dram_type);
            continue;
        }
        double v = 0;
        wl_preset_gpu_get(gpu, f->key, &v);
        fprintf(out, "%s = %.10g\n", f->key, v);
    }
}

void wl_preset_write_calibration(FILE *out, const wl_core_gpu *gpu)
{
    fprintf(out, "[calibration]\n");
    for (size_t i = 0; i < N_GPU_FIELDS; i++) {
        if (strcmp(gpu_fields[i].section, "calibration"))
            continue;
        /* a named host owns the issue cost (see gpu_host) */
        if (gpu->host_id[0] && wl_core_coef_is_host(gpu_fields[i].key))
            continue;
        double v = 0;
        wl_preset_gpu_get(gpu, gpu_fields[i].key, &v);
        fprintf(out, "%s = %.10g\n", gpu_fields[i].key, v);
    }
}
