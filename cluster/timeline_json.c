/* A cluster run's last timeline as Chrome trace events. */
#include "cluster_internal.h"
#include "../results/wattlas_results.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the timeline as Chrome trace events ----------------------------------------
 * {"traceEvents": [...], "displayTimeUnit": "ms"}: one "X" (complete)
 * event per task with ts and dur in microseconds, pid 0 (the pipeline),
 * tid the stage; a "C" counter event of the GPU's power at each task's
 * start and at its end; "M" metadata naming the threads. */
/* a number in the one formatter (C locale, never a partial number) */
static void num(FILE *f, const char *before, double v, int decimals)
{
    fputs(before, f);
    wl_results_num(f, v, decimals);
}

int wl_cluster_timeline_json(const wl_cluster *c, FILE *f)
{
    size_t nt = wl_cluster_sim_task_count(c->sim);
    fprintf(f, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
    fprintf(f, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": 0, "
               "\"args\": {\"name\": \"pipeline (%d stages x tp %d)\"}}",
            c->p, c->cfg.tp);
    /* a stage's row stands for its tp x cp x dp GPUs, which Megatron's
     * rank order (tensor, context, data, pipeline) numbers contiguously */
    int per = c->p > 0 ? c->gpus / c->p : 1;
    for (int i = 0; i < c->p; i++) {
        fprintf(f, ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": %d, "
                   "\"args\": {\"name\": \"stage %d: ", i, i);
        if (per > 1)
            fprintf(f, "GPUs %d-%d\"}}", i * per, (i + 1) * per - 1);
        else
            fprintf(f, "GPU %d\"}}", i);
    }
    for (size_t k = 0; k < nt; k++) {
        const wl_cluster_task *t = wl_cluster_sim_task(c->sim, k);
        int step = c->decode && t->micro >= c->m;
        const char *name = step ? "decode step" : c->decode && t->kind == 'F' ? "prefill"
                           : t->kind == 'F' ? "forward" : t->kind == 'B' ? "backward"
                           : t->kind == 'W' ? "weight grad" : t->kind == 'D' ? "grad sync" : "optimizer";
        double idle = wl_core_gpu_idle_w(&c->gpu, c->stage_clock[2 * t->stage + (t->kind != 'F' || step)]);
        fprintf(f, ",\n{\"name\": \"%s\", \"cat\": \"%c\", \"ph\": \"X\", \"pid\": 0, \"tid\": %d",
                name, t->kind, t->stage);
        num(f, ", \"ts\": ", t->start_s * 1e6, 3);
        num(f, ", \"dur\": ", t->dur_s * 1e6, 3);
        fprintf(f, ", \"args\": {\"micro_batch\": %d, \"chunk\": %d", t->micro, t->chunk);
        num(f, ", \"power_w\": ", t->power_w, 1);
        num(f, ", \"comm_us\": ", t->comm_s * 1e6, 3);
        fputs("}}", f);
        /* the GPU's power: the task's from its start, idle from its end */
        for (int end = 0; end < 2; end++) {
            fprintf(f, ",\n{\"name\": \"power_w stage %d\", \"ph\": \"C\", \"pid\": 0, \"tid\": %d",
                    t->stage, t->stage);
            num(f, ", \"ts\": ", (t->start_s + (end ? t->dur_s : 0)) * 1e6, 3);
            num(f, ", \"args\": {\"power_w\": ", end ? idle : t->power_w, 1);
            fputs("}}", f);
        }
    }
    fprintf(f, "\n]}\n");
    return ferror(f) ? WL_EIO : WL_OK;
}
