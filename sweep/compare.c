/* One workload on several GPUs (wattlas compare). */
#include "sweep_internal.h"
#include "../pareto/wattlas_pareto.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- one workload on several GPUs (wattlas compare) ------------------------------ */

/* A choice whose numbers are all NaN, with the reason. */
static void not_runnable(wl_pareto_gpu_choice *ch, const char *why)
{
    memset(ch, 0, sizeof *ch);
    wl_core_result *r[3] = {&ch->at, &ch->opt, &ch->max};
    ch->clock_mhz = NAN;
    for (int k = 0; k < 3; k++) {
        r[k]->requested_clock_mhz = r[k]->effective_clock_mhz = NAN;
        r[k]->time_ms = r[k]->power_w = r[k]->energy_j = NAN;
        for (int ph = 0; ph < WL_PHASE_COUNT; ph++)
            r[k]->phase[ph].time_ms = r[k]->phase[ph].energy_j = NAN;
    }
    snprintf(ch->not_runnable, sizeof ch->not_runnable, "%.199s", why);
}

/* gpu with another board's coefficients: ref's carried by the transfer
 * rules (core/gpu.c: capacitances by the units that switch and the node,
 * DRAM energy by the memory's technology), and on ref's own die ref's V-f
 * and idle curves too, so that only the configuration differs (a board's
 * luck stays with its board). */
static int on_board(const wl_core_gpu *ref, const wl_core_gpu *gpu, wl_core_gpu *out,
                    wl_error *err)
{
    *out = *gpu;
    int rc = wl_core_gpu_transfer(ref, out, err);
    if (rc)
        return rc;
    if (wl_core_gpu_same_die(ref, gpu)) {
        out->vf = ref->vf;
        out->vf_rule = ref->vf_rule;
    }
    snprintf(out->coef_source, sizeof out->coef_source, "%s's board (--same-board)", ref->id);
    return WL_OK;
}

/* Two GPUs of one die compared: how much of the difference is the two
 * presets' boards. The second run again on the first's board; what is left
 * is the configuration (the H200's HBM3e and 141 GB against the H100's
 * HBM3). Each preset carries one board, fitted on its own rows, and boards
 * of one product differ 15-30% in power at a clock. */
static void note_same_die(const wl_core_gpu *ref, const wl_pareto_gpu_choice *cref,
                          const wl_core_gpu *g, const wl_pareto_gpu_choice *cg,
                          const wl_core_workload *wl, wl_sweep_note_fn note, void *user)
{
    /* the one point the note compares, at g's asked clock: not the grid */
    wl_core_gpu moved;
    wl_error e = {0};
    wl_core_result r2;
    wl_core_op op = {.sm_clock_mhz = cg->at.requested_clock_mhz};
    if (on_board(ref, g, &moved, &e) || wl_core_predict(&moved, wl, &op, &r2))
        return;
    double tot_e = cg->at.energy_j / cref->at.energy_j, arch_e = r2.energy_j / cref->at.energy_j;
    double tot_t = cg->at.time_ms / cref->at.time_ms, arch_t = r2.time_ms / cref->at.time_ms;
    if (!(tot_e > 0 && arch_e > 0 && tot_t > 0 && arch_t > 0))
        return;
    char text[700];
    snprintf(text, sizeof text,
             "%s and %s share a die (%d SMs, %g MB L2, %g nm): at the asked clock %s takes "
             "%+.1f%% time and %+.1f%% energy against %s; on %s's board (its coefficients "
             "carried over: --same-board) %+.1f%% and %+.1f%%, so %+.1f and %+.1f points are the "
             "two presets' boards, not the architecture",
             ref->id, g->id, g->sms, g->l2_size_mb, g->process_nm, g->id, 100 * (tot_t - 1),
             100 * (tot_e - 1), ref->id, ref->id, 100 * (arch_t - 1), 100 * (arch_e - 1),
             100 * (tot_t - arch_t), 100 * (tot_e - arch_e));
    note(user, 0, text);
}

int wl_sweep_compare(const wl_sweep_spec *s, double clock_mhz, const wl_pareto_objective *obj,
                     wl_results_writer *w, wl_sweep_note_fn note, void *user, size_t *runnable,
                     wl_error *err)
{
    *runnable = 0;
    const wl_core_workload *wl = NULL;
    wl_core_workload *owned = NULL;
    wl_sweep_shape_id id;
    int rc = wl_sweep_spec_workload(s, &wl, &owned, &id, err);
    if (rc)
        return rc;
    int iv = wl_sweep_spec_level(s) > 0;
    wl_results_writer_note(w, "%s (%zu kernels), objective %s", wl_core_workload_name(wl),
                           wl_core_workload_launches(wl), obj->text);
    wl_pareto_workload_id wid = {id.model, wl_dtype_name(id.dtype),
                                 id.traced ? NULL : wl_attention_name(id.attention),
                                 wl_mode_name(id.traced ? WL_MODE_PREFILL : id.shape.mode),
                                 id.batch, id.seq, id.memory.total_gb,
                                 .gen = !id.traced && id.shape.mode == WL_MODE_DECODE ? id.shape.gen : 0,
                                 .micro_batches = id.traced ? 1 : id.shape.grad_accum};
    wl_results_cell cells[WL_PARETO_COMPARE_COLS];
    wl_learn_use lu;
    int learned = wl_sweep_spec_learned(s, &lu);
    char text[800];
    wl_pareto_gpu_choice first = {.not_runnable = "-"}; /* the first GPU's, for a shared die */
    for (size_t i = 0; !rc && i < wl_sweep_spec_axis_count(s, "gpu"); i++) {
        if (wl_stop_requested()) { /* wl_stop_watch */
            wl_error_set(err, "compare", 0, "", "stopped");
            rc = WL_ESTOPPED;
            break;
        }
        const wl_core_gpu *g = wl_sweep_spec_gpu(s, i);
        wl_core_gpu moved;
        wl_pareto_gpu_choice ch;
        wl_error e = {0};
        if (s->one_board && i > 0) {
            if ((rc = on_board(wl_sweep_spec_gpu(s, 0), g, &moved, err)))
                break;
            g = &moved;
        }
        /* a GPU that cannot run the case gets a row saying why; the others go on */
        if ((clock_mhz > 0 && wl_core_gpu_clock_check(g, clock_mhz, "clock", 0, &e)) ||
            wl_core_gpu_runs(g, wl, &e)) {
            not_runnable(&ch, e.text);
            snprintf(text, sizeof text, "%s cannot run this case: %.300s", g->id, e.text);
            if (note)
                note(user, 0, text);
        } else if ((rc = wl_pareto_gpu_optimum(g, wl, NULL, clock_mhz, obj,
                                               wl_sweep_spec_uncertainty(s, i),
                                               wl_sweep_spec_level(s), learned ? &lu : NULL, &ch,
                                               err))) {
            break;
        } else {
            (*runnable)++;
            if (i == 0)
                first = ch;
            const wl_core_gpu *g0 = wl_sweep_spec_gpu(s, 0);
            if (i > 0 && !s->one_board && note && !first.not_runnable[0] &&
                wl_core_gpu_same_die(g0, g) && strcmp(g0->id, g->id))
                note_same_die(g0, &first, g, &ch, wl, note, user);
        }
        if (ch.learned_outside && note) {
            snprintf(text, sizeof text, "on %s, %zu of %zu points lie outside the learned model's "
                     "training domain: %.200s", g->id, ch.learned_outside,
                     wl_core_gpu_clock_count(g) + 1, wl_learn_outside_note(lu.model));
            note(user, 1, text);
        }
        if (!ch.not_runnable[0] && wl_core_memory_fits(g, &id.memory) == 0 && note) {
            char parts[300], has[48];
            wl_core_memory_parts_text(&id.memory, parts, sizeof parts);
            wl_results_gb_text(has, sizeof has, g->mem_capacity_gb);
            snprintf(text, sizeof text, "%.120s does not fit %s: it needs %.1f GB (%.300s), the "
                     "GPU has %s (fits = 0)", wl_core_workload_name(wl), g->id,
                     id.memory.total_gb, parts, has);
            note(user, 1, text);
        }
        wl_pareto_compare_cells(g, &wid, &ch, iv, wid.gen > 0, cells);
        if (wl_results_writer_row(w, cells)) {
            wl_error_set(err, "compare", 0, "", "out of memory");
            rc = WL_ENOMEM;
        }
    }
    wl_core_workload_free(owned);
    return rc;
}
