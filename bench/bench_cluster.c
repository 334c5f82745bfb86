/* make bench: the cluster model's goals (issue 43). Clock plans at 64
 * pipeline stages: --optimize energy (a clock per stage and phase, and the
 * per-computation plan) under 5 s, the frontier under 30 s, on Megatron's
 * 1T model (tp 8, pp 64, 384 DGX A100 nodes, global batch 3072, full
 * recompute); cluster search of GPT-3 175B on 1024 GPUs (global batch
 * 1536) under 0.25 s and of the 1T on 4096 GPUs under 2 s. */
#include "../cluster/wattlas_cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int load(const char *model, int nodes, wl_cluster_system *sys, wl_core_gpu *gpu,
                wl_core_model *m)
{
    wl_error err = {0};
    wl_cluster_inputs in = {.system = "dgx-a100-80gb", .model = model, .nodes = nodes};
    if (wl_cluster_load(&in, sys, gpu, m, &err)) {
        fprintf(stderr, "bench: %s\n", err.text);
        return 1;
    }
    return 0;
}

static void report(const char *what, double secs, double goal)
{
    printf("  %-58s %7.3f s  (goal %g s: %s)\n", what, secs, goal, secs <= goal ? "met" : "MISSED");
}

static int plans_1t(void)
{
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model m;
    wl_error err = {0};
    if (load("megatron-1t", 384, &sys, &gpu, &m))
        return 1;
    wl_cluster_config c;
    wl_cluster_config_default(&c);
    c.tp = 8;
    c.pp = 64;
    c.dp = 0; /* the rest: 6 */
    c.global_batch = 3072;
    c.recompute = WL_RECOMPUTE_FULL;
    c.dtype = WL_DT_FP16;
    wl_cluster *cl = NULL;
    if (wl_cluster_config_fill(&c, sys.nodes * sys.gpus_per_node, &err) ||
        wl_cluster_create(&sys, &gpu, &m, &c, &cl, &err)) {
        fprintf(stderr, "bench: %s\n", err.text);
        return 1;
    }
    double plan[128], t0 = now_s();
    wl_cluster_plan_result pr;
    int rc = wl_cluster_optimize(cl, 1, WL_CLUSTER_ENERGY_GPU, plan, &pr, &err);
    double t1 = now_s();
    wl_cluster_frontier_point *pts = NULL;
    double *plans = NULL;
    size_t n = 0;
    if (!rc)
        rc = wl_cluster_frontier(cl, 10, WL_CLUSTER_ENERGY_GPU, &pts, &plans, &n, &err);
    double t2 = now_s();
    if (rc) {
        fprintf(stderr, "bench: %s\n", err.text);
        wl_cluster_free(cl);
        return 1;
    }
    printf("cluster: megatron-1t, tp 8, pp 64, 3072 GPUs, full recompute, 512 micro-batches\n");
    report("--optimize energy within 1% (stage and computation plans)", t1 - t0, 5);
    printf("    stage plan %.2f%% at %.2f%%, per computation %.2f%% at %.2f%%\n",
           pr.energy_saving_pct, pr.slowdown_pct, pr.computation_saving_pct,
           pr.computation_slowdown_pct);
    report("--frontier within 10%", t2 - t1, 30);
    printf("    %zu points\n", n);
    free(pts);
    free(plans);
    wl_cluster_free(cl);
    return 0;
}

static int search(const char *model, int nodes, long long batch, double goal)
{
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model m;
    wl_error err = {0};
    if (load(model, nodes, &sys, &gpu, &m))
        return 1;
    int gpus = sys.nodes * sys.gpus_per_node;
    wl_cluster_search_spec s;
    wl_cluster_search_default(&s);
    s.base.global_batch = batch;
    double best = 1e30;
    size_t n = 0;
    for (int k = 0; k < 3; k++) { /* a shared machine is noisy: the best of three */
        double t0 = now_s();
        wl_cluster_config *cfgs = NULL;
        if (wl_cluster_search_configs(&s, &m, gpus, sys.gpus_per_node, &cfgs, &n, &err)) {
            fprintf(stderr, "bench: %s\n", err.text);
            return 1;
        }
        wl_cluster_search_row *rows = calloc(n ? n : 1, sizeof *rows);
        unsigned char *on = calloc(n ? n : 1, 1);
        long fast, least;
        int rc = !rows || !on ||
                 wl_cluster_search_eval(&sys, &gpu, &m, cfgs, n, gpu.sm_clock_max_mhz, 0, 1, rows,
                                        NULL, NULL, &err) ||
                 wl_cluster_search_pick(rows, n, on, &fast, &least);
        double t = now_s() - t0;
        free(cfgs);
        free(rows);
        free(on);
        if (rc) {
            fprintf(stderr, "bench: search failed: %s\n", err.text);
            return 1;
        }
        best = t < best ? t : best;
    }
    char what[128];
    snprintf(what, sizeof what, "search %s on %d GPUs (%zu configurations)", model, gpus, n);
    report(what, best, goal);
    return 0;
}

int main(void)
{
    if (plans_1t())
        return 1;
    if (search("gpt3-175b", 128, 1536, 0.25) || search("megatron-1t", 512, 3072, 2))
        return 1;
    return 0;
}
