/* wattlas serve: the scheduler's arithmetic against hand-derived cases and
 * against predict, and the invariants where its features meet. */
#include "test_util.h"

#include "../presets/wattlas_presets.h"
#include "../serve/wattlas_serve.h"

static wl_core_gpu gpu_of(const char *id)
{
    wl_core_gpu g;
    wl_error err = {0};
    assert_int_equal(wl_preset_gpu_load(id, &g, &err), WL_OK);
    return g;
}

static wl_core_model model_of(const char *id)
{
    wl_core_model m;
    wl_error err = {0};
    assert_int_equal(wl_preset_model_load(id, &m, &err), WL_OK);
    return m;
}

static wl_serve_result run_fixed(const wl_core_gpu *g, const wl_core_model *m, long long n,
                                 long long prompt, long long output, wl_serve_engine e,
                                 double clock)
{
    wl_error err = {0};
    wl_serve_requests *r = NULL;
    assert_int_equal(wl_serve_requests_fixed(n, prompt, output, &r, &err), WL_OK);
    wl_serve_sim *s = NULL;
    assert_int_equal(wl_serve_sim_create(g, m, WL_DT_BF16, &e, &s, &err), WL_OK);
    wl_core_op op = {.sm_clock_mhz = clock};
    wl_serve_result res;
    int rc = wl_serve_sim_run(s, r, &op, &op, &res, &err);
    if (rc)
        fail_msg("%s", err.text);
    wl_serve_sim_free(s);
    wl_serve_requests_free(r);
    return res;
}

/* vLLM's capture sizes: 1, 2, 4, then multiples of 8 up to the largest. */
static void test_capture_sizes(void **state)
{
    (void)state;
    const long long in[] = {1, 2, 3, 4, 5, 8, 9, 255, 256, 511, 512, 513};
    const long long want[] = {1, 2, 4, 4, 8, 8, 16, 256, 256, 512, 512, 0};
    for (size_t i = 0; i < sizeof in / sizeof *in; i++)
        assert_int_equal(wl_serve_capture_size(in[i], 512), want[i]);
}

/* A saturated run at max_num_seqs 1 is HF's generation as a serving engine
 * runs it one request at a time: predict --mode decode --launch graphs
 * --batch 1 (the same prefill, decode steps and host steps), request after
 * request. */
static void test_one_seq_equals_predict(void **state)
{
    (void)state;
    wl_core_gpu g = gpu_of("h100-sxm-80gb");
    wl_core_model m = model_of("llama-3-8b");
    const long long P = 100, O = 300;
    wl_core_shape sh = {.batch = 1, .seq = P, .dtype = WL_DT_BF16, .attention = WL_ATTN_FLASH,
                        .mode = WL_MODE_DECODE, .gen = O, .launch = WL_LAUNCH_GRAPHS,
                        .impl = WL_IMPL_FUSED};
    wl_core_workload *wl = NULL;
    wl_error err = {0};
    assert_int_equal(wl_core_build(&m, &sh, &wl, &err), WL_OK);
    wl_core_op op = {.sm_clock_mhz = 1410};
    wl_core_result pr;
    assert_int_equal(wl_core_predict(&g, wl, &op, &pr), WL_OK);
    double tpot_ms = pr.phase[WL_PHASE_DECODE].time_ms / (double)(O - 1);
    wl_core_workload_free(wl);
    wl_serve_result r = run_fixed(&g, &m, 3, P, O, (wl_serve_engine){.max_num_seqs = 1}, 1410);
    assert_true(fabs(r.run_energy_per_request_j / pr.energy_j - 1) < 1e-3);
    assert_true(fabs(r.time_s / 3 / (pr.time_ms / 1e3) - 1) < 1e-3);
    /* every ITL of a request alone is a decode step: the histogram's bins
     * are 0.05% wide */
    assert_true(fabs(r.median_itl_ms / tpot_ms - 1) < 2e-3);
    assert_true(fabs(r.avg_batch - 1) < 1e-12);
}

/* Longer outputs, longer prompts or more requests never lower the energy
 * of a request at a fixed batch. */
static void test_more_work_more_energy(void **state)
{
    (void)state;
    wl_core_gpu g = gpu_of("h100-sxm-80gb");
    wl_core_model m = model_of("llama-3-8b");
    wl_serve_engine e = {.max_num_seqs = 8};
    double prev = 0;
    const long long outs[] = {50, 100, 200, 400};
    for (size_t i = 0; i < 4; i++) {
        wl_serve_result r = run_fixed(&g, &m, 32, 200, outs[i], e, 1980);
        assert_true(r.run_energy_per_request_j >= prev);
        prev = r.run_energy_per_request_j;
    }
    prev = 0;
    const long long prompts[] = {16, 256, 2048};
    for (size_t i = 0; i < 3; i++) {
        wl_serve_result r = run_fixed(&g, &m, 32, prompts[i], 100, e, 1980);
        assert_true(r.run_energy_per_request_j >= prev);
        prev = r.run_energy_per_request_j;
    }
    /* identical requests in waves of the batch: per request the same */
    wl_serve_result a = run_fixed(&g, &m, 16, 200, 100, e, 1980);
    wl_serve_result b = run_fixed(&g, &m, 64, 200, 100, e, 1980);
    assert_true(b.run_energy_per_request_j >= a.run_energy_per_request_j * (1 - 1e-9));
    assert_true(fabs(b.run_energy_per_request_j / a.run_energy_per_request_j - 1) < 1e-6);
}

/* A lower power cap is never faster; a run's row does not depend on the
 * other clocks the same simulator ran before it. */
static void test_caps_and_neighbours(void **state)
{
    (void)state;
    wl_core_model m = model_of("llama-3-8b");
    wl_core_gpu hi = gpu_of("h100-sxm-80gb"), lo = hi;
    lo.power_limit_w = 250;
    wl_serve_engine e = {.max_num_seqs = 64};
    wl_serve_result a = run_fixed(&hi, &m, 128, 500, 200, e, 1980);
    wl_serve_result b = run_fixed(&lo, &m, 128, 500, 200, e, 1980);
    assert_true(b.time_s >= a.time_s);
    assert_true(b.power_w <= 250 * 1.001);

    wl_error err = {0};
    wl_serve_requests *r = NULL;
    assert_int_equal(wl_serve_requests_preset("lm-arena-chat", 200, 7, &r, &err), WL_OK);
    wl_serve_sim *s = NULL;
    assert_int_equal(wl_serve_sim_create(&hi, &m, WL_DT_BF16, &e, &s, &err), WL_OK);
    wl_core_op o1 = {.sm_clock_mhz = 990}, o2 = {.sm_clock_mhz = 1980};
    wl_serve_result x, y, z;
    assert_int_equal(wl_serve_sim_run(s, r, &o2, &o2, &x, &err), WL_OK);
    assert_int_equal(wl_serve_sim_run(s, r, &o1, &o1, &y, &err), WL_OK);
    assert_int_equal(wl_serve_sim_run(s, r, &o2, &o2, &z, &err), WL_OK);
    assert_memory_equal(&x, &z, sizeof x);
    /* a lower clock: slower decode steps */
    assert_true(y.median_itl_ms > x.median_itl_ms);
    wl_serve_sim_free(s);
    wl_serve_requests_free(r);
}

/* A cache too small for the running batch preempts and recomputes: every
 * request still finishes, at more energy than without preemption. */
static void test_preemption(void **state)
{
    (void)state;
    wl_core_gpu g = gpu_of("h100-sxm-80gb");
    wl_core_model m = model_of("llama-3-8b");
    wl_serve_engine roomy = {.max_num_seqs = 64}, tight = roomy;
    /* llama-3-8b takes ~16 GB of weights and ~3 GB more at 8192 tokens:
     * 0.245 x 85.5 GB leaves ~1.6 GB, ~12k tokens for 64 requests of 600 */
    tight.gpu_memory_utilization = 0.245;
    wl_serve_result a = run_fixed(&g, &m, 128, 400, 200, roomy, 1980);
    wl_serve_result b = run_fixed(&g, &m, 128, 400, 200, tight, 1980);
    assert_int_equal(a.preemptions, 0);
    assert_true(b.preemptions > 0);
    assert_true(b.kv_cache_tokens < 64 * 600);
    assert_true(b.run_energy_per_request_j > a.run_energy_per_request_j);
    assert_true(isfinite(b.run_energy_per_request_j));
}

typedef struct {
    double time_s, energy_j, batch_s, last_end;
    long long tokens, records, in;
} log_sums;

static void sum_steady(void *user, const wl_serve_step_rec *rec)
{
    log_sums *l = user;
    /* records tile the run: each starts where the last ended */
    assert_true(fabs(rec->start_s - l->last_end) <= 1e-12 * (1 + l->last_end));
    l->last_end = rec->start_s + rec->time_s;
    l->records++;
    if (!rec->steady)
        return;
    l->in++;
    l->time_s += rec->time_s;
    l->energy_j += rec->energy_j;
    l->batch_s += (double)rec->running * rec->time_s;
    l->tokens += rec->sampled_tokens;
}

/* The benchmark's window by hand: four requests of 100 + 50 tokens at
 * max_num_seqs 2 run in two waves. It opens when two requests have a first
 * token (the first wave's prefill) and closes when 4 - 2 - 1 = 1 has
 * finished (the first wave's last decode step): 49 decode steps of two
 * requests, 98 tokens, batch 2, each step one ITL. The step log's steady
 * records sum to the same window. Eight slots for four requests: the window
 * would open when eight have a first token, which never comes before the
 * first finish closes it: no steady state. */
static void test_steady_window(void **state)
{
    (void)state;
    wl_core_gpu g = gpu_of("h100-sxm-80gb");
    wl_core_model m = model_of("llama-3-8b");
    wl_error err = {0};
    wl_serve_requests *r = NULL;
    assert_int_equal(wl_serve_requests_fixed(4, 100, 50, &r, &err), WL_OK);
    wl_serve_engine e = {.max_num_seqs = 2};
    wl_serve_sim *s = NULL;
    assert_int_equal(wl_serve_sim_create(&g, &m, WL_DT_BF16, &e, &s, &err), WL_OK);
    log_sums l = {0};
    wl_serve_sim_log(s, sum_steady, &l);
    wl_core_op op = {.sm_clock_mhz = 1980};
    wl_serve_result res;
    assert_int_equal(wl_serve_sim_run(s, r, &op, &op, &res, &err), WL_OK);
    assert_string_equal(res.steady_why, "");
    assert_int_equal(l.in, 49);
    assert_int_equal(l.records, res.steps);
    assert_true(fabs(res.avg_batch - 2) < 1e-12);
    assert_true(fabs(res.output_tokens_per_s * res.steady_s - 98) < 1e-9);
    assert_true(fabs(res.steady_s / 49 / (res.median_itl_ms / 1e3) - 1) < 2e-3);
    assert_true(fabs(res.steady_s - (res.steady_end_s - res.steady_start_s)) < 1e-12);
    assert_true(fabs(l.time_s / res.steady_s - 1) < 1e-12);
    assert_true(fabs(l.energy_j / (res.power_w * res.steady_s) - 1) < 1e-12);
    assert_true(fabs(l.energy_j / (double)l.tokens / res.energy_per_token_j - 1) < 1e-12);
    assert_true(fabs(res.energy_per_request_j / (res.energy_per_token_j * 50) - 1) < 1e-12);
    assert_int_equal(res.stable, 0); /* a window of milliseconds, not 20 s */
    assert_true(fabs(l.last_end - res.time_s) < 1e-12);
    wl_serve_sim_free(s);

    e.max_num_seqs = 8;
    assert_int_equal(wl_serve_sim_create(&g, &m, WL_DT_BF16, &e, &s, &err), WL_OK);
    assert_int_equal(wl_serve_sim_run(s, r, &op, &op, &res, &err), WL_OK);
    assert_non_null(strstr(res.steady_why, "no steady state"));
    assert_true(isnan(res.power_w) && isnan(res.energy_per_token_j) && isnan(res.avg_batch));
    assert_true(isfinite(res.run_power_w) && isfinite(res.run_energy_per_token_j));
    assert_true(fabs(res.run_energy_per_request_j * 4 / res.energy_j - 1) < 1e-12);
    assert_int_equal(res.stable, 0);
    wl_serve_sim_free(s);
    wl_serve_requests_free(r);
}

typedef struct {
    long long decode;
    double comm_s;
    int seen;
} comm_probe;

static void probe_comm(void *user, const wl_serve_step_rec *rec)
{
    comm_probe *c = user;
    if (rec->decode_seqs == c->decode && rec->prefill_tokens == 0 && !c->seen) {
        c->comm_s = rec->comm_s;
        c->seen = 1;
    }
}

/* Tensor parallelism by hand, Llama 3 8B (d 4096, 32 layers, vocabulary
 * 128256 = 2004 x 64) on the DGX H100's NVSwitch (450 GB/s x 0.80 = 360
 * GB/s, 2 us a hop). A decode step of 8 sequences (a graph of 8 tokens)
 * all-reduces 8 x 4096 x 2 = 65536 bytes 2 x 32 + 1 = 65 times; at two
 * ranks vLLM's custom all-reduce is one-shot: 2 us + 65536 / 360e9 s each;
 * the logits' all-gather (NCCL's ring) moves 8 x 128256 x 2 bytes: 2 us +
 * 1/2 x 2052096 / 360e9 s. At four ranks a step of 64 all-reduces 512 KB,
 * not under 512 KB: two-shot, 2 x 2 us + 2 x 3/4 x 524288 / 360e9 s; the
 * gather 3 x 2 us + 3/4 x 64 x 128256 x 2 / 360e9 s. Each rank holds half
 * the weights and half the key/value heads: more than twice the tokens.
 * --tp 1 is one GPU; a model whose heads do not split is refused, and so is
 * tensor parallelism without a system's links. */
static void test_tensor_parallel(void **state)
{
    (void)state;
    wl_core_gpu g = gpu_of("h100-sxm-80gb");
    wl_core_model m = model_of("llama-3-8b");
    wl_cluster_system sys;
    wl_error err = {0};
    assert_int_equal(wl_cluster_system_load("dgx-h100", &sys, &err), WL_OK);
    const struct {
        int tp;
        long long n;
        double want;
    } cases[] = {
        {2, 8, 65 * (2e-6 + 65536 / 360e9) + 2e-6 + 0.5 * 2052096 / 360e9},
        {4, 64, 65 * (4e-6 + 1.5 * 524288 / 360e9) + 6e-6 + 0.75 * 64 * 128256 * 2 / 360e9},
    };
    wl_core_op op = {.sm_clock_mhz = 1980};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        wl_serve_requests *r = NULL;
        assert_int_equal(wl_serve_requests_fixed(cases[i].n, 16, 4, &r, &err), WL_OK);
        wl_serve_engine e = {.max_num_seqs = cases[i].n, .tp = cases[i].tp, .system = &sys};
        wl_serve_sim *s = NULL;
        assert_int_equal(wl_serve_sim_create(&g, &m, WL_DT_BF16, &e, &s, &err), WL_OK);
        comm_probe c = {.decode = cases[i].n};
        wl_serve_sim_log(s, probe_comm, &c);
        wl_serve_result res;
        assert_int_equal(wl_serve_sim_run(s, r, &op, &op, &res, &err), WL_OK);
        assert_true(c.seen);
        assert_true(fabs(c.comm_s / cases[i].want - 1) < 1e-9);
        wl_serve_sim_free(s);
        wl_serve_requests_free(r);
    }
    /* the cache: more than twice the tokens on two ranks; --tp 1 is one GPU */
    wl_serve_requests *r = NULL;
    assert_int_equal(wl_serve_requests_fixed(6, 100, 20, &r, &err), WL_OK);
    wl_serve_result a, b;
    long long kv[2];
    for (int t = 0; t < 2; t++) {
        wl_serve_engine e = {.max_num_seqs = 4, .tp = t + 1, .system = &sys};
        wl_serve_sim *s = NULL;
        assert_int_equal(wl_serve_sim_create(&g, &m, WL_DT_BF16, &e, &s, &err), WL_OK);
        kv[t] = wl_serve_sim_kv_tokens(s);
        wl_serve_sim_free(s);
    }
    assert_true(kv[1] > 2 * kv[0]);
    wl_serve_engine e0 = {.max_num_seqs = 4}, e1 = {.max_num_seqs = 4, .tp = 1};
    wl_serve_sim *s0 = NULL, *s1 = NULL;
    assert_int_equal(wl_serve_sim_create(&g, &m, WL_DT_BF16, &e0, &s0, &err), WL_OK);
    assert_int_equal(wl_serve_sim_create(&g, &m, WL_DT_BF16, &e1, &s1, &err), WL_OK);
    assert_int_equal(wl_serve_sim_run(s0, r, &op, &op, &a, &err), WL_OK);
    assert_int_equal(wl_serve_sim_run(s1, r, &op, &op, &b, &err), WL_OK);
    assert_true(a.energy_j == b.energy_j && a.time_s == b.time_s && a.steps == b.steps);
    wl_serve_sim_free(s0);
    wl_serve_sim_free(s1);
    wl_serve_requests_free(r);
    wl_serve_engine bad = {.max_num_seqs = 4, .tp = 3, .system = &sys};
    wl_serve_sim *s = NULL;
    assert_int_not_equal(wl_serve_sim_create(&g, &m, WL_DT_BF16, &bad, &s, &err), WL_OK);
    assert_string_equal(err.field, "tp");
    assert_non_null(strstr(err.text, "query heads"));
    assert_null(s);
    bad.tp = 2;
    bad.system = NULL;
    assert_int_not_equal(wl_serve_sim_create(&g, &m, WL_DT_BF16, &bad, &s, &err), WL_OK);
    assert_string_equal(err.field, "tp");
    assert_null(s);
}

/* The grouped GEMMs of a decode step of Qwen3-30B-A3B (128 experts of 768,
 * 8 a token, d 2048) at 8 sequences: a given expert gets none of 8 tokens
 * with probability (1 - 8/128)^8 = 0.5967, so 128 x 0.4033 = 51.6 experts
 * are read, 52, with the 64 slots two to an expert: w13 a batch of 52
 * GEMMs of 1536 x 2 x 2048, w2 of 2048 x 2 x 768. Split whole over two
 * expert-parallel ranks: 64 experts, 25.8 read (26), 32 slots; split by
 * width instead (no --ep): 128 experts of 384. */
static int has_gemm(const wl_core_workload *wl, long long batch, long long m, long long n,
                    long long k)
{
    for (size_t i = 0; i < wl_core_workload_count(wl); i++) {
        const wl_kernel *x = wl_core_workload_kernel(wl, i);
        if (x->kind == WL_K_GEMM && x->batch == batch && x->m == m && x->n == n && x->k == k)
            return 1;
    }
    return 0;
}

static void test_moe_experts(void **state)
{
    (void)state;
    wl_core_model m = model_of("qwen3-30b-a3b");
    wl_core_shape sh = {.batch = 1, .seq = 1, .dtype = WL_DT_BF16, .attention = WL_ATTN_FLASH,
                        .mode = WL_MODE_DECODE, .gen = 2, .launch = WL_LAUNCH_GRAPHS,
                        .impl = WL_IMPL_FUSED};
    const struct {
        int tp, ep;
        long long batch, ff, per;
    } cases[] = {{1, 0, 52, 768, 2}, {2, 1, 26, 768, 2}, {2, 0, 52, 384, 2}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        wl_core_serve_step st = {.decode = 8, .context = 300, .padded = 8, .sampled = 8,
                                 .seqs = 8, .graph = 1, .tp = cases[i].tp, .ep = cases[i].ep};
        wl_core_workload *wl = NULL;
        wl_error err = {0};
        assert_int_equal(wl_core_build_serve_step(&m, &sh, &st, &wl, &err), WL_OK);
        assert_true(has_gemm(wl, cases[i].batch, 2 * cases[i].ff, cases[i].per, 2048));
        assert_true(has_gemm(wl, cases[i].batch, 2048, cases[i].per, cases[i].ff));
        wl_core_workload_free(wl);
    }
    /* the dense builders still refuse a MoE on one GPU */
    wl_core_workload *wl = NULL;
    wl_error err = {0};
    assert_int_not_equal(wl_core_build(&m, &sh, &wl, &err), WL_OK);
    assert_null(wl);
}

/* Gemma 3 27B's hybrid cache (vLLM 0.11's uniform-page grouping): 62
 * layers, every sixth global: 10 full and 52 sliding-window layers, groups
 * of min(10, 52) = 10, one full group and ceil(52 / 10) = 6 window groups,
 * a pool block holding 10 layers' pages. Against the same model without a
 * window (one group of 62), the pool has 62 / 10 times the blocks and a
 * token of every group takes 7 of them: 62 / 70 of the tokens. A request
 * under the window costs the same steps either way; past it, the local
 * layers read 1024 keys, not all. */
static void test_sliding_window(void **state)
{
    (void)state;
    wl_core_gpu g = gpu_of("h100-sxm-80gb");
    wl_core_model m = model_of("gemma-3-27b"), full = m;
    full.sliding_window = full.global_every = 0;
    wl_error err = {0};
    wl_serve_engine e = {.max_num_seqs = 4};
    wl_serve_sim *a = NULL, *b = NULL;
    assert_int_equal(wl_serve_sim_create(&g, &m, WL_DT_BF16, &e, &a, &err), WL_OK);
    assert_int_equal(wl_serve_sim_create(&g, &full, WL_DT_BF16, &e, &b, &err), WL_OK);
    double ratio = (double)wl_serve_sim_kv_tokens(a) / (double)wl_serve_sim_kv_tokens(b);
    assert_true(fabs(ratio - 62.0 / 70.0) < 1e-3);
    wl_core_op op = {.sm_clock_mhz = 1980};
    const long long prompts[2] = {500, 4000};
    for (int i = 0; i < 2; i++) {
        wl_serve_requests *r = NULL;
        assert_int_equal(wl_serve_requests_fixed(4, prompts[i], 20, &r, &err), WL_OK);
        wl_serve_result ra, rb;
        assert_int_equal(wl_serve_sim_run(a, r, &op, &op, &ra, &err), WL_OK);
        assert_int_equal(wl_serve_sim_run(b, r, &op, &op, &rb, &err), WL_OK);
        if (i == 0)
            assert_true(ra.time_s == rb.time_s && ra.energy_j == rb.energy_j);
        else
            assert_true(ra.median_itl_ms < rb.median_itl_ms && ra.energy_j < rb.energy_j);
        wl_serve_requests_free(r);
    }
    wl_serve_sim_free(a);
    wl_serve_sim_free(b);
}

/* A serving step reads every weight once (issue 78: the MoE layers also ran
 * the dense MLP's down projection, 4.7B parameters a step of Qwen3-235B
 * that it does not have). At 8192 decode tokens every expert gets some, so
 * a step's GEMMs read batch x m x k weights (m the outputs, k the inputs)
 * that sum to the model's parameters less what no GEMM reads: the input
 * embedding of an untied head, the RMSNorms' weights (two a layer, the
 * final one, MLA's two latent norms) and DeepSeek's routing bias. */
static void test_weights_once(void **state)
{
    (void)state;
    wl_core_shape sh = {.batch = 1, .seq = 1, .dtype = WL_DT_BF16, .attention = WL_ATTN_FLASH,
                        .mode = WL_MODE_DECODE, .gen = 2, .launch = WL_LAUNCH_GRAPHS,
                        .impl = WL_IMPL_FUSED};
    size_t seen = 0;
    for (size_t i = 0; i < wl_preset_count(WL_PRESET_MODEL); i++) {
        const char *id = wl_preset_id(WL_PRESET_MODEL, i);
        wl_core_model m = model_of(id);
        /* every preset of the llama family (bias-free, RMSNorm): dense,
         * grouped-query, head_dim, sliding-window, MoE, interleaved, MLA */
        if (m.style != WL_STYLE_LLAMA || m.qkv_bias || m.layers > 128)
            continue;
        seen++;
        wl_core_serve_step st = {.decode = 8192, .context = 100, .sampled = 1, .seqs = 8192};
        wl_core_workload *wl = NULL;
        wl_error err = {0};
        assert_int_equal(wl_core_build_serve_step(&m, &sh, &st, &wl, &err), WL_OK);
        double w = 0;
        for (size_t k = 0; k < wl_core_workload_count(wl); k++) {
            const wl_kernel *x = wl_core_workload_kernel(wl, k);
            if (x->kind == WL_K_GEMM)
                w += (double)x->batch * (double)x->m * (double)x->k;
        }
        wl_core_workload_free(wl);
        double p, d = m.d_model;
        assert_int_equal(wl_core_model_params(&m, &p), WL_OK);
        double norms = (2.0 * m.layers + 1) * d;
        if (wl_core_model_is_mla(&m))
            norms += (double)m.layers * (m.q_lora_rank + m.kv_lora_rank);
        double bias = m.router_bias ? (double)(m.layers - m.dense_layers) * m.experts : 0;
        double emb = m.untied_head ? (double)m.vocab_size * d : 0;
        if (fabs(w / (p - emb - norms - bias) - 1) >= 1e-12)
            print_message("%s: GEMM weights %.6g, parameters %.6g\n", id, w, p - emb - norms - bias);
        assert_true(fabs(w / (p - emb - norms - bias) - 1) < 1e-12);
    }
    assert_true(seen >= 12);
}

/* Data parallelism: two engines of eight requests of 100 + 50 tokens at
 * max_num_seqs 2 are two of the one-engine run of four (test_steady_window):
 * twice its energy and tokens, the same time, ITL and energy per token; the
 * window's counts are the two engines' together (opening at 4 first tokens,
 * closing when 8 - 4 - 1 = 3 have finished), so its 49 decode steps of the
 * first wave are each engine's. A mixture of experts is refused. */
static void test_data_parallel(void **state)
{
    (void)state;
    wl_core_gpu g = gpu_of("h100-sxm-80gb");
    wl_core_model m = model_of("llama-3-8b");
    wl_error err = {0};
    wl_serve_requests *r4 = NULL, *r8 = NULL;
    assert_int_equal(wl_serve_requests_fixed(4, 100, 50, &r4, &err), WL_OK);
    assert_int_equal(wl_serve_requests_fixed(8, 100, 50, &r8, &err), WL_OK);
    wl_serve_engine e1 = {.max_num_seqs = 2}, e2 = {.max_num_seqs = 2, .dp = 2};
    wl_serve_sim *a = NULL, *b = NULL;
    assert_int_equal(wl_serve_sim_create(&g, &m, WL_DT_BF16, &e1, &a, &err), WL_OK);
    assert_int_equal(wl_serve_sim_create(&g, &m, WL_DT_BF16, &e2, &b, &err), WL_OK);
    wl_core_op op = {.sm_clock_mhz = 1980};
    wl_serve_result ra, rb;
    assert_int_equal(wl_serve_sim_run(a, r4, &op, &op, &ra, &err), WL_OK);
    assert_int_equal(wl_serve_sim_run(b, r8, &op, &op, &rb, &err), WL_OK);
    assert_true(fabs(rb.energy_j / (2 * ra.energy_j) - 1) < 1e-12);
    assert_true(rb.time_s == ra.time_s && rb.median_itl_ms == ra.median_itl_ms);
    assert_int_equal(rb.steps, 2 * ra.steps);
    assert_true(fabs(rb.steady_s - ra.steady_s) < 1e-12);
    assert_true(fabs(rb.energy_per_token_j / ra.energy_per_token_j - 1) < 1e-12);
    assert_true(fabs(rb.avg_batch - 4) < 1e-12 && fabs(rb.power_w / (2 * ra.power_w) - 1) < 1e-12);
    wl_serve_sim_free(a);
    wl_serve_sim_free(b);
    wl_serve_requests_free(r4);
    wl_serve_requests_free(r8);
    wl_core_model moe = model_of("qwen3-30b-a3b");
    wl_serve_sim *c = NULL;
    assert_int_not_equal(wl_serve_sim_create(&g, &moe, WL_DT_BF16, &e2, &c, &err), WL_OK);
    assert_string_equal(err.field, "dp");
    assert_null(c);
}

/* The cache budget as vLLM 0.11 profiles it: the peak is the larger of a
 * forward's activations at max_num_batched_tokens and the dummy sampler's
 * sort over max_num_seqs rows of logits, 38 bytes each. Llama 3 8B's
 * vocabulary is 128256: at 8 rows the sort takes 39 MB, under the
 * forward's, at 768 it takes 768 x 128256 x 38 = 3,743,023,104 bytes; the
 * cache shrinks by that less the forward's peak, over 2 x 32 layers x 8
 * KV heads x 128 x 2 bytes = 131072 bytes a token. */
static void test_cache_budget(void **state)
{
    (void)state;
    wl_core_gpu g = gpu_of("h100-sxm-80gb");
    wl_core_model m = model_of("llama-3-8b");
    wl_error err = {0};
    wl_core_shape sh = {.batch = 1, .seq = 8192, .dtype = WL_DT_BF16, .attention = WL_ATTN_FLASH,
                        .mode = WL_MODE_DECODE, .gen = 1, .launch = WL_LAUNCH_GRAPHS,
                        .impl = WL_IMPL_FUSED};
    wl_core_memory mem;
    assert_int_equal(wl_core_memory_estimate(&m, &sh, &mem, &err), WL_OK);
    long long kv[2];
    const long long seqs[2] = {8, 768};
    for (int i = 0; i < 2; i++) {
        wl_serve_engine e = {.max_num_seqs = seqs[i]};
        wl_serve_sim *s = NULL;
        assert_int_equal(wl_serve_sim_create(&g, &m, WL_DT_BF16, &e, &s, &err), WL_OK);
        kv[i] = wl_serve_sim_kv_tokens(s);
        wl_serve_sim_free(s);
    }
    double want = (3743023104.0 - mem.activations_gb * 1e9) / 131072.0;
    assert_true(fabs((double)(kv[0] - kv[1]) - want) <= 32);
    /* and at 8 rows the budget is what the forward leaves */
    double free_gb = 0.9 * g.mem_capacity_gb - mem.weights_gb - mem.activations_gb - mem.workspace_gb;
    assert_true(fabs((double)kv[0] - free_gb * 1e9 / 131072.0) <= 32);
}

/* The served model's answers: scaled by one factor to a mean, whole, 1 to
 * the workload's cap (lm-arena-chat: 4096); or drawn from a histogram,
 * a bin by its count and a length uniform in it. Edges {0, 10, 20} and
 * counts {1, 3}: three quarters in the second bin. Rounded to whole
 * tokens, at least 1: the first bin's mean is 5.05 (a length under 0.5
 * becomes 1), the second's 15, so 0.25 x 5.05 + 0.75 x 15 = 12.5125; a
 * length over 10 comes from the second bin only, past 10.5: 0.75 x 0.95. */
static void test_output_lengths(void **state)
{
    (void)state;
    wl_error err = {0};
    wl_serve_requests *r = NULL;
    assert_int_equal(wl_serve_requests_preset("lm-arena-chat", 1024, 3, &r, &err), WL_OK);
    double p, o;
    assert_int_equal(wl_serve_requests_output_mean(r, 200, "t", &err), WL_OK);
    wl_serve_requests_means(r, &p, &o);
    assert_true(fabs(o - 200) < 0.5);
    assert_int_equal(wl_serve_requests_output_mean(r, 4096, "t", &err), WL_OK);
    wl_serve_requests_means(r, &p, &o);
    assert_true(fabs(o - 4096) < 1e-9); /* every answer at the cap */
    assert_int_not_equal(wl_serve_requests_output_mean(r, 4097, "t", &err), WL_OK);
    assert_string_equal(err.field, "output_mean_tokens");
    wl_serve_requests_free(r);

    assert_int_equal(wl_serve_requests_fixed(40000, 100, 5, &r, &err), WL_OK);
    const double edges[] = {0, 10, 20}, counts[] = {1, 3};
    assert_int_equal(wl_serve_requests_output_hist(r, edges, counts, 2, 9, "t", &err), WL_OK);
    long long in2 = 0, lo = 1 << 30, hi = 0;
    for (size_t i = 0; i < 40000; i++) {
        long long a, b;
        wl_serve_requests_get(r, i, &a, &b);
        in2 += b > 10;
        lo = b < lo ? b : lo;
        hi = b > hi ? b : hi;
    }
    wl_serve_requests_means(r, &p, &o);
    assert_true(fabs(o - 12.5125) < 0.1);
    assert_true(fabs((double)in2 / 40000 - 0.7125) < 0.01);
    assert_true(lo >= 1 && hi <= 20);
    const double bad[] = {0, 10, 5};
    assert_int_not_equal(wl_serve_requests_output_hist(r, bad, counts, 2, 9, "t", &err), WL_OK);
    assert_string_equal(err.field, "output_tokens");
    const double none[] = {0, 0};
    assert_int_not_equal(wl_serve_requests_output_hist(r, edges, none, 2, 9, "t", &err), WL_OK);
    wl_serve_requests_free(r);
}

/* A repetition penalty runs vLLM's penalty kernels before the sampler: two
 * bin counts with their masks, the repetition kernel, the frequency and
 * presence penalties (nine kernels over rows x vocabulary), so a step costs
 * more, and more with more rows. */
static void test_penalty_kernels(void **state)
{
    (void)state;
    wl_core_gpu g = gpu_of("h100-sxm-80gb");
    wl_core_model m = model_of("llama-3-8b");
    wl_core_shape sh = {.batch = 1, .seq = 1, .dtype = WL_DT_BF16, .attention = WL_ATTN_FLASH,
                        .mode = WL_MODE_DECODE, .gen = 2, .launch = WL_LAUNCH_GRAPHS,
                        .impl = WL_IMPL_FUSED};
    double extra[2];
    const long long rows[2] = {64, 256};
    for (int i = 0; i < 2; i++) {
        size_t nk[2];
        double t[2];
        for (int pen = 0; pen < 2; pen++) {
            wl_core_serve_step st = {.decode = rows[i], .context = 500, .padded = rows[i],
                                     .sampled = rows[i], .seqs = rows[i], .graph = 1,
                                     .sampler = WL_SAMPLER_SORT, .penalties = pen};
            wl_core_workload *wl = NULL;
            wl_error err = {0};
            assert_int_equal(wl_core_build_serve_step(&m, &sh, &st, &wl, &err), WL_OK);
            nk[pen] = wl_core_workload_count(wl);
            wl_core_op op = {.sm_clock_mhz = 1980};
            wl_core_result res;
            assert_int_equal(wl_core_predict(&g, wl, &op, &res), WL_OK);
            t[pen] = res.time_ms;
            wl_core_workload_free(wl);
        }
        assert_int_equal(nk[1] - nk[0], 9);
        extra[i] = t[1] - t[0];
        assert_true(extra[i] > 0);
    }
    /* about 85 bytes a logit: at 256 rows 2.8 GB, most of a millisecond */
    assert_true(extra[1] > 3 * extra[0]);
    assert_true(extra[1] > 0.5 && extra[1] < 2.0);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void collect(void *user, const char *line)
{
    char *buf = user;
    size_t n = strlen(buf);
    snprintf(buf + n, 4096 - n, "%s\n", line);
}

/* Rows of the ML.ENERGY leaderboard run as the benchmark ran them: a
 * one-GPU lm-arena-chat row is the serve run of its settings (async
 * scheduling, 8192 batched tokens, its request count, its answers drawn
 * from its histogram), scored; a tensor-parallel row and another task are
 * said, not modelled. */
static void test_leaderboard_rows(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/lb.csv", test_dir());
    write_file(path,
               "# a comment line, as the shared files have\n"
               "task,model_id,gpu_model,num_gpus,tensor_parallel,expert_parallel,data_parallel,"
               "max_num_seqs,avg_batch_size,median_itl_ms,p90_itl_ms,avg_power_watts,"
               "energy_per_token_joules,output_throughput_tokens_per_sec,weight_precision,"
               "n_requests_in_hist,out_len_hist_counts,out_len_hist_edges\n"
               "lm-arena-chat,meta-llama/Llama-3.1-8B-Instruct,H100,1,1,1,1,16,15.9,8,9,500,0.25,"
               "2000,bfloat16,200,10 30 10,0 100 300 600\n"
               "lm-arena-chat,meta-llama/Llama-3.1-8B-Instruct,H100,2,1,2,2,16,15.9,8,9,500,0.25,"
               "2000,bfloat16,200,,\n"
               "gpqa,meta-llama/Llama-3.1-8B-Instruct,H100,1,1,1,1,16,15.9,8,9,500,0.25,2000,"
               "bfloat16,200,,\n");
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    size_t nc;
    const wl_results_col *cols = wl_serve_validate_cols(&nc);
    wl_results_writer *w = NULL;
    assert_int_equal(wl_results_writer_create(f, WL_FMT_CSV, cols, nc, &w), WL_OK);
    wl_results_writer_header(w);
    char notes[4096] = "";
    wl_serve_validation v;
    wl_error err = {0};
    assert_true(wl_serve_is_measurement(path));
    assert_int_equal(wl_serve_validate(path, NULL, NULL, w, collect, notes, &v, &err), WL_OK);
    wl_results_writer_finish(w);
    fclose(f);
    assert_int_equal(v.rows, 3);
    assert_int_equal(v.scored, 1);
    assert_non_null(strstr(notes, "lb.csv:4: data_parallel"));
    assert_non_null(strstr(notes, "wide EP"));
    assert_non_null(strstr(notes, "lb.csv:5: task"));
    /* the same run through serve's own options */
    wl_serve_job *j = wl_serve_job_create();
    const char *kv[][2] = {{"gpu", "h100-sxm-80gb"}, {"model", "llama-3-8b"},
                           {"max_num_seqs", "16"}, {"requests", "200"},
                           {"max_num_batched_tokens", "8192"}, {"async_scheduling", "on"}};
    for (size_t i = 0; i < sizeof kv / sizeof *kv; i++)
        assert_int_equal(wl_serve_job_set(j, kv[i][0], kv[i][1], "test", &err), WL_OK);
    const double edges[] = {0, 100, 300, 600}, counts[] = {10, 30, 10};
    assert_int_equal(wl_serve_job_output_hist(j, edges, counts, 3, &err), WL_OK);
    wl_serve_result res;
    assert_int_equal(wl_serve_job_result(j, &res, &err), WL_OK);
    wl_serve_job_free(j);
    char want[64];
    snprintf(want, sizeof want, ",%.5f,", res.energy_per_token_j);
    const char *row = strchr(buf, '\n') + 1;
    assert_non_null(strstr(row, want));
    assert_true(!strncmp(row, "h100-sxm-80gb,meta-llama/Llama-3.1-8B-Instruct,", 47));
    free(buf);
}

static double optimum(const char *itl, int *rows)
{
    wl_serve_job *j = wl_serve_job_create();
    wl_error err = {0};
    const char *kv[][2] = {{"requests", "128"}, {"max_num_seqs", "32"}, {"optimize", "energy"},
                           {"clock", "990,1200,1500,1755,1980"}, {"max_itl_ms", itl}};
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(wl_serve_job_set(j, kv[i][0], kv[i][1], "test", &err), WL_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    size_t nc;
    const wl_results_col *cols = wl_serve_cols(&nc);
    wl_results_writer *w = NULL;
    assert_int_equal(wl_results_writer_create(f, WL_FMT_CSV, cols, nc, &w), WL_OK);
    wl_results_writer_header(w);
    assert_int_equal(wl_serve_job_run(j, w, NULL, NULL, &err), WL_OK);
    wl_results_writer_finish(w);
    fclose(f);
    wl_serve_job_free(j);
    /* the header, then at most one row */
    *rows = 0;
    double e = NAN;
    char *line = strchr(buf, '\n');
    if (line && line[1]) {
        *rows = 1;
        /* run_energy_per_request_j, found by name in the header */
        int at = 0;
        for (char *h = buf; h < line && strncmp(h, "run_energy_per_request_j,", 25); at++)
            h = strchr(h, ',') + 1;
        char *p = line + 1;
        for (int c = 0; c < at; c++)
            p = strchr(p, ',') + 1;
        e = strtod(p, NULL);
    }
    free(buf);
    return e;
}

/* A tighter SLO never lowers the energy of the optimum; one no point meets
 * gives no row. */
static void test_tighter_slo(void **state)
{
    (void)state;
    int n1, n2, n3;
    double loose = optimum("1000", &n1), tight = optimum("9", &n2);
    optimum("0.01", &n3);
    assert_int_equal(n1, 1);
    if (n2)
        assert_true(tight >= loose);
    assert_int_equal(n3, 0);
}

static void test_bad_input(void **state)
{
    (void)state;
    wl_error err = {0};
    wl_serve_requests *r = NULL;
    char path[600];
    snprintf(path, sizeof path, "%s/r.csv", test_dir());
    write_file(path, "prompt_tokens,output_tokens\n100,20\n100,2.5\n");
    assert_int_not_equal(wl_serve_requests_csv(path, 0, &r, &err), WL_OK);
    assert_int_equal(err.line, 3);
    assert_string_equal(err.field, "output_tokens");
    write_file(path, "prompt_tokens,out\n100,20\n");
    assert_int_not_equal(wl_serve_requests_csv(path, 0, &r, &err), WL_OK);
    assert_string_equal(err.field, "output_tokens");
    write_file(path, "prompt_tokens,output_tokens\n");
    assert_int_not_equal(wl_serve_requests_csv(path, 0, &r, &err), WL_OK);
    write_file(path, "prompt_tokens,output_tokens\n100,nan\n");
    assert_int_not_equal(wl_serve_requests_csv(path, 0, &r, &err), WL_OK);
    assert_int_not_equal(wl_serve_requests_preset("lm-arena-chatt", 0, 1, &r, &err), WL_OK);
    assert_non_null(strstr(err.text, "lm-arena-chat"));
    snprintf(path, sizeof path, "%s/w.ini", test_dir());
    write_file(path, "[workload]\nid = x\nturns_mean = 0.5\n");
    assert_int_not_equal(wl_serve_requests_preset(path, 0, 1, &r, &err), WL_OK);
    assert_int_equal(err.line, 3);
    /* a model whose weights leave no cache */
    wl_core_gpu g = gpu_of("h100-sxm-80gb");
    wl_core_model big = model_of("llama-3-70b");
    wl_serve_engine e = {0};
    wl_serve_sim *s = NULL;
    assert_int_not_equal(wl_serve_sim_create(&g, &big, WL_DT_BF16, &e, &s, &err), WL_OK);
    assert_non_null(strstr(err.text, "does not fit"));
    /* a request longer than the cache */
    wl_core_model m = model_of("llama-3-8b");
    e.gpu_memory_utilization = 0.25;
    assert_int_equal(wl_serve_sim_create(&g, &m, WL_DT_BF16, &e, &s, &err), WL_OK);
    assert_int_equal(wl_serve_requests_fixed(2, 100000, 100, &r, &err), WL_OK);
    assert_int_not_equal(wl_serve_sim_check(s, r, &err), WL_OK);
    assert_non_null(strstr(err.text, "longer than the KV cache"));
    wl_serve_requests_free(r);
    wl_serve_sim_free(s);
    /* a request past a learned position table (GPT-2's 1024): vLLM refuses it */
    wl_core_model g2 = model_of("gpt2");
    e.gpu_memory_utilization = 0.9;
    assert_int_equal(wl_serve_sim_create(&g, &g2, WL_DT_BF16, &e, &s, &err), WL_OK);
    assert_int_equal(wl_serve_requests_fixed(2, 1000, 24, &r, &err), WL_OK);
    assert_int_equal(wl_serve_sim_check(s, r, &err), WL_OK);
    wl_serve_requests_free(r);
    assert_int_equal(wl_serve_requests_fixed(2, 1000, 25, &r, &err), WL_OK);
    assert_int_not_equal(wl_serve_sim_check(s, r, &err), WL_OK);
    assert_non_null(strstr(err.text, "1024 learned positions"));
    wl_serve_requests_free(r);
    wl_serve_sim_free(s);
    /* an unknown option, with a suggestion */
    wl_serve_job *j = wl_serve_job_create();
    assert_int_not_equal(wl_serve_job_set(j, "max_num_seq", "4", "test", &err), WL_OK);
    assert_non_null(strstr(err.text, "max_num_seqs"));
    wl_serve_job_free(j);
}

/* The built-in mix: its means are the preset's construction (turns 1.3:
 * 0.3 earlier turns a request; template 29, 5 a message, users 94.9,
 * history 269): 29 + 5 (2 x 1.3 - 1) + 1.3 x 94.9 + 0.3 x 269 = 240, and
 * outputs ~400 (cut at 4096). */
static void test_arena_mix(void **state)
{
    (void)state;
    wl_error err = {0};
    wl_serve_requests *r = NULL;
    assert_int_equal(wl_serve_requests_preset("lm-arena-chat", 200000, 3, &r, &err), WL_OK);
    double p, o;
    wl_serve_requests_means(r, &p, &o);
    assert_true(fabs(p / 240.0 - 1) < 0.05);
    assert_true(fabs(o / 400.0 - 1) < 0.02);
    wl_serve_requests_free(r);
}

/* The sampler's DRAM traffic over n = rows x vocab fp32 logits, counted by
 * hand from vLLM's sampler (v1/sample/sampler.py, ops/topk_topp_sampler.py)
 * and ATen's segmented sort, in bytes an element beyond the greedy path's
 * cast and argmax: the temperature (4 in, 4 out); the sort's (row, index)
 * keys (8 out), digit histograms (4 in), four digit passes and the rows'
 * regrouping (5 x (12 in + 12 out)); softmax of the sorted rows (12 + 4:
 * a row longer than a block's shared memory is read three times, ATen's
 * cunn_SoftMaxForward), cumsum (4 + 4), the <= 1 - p mask (4 + 4),
 * masked_fill_ (8 + 4), the scatter's clone (4 + 4) and scatter (12 + 4);
 * then random_sample: softmax (12 + 4), exponential_ (4 out), probs / q
 * (8 + 4). 240 bytes with the sort, 8 + 16 + 4 + 12 = 40 with the
 * temperature alone. */
static double elementwise_bytes(const wl_core_model *m, const wl_core_gpu *g, wl_core_sampler smp)
{
    wl_error err = {0};
    wl_core_shape sh = {.batch = 1, .seq = 1, .dtype = WL_DT_BF16, .attention = WL_ATTN_FLASH,
                        .launch = WL_LAUNCH_GRAPHS, .impl = WL_IMPL_FUSED, .mode = WL_MODE_DECODE,
                        .gen = 2};
    wl_core_serve_step st = {.decode = 128, .context = 512, .padded = 128, .sampled = 128,
                             .seqs = 128, .graph = 1, .sampler = smp};
    wl_core_workload *wl = NULL;
    assert_int_equal(wl_core_build_serve_step(m, &sh, &st, &wl, &err), WL_OK);
    wl_core_evaluator *ev = NULL;
    assert_int_equal(wl_core_evaluator_create(g, wl, wl_core_latency_tiled, &ev), WL_OK);
    wl_core_result r;
    wl_core_op op = {.sm_clock_mhz = 1980};
    assert_int_equal(wl_core_evaluator_run(ev, &op, &r), WL_OK);
    double b = r.cls[WL_CLASS_ELEMENTWISE].dram_bytes + r.cls[WL_CLASS_SOFTMAX].dram_bytes +
               r.cls[WL_CLASS_NORM].dram_bytes + r.cls[WL_CLASS_OTHER].dram_bytes;
    wl_core_evaluator_free(ev);
    wl_core_workload_free(wl);
    return b;
}

static void test_sampler_traffic(void **state)
{
    (void)state;
    wl_core_gpu g = gpu_of("h100-sxm-80gb");
    wl_core_model m = model_of("llama-3-8b");
    double n = 128.0 * (double)m.vocab_size;
    double greedy = elementwise_bytes(&m, &g, WL_SAMPLER_GREEDY);
    double sort = elementwise_bytes(&m, &g, WL_SAMPLER_SORT) - greedy;
    double temp = elementwise_bytes(&m, &g, WL_SAMPLER_RANDOM) - greedy;
    assert_true(fabs(sort / (240 * n) - 1) < 0.05);
    assert_true(fabs(temp / (40 * n) - 1) < 0.05);
    /* and the step: the sort costs time at 128 rows, FlashInfer less */
    wl_serve_engine e = {.max_num_seqs = 128};
    wl_serve_result rg = run_fixed(&g, &m, 256, 256, 64, e, 1980);
    e.sampler = WL_SAMPLER_FLASHINFER;
    wl_serve_result rf = run_fixed(&g, &m, 256, 256, 64, e, 1980);
    e.sampler = WL_SAMPLER_SORT;
    wl_serve_result rs = run_fixed(&g, &m, 256, 256, 64, e, 1980);
    assert_true(rg.median_itl_ms < rf.median_itl_ms && rf.median_itl_ms < rs.median_itl_ms);
    assert_true(rg.energy_per_token_j < rs.energy_per_token_j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_capture_sizes),     cmocka_unit_test(test_one_seq_equals_predict),
        cmocka_unit_test(test_more_work_more_energy), cmocka_unit_test(test_caps_and_neighbours),
        cmocka_unit_test(test_preemption),        cmocka_unit_test(test_tighter_slo),
        cmocka_unit_test(test_bad_input),         cmocka_unit_test(test_arena_mix),
        cmocka_unit_test(test_sampler_traffic),   cmocka_unit_test(test_steady_window),
        cmocka_unit_test(test_cache_budget),      cmocka_unit_test(test_output_lengths),
        cmocka_unit_test(test_penalty_kernels),   cmocka_unit_test(test_leaderboard_rows),
        cmocka_unit_test(test_tensor_parallel),   cmocka_unit_test(test_moe_experts),
        cmocka_unit_test(test_sliding_window),    cmocka_unit_test(test_weights_once),
        cmocka_unit_test(test_data_parallel),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
