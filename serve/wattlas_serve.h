/* A serving engine with vLLM's semantics, simulated step by step: requests
 * of mixed prompt and output lengths arrive (all at once, or Poisson), a
 * scheduler batches them under a token budget, a sequence limit and a paged
 * KV cache (preempting and recomputing when the cache runs out), and each
 * step's time and energy come from core/'s evaluator over the kernels of
 * that step (wl_core_build_serve_step: one tensor-parallel rank's, with
 * the collectives on the system's links), cached by batch, token and
 * context buckets. serve/engine.c is the scheduler, serve/steps.c the step costs,
 * serve/requests.c the request mixes, serve/run.c the grid over GPUs,
 * clocks and engine settings and the search for clocks under an SLO. */
#ifndef WATTLAS_SERVE_H
#define WATTLAS_SERVE_H

#include <stdio.h>

#include "../core/wattlas_core.h"
#include "../results/wattlas_results.h"
#include "../cluster/wattlas_cluster.h"

/* ---- requests ------------------------------------------------------------------- */

/* Prompt and output lengths and arrival times, in the order they are sent. */
typedef struct wl_serve_requests wl_serve_requests;
/* From a workload preset (presets/workloads/, or an INI path): n requests
 * (0: the preset's count) drawn with seed. */
int wl_serve_requests_preset(const char *id_or_path, long long n, unsigned long long seed,
                             wl_serve_requests **out, wl_error *err);
/* From a CSV with prompt_tokens and output_tokens columns (a row a request);
 * n > 0 takes the first n rows, repeating the file as needed. */
int wl_serve_requests_csv(const char *path, long long n, wl_serve_requests **out, wl_error *err);
/* n requests of one prompt and one output length. */
int wl_serve_requests_fixed(long long n, long long prompt, long long output,
                            wl_serve_requests **out, wl_error *err);
void wl_serve_requests_free(wl_serve_requests *r);
size_t wl_serve_requests_count(const wl_serve_requests *r);
void wl_serve_requests_get(const wl_serve_requests *r, size_t i, long long *prompt,
                           long long *output);
/* The served model's answers: the outputs drawn again from a histogram of
 * nb bins (edges: nb + 1 ascending token counts, numpy's bins; counts: how
 * many fell in each), a bin by its count, then a whole length uniform in it,
 * the last edge the longest; or every output scaled by one factor to a mean
 * of mean tokens (whole, 1 to the longest the requests allow: a preset's
 * output_tokens_max). WL_EINVAL naming source when the histogram or mean
 * cannot be. */
int wl_serve_requests_output_hist(wl_serve_requests *r, const double *edges, const double *counts,
                                  size_t nb, unsigned long long seed, const char *source,
                                  wl_error *err);
int wl_serve_requests_output_mean(wl_serve_requests *r, double mean, const char *source,
                                  wl_error *err);
/* Mean prompt and output lengths. */
void wl_serve_requests_means(const wl_serve_requests *r, double *prompt, double *output);
/* The longest prompt + output, which the engine's max_model_len must hold. */
long long wl_serve_requests_longest(const wl_serve_requests *r);
/* What names the requests in headers and rows ("lm-arena-chat", a file's name). */
const char *wl_serve_requests_name(const wl_serve_requests *r);
/* How the requests ask to be sampled (vLLM's SamplingParams): temperature 0
 * is greedy; top_p 1 and top_k 0 filter nothing. A workload preset's
 * temperature, top_p and top_k, else greedy. */
typedef struct {
    double temperature, top_p;
    long long top_k;
    double repetition_penalty; /* 1: none; else vLLM's penalties run each step */
} wl_serve_sampling;
void wl_serve_requests_sampling(const wl_serve_requests *r, wl_serve_sampling *out);
/* The sampler a step runs for such requests: greedy, temperature alone, or
 * top-k/top-p by vLLM's PyTorch sort, or by FlashInfer's kernel when
 * flashinfer (VLLM_USE_FLASHINFER_SAMPLER=1; off by default until 2026). */
wl_core_sampler wl_serve_sampler(const wl_serve_sampling *s, int flashinfer);

/* ---- the engine ------------------------------------------------------------------- */

/* vLLM's engine arguments, and how requests arrive. Zero fields take vLLM's
 * defaults (wl_serve_engine_defaults). */
typedef struct {
    long long max_num_seqs;           /* running requests at most (256) */
    long long max_num_batched_tokens; /* tokens a step at most: chunked prefill (8192) */
    double gpu_memory_utilization;    /* share of the GPU's memory vLLM takes (0.9) */
    long long block_size;             /* KV-cache block, tokens (16) */
    long long max_capture_size;       /* decode batches up to this run as CUDA
                                         graphs padded to a capture size (512) */
    int async_scheduling;             /* 1: the host's scheduling overlaps the GPU's step */
    wl_core_sampler sampler;          /* each step's sampler (greedy: 0) */
    int penalties;                    /* vLLM's penalties before it (a repetition penalty) */
    /* parallelism (vLLM's tensor_parallel_size, enable_expert_parallel):
     * every layer split over tp GPUs of system, joined by all-reduces on
     * its fabric (serve/steps.c); the run's power and energy are the tp
     * GPUs' sum */
    int tp;                           /* 0 or 1: one GPU */
    int dp;                           /* data-parallel engines, each of tp GPUs with its
                                         own scheduler and cache (0 or 1: one) */
    int ep;                           /* a MoE's experts split whole over the tp
                                         ranks (vLLM's expert parallelism, of
                                         size tp); 0: each expert's width split */
    const wl_cluster_system *system;  /* the GPUs' links, needed when tp > 1 */
    double rate_rps;                  /* Poisson arrivals at this rate; 0: all at once */
    unsigned long long seed;          /* the arrivals' draw */
} wl_serve_engine;
void wl_serve_engine_defaults(wl_serve_engine *e);
/* The sizes vLLM captures CUDA graphs for (1, 2, 4, then multiples of 8 up
 * to max_capture_size); the smallest one >= n, or 0 past the largest. */
long long wl_serve_capture_size(long long n, long long max_capture_size);

/* What a run gives. The steady state is the ML.ENERGY benchmark's window
 * (mlenergy/benchmark/llm/benchmark.py, RequestTracker): it opens when
 * max_num_seqs requests have their first token and closes when requests -
 * max_num_seqs - 1 have finished; a run where the second comes first (or
 * together) has none, its steady fields NaN and steady_why saying why. The
 * run_ fields cover the whole run, first arrival to last token, idle waits
 * included. ITL and TTFT percentiles are the client's, over every request
 * of the whole run, as the benchmark takes them. */
typedef struct {
    /* the steady state */
    double avg_batch;            /* time-weighted running requests */
    double output_tokens_per_s;
    double power_w;
    double energy_per_token_j;
    double energy_per_request_j; /* energy_per_token_j x the mean output length,
                                    the benchmark's energy_per_request_joules */
    double steady_s;             /* the window's length */
    double steady_start_s, steady_end_s; /* from the first arrival */
    int stable;                  /* the benchmark's rule: steady_s >= 20 and
                                    avg_batch >= 0.85 max_num_seqs (this run alone;
                                    the grid adds its group rule) */
    char steady_why[256];        /* "" or why there is no steady state */
    /* the whole run */
    double run_avg_batch, run_output_tokens_per_s, run_power_w;
    double run_energy_per_token_j, run_energy_per_request_j; /* energy_j / requests */
    double time_s;
    double energy_j;
    /* the client's latencies */
    double median_itl_ms, p90_itl_ms, p99_itl_ms;
    double median_ttft_ms, p90_ttft_ms;
    /* the clock the GPU's steps ran at (weighted by their time), and
     * whether a power limit held any step below the requested one */
    double effective_clock_mhz;
    int throttled;
    long long steps, preemptions;
    long long kv_cache_tokens; /* the cache's capacity */
} wl_serve_result;

/* One step of a run (or an idle wait for the next arrival: running 0), as
 * a step log gives it (wl_serve_sim_log): the window's columns are sums and
 * means over the records with steady set. */
typedef struct {
    long long step;          /* 0, 1, ...; idle waits are records too */
    int replica;             /* the data-parallel engine it is of (0 with one) */
    double start_s, time_s;  /* from the first arrival */
    double energy_j;
    long long running;       /* requests in the step (those finishing in it included) */
    long long decode_seqs;   /* of them, decoding a token */
    long long prefill_tokens; /* prompt (and recomputed) tokens computed */
    long long sampled_tokens; /* tokens the step gave requests */
    long long cache_tokens;  /* KV-cache blocks the step holds, in tokens */
    double comm_s;           /* of time_s, the tensor-parallel collectives' */
    long long started, finished, waiting; /* after the step: requests with a first
                                             token, done, and queued */
    int steady;              /* the step lies in the steady state */
} wl_serve_step_rec;

/* A simulator for one GPU (or the engine's tp of them, in lockstep), model
 * and engine: owns the step-cost cache,
 * which every run on it shares (the costs depend on the operating point,
 * which is part of the cache's key). Not thread-safe. */
typedef struct wl_serve_sim wl_serve_sim;
int wl_serve_sim_create(const wl_core_gpu *gpu, const wl_core_model *model, wl_dtype dtype,
                        const wl_serve_engine *engine, wl_serve_sim **out, wl_error *err);
void wl_serve_sim_free(wl_serve_sim *s);
/* Whether the requests fit: WL_EINVAL naming the field when the model's
 * weights leave no cache, or a request is longer than the cache holds. */
int wl_serve_sim_check(const wl_serve_sim *s, const wl_serve_requests *r, wl_error *err);
/* Runs the requests: steps with prompt tokens at prefill_op, decode-only
 * steps at decode_op (the same op for one clock). */
int wl_serve_sim_run(wl_serve_sim *s, const wl_serve_requests *r, const wl_core_op *prefill_op,
                     const wl_core_op *decode_op, wl_serve_result *res, wl_error *err);
long long wl_serve_sim_kv_tokens(const wl_serve_sim *s);
/* Every later run calls log with each of its steps (NULL: none). */
void wl_serve_sim_log(wl_serve_sim *s, void (*log)(void *user, const wl_serve_step_rec *rec),
                      void *user);

/* ---- a grid of runs, and clocks under an SLO ---------------------------------------- */

#define WL_SERVE_SET_LEN 256
typedef struct {
    const wl_core_gpu *gpus;   /* each with its power limit and host applied */
    size_t n_gpus;
    const char *gpu_set;       /* NULL, or n_gpus texts of WL_SERVE_SET_LEN bytes: the
                                  --set values other than power_limit_w that made
                                  each ("sms=100 l2_size_mb=60"), the rows' set */
    const wl_core_model *model;
    wl_dtype dtype;
    const wl_serve_requests *requests;
    const wl_serve_engine *engines; /* e.g. one per max_num_seqs */
    size_t n_engines;
    const double *clocks;      /* SM clocks, MHz (NULL: each GPU's maximum) */
    size_t n_clocks;
    /* --optimize energy: the lowest-energy point meeting the SLO (NaN: no
     * bound) per GPU and engine; phase_clocks searches prefill and decode
     * clocks apart */
    int optimize;
    double max_itl_ms, max_ttft_ms; /* on p90_itl_ms, p90_ttft_ms */
    int phase_clocks;
    double prefill_clock_mhz;  /* > 0: prefill steps at this clock, decode at the
                                  grid's (as --phase-clocks found them; a row
                                  of it runs again) */
    int all;                   /* with optimize: every point, with meets_slo */
    wl_serve_sampling sampling; /* the requests' sampling, as the rows print it */
    int flashinfer;            /* the sampler asked for (--sampler flashinfer) */
    double output_mean_tokens; /* the answers scaled to this mean (NaN: not), as rows print it */
    wl_results_writer *steps;  /* NULL, or where every run's steps go (wl_serve_step_cols) */
    void (*note)(void *user, const char *line);
    void *user;
} wl_serve_grid;
const wl_results_col *wl_serve_cols(size_t *n);
/* A step log's columns: the run's gpu, tp, max_num_seqs, clocks and power
 * limit, then wl_serve_step_rec's fields (time_ms the step's). */
const wl_results_col *wl_serve_step_cols(size_t *n);
/* Runs the grid and writes its rows. Notes (an SLO no point meets) go
 * to note. */
int wl_serve_grid_run(const wl_serve_grid *g, wl_results_writer *w, wl_error *err);

/* ---- a study from options ------------------------------------------------------------
 * 'wattlas serve' and Python's wattlas.serve: keys are the CLI's option names
 * with '_' for '-' (gpu, model, dtype, host, set KEY=LIST, clock, workload,
 * requests, prompt_tokens, output_tokens, seed, rate, temperature, top_p,
 * top_k, repetition_penalty, sampler, output_mean_tokens, max_num_seqs, max_num_batched_tokens,
 * tp, ep, dp, system,
 * gpu_memory_utilization, async_scheduling, optimize, max_itl_ms,
 * max_ttft_ms, phase_clocks, all); values as text in
 * the number grammar. Unset: h100-sxm-80gb, llama-3-8b, bf16,
 * lm-arena-chat, vLLM's engine defaults, each GPU's maximum clock. */
typedef struct wl_serve_job wl_serve_job;
wl_serve_job *wl_serve_job_create(void);
void wl_serve_job_free(wl_serve_job *j);
int wl_serve_job_set(wl_serve_job *j, const char *key, const char *value, const char *source,
                     wl_error *err);
/* Resolves presets and requests (run calls it when not called). */
int wl_serve_job_finish(wl_serve_job *j, wl_error *err);
/* The requests and their sampling, once finished. */
const wl_serve_requests *wl_serve_job_requests(const wl_serve_job *j);
void wl_serve_job_sampling(const wl_serve_job *j, wl_serve_sampling *out);
/* One line saying what runs, for headers. */
void wl_serve_job_describe(const wl_serve_job *j, char *buf, size_t n);
int wl_serve_job_run(wl_serve_job *j, wl_results_writer *w, void (*note)(void *, const char *),
                     void *user, wl_error *err);
/* The answers drawn from a histogram (wl_serve_requests_output_hist)
 * before any --output-mean-tokens scaling: what validate gives a
 * leaderboard row's own. */
int wl_serve_job_output_hist(wl_serve_job *j, const double *edges, const double *counts,
                             size_t nb, wl_error *err);
/* Where the next runs write every step (wl_serve_step_cols); NULL: nowhere. */
void wl_serve_job_step_log(wl_serve_job *j, wl_results_writer *w);
/* A job of one GPU, one max_num_seqs and at most one clock (its maximum
 * when none) run once, its result in res. */
int wl_serve_job_result(wl_serve_job *j, wl_serve_result *res, wl_error *err);

/* ---- scoring measured serving rows ---------------------------------------------------
 * A CSV with serve's columns (python3 -m wattlas.measure serve writes
 * them): per row gpu, model, dtype, max_num_seqs, sm_clock_mhz, and the
 * requests (workload, or prompt_tokens and output_tokens; requests, seed),
 * optionally max_num_batched_tokens, async_scheduling, temperature, top_p,
 * top_k, power_limit_w, tp, ep, dp, system; measured median_itl_ms, p90_itl_ms, power_w,
 * energy_per_token_j, output_tokens_per_s. Each row is simulated on its
 * GPU's preset (or gpu, when given) and written with its predictions. */
int wl_serve_is_measurement(const char *path);
/* Whether a loaded table is in the ML.ENERGY leaderboard's schema
 * (model_id, gpu_model, energy_per_token_joules): validate runs each row as
 * the benchmark ran it (serve/validate.c says how). */
int wl_serve_is_leaderboard(const wl_results_table *t);
const wl_results_col *wl_serve_validate_cols(size_t *n);
typedef struct {
    size_t rows, scored;
    double mape_itl, mape_power, mape_energy, mape_rate; /* percent over the scored rows */
} wl_serve_validation;
int wl_serve_validate(const char *path, const char *gpu, const char *host, wl_results_writer *w,
                      void (*note)(void *, const char *), void *user, wl_serve_validation *out,
                      wl_error *err);

#endif
