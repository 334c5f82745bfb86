/* cluster/: schedules against their closed forms, collective costs,
 * memory per stage by hand, system presets, the timeline as trace events. */
#include "test_util.h"

#include "../cluster/wattlas_cluster.h"
#include "../cluster/cluster_internal.h"
#include "../core/json.h"
#include "../presets/wattlas_presets.h"
#include "../plot/wattlas_plot.h"

#include <sys/stat.h>

/* Uniform stages (F = 1/v, B = 2/v per chunk), no transfers: the idle share
 * of the makespan of every stage is the schedule's bubble fraction. */
static double bubble(const char *sched, int p, int v, int m, double *out_T)
{
    double f[256], b[256], w[256], snd[64];
    const wl_cluster_schedule_type *t = wl_cluster_schedule_lookup(sched);
    assert_non_null(t);
    int split = wl_cluster_schedule_splits_w(t);
    for (int i = 0; i < p * v; i++) {
        f[i] = 1.0 / v;
        b[i] = (split ? 1.0 : 2.0) / v; /* split: B + W = 2 */
        w[i] = 1.0 / v;
    }
    for (int i = 0; i < p; i++)
        snd[i] = 0;
    wl_cluster_pipeline pl = {.schedule = t, .stages = p, .chunks = v, .micro = m, .f_s = f,
                              .b_s = b, .w_s = w, .send_s = snd};
    wl_cluster_sim *s = wl_cluster_sim_create();
    wl_error e = {0};
    assert_int_equal(wl_cluster_sim_run(s, &pl, &e), WL_OK);
    double T = 0;
    for (int i = 0; i < p; i++) {
        const wl_cluster_stage_stats *st = wl_cluster_sim_stage(s, i);
        assert_true(fabs(st->busy_s - 3.0 * m) < 1e-9); /* every task ran once */
        if (st->end_s > T)
            T = st->end_s;
    }
    wl_cluster_sim_free(s);
    *out_T = T;
    return (T - 3.0 * m) / T;
}

static void test_bubble_fractions(void **state)
{
    (void)state;
    static const int pm[][2] = {{2, 1}, {4, 8}, {8, 3}, {8, 32}, {16, 16}};
    double T;
    for (size_t k = 0; k < sizeof pm / sizeof *pm; k++) {
        int p = pm[k][0], m = pm[k][1];
        double want = (p - 1.0) / (m + p - 1.0);
        assert_true(fabs(bubble("gpipe", p, 1, m, &T) - want) < 1e-9);
        assert_true(fabs(bubble("1f1b", p, 1, m, &T) - want) < 1e-9);
    }
    static const int pvm[][3] = {{4, 2, 8}, {4, 3, 8}, {8, 3, 16}, {8, 4, 64}, {2, 2, 2}};
    for (size_t k = 0; k < sizeof pvm / sizeof *pvm; k++) {
        int p = pvm[k][0], v = pvm[k][1], m = pvm[k][2];
        double want = (p - 1.0) / (v * m + p - 1.0);
        assert_true(fabs(bubble("interleaved", p, v, m, &T) - want) < 1e-9);
    }
    /* zero bubble H1: below 1F1B whenever there is a bubble, and with
     * F = B = W = 1 and m >= p exactly (p - 1)(F + B - W) = p - 1 of idle
     * per stage against 1F1B's 3 (p - 1) (Qi et al. 2024, sec. 3.1) */
    for (size_t k = 0; k < sizeof pm / sizeof *pm; k++) {
        int p = pm[k][0], m = pm[k][1];
        double T1, Tz;
        double b1 = bubble("1f1b", p, 1, m, &T1), bz = bubble("zb-h1", p, 1, m, &Tz);
        assert_true(bz < b1);
        assert_true(Tz < T1);
        if (m >= p)
            assert_true(fabs(Tz - (3.0 * m + p - 1)) < 1e-9);
    }
    /* interleaving with micro-batches not a multiple of the stages */
    double f[8] = {1, 1, 1, 1, 1, 1, 1, 1}, snd[4] = {0};
    wl_cluster_pipeline pl = {.schedule = wl_cluster_interleaved, .stages = 4, .chunks = 2,
                              .micro = 6, .f_s = f, .b_s = f, .send_s = snd};
    wl_cluster_sim *s = wl_cluster_sim_create();
    wl_error e = {0};
    assert_int_equal(wl_cluster_sim_run(s, &pl, &e), WL_EINVAL);
    assert_string_equal(e.field, "micro_batches");
    wl_cluster_sim_free(s);
}

/* 1F1B on stage i holds p - i forwards; GPipe all m */
static void test_in_flight(void **state)
{
    (void)state;
    double f[8], b[8], snd[8] = {0};
    for (int i = 0; i < 8; i++)
        f[i] = 1, b[i] = 2;
    wl_cluster_pipeline pl = {.schedule = wl_cluster_1f1b, .stages = 4, .chunks = 1, .micro = 8,
                              .f_s = f, .b_s = b, .send_s = snd};
    wl_cluster_sim *s = wl_cluster_sim_create();
    wl_error e = {0};
    assert_int_equal(wl_cluster_sim_run(s, &pl, &e), WL_OK);
    for (int i = 0; i < 4; i++)
        assert_int_equal(wl_cluster_sim_stage(s, i)->peak_in_flight, 4 - i);
    pl.schedule = wl_cluster_gpipe;
    assert_int_equal(wl_cluster_sim_run(s, &pl, &e), WL_OK);
    assert_int_equal(wl_cluster_sim_stage(s, 0)->peak_in_flight, 8);
    /* zb-h1: a micro-batch holds its activations until its W, and stage i
     * holds back up to i of them: every stage reaches p, 1F1B's peak */
    double w[8];
    for (int i = 0; i < 8; i++)
        b[i] = 1, w[i] = 1;
    pl.schedule = wl_cluster_zbh1;
    pl.w_s = w;
    assert_int_equal(wl_cluster_sim_run(s, &pl, &e), WL_OK);
    for (int i = 0; i < 4; i++)
        assert_int_equal(wl_cluster_sim_stage(s, i)->peak_in_flight, 4);
    pl.w_s = NULL;
    /* the peak the fixed orders imply (what a search checks the memory
     * with before simulating) against the simulated one, over shapes and
     * uneven durations: equal, and for zb-h1 no more than simulated */
    {
        double f2[64], b2[64], w2[64], s2[16] = {0};
        wl_cluster_sim *s3 = wl_cluster_sim_create();
        for (int si = 0; wl_cluster_schedule_at(si); si++) {
            const wl_cluster_schedule_type *t = wl_cluster_schedule_at(si);
            for (int p = 1; p <= 6; p++)
                for (int v = 1; v <= (wl_cluster_schedule_interleaves(t) ? 3 : 1); v++)
                    for (int mm = 1; mm <= 3 * p; mm++) {
                        if (v > 1 && mm % p)
                            continue;
                        for (int i = 0; i < p * v; i++) {
                            f2[i] = 1 + 0.37 * (i % 3);
                            b2[i] = 2 + 0.21 * (i % 4);
                            w2[i] = 0.5 + 0.13 * (i % 2);
                        }
                        wl_cluster_pipeline q = {.schedule = t, .stages = p, .chunks = v, .micro = mm,
                                                 .f_s = f2, .b_s = b2, .send_s = s2,
                                                 .w_s = wl_cluster_schedule_splits_w(t) ? w2 : NULL};
                        assert_int_equal(wl_cluster_sim_run(s3, &q, &e), WL_OK);
                        for (int i = 0; i < p; i++) {
                            int want = wl_cluster_schedule_peak(t, p, v, mm, i);
                            int got = wl_cluster_sim_stage(s3, i)->peak_in_flight;
                            if (wl_cluster_schedule_splits_w(t))
                                assert_true(want >= 1 && want <= got);
                            else
                                assert_int_equal(want, got);
                        }
                    }
        }
        wl_cluster_sim_free(s3);
    }
    for (int i = 0; i < 8; i++)
        b[i] = 2;
    /* a transfer on every hop: 1F1B's makespan grows by 2 (p - 1) sends on
     * the critical path at least */
    for (int i = 0; i < 4; i++)
        snd[i] = 0.1;
    pl.schedule = wl_cluster_1f1b;
    assert_int_equal(wl_cluster_sim_run(s, &pl, &e), WL_OK);
    double T = 0;
    for (int i = 0; i < 4; i++)
        T = fmax(T, wl_cluster_sim_stage(s, i)->end_s);
    assert_true(T >= 33.0 + 2 * 3 * 0.1 - 1e-9);
    wl_cluster_sim_free(s);
}

static void test_ring_allreduce(void **state)
{
    (void)state;
    wl_cluster_system sys;
    wl_error e = {0};
    assert_int_equal(wl_cluster_system_load("dgx-a100-80gb", &sys, &e), WL_OK);
    sys.nodes = 4;
    wl_cluster_group g;
    /* tensor parallel 8 in one node: the fabric at its efficiency */
    wl_cluster_group_of(&sys, 8, 1, &g);
    assert_int_equal(g.per_node, 8);
    assert_true(fabs(g.bw_gbs - 300 * 0.77) < 1e-9);
    double S = 100e6, n = 8, a = 2e-6, B = 231e9;
    double want = 2 * (n - 1) * a + 2 * (n - 1) / n * S / B;
    assert_true(fabs(wl_cluster_ring_time(&g, WL_COLL_ALL_REDUCE, S) - want) < 1e-12);
    assert_true(fabs(wl_cluster_coll_time(&g, WL_COLL_ALL_REDUCE, S) - want) < 1e-12);
    assert_true(fabs(wl_cluster_ring_time(&g, WL_COLL_ALL_GATHER, S) - want / 2) < 1e-12);
    /* a tiny message: the tree's 2 log2(n) steps beat the ring's 2 (n-1) */
    double tiny = wl_cluster_coll_time(&g, WL_COLL_ALL_REDUCE, 64);
    assert_true(tiny < wl_cluster_ring_time(&g, WL_COLL_ALL_REDUCE, 64));
    assert_true(fabs(tiny - (6 * a + 2 * 64 / B)) < 1e-12);
    /* data parallel across 4 nodes, one GPU per node: one HDR NIC each */
    wl_cluster_group_of(&sys, 4, 8, &g);
    assert_int_equal(g.per_node, 1);
    assert_true(fabs(g.bw_gbs - 25 * 0.92) < 1e-9);
    n = 4;
    a = 5e-6;
    B = 23e9;
    want = 2 * (n - 1) * a + 2 * (n - 1) / n * S / B;
    assert_true(fabs(wl_cluster_ring_time(&g, WL_COLL_ALL_REDUCE, S) - want) < 1e-12);
    /* 32 GPUs, 8 per node: the eight rails together (184 GB/s < 231) */
    wl_cluster_group_of(&sys, 32, 1, &g);
    assert_true(fabs(g.bw_gbs - 8 * 25 * 0.92) < 1e-9);
    /* one GPU: nothing to do */
    wl_cluster_group_of(&sys, 1, 1, &g);
    assert_true(wl_cluster_coll_time(&g, WL_COLL_ALL_REDUCE, S) == 0);
    /* fat tree: 40-port switches, 32 NICs one switch; 320: 16 leaves + 8 spines */
    assert_int_equal(wl_cluster_fat_tree_switches(32, 40), 1);
    assert_int_equal(wl_cluster_fat_tree_switches(320, 40), 24);
}

/* One DGX A100 and its GPU; the small GPT's layout on it: tp 2, pp 2, dp 2,
 * micro 1, seq 1024, 8 sequences. */
static void dgx_a100(wl_cluster_system *sys, wl_core_gpu *gpu, wl_cluster_config *c)
{
    wl_error e = {0};
    assert_int_equal(wl_cluster_system_load("dgx-a100-80gb", sys, &e), WL_OK);
    assert_int_equal(wl_preset_gpu_load(sys->gpu, gpu, &e), WL_OK);
    wl_cluster_config_default(c);
    c->tp = 2, c->pp = 2, c->dp = 2, c->seq = 1024, c->global_batch = 8;
}

/* A small GPT on one DGX A100: tp 2, pp 2, dp 2, micro 1, seq 1024. */
static wl_cluster *small(int zero, wl_cluster_result *r, wl_core_model *m)
{
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_error e = {0};
    wl_cluster_config c;
    dgx_a100(&sys, &gpu, &c);
    memset(m, 0, sizeof *m);
    snprintf(m->id, sizeof m->id, "tiny");
    m->style = WL_STYLE_GPT2;
    m->layers = 4;
    m->d_model = 1024;
    m->heads = 16;
    m->d_ff = 4096;
    m->activation = WL_ACT_GELU;
    m->norm = WL_NORM_LAYERNORM;
    m->pre_norm = 1;
    m->positions = WL_POS_LEARNED;
    m->hidden_dropout = 0.1;
    m->attention_dropout = 0.1;
    c.zero = zero;
    wl_cluster *cl;
    assert_int_equal(wl_cluster_create(&sys, &gpu, m, &c, &cl, &e), WL_OK);
    assert_int_equal(wl_cluster_run(cl, 1410, NULL, r, &e), WL_OK);
    return cl;
}

/* LoRA on the small GPT (rank 16 on q, k, v, o, the default): per tensor-
 * parallel rank, the fused QKV's adapter r d + r 3d/t = 40960 and the
 * projection's r d/t + r d = 24576, 65536 a layer, 2 layers a stage. The
 * base is frozen: its weights stay (plus the adapters'), gradients and
 * optimizer state are the adapters' alone; a step is faster than full
 * training's (no weight gradients) and the gradients synchronised shrink
 * to the adapters'. */
static void test_lora(void **state)
{
    (void)state;
    wl_core_model m;
    wl_cluster_result full, lr;
    wl_cluster *cl = small(0, &full, &m);
    wl_cluster_memory fm;
    assert_int_equal(wl_cluster_stage_memory(cl, 0, &fm), WL_OK);
    wl_cluster_free(cl);
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_error e = {0};
    wl_cluster_config c;
    dgx_a100(&sys, &gpu, &c);
    c.finetune = WL_FT_LORA;
    assert_int_equal(wl_cluster_create(&sys, &gpu, &m, &c, &cl, &e), WL_OK);
    assert_int_equal(wl_cluster_run(cl, 1410, NULL, &lr, &e), WL_OK);
    double A = 2 * (16 * 1024 + 16 * 3072 / 2.0 + 16 * 1024 / 2.0 + 16 * 1024);
    wl_cluster_memory mm;
    assert_int_equal(wl_cluster_stage_memory(cl, 0, &mm), WL_OK);
    assert_true(fabs(mm.weights_gb - fm.weights_gb - 2 * A / 1e9) < 1e-12);
    assert_true(fabs(mm.grads_gb - 4 * A / 1e9) < 1e-12);
    assert_true(fabs(mm.optimizer_gb - 12 * A / 1e9) < 1e-12);
    assert_true(lr.memory_gb < full.memory_gb);
    wl_cluster_free(cl);
    /* where the GEMMs set the pace (Llama-3-8B, seq 2048, tp 2, pp 2, dp 2
     * on a DGX H100) a LoRA step is faster and cheaper; on the small GPT
     * its adapters' launches can cost more than the weight gradients save */
    wl_core_model l3;
    assert_int_equal(wl_preset_model_load("llama-3-8b", &l3, &e), WL_OK);
    assert_int_equal(wl_cluster_system_load("dgx-h100", &sys, &e), WL_OK);
    assert_int_equal(wl_preset_gpu_load(sys.gpu, &gpu, &e), WL_OK);
    c.seq = 2048, c.global_batch = 64;
    for (int k = 0; k < 2; k++) {
        c.finetune = k ? WL_FT_LORA : WL_FT_FULL;
        assert_int_equal(wl_cluster_create(&sys, &gpu, &l3, &c, &cl, &e), WL_OK);
        assert_int_equal(wl_cluster_run(cl, 1980, NULL, k ? &lr : &full, &e), WL_OK);
        wl_cluster_free(cl);
    }
    assert_true(lr.time_s < 0.9 * full.time_s);
    assert_true(lr.energy_j < 0.9 * full.energy_j);
    assert_true(lr.memory_gb < 0.5 * full.memory_gb);
    /* what means nothing is refused by the single-GPU rule, naming the field */
    c.finetune = WL_FT_FULL;
    c.lora_rank = 8;
    assert_int_equal(wl_cluster_create(&sys, &gpu, &l3, &c, &cl, &e), WL_EINVAL);
    assert_string_equal(e.field, "lora_rank");
}

static void test_stage_memory(void **state)
{
    (void)state;
    wl_core_model m;
    wl_cluster_result r;
    for (int zero = 0; zero <= 1; zero++) {
        wl_cluster *cl = small(zero, &r, &m);
        /* by hand: a layer on one of 2 ranks: (QKV 3d^2 + proj d^2 + 2 d ff)/2
         * weights, (3d + ff)/2 column-parallel biases, 2d replicated biases
         * (projection, FC2) and 4d norm parameters */
        double d = 1024, ff = 4096;
        double layer = (3 * d * d + d * d + 2 * d * ff) / 2 + (3 * d + ff) / 2 + 2 * d + 4 * d;
        double P = 2 * layer; /* 2 layers a stage, no vocabulary */
        wl_cluster_memory mm;
        assert_int_equal(wl_cluster_stage_memory(cl, 0, &mm), WL_OK);
        assert_true(fabs(mm.weights_gb - 2 * P / 1e9) < 1e-12);
        assert_true(fabs(mm.grads_gb - 4 * P / 1e9) < 1e-12);
        assert_true(fabs(mm.optimizer_gb - 12 * P / (zero ? 2 : 1) / 1e9) < 1e-12);
        /* Korthikanti et al. 2022, Eq. 2: sbh (10 + 24/t + 5as/ht) bytes a
         * layer; stage 0 of 1F1B holds p = 2 micro-batches of 2 layers */
        double s = 1024, b = 1, h = 1024, a = 16, t = 2;
        double layer_act = s * b * h * (10 + 24 / t + 5 * a * s / (h * t));
        assert_int_equal(mm.in_flight, 2);
        assert_true(fabs(mm.activations_gb - 2 * 2 * layer_act / 1e9) < 1e-12);
        assert_true(mm.total_gb > mm.weights_gb + mm.grads_gb + mm.optimizer_gb + mm.activations_gb);
        assert_true(r.fits);
        /* the last stage holds one micro-batch */
        assert_int_equal(wl_cluster_stage_memory(cl, 1, &mm), WL_OK);
        assert_int_equal(mm.in_flight, 1);
        wl_cluster_free(cl);
    }
}

static void test_result_invariants(void **state)
{
    (void)state;
    wl_core_model m;
    wl_cluster_result r;
    wl_cluster *cl = small(0, &r, &m);
    wl_error e0 = {0};
    assert_true(r.time_s > 0);
    assert_int_equal(r.gpus, 8);
    assert_int_equal(r.micro_batches, 4); /* 8 sequences over dp 2 */
    /* energy = parts; power = energy / time */
    assert_true(fabs(r.energy_j - (r.energy_gpu_j + r.energy_network_j + r.energy_node_j)) <
                1e-9 * r.energy_j);
    assert_true(fabs(r.power_w - r.energy_j / r.time_s) < 1e-9 * r.power_w);
    assert_true(r.energy_network_j == 0); /* one node */
    /* every GPU draws at least its idle power at the clock (busy or in a
     * bubble), and more while it computes; at most its board limit; the
     * node its other parts */
    wl_core_gpu gpu;
    assert_int_equal(wl_preset_gpu_load("a100-sxm-80gb", &gpu, &e0), WL_OK);
    double idle = 8 * wl_core_gpu_idle_w(&gpu, 1410), cap = 8 * gpu.power_limit_w;
    assert_true(idle > 8 * 40.0 && cap <= 8 * 400.0);
    if (!(r.energy_gpu_j / r.time_s > idle * (1 + 0.1 * r.compute_s / r.time_s) &&
          r.energy_gpu_j / r.time_s <= cap))
        fail_msg("8 GPUs draw %.1f W; idle %.1f W, limit %.1f W", r.energy_gpu_j / r.time_s,
                 idle, cap);
    assert_true(fabs(r.energy_node_j - 1700 * r.time_s) < 1e-9 * r.energy_node_j);
    /* the time splits into compute, exposed collectives and bubbles */
    double parts = r.compute_s + r.tp_comm_exposed_s + r.pp_comm_exposed_s + r.dp_comm_exposed_s +
                   r.bubble_s;
    assert_true(fabs(parts - r.time_s) < 1e-9 * r.time_s);
    assert_true(r.bubble_s > 0 && r.tp_comm_exposed_s > 0 && r.pp_comm_exposed_s > 0);
    assert_true(r.mfu > 0 && r.mfu < 1);
    /* a lower clock: slower, and no GPU energy above the maximum clock's
     * power times the longer time */
    wl_cluster_result lo;
    wl_error e = {0};
    assert_int_equal(wl_cluster_run(cl, 900, NULL, &lo, &e), WL_OK);
    assert_true(lo.time_s > r.time_s);
    /* a clock outside the range */
    assert_int_equal(wl_cluster_run(cl, 5000, NULL, &lo, &e), WL_EINVAL);
    assert_string_equal(e.field, "clock");
    wl_cluster_free(cl);
}

/* The small cluster's last timeline as trace events in the test's directory. */
static const char *write_timeline(const wl_cluster *cl, const char *name)
{
    const char *path = test_path(name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(wl_cluster_timeline_json(cl, f), WL_OK);
    fclose(f);
    return path;
}

static void test_timeline_json(void **state)
{
    (void)state;
    wl_core_model m;
    wl_cluster_result r;
    wl_cluster *cl = small(0, &r, &m);
    const char *path = write_timeline(cl, "timeline.json");
    char *text;
    size_t len;
    wl_error e = {0};
    assert_int_equal(wl_core_read_file(path, &text, &len, &e), WL_OK);
    int line = 0;
    char msg[200];
    wj_value *v = wj_parse(text, len, &line, msg, sizeof msg);
    assert_non_null(v);
    const wj_value *ev = wj_get(v, "traceEvents");
    assert_non_null(ev);
    assert_int_equal(ev->type, WJ_ARRAY);
    size_t nx = 0;
    for (size_t i = 0; i < ev->n; i++) {
        const wj_value *o = &ev->items[i];
        const wj_value *ph = wj_get(o, "ph");
        assert_non_null(ph);
        assert_non_null(wj_get(o, "pid"));
        assert_non_null(wj_get(o, "tid"));
        if (!strcmp(ph->str, "X")) {
            const wj_value *ts = wj_get(o, "ts"), *dur = wj_get(o, "dur");
            assert_non_null(ts);
            assert_non_null(dur);
            assert_true(ts->num >= 0 && dur->num >= 0);
            assert_true(ts->num + dur->num <= r.time_s * 1e6 + 1e-3);
            nx++;
        }
    }
    /* F and B of 4 micro-batches on 2 stages, an optimizer step each, and
     * the gradient sync where it sticks out */
    assert_true(nx >= 2 * 2 * 4 + 2);
    assert_int_equal(nx, wl_cluster_task_count(cl));
    wj_free(v);
    free(text);
    wl_cluster_free(cl);
}

static double scoped(const wl_cluster_result *r, wl_cluster_energy_scope s)
{
    return s == WL_CLUSTER_ENERGY_GPU ? r->energy_gpu_j : r->energy_j;
}

/* The per-stage plan keeps the slowdown bound and never uses more energy
 * than every GPU at its maximum clock or the best single clock, of the
 * GPUs alone or of the whole cluster, and its savings are of that energy. */
static void test_stage_plan(void **state)
{
    (void)state;
    wl_core_model m;
    wl_cluster_result r;
    wl_cluster *cl = small(0, &r, &m);
    double plan[4];
    wl_error e = {0};
    static const double bounds[] = {0, 1, 5};
    for (int sc = 0; sc < 2; sc++) {
        wl_cluster_energy_scope s = sc ? WL_CLUSTER_ENERGY_ALL : WL_CLUSTER_ENERGY_GPU;
        for (size_t k = 0; k < 3; k++) {
            wl_cluster_plan_result pr;
            assert_int_equal(wl_cluster_optimize(cl, bounds[k], s, plan, &pr, &e), WL_OK);
            assert_int_equal(pr.scope, s);
            assert_true(pr.planned.time_s <= pr.at_max.time_s * (1 + bounds[k] / 100) + 1e-12);
            assert_true(pr.slowdown_pct <= bounds[k] + 1e-9);
            assert_true(scoped(&pr.planned, s) <= scoped(&pr.at_max, s));
            assert_true(scoped(&pr.planned, s) <= scoped(&pr.best_fixed, s) * (1 + 1e-12));
            double e0 = scoped(&pr.at_max, s);
            assert_true(fabs(pr.energy_saving_pct - 100 * (e0 - scoped(&pr.planned, s)) / e0) < 1e-9);
            assert_true(pr.energy_saving_pct >= 0);
            for (int i = 0; i < 4; i++)
                assert_true(plan[i] >= 210 && plan[i] <= 1410);
            /* the plan replayed gives the reported result */
            wl_cluster_result again;
            assert_int_equal(wl_cluster_run(cl, 1410, plan, &again, &e), WL_OK);
            assert_true(fabs(again.energy_j - pr.planned.energy_j) < 1e-9 * again.energy_j);
        }
        /* a looser bound never saves less */
        wl_cluster_plan_result a, b;
        assert_int_equal(wl_cluster_optimize(cl, 1, s, plan, &a, &e), WL_OK);
        assert_int_equal(wl_cluster_optimize(cl, 10, s, plan, &b, &e), WL_OK);
        assert_true(scoped(&b.planned, s) <= scoped(&a.planned, s) * (1 + 1e-9));
        assert_int_equal(wl_cluster_optimize(cl, -1, s, plan, &a, &e), WL_EINVAL);
    }
    wl_cluster_plan_result a;
    assert_int_equal(wl_cluster_optimize(cl, 1, (wl_cluster_energy_scope)7, plan, &a, &e), WL_EINVAL);
    assert_string_equal(e.field, "energy_scope");
    wl_cluster_energy_scope s;
    assert_int_equal(wl_cluster_energy_scope_lookup("gpu", &s), WL_OK);
    assert_int_equal(s, WL_CLUSTER_ENERGY_GPU);
    assert_int_equal(wl_cluster_energy_scope_lookup("all", &s), WL_OK);
    assert_int_equal(s, WL_CLUSTER_ENERGY_ALL);
    assert_int_equal(wl_cluster_energy_scope_lookup("node", &s), WL_EINVAL);
    wl_cluster_free(cl);
}


/* Decode rounds: micro-batch k >= m is the next token of k - m and waits
 * for it to leave the last stage. By hand (no transfers, F = 1 for the
 * prompt, 0.5 a step): p 4, m 2, three rounds end at 9; p 2, m 4 with
 * steps of 1: the first stage never waits and the last ends at 9. */
static void test_decode_rounds(void **state)
{
    (void)state;
    static const struct {
        int p, m, rounds;
        double step, want;
    } cases[] = {{4, 2, 3, 0.5, 9}, {2, 4, 2, 1, 9}, {1, 1, 5, 0.25, 2}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        double f[8], f2[8], snd[8] = {0};
        for (int i = 0; i < 8; i++)
            f[i] = 1, f2[i] = cases[k].step;
        wl_cluster_pipeline pl = {.stages = cases[k].p, .chunks = 1, .micro = cases[k].m * cases[k].rounds,
                                  .forward_only = 1, .f_s = f, .b_s = f, .send_s = snd,
                                  .round_micro = cases[k].m, .f2_s = f2};
        wl_cluster_sim *s = wl_cluster_sim_create();
        wl_error e = {0};
        assert_int_equal(wl_cluster_sim_run(s, &pl, &e), WL_OK);
        double T = 0;
        for (int i = 0; i < cases[k].p; i++)
            T = fmax(T, wl_cluster_sim_stage(s, i)->end_s);
        assert_true(fabs(T - cases[k].want) < 1e-12);
        /* rounds that are not whole are refused */
        pl.micro = cases[k].m * cases[k].rounds + (cases[k].m > 1);
        if (cases[k].m > 1)
            assert_int_equal(wl_cluster_sim_run(s, &pl, &e), WL_EINVAL);
        wl_cluster_sim_free(s);
    }
    /* a serving engine's host step before each micro-batch's next round,
     * with one stage too: one micro-batch of 5 rounds of 0.25 s waits 4
     * times */
    double f[1] = {1}, f2[1] = {0.25}, snd[1] = {0};
    wl_cluster_pipeline pl = {.stages = 1, .chunks = 1, .micro = 5, .forward_only = 1, .f_s = f,
                              .b_s = f, .send_s = snd, .round_micro = 1, .f2_s = f2,
                              .round_host_s = 0.125};
    wl_cluster_sim *s = wl_cluster_sim_create();
    wl_error e = {0};
    assert_int_equal(wl_cluster_sim_run(s, &pl, &e), WL_OK);
    assert_true(fabs(wl_cluster_sim_stage(s, 0)->end_s - (2 + 4 * 0.125)) < 1e-12);
    wl_cluster_sim_free(s);
}

/* One DGX A100, a model preset, and tp 2 x pp 2 x dp 2 when c is given. */
/* A system preset, its GPU and a model preset. */
static void load_system(const char *system, const char *model, wl_cluster_system *sys,
                        wl_core_gpu *gpu, wl_core_model *m)
{
    wl_error e = {0};
    assert_int_equal(wl_cluster_system_load(system, sys, &e), WL_OK);
    assert_int_equal(wl_preset_gpu_load(sys->gpu, gpu, &e), WL_OK);
    assert_int_equal(wl_preset_model_load(model, m, &e), WL_OK);
}

static void load_dgx(wl_cluster_system *sys, wl_core_gpu *gpu, wl_core_model *m, const char *model,
                     wl_cluster_config *c)
{
    load_system("dgx-a100-80gb", model, sys, gpu, m);
    sys->nodes = 1;
    if (c) {
        wl_cluster_config_default(c);
        c->tp = 2, c->pp = 2, c->dp = 2;
    }
}

/* A generation: the prompt, then a token a round; time = TTFT + (gen - 1)
 * TPOT, tokens = batch x gen, the KV cache grows with the tokens, and one
 * stage's steps cost what its pieces do. */
static void test_decode_result(void **state)
{
    (void)state;
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model m;
    wl_error e = {0};
    wl_cluster_config c;
    load_dgx(&sys, &gpu, &m, "llama-3-8b", &c);
    c.mode = WL_MODE_DECODE;
    c.micro_batch = 4;
    c.global_batch = 16;
    c.seq = 256;
    double mem[2] = {0};
    for (int k = 0; k < 2; k++) {
        c.gen = k ? 64 : 16;
        wl_cluster *cl;
        wl_cluster_result r;
        assert_int_equal(wl_cluster_create(&sys, &gpu, &m, &c, &cl, &e), WL_OK);
        assert_int_equal(wl_cluster_run(cl, 1410, NULL, &r, &e), WL_OK);
        assert_true(r.ttft_s > 0 && r.tpot_s > 0 && r.ttft_s < r.time_s);
        assert_true(fabs(r.time_s - (r.ttft_s + (double)(c.gen - 1) * r.tpot_s)) < 1e-9 * r.time_s);
        assert_true(fabs(r.tokens - 16.0 * (double)c.gen) < 1e-9);
        assert_true(r.energy_j > 0 && r.fits);
        mem[k] = r.memory_gb;
        /* every micro-batch's every token ran once */
        size_t nf = 0;
        for (size_t i = 0; i < wl_cluster_task_count(cl); i++)
            nf += wl_cluster_task_at(cl, i)->kind == 'F';
        assert_int_equal(nf, (size_t)(c.pp * 2 * c.gen));
        wl_cluster_free(cl);
    }
    /* K and V of 8 key/value heads of 128 over tp 2, 16 layers a stage, 8
     * sequences a replica, 48 more tokens, bf16 */
    double kv = 2.0 * 16 * 8 * 48 * (8 / 2) * 128 * 2 / 1e9;
    assert_true(fabs(mem[1] - mem[0] - kv) < 1e-9);
    /* a serving engine (CUDA graphs): on one stage with one micro-batch
     * every further token waits for the host's engine step, 500 us + 10 us
     * for each of its 4 sequences */
    wl_cluster_config g1 = c;
    g1.tp = 8;
    g1.pp = 1;
    g1.dp = 1;
    g1.global_batch = 4;
    g1.launch = WL_LAUNCH_GRAPHS;
    double tpot[2];
    for (int k = 0; k < 2; k++) {
        wl_core_gpu hg = gpu;
        hg.coef.host_serve_step_us = k ? 500 : 0;
        hg.coef.host_serve_seq_us = k ? 10 : 0;
        wl_cluster *gl;
        wl_cluster_result r;
        assert_int_equal(wl_cluster_create(&sys, &hg, &m, &g1, &gl, &e), WL_OK);
        assert_int_equal(wl_cluster_run(gl, 1410, NULL, &r, &e), WL_OK);
        tpot[k] = r.tpot_s;
        wl_cluster_free(gl);
    }
    assert_true(fabs(tpot[1] - tpot[0] - 540e-6) < 1e-9);
    c.vp = 2;
    wl_cluster *cl = NULL;
    assert_int_equal(wl_cluster_create(&sys, &gpu, &m, &c, &cl, &e), WL_EINVAL);
    assert_string_equal(e.field, "vp");
}

/* Search: every configuration it lists is valid and of the GPUs, the list
 * is what the loops give by hand for a small case, rows do not depend on
 * the thread count, and the picks are the extremes of the front. */
typedef struct {
    unsigned long long last, total;
    int calls, monotone;
} progress_seen;

static void count_progress(void *user, unsigned long long done, unsigned long long total)
{
    progress_seen *p = user;
    p->monotone = p->calls == 0 ? 1 : p->monotone && done >= p->last;
    p->calls++;
    p->last = done;
    p->total = total;
}

static void test_search(void **state)
{
    (void)state;
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model m;
    wl_error e = {0};
    load_dgx(&sys, &gpu, &m, "gpt3-1.3b", NULL);
    wl_cluster_search_spec sp;
    wl_cluster_search_default(&sp);
    sp.base.global_batch = 8;
    sp.base.seq = 1024;
    /* 1f1b, no recompute, no ZeRO, no SP, micro-batch 1: tp x pp of 8 GPUs
     * with 16 heads and 24 layers: (1,1) (1,2) (1,4) (1,8) (2,1) (2,2)
     * (2,4) (4,1) (4,2) (8,1) */
    sp.schedules = 1u << 1;
    sp.recomputes = 1u << WL_RECOMPUTE_NONE;
    sp.sequence_parallel = sp.zero = 1;
    sp.max_micro_batch = 1;
    sp.partitions = 1u << WL_CLUSTER_PART_UNIFORM;
    wl_cluster_config *cf;
    size_t n;
    assert_int_equal(wl_cluster_search_configs(&sp, &m, 8, 8, &cf, &n, &e), WL_OK);
    assert_int_equal(n, 10);
    free(cf);
    /* by default the six with pp > 1 are also tried with balanced stages */
    sp.partitions = 0;
    assert_int_equal(wl_cluster_search_configs(&sp, &m, 8, 8, &cf, &n, &e), WL_OK);
    assert_int_equal(n, 16);
    assert_int_equal(cf[1].partition, WL_CLUSTER_PART_UNIFORM);
    assert_int_equal(cf[2].partition, WL_CLUSTER_PART_BALANCED);
    assert_int_equal(cf[2].pp, 2);
    free(cf);
    /* the whole space: each valid, none twice */
    wl_cluster_search_default(&sp);
    sp.base.global_batch = 16;
    sp.base.seq = 1024;
    assert_int_equal(wl_cluster_search_configs(&sp, &m, 8, 8, &cf, &n, &e), WL_OK);
    assert_true(n > 100);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(wl_cluster_config_check(&cf[i], &m, 8, &e), WL_OK);
        assert_int_equal(cf[i].tp * cf[i].pp * cf[i].dp, 8);
        for (size_t j = 0; j < i; j++)
            assert_true(memcmp(&cf[i], &cf[j], sizeof cf[i]) != 0);
    }
    wl_cluster_search_row *r1 = calloc(n, sizeof *r1), *r2 = calloc(n, sizeof *r2);
    progress_seen seen = {0};
    assert_int_equal(wl_cluster_search_eval(&sys, &gpu, &m, cf, n, 1410, 1, 0, r1, NULL, NULL, &e), WL_OK);
    assert_int_equal(wl_cluster_search_eval(&sys, &gpu, &m, cf, n, 1410, 4, 0, r2, count_progress, &seen, &e), WL_OK);
    /* progress from one thread, never backwards, and the whole at the end */
    assert_true(seen.calls >= 1 && seen.monotone);
    assert_int_equal(seen.last, n);
    assert_int_equal(seen.total, n);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(r1[i].evaluated, r2[i].evaluated);
        if (r1[i].evaluated)
            assert_true(r1[i].r.time_s == r2[i].r.time_s && r1[i].r.energy_j == r2[i].r.energy_j);
    }
    unsigned char *front = calloc(n, 1);
    long fast, least;
    assert_int_equal(wl_cluster_search_pick(r1, n, front, &fast, &least), WL_OK);
    assert_true(fast >= 0 && least >= 0 && front[fast] && front[least]);
    for (size_t i = 0; i < n; i++) {
        if (!r1[i].evaluated || !r1[i].r.fits) {
            assert_false(front[i]);
            continue;
        }
        assert_true(r1[i].r.time_s >= r1[fast].r.time_s);
        assert_true(r1[i].r.energy_j >= r1[least].r.energy_j);
        for (size_t j = 0; front[i] && j < n; j++) /* nothing beats a front row */
            if (r1[j].evaluated && r1[j].r.fits)
                assert_false(r1[j].r.time_s < r1[i].r.time_s && r1[j].r.energy_j < r1[i].r.energy_j);
    }
    free(front), free(r1), free(r2), free(cf);
}

/* The busiest GPU's work at the top clock (power limit applied). */
static double busiest(wl_cluster *cl, const wl_core_gpu *gpu)
{
    wl_cluster_result r;
    wl_error e = {0};
    assert_int_equal(wl_cluster_run(cl, gpu->sm_clock_max_mhz, NULL, &r, &e), WL_OK);
    double b = 0;
    for (int i = 0; i < wl_cluster_stages(cl); i++)
        b = fmax(b, wl_cluster_sim_stage_of(cl, i)->busy_s);
    return b;
}

/* Partitions: balanced never leaves a slower busiest stage than uniform
 * (training with and without interleaving, prefill, decode, a power-
 * limited PCIe server); every split puts each model layer on one chunk;
 * DeepSpeed's parameters rule and a list give the counts derived by hand;
 * impossible lists are errors naming the partition. */
static void test_partitions(void **state)
{
    (void)state;
    wl_error e = {0};
    struct {
        const char *system, *model;
        int pp, vp;
        wl_mode mode;
        long long mb;
    } cases[] = {
        {"server-4x-a100-pcie-80gb", "gpt3-1.3b", 4, 1, WL_MODE_TRAIN, 8},
        {"dgx-a100-80gb", "gpt3-1.3b", 8, 1, WL_MODE_TRAIN, 2},
        {"dgx-a100-80gb", "gpt3-1.3b", 4, 2, WL_MODE_TRAIN, 1},
        {"dgx-a100-80gb", "llama-3-8b", 4, 1, WL_MODE_PREFILL, 2},
        {"dgx-a100-80gb", "gpt3-1.3b", 8, 1, WL_MODE_DECODE, 1},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        wl_cluster_system sys;
        wl_core_gpu gpu;
        wl_core_model m;
        load_system(cases[k].system, cases[k].model, &sys, &gpu, &m);
        wl_cluster_config c;
        wl_cluster_config_default(&c);
        c.pp = cases[k].pp;
        c.vp = cases[k].vp;
        c.dp = sys.gpus_per_node / c.pp;
        c.mode = cases[k].mode;
        c.micro_batch = cases[k].mb;
        c.global_batch = c.micro_batch * c.dp * 2 * c.pp;
        c.gen = 16;
        double b[2];
        for (int pa = 0; pa < 2; pa++) {
            c.partition = pa ? WL_CLUSTER_PART_BALANCED : WL_CLUSTER_PART_UNIFORM;
            wl_cluster *cl;
            assert_int_equal(wl_cluster_create(&sys, &gpu, &m, &c, &cl, &e), WL_OK);
            assert_int_equal(wl_cluster_refine_split(cl, &e), WL_OK);
            int sum = 0;
            for (int i = 0; i < c.pp; i++) {
                int l = wl_cluster_stage_layers(cl, i);
                assert_true(l >= c.vp);
                sum += l;
            }
            assert_int_equal(sum, m.layers);
            b[pa] = busiest(cl, &gpu);
            wl_cluster_free(cl);
        }
        if (!(b[1] <= b[0] * (1 + 1e-9)))
            fail_msg("case %zu: balanced %.6f s > uniform %.6f s", k, b[1], b[0]);
    }
    /* gpt3-1.3b (24 layers of 12 d^2 + 13 d parameters, d 2048) on 4
     * stages by parameters: the word table (50304 x 2048) and the 2048
     * learned positions on the first are 2.13 layers' worth, the tied head
     * copy and final norm on the last 2.05: 24 + 4.18 = 28.18 over 4 is
     * 7.05 a stage, so 5 + 2.13, 7, 7, 5 + 2.05 */
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model m;
    wl_cluster_config c;
    load_dgx(&sys, &gpu, &m, "gpt3-1.3b", &c);
    c.tp = 1, c.pp = 4, c.dp = 2;
    c.global_batch = 16;
    c.partition = WL_CLUSTER_PART_PARAMETERS;
    wl_cluster *cl;
    assert_int_equal(wl_cluster_create(&sys, &gpu, &m, &c, &cl, &e), WL_OK);
    const int want[4] = {5, 7, 7, 5};
    for (int i = 0; i < 4; i++)
        assert_int_equal(wl_cluster_stage_layers(cl, i), want[i]);
    wl_cluster_free(cl);
    /* a list per stage, or per virtual stage */
    int list[8] = {3, 7, 7, 7};
    wl_cluster_partition part;
    int nl;
    assert_int_equal(wl_cluster_partition_parse("3,7,7,7", &part, list, &nl, &e), WL_OK);
    assert_int_equal(part, WL_CLUSTER_PART_LIST);
    assert_int_equal(nl, 4);
    c.partition = part;
    c.stage_layers = list;
    c.nstage_layers = nl;
    assert_int_equal(wl_cluster_create(&sys, &gpu, &m, &c, &cl, &e), WL_OK);
    assert_int_equal(wl_cluster_stage_layers(cl, 0), 3);
    assert_int_equal(wl_cluster_stage_layers(cl, 3), 7);
    /* fewer layers on the first stage: less weight memory there */
    wl_cluster_memory m0, m1;
    assert_int_equal(wl_cluster_stage_memory(cl, 0, &m0), WL_OK);
    assert_int_equal(wl_cluster_stage_memory(cl, 1, &m1), WL_OK);
    assert_true(m0.grads_gb < m1.grads_gb + 0.21); /* 3 layers + 0.107 G embedding vs 7 */
    wl_cluster_free(cl);
    int vlist[8] = {2, 4, 3, 3, 3, 3, 3, 3};
    c.vp = 2;
    c.stage_layers = vlist;
    c.nstage_layers = 8;
    assert_int_equal(wl_cluster_create(&sys, &gpu, &m, &c, &cl, &e), WL_OK);
    assert_int_equal(wl_cluster_stage_layers(cl, 0), 5); /* chunks 0 and 4 */
    assert_int_equal(wl_cluster_stage_layers(cl, 1), 7);
    wl_cluster_free(cl);
    c.nstage_layers = 4; /* pp counts need vp 1 */
    assert_int_equal(wl_cluster_create(&sys, &gpu, &m, &c, &cl, &e), WL_EINVAL);
    assert_string_equal(e.field, "partition");
    c.vp = 1;
    list[0] = 4; /* 25 layers */
    c.stage_layers = list;
    assert_int_equal(wl_cluster_create(&sys, &gpu, &m, &c, &cl, &e), WL_EINVAL);
    assert_non_null(strstr(e.text, "add up to 25"));
    const char *bad[] = {"0,8,8,8", "6,6,6,", "6,,6", "x", "", "6,6,6,6e3"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memset(&e, 0, sizeof e);
        if (wl_cluster_partition_parse(bad[i], &part, list, &nl, &e) != WL_EINVAL)
            fail_msg("'%s' parsed", bad[i]);
        assert_string_equal(e.field, "partition");
    }
    /* uniform needs the layers to divide; balanced does not */
    c.partition = WL_CLUSTER_PART_UNIFORM;
    c.pp = 8, c.dp = 1, c.vp = 1;
    load_dgx(&sys, &gpu, &m, "gpt2", NULL); /* 12 layers */
    assert_int_equal(wl_cluster_create(&sys, &gpu, &m, &c, &cl, &e), WL_EINVAL);
    c.partition = WL_CLUSTER_PART_BALANCED;
    assert_int_equal(wl_cluster_create(&sys, &gpu, &m, &c, &cl, &e), WL_OK);
    int tot = 0;
    for (int i = 0; i < 8; i++)
        tot += wl_cluster_stage_layers(cl, i);
    assert_int_equal(tot, 12);
    wl_cluster_free(cl);
}

/* GPT-3 1.3B in 4 pipeline stages of micro-batches of 8 on the 4-GPU PCIe
 * server (the power-limit studies' setting). */
static void pcie_pp4(wl_cluster_system *sys, wl_core_gpu *gpu, wl_core_model *m,
                     wl_cluster_config *c)
{
    load_system("server-4x-a100-pcie-80gb", "gpt3-1.3b", sys, gpu, m);
    wl_cluster_config_default(c);
    c->pp = 4;
    c->micro_batch = 8;
    c->global_batch = 64;
}

/* Power caps at scale: a lower limit never makes the iteration faster,
 * every GPU's average power over the timeline stays within its cap (the
 * clock floor aside), a cap above what the GPUs draw changes nothing, and a
 * limit that is no number is an error naming power_limit_w. */
static void test_power_limit_sweep(void **state)
{
    (void)state;
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model m;
    wl_error e = {0};
    wl_cluster_config c;
    pcie_pp4(&sys, &gpu, &m, &c);
    c.partition = WL_CLUSTER_PART_BALANCED;
    const double lim[] = {150, 200, 250, 300, 5000};
    wl_cluster_result r[5];
    assert_int_equal(wl_cluster_power_limit_sweep(&sys, &gpu, &m, &c, gpu.sm_clock_max_mhz, lim, 5,
                                                  r, &e), WL_OK);
    for (int i = 0; i < 5; i++) {
        if (i)
            assert_true(r[i].time_s <= r[i - 1].time_s * (1 + 1e-12));
        /* the mean GPU is within the cap (each one is: the mean is too) */
        double mean_w = r[i].energy_gpu_j / r[i].time_s / r[i].gpus;
        assert_true(mean_w <= lim[i] * gpu.coef.power_cap_frac * 1.001);
    }
    assert_true(r[0].time_s > 1.2 * r[3].time_s); /* 150 W on a 300 W board */
    wl_core_gpu free_gpu = gpu;
    free_gpu.power_limit_w = 5000;
    wl_cluster *cl;
    wl_cluster_result u;
    assert_int_equal(wl_cluster_create(&sys, &free_gpu, &m, &c, &cl, &e), WL_OK);
    assert_int_equal(wl_cluster_refine_split(cl, &e), WL_OK);
    assert_int_equal(wl_cluster_run(cl, gpu.sm_clock_max_mhz, NULL, &u, &e), WL_OK);
    assert_true(u.time_s == r[4].time_s && u.energy_j == r[4].energy_j);
    wl_cluster_free(cl);
    const double nan_lim[] = {NAN};
    assert_int_equal(wl_cluster_power_limit_sweep(&sys, &gpu, &m, &c, 1410, nan_lim, 1, r, &e),
                     WL_EINVAL);
    assert_string_equal(e.field, "power_limit_w");
    /* the A100 PCIe takes no limit below 150 W, as nvidia-smi -pl */
    assert_true(gpu.power_limit_min_w == 150);
    const double low[] = {125};
    assert_int_equal(wl_cluster_power_limit_sweep(&sys, &gpu, &m, &c, 1410, low, 1, r, &e), WL_EINVAL);
    assert_string_equal(e.field, "power_limit_w");
    assert_non_null(strstr(e.text, "150 W"));
    gpu.power_limit_w = 140;
    assert_int_equal(wl_core_gpu_check(&gpu, &e), WL_EINVAL);
    assert_string_equal(e.field, "power_limit_w");
}

/* A power limit per stage: the stage capped below its draw runs slower
 * and the others keep theirs; every stage at the GPU's own limit is the
 * default run exactly; a wrong count or a bad limit names
 * stage_power_limits. The frontier over caps beside it: fastest first, each
 * cap trading time for energy, the first (the board's own 300 W) the
 * baseline itself, the lowest cap the sweep's own result. */
static void test_stage_power_limits(void **state)
{
    (void)state;
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model m;
    wl_error e = {0};
    wl_cluster_config c;
    pcie_pp4(&sys, &gpu, &m, &c);
    wl_cluster *cl;
    wl_cluster_result base, r;
    assert_int_equal(wl_cluster_create(&sys, &gpu, &m, &c, &cl, &e), WL_OK);
    assert_int_equal(wl_cluster_run(cl, 1410, NULL, &base, &e), WL_OK);
    const double same[] = {300, 300, 300, 300};
    assert_int_equal(wl_cluster_set_stage_power_limits(cl, same, 4, &e), WL_OK);
    assert_int_equal(wl_cluster_run(cl, 1410, NULL, &r, &e), WL_OK);
    assert_true(r.time_s == base.time_s && r.energy_j == base.energy_j);
    double f1 = wl_cluster_stage_clock(cl, 1, 1), f0 = wl_cluster_stage_clock(cl, 0, 1);
    const double one_low[] = {300, 150, 300, 300};
    assert_int_equal(wl_cluster_set_stage_power_limits(cl, one_low, 4, &e), WL_OK);
    assert_int_equal(wl_cluster_run(cl, 1410, NULL, &r, &e), WL_OK);
    assert_true(wl_cluster_stage_clock(cl, 1, 1) < f1 - 100);
    assert_true(wl_cluster_stage_clock(cl, 0, 1) >= f0);
    assert_true(r.time_s > base.time_s);
    const double bad_n[] = {300, 300, 300}, bad_w[] = {300, 0, 300, 300};
    assert_int_equal(wl_cluster_set_stage_power_limits(cl, bad_n, 3, &e), WL_EINVAL);
    assert_string_equal(e.field, "stage_power_limits");
    assert_int_equal(wl_cluster_set_stage_power_limits(cl, bad_w, 4, &e), WL_EINVAL);
    assert_string_equal(e.field, "stage_power_limits");
    assert_int_equal(wl_cluster_set_stage_power_limits(cl, NULL, 0, &e), WL_OK);
    assert_int_equal(wl_cluster_run(cl, 1410, NULL, &r, &e), WL_OK);
    assert_true(r.time_s == base.time_s);
    wl_cluster_free(cl);

    const double lim[] = {150, 175, 200, 250, 300};
    wl_cluster_frontier_point *pts;
    double *caps;
    size_t n;
    assert_int_equal(wl_cluster_cap_frontier(&sys, &gpu, &m, &c, lim, 5, WL_CLUSTER_ENERGY_GPU, &pts,
                                             &caps, &n, &e), WL_OK);
    assert_true(n >= 3 && n <= 5);
    assert_true(caps[0] == 300);
    assert_true(fabs(pts[0].slowdown_pct) < 1e-9 && fabs(pts[0].energy_saving_pct) < 1e-9);
    for (size_t i = 1; i < n; i++) {
        assert_true(pts[i].time_s > pts[i - 1].time_s);
        assert_true(pts[i].energy_j < pts[i - 1].energy_j);
        assert_true(caps[i] < caps[i - 1]);
    }
    wl_cluster_result sw;
    assert_int_equal(wl_cluster_power_limit_sweep(&sys, &gpu, &m, &c, gpu.sm_clock_max_mhz,
                                                  &caps[n - 1], 1, &sw, &e), WL_OK);
    assert_true(sw.time_s == pts[n - 1].time_s && sw.energy_gpu_j == pts[n - 1].energy_j);
    free(pts);
    free(caps);
}

/* The frontier: fastest first, each point trading time for energy, all
 * within the bound, its fastest point no slower than every GPU at max. */
/* The task graph (cluster/graph.c) against the simulation it was taken
 * from: at the start's clocks and under every stage plan (a clock per
 * stage's forward, another for its backward and optimizer), its iteration
 * time and energy are wl_cluster_run's, for 1F1B, GPipe, interleaving and a
 * decode pipeline, with ZeRO-1's parameter gather and the gradient sync
 * that the last backward hides. A different computation of the same
 * figures: two passes over a graph against an event-driven simulation. */
static void graph_matches(wl_cluster *cl, int nplans)
{
    wl_error e = {0};
    wl_cluster_result r0, r;
    cl_graph d;
    int p = wl_cluster_stages(cl), pv[64];
    double plan[64];
    assert_true(2 * p <= 64);
    assert_int_equal(wl_cluster_run(cl, 1410, NULL, &r0, &e), WL_OK);
    assert_int_equal(wl_cluster_graph_build(cl, &r0, &d, &e), WL_OK);
    assert_true(d.n > 0);
    double T, E;
    wl_cluster_graph_reset(&d);
    wl_cluster_graph_eval(&d, WL_CLUSTER_ENERGY_GPU, &T, &E);
    assert_true(fabs(T - r0.time_s) <= 1e-9 * r0.time_s);
    assert_true(fabs(E - r0.energy_gpu_j) <= 1e-9 * r0.energy_gpu_j);
    wl_cluster_graph_eval(&d, WL_CLUSTER_ENERGY_ALL, &T, &E);
    assert_true(fabs(E - r0.energy_j) <= 1e-9 * r0.energy_j);
    unsigned seed = 7;
    for (int k = 0; k < nplans; k++) {
        for (int v = 0; v < 2 * p; v++) {
            seed = seed * 1103515245u + 12345u;
            int top = v % 2 ? d.fb[v / 2] : d.f0[v / 2];
            pv[v] = top - (int)((seed >> 16) % 40u); /* 0-39 steps of 15 MHz down */
            if (pv[v] < 0)
                pv[v] = 0;
            plan[v] = d.clk[pv[v]];
        }
        wl_cluster_graph_set_stages(&d, pv);
        wl_cluster_graph_eval(&d, WL_CLUSTER_ENERGY_ALL, &T, &E);
        assert_int_equal(wl_cluster_run(cl, 1410, plan, &r, &e), WL_OK);
        assert_true(fabs(T - r.time_s) <= 1e-9 * r.time_s);
        assert_true(fabs(E - r.energy_j) <= 1e-9 * r.energy_j);
    }
    wl_cluster_graph_free(&d);
}

static void test_task_graph(void **state)
{
    (void)state;
    wl_core_model m;
    wl_cluster_result r;
    for (int zero = 0; zero < 2; zero++) {
        wl_cluster *cl = small(zero, &r, &m);
        graph_matches(cl, 12);
        wl_cluster_free(cl);
    }
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model gm;
    wl_error e = {0};
    assert_int_equal(wl_cluster_system_load("dgx-a100-80gb", &sys, &e), WL_OK);
    assert_int_equal(wl_preset_gpu_load(sys.gpu, &gpu, &e), WL_OK);
    assert_int_equal(wl_preset_model_load("gpt3-1.3b", &gm, &e), WL_OK);
    static const struct {
        const char *sched;
        int pp, vp, dp;
        wl_mode mode;
    } cases[] = {{"1f1b", 4, 1, 2, WL_MODE_TRAIN}, {"gpipe", 4, 1, 2, WL_MODE_TRAIN},
                 {"interleaved", 4, 2, 2, WL_MODE_TRAIN}, {"1f1b", 8, 1, 1, WL_MODE_TRAIN},
                 {"1f1b", 4, 1, 2, WL_MODE_DECODE}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        wl_cluster_config c;
        wl_cluster_config_default(&c);
        c.pp = cases[k].pp;
        c.vp = cases[k].vp;
        c.dp = cases[k].dp;
        c.mode = cases[k].mode;
        c.gen = 8;
        c.global_batch = 16 * c.dp;
        c.schedule = wl_cluster_schedule_lookup(cases[k].sched);
        wl_cluster *cl;
        assert_int_equal(wl_cluster_create(&sys, &gpu, &gm, &c, &cl, &e), WL_OK);
        graph_matches(cl, 6);
        wl_cluster_free(cl);
    }
}

/* Per-computation plans (Perseus's space) on a pipeline whose last stage
 * carries the LM head: the stages before it wait every cycle, so at a
 * strict 0% slowdown their computations slow into that slack and save
 * energy where no stage plan can (1F1B couples a stage's forwards and
 * backwards, and the critical path runs through every stage in warm-up and
 * cool-down); the plan keeps the deadline, and a looser bound never saves
 * less. */
static void test_computation_plan(void **state)
{
    (void)state;
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model gm;
    wl_error e = {0};
    assert_int_equal(wl_cluster_system_load("dgx-a100-80gb", &sys, &e), WL_OK);
    assert_int_equal(wl_preset_gpu_load(sys.gpu, &gpu, &e), WL_OK);
    assert_int_equal(wl_preset_model_load("gpt3-1.3b", &gm, &e), WL_OK);
    wl_cluster_config c;
    wl_cluster_config_default(&c);
    c.pp = 4;
    c.dp = 2;
    c.global_batch = 32;
    wl_cluster *cl;
    assert_int_equal(wl_cluster_create(&sys, &gpu, &gm, &c, &cl, &e), WL_OK);
    double plan[8], prev = -1;
    for (int k = 0; k < 3; k++) {
        double bound = k == 0 ? 0 : k == 1 ? 1 : 5;
        wl_cluster_plan_result pr;
        assert_int_equal(wl_cluster_optimize(cl, bound, WL_CLUSTER_ENERGY_GPU, plan, &pr, &e), WL_OK);
        assert_true(pr.at_max.imbalance_pct > 10);
        assert_true(pr.computation_slowdown_pct <= bound + 1e-9);
        assert_true(pr.computation_time_s <= pr.at_max.time_s * (1 + bound / 100) * (1 + 1e-12));
        double e0 = pr.at_max.energy_gpu_j;
        assert_true(fabs(pr.computation_saving_pct - 100 * (e0 - pr.computation_energy_j) / e0) < 1e-9);
        if (k == 0) {
            assert_true(pr.energy_saving_pct < 0.5);  /* stage plans: little at 0% */
            assert_true(pr.computation_saving_pct > 1);
        }
        assert_true(pr.computation_saving_pct >= prev - 1e-9);
        prev = pr.computation_saving_pct;
    }
    wl_cluster_free(cl);
}

static void test_frontier(void **state)
{
    (void)state;
    wl_core_model m;
    wl_cluster_result r;
    wl_cluster *cl = small(0, &r, &m);
    wl_cluster_frontier_point *pts;
    double *plans;
    size_t n;
    wl_error e = {0};
    for (int sc = 0; sc < 2; sc++) {
        wl_cluster_energy_scope s = sc ? WL_CLUSTER_ENERGY_ALL : WL_CLUSTER_ENERGY_GPU;
        assert_int_equal(wl_cluster_frontier(cl, 10, s, &pts, &plans, &n, &e), WL_OK);
        assert_true(n >= 2);
        assert_true(pts[0].time_s <= r.time_s * (1 + 1e-12));
        for (size_t i = 0; i < n; i++) {
            assert_true(pts[i].slowdown_pct <= 10 + 1e-9);
            if (i && pts[i].computation == pts[i - 1].computation) {
                assert_true(pts[i].time_s >= pts[i - 1].time_s);
                assert_true(pts[i].energy_j < pts[i - 1].energy_j);
            }
            if (pts[i].computation) {
                /* its own front after the stage plans' */
                assert_true(i + 1 == n || pts[i + 1].computation);
                continue;
            }
            /* the plan replayed gives the point, in the scope's energy */
            wl_cluster_result again;
            assert_int_equal(wl_cluster_run(cl, 1410, plans + 4 * i, &again, &e), WL_OK);
            assert_true(fabs(scoped(&again, s) - pts[i].energy_j) < 1e-9 * pts[i].energy_j);
            assert_true(fabs(pts[i].energy_saving_pct - 100 * (scoped(&r, s) - pts[i].energy_j) /
                                                            scoped(&r, s)) < 1e-9);
        }
        /* the plan --optimize picks at 5% is on or above the frontier */
        double plan[4];
        wl_cluster_plan_result pr;
        assert_int_equal(wl_cluster_optimize(cl, 5, s, plan, &pr, &e), WL_OK);
        double best = INFINITY;
        for (size_t i = 0; i < n; i++)
            if (pts[i].time_s <= pr.planned.time_s * (1 + 1e-12))
                best = fmin(best, pts[i].energy_j);
        assert_true(best <= scoped(&pr.planned, s) * (1 + 1e-9));
        free(pts), free(plans);
    }
    wl_cluster_free(cl);
}

/* plot timeline draws a trace and names the line of a bad one. */
static void test_plot_timeline(void **state)
{
    (void)state;
    wl_core_model m;
    wl_cluster_result r;
    wl_cluster *cl = small(0, &r, &m);
    const char *path = write_timeline(cl, "tl.json");
    wl_plot_options o;
    wl_plot_options_default(&o);
    wl_error e = {0};
    const char *png = test_path("tl.png");
    assert_int_equal(wl_plot_timeline(path, &o, png, &e), WL_OK);
    struct stat st;
    assert_int_equal(stat(png, &st), 0);
    assert_true(st.st_size > 1000);
    FILE *f = fopen(path, "w");
    fputs("{\"traceEvents\": [\n{\"ph\": \"X\", \"tid\": 0, \"ts\": 0, \"dur\": 1, \"name\": \"f\"},\n"
          "{\"ph\": \"X\", \"tid\": 0, \"ts\": -5, \"dur\": 1, \"name\": \"f\"}]}\n", f);
    fclose(f);
    assert_int_equal(wl_plot_timeline(path, &o, png, &e), WL_EPARSE);
    assert_int_equal(e.line, 3);
    assert_string_equal(e.field, "ts");
    wl_cluster_free(cl);
}

/* The power limit holds each GPU's average over the timeline: under a low
 * limit the stages run slower clocks and the average power meets the cap,
 * higher clocks asked for settle within a grid step of the same clocks, and
 * a limit out of reach leaves the clocks as asked. */
static void test_power_limit_average(void **state)
{
    (void)state;
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model m;
    wl_error e = {0};
    wl_cluster_config c;
    load_dgx(&sys, &gpu, &m, "gpt3-1.3b", &c);
    gpu.power_limit_w = 220;
    double cap = gpu.power_limit_w * gpu.coef.power_cap_frac;
    c.global_batch = 16;
    wl_cluster *cl;
    wl_cluster_result r, up;
    assert_int_equal(wl_cluster_create(&sys, &gpu, &m, &c, &cl, &e), WL_OK);
    assert_int_equal(wl_cluster_run(cl, 1410, NULL, &r, &e), WL_OK);
    double per_gpu = r.energy_gpu_j / r.gpus / r.time_s;
    assert_true(per_gpu <= cap * (1 + 1e-9));
    double clk[4];
    for (int i = 0; i < 2; i++) {
        assert_true(wl_cluster_stage_clock(cl, i, 0) < 1410);
        clk[2 * i] = clk[2 * i + 1] = wl_cluster_stage_clock(cl, i, 0) + gpu.sm_clock_step_mhz;
    }
    /* higher clocks asked for are throttled back to within a grid step */
    double before[2] = {wl_cluster_stage_clock(cl, 0, 0), wl_cluster_stage_clock(cl, 1, 0)};
    assert_int_equal(wl_cluster_run(cl, 1410, clk, &up, &e), WL_OK);
    assert_true(up.energy_gpu_j / up.gpus / up.time_s <= cap * (1 + 1e-9));
    for (int i = 0; i < 2; i++)
        assert_true(fabs(wl_cluster_stage_clock(cl, i, 0) - before[i]) <= gpu.sm_clock_step_mhz + 1e-9);
    wl_cluster_free(cl);
    /* without the limit in reach: the clock asked for */
    gpu.power_limit_w = 1000;
    assert_int_equal(wl_cluster_create(&sys, &gpu, &m, &c, &cl, &e), WL_OK);
    assert_int_equal(wl_cluster_run(cl, 1410, NULL, &up, &e), WL_OK);
    assert_true(wl_cluster_stage_clock(cl, 0, 0) == 1410 && wl_cluster_stage_clock(cl, 1, 1) == 1410);
    assert_true(up.time_s < r.time_s);
    wl_cluster_free(cl);
}

static void test_system_presets(void **state)
{
    (void)state;
    static const char *const ids[] = {"dgx-a100-80gb", "dgx-h100", "server-4x-a100-pcie-80gb"};
    for (size_t i = 0; i < 3; i++) {
        wl_cluster_system s;
        wl_core_gpu g;
        wl_error e = {0};
        assert_int_equal(wl_cluster_system_load(ids[i], &s, &e), WL_OK);
        assert_int_equal(wl_preset_gpu_load(s.gpu, &g, &e), WL_OK);
        assert_int_equal(s.nodes, 1);
    }
    wl_cluster_system s;
    wl_error e = {0};
    assert_int_equal(wl_cluster_system_load("selene", &s, &e), WL_OK); /* alias */
    assert_string_equal(s.id, "dgx-a100-80gb");
    /* a missing key names itself and the file */
    const char *bad = "[system]\nid = x\ngpu = a100-sxm-80gb\ngpus_per_node = 8\n";
    assert_int_equal(wl_cluster_system_parse(bad, "x.ini", &s, &e), WL_EPARSE);
    assert_string_equal(e.source, "x.ini");
    assert_string_equal(e.field, "fabric");
    /* an absurd number names the key and the line */
    const char *absurd = "[system]\nid = x\ngpu = a\ngpus_per_node = 1e9\n";
    assert_int_equal(wl_cluster_system_parse(absurd, "y.ini", &s, &e), WL_EPARSE);
    assert_int_equal(e.line, 4);
    assert_string_equal(e.field, "gpus_per_node");
    assert_int_equal(wl_cluster_system_set(&s, "nic_gbps", -5, &e), WL_EINVAL);
    assert_int_equal(wl_cluster_system_set(&s, "power_limit_w", 300, &e), WL_ENOTFOUND);
}

static void test_config_errors(void **state)
{
    (void)state;
    wl_core_model m;
    wl_error e = {0};
    assert_int_equal(wl_preset_model_load("gpt3-1.3b", &m, &e), WL_OK);
    wl_cluster_config c;
    wl_cluster_config_default(&c);
    c.tp = 8;
    c.global_batch = 8;
    assert_int_equal(wl_cluster_config_check(&c, &m, 16, &e), WL_EINVAL); /* 8 != 16 */
    assert_string_equal(e.field, "dp");
    c.tp = 3;
    c.dp = 1;
    assert_int_equal(wl_cluster_config_check(&c, &m, 3, &e), WL_EINVAL); /* 16 heads */
    assert_string_equal(e.field, "tp");
    c.tp = 1;
    c.pp = 5;
    assert_int_equal(wl_cluster_config_check(&c, &m, 5, &e), WL_EINVAL); /* 24 layers */
    assert_string_equal(e.field, "pp");
    c.pp = 2;
    c.micro_batch = 2;
    c.global_batch = 3;
    assert_int_equal(wl_cluster_config_check(&c, &m, 2, &e), WL_EINVAL);
    assert_string_equal(e.field, "global_batch");
    c.global_batch = 4;
    assert_int_equal(wl_cluster_config_check(&c, &m, 2, &e), WL_OK);
}


/* The pieces of one configuration built directly, with its tensor-,
 * expert- and context-parallel groups on the system (in that rank order). */
static void build_pieces(const wl_cluster_system *sys, const wl_core_gpu *gpu, const wl_core_model *m,
                         const wl_cluster_config *c, long long kv_len, long long chunk, cl_piece *pc)
{
    wl_error e = {0};
    int ep = c->ep > 0 ? c->ep : 1, cp = c->cp > 0 ? c->cp : 1;
    cl_build b = {.gpu = gpu, .m = m, .cfg = c, .vocab = wl_cluster_padded_vocab(m, c->tp),
                  .kv_len = kv_len, .chunk = chunk};
    wl_cluster_group_of(sys, c->tp, 1, &b.tp);
    wl_cluster_group_of(sys, ep, c->tp * cp, &b.ep);
    wl_cluster_group_of(sys, cp, c->tp, &b.cp);
    assert_int_equal(wl_cluster_build_pieces(&b, pc, &e), WL_OK);
}

/* One run of a configuration at a clock, and optionally a stage's memory. */
static void run_one(const wl_cluster_system *sys, const wl_core_gpu *gpu, const wl_core_model *m,
                    const wl_cluster_config *c, double clock, wl_cluster_result *r, int stage,
                    wl_cluster_memory *mem)
{
    wl_error e = {0};
    wl_cluster *cl;
    assert_int_equal(wl_cluster_create(sys, gpu, m, c, &cl, &e), WL_OK);
    assert_int_equal(wl_cluster_run(cl, clock, NULL, r, &e), WL_OK);
    if (mem)
        assert_int_equal(wl_cluster_stage_memory(cl, stage, mem), WL_OK);
    wl_cluster_free(cl);
}

/* A small MoE model: 8 experts of 1024 (SwiGLU), top 2, one shared expert,
 * d 512, 8 heads, Llama style, no vocabulary. */
static void tiny_moe(wl_core_model *m)
{
    memset(m, 0, sizeof *m);
    snprintf(m->id, sizeof m->id, "tiny-moe");
    m->style = WL_STYLE_LLAMA;
    m->layers = 4;
    m->d_model = 512;
    m->heads = 8;
    m->kv_heads = 8;
    m->d_ff = 2048;
    m->activation = WL_ACT_SWIGLU;
    m->norm = WL_NORM_RMSNORM;
    m->pre_norm = 1;
    m->positions = WL_POS_ROTARY;
    m->experts = 8;
    m->experts_per_token = 2;
    m->d_ff_expert = 1024;
    m->shared_experts = 1;
}

static double gemm_flops(const wl_core_workload *wl)
{
    double f = 0;
    for (size_t i = 0; i < wl_core_workload_count(wl); i++) {
        const wl_kernel *k = wl_core_workload_kernel(wl, i);
        if (k->kind == WL_K_GEMM)
            f += 2.0 * (double)k->m * (double)k->n * (double)k->k * (double)k->batch;
    }
    return f;
}

/* A MoE layer's GEMM FLOPs and all-to-all by hand (tp 1, ep 4 of 8 GPUs in
 * a DGX H100, seq 256, micro-batch 1: T = 256 tokens a rank):
 *   attention  QKV 2 T d 3d, projection 2 T d d, QK^T and PV 2 x 2 s^2 d
 *   router     2 T d E
 *   experts    2 local experts of 4 x 256 x 2 / 8 = 256 tokens each:
 *              FC1 2 x 2 x 256 x d x 2 fe, FC2 2 x 2 x 256 x fe x d
 *   shared     2 T d 2 fe + 2 T fe d
 * the backward twice that, GEMM for GEMM; the dispatch and the combine each
 * move T k d bf16 bytes a rank, 3/4 of them to the 3 other ranks over
 * NVLink: alpha + 3/4 S / (450 x 0.80 GB/s). */
static void test_moe_layer(void **state)
{
    (void)state;
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_error e = {0};
    assert_int_equal(wl_cluster_system_load("dgx-h100", &sys, &e), WL_OK);
    assert_int_equal(wl_preset_gpu_load(sys.gpu, &gpu, &e), WL_OK);
    wl_core_model m;
    tiny_moe(&m);
    wl_cluster_config c;
    wl_cluster_config_default(&c);
    c.tp = 1, c.pp = 2, c.dp = 4, c.ep = 4, c.seq = 256, c.global_batch = 8;
    assert_int_equal(wl_cluster_config_check(&c, &m, 8, &e), WL_OK);
    for (int cfi = 0; cfi < 2; cfi++) {
        c.capacity_factor = cfi ? 1.5 : 1.0;
        cl_piece pc[PC_COUNT];
        build_pieces(&sys, &gpu, &m, &c, 0, 0, pc);
        wl_cluster_group ep;
        wl_cluster_group_of(&sys, 4, 1, &ep);
        assert_null(pc[PC_LAYER_F].wl); /* no dense layers */
        double T = 256, d = 512, fe = 1024, E = 8, s = 256;
        double ne = cfi ? 384 : 256; /* ceil(1.5 x 4 x 256 x 2 / 8) */
        assert_int_equal(wl_cluster_expert_tokens(&m, &c, 256), (long long)ne);
        double attn = 2 * T * d * 3 * d + 2 * T * d * d + 2 * 2 * s * s * d;
        double moe = 2 * T * d * E + 2 * 2 * ne * d * 2 * fe + 2 * 2 * ne * fe * d;
        double shared = 2 * T * d * 2 * fe + 2 * T * fe * d;
        assert_true(fabs(gemm_flops(pc[PC_MOE_F].wl) - (attn + moe + shared)) < 1);
        assert_true(fabs(gemm_flops(pc[PC_MOE_B].wl) - 2 * (attn + moe + shared)) < 1);
        double S = T * 2 * d * 2 * (cfi ? 1.5 : 1.0);
        double a2a = 2e-6 + 0.75 * S / (450 * 0.80 * 1e9);
        assert_true(fabs(wl_cluster_coll_time(&ep, WL_COLL_ALL_TO_ALL, S) - a2a) < 1e-15);
        assert_true(fabs(pc[PC_MOE_F].a2a_s - 2 * a2a) < 1e-15);
        assert_true(fabs(pc[PC_MOE_B].a2a_s - 2 * a2a) < 1e-15);
        wl_cluster_free_pieces(pc);
    }
    /* across nodes: 16 ranks, 8 a node; 7/16 of S over NVLink while 8/16
     * leave by the GPU's own 400 Gb/s NIC at 0.92: the NIC is slower */
    sys.nodes = 2;
    wl_cluster_group g;
    wl_cluster_group_of(&sys, 16, 1, &g);
    double S = 1e9;
    double want = 5e-6 + fmax(7.0 / 16 * S / (360e9), 8.0 / 16 * S / (50e9 * 0.92));
    assert_true(fabs(wl_cluster_coll_time(&g, WL_COLL_ALL_TO_ALL, S) - want) < 1e-12);
    /* parameters on one rank of a MoE layer, tp 2 ep 4: attention and the
     * shared expert halved, the router and norms whole, 2 experts halved */
    double ex = 0, d = 512, fe = 1024;
    double P = wl_cluster_moe_layer_params(&m, 2, 4, &ex);
    assert_true(fabs(ex - 2 * 3 * d * fe / 2) < 1e-6);
    assert_true(fabs(P - (4 * d * d / 2 + 2 * d + 8 * d + 3 * d * fe / 2 + ex)) < 1e-6);
    /* bad expert parallelism names ep */
    c.capacity_factor = 1;
    c.ep = 3;
    assert_int_equal(wl_cluster_config_check(&c, &m, 8, &e), WL_EINVAL);
    assert_string_equal(e.field, "ep");
    c.ep = 2, c.dp = 2, c.pp = 4;
    m.experts = 6;
    m.experts_per_token = 2;
    assert_int_equal(wl_cluster_config_check(&c, &m, 8, &e), WL_OK);
    c.ep = 4, c.dp = 4, c.pp = 2;
    assert_int_equal(wl_cluster_config_check(&c, &m, 8, &e), WL_EINVAL); /* 6 over 4 */
    assert_string_equal(e.field, "ep");
    wl_core_model dense;
    assert_int_equal(wl_preset_model_load("gpt3-1.3b", &dense, &e), WL_OK);
    c.ep = 2;
    assert_int_equal(wl_cluster_config_check(&c, &dense, 8, &e), WL_EINVAL);
    assert_string_equal(e.field, "ep");
}

/* Node-limited routing (route_nodes M) and --ep-overlap by hand: tiny_moe
 * with 16 experts, top-k = 2, over ep 16 spanning 2 DGX H100 nodes. Unlimited, a rank's T k
 * copies go out as an all-to-all, 8/16 of them through its own 400 Gb/s NIC
 * at 0.92 (the slower side, test_moe_layer); limited to M = 1 node a token
 * crosses the network once to its one node, remote half the time, and
 * NVLink forwards its k copies there, 7/8 of them to another GPU:
 *   alpha + max(T d b (1/2) / NIC, T k d b (7/8) / (450 x 0.80 GB/s)).
 * With the overlap, a MoE layer's exchanges hide behind another micro-
 * batch's MoE layer: none exposed where that compute is longer, and the
 * iteration no slower; a dense model refuses it, naming the field. */
static void test_moe_routing(void **state)
{
    (void)state;
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_error e = {0};
    assert_int_equal(wl_cluster_system_load("dgx-h100", &sys, &e), WL_OK);
    assert_int_equal(wl_preset_gpu_load(sys.gpu, &gpu, &e), WL_OK);
    sys.nodes = 2;
    wl_core_model m;
    tiny_moe(&m);
    m.experts = 16; /* one a rank */
    wl_cluster_config c;
    wl_cluster_config_default(&c);
    c.tp = 1, c.pp = 1, c.dp = 16, c.ep = 16, c.seq = 4096, c.global_batch = 32;
    assert_int_equal(wl_cluster_config_check(&c, &m, 16, &e), WL_OK);
    double T = 4096, d = 512, k = 2, bf = 2;
    for (int M = 0; M <= 1; M++) {
        m.route_nodes = M;
        cl_piece pc[PC_COUNT];
        build_pieces(&sys, &gpu, &m, &c, 0, 0, pc);
        double S = T * k * d * bf, want;
        if (M == 0)
            want = 5e-6 + fmax(7.0 / 16 * S / 360e9, 8.0 / 16 * S / (50e9 * 0.92));
        else
            want = 5e-6 + fmax(T * d * bf * 0.5 / (50e9 * 0.92), S * 7.0 / 8 / 360e9);
        assert_true(fabs(pc[PC_MOE_F].a2a_s - 2 * want) < 1e-12);
        wl_cluster_free_pieces(pc);
    }
    /* the overlap: the forward's exchanges behind a backward's MoE layer,
     * the backward's behind a forward's */
    m.route_nodes = 0;
    wl_cluster_result r0, r1;
    run_one(&sys, &gpu, &m, &c, 1980, &r0, 0, NULL);
    c.ep_overlap = 1;
    cl_piece pc[PC_COUNT];
    build_pieces(&sys, &gpu, &m, &c, 0, 0, pc);
    assert_true(pc[PC_MOE_F].a2a_hidden_s > 0 && pc[PC_MOE_F].a2a_window == PC_MOE_B);
    assert_true(pc[PC_MOE_B].a2a_hidden_s > 0 && pc[PC_MOE_B].a2a_window == PC_MOE_F);
    wl_cluster_free_pieces(pc);
    run_one(&sys, &gpu, &m, &c, 1980, &r1, 0, NULL);
    assert_true(r0.ep_comm_exposed_s > 0);
    assert_true(r1.ep_comm_exposed_s < r0.ep_comm_exposed_s);
    assert_true(r1.time_s < r0.time_s);
    /* what the overlap removes is at most the exchanges themselves */
    assert_true(r0.time_s - r1.time_s <= r0.ep_comm_exposed_s - r1.ep_comm_exposed_s + 1e-9);
    wl_core_model dense;
    assert_int_equal(wl_preset_model_load("gpt3-1.3b", &dense, &e), WL_OK);
    c.ep = 1;
    assert_int_equal(wl_cluster_config_check(&c, &dense, 16, &e), WL_EINVAL);
    assert_string_equal(e.field, "ep_overlap");
}

/* Mixtral 8x7B on 8 DGX H100: experts over 8 ranks hold an eighth of the
 * experts' weights, their all-to-alls are exposed, and the MoE layers'
 * model FLOPs count the top-2 experts a token meets. */
static void test_moe_cluster(void **state)
{
    (void)state;
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model m;
    load_system("dgx-h100", "mixtral-8x7b", &sys, &gpu, &m);
    sys.nodes = 8;
    wl_cluster_config c;
    wl_cluster_config_default(&c);
    c.tp = 2, c.pp = 4, c.dp = 8, c.seq = 4096, c.global_batch = 64, c.zero = 1;
    c.sequence_parallel = 1;
    wl_cluster_result r1, r8;
    wl_cluster_memory m1, m8;
    run_one(&sys, &gpu, &m, &c, 1980, &r1, 1, &m1);
    c.ep = 8;
    run_one(&sys, &gpu, &m, &c, 1980, &r8, 1, &m8);
    assert_true(r1.ep_comm_exposed_s == 0);
    assert_true(r8.ep_comm_exposed_s > 0);
    /* stage 1: 8 layers; the experts' share of its weights drops 8x */
    double d = 4096, fe = 14336, experts = 8 * 8 * 3 * d * fe / 2;
    assert_true(fabs((m1.weights_gb - m8.weights_gb) * 1e9 / 2 - experts * 7 / 8) < 1e3);
    /* the same FLOPs either way: 6 N per token with N the active matmul
     * parameters (attention, router, two experts; the head) plus 12 l d s */
    double attn = d * (d + 2 * 1024) + d * d, N = 32 * (attn + d * 8 + 2 * 3 * d * fe) + 32000 * d;
    double flop = (6 * N + 12 * 32 * d * 4096) * 64 * 4096;
    assert_true(fabs(r1.model_tflop * 1e12 - flop) / flop < 1e-12);
    assert_true(fabs(r8.model_tflop - r1.model_tflop) < 1e-9 * r1.model_tflop);
}

/* The MoE presets' parameter counts are the published ones: Mixtral
 * 8x7B's 46,702,792,704 (HF), and DeepSeek-V3's 671B, by hand from its
 * configuration: embedding and head 2 x 129280 x 7168; MLA attention
 * 7168 x 1536 + 1536 + 1536 x 128 x 192 + 7168 x 576 + 512 + 512 x 128 x 256
 * + 128 x 128 x 7168 = 187,107,328; three dense layers of FFN 3 x 7168 x
 * 18432; 58 MoE layers of 257 experts of 3 x 7168 x 2048, the router
 * 256 x 7168 and its 256 biases; two RMSNorms a layer and the final one. */
static void test_moe_presets(void **state)
{
    (void)state;
    wl_error e = {0};
    wl_core_model m;
    double P;
    assert_int_equal(wl_preset_model_load("mixtral-8x7b", &m, &e), WL_OK);
    assert_int_equal(wl_core_model_params(&m, &P), WL_OK);
    assert_true(P == 46702792704.0);
    assert_int_equal(wl_preset_model_load("deepseek-v3", &m, &e), WL_OK);
    assert_int_equal(wl_core_model_params(&m, &P), WL_OK);
    double attn = 7168.0 * 1536 + 1536 + 1536.0 * 128 * 192 + 7168.0 * 576 + 512 + 512.0 * 128 * 256 +
                  128.0 * 128 * 7168;
    assert_true(attn == 187107328.0);
    double want = 2 * 129280.0 * 7168 + 7168 + 3 * (attn + 3 * 7168.0 * 18432 + 2 * 7168) +
                  58 * (attn + 257 * 3 * 7168.0 * 2048 + 256 * 7168.0 + 256 + 2 * 7168);
    assert_true(P == want);
    assert_true(fabs(P - 671e9) < 0.05e9); /* "671B total parameters" */
    /* the single-GPU builders refuse, naming the key */
    wl_core_shape sh = {.batch = 1, .seq = 16, .dtype = WL_DT_BF16, .mode = WL_MODE_PREFILL};
    wl_core_build_info info;
    assert_int_equal(wl_core_build_info_of(&m, &sh, 0, &info, &e), WL_EINVAL);
    assert_string_equal(e.field, "experts");
}


/* fp8 on Hopper (Transformer Engine's recipe): the linear layers' GEMMs in
 * fp8, attention's products, the router and the LM head in bf16, a cast
 * before the projection and before each input-gradient GEMM; faster than
 * bf16 by less than the 2x of the tensor cores' rate (the rest of the
 * kernels and the collectives stay: Megatron's 22B on a DGX H100, tp 8,
 * whose GEMMs are large; a small model's launch-bound layers gain nothing);
 * the A100 has no fp8 tensor cores. */
static void test_fp8(void **state)
{
    (void)state;
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model m;
    wl_error e = {0};
    load_system("dgx-h100", "megatron-22b", &sys, &gpu, &m);
    wl_cluster_config c;
    wl_cluster_config_default(&c);
    c.tp = 8, c.seq = 2048, c.global_batch = 4, c.micro_batch = 4, c.dtype = WL_DT_FP8;
    c.sequence_parallel = 1, c.recompute = WL_RECOMPUTE_SELECTIVE;
    cl_piece pc[PC_COUNT];
    build_pieces(&sys, &gpu, &m, &c, 0, 0, pc);
    int fp8 = 0, bf16_gemm = 0, casts = 0;
    const wl_core_workload *f = pc[PC_LAYER_F].wl;
    for (size_t i = 0; i < wl_core_workload_count(f); i++) {
        const wl_kernel *k = wl_core_workload_kernel(f, i);
        if (k->kind == WL_K_GEMM && k->batch == 1) {
            assert_int_equal(k->in_dtype, WL_DT_FP8);
            fp8++;
        } else if (k->kind == WL_K_GEMM) {
            assert_int_equal(k->in_dtype, WL_DT_BF16); /* QK^T, PV */
            bf16_gemm++;
        } else if (k->kind == WL_K_ELEMENTWISE && k->op == WL_EW_CAST_BF16) {
            casts++;
        }
    }
    assert_int_equal(fp8, 4);
    assert_int_equal(bf16_gemm, 2);
    assert_int_equal(casts, 1);
    const wl_core_workload *hb = pc[PC_HEAD_F].wl;
    for (size_t i = 0; i < wl_core_workload_count(hb); i++)
        if (wl_core_workload_kernel(hb, i)->kind == WL_K_GEMM)
            assert_int_equal(wl_core_workload_kernel(hb, i)->in_dtype, WL_DT_BF16);
    /* the backward: a cast before each of the four input-gradient GEMMs */
    casts = 0;
    const wl_core_workload *bw = pc[PC_LAYER_B].wl;
    for (size_t i = 0; i < wl_core_workload_count(bw); i++) {
        const wl_kernel *k = wl_core_workload_kernel(bw, i);
        casts += k->kind == WL_K_ELEMENTWISE && k->op == WL_EW_CAST_BF16;
    }
    assert_int_equal(casts, 4);
    wl_cluster_free_pieces(pc);
    wl_cluster_result r8, r16;
    run_one(&sys, &gpu, &m, &c, 1980, &r8, 0, NULL);
    c.dtype = WL_DT_BF16;
    run_one(&sys, &gpu, &m, &c, 1980, &r16, 0, NULL);
    wl_cluster *cl;
    assert_true(r8.time_s < r16.time_s && r8.time_s > r16.time_s / 2);
    /* the same model FLOPs, MFU against the same (bf16) peak */
    assert_true(fabs(r8.mfu / r16.mfu - r16.time_s / r8.time_s) < 1e-9);
    /* MFU on the datasheet's convention: 989.4 TFLOPS bf16 = 132 SMs x
     * 4096 FLOP per clock x 1830 MHz (NVIDIA's H100 SXM datasheet), not
     * the 1070 at the 1980 MHz top clock */
    assert_close(r16.mfu, r16.tflops_per_gpu / (132 * 4096 * 1830e6 * 1e-12), 1e-12);
    /* no fp8 on an A100 */
    wl_cluster_system a;
    wl_core_gpu ga;
    assert_int_equal(wl_cluster_system_load("dgx-a100-80gb", &a, &e), WL_OK);
    assert_int_equal(wl_preset_gpu_load(a.gpu, &ga, &e), WL_OK);
    c.dtype = WL_DT_FP8;
    assert_int_equal(wl_cluster_create(&a, &ga, &m, &c, &cl, &e), WL_EINVAL);
    assert_string_equal(e.field, "dtype");
}


/* Context parallelism (ring attention) by hand, Llama 3 8B, tp 2, cp 4 on a
 * DGX H100, seq 32768: a rank's GEMMs run over its 8192 tokens, its flash
 * attention puts those queries against all 32768 keys (causal: a quarter
 * of the whole's work), and a layer's forward passes its keys and values
 * (8192 tokens x 4 local key/value heads x 128 x 2 bf16 bytes for K and V)
 * round the 3 other ranks; the backward passes twice that. Activations
 * shrink, the time does not grow much (the exchange hides behind
 * attention). */
static void test_context_parallel(void **state)
{
    (void)state;
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model m;
    wl_error e = {0};
    load_system("dgx-h100", "llama-3-8b", &sys, &gpu, &m);
    sys.nodes = 2;
    wl_cluster_config c;
    wl_cluster_config_default(&c);
    c.tp = 2, c.cp = 4, c.dp = 2, c.seq = 32768, c.global_batch = 4;
    c.attention = WL_ATTN_FLASH, c.sequence_parallel = 1;
    assert_int_equal(wl_cluster_config_check(&c, &m, 16, &e), WL_OK);
    cl_piece pc[PC_COUNT];
    build_pieces(&sys, &gpu, &m, &c, 0, 0, pc);
    const wl_core_workload *f = pc[PC_LAYER_F].wl;
    int flash = 0;
    for (size_t i = 0; i < wl_core_workload_count(f); i++) {
        const wl_kernel *k = wl_core_workload_kernel(f, i);
        if (k->kind == WL_K_GEMM)
            assert_int_equal(k->n, 8192); /* y = x W^T over the rank's tokens */
        if (k->kind == WL_K_ATTN_FLASH) {
            flash++;
            assert_int_equal(k->m, 8192);
            assert_int_equal(k->n, 32768);
            assert_int_equal(k->batch, 16); /* 32 heads over tp 2 */
            assert_int_equal(k->k, 128);
            assert_true(k->causal); /* a quarter of the causal whole: 8192 x 32768 / 2 */
        }
    }
    assert_int_equal(flash, 1);
    double kvb = 8192.0 * 4 * 256 * 2, a = 2e-6, B = 450 * 0.80 * 1e9;
    assert_int_equal(pc[PC_LAYER_F].hide[0].window, PC_WIN_ATTN_F);
    assert_true(fabs(pc[PC_LAYER_F].hide[0].coll_s - 3 * (a + kvb / B)) < 1e-15);
    int ring = -1;
    for (int k = 0; k < pc[PC_LAYER_B].nhide; k++)
        if (pc[PC_LAYER_B].hide[k].window == PC_WIN_ATTN_B)
            ring = k;
    assert_true(ring >= 0);
    assert_true(fabs(pc[PC_LAYER_B].hide[ring].coll_s - 3 * (a + 2 * kvb / B)) < 1e-15);
    wl_cluster_free_pieces(pc);
    /* whole runs: cp 4 against cp 1 on 16 GPUs */
    wl_cluster_result r1, r4;
    wl_cluster_memory m1, m4;
    run_one(&sys, &gpu, &m, &c, 1980, &r4, 0, &m4);
    c.cp = 1, c.dp = 8, c.global_batch = 8;
    run_one(&sys, &gpu, &m, &c, 1980, &r1, 0, &m1);
    assert_true(m4.activations_gb < m1.activations_gb / 3.5);
    /* the same 16 GPUs: tokens per second within 10% either way */
    assert_true(r4.tokens_per_s > 0.9 * r1.tokens_per_s && r4.tokens_per_s < 1.1 * r1.tokens_per_s);
    /* refusals name cp */
    c.cp = 4, c.dp = 2, c.seq = 32772;
    assert_int_equal(wl_cluster_config_check(&c, &m, 16, &e), WL_EINVAL);
    assert_string_equal(e.field, "cp");
    c.seq = 32768, c.attention = WL_ATTN_EAGER;
    assert_int_equal(wl_cluster_config_check(&c, &m, 16, &e), WL_EINVAL);
    assert_string_equal(e.field, "cp");
    c.attention = WL_ATTN_FLASH, c.dp = 4;
    assert_int_equal(wl_cluster_config_check(&c, &m, 16, &e), WL_EINVAL);
    assert_string_equal(e.field, "dp");
}


/* --tp-comm-overlap: a layer's forward pairs each sequence-parallel
 * all-gather with the GEMM after it and each reduce-scatter with the GEMM
 * before it, each hidden behind 7/8 of its GEMM at tp 8; the backward's
 * two gradient all-gathers behind the row-parallel input gradients. GPT-3
 * 175B on 8 DGX A100s: the exposed tensor-parallel time drops to what the
 * embedding and the loss keep, and the step does not slow. Without
 * sequence parallelism it is refused. */
static void test_tp_overlap(void **state)
{
    (void)state;
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model m;
    wl_error e = {0};
    load_system("dgx-a100-80gb", "gpt3-175b", &sys, &gpu, &m);
    sys.nodes = 8;
    wl_cluster_config c;
    wl_cluster_config_default(&c);
    c.tp = 8, c.pp = 8, c.vp = 3, c.dtype = WL_DT_FP16, c.global_batch = 64;
    c.recompute = WL_RECOMPUTE_SELECTIVE, c.sequence_parallel = 1, c.tp_comm_overlap = 1;
    cl_piece pc[PC_COUNT];
    build_pieces(&sys, &gpu, &m, &c, 0, 0, pc);
    double S = 2048.0 * 12288 * 2;
    wl_cluster_group tpg;
    wl_cluster_group_of(&sys, 8, 1, &tpg);
    double ag = wl_cluster_coll_time(&tpg, WL_COLL_ALL_GATHER, S);
    double rs = wl_cluster_coll_time(&tpg, WL_COLL_REDUCE_SCATTER, S);
    const cl_piece *f = &pc[PC_LAYER_F];
    assert_true(f->comm_s == 0);
    assert_int_equal(f->nhide, 4);
    static const int win[4] = {PC_WIN_QKV_F, PC_WIN_PROJ_F, PC_WIN_FC1_F, PC_WIN_FC2_F};
    for (int k = 0; k < 4; k++) {
        assert_int_equal(f->hide[k].window, win[k]);
        assert_true(f->hide[k].coll_s == (k % 2 ? rs : ag));
        assert_true(f->hide[k].frac == 7.0 / 8);
        assert_int_equal(wl_core_workload_count(pc[win[k]].wl), 1); /* one GEMM */
    }
    const cl_piece *bw = &pc[PC_LAYER_B];
    assert_true(bw->comm_s == 0);
    assert_int_equal(bw->hide[0].window, PC_WIN_PROJ_B);
    assert_int_equal(bw->hide[1].window, PC_WIN_FC2_B);
    wl_cluster_free_pieces(pc);
    wl_cluster_result r0, r1;
    run_one(&sys, &gpu, &m, &c, 1410, &r1, 0, NULL);
    c.tp_comm_overlap = 0;
    run_one(&sys, &gpu, &m, &c, 1410, &r0, 0, NULL);
    assert_true(r1.tp_comm_exposed_s < 0.05 * r0.tp_comm_exposed_s);
    assert_true(r1.time_s < r0.time_s);
    c.tp_comm_overlap = 1, c.sequence_parallel = 0;
    assert_int_equal(wl_cluster_config_check(&c, &m, 64, &e), WL_EINVAL);
    assert_string_equal(e.field, "tp_comm_overlap");
}


/* The distributed optimizer (--zero 1): the gradients reduce-scattered
 * behind the last backward, the parameters all-gathered behind the first
 * forward; on the small GPT both hide, and without the overlap they add
 * up, by hand: a reduce-scatter of the stage's fp32 gradients and an
 * all-gather of its bf16 parameters over the 2 data-parallel ranks
 * (stride tp 2 in one node). */
static void test_distributed_optimizer(void **state)
{
    (void)state;
    wl_core_model m;
    wl_cluster_result r;
    wl_cluster *cl = small(1, &r, &m);
    assert_true(r.dp_comm_exposed_s == 0);
    wl_cluster_free(cl);
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_error e = {0};
    wl_cluster_config c;
    dgx_a100(&sys, &gpu, &c);
    c.zero = 1, c.no_dp_overlap = 1;
    assert_int_equal(wl_cluster_create(&sys, &gpu, &m, &c, &cl, &e), WL_OK);
    assert_int_equal(wl_cluster_run(cl, 1410, NULL, &r, &e), WL_OK);
    wl_cluster_free(cl);
    double d = 1024, ff = 4096;
    double P = 2 * ((3 * d * d + d * d + 2 * d * ff) / 2 + (3 * d + ff) / 2 + 2 * d + 4 * d);
    wl_cluster_group g;
    wl_cluster_group_of(&sys, 2, 2, &g);
    /* the mean over the stages; the last holds the final LayerNorm too */
    double want = 0;
    for (int i = 0; i < 2; i++) {
        double Pi = P + (i ? 2 * d : 0);
        want += (wl_cluster_coll_time(&g, WL_COLL_REDUCE_SCATTER, 4 * Pi) +
                 wl_cluster_coll_time(&g, WL_COLL_ALL_GATHER, 2 * Pi)) / 2;
    }
    assert_true(fabs(r.dp_comm_exposed_s - want) < 1e-12);
}


/* A serving engine in the cluster (decode with CUDA graphs): continuous
 * batching as predict's. Llama 3 8B on one H100 of a DGX (dp 8), 32
 * running sequences, prompts of 512, 256 tokens: each step carries the 32
 * decode tokens and round(31 x 512 / 255) = 62 prompt tokens (its GEMMs
 * over 94 rows, the chunk's attention over the prompt), the time to first
 * token is one request's prompt pass, and the generation does about the
 * work of the batch's prompts and tokens. */
static void test_serving_decode(void **state)
{
    (void)state;
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model m;
    load_system("dgx-h100", "llama-3-8b", &sys, &gpu, &m);
    wl_cluster_config c;
    wl_cluster_config_default(&c);
    c.mode = WL_MODE_DECODE, c.launch = WL_LAUNCH_GRAPHS, c.attention = WL_ATTN_FLASH;
    c.dp = 8, c.micro_batch = 32, c.global_batch = 256, c.seq = 512, c.gen = 256;
    cl_piece pc[PC_COUNT];
    build_pieces(&sys, &gpu, &m, &c, 512 + 128, 62, pc);
    int chunk_attn = 0, step_attn = 0;
    const wl_core_workload *f = pc[PC_LAYER_F].wl;
    for (size_t i = 0; i < wl_core_workload_count(f); i++) {
        const wl_kernel *k = wl_core_workload_kernel(f, i);
        if (k->kind == WL_K_GEMM)
            assert_int_equal(k->n, 94);
        if (k->kind == WL_K_ATTN_FLASH && k->m == 62 && k->n == 512 && k->causal && k->batch == 32)
            chunk_attn++;
        if (k->kind == WL_K_ATTN_FLASH && k->m == 1 && k->n == 640 && k->batch == 32 * 32)
            step_attn++;
    }
    assert_int_equal(chunk_attn, 1);
    assert_int_equal(step_attn, 1);
    wl_cluster_free_pieces(pc);
    wl_cluster_result served, single;
    run_one(&sys, &gpu, &m, &c, 1980, &served, 0, NULL);
    /* one request's prompt of 512 tokens: ~1 TFLOP-ish pass, milliseconds */
    assert_true(served.ttft_s > 1e-3 && served.ttft_s < 0.05);
    c.micro_batch = 1, c.global_batch = 8; /* the board's power limit holds neither */
    run_one(&sys, &gpu, &m, &c, 1980, &single, 0, NULL);
    /* the same single-request prompt pass with one running sequence */
    assert_true(fabs(served.ttft_s - single.ttft_s) < 1e-12);
    assert_true(served.tpot_s > 5e-3 && served.tpot_s < 20e-3);
}

/* The energy's parts from their definitions, by hand:
 *   GPUs: every GPU of a replica's stages, dp replicas of them, so at the
 *     same work per replica dp 2 draws twice dp 1's GPU energy, plus what
 *     dp 2's gradient all-reduce adds (its time at no more than the cap,
 *     400 W a GPU);
 *   network: 2 DGX A100 nodes have 2 x 8 NICs on one 40-port switch
 *     (16 <= 40), each at its own power: T (16 nic_w + 1 switch_w), here
 *     T (16 x 20 + 700) with the switch's power set apart from the NICs';
 *   nodes: T nodes node_other_w. */
static void test_energy_parts_golden(void **state)
{
    (void)state;
    wl_core_model m;
    wl_cluster_result r2;
    wl_cluster *c2 = small(0, &r2, &m); /* tp 2, pp 2, dp 2: 4 micro-batches each */
    wl_cluster_free(c2);
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_error e = {0};
    assert_int_equal(wl_cluster_system_load("dgx-a100-80gb", &sys, &e), WL_OK);
    assert_int_equal(wl_preset_gpu_load(sys.gpu, &gpu, &e), WL_OK);
    wl_cluster_config c;
    wl_cluster_config_default(&c);
    c.tp = 2;
    c.pp = 2;
    c.dp = 1;
    c.seq = 1024;
    c.global_batch = 4; /* the same 4 micro-batches on the one replica */
    sys.gpus_per_node = 4; /* a node of the replica's 4 GPUs, the same fabric */
    wl_cluster *c1;
    wl_cluster_result r1;
    assert_int_equal(wl_cluster_create(&sys, &gpu, &m, &c, &c1, &e), WL_OK);
    assert_int_equal(wl_cluster_run(c1, 1410, NULL, &r1, &e), WL_OK);
    wl_cluster_free(c1);
    assert_int_equal(r1.gpus, 4);
    assert_true(r2.time_s >= r1.time_s);
    double extra = r2.energy_gpu_j - 2 * r1.energy_gpu_j;
    assert_true(extra >= -1e-9 * r2.energy_gpu_j);
    assert_true(extra <= (r2.time_s - r1.time_s) * 8 * 400.0 + 1e-9 * r2.energy_gpu_j);
    /* two nodes, dp 4 */
    sys.gpus_per_node = 8;
    sys.nodes = 2;
    assert_int_equal(wl_cluster_system_set(&sys, "switch_w", 700, &e), WL_OK);
    assert_true(sys.nic_w == 20 && sys.nics_per_node == 8 && sys.switch_ports == 40);
    c.dp = 4;
    c.global_batch = 16;
    assert_int_equal(wl_cluster_create(&sys, &gpu, &m, &c, &c1, &e), WL_OK);
    assert_int_equal(wl_cluster_run(c1, 1410, NULL, &r1, &e), WL_OK);
    wl_cluster_free(c1);
    assert_int_equal(r1.gpus, 16);
    assert_close(r1.energy_network_j, r1.time_s * (16 * 20.0 + 1 * 700.0), 1e-12 * r1.energy_j);
    assert_close(r1.energy_node_j, r1.time_s * 2 * sys.node_other_w, 1e-12 * r1.energy_j);
    assert_close(r1.energy_j, r1.energy_gpu_j + r1.energy_network_j + r1.energy_node_j,
                 1e-12 * r1.energy_j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bubble_fractions), cmocka_unit_test(test_in_flight),
        cmocka_unit_test(test_ring_allreduce),   cmocka_unit_test(test_stage_memory),
        cmocka_unit_test(test_energy_parts_golden), cmocka_unit_test(test_result_invariants), cmocka_unit_test(test_timeline_json),
        cmocka_unit_test(test_stage_plan), cmocka_unit_test(test_system_presets),   cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_moe_layer), cmocka_unit_test(test_moe_cluster), cmocka_unit_test(test_moe_presets),
        cmocka_unit_test(test_moe_routing),
        cmocka_unit_test(test_fp8), cmocka_unit_test(test_context_parallel),
        cmocka_unit_test(test_tp_overlap), cmocka_unit_test(test_distributed_optimizer),
        cmocka_unit_test(test_serving_decode),
        cmocka_unit_test(test_decode_rounds), cmocka_unit_test(test_decode_result),
        cmocka_unit_test(test_search), cmocka_unit_test(test_frontier),
        cmocka_unit_test(test_task_graph), cmocka_unit_test(test_computation_plan),
        cmocka_unit_test(test_partitions), cmocka_unit_test(test_power_limit_sweep),
        cmocka_unit_test(test_stage_power_limits), cmocka_unit_test(test_lora),
        cmocka_unit_test(test_plot_timeline), cmocka_unit_test(test_power_limit_average),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
