/* Tests of core/'s workloads: the builders against every recorded trace,
 * their kernel counts and memory footprint, the trace grammar and its
 * errors, retyping to fp32 and the precision names. */
#include "test_core.h"
#include <dirent.h>

/* One trace name: <model>_<dtype>_b<batch>[_s<seq>]_<mode>.json */
static int parse_trace_name(const char *name, char *model, size_t cap, wl_dtype *dt,
                            long long *b, long long *s)
{
    const char *u = strchr(name, '_');
    if (!u || (size_t)(u - name) >= cap)
        return 0;
    memcpy(model, name, (size_t)(u - name));
    model[u - name] = '\0';
    char dts[16];
    int used = 0;
    *s = 1;
    if (sscanf(u + 1, "%15[a-z0-9]_b%lld%n", dts, b, &used) != 2)
        return 0;
    const char *rest = u + 1 + used;
    if (strncmp(rest, "_s", 2) == 0 && sscanf(rest, "_s%lld", s) != 1)
        return 0;
    return wl_dtype_parse(dts, dt) == WL_OK;
}

/* ResNet-101: every convolution's implicit-GEMM shape (M = b oh ow, N = cout,
 * K = cin r^2, filter taps, stride) and the fc equal the traces' GEMMs in
 * order. The traces leave out BatchNorm, the residual add and the pools,
 * which eager PyTorch launches and the builder keeps. */
static void compare_gemms(const char *name, const wl_core_workload *wl, const wl_core_workload *tr)
{
    size_t a = 0, t = 0, na = wl_core_workload_count(wl), nt = wl_core_workload_count(tr);
    int gemms = 0;
    for (;;) {
        while (a < na && wl_core_workload_kernel(wl, a)->kind != WL_K_GEMM)
            a++;
        while (t < nt && wl_core_workload_kernel(tr, t)->kind != WL_K_GEMM)
            t++;
        if (a == na || t == nt)
            break;
        const wl_kernel *x = wl_core_workload_kernel(wl, a), *y = wl_core_workload_kernel(tr, t);
        if (!wl_kernel_equal(x, y))
            fail_msg("%s GEMM %d: built %lldx%lldx%lld taps %d/%d, trace %lldx%lldx%lld taps %d/%d",
                     name, gemms, x->m, x->n, x->k, x->conv_taps, x->conv_stride, y->m, y->n, y->k,
                     y->conv_taps, y->conv_stride);
        gemms++;
        a++;
        t++;
    }
    if (a != na || t != nt)
        fail_msg("%s: %zu GEMMs left over in the build, %zu in the trace", name, na - a, nt - t);
    assert_int_equal(gemms, 104 + 1); /* 104 convolutions + fc */
    /* by hand: stem 4 + 33 blocks x 10 + 4 downsamples x 2 + pool + fc */
    assert_int_equal(na, 4 + 33 * 10 + 4 * 2 + 2);
}

/* The native builder against every trace in shared/data/traces, kernel for
 * kernel (count, kind, op, shape, precision, order), so that no family can
 * drift from what eager PyTorch launched. ResNet is compared GEMM for GEMM
 * (see compare_gemms); a traced family without a model preset is named. */
/* Footprints against hand counts. Parameters: the HF models' published
 * totals (GPT2Model 124,439,808; Qwen2-1.5B 1,543,714,304 with tied
 * embeddings; BertModel large 335,141,888; OPT-1.3B 1,315,758,080;
 * torchvision resnet101 44,549,160). Activations of one eager layer, by hand:
 *  GPT-2 b1 s1024: T = 1024, S = h s^2 = 12,582,912 scores; residual and
 *   normed input 2 T d = 1,572,864; c_attn output 3 T d = 2,359,296; scale,
 *   mask and softmax hold two score matrices, 2 S = 25,165,824; MLP 2 T ff =
 *   6,291,456 is smaller: 29,097,984 elements x 2 B = 58,195,968 B.
 *  Qwen2-1.5B b1 s2048: T = 2048, S = 12 x 2048^2 = 50,331,648; 2 T d =
 *   6,291,456; q, k, v = T (1536 + 2 x 256) = 4,194,304 plus repeat_kv's k, v
 *   copies 2 T d = 6,291,456; masked scores (bf16) + fp32 softmax + bf16 copy
 *   = S (1 + 2 + 1) = 201,326,592; MLP 3 T ff = 55,050,240 is smaller:
 *   218,103,808 x 2 B = 436,207,616 B. KV cache 2 x 28 x 2048 x 2 x 128 x 2 B
 *   = 58,720,256 B. */
static void test_memory_footprint(void **state)
{
    (void)state;
    wl_error err = {0};
    static const struct {
        const char *id;
        double params;
    } counts[] = {{"gpt2", 124439808.0},      {"qwen2-1.5b", 1543714304.0},
                  {"bert-large", 335141888.0}, {"opt-1.3b", 1315758080.0},
                  {"resnet-101", 44549160.0}};
    for (size_t i = 0; i < sizeof counts / sizeof *counts; i++) {
        wl_core_model m;
        assert_int_equal(wl_preset_model_load(counts[i].id, &m, &err), WL_OK);
        double p = 0;
        assert_int_equal(wl_core_model_params(&m, &p), WL_OK);
        if (p != counts[i].params)
            fail_msg("%s: %.0f parameters, expected %.0f", counts[i].id, p, counts[i].params);
    }
    wl_core_model gpt2, qwen;
    assert_int_equal(wl_preset_model_load("gpt2", &gpt2, &err), WL_OK);
    assert_int_equal(wl_preset_model_load("qwen2-1.5b", &qwen, &err), WL_OK);
    wl_core_memory mem;
    wl_core_shape sh = {.batch = 1, .seq = 1024, .dtype = WL_DT_BF16, .attention = WL_ATTN_EAGER};
    assert_int_equal(wl_core_memory_estimate(&gpt2, &sh, &mem, &err), WL_OK);
    assert_close(mem.weights_gb, 124439808.0 * 2 / 1e9, 1e-12);
    assert_close(mem.activations_gb, 58195968.0 / 1e9, 1e-12);
    assert_close(mem.kv_cache_gb, 2.0 * 12 * 1024 * 768 * 2 / 1e9, 1e-12);
    assert_close(mem.total_gb,
                        mem.weights_gb + mem.activations_gb + mem.kv_cache_gb + mem.workspace_gb,
                        1e-12);
    /* fp32 doubles every byte; flash attention has no score matrices */
    wl_core_memory m32, mfl;
    sh.dtype = WL_DT_FP32;
    assert_int_equal(wl_core_memory_estimate(&gpt2, &sh, &m32, &err), WL_OK);
    assert_close(m32.weights_gb, 2 * mem.weights_gb, 1e-12);
    assert_close(m32.activations_gb, 2 * mem.activations_gb, 1e-12);
    sh.dtype = WL_DT_BF16;
    sh.attention = WL_ATTN_FLASH;
    assert_int_equal(wl_core_memory_estimate(&gpt2, &sh, &mfl, &err), WL_OK);
    /* 2 T d + max(3 T d + T d, 2 T ff) = 1,572,864 + 6,291,456 elements */
    assert_close(mfl.activations_gb, (1572864.0 + 6291456.0) * 2 / 1e9, 1e-12);

    sh = (wl_core_shape){.batch = 1, .seq = 2048, .dtype = WL_DT_BF16, .attention = WL_ATTN_EAGER};
    assert_int_equal(wl_core_memory_estimate(&qwen, &sh, &mem, &err), WL_OK);
    assert_close(mem.weights_gb, 1543714304.0 * 2 / 1e9, 1e-12);
    assert_close(mem.activations_gb, 436207616.0 / 1e9, 1e-12);
    assert_close(mem.kv_cache_gb, 58720256.0 / 1e9, 1e-12);

    /* fits: GPT-3 175B at batch 8 is 350 GB of weights alone, not an A30 */
    wl_core_gpu a30, a100;
    assert_int_equal(wl_preset_gpu_load("a30-24gb", &a30, &err), WL_OK);
    assert_int_equal(wl_preset_gpu_load("a100-pcie-40gb", &a100, &err), WL_OK);
    assert_int_equal(wl_core_memory_fits(&a100, &mem), 1);
    wl_core_model g3;
    assert_int_equal(wl_preset_model_load("gpt3-175b", &g3, &err), WL_OK);
    sh = (wl_core_shape){.batch = 8, .seq = 128, .dtype = WL_DT_BF16, .attention = WL_ATTN_EAGER};
    assert_int_equal(wl_core_memory_estimate(&g3, &sh, &mem, &err), WL_OK);
    assert_true(mem.weights_gb > 349 && mem.weights_gb < 351);
    assert_int_equal(wl_core_memory_fits(&a30, &mem), 0);
    a30.mem_capacity_gb = 0; /* not given: unknown */
    assert_int_equal(wl_core_memory_fits(&a30, &mem), -1);
    /* a vision model has no KV cache; buffers (BN running stats) count */
    wl_core_model rn;
    assert_int_equal(wl_preset_model_load("resnet-101", &rn, &err), WL_OK);
    sh = (wl_core_shape){.batch = 1, .dtype = WL_DT_BF16};
    assert_int_equal(wl_core_memory_estimate(&rn, &sh, &mem, &err), WL_OK);
    assert_close(mem.kv_cache_gb, 0, 0);
    assert_true(mem.weights_gb > 44549160.0 * 2 / 1e9);
}

/* An fp8 checkpoint's prefill is W8A8 (issue 79, item 6: fp8 is a dtype
 * wherever a GPU has fp8 math): every linear's GEMM in fp8, each after a
 * per-token quantize of its bf16 input; attention and the LM head in bf16;
 * the weights in 8 bits but for the embeddings and the head, by hand for
 * Llama-3-8B: (8030261248 - 2 x 128256 x 4096) x 1 + 2 x 128256 x 4096 x 2
 * bytes = 9.080937 GB; the KV cache at 2 bytes; training refused. */
static void test_fp8_checkpoint(void **state)
{
    (void)state;
    wl_error err = {0};
    wl_core_model m;
    assert_int_equal(wl_preset_model_load("llama-3-8b", &m, &err), WL_OK);
    wl_core_shape sh = {.batch = 2, .seq = 256, .dtype = WL_DT_FP8, .attention = WL_ATTN_FLASH,
                        .mode = WL_MODE_DECODE, .gen = 4};
    wl_core_workload *wl = NULL;
    assert_int_equal(wl_core_build(&m, &sh, &wl, &err), WL_OK);
    size_t fp8 = 0, bf16 = 0, quant_before = 0;
    const wl_kernel *prev = NULL;
    for (size_t i = 0; i < wl_core_workload_count(wl); i++) {
        const wl_kernel *k = wl_core_workload_kernel(wl, i);
        if (k->kind == WL_K_GEMM && k->in_dtype == WL_DT_FP8) {
            fp8++;
            quant_before += prev && prev->kind == WL_K_ELEMENTWISE;
            assert_true(k->m != m.vocab_size && k->n != m.vocab_size);
        } else if ((k->kind == WL_K_GEMM || k->kind == WL_K_ATTN_FLASH) &&
                   k->in_dtype != WL_DT_FP32) { /* the rotary table's GEMM is fp32 */
            assert_int_equal(k->in_dtype, WL_DT_BF16);
            bf16++;
        }
        prev = k;
    }
    /* 4 linears a layer (qkv, o, gate_up, down) at 7 GEMMs' worth of
     * weights: every distinct fp8 GEMM follows its quantize */
    assert_true(fp8 >= 4);
    assert_int_equal(quant_before, fp8);
    assert_true(bf16 >= 2); /* attention and the LM head */
    wl_core_workload_free(wl);
    wl_core_memory mem;
    assert_int_equal(wl_core_memory_estimate(&m, &sh, &mem, &err), WL_OK);
    double p = 0, tables = 2.0 * 128256 * 4096;
    assert_int_equal(wl_core_model_params(&m, &p), WL_OK);
    assert_close(mem.weights_gb, ((p - tables) + tables * 2) / 1e9, 1e-9);
    wl_core_shape b16 = sh;
    b16.dtype = WL_DT_BF16;
    wl_core_memory m16;
    assert_int_equal(wl_core_memory_estimate(&m, &b16, &m16, &err), WL_OK);
    assert_close(mem.kv_cache_gb, m16.kv_cache_gb, 1e-12);
    sh.mode = WL_MODE_TRAIN;
    assert_int_equal(wl_core_build(&m, &sh, &wl, &err), WL_EINVAL);
    assert_string_equal(err.field, "dtype");
}

static void test_builder_matches_every_trace(void **state)
{
    (void)state;
    REQUIRE_SHARED(dir);
    char *tdir = wl_core_strprintf("%s/traces", dir);
    assert_non_null(tdir);
    DIR *d = opendir(tdir);
    if (!d) {
        fprintf(stderr, "SKIP %s: %s not found\n", __func__, tdir);
        free(tdir);
        skip();
    }
    int exact = 0, by_gemm = 0, no_builder = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".json"))
            continue;
        char model[128];
        wl_dtype dt;
        long long b, s;
        if (!parse_trace_name(e->d_name, model, sizeof model, &dt, &b, &s))
            fail_msg("trace name not understood: %s", e->d_name);
        wl_core_model m;
        wl_error err;
        if (wl_preset_model_load(model, &m, &err) != WL_OK) {
            fprintf(stderr, "NOTE %s: no model preset for %s, trace not compared\n",
                    __func__, e->d_name);
            no_builder++;
            continue;
        }
        char *path = wl_core_strprintf("%s/%s", tdir, e->d_name);
        assert_non_null(path);
        wl_core_workload *tr = NULL, *wl = NULL;
        if (wl_core_trace_load(path, &tr, &err) != WL_OK)
            fail_msg("%s: %s", path, err.text);
        wl_core_shape sh = {.batch = b, .seq = s, .dtype = dt, .attention = WL_ATTN_EAGER,
                            .stack = WL_STACK_HF4};
        if (wl_core_build(&m, &sh, &wl, &err) != WL_OK)
            fail_msg("%s: build failed: %s", e->d_name, err.text);
        if (strncmp(wl_core_workload_name(wl), e->d_name, len - 5) ||
            wl_core_workload_name(wl)[len - 5])
            fail_msg("built workload named %s for %s", wl_core_workload_name(wl), e->d_name);
        if (m.style == WL_STYLE_RESNET) {
            compare_gemms(e->d_name, wl, tr);
            by_gemm++;
        } else {
            size_t nw = wl_core_workload_count(wl), nt = wl_core_workload_count(tr);
            for (size_t i = 0; i < nw && i < nt; i++) {
                const wl_kernel *x = wl_core_workload_kernel(wl, i), *t = wl_core_workload_kernel(tr, i);
                /* a trace records a softmax, not its causal mask, which the
                 * builder knows from the model (core/latency.c charges it) */
                wl_kernel xm = *x;
                if (xm.kind == WL_K_SOFTMAX)
                    xm.causal = 0, xm.m = 0;
                if (!wl_kernel_equal(&xm, t))
                    fail_msg("%s kernel %zu differs: built %s %lldx%lldx%lld b%lld op %d dt %d, "
                             "trace %s %lldx%lldx%lld b%lld op %d dt %d", e->d_name, i,
                             wl_kernel_kind_name(x->kind), x->m, x->n, x->k, x->batch, x->op,
                             x->in_dtype, wl_kernel_kind_name(t->kind), t->m, t->n, t->k,
                             t->batch, t->op, t->in_dtype);
            }
            if (nw != nt)
                fail_msg("%s: built %zu kernels, the trace has %zu", e->d_name, nw, nt);
            exact++;
        }
        wl_core_workload_free(wl);
        wl_core_workload_free(tr);
        free(path);
    }
    closedir(d);
    free(tdir);
    fprintf(stderr, "NOTE %s: %d traces equal kernel for kernel, %d GEMM for GEMM, "
            "%d without a model preset\n", __func__, exact, by_gemm, no_builder);
    assert_true(exact > 0);
}

/* gpt2 by hand: 12 layers x 20 kernels + embedding add + final LayerNorm. */
static void test_builder_counts(void **state)
{
    (void)state;
    wl_core_workload *wl = build("gpt2", 8, 128, WL_DT_BF16);
    assert_int_equal(wl_core_workload_count(wl), 242);
    /* identical layers: the distinct kernels are few */
    assert_true(wl_core_workload_unique_count(wl) <= 20);
    /* GEMM FLOPs: 2 T (4 d^2 + 2 d ff) per layer + attention 4 b h s^2 hd */
    double T = 1024, d = 768, ff = 3072;
    double expect = 12 * (2 * T * (4 * d * d + 2 * d * ff) + 4.0 * 8 * 12 * 128 * 128 * 64);
    assert_close(wl_core_workload_flops(wl), expect, 1);
    wl_core_workload_free(wl);
    /* GQA llama: K/V projections are kv_heads wide; repeat_kv is a view.
     * By hand (HF LlamaModel eager, the generation of the qwen2 traces):
     * rotary 3 + per layer (RMSNorm 5, q/k/v 3, rotary 3 + 3, QK^T, scale,
     * mask, two casts, softmax, PV, o_proj, add, RMSNorm 5, gate, silu, up,
     * mul, down, add = 34) + final RMSNorm 5 */
    wl = build("llama-3-8b", 1, 256, WL_DT_BF16);
    assert_int_equal(wl_core_workload_count(wl), 3 + 32 * 34 + 5);
    int kv_proj = 0;
    for (size_t i = 0; i < wl_core_workload_count(wl); i++) {
        const wl_kernel *k = wl_core_workload_kernel(wl, i);
        if (k->kind == WL_K_GEMM && k->m == 1024 && k->k == 4096)
            kv_proj++;
    }
    assert_int_equal(kv_proj, 2 * 32);
    wl_core_workload_free(wl);
    /* fp32 runs GEMMs on CUDA cores and drops the half-precision casts */
    wl = build("opt-1.3b", 2, 128, WL_DT_FP32);
    for (size_t i = 0; i < wl_core_workload_count(wl); i++) {
        const wl_kernel *k = wl_core_workload_kernel(wl, i);
        assert_false(k->kind == WL_K_GEMM && k->tensor_core);
        assert_false(k->kind == WL_K_ELEMENTWISE && k->op == WL_EW_CAST_BF16);
    }
    assert_int_equal(wl_core_workload_count(wl), 436 - 48);
    wl_core_workload_free(wl);
}

/* Issue 76, cause 4: --scope layer is the block called on its own,
 * block(x), as the A30 talk measures a layer. On transformers 5.x a
 * decoder layer inside the model's forward also runs its DynamicCache's
 * two concatenations (k and v: b x kvh x sk x hd each) and the 4-D mask
 * added to the scores (b x h x s x sk, broadcast over the heads); a lone
 * block has neither, and every other kernel is the same, in order.
 * GPT-3 1.3B at batch 8, seq 2048: 16 heads of 128, so the copies are
 * 8 x 16 x 2048 x 128 = 33554432 elements and the mask add 8 x 16 x 2048^2
 * = 536870912. */
static void test_layer_alone(void **state)
{
    (void)state;
    wl_core_model m;
    wl_error err = {0};
    assert_int_equal(wl_preset_model_load("gpt3-1.3b", &m, &err), WL_OK);
    wl_core_shape sh = {.batch = 8, .seq = 2048, .dtype = WL_DT_BF16, .attention = WL_ATTN_EAGER};
    wl_core_workload *alone = NULL, *inm = NULL;
    assert_int_equal(wl_core_build_layer(&m, &sh, &alone, &err), WL_OK);
    assert_int_equal(wl_core_build_scope(&m, &sh, WL_SCOPE_LAYER_IN_MODEL, &inm, &err), WL_OK);
    size_t na = wl_core_workload_count(alone), ni = wl_core_workload_count(inm);
    assert_int_equal(ni, na + 3);
    long long kv = 8LL * 16 * 2048 * 128, ss = 8LL * 16 * 2048 * 2048;
    int copies = 0, masks = 0;
    size_t a = 0;
    for (size_t i = 0; i < ni; i++) {
        const wl_kernel *k = wl_core_workload_kernel(inm, i);
        const wl_kernel *x = a < na ? wl_core_workload_kernel(alone, a) : NULL;
        if (x && x->kind == k->kind && x->op == k->op && x->n == k->n && x->k == k->k &&
            x->batch == k->batch) {
            /* a lone eager block is not causal (no mask given): its softmax
             * reads every score (m 0), the model's masks the upper half (m: s) */
            if (k->kind == WL_K_SOFTMAX) {
                assert_int_equal(x->m, 0);
                assert_int_equal(k->m, 2048);
            } else
                assert_int_equal(x->m, k->m);
            a++;
            continue;
        }
        /* what only the in-model layer launches */
        assert_int_equal(k->kind, WL_K_ELEMENTWISE);
        if (k->op == WL_EW_COPY && k->n * k->batch == kv)
            copies++;
        else if (k->op == WL_EW_ADD && k->n * k->batch == ss)
            masks++;
        else
            fail_msg("kernel %zu of the in-model layer (op %d, n %lld) is not a cache copy or the mask add",
                     i, (int)k->op, k->n);
    }
    assert_int_equal(a, na);
    assert_int_equal(copies, 2);
    assert_int_equal(masks, 1);
    wl_core_workload_free(alone);
    wl_core_workload_free(inm);
    /* a ResNet has no layer: an error either way */
    wl_core_model rn;
    assert_int_equal(wl_preset_model_load("resnet-101", &rn, &err), WL_OK);
    sh.seq = 0;
    assert_int_not_equal(wl_core_build_layer(&rn, &sh, &alone, &err), WL_OK);
}

static void test_trace_errors(void **state)
{
    (void)state;
    wl_core_workload *wl = NULL;
    wl_error err;
    const char *bad_json = "[\n [{\"dim\": 5, \"op\": \"relu\", \"prec\": \"bf16\"}, [\"elementwise\"]],\n [{\"dim\": }]\n]";
    assert_int_equal(wl_core_trace_parse(bad_json, strlen(bad_json), "t.json", &wl, &err),
                     WL_EPARSE);
    assert_int_equal(err.line, 3);
    assert_null(wl);
    const char *bad_kind = "[[{\"x\": 1}, [\"mystery\"]]]";
    assert_int_equal(wl_core_trace_parse(bad_kind, strlen(bad_kind), "t.json", &wl, &err),
                     WL_EUNSUPPORTED);
    assert_non_null(strstr(err.text, "mystery"));
    const char *bad_dim = "[\n[{\"dim\": -4, \"op\": \"relu\", \"prec\": \"bf16\"}, [\"elementwise\"]]]";
    assert_int_equal(wl_core_trace_parse(bad_dim, strlen(bad_dim), "t.json", &wl, &err),
                     WL_EPARSE);
    assert_string_equal(err.field, "dim");
    assert_int_equal(err.line, 2);
    const char *ok = "[[{\"dim\": 8, \"op\": \"gelu\", \"prec\": \"bf16\"}, [\"elementwise\"]],"
                     "[{\"batch\": 2, \"dim\": 8, \"prec\": \"fp32\"}, [\"softmax\", \"fp32\"]]]";
    assert_int_equal(wl_core_trace_parse(ok, strlen(ok), "t.json", &wl, &err), WL_OK);
    assert_int_equal(wl_core_workload_count(wl), 2);
    assert_int_equal(wl_core_workload_kernel(wl, 0)->op, WL_EW_GELU);
    assert_int_equal(wl_core_workload_kernel(wl, 1)->kind, WL_K_SOFTMAX);
    wl_core_workload_free(wl);
    assert_int_equal(wl_core_trace_load("/nonexistent/x.json", &wl, &err), WL_EIO);
    /* the size limits of native models hold for traces: a layernorm of
     * 2^40 x 2^40 elements is refused, naming the field */
    const char *huge = "[[{\"batch\": 1099511627776, \"dim\": 1099511627776, \"prec\": \"bf16\"},"
                       " [\"layernorm\", \"bf16\"]]]";
    assert_int_equal(wl_core_trace_parse(huge, strlen(huge), "t.json", &wl, &err), WL_EPARSE);
    assert_string_equal(err.field, "dim");
    assert_non_null(strstr(err.text, "elements"));
    assert_null(wl);
    /* a UTF-8 byte-order mark is read past, as the CSV and INI readers do */
    char bom[400];
    snprintf(bom, sizeof bom, "\xEF\xBB\xBF%s", ok);
    assert_int_equal(wl_core_trace_parse(bom, strlen(bom), "b.json", &wl, &err), WL_OK);
    assert_int_equal(wl_core_workload_count(wl), 2);
    wl_core_workload_free(wl);
    /* a key given twice is an error naming both lines, in a small object
     * and in a large one (hashed) */
    const char *dup = "[[{\"dim\": 8, \"op\": \"gelu\",\n \"dim\": 16, \"prec\": \"bf16\"},"
                      " [\"elementwise\"]]]";
    assert_int_equal(wl_core_trace_parse(dup, strlen(dup), "d.json", &wl, &err), WL_EPARSE);
    assert_int_equal(err.line, 2);
    assert_non_null(strstr(err.text, "duplicate key \"dim\" (first on line 1)"));
    char big[8000];
    size_t l = (size_t)snprintf(big, sizeof big, "[[{");
    for (int i = 0; i < 100; i++)
        l += (size_t)snprintf(big + l, sizeof big - l, "\"k%d\": %d,\n", i, i);
    snprintf(big + l, sizeof big - l, "\"k7\": 1}, [\"elementwise\"]]]");
    assert_int_equal(wl_core_trace_parse(big, strlen(big), "d.json", &wl, &err), WL_EPARSE);
    assert_int_equal(err.line, 101);
    assert_non_null(strstr(err.text, "duplicate key \"k7\" (first on line 8)"));
    assert_null(wl);
}

/* One grammar for numbers, lists and ranges. */
static void test_grammar(void **state)
{
    (void)state;
    wl_error err;
    wl_core_numlist l = {0};
    /* why a text is no number (issue 77: a subnormal read "not a finite
     * number"); 2.2250738585072014e-308 is DBL_MIN, the least normal */
    static const char *const why[][2] = {
        {"1e-310", "too close to zero: below 2.2e-308, a subnormal or less"},
        {"-1e-400", "too close to zero: below 2.2e-308, a subnormal or less"},
        {"1e400", "beyond the largest double, 1.8e308"},
        {"0x10", "hexadecimal: write it in decimal"},
        {"inf", "not a finite number"}, {"nan", "not a finite number"},
        {"abc", "not a number"}, {"5 6", "not a number"}};
    for (size_t i = 0; i < sizeof why / sizeof *why; i++)
        assert_string_equal(wl_core_number_why(why[i][0]), why[i][1]);
    assert_null(wl_core_number_why("2.2250738585072014e-308"));
    assert_null(wl_core_number_why(" 1e-300 "));
    double x;
    assert_int_equal(wl_core_parse_real("1e-310", 0, 1, "s", 3, "f", &x, &err), WL_EINVAL);
    assert_non_null(strstr(err.text, "got '1e-310' (too close to zero"));
    assert_int_equal(wl_core_parse_list("510:1410:90, 1500", 1, 2000, 0, "x", 0, "clock", &l, &err),
                     WL_OK);
    assert_int_equal(l.n, 12);
    assert_close(l.v[10], 1410, 0);
    assert_close(l.v[11], 1500, 0);
    wl_core_numlist_free(&l);
    /* no drift from repeated addition */
    assert_int_equal(wl_core_parse_list("0:1:0.1", -1, 2, 0, "x", 0, "f", &l, &err), WL_OK);
    assert_int_equal(l.n, 11);
    assert_close(l.v[10], 1.0, 1e-15);
    wl_core_numlist_free(&l);
    const char *const bad[] = {"", "1,", ",1", "1,,2", "1:2", "2:1:1", "1:2:0", "nan", "inf",
                               "1e999", "abc", "1:1e12:1", "0x10", "5 6"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        if (wl_core_parse_list(bad[i], -1e9, 1e9, 0, "src", 7, "fld", &l, &err) == WL_OK &&
            strcmp(bad[i], "0x10") != 0)
            fail_msg("'%s' was accepted", bad[i]);
        wl_core_numlist_free(&l);
    }
    assert_int_equal(wl_core_parse_list("1,,2", 0, 9, 0, "src", 7, "fld", &l, &err), WL_EINVAL);
    assert_string_equal(err.source, "src");
    assert_int_equal(err.line, 7);
    assert_string_equal(err.field, "fld");
    assert_non_null(strstr(err.text, "empty item"));
    assert_int_equal(wl_core_parse_list("1.5", 0, 9, 1, "s", 0, "batch", &l, &err), WL_EINVAL);
    assert_int_equal(wl_core_parse_list("10", 0, 9, 1, "s", 0, "batch", &l, &err), WL_EINVAL);
    assert_non_null(strstr(err.text, "[0, 9]"));
    wl_core_numlist_free(&l);
    /* a list written out value by value has the limit a range has: 10^6
     * values pass, one more is an error that says so */
    size_t nv = WL_LIST_MAX + 1, cap = nv * 2 + 1;
    char *many = malloc(cap);
    assert_non_null(many);
    for (size_t i = 0; i < nv; i++)
        memcpy(many + 2 * i, i + 1 < nv ? "1," : "1", 2);
    many[2 * nv - 1] = 0;
    assert_int_equal(wl_core_parse_list(many, 0, 9, 0, "s", 0, "clock", &l, &err), WL_EINVAL);
    assert_non_null(strstr(err.text, "more than"));
    wl_core_numlist_free(&l);
    many[2 * (nv - 1) - 1] = 0; /* one fewer: exactly the limit */
    assert_int_equal(wl_core_parse_list(many, 0, 9, 0, "s", 0, "clock", &l, &err), WL_OK);
    assert_int_equal(l.n, WL_LIST_MAX);
    wl_core_numlist_free(&l);
    free(many);
    long long v;
    assert_int_equal(wl_core_parse_int(" 42 ", 1, 100, "s", 0, "n", &v, &err), WL_OK);
    assert_int_equal(v, 42);
    assert_int_equal(wl_core_parse_int("99999999999", 1, 1000000, "s", 0, "batch", &v, &err),
                     WL_EINVAL);
    assert_string_equal(err.text, "expected an integer in [1, 1000000], got '99999999999'");
    wl_core_strlist names = {0};
    assert_int_equal(wl_core_parse_names(" a , b ", "s", 0, "gpu", &names, &err), WL_OK);
    assert_int_equal(names.n, 2);
    assert_string_equal(names.v[1], "b");
    assert_int_equal(wl_core_parse_names("a,", "s", 0, "gpu", &names, &err), WL_EINVAL);
    wl_core_strlist_free(&names);
}

/* A half-precision workload retyped to fp32 is what the native builders
 * produce for fp32, launch for launch: casts gone, matmuls on CUDA cores,
 * convolutions on TF32 tensor cores. */
static void test_retype_fp32(void **state)
{
    (void)state;
    static const struct { const char *model; long long b, s; } cases[] = {
        {"gpt2", 2, 128}, {"bert-large", 1, 256}, {"opt-1.3b", 1, 128},
        {"vit-large", 8, 1}, {"resnet-101", 8, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        wl_core_workload *h = build(cases[c].model, cases[c].b, cases[c].s, WL_DT_BF16);
        wl_core_workload *f = build(cases[c].model, cases[c].b, cases[c].s, WL_DT_FP32);
        wl_core_workload *r = NULL;
        wl_error err;
        assert_int_equal(wl_core_workload_retype(h, WL_DT_FP32, &r, &err), WL_OK);
        assert_int_equal(wl_core_workload_count(r), wl_core_workload_count(f));
        for (size_t i = 0; i < wl_core_workload_count(f); i++) {
            const wl_kernel *a = wl_core_workload_kernel(r, i), *b = wl_core_workload_kernel(f, i);
            if (!wl_kernel_equal(a, b))
                fail_msg("%s: launch %zu differs: %s %s vs %s %s", cases[c].model, i,
                         wl_kernel_kind_name(a->kind), wl_dtype_name(a->in_dtype),
                         wl_kernel_kind_name(b->kind), wl_dtype_name(b->in_dtype));
        }
        assert_true(wl_core_workload_count(r) <= wl_core_workload_count(h));
        wl_core_workload_free(h);
        wl_core_workload_free(f);
        wl_core_workload_free(r);
    }
    /* only to fp32 */
    wl_core_workload *h = build("gpt2", 1, 128, WL_DT_BF16), *r = NULL;
    wl_error err;
    assert_int_equal(wl_core_workload_retype(h, WL_DT_BF16, &r, &err), WL_EUNSUPPORTED);
    assert_null(r);
    assert_string_equal(err.field, "dtype");
    wl_core_workload_free(h);
}

/* Precisions by their own names and by framework spellings. */
static void test_dtype_names(void **state)
{
    (void)state;
    static const struct { const char *s; wl_dtype dt; } ok[] = {
        {"bf16", WL_DT_BF16},   {"torch.bfloat16", WL_DT_BF16}, {"BF16", WL_DT_BF16},
        {"float16", WL_DT_FP16}, {"half", WL_DT_FP16},          {"float32", WL_DT_FP32},
        {"float", WL_DT_FP32},   {"tf32", WL_DT_TF32},          {"int8", WL_DT_INT8},
    };
    for (size_t i = 0; i < sizeof ok / sizeof *ok; i++) {
        wl_dtype dt;
        assert_int_equal(wl_dtype_parse(ok[i].s, &dt), WL_OK);
        assert_int_equal(dt, ok[i].dt);
    }
    wl_dtype dt;
    assert_int_equal(wl_dtype_parse("fp64", &dt), WL_EINVAL);
    assert_int_equal(wl_dtype_parse("", &dt), WL_EINVAL);
    assert_int_equal(wl_dtype_parse("bfloat16-and-a-very-long-suffix-beyond", &dt), WL_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builder_matches_every_trace),
        cmocka_unit_test(test_builder_counts),
        cmocka_unit_test(test_trace_errors),
        cmocka_unit_test(test_grammar),
        cmocka_unit_test(test_retype_fp32),
        cmocka_unit_test(test_dtype_names),
        cmocka_unit_test(test_memory_footprint),
        cmocka_unit_test(test_fp8_checkpoint),
        cmocka_unit_test(test_layer_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
