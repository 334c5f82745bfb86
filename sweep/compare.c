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
    for (size_t i = 0; !rc && i < wl_sweep_spec_axis_count(s, "gpu"); i++) {
        if (wl_stop_requested()) { /* wl_stop_watch */
            wl_error_set(err, "compare", 0, "", "stopped");
            rc = WL_ESTOPPED;
            break;
        }
        const wl_core_gpu *g = wl_sweep_spec_gpu(s, i);
        wl_pareto_gpu_choice ch;
        wl_error e = {0};
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
