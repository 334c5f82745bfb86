/* Errors, enum names and parsers shared by the core. */
#include <ctype.h>
#include "wattlas_core.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

const char *wl_core_strerror(int status)
{
    switch (status) {
    case WL_OK: return "success";
    case WL_EINVAL: return "invalid argument";
    case WL_ENOMEM: return "out of memory";
    case WL_EIO: return "input/output error";
    case WL_EPARSE: return "parse error";
    case WL_ENOTFOUND: return "not found";
    case WL_EUNSUPPORTED: return "unsupported";
    case WL_ENOCONV: return "did not converge";
    case WL_ESTOPPED: return "stopped";
    default: return "unknown error";
    }
}

/* The flag a caller's handler sets (an int written by a signal handler:
 * sig_atomic_t is int on every platform we build for). One per process:
 * signals are. */
static volatile int *stop_flag;

void wl_stop_watch(volatile int *flag) { stop_flag = flag; }

int wl_stop_requested(void)
{
    volatile int *f = stop_flag;
    return f && *f;
}

void wl_error_set(wl_error *err, const char *source, int line, const char *field,
                  const char *fmt, ...)
{
    if (!err)
        return;
    snprintf(err->source, sizeof err->source, "%s", source ? source : "");
    err->line = line;
    snprintf(err->field, sizeof err->field, "%s", field ? field : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->text, sizeof err->text, fmt, ap);
    va_end(ap);
}

void wl_error_locate(wl_error *err, const char *source, int line)
{
    if (!err)
        return;
    snprintf(err->source, sizeof err->source, "%s", source ? source : "");
    err->line = line;
}

void wl_error_format(const wl_error *err, char *buf, size_t n)
{
    char where[300] = "";
    if (err->source[0] && err->line > 0)
        snprintf(where, sizeof where, "%s:%d: ", err->source, err->line);
    else if (err->source[0])
        snprintf(where, sizeof where, "%s: ", err->source);
    if (err->field[0])
        snprintf(buf, n, "%s%s: %s", where, err->field, err->text);
    else
        snprintf(buf, n, "%s%s", where, err->text);
}

static const char *const dtype_names[WL_DT_COUNT] = {"fp32", "tf32", "fp16", "bf16", "fp8", "int8"};

const char *wl_dtype_name(wl_dtype dt)
{
    return (unsigned)dt < WL_DT_COUNT ? dtype_names[dt] : "?";
}

int wl_dtype_parse(const char *s, wl_dtype *out)
{
    /* framework spellings too: torch.bfloat16, float16, half, float32, float */
    static const struct { const char *name; wl_dtype dt; } alias[] = {
        {"bfloat16", WL_DT_BF16}, {"float16", WL_DT_FP16}, {"half", WL_DT_FP16},
        {"float32", WL_DT_FP32},  {"float", WL_DT_FP32},   {"int8", WL_DT_INT8},
    };
    char low[32];
    size_t n = 0;
    if (strncmp(s, "torch.", 6) == 0)
        s += 6;
    for (; s[n] && n + 1 < sizeof low; n++)
        low[n] = (char)(s[n] >= 'A' && s[n] <= 'Z' ? s[n] - 'A' + 'a' : s[n]);
    low[n] = 0;
    if (s[n])
        return WL_EINVAL;
    for (int i = 0; i < WL_DT_COUNT; i++)
        if (strcmp(low, dtype_names[i]) == 0) {
            *out = (wl_dtype)i;
            return WL_OK;
        }
    for (size_t i = 0; i < sizeof alias / sizeof *alias; i++)
        if (strcmp(low, alias[i].name) == 0) {
            *out = alias[i].dt;
            return WL_OK;
        }
    return WL_EINVAL;
}

double wl_dtype_bytes(wl_dtype dt)
{
    switch (dt) {
    case WL_DT_FP32: case WL_DT_TF32: return 4.0; /* tf32 is stored as fp32 */
    case WL_DT_FP16: case WL_DT_BF16: return 2.0;
    case WL_DT_FP8: case WL_DT_INT8: return 1.0;
    default: return 4.0;
    }
}

static const char *const kind_names[WL_K_COUNT] = {
    "gemm", "flash_attention", "softmax", "layernorm", "rmsnorm", "reduce", "elementwise", "gap",
    "measured"};

const char *wl_kernel_kind_name(wl_kernel_kind k)
{
    return (unsigned)k < WL_K_COUNT ? kind_names[k] : "?";
}

/* Names follow the trace format of shared/data/traces (plus "copy"). */
static const char *const ew_names[WL_EW_COUNT] = {
    "pointwise_add", "pointwise_mul", "scalar_add", "scalar_mul", "relu", "gelu", "silu",
    "tanh", "typecast_to_fp32", "typecast_to_bf16", "unspecified_scalar",
    "unspecified_tensor", "copy", "ternary", "dropout", "dropout_backward", "fill",
    "silu_and_mul"};

const char *wl_ew_op_name(wl_ew_op op)
{
    return (unsigned)op < WL_EW_COUNT ? ew_names[op] : "?";
}

int wl_ew_op_parse(const char *s, wl_ew_op *out)
{
    for (int i = 0; i < WL_EW_COUNT; i++)
        if (strcmp(s, ew_names[i]) == 0) {
            *out = (wl_ew_op)i;
            return WL_OK;
        }
    return WL_EINVAL;
}

/* The model families in wl_style's order: a new WL_STYLE_* gets its name
 * here, the only list of them (ARCHITECTURE.md, "A model family"). */
static const char *const style_names[] = {"gpt2", "bert", "opt", "llama", "vit", "resnet"};
#define N_STYLES (sizeof style_names / sizeof *style_names)

const char *wl_style_name(wl_style s)
{
    return (unsigned)s < N_STYLES ? style_names[s] : "?";
}

int wl_style_parse(const char *s, wl_style *out)
{
    for (int i = 0; i < (int)N_STYLES; i++)
        if (strcmp(s, style_names[i]) == 0) {
            *out = (wl_style)i;
            return WL_OK;
        }
    return WL_EINVAL;
}

static const char *const act_names[] = {"relu", "gelu", "gelu-tanh", "swiglu"};

const char *wl_activation_name(wl_activation a)
{
    return (unsigned)a <= WL_ACT_SWIGLU ? act_names[a] : "?";
}

int wl_activation_parse(const char *s, wl_activation *out)
{
    for (int i = 0; i <= (int)WL_ACT_SWIGLU; i++)
        if (strcmp(s, act_names[i]) == 0) {
            *out = (wl_activation)i;
            return WL_OK;
        }
    return WL_EINVAL;
}

int wl_attention_parse(const char *s, wl_attention *out)
{
    if (strcmp(s, "eager") == 0) { *out = WL_ATTN_EAGER; return WL_OK; }
    if (strcmp(s, "flash") == 0) { *out = WL_ATTN_FLASH; return WL_OK; }
    return WL_EINVAL;
}

const char *wl_attention_name(wl_attention a)
{
    return a == WL_ATTN_FLASH ? "flash" : "eager";
}

/* A name table and its lookup: names[i] for enum value i. */
static int name_find(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

static const char *const phase_names[WL_PHASE_COUNT] = {"forward", "backward", "optimizer",
                                                        "decode"};
const char *wl_phase_name(wl_phase p)
{
    return (unsigned)p < WL_PHASE_COUNT ? phase_names[p] : "?";
}

static const char *const mode_names[WL_MODE_COUNT] = {"prefill", "train", "decode"};
const char *wl_mode_name(wl_mode m)
{
    return (unsigned)m < WL_MODE_COUNT ? mode_names[m] : "?";
}

int wl_mode_parse(const char *s, wl_mode *out)
{
    int i = name_find(mode_names, WL_MODE_COUNT, s);
    /* the spellings of measurement files and of other tools */
    if (i < 0 && (!strcmp(s, "inference") || !strcmp(s, "forward")))
        i = WL_MODE_PREFILL;
    if (i < 0 && (!strcmp(s, "training") || !strcmp(s, "train_step")))
        i = WL_MODE_TRAIN;
    if (i < 0 && (!strcmp(s, "generate") || !strcmp(s, "generation")))
        i = WL_MODE_DECODE;
    if (i < 0)
        return WL_EINVAL;
    *out = (wl_mode)i;
    return WL_OK;
}

static const char *const optim_names[] = {"adamw", "sgd", "none"};
const char *wl_optimizer_name(wl_optimizer o)
{
    return (unsigned)o <= WL_OPTIM_NONE ? optim_names[o] : "?";
}

int wl_optimizer_parse(const char *s, wl_optimizer *out)
{
    int i = name_find(optim_names, 3, s);
    if (i < 0)
        return WL_EINVAL;
    *out = (wl_optimizer)i;
    return WL_OK;
}

static const char *const recompute_names[] = {"none", "selective", "full"};
const char *wl_recompute_name(wl_recompute r)
{
    return (unsigned)r <= WL_RECOMPUTE_FULL ? recompute_names[r] : "?";
}

int wl_recompute_parse(const char *s, wl_recompute *out)
{
    int i = name_find(recompute_names, 3, s);
    if (i < 0)
        return WL_EINVAL;
    *out = (wl_recompute)i;
    return WL_OK;
}

static const char *const finetune_names[] = {"full", "lora"};
const char *wl_finetune_name(wl_finetune f)
{
    return (unsigned)f <= WL_FT_LORA ? finetune_names[f] : "?";
}

int wl_finetune_parse(const char *s, wl_finetune *out)
{
    int i = name_find(finetune_names, 2, s);
    if (i < 0)
        return WL_EINVAL;
    *out = (wl_finetune)i;
    return WL_OK;
}

/* LoRA's targets by the names of Llama's projections (q_proj ... down_proj;
 * the _proj may be written), or a group; other families map theirs onto
 * them (core/build_layer.c: GPT-2's fused c_attn is q, k and v at once, a
 * two-layer MLP's first projection up, its second down). */
int wl_lora_targets_parse(const char *s, unsigned *out)
{
    static const struct {
        const char *name;
        unsigned bits;
    } t[] = {{"q", WL_LORA_Q}, {"k", WL_LORA_K}, {"v", WL_LORA_V}, {"o", WL_LORA_O},
             {"gate", WL_LORA_GATE}, {"up", WL_LORA_UP}, {"down", WL_LORA_DOWN},
             {"attention", WL_LORA_ATTENTION},
             {"mlp", WL_LORA_GATE | WL_LORA_UP | WL_LORA_DOWN}, {"all", WL_LORA_ALL}};
    unsigned bits = 0;
    const char *p = s;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        size_t n = strcspn(p, ", \t");
        const char *q = p + n;
        while (*q == ' ' || *q == '\t')
            q++;
        if (n > 5 && !strncmp(p + n - 5, "_proj", 5))
            n -= 5;
        size_t i;
        for (i = 0; i < sizeof t / sizeof *t; i++)
            if (strlen(t[i].name) == n && !strncmp(p, t[i].name, n))
                break;
        if (n == 0 || i == sizeof t / sizeof *t)
            return WL_EINVAL;
        bits |= t[i].bits;
        if (*q == 0)
            break;
        if (*q != ',')
            return WL_EINVAL;
        p = q + 1;
    }
    *out = bits;
    return WL_OK;
}

static const char *const launch_names[] = {"eager", "graphs"};
const char *wl_launch_name(wl_launch l)
{
    return (unsigned)l <= WL_LAUNCH_GRAPHS ? launch_names[l] : "?";
}

int wl_launch_parse(const char *s, wl_launch *out)
{
    int i = name_find(launch_names, 2, s);
    if (i < 0)
        return WL_EINVAL;
    *out = (wl_launch)i;
    return WL_OK;
}

static const char *const stack_names[WL_STACK_COUNT] = {"hf5", "hf4"};

const char *wl_stack_name(wl_stack s)
{
    return (unsigned)s < WL_STACK_COUNT ? stack_names[s] : "?";
}

int wl_stack_parse(const char *s, wl_stack *out)
{
    int i = name_find(stack_names, WL_STACK_COUNT, s);
    if (i < 0)
        return WL_EINVAL;
    *out = (wl_stack)i;
    return WL_OK;
}

static const char *const impl_names[WL_IMPL_COUNT] = {"hf-eager", "fused"};

const char *wl_impl_name(wl_impl i)
{
    return (unsigned)i < WL_IMPL_COUNT ? impl_names[i] : "?";
}

int wl_impl_parse(const char *s, wl_impl *out)
{
    int i = name_find(impl_names, WL_IMPL_COUNT, s);
    if (i < 0)
        return WL_EINVAL;
    *out = (wl_impl)i;
    return WL_OK;
}

static const char *const class_names[WL_CLASS_COUNT] = {
    "gemm", "batched_gemm", "flash_attention", "softmax", "norm", "elementwise", "gap", "other"};

const char *wl_core_class_name(int cls)
{
    return (cls >= 0 && cls < WL_CLASS_COUNT) ? class_names[cls] : "?";
}

int wl_core_read_file(const char *path, char **out, size_t *len, wl_error *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        wl_error_set(err, path, 0, "", "cannot open: %s", strerror(errno));
        return WL_EIO;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        wl_error_set(err, path, 0, "", "is a directory, not a file");
        return WL_EIO;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    int too_big = 0;
    while (buf) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1)
            break;
        /* no input of ours is this large; a device (/dev/zero) never ends */
        if (cap >= WL_MAX_FILE_BYTES) {
            too_big = 1;
            break;
        }
        cap *= 2;
        char *nb = realloc(buf, cap);
        if (!nb) {
            free(buf);
            buf = NULL;
        } else {
            buf = nb;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (too_big) {
        free(buf);
        wl_error_set(err, path, 0, "", "larger than %d MiB", WL_MAX_FILE_BYTES >> 20);
        return WL_EIO;
    }
    if (!buf || bad) {
        free(buf);
        wl_error_set(err, path, 0, "", bad ? "read error" : "out of memory");
        return bad ? WL_EIO : WL_ENOMEM;
    }
    buf[n] = 0;
    *out = buf;
    if (len)
        *len = n;
    return WL_OK;
}

void wl_core_say(void (*say)(void *user, const char *line), void *user, const char *fmt, ...)
{
    if (!say)
        return;
    char line[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    say(user, line);
}

char *wl_core_strprintf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *p = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!p)
        return NULL;
    va_start(ap, fmt);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return p;
}

/* ---- names: suggestions for a misspelt one ------------------------------- */

/* Edit distance of two short names, case-insensitive, a swap of two
 * neighbours counting one ("modle" is one from "model": optimal string
 * alignment, Damerau 1964); names past 63 characters are cut. */
static int edit_distance(const char *a, const char *b)
{
    int d[64][64];
    size_t la = strlen(a), lb = strlen(b);
    la = la > 63 ? 63 : la;
    lb = lb > 63 ? 63 : lb;
    for (size_t i = 0; i <= la; i++)
        d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int ai = tolower((unsigned char)a[i - 1]), bj = tolower((unsigned char)b[j - 1]);
            int best = d[i - 1][j - 1] + (ai != bj);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && ai == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == bj && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    if (!n)
        return 0;
    for (; *hay; hay++) {
        size_t k = 0;
        while (k < n && hay[k] && tolower((unsigned char)hay[k]) == tolower((unsigned char)needle[k]))
            k++;
        if (k == n)
            return 1;
    }
    return 0;
}

void wl_core_name_hint(const char *(*cand_of)(void *user, size_t i), void *user, size_t n,
                      const char *id, char *buf, size_t cap)
{
    buf[0] = 0;
    size_t used = 0, shown = 0, len = strlen(id);
    int far = len < 6 ? 2 : (int)(len / 3);
    /* by spelling, only the nearest: "--modle" is one from --model and
     * --mode, two from --idle */
    for (size_t i = 0; i < n; i++) {
        const char *cand = cand_of(user, i);
        int dist = cand ? edit_distance(cand, id) : far + 1;
        if (dist < far)
            far = dist;
    }
    for (int pass = 0; pass < 2 && !shown; pass++)
        for (size_t i = 0; i < n && shown < 6; i++) {
            const char *cand = cand_of(user, i);
            if (!cand || !(pass == 0 ? contains_ci(cand, id) : edit_distance(cand, id) <= far))
                continue;
            int w = snprintf(buf + used, cap - used, "%s%s", shown ? ", " : "; did you mean ", cand);
            if (w < 0 || (size_t)w >= cap - used) {
                buf[used] = 0;
                break;
            }
            used += (size_t)w;
            shown++;
        }
    if (shown && used + 1 < cap) {
        buf[used++] = '?';
        buf[used] = 0;
    }
}
