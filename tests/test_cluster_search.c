/* cluster search's shortcuts: the lower bounds it prunes with, the front
 * they leave unchanged, the pieces configurations share and the replayed
 * simulations. Each is checked against what it stands in for: the bound
 * against the simulated run, the pruned search against the full one, a
 * cached or replayed run against a fresh one, bit for bit. */
#include "test_util.h"

#include "../cluster/wattlas_cluster.h"
#include "../cluster/cluster_internal.h"
#include "../presets/wattlas_presets.h"

static void load(const char *system, const char *model, int nodes, wl_cluster_system *sys,
                 wl_core_gpu *gpu, wl_core_model *m)
{
    wl_error e = {0};
    assert_int_equal(wl_cluster_system_load(system, sys, &e), WL_OK);
    assert_int_equal(wl_preset_gpu_load(sys->gpu, gpu, &e), WL_OK);
    assert_int_equal(wl_preset_model_load(model, m, &e), WL_OK);
    sys->nodes = nodes;
}

/* Every configuration of a search space (every third, for time) that
 * holds its memory: the bounds are never above the simulated time and
 * energy, with the power limit throttling stages (A100 SXM at fp16, a
 * 250 W PCIe server) and without (a cap no run reaches), across gpipe,
 * 1f1b, interleaving and zb-h1; and the energy bound holds in all. */
static void check_bounds(const char *system, const char *model, int nodes, long long gb,
                         wl_dtype dt, double power_limit_w, int *throttled)
{
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model m;
    wl_error e = {0};
    load(system, model, nodes, &sys, &gpu, &m);
    if (power_limit_w > 0)
        gpu.power_limit_w = power_limit_w;
    wl_cluster_search_spec sp;
    wl_cluster_search_default(&sp);
    sp.base.global_batch = gb;
    sp.base.dtype = dt;
    wl_cluster_config *cf;
    size_t n;
    assert_int_equal(wl_cluster_search_configs(&sp, &m, nodes * sys.gpus_per_node, sys.gpus_per_node,
                                               &cf, &n, &e), WL_OK);
    int checked = 0, sched_seen[4] = {0};
    for (size_t i = 0; i < n; i += 3) {
        wl_cluster *c;
        assert_int_equal(wl_cluster_create(&sys, &gpu, &m, &cf[i], &c, &e), WL_OK);
        if (wl_cluster_memory_floor_gb(c) > gpu.mem_capacity_gb) {
            wl_cluster_free(c);
            continue;
        }
        double tl, el;
        int valid;
        assert_int_equal(wl_cluster_bound(c, gpu.sm_clock_max_mhz, &tl, &el, &valid), WL_OK);
        wl_cluster_result r;
        assert_int_equal(wl_cluster_run(c, gpu.sm_clock_max_mhz, NULL, &r, &e), WL_OK);
        assert_true(tl > 0 && tl <= r.time_s * (1 + 1e-12));
        assert_true(valid);
        assert_true(el > 0 && el <= r.energy_j * (1 + 1e-12));
        for (int k = 0; k < wl_cluster_stages(c); k++)
            *throttled += wl_cluster_sim_stage_of(c, k) && r.time_s > 0 &&
                          wl_cluster_stage_clock(c, k, 1) < gpu.sm_clock_max_mhz;
        for (int s = 0; s < 4; s++)
            sched_seen[s] |= cf[i].schedule == wl_cluster_schedule_at(s);
        checked++;
        wl_cluster_free(c);
    }
    assert_true(checked > 20);
    for (int s = 0; s < 4; s++)
        assert_true(sched_seen[s]);
    free(cf);
}

static void test_bounds_hold(void **state)
{
    (void)state;
    int thr = 0;
    check_bounds("dgx-a100-80gb", "gpt3-13b", 4, 128, WL_DT_FP16, 0, &thr);
    check_bounds("server-4x-a100-pcie-80gb", "gpt3-1.3b", 1, 32, WL_DT_BF16, 0, &thr);
    assert_true(thr > 0); /* the power limit did throttle stages */
    int none = 0;
    check_bounds("dgx-a100-80gb", "gpt3-1.3b", 1, 64, WL_DT_BF16, 5000, &none);
    assert_int_equal(none, 0);
    check_bounds("dgx-h100", "mixtral-8x7b", 2, 64, WL_DT_BF16, 0, &thr);
}

/* One stage: no pipeline to wait on, so an iteration is its micro-batches'
 * forwards and backwards, the exposed gradient sync and the optimizer, and
 * its energy the tasks' plus idle over the sync: the bound is the run. */
static void test_bound_exact_one_stage(void **state)
{
    (void)state;
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model m;
    wl_error e = {0};
    load("dgx-a100-80gb", "gpt3-1.3b", 1, &sys, &gpu, &m);
    gpu.power_limit_w = 5000;
    wl_cluster_config c;
    wl_cluster_config_default(&c);
    c.tp = 2, c.pp = 1, c.dp = 4;
    c.micro_batch = 2;
    c.global_batch = 32;
    c.seq = 1024;
    wl_cluster *cl;
    assert_int_equal(wl_cluster_create(&sys, &gpu, &m, &c, &cl, &e), WL_OK);
    double tl, el;
    int valid;
    assert_int_equal(wl_cluster_bound(cl, 1410, &tl, &el, &valid), WL_OK);
    wl_cluster_result r;
    assert_int_equal(wl_cluster_run(cl, 1410, NULL, &r, &e), WL_OK);
    assert_true(valid);
    assert_true(fabs(tl - r.time_s) <= 1e-12 * r.time_s);
    assert_true(fabs(el - r.energy_j) <= 1e-9 * r.energy_j);
    /* other modes have no bound */
    wl_cluster_free(cl);
    c.mode = WL_MODE_PREFILL;
    assert_int_equal(wl_cluster_create(&sys, &gpu, &m, &c, &cl, &e), WL_OK);
    assert_int_equal(wl_cluster_bound(cl, 1410, &tl, &el, &valid), WL_EINVAL);
    wl_cluster_free(cl);
}

/* The pruned search (front only) finds the full search's front, fastest
 * and least energy, on any number of threads, and simulates fewer. */
static void test_pruned_front(void **state)
{
    (void)state;
    /* the third's front has three configurations (its least energy is 2%
     * slower than its fastest) */
    const char *cases[][2] = {{"dgx-a100-80gb", "gpt3-13b"}, {"server-4x-a100-pcie-80gb", "gpt3-1.3b"},
                              {"dgx-h100", "llama-3-70b"}};
    int fronts = 0;
    for (size_t k = 0; k < 3; k++) {
        wl_cluster_system sys;
        wl_core_gpu gpu;
        wl_core_model m;
        wl_error e = {0};
        int nodes = k == 1 ? 1 : k == 2 ? 8 : 4;
        load(cases[k][0], cases[k][1], nodes, &sys, &gpu, &m);
        wl_cluster_search_spec sp;
        wl_cluster_search_default(&sp);
        sp.base.global_batch = k == 1 ? 32 : 128;
        wl_cluster_config *cf;
        size_t n;
        int gpus = nodes * sys.gpus_per_node;
        assert_int_equal(wl_cluster_search_configs(&sp, &m, gpus, sys.gpus_per_node, &cf, &n, &e), WL_OK);
        wl_cluster_search_row *all = calloc(n, sizeof *all), *p1 = calloc(n, sizeof *p1),
                              *p2 = calloc(n, sizeof *p2);
        unsigned char *f0 = calloc(n, 1), *f1 = calloc(n, 1), *f2 = calloc(n, 1);
        assert_non_null(all), assert_non_null(p1), assert_non_null(p2);
        assert_int_equal(wl_cluster_search_eval(&sys, &gpu, &m, cf, n, gpu.sm_clock_max_mhz, 2, 0, all,
                                                NULL, NULL, &e), WL_OK);
        assert_int_equal(wl_cluster_search_eval(&sys, &gpu, &m, cf, n, gpu.sm_clock_max_mhz, 1, 1, p1,
                                                NULL, NULL, &e), WL_OK);
        assert_int_equal(wl_cluster_search_eval(&sys, &gpu, &m, cf, n, gpu.sm_clock_max_mhz, 3, 1, p2,
                                                NULL, NULL, &e), WL_OK);
        long fa, la, f1a, l1a, f2a, l2a;
        assert_int_equal(wl_cluster_search_pick(all, n, f0, &fa, &la), WL_OK);
        assert_int_equal(wl_cluster_search_pick(p1, n, f1, &f1a, &l1a), WL_OK);
        assert_int_equal(wl_cluster_search_pick(p2, n, f2, &f2a, &l2a), WL_OK);
        assert_true(fa >= 0);
        assert_int_equal(fa, f1a), assert_int_equal(la, l1a);
        assert_int_equal(fa, f2a), assert_int_equal(la, l2a);
        size_t sim_all = 0, sim_p = 0, bounded = 0;
        for (size_t i = 0; i < n; i++) {
            assert_int_equal(f0[i], f1[i]);
            assert_int_equal(f1[i], f2[i]);
            /* the same configurations left out, whatever the threads */
            assert_int_equal(p1[i].bounded, p2[i].bounded);
            assert_int_equal(p1[i].evaluated, p2[i].evaluated);
            if (p1[i].evaluated) /* and what is simulated is what the full search found */
                assert_true(p1[i].r.time_s == all[i].r.time_s && p1[i].r.energy_j == all[i].r.energy_j);
            if (p1[i].bounded) /* a pruned one: truly beaten in both by the front */
                assert_true(all[i].evaluated && !f0[i]);
            sim_all += (size_t)all[i].evaluated;
            sim_p += (size_t)p1[i].evaluated;
            bounded += (size_t)p1[i].bounded;
        }
        assert_true(bounded > 0 && sim_p < sim_all);
        for (size_t i = 0; i < n; i++)
            fronts += k == 2 && f0[i];
        free(all), free(p1), free(p2), free(f0), free(f1), free(f2), free(cf);
    }
    assert_true(fronts >= 3);
}

/* Clusters created with a cache of pieces run exactly as ones with their
 * own; a cache evicts only entries no cluster holds (one held while more
 * shapes than the cache keeps pass through it), and freeing in any order
 * is clean (the sanitizers see to that). */
static void test_piece_cache(void **state)
{
    (void)state;
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model m;
    wl_error e = {0};
    load("dgx-a100-80gb", "gpt3-1.3b", 1, &sys, &gpu, &m);
    wl_cluster_piece_cache *pc = wl_cluster_piece_cache_create();
    assert_non_null(pc);
    wl_cluster_config c;
    wl_cluster_config_default(&c);
    c.tp = 2, c.pp = 2, c.dp = 2;
    c.global_batch = 16;
    c.seq = 512;
    wl_cluster *held, *own;
    assert_int_equal(wl_cluster_create_cached(&sys, &gpu, &m, &c, pc, &held, &e), WL_OK);
    assert_int_equal(wl_cluster_create(&sys, &gpu, &m, &c, &own, &e), WL_OK);
    wl_cluster_result a, b;
    for (int pass = 0; pass < 2; pass++) {
        /* 130 shapes (sequence lengths) through the cache */
        for (int s = 0; s < 130; s++) {
            wl_cluster_config x = c;
            x.seq = 64 + 8 * s;
            x.pp = 1 + s % 2;
            x.dp = 4 / x.pp;
            wl_cluster *t;
            assert_int_equal(wl_cluster_create_cached(&sys, &gpu, &m, &x, pc, &t, &e), WL_OK);
            assert_int_equal(wl_cluster_run(t, 1200, NULL, &a, &e), WL_OK);
            wl_cluster_free(t);
        }
        assert_int_equal(wl_cluster_run(held, 1410 - 300 * pass, NULL, &a, &e), WL_OK);
        assert_int_equal(wl_cluster_run(own, 1410 - 300 * pass, NULL, &b, &e), WL_OK);
        assert_true(a.time_s == b.time_s && a.energy_j == b.energy_j && a.memory_gb == b.memory_gb);
    }
    /* a decode's second set of pieces (its steps) is kept too */
    c.mode = WL_MODE_DECODE;
    c.gen = 8;
    wl_cluster *d1, *d2;
    assert_int_equal(wl_cluster_create_cached(&sys, &gpu, &m, &c, pc, &d1, &e), WL_OK);
    assert_int_equal(wl_cluster_create(&sys, &gpu, &m, &c, &d2, &e), WL_OK);
    assert_int_equal(wl_cluster_run(d1, 1410, NULL, &a, &e), WL_OK);
    assert_int_equal(wl_cluster_run(d2, 1410, NULL, &b, &e), WL_OK);
    assert_true(a.time_s == b.time_s && a.energy_j == b.energy_j && a.tpot_s == b.tpot_s);
    wl_cluster_piece_cache_free(NULL);
    wl_cluster_free(held);
    wl_cluster_free(d1);
    wl_cluster_piece_cache_free(pc);
    wl_cluster_free(own);
    wl_cluster_free(d2);
}

/* A simulator that has run a shape replays it: a cluster run at one clock
 * and then another, or after another configuration of the same shape,
 * gives what a fresh one gives, bit for bit, task by task (1f1b,
 * interleaved, gpipe; zb-h1, whose order depends on the times, is always
 * simulated afresh). */
static void test_replay(void **state)
{
    (void)state;
    wl_cluster_system sys;
    wl_core_gpu gpu;
    wl_core_model m;
    wl_error e = {0};
    load("dgx-a100-80gb", "gpt3-1.3b", 1, &sys, &gpu, &m);
    const char *scheds[] = {"1f1b", "interleaved", "gpipe", "zb-h1"};
    for (int k = 0; k < 4; k++) {
        wl_cluster_config c;
        wl_cluster_config_default(&c);
        c.tp = 2, c.pp = 4, c.dp = 1;
        c.vp = k == 1 ? 2 : 1;
        c.schedule = wl_cluster_schedule_lookup(scheds[k]);
        c.global_batch = 8;
        c.seq = 512;
        wl_cluster *a, *b;
        wl_cluster_result ra, rb;
        assert_int_equal(wl_cluster_create(&sys, &gpu, &m, &c, &a, &e), WL_OK);
        assert_int_equal(wl_cluster_run(a, 1410, NULL, &ra, &e), WL_OK);
        c.recompute = WL_RECOMPUTE_FULL; /* other durations, the same shape */
        assert_int_equal(wl_cluster_create(&sys, &gpu, &m, &c, &b, &e), WL_OK);
        wl_cluster_sim *lent = wl_cluster_swap_sim(b, wl_cluster_swap_sim(a, NULL));
        assert_int_equal(wl_cluster_run(b, 1005, NULL, &rb, &e), WL_OK); /* a's simulator */
        wl_cluster_sim *used = wl_cluster_swap_sim(b, lent);
        wl_cluster *fresh;
        wl_cluster_result rf;
        assert_int_equal(wl_cluster_create(&sys, &gpu, &m, &c, &fresh, &e), WL_OK);
        assert_int_equal(wl_cluster_run(fresh, 1005, NULL, &rf, &e), WL_OK);
        assert_true(rb.time_s == rf.time_s && rb.energy_j == rf.energy_j && rb.bubble_s == rf.bubble_s &&
                    rb.pp_comm_exposed_s == rf.pp_comm_exposed_s);
        size_t nt = wl_cluster_task_count(fresh);
        assert_int_equal(wl_cluster_sim_task_count(used), nt);
        for (size_t t = 0; t < nt; t++) {
            const wl_cluster_task *x = wl_cluster_sim_task(used, t), *y = wl_cluster_task_at(fresh, t);
            assert_true(x->stage == y->stage && x->micro == y->micro && x->kind == y->kind &&
                        x->start_s == y->start_s && x->dur_s == y->dur_s);
        }
        wl_cluster_swap_sim(a, used);
        wl_cluster_free(a);
        wl_cluster_free(b);
        wl_cluster_free(fresh);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bounds_hold), cmocka_unit_test(test_bound_exact_one_stage),
        cmocka_unit_test(test_pruned_front), cmocka_unit_test(test_piece_cache),
        cmocka_unit_test(test_replay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
