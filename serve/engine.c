/* The scheduler: vLLM V1's, step by step (vllm/v1/core/sched/scheduler.py).
 *
 * Each step has a budget of max_num_batched_tokens. The running requests
 * come first, in the order they were admitted: a decoding request takes one
 * token, a request still in its prompt takes what is left of it up to the
 * budget (chunked prefill). Each needs KV-cache blocks for the tokens it
 * will hold; when the free blocks run out, the request admitted last is
 * preempted: its blocks are freed and it goes back to the front of the
 * waiting queue, to recompute its prompt and the tokens it had generated
 * (vLLM's recompute preemption). When no request was preempted in the
 * step, waiting requests are admitted in arrival order while the sequence
 * limit, the budget and the free blocks allow. Then the step runs: its
 * time and energy come from steps.c; a request whose computed tokens reach
 * its length samples a token (its first one gives its time to first
 * token), and one that has all its output tokens leaves and frees its
 * blocks. With synchronous scheduling the host's step (read the tokens
 * back, update the requests, schedule, prepare the inputs) sits between
 * two steps on the GPU (it is in the step's kernels); with asynchronous
 * scheduling it overlaps the GPU's step, which then lasts the longer of
 * the two. */
#include "serve_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void wl_serve_engine_defaults(wl_serve_engine *e)
{
    /* vLLM 0.11's defaults on a GPU with 70 GB or more, for an OpenAI API
     * server (engine/arg_utils.py: max_num_seqs 256 and 8192 batched
     * tokens on such a GPU; block 16; graphs up to 512) */
    if (e->max_num_seqs <= 0)
        e->max_num_seqs = 256;
    if (e->max_num_batched_tokens <= 0)
        e->max_num_batched_tokens = 8192;
    if (!(e->gpu_memory_utilization > 0))
        e->gpu_memory_utilization = 0.9;
    if (e->block_size <= 0)
        e->block_size = 16;
    if (e->max_capture_size <= 0)
        e->max_capture_size = 512;
}

struct wl_serve_sim {
    wl_core_gpu gpu;
    wl_core_model model;
    wl_dtype dtype;
    wl_serve_engine engine;
    wl_serve_i_costs *costs;
    long long kv_blocks;
    /* the hybrid allocator's groups (cache_blocks): a request holds
     * groups_full blocks per block of its tokens and groups_local per
     * block of its last sliding_window tokens (window_blocks at most) */
    long long groups_full, groups_local, window_blocks;
    void (*log)(void *user, const wl_serve_step_rec *rec);
    void *log_user;
};

void wl_serve_sim_log(wl_serve_sim *s, void (*log)(void *user, const wl_serve_step_rec *rec),
                      void *user)
{
    s->log = log;
    s->log_user = user;
}

/* The cache vLLM allocates (vLLM 0.11, v1/worker/gpu_worker.py
 * determine_available_memory): gpu_memory_utilization of the GPU's memory,
 * less the weights (with the LM head), the peak the profiling run reaches
 * (torch's peak allocated bytes over profile_run) and what else was
 * allocated outside torch meanwhile; in blocks of block_size tokens.
 *
 * The profiling run (v1/worker/gpu_model_runner.py profile_run) is a
 * forward over max_num_batched_tokens tokens split over max_num_seqs dummy
 * requests, then the sampler on one row of logits a request
 * (_dummy_sampler_run). Its dummy requests ask for top-k (vocabulary - 1)
 * and top-p (0.9) whatever the served requests will, so the sampler sorts
 * every row (ops/topk_topp_sampler.py apply_top_k_top_p). The forward's
 * activations are freed by then: the peak is the larger of the two. At the
 * sort, per logit: the model's bf16 logits (2 bytes) and their fp32 copy
 * (4), the sorted values and indices (4 + 8), the index input the sort
 * pairs with the keys (8) and the radix sort's alternate key and value
 * buffers (4 + 8): 38 bytes. At 768 sequences and Llama 3's 128256-token
 * vocabulary that is 3.7 GB, four times the forward's peak at 8192 tokens,
 * which is why a larger max_num_seqs leaves a smaller cache ("CUDA out of
 * memory occurred when warming up sampler with N dummy requests. Please try
 * lowering max_num_seqs", the same runner).
 *
 * With tensor parallelism t each GPU profiles its own shard (the same
 * sizing on every rank; vLLM takes the smallest): the weights and the
 * forward's peak are about 1/t of the model's (the norms, replicated, are
 * a few MB), the sampler's sort the whole vocabulary's (every rank samples
 * the gathered logits), and a token's KV its rank's key/value heads
 * (kv_heads / t, or one when they are replicated).
 *
 * The CUDA context (workspace_gb) is counted against the budget here,
 * though vLLM's baseline holds it: the budget's base is the total CUDA
 * reports, which is below nvidia-smi's (mem_capacity_gb) by what the driver
 * reserves, about as much (H100 SXM: 79.19 GiB against 81559 MiB, 0.49 GB;
 * PyTorch's out-of-memory messages give the first). */
#define SAMPLER_PROFILE_BYTES 38.0
static int cache_blocks(wl_serve_sim *s, wl_error *err)
{
    const wl_core_model *m = &s->model;
    wl_core_shape sh = {.batch = 1, .seq = s->engine.max_num_batched_tokens, .dtype = s->dtype,
                        .attention = WL_ATTN_FLASH, .mode = WL_MODE_DECODE, .gen = 1,
                        .launch = WL_LAUNCH_GRAPHS, .impl = WL_IMPL_FUSED};
    if (sh.seq > WL_MAX_SEQ - 1)
        sh.seq = WL_MAX_SEQ - 1;
    /* a MoE: the weights from its parameters (memory_estimate is one
     * GPU's dense model); the forward's peak from its dense twin whose MLP
     * is the experts_per_token experts a token passes through (the fused
     * MoE's intermediate caches, T x k x 2 d_ff_expert) */
    wl_core_model twin = *m;
    /* latent attention: the twin's attention is its heads' (the forward's
     * peak an estimate), its cache below the latent's */
    twin.q_lora_rank = twin.kv_lora_rank = 0;
    twin.qk_nope_head_dim = twin.qk_rope_head_dim = twin.v_head_dim = 0;
    if (wl_core_model_is_moe(m)) {
        twin.experts = 0;
        twin.d_ff = (m->d_ff_expert > 0 ? m->d_ff_expert : m->d_ff) *
                    (m->experts_per_token > 0 ? m->experts_per_token : 1);
        twin.shared_experts = twin.dense_layers = twin.experts_per_token = 0;
        twin.d_ff_expert = twin.router_bias = twin.route_nodes = twin.moe_every = 0;
    }
    wl_core_memory mem;
    int rc = wl_core_memory_estimate(&twin, &sh, &mem, err);
    if (rc)
        return rc;
    /* a MoE's weights from its parameters; an 8-bit checkpoint's in 8 bits
     * but for its embedding and LM head, which stay bf16 */
    double eb = wl_dtype_bytes(s->dtype);
    if (wl_core_model_is_moe(m) || eb < 2) {
        double params, emb = (double)m->vocab_size * m->d_model * (m->untied_head ? 2 : 1);
        wl_core_model_params(m, &params);
        mem.weights_gb = (eb < 2 ? (params - emb) * eb + emb * 2 : params * eb) / 1e9;
    }
    double t = s->engine.tp > 1 ? s->engine.tp : 1;
    double kvh = m->kv_heads > 0 ? m->kv_heads : m->heads, hd = wl_core_model_head_dim(m);
    kvh = kvh >= t ? kvh / t : 1;
    /* the cache's dtype is vLLM's kv_cache_dtype "auto", the activations':
     * bf16 for an fp8 (W8A8) checkpoint */
    wl_dtype kdt = wl_core_serve_act_dtype(s->dtype);
    /* vLLM 0.11's hybrid KV-cache manager (v1/core/kv_cache_utils.py,
     * uniform page size): a model with full-attention and sliding-window
     * layers gets groups of g = min(full, local) layers, ceil(n / g) groups
     * of each kind, every group's blocks from one pool whose block holds g
     * layers' pages; a sliding-window group keeps a request's blocks over
     * its last window only (SlidingWindowManager: cdiv(W - 1, block) + 1
     * at most). One kind of layer: one group of them all, as before. */
    long long nl = 0;
    for (int l = 0; l < m->layers; l++)
        nl += wl_core_model_layer_local(m, l);
    long long nf = m->layers - nl, g = nf > 0 && nl > 0 ? (nf < nl ? nf : nl) : m->layers;
    long long bs = s->engine.block_size;
    s->groups_full = (nf + g - 1) / g;
    s->groups_local = (nl + g - 1) / g;
    s->window_blocks = nl > 0 ? (m->sliding_window - 1 + bs - 1) / bs + 1 : 0;
    /* a token's cache a layer: its rank's key and value heads, or with
     * latent attention the latent and the rotary key, whole on every rank
     * (vLLM's MLA cache is not split by heads) */
    double per_layer = wl_core_model_is_mla(m) ? (double)(m->kv_lora_rank + m->qk_rope_head_dim)
                                               : 2.0 * kvh * hd;
    double kv_gb_per_token = (double)g * per_layer * wl_dtype_bytes(kdt) / 1e9;
    double rows = (double)(s->engine.max_num_seqs < s->engine.max_num_batched_tokens
                               ? s->engine.max_num_seqs
                               : s->engine.max_num_batched_tokens);
    double sampler = rows * m->vocab_size * SAMPLER_PROFILE_BYTES / 1e9;
    double peak = fmax(mem.activations_gb / t, sampler);
    double used = mem.weights_gb / t + peak + mem.workspace_gb;
    double avail = s->engine.gpu_memory_utilization * s->gpu.mem_capacity_gb - used;
    if (!(s->gpu.mem_capacity_gb > 0)) {
        wl_error_set(err, s->gpu.id, 0, "mem_capacity_gb", "the GPU states no memory capacity");
        return WL_EINVAL;
    }
    double blocks = floor(avail / (kv_gb_per_token * (double)bs));
    if (!(blocks >= 1)) {
        wl_error_set(err, m->id, 0, "gpu_memory_utilization",
                     "%s does not fit %s for serving: %.1f GB of weights a GPU, %.1f GB of "
                     "activations and workspace leave no KV cache in %.2f x %.1f GB%s",
                     m->id, s->gpu.id, mem.weights_gb / t, peak + mem.workspace_gb,
                     s->engine.gpu_memory_utilization, s->gpu.mem_capacity_gb,
                     t > 1 ? "" : " (more GPUs: --tp)");
        return WL_EINVAL;
    }
    s->kv_blocks = (long long)fmin(blocks, 1e15);
    return WL_OK;
}

/* Whether the model splits tp ways: the builder's own rules, asked of one
 * decode step (so a bad --tp is refused before a run, by the rule the
 * steps use). */
static int tp_check(const wl_serve_sim *s, wl_error *err)
{
    wl_core_shape sh = wl_serve_i_step_shape(s->dtype);
    wl_core_serve_step st = {.decode = 1, .context = 1, .sampled = 1, .seqs = 1,
                             .tp = s->engine.tp};
    wl_core_workload *wl = NULL;
    int rc = wl_core_build_serve_step(&s->model, &sh, &st, &wl, err);
    wl_core_workload_free(wl);
    return rc;
}

int wl_serve_sim_create(const wl_core_gpu *gpu, const wl_core_model *model, wl_dtype dtype,
                        const wl_serve_engine *engine, wl_serve_sim **out, wl_error *err)
{
    *out = NULL;
    wl_serve_engine e = *engine;
    wl_serve_engine_defaults(&e);
    const char *why = NULL, *field = NULL;
    if (e.max_num_seqs > 1000000)
        why = "expected 1 to 1000000 sequences", field = "max_num_seqs";
    else if (e.max_num_batched_tokens > 1000000)
        why = "expected 1 to 1000000 tokens", field = "max_num_batched_tokens";
    else if (!(e.gpu_memory_utilization <= 1))
        why = "expected a share in (0, 1]", field = "gpu_memory_utilization";
    else if (e.block_size > 1024 || e.max_capture_size > 8192)
        why = "out of range", field = e.block_size > 1024 ? "block_size" : "max_capture_size";
    else if (!(e.rate_rps >= 0 && e.rate_rps <= 1e6))
        why = "expected a rate in [0, 1e6] requests/s", field = "rate";
    else if (e.tp < 0 || e.tp > 4096)
        why = "expected 1 to 4096 GPUs", field = "tp";
    else if (e.dp < 0 || e.dp > 4096)
        why = "expected 1 to 4096 engines", field = "dp";
    else if (e.dp > 1 && wl_core_model_is_moe(model))
        why = "data parallelism of a mixture of experts runs its MoE layers across the "
              "replicas in lockstep (vLLM's DP ranks share the experts' groups): not "
              "modelled; --dp is for dense models, --ep and --tp for these",
        field = "dp";
    else if (e.ep && (e.tp < 2 || !wl_core_model_is_moe(model)))
        why = e.tp < 2 ? "expert parallelism splits the experts over the --tp GPUs: give --tp"
                       : "expert parallelism needs a mixture-of-experts model",
        field = "ep";
    else if (e.tp > 1 && !e.system)
        why = "tensor parallelism needs a system preset for the GPUs' links (--system)",
        field = "tp";
    else if (model->vocab_size < 1 || wl_core_model_is_vision(model) || model->style == WL_STYLE_BERT)
        why = "serving needs a decoder with an LM head (gpt2, opt, llama styles)", field = "model";
    if (why) {
        wl_error_set(err, field[0] == 'm' && !strcmp(field, "model") ? model->id : "serve", 0, field,
                     "%s", why);
        return WL_EINVAL;
    }
    wl_serve_sim *s = calloc(1, sizeof *s);
    if (!s) {
        wl_error_set(err, "serve", 0, "", "out of memory");
        return WL_ENOMEM;
    }
    s->gpu = *gpu;
    s->model = *model;
    s->dtype = dtype;
    s->engine = e;
    int rc = e.tp > 1 ? tp_check(s, err) : WL_OK;
    if (!rc)
        rc = cache_blocks(s, err);
    if (!rc && wl_serve_i_costs_create(&s->gpu, &s->model, dtype, &s->engine, &s->costs)) {
        wl_error_set(err, "serve", 0, "", "out of memory");
        rc = WL_ENOMEM;
    }
    if (rc) {
        wl_serve_sim_free(s);
        return rc;
    }
    *out = s;
    return WL_OK;
}

void wl_serve_sim_free(wl_serve_sim *s)
{
    if (!s)
        return;
    wl_serve_i_costs_free(s->costs);
    free(s);
}

/* Blocks of the pool in tokens of every group: a request of this many
 * holds them when its window groups hold as many blocks as its full ones. */
static long long pool_tokens(const wl_serve_sim *s, long long blocks)
{
    return blocks / (s->groups_full + s->groups_local) * s->engine.block_size;
}

long long wl_serve_sim_kv_tokens(const wl_serve_sim *s)
{
    return pool_tokens(s, s->kv_blocks);
}

/* The pool's blocks a request of `tokens` holds, over its groups. */
static long long req_blocks(const wl_serve_sim *s, long long tokens)
{
    long long bs = s->engine.block_size, n = (tokens + bs - 1) / bs;
    return s->groups_full * n + s->groups_local * (n < s->window_blocks ? n : s->window_blocks);
}

int wl_serve_sim_check(const wl_serve_sim *s, const wl_serve_requests *r, wl_error *err)
{
    long long longest = wl_serve_requests_longest(r);
    const wl_core_model *m = &s->model;
    /* vLLM's max_model_len is at most a learned position table's rows: it
     * refuses a longer request */
    if (m->positions == WL_POS_LEARNED && m->max_positions > 0 && longest > m->max_positions) {
        wl_error_set(err, wl_serve_requests_name(r), 0, "output_tokens",
                     "a request of %lld tokens (prompt and output) is longer than %s's %d "
                     "learned positions, which bound vLLM's max_model_len",
                     longest, m->id, m->max_positions);
        return WL_EINVAL;
    }
    /* The simulation keeps time in seconds in a double: arrivals spread
     * past 10^9 s (32 years) leave it under a microsecond's resolution,
     * and the milliseconds between a request's tokens are lost (issue
     * 77: --rate 1e-14 gave a median ITL of 0.001 ms that "met" a 100 ms
     * SLO; 2.3e-308 left columns empty). The expected span of n Poisson
     * arrivals is (n - 1) / rate. */
    size_t n = wl_serve_requests_count(r);
    double rate = s->engine.rate_rps;
    if (rate > 0 && n > 1 && !((double)(n - 1) / rate <= 1e9)) {
        wl_error_set(err, "--rate", 0, "rate",
                     "%g requests/s spreads %zu requests over about %.3g s: past 10^9 s the "
                     "simulation's clock cannot resolve the milliseconds between tokens; a "
                     "higher --rate or fewer --requests", rate, n, (double)(n - 1) / rate);
        return WL_EINVAL;
    }
    if (req_blocks(s, longest) > s->kv_blocks) {
        wl_error_set(err, wl_serve_requests_name(r), 0, "output_tokens",
                     "a request of %lld tokens (prompt and output) is longer than the KV cache "
                     "holds on %s (%lld tokens): raise --gpu-memory-utilization or shorten it",
                     longest, s->gpu.id, wl_serve_sim_kv_tokens(s));
        return WL_EINVAL;
    }
    return WL_OK;
}

/* ---- latency percentiles: a histogram of 0.05% bins from 1 us to 10^5 s ---------- */

#define H_BASE 1e-6
#define H_STEP 0.0005
#define H_BINS 50000

static void h_add(double *h, double x, double w)
{
    long i = x > H_BASE ? (long)(log(x / H_BASE) / H_STEP) : 0;
    if (i >= H_BINS)
        i = H_BINS - 1;
    h[i] += w;
}

static double h_quantile(const double *h, double q)
{
    double tot = 0;
    for (long i = 0; i < H_BINS; i++)
        tot += h[i];
    if (!(tot > 0))
        return NAN;
    double want = q * tot, acc = 0;
    for (long i = 0; i < H_BINS; i++) {
        acc += h[i];
        if (acc >= want && h[i] > 0)
            return H_BASE * exp(((double)i + 0.5) * H_STEP);
    }
    return NAN;
}

/* The q-quantile of sorted values (linear between order statistics). */
static double quantile(const double *v, size_t n, double q)
{
    if (!n)
        return NAN;
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    double f = pos - (double)i;
    return i + 1 < n ? v[i] + f * (v[i + 1] - v[i]) : v[i];
}

/* ---- the run ----------------------------------------------------------------------------
 * A run is dp engines (vLLM's data-parallel replicas, one when dp is 1),
 * each with its own queue, running requests, KV cache and clock, sharing
 * the requests (round robin by arrival: with every request sent at once
 * that is what the least-loaded balancer of vLLM's DP front end does) and
 * the client's clock. Each engine plans its next step from its own state
 * (schedule, cost); the planned step that ends first is committed (tokens
 * sampled, requests finished), so the window and the latencies see every
 * engine's events in time order. With dp 1 this is the one engine's loop. */

typedef struct {
    long long prompt, output, computed, gen, blocks;
    double arrival, last;
} req;

typedef struct {
    size_t *arr, narr, next; /* its requests in arrival order, the next to arrive */
    size_t *wait;            /* a deque: [head, tail) of 2 narr + 1 slots, the
                                preempted pushed in front */
    size_t head, tail;
    size_t *run, nrun;
    long long *sched;
    long long free_blocks;
    double t;                /* where its next step starts */
    int pending, idle, done; /* a planned record (an idle wait?), all finished */
    wl_serve_i_shape sh;
    wl_serve_i_cost cost;
    double dt, de;           /* the planned record's time and energy (all its GPUs) */
    long long running, held;
} engine;

typedef struct {
    req *q;
    engine *e;
    size_t ne;
    double *itl, *ttft;
    size_t nttft;
    long long npre; /* preemptions */
} state;

static void state_free(state *S)
{
    for (size_t i = 0; S->e && i < S->ne; i++) {
        free(S->e[i].arr);
        free(S->e[i].wait);
        free(S->e[i].run);
        free(S->e[i].sched);
    }
    free(S->e);
    free(S->q);
    free(S->itl);
    free(S->ttft);
}

/* The run's operating points, resolved once, and its GPUs' idle draw. */
typedef struct {
    size_t prefill_slot, decode_slot;
    double idle_w, prefill_idle_w, gpus;
} run_ops;

/* Plans engine E's next record from its own state: an idle wait for its
 * next arrival, or a step (vLLM's scheduler, engine.c's header) and its
 * cost; marks it done when all its requests have finished. */
static int plan(wl_serve_sim *s, state *S, engine *E, const run_ops *o,
                const wl_serve_requests *r, wl_error *err)
{
    const wl_serve_engine *e = &s->engine;
    while (E->next < E->narr && S->q[E->arr[E->next]].arrival <= E->t)
        E->wait[E->tail++] = E->arr[E->next++];
    if (E->nrun == 0 && E->head == E->tail) {
        if (E->next == E->narr) {
            E->done = 1;
            return WL_OK;
        }
        E->dt = S->q[E->arr[E->next]].arrival - E->t; /* idle until the next arrival */
        E->de = o->idle_w * E->dt;
        E->idle = 1;
        E->pending = 1;
        E->running = 0;
        E->held = pool_tokens(s, s->kv_blocks - E->free_blocks);
        return WL_OK;
    }
    long long budget = e->max_num_batched_tokens;
    wl_serve_i_shape sh = {0};
    double ctx_sum = 0, cc_sum = 0;
    int preempted = 0;
    for (size_t j = 0; j < E->nrun; j++) {
        req *q = &S->q[E->run[j]];
        long long need = q->prompt + q->gen - q->computed;
        long long take = need < budget ? need : budget;
        E->sched[j] = 0;
        if (take <= 0)
            continue;
        long long want = req_blocks(s, q->computed + take) - q->blocks;
        int self = 0;
        while (want > E->free_blocks) {
            size_t v = E->run[--E->nrun]; /* the request admitted last */
            req *vq = &S->q[v];
            E->free_blocks += vq->blocks;
            vq->blocks = 0;
            vq->computed = 0;
            E->wait[--E->head] = v;
            S->npre++;
            preempted = 1;
            if (E->nrun == j) { /* it was this request itself */
                self = 1;
                break;
            }
        }
        if (self)
            break;
        E->free_blocks -= want;
        q->blocks += want;
        E->sched[j] = take;
        budget -= take;
        if (q->gen >= 1 && need == 1) {
            sh.decode++;
            ctx_sum += (double)(q->computed + 1);
        } else {
            sh.prefills++;
            sh.chunk += take;
            cc_sum += (double)take * (double)(q->computed + take);
            sh.finishing += q->computed + take == q->prompt + q->gen;
        }
    }
    while (!preempted && E->head < E->tail && E->nrun < (size_t)e->max_num_seqs && budget > 0) {
        req *q = &S->q[E->wait[E->head]];
        long long need = q->prompt + q->gen - q->computed;
        long long take = need < budget ? need : budget;
        long long want = req_blocks(s, take);
        if (want > E->free_blocks)
            break;
        E->free_blocks -= want;
        q->blocks = want;
        E->sched[E->nrun] = take;
        E->run[E->nrun++] = E->wait[E->head++];
        budget -= take;
        sh.prefills++;
        sh.chunk += take;
        cc_sum += (double)take * (double)take;
        sh.finishing += take == need;
    }
    if (sh.decode + sh.chunk == 0) {
        wl_error_set(err, wl_serve_requests_name(r), 0, "requests",
                     "the engine cannot schedule a step (KV cache of %lld tokens)",
                     wl_serve_sim_kv_tokens(s));
        return WL_EINVAL;
    }
    sh.context = sh.decode ? ctx_sum / (double)sh.decode : 0;
    sh.chunk_context = sh.chunk ? cc_sum / (double)sh.chunk : 0;
    int prefill = sh.chunk > 0;
    int rc = wl_serve_i_step(s->costs, prefill ? o->prefill_slot : o->decode_slot, &sh, &E->cost,
                             err);
    if (rc)
        return rc;
    /* every figure is the run's GPUs' sum: the tp ranks of an engine run the
     * same kernels in lockstep, so a step's energy is tp times one rank's */
    double dt = E->cost.time_s, de = o->gpus * E->cost.energy_j;
    if (e->async_scheduling) {
        double host = wl_core_coeffs_engine_step_us(&s->gpu.coef,
                                                    (double)(sh.decode + sh.prefills)) / 1e6;
        if (host > dt) {
            de += (prefill ? o->prefill_idle_w : o->idle_w) * (host - dt);
            dt = host;
        }
    }
    E->sh = sh;
    E->dt = dt;
    E->de = de;
    E->idle = 0;
    E->pending = 1;
    E->running = (long long)E->nrun;
    E->held = pool_tokens(s, s->kv_blocks - E->free_blocks);
    return WL_OK;
}

int wl_serve_sim_run(wl_serve_sim *s, const wl_serve_requests *r, const wl_core_op *prefill_op,
                     const wl_core_op *decode_op, wl_serve_result *res, wl_error *err)
{
    memset(res, 0, sizeof *res);
    int rc = wl_serve_sim_check(s, r, err);
    if (rc)
        return rc;
    const wl_serve_engine *e = &s->engine;
    size_t n = wl_serve_requests_count(r), ne = e->dp > 1 ? (size_t)e->dp : 1;
    state S = {0};
    S.q = calloc(n, sizeof *S.q);
    S.e = calloc(ne, sizeof *S.e);
    S.ne = ne;
    S.itl = calloc(H_BINS, sizeof *S.itl);
    S.ttft = calloc(n, sizeof *S.ttft);
    int oom = !S.q || !S.e || !S.itl || !S.ttft;
    for (size_t i = 0; !oom && i < ne; i++) {
        engine *E = &S.e[i];
        size_t k = n / ne + (i < n % ne);
        E->arr = calloc(k + 1, sizeof *E->arr);
        E->wait = calloc(2 * k + 1, sizeof *E->wait);
        E->run = calloc((size_t)e->max_num_seqs + 1, sizeof *E->run);
        E->sched = calloc((size_t)e->max_num_seqs + 1, sizeof *E->sched);
        oom = !E->arr || !E->wait || !E->run || !E->sched;
        E->head = E->tail = k;
        E->free_blocks = s->kv_blocks;
    }
    if (oom) {
        state_free(&S);
        wl_error_set(err, "serve", 0, "requests", "out of memory for %zu requests", n);
        return WL_ENOMEM;
    }
    /* arrivals: at once, or a Poisson process (exponential gaps); request
     * i to engine i mod dp */
    uint64_t rng = e->seed ^ 0xa5a5a5a5ULL;
    double t_arr = 0;
    for (size_t i = 0; i < n; i++) {
        wl_serve_requests_get(r, i, &S.q[i].prompt, &S.q[i].output);
        if (e->rate_rps > 0 && i > 0)
            t_arr += -log(wl_serve_i_uniform(&rng)) / e->rate_rps;
        S.q[i].arrival = t_arr;
        engine *E = &S.e[i % ne];
        E->arr[E->narr++] = i;
    }
    /* The benchmark's window (RequestTracker): it opens when max_num_seqs
     * requests have their first token and closes when requests -
     * max_num_seqs - 1 have finished, a finish being what closes it (so
     * at the first finish when that count is 0 or less). Both are events at
     * a step's end: the steps that start after the opening, up to and
     * including the closing one, are in it, and so are idle waits between
     * them. With dp engines the count is theirs together, dp x
     * max_num_seqs: what the deployment runs at once. */
    long long seqs = e->max_num_seqs * (long long)ne, close_at = (long long)n - seqs - 1;
    int win = 0; /* 0 not yet open, 1 open, 2 over */
    double w0 = NAN, w1 = NAN, w_energy = 0, w_batch = 0;
    long long w_tokens = 0, all_tokens = 0, started = 0, nrec = 0;
    double energy = 0, all_batch = 0, busy = 0, busy_clock = 0;
    size_t done = 0;
    run_ops o;
    wl_serve_i_slots(s->costs, prefill_op, decode_op, &o.prefill_slot, &o.decode_slot);
    o.gpus = e->tp > 1 ? e->tp : 1;
    o.idle_w = o.gpus * wl_core_gpu_idle_w(&s->gpu, decode_op->sm_clock_mhz);
    o.prefill_idle_w = o.gpus * wl_core_gpu_idle_w(&s->gpu, prefill_op->sm_clock_mhz);
    while (done < n && !rc) {
        /* a stop asked for (wl_stop_watch): every 256 steps, a millisecond */
        if ((nrec & 255) == 255 && wl_stop_requested()) {
            wl_error_set(err, "serve", 0, "", "stopped");
            rc = WL_ESTOPPED;
            break;
        }
        engine *E = NULL;
        for (size_t i = 0; i < ne && !rc; i++) {
            engine *x = &S.e[i];
            if (!x->done && !x->pending)
                rc = plan(s, &S, x, &o, r, err);
            if (!rc && x->pending && (!E || x->t + x->dt < E->t + E->dt))
                E = x;
        }
        if (rc || !E)
            break;
        /* commit E's record */
        double t0 = E->t, t_end = E->t + E->dt;
        int in = win == 1 && t0 >= w0;
        long long tokens = 0;
        if (!E->idle) {
            busy += E->cost.time_s;
            busy_clock += E->cost.time_s * E->cost.clock_mhz;
            res->throttled |= E->cost.throttled;
            size_t keep = 0;
            for (size_t j = 0; j < E->nrun; j++) {
                size_t id = E->run[j];
                req *q = &S.q[id];
                if (E->sched[j] > 0) {
                    q->computed += E->sched[j];
                    if (q->computed == q->prompt + q->gen) {
                        q->gen++;
                        tokens++;
                        if (q->gen == 1) {
                            S.ttft[S.nttft++] = t_end - q->arrival;
                            started++;
                        } else {
                            h_add(S.itl, t_end - q->last, 1);
                        }
                        q->last = t_end;
                    }
                }
                if (q->gen >= q->output) {
                    E->free_blocks += q->blocks;
                    q->blocks = 0;
                    done++;
                } else {
                    E->run[keep] = id;
                    E->sched[keep++] = E->sched[j];
                }
            }
            E->nrun = keep;
            res->steps++;
        }
        all_batch += (double)E->running * E->dt;
        all_tokens += tokens;
        energy += E->de;
        if (in) {
            w_energy += E->de;
            w_batch += (double)E->running * E->dt;
            w_tokens += tokens;
        }
        if (win == 0 && started >= seqs) {
            win = 1;
            w0 = t_end;
        }
        if (win < 2 && done > 0 && (long long)done >= close_at) {
            if (win == 1)
                w1 = t_end;
            win = 2;
        }
        if (s->log) {
            wl_serve_step_rec rec = {
                .step = nrec, .replica = (int)(E - S.e), .start_s = t0, .time_s = E->dt,
                .energy_j = E->de, .running = E->running,
                .decode_seqs = E->idle ? 0 : E->sh.decode,
                .prefill_tokens = E->idle ? 0 : E->sh.chunk, .sampled_tokens = tokens,
                .cache_tokens = E->held, .comm_s = E->idle ? 0 : E->cost.comm_s,
                .started = started, .finished = (long long)done,
                .waiting = (long long)(E->tail - E->head), .steady = in};
            s->log(s->log_user, &rec);
        }
        nrec++;
        E->t = t_end;
        E->pending = 0;
    }
    if (!rc) {
        /* the run ends with its last token: an engine done before that
         * waits at idle power, its GPUs on (and so inside the window) */
        double t = 0;
        for (size_t i = 0; i < ne; i++)
            t = fmax(t, S.e[i].t);
        for (size_t i = 0; i < ne; i++) {
            double tail = t - S.e[i].t;
            energy += o.idle_w * tail;
            if (w1 > w0)
                w_energy += o.idle_w * fmax(0, fmin(t, w1) - fmax(S.e[i].t, w0));
        }
        res->preemptions = S.npre;
        double T = w1 - w0, mean_out = 0, mean_prompt = 0;
        wl_serve_requests_means(r, &mean_prompt, &mean_out);
        if (T > 0) {
            res->steady_s = T;
            res->steady_start_s = w0;
            res->steady_end_s = w1;
            res->avg_batch = w_batch / T;
            res->output_tokens_per_s = (double)w_tokens / T;
            res->power_w = w_energy / T;
            res->energy_per_token_j = w_tokens > 0 ? w_energy / (double)w_tokens : NAN;
            res->energy_per_request_j = res->energy_per_token_j * mean_out;
            res->stable = T >= 20 && res->avg_batch >= 0.85 * (double)seqs;
        } else {
            res->steady_s = res->steady_start_s = res->steady_end_s = NAN;
            res->avg_batch = res->output_tokens_per_s = res->power_w = NAN;
            res->energy_per_token_j = res->energy_per_request_j = NAN;
            if (close_at < 1)
                snprintf(res->steady_why, sizeof res->steady_why,
                         "no steady state: with %zu requests and max_num_seqs %lld the "
                         "benchmark's window closes at the first finish (requests - "
                         "max_num_seqs - 1 = %lld) before it opens",
                         n, seqs, close_at);
            else
                snprintf(res->steady_why, sizeof res->steady_why,
                         "no steady state: %lld of %zu requests had finished (the window's "
                         "close) before %lld had a first token (its opening); more requests "
                         "or a smaller max_num_seqs give one",
                         close_at, n, seqs);
        }
        res->run_avg_batch = t > 0 ? all_batch / t : NAN;
        res->run_output_tokens_per_s = t > 0 ? (double)all_tokens / t : NAN;
        res->run_power_w = t > 0 ? energy / t : NAN;
        res->run_energy_per_token_j = all_tokens > 0 ? energy / (double)all_tokens : NAN;
        res->run_energy_per_request_j = energy / (double)n;
        res->median_itl_ms = h_quantile(S.itl, 0.5) * 1e3;
        res->p90_itl_ms = h_quantile(S.itl, 0.9) * 1e3;
        res->p99_itl_ms = h_quantile(S.itl, 0.99) * 1e3;
        qsort(S.ttft, S.nttft, sizeof *S.ttft, wl_core_cmp_double);
        res->median_ttft_ms = quantile(S.ttft, S.nttft, 0.5) * 1e3;
        res->p90_ttft_ms = quantile(S.ttft, S.nttft, 0.9) * 1e3;
        res->time_s = t;
        res->energy_j = energy;
        res->effective_clock_mhz = busy > 0 ? busy_clock / busy : decode_op->sm_clock_mhz;
        res->kv_cache_tokens = wl_serve_sim_kv_tokens(s);
    }
    state_free(&S);
    return rc;
}
