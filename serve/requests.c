/* Request mixes: a workload preset's distributions drawn with a seed, a CSV
 * of measured lengths, or one fixed prompt and output length. */
#include "serve_internal.h"

#include "../presets/wattlas_presets.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define MAX_REQUESTS 4096LL /* fuzz builds: the same checks, an execution in milliseconds */
#else
#define MAX_REQUESTS 10000000LL
#endif

struct wl_serve_requests {
    long long *prompt, *output;
    long long out_cap; /* the longest answer the requests allow */
    size_t n;
    wl_serve_sampling sampling;
    char name[128];
};

static int alloc(size_t n, const char *name, wl_serve_requests **out, wl_error *err)
{
    wl_serve_requests *r = calloc(1, sizeof *r);
    if (r) {
        r->prompt = malloc(n * sizeof *r->prompt);
        r->output = malloc(n * sizeof *r->output);
    }
    if (!r || !r->prompt || !r->output) {
        wl_serve_requests_free(r);
        wl_error_set(err, name, 0, "requests", "out of memory for %zu requests", n);
        return WL_ENOMEM;
    }
    r->n = n;
    r->out_cap = WL_MAX_SEQ;
    r->sampling = (wl_serve_sampling){.temperature = 0, .top_p = 1, .top_k = 0,
                                      .repetition_penalty = 1};
    snprintf(r->name, sizeof r->name, "%s", name);
    *out = r;
    return WL_OK;
}

void wl_serve_requests_free(wl_serve_requests *r)
{
    if (!r)
        return;
    free(r->prompt);
    free(r->output);
    free(r);
}

size_t wl_serve_requests_count(const wl_serve_requests *r)
{
    return r->n;
}

void wl_serve_requests_get(const wl_serve_requests *r, size_t i, long long *prompt,
                           long long *output)
{
    *prompt = r->prompt[i];
    *output = r->output[i];
}

void wl_serve_requests_means(const wl_serve_requests *r, double *prompt, double *output)
{
    double p = 0, o = 0;
    for (size_t i = 0; i < r->n; i++) {
        p += (double)r->prompt[i];
        o += (double)r->output[i];
    }
    *prompt = r->n ? p / (double)r->n : 0;
    *output = r->n ? o / (double)r->n : 0;
}

long long wl_serve_requests_longest(const wl_serve_requests *r)
{
    long long m = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->prompt[i] + r->output[i] > m)
            m = r->prompt[i] + r->output[i];
    return m;
}

void wl_serve_requests_sampling(const wl_serve_requests *r, wl_serve_sampling *out)
{
    *out = r->sampling;
}

wl_core_sampler wl_serve_sampler(const wl_serve_sampling *s, int flashinfer)
{
    if (s->temperature <= 0)
        return WL_SAMPLER_GREEDY;
    if (s->top_p < 1 || s->top_k > 0)
        return flashinfer ? WL_SAMPLER_FLASHINFER : WL_SAMPLER_SORT;
    return WL_SAMPLER_RANDOM;
}

const char *wl_serve_requests_name(const wl_serve_requests *r)
{
    return r->name;
}

static int check_n(long long n, const char *source, wl_error *err)
{
    if (n < 1 || n > MAX_REQUESTS) {
        wl_error_set(err, source, 0, "requests", "expected 1 to %lld requests, got %lld",
                     MAX_REQUESTS, n);
        return WL_EINVAL;
    }
    return WL_OK;
}

static int check_len(long long v, const char *source, int line, const char *field, wl_error *err)
{
    if (v < 1 || v > WL_MAX_SEQ) {
        wl_error_set(err, source, line, field, "expected a whole number of tokens in [1, %lld], got %lld",
                     WL_MAX_SEQ, v);
        return WL_EINVAL;
    }
    return WL_OK;
}

int wl_serve_requests_fixed(long long n, long long prompt, long long output,
                            wl_serve_requests **out, wl_error *err)
{
    *out = NULL;
    if (check_n(n, "--requests", err) || check_len(prompt, "--prompt-tokens", 0, "prompt_tokens", err) ||
        check_len(output, "--output-tokens", 0, "output_tokens", err))
        return WL_EINVAL;
    char name[64];
    snprintf(name, sizeof name, "fixed-p%lld-o%lld", prompt, output);
    if (alloc((size_t)n, name, out, err))
        return WL_ENOMEM;
    for (long long i = 0; i < n; i++) {
        (*out)->prompt[i] = prompt;
        (*out)->output[i] = output;
    }
    return WL_OK;
}

/* ---- a CSV of lengths ------------------------------------------------------------- */

int wl_serve_requests_csv(const char *path, long long n, wl_serve_requests **out, wl_error *err)
{
    *out = NULL;
    if (n < 0 || n > MAX_REQUESTS)
        return check_n(n, path, err);
    wl_results_csv *c = NULL;
    int rc = wl_results_csv_open(path, &c, err);
    if (rc)
        return rc;
    int cp = wl_results_csv_col(c, "prompt_tokens"), co = wl_results_csv_col(c, "output_tokens");
    long long *p = NULL, *o = NULL;
    size_t len = 0, cap = 0;
    if (cp < 0 || co < 0) {
        wl_error_set(err, path, 1, cp < 0 ? "prompt_tokens" : "output_tokens",
                     "a request file needs prompt_tokens and output_tokens columns");
        rc = WL_EPARSE;
    }
    /* --requests N takes the file's first N rows: the rest are not read
     * (issue 77: a file over 10^7 rows was refused with --requests 5) */
    while (!rc && !(n > 0 && len == (size_t)n)) {
        int got = wl_results_csv_next(c, err);
        if (got < 0)
            rc = WL_EPARSE;
        if (got <= 0)
            break;
        double v[2];
        int line = wl_results_csv_line(c);
        for (int k = 0; k < 2 && !rc; k++) {
            const char *field = k ? "output_tokens" : "prompt_tokens";
            int r2 = wl_results_csv_num(c, (size_t)(k ? co : cp), &v[k], err);
            if (r2 == WL_ENOTFOUND) {
                wl_error_set(err, path, line, field, "empty");
                rc = WL_EPARSE;
            } else if (r2) {
                rc = WL_EPARSE;
            } else if (v[k] != floor(v[k]) || v[k] < 1 || v[k] > (double)WL_MAX_SEQ) {
                wl_error_set(err, path, line, field,
                             "expected a whole number of tokens in [1, %lld]", WL_MAX_SEQ);
                rc = WL_EPARSE;
            }
        }
        if (rc)
            break;
        if (len == cap) {
            size_t nc = cap ? 2 * cap : 1024;
            long long *np2 = realloc(p, nc * sizeof *p), *no = np2 ? realloc(o, nc * sizeof *o) : NULL;
            if (np2)
                p = np2;
            if (no)
                o = no;
            if (!np2 || !no) {
                wl_error_set(err, path, line, "requests", "out of memory");
                rc = WL_ENOMEM;
                break;
            }
            cap = nc;
        }
        if (len >= (size_t)MAX_REQUESTS) {
            wl_error_set(err, path, line, "requests", "more than %lld requests", MAX_REQUESTS);
            rc = WL_EPARSE;
            break;
        }
        p[len] = (long long)v[0];
        o[len] = (long long)v[1];
        len++;
    }
    if (!rc && len == 0) {
        wl_error_set(err, path, 0, "requests", "no requests (a header and no rows)");
        rc = WL_EPARSE;
    }
    wl_results_csv_close(c);
    if (!rc) {
        size_t want = n > 0 ? (size_t)n : len;
        const char *base = strrchr(path, '/');
        rc = alloc(want, base ? base + 1 : path, out, err);
        for (size_t i = 0; !rc && i < want; i++) {
            (*out)->prompt[i] = p[i % len];
            (*out)->output[i] = o[i % len];
        }
    }
    free(p);
    free(o);
    return rc;
}

/* ---- a workload preset -------------------------------------------------------------- */

typedef struct {
    double requests, turns_mean, template_tokens, message_tokens;
    double user_mean, user_ratio, hist_mean, hist_ratio, out_mean, out_ratio, out_max;
    double temperature, top_p, top_k, rep; /* optional: greedy, no penalty unless given */
    char id[64];
    int line[16];
    wl_error *err;
} mix;

static const struct {
    const char *key;
    size_t off;
    double lo, hi;
    int optional;
} mix_keys[] = {
    {"requests", offsetof(mix, requests), 1, (double)MAX_REQUESTS, 0},
    {"turns_mean", offsetof(mix, turns_mean), 1, 100, 0},
    {"template_tokens", offsetof(mix, template_tokens), 0, 100000, 0},
    {"message_tokens", offsetof(mix, message_tokens), 0, 1000, 0},
    {"user_tokens_mean", offsetof(mix, user_mean), 1, 1e6, 0},
    {"user_tokens_median_ratio", offsetof(mix, user_ratio), 0.01, 1, 0},
    {"history_tokens_mean", offsetof(mix, hist_mean), 1, 1e6, 0},
    {"history_tokens_median_ratio", offsetof(mix, hist_ratio), 0.01, 1, 0},
    {"output_tokens_mean", offsetof(mix, out_mean), 1, 1e6, 0},
    {"output_tokens_median_ratio", offsetof(mix, out_ratio), 0.01, 1, 0},
    {"output_tokens_max", offsetof(mix, out_max), 1, (double)WL_MAX_SEQ, 0},
    {"temperature", offsetof(mix, temperature), 0, 100, 1},
    {"top_p", offsetof(mix, top_p), 1e-6, 1, 1},
    {"repetition_penalty", offsetof(mix, rep), 0.01, 100, 1},
    {"top_k", offsetof(mix, top_k), 0, 1e9, 1},
};
#define N_MIX (sizeof mix_keys / sizeof *mix_keys)
_Static_assert(N_MIX <= 16, "mix.line holds a line for every key");

static int mix_handler(void *user, const char *section, const char *name, const char *value,
                       int line)
{
    mix *m = user;
    if (strcmp(section, "workload")) {
        wl_error_set(m->err, "", line, name, "unknown section [%.40s] (expected [workload])", section);
        return 0;
    }
    if (!strcmp(name, "id")) {
        snprintf(m->id, sizeof m->id, "%s", value);
        return 1;
    }
    if (!strcmp(name, "name") || !strcmp(name, "aliases") || !strcmp(name, "source"))
        return 1;
    for (size_t i = 0; i < N_MIX; i++)
        if (!strcmp(name, mix_keys[i].key)) {
            double v;
            if (wl_core_parse_real(value, mix_keys[i].lo, mix_keys[i].hi, "", line, name, &v, m->err))
                return 0;
            *(double *)(void *)((char *)m + mix_keys[i].off) = v;
            m->line[i] = line;
            return 1;
        }
    wl_error_set(m->err, "", line, name, "unknown key in [workload]");
    return 0;
}

/* splitmix64's finaliser: also the step-cost cache's hash */
uint64_t wl_serve_i_mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* splitmix64: a seeded stream that is the same on every platform */
static uint64_t next_u64(uint64_t *s)
{
    return wl_serve_i_mix64(*s += 0x9e3779b97f4a7c15ULL);
}

double wl_serve_i_uniform(uint64_t *s)
{
    return ((double)(next_u64(s) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static double normal(uint64_t *s)
{
    double u = wl_serve_i_uniform(s), v = wl_serve_i_uniform(s);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* A lognormal of this mean whose median is ratio x the mean: sigma^2 =
 * 2 ln(mean / median), mu = ln(median). Whole tokens, at least 1. */
static long long lognormal(uint64_t *s, double mean, double ratio, double max)
{
    double med = mean * ratio, sigma = sqrt(-2.0 * log(ratio));
    double v = floor(med * exp(sigma * normal(s)) + 0.5);
    if (v < 1)
        v = 1;
    if (max > 0 && v > max)
        v = max;
    return (long long)v;
}

int wl_serve_requests_preset(const char *id_or_path, long long n, unsigned long long seed,
                             wl_serve_requests **out, wl_error *err)
{
    *out = NULL;
    /* the name every row of fixed requests carries (wl_serve_requests_fixed)
     * names them again: a row runs as it printed */
    long long fp, fo;
    int used = 0;
    if (sscanf(id_or_path, "fixed-p%lld-o%lld%n", &fp, &fo, &used) == 2 && !id_or_path[used])
        return wl_serve_requests_fixed(n ? n : 1024, fp, fo, out, err);
    const char *text;
    char *owned = NULL, src[256];
    int rc = wl_preset_find(WL_PRESET_WORKLOAD, id_or_path, &text, &owned, src, sizeof src, err);
    if (rc)
        return rc;
    mix m = {.err = err, .top_p = 1, .rep = 1};
    rc = wl_preset_ini_parse(text, strlen(text), src, mix_handler, &m, err);
    for (size_t i = 0; !rc && i < N_MIX; i++)
        if (!m.line[i] && !mix_keys[i].optional) {
            wl_error_set(err, src, 0, mix_keys[i].key, "missing in [workload]");
            rc = WL_EPARSE;
        }
    free(owned);
    if (rc)
        return rc;
    if (n == 0)
        n = (long long)m.requests;
    if (check_n(n, src, err))
        return WL_EINVAL;
    if (alloc((size_t)n, m.id[0] ? m.id : src, out, err))
        return WL_ENOMEM;
    if (m.top_k != floor(m.top_k)) {
        wl_serve_requests_free(*out);
        *out = NULL;
        wl_error_set(err, src, m.line[N_MIX - 1], "top_k", "expected a whole number, got %g", m.top_k);
        return WL_EINVAL;
    }
    (*out)->sampling = (wl_serve_sampling){
        .temperature = m.temperature, .top_p = m.top_p, .top_k = (long long)m.top_k,
        .repetition_penalty = m.rep};
    (*out)->out_cap = (long long)m.out_max;
    /* Conversations of T turns, T geometric with mean turns_mean (P(T = t)
     * = p (1 - p)^(t - 1), p = 1 / turns_mean); turn t's request sends the
     * template, t user messages and t - 1 earlier responses, each message
     * with its header, and asks for an answer of the served model's length. */
    uint64_t st = seed ^ 0x5eedf00dULL;
    double p = 1.0 / m.turns_mean;
    long long i = 0;
    while (i < n) {
        long long hist = (long long)m.template_tokens;
        for (int t = 1; i < n; t++) {
            hist += lognormal(&st, m.user_mean, m.user_ratio, 0) + (long long)m.message_tokens;
            long long prompt = hist;
            if (prompt > WL_MAX_SEQ / 2)
                prompt = WL_MAX_SEQ / 2;
            (*out)->prompt[i] = prompt;
            (*out)->output[i] = lognormal(&st, m.out_mean, m.out_ratio, m.out_max);
            i++;
            if (wl_serve_i_uniform(&st) < p)
                break;
            hist += lognormal(&st, m.hist_mean, m.hist_ratio, 0) + (long long)m.message_tokens;
        }
    }
    return WL_OK;
}

/* ---- the served model's answers ---------------------------------------------------- */

int wl_serve_requests_output_hist(wl_serve_requests *r, const double *edges, const double *counts,
                                  size_t nb, unsigned long long seed, const char *source,
                                  wl_error *err)
{
    double total = 0;
    const char *why = NULL;
    if (nb < 1 || nb > 100000)
        why = "expected 1 to 100000 bins";
    for (size_t i = 0; !why && i <= nb; i++)
        if (!isfinite(edges[i]) || edges[i] < 0 || edges[i] > (double)WL_MAX_SEQ ||
            (i > 0 && !(edges[i] > edges[i - 1])))
            why = "expected ascending bin edges in [0, WL_MAX_SEQ] tokens";
    for (size_t i = 0; !why && i < nb; i++) {
        if (!isfinite(counts[i]) || counts[i] < 0)
            why = "expected counts of 0 or more";
        total += counts[i];
    }
    if (!why && !(total > 0))
        why = "every bin is empty";
    if (!why && !(edges[nb] >= 1))
        why = "the bins end below one token";
    if (why) {
        wl_error_set(err, source, 0, "output_tokens", "an output-length histogram: %s", why);
        return WL_EINVAL;
    }
    /* a bin by its share of the counts, then a length uniform within it:
     * numpy's histogram bins, [e_i, e_i+1) and the last one closed */
    uint64_t st = seed ^ 0x0b1a5eedULL;
    for (size_t k = 0; k < r->n; k++) {
        double u = wl_serve_i_uniform(&st) * total, acc = 0;
        size_t b = 0;
        while (b + 1 < nb && (acc += counts[b]) <= u)
            b++;
        while (counts[b] <= 0) /* the float edge: the last bin with a count */
            b--;
        double x = edges[b] + wl_serve_i_uniform(&st) * (edges[b + 1] - edges[b]);
        long long v = (long long)floor(x + 0.5);
        r->output[k] = v < 1 ? 1 : v;
    }
    r->out_cap = (long long)floor(edges[nb] + 0.5);
    if (r->out_cap < 1)
        r->out_cap = 1;
    return WL_OK;
}

/* The mean of the lengths clamp(round(f o_i), 1, cap). */
static double scaled_mean(const wl_serve_requests *r, const long long *o, double f)
{
    double sum = 0;
    for (size_t i = 0; i < r->n; i++) {
        double v = floor(f * (double)o[i] + 0.5);
        sum += v < 1 ? 1 : v > (double)r->out_cap ? (double)r->out_cap : v;
    }
    return sum / (double)r->n;
}

int wl_serve_requests_output_mean(wl_serve_requests *r, double mean, const char *source,
                                  wl_error *err)
{
    if (!(mean >= 1 && mean <= (double)r->out_cap)) {
        wl_error_set(err, source, 0, "output_mean_tokens",
                     "expected a mean of 1 to %lld tokens (the requests' longest answer), got %g",
                     r->out_cap, mean);
        return WL_EINVAL;
    }
    long long *o = malloc(r->n * sizeof *o);
    if (!o) {
        wl_error_set(err, source, 0, "output_mean_tokens", "out of memory");
        return WL_ENOMEM;
    }
    memcpy(o, r->output, r->n * sizeof *o);
    /* The answer's length is the served model's: each length scaled by one
     * factor, whole, at least a token and at most the cap. The mean is
     * monotone in the factor: bisect for it. */
    double lo = 0, hi = 1;
    while (scaled_mean(r, o, hi) < mean && hi < 1e12)
        hi *= 2;
    for (int it = 0; it < 200 && hi - lo > 1e-12 * hi; it++) {
        double mid = 0.5 * (lo + hi);
        if (scaled_mean(r, o, mid) < mean)
            lo = mid;
        else
            hi = mid;
    }
    for (size_t i = 0; i < r->n; i++) {
        double v = floor(hi * (double)o[i] + 0.5);
        r->output[i] = v < 1 ? 1 : v > (double)r->out_cap ? r->out_cap : (long long)v;
    }
    free(o);
    return WL_OK;
}
