/* GPU and model presets: INI files with units in every key, built into the
 * binary and also loadable from any path. */
#ifndef WATTLAS_PRESETS_H
#define WATTLAS_PRESETS_H

#include <stdio.h>
#include "../core/wattlas_core.h"

typedef enum {
    WL_PRESET_GPU = 0,
    WL_PRESET_MODEL = 1,
    WL_PRESET_HOST = 2,
    WL_PRESET_SYSTEM = 3, /* multi-GPU systems (parsed by cluster/) */
    WL_PRESET_WORKLOAD = 4, /* serving request mixes (parsed by serve/) */
    WL_PRESET_KINDS
} wl_preset_kind;

/* The host a GPU preset without a [gpu] host key comes with: the machine the
 * A100 PCIe coefficients were calibrated on. */
#define WL_PRESET_DEFAULT_HOST "a100-calib-host"

/* A kind's name as listings and options write it ("gpu", "model", "host",
 * "system"; NULL for no kind), and the kind of a name (WL_EINVAL: none). */
const char *wl_preset_kind_name(wl_preset_kind kind);
int wl_preset_kind_parse(const char *name, wl_preset_kind *out);

/* Built-in presets. */
size_t wl_preset_count(wl_preset_kind kind);
const char *wl_preset_id(wl_preset_kind kind, size_t i);
/* INI text of a built-in preset, or NULL. */
const char *wl_preset_text(wl_preset_kind kind, const char *id);

/* The built-in GPU id for a name as tools print it: the id itself, or one
 * of the preset's [gpu] aliases, compared in lower case with blanks and '_'
 * as '-' and without an "NVIDIA " prefix ("NVIDIA A10", "H100-SXM5-80GB").
 * NULL when none matches. */
const char *wl_preset_gpu_resolve(const char *name);
/* Whether name (an id, alias or tool spelling) names the GPU gpu_id. */
int wl_preset_gpu_names(const char *name, const char *gpu_id);
/* The built-in model id for a name: the id, or a [model] alias, compared as
 * for GPUs after dropping a hub organisation ("google/vit-large-patch16-224",
 * "facebook/opt-1.3b"). NULL when none matches. */
const char *wl_preset_model_resolve(const char *name);
/* The built-in host id for a name: the id or a [host] alias. */
const char *wl_preset_host_resolve(const char *name);
/* The built-in system id for a name: the id or a [system] alias. */
const char *wl_preset_system_resolve(const char *name);
/* The built-in serving workload id for a name: the id or a [workload] alias. */
const char *wl_preset_workload_resolve(const char *name);
/* The built-in id of a kind for a name, by that kind's resolver above. */
const char *wl_preset_resolve(wl_preset_kind kind, const char *name);

/* The INI text a preset name stands for: a built-in id or alias (*text is
 * the built-in text, *owned NULL), a model hub id, or a file (a path: it
 * contains '/' or ends in .ini; *owned holds what was read and the caller
 * frees it). src (cap bytes; NULL with cap 0) gets the name the text's
 * errors should give. */
int wl_preset_find(wl_preset_kind kind, const char *id_or_path, const char **text, char **owned,
                   char *src, size_t cap, wl_error *err);
/* The name key of a preset's own section ([workload] name = ...) into buf
 * (n bytes, cut to fit); WL_OK, or an error when it has none. */
int wl_preset_name(wl_preset_kind kind, const char *id_or_path, char *buf, size_t n, wl_error *err);
/* id_or_path: a built-in id, or a path (contains '/' or ends in .ini). */
int wl_preset_gpu_load(const char *id_or_path, wl_core_gpu *out, wl_error *err);
int wl_preset_model_load(const char *id_or_path, wl_core_model *out, wl_error *err);
int wl_preset_gpu_parse(const char *text, const char *source, wl_core_gpu *out, wl_error *err);
/* Host presets ([host]: id, name, launch_us, launch_us_stderr; cpu,
 * framework, source, command, aliases as text). */
int wl_preset_host_load(const char *id_or_path, wl_core_host *out, wl_error *err);
int wl_preset_host_parse(const char *text, const char *source, wl_core_host *out, wl_error *err);
/* Loads a host preset and makes it the host of n GPUs (wl_core_gpu_set_host). */
int wl_preset_gpus_set_host(const char *id_or_path, wl_core_gpu *gpus, size_t n, wl_error *err);
/* Writes a host preset's [host] section: id, name, the issue cost and its
 * standard error (informational keys may follow). */
void wl_preset_write_host(FILE *out, const wl_core_host *host);
int wl_preset_model_parse(const char *text, const char *source, wl_core_model *out,
                          wl_error *err);

/* Set one numeric GPU field by its preset key (e.g. "sms", "dram_bw_gbs",
 * "c_tc_w") within the key's range; WL_ENOTFOUND for an unknown key,
 * WL_EINVAL for a value outside its range (err names the key and the
 * range; its source is left for the caller to name). */
int wl_preset_gpu_set(wl_core_gpu *gpu, const char *key, double value, wl_error *err);
/* The first preset key (the schema's order, then the [vf] table's) whose
 * value differs between a and b, or NULL when every field agrees. */
const char *wl_preset_gpu_differs(const wl_core_gpu *a, const wl_core_gpu *b);
int wl_preset_gpu_get(const wl_core_gpu *gpu, const char *key, double *value);
/* err (field key, no source) for a key that is not a numeric GPU preset
 * key, with the close ones ("did you mean dram_bw_gbs?") and where the full
 * list is. */
void wl_preset_gpu_key_error(const char *key, wl_error *err);
/* Whether a value is within a numeric key's range (as wl_preset_gpu_set
 * checks it, without a GPU). */
int wl_preset_gpu_value_ok(const char *key, double value, wl_error *err);
/* Applies n key = value settings to gpu as a design change: spec-sheet keys
 * ([gpu], [compute], [memory], [technology]) first, then, if any was given,
 * the coefficients are carried from the unchanged GPU to the changed one by
 * wl_core_gpu_transfer (so 132 SMs switch 132/108 the capacitance, HBM3
 * costs HBM3's energy, a faster memory path really is faster), then [vf] and
 * coefficient keys, which stay exactly as given. When the GPU lacks what the
 * transfer needs (process_nm, a known DRAM type) the coefficients stay.
 * On error *failed (may be NULL) is the index of the setting and err says
 * why, as wl_preset_gpu_set. Then the relations between keys
 * (wl_core_gpu_check), once every value is in: on a broken one *failed is
 * the key whose field broke (else the first) and err names the GPU and
 * "these set values". */
int wl_preset_gpu_apply(wl_core_gpu *gpu, const char *const *keys, const double *values,
                        size_t n, size_t *failed, wl_error *err);
/* What a design change re-derives from a key (the i-th key that scales with
 * it, as the presets derive it: l2_bw_bytes_per_clk with sms), unless the
 * same change sets that key too; and what it holds as the preset gives it
 * though a real part would move it (l2_size_mb ... with sms). NULL past
 * the last, or for a key with no rule. */
const char *wl_preset_gpu_derived(const char *key, size_t i);
const char *wl_preset_gpu_held(const char *key, size_t i);
/* The values alone, without the relations: for a caller that checks them
 * itself and names the values its own way (a study's one value of a key). */
int wl_preset_gpu_apply_values(wl_core_gpu *gpu, const char *const *keys, const double *values,
                               size_t n, size_t *failed, wl_error *err);

/* INI text of presets, study specs and sections: inih with a line reader
 * that gives each handler call its line and refuses lines inih would cut
 * (over 198 characters), NUL bytes and a byte-order mark. The handler
 * returns 1 to go on, or 0 after setting err (its source may be left
 * empty: it is filled in). */
typedef int (*wl_preset_ini_handler)(void *user, const char *section, const char *name,
                                     const char *value, int line);
int wl_preset_ini_parse(const char *text, size_t len, const char *source,
                        wl_preset_ini_handler fn, void *user, wl_error *err);

/* Writes the [calibration] section for gpu's coefficients. */
/* [calibrated_spec]: every spec-sheet key's value, so that a copy of the
 * preset edited later is recognised as a design change. */
void wl_preset_write_calibrated_spec(FILE *out, const wl_core_gpu *gpu);
void wl_preset_write_calibration(FILE *out, const wl_core_gpu *gpu);

/* Derive a smoothed [vf] table from an idle-table CSV
 * (sm_clock_mhz,voltage_mv,idle_power_w) with knots every step_mhz:
 * local linear least squares over the points within +-0.75 step. */
int wl_preset_derive_vf(const char *csv_path, double step_mhz, FILE *out, wl_error *err);

/* Replaces the GPU's idle power (and its voltage, when the table has a
 * voltage_mv column) by a measured idle table, smoothed as derive_vf does at
 * 60 MHz; without voltages the GPU's V-f curve stays. Transferred
 * coefficients follow the new idle power (leakage scales with it). The V-f
 * feasibility anchor is kept. */
int wl_preset_gpu_idle_table(wl_core_gpu *gpu, const char *csv_path, wl_error *err);
int wl_preset_gpu_idle_table_mem(wl_core_gpu *gpu, const char *data, size_t len,
                                 const char *source, wl_error *err);
/* Applies idle-table specs "[ID=]TABLE.csv" to gpus (ID by id or alias; a
 * bare TABLE only when there is one GPU); applied[i] (may be NULL) gets the
 * table gpus[i] took, or NULL. WL_EINVAL, field "idle", for a bare TABLE with
 * several GPUs or an ID that names no GPU in play. */
int wl_preset_apply_idle_specs(wl_core_gpu *gpus, size_t n_gpus, const char *const *specs,
                               size_t n_specs, const char **applied, wl_error *err);

#endif
