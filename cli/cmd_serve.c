/* wattlas serve */
#include "cli.h"
#include "../serve/wattlas_serve.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(FILE *f)
{
    fprintf(f,
"usage: wattlas serve [--gpu LIST] [--model ID] [--dtype DT] [--clock LIST]\n"
"                     [--set KEY=LIST] [--power-limit-w LIST] [--host ID] [--workload ID|FILE.csv]\n"
"                     [--prompt-tokens N --output-tokens N] [--output-mean-tokens N]\n"
"                     [--requests N] [--seed N]\n"
"                     [--rate RPS] [--temperature T] [--top-p P] [--top-k K]\n"
"                     [--repetition-penalty R]\n"
"                     [--sampler native|flashinfer]\n"
"                     [--max-num-seqs LIST] [--max-num-batched-tokens N]\n"
"                     [--tp LIST [--ep N] [--system ID]] [--dp LIST]\n"
"                     [--gpu-memory-utilization F] [--async-scheduling]\n"
"                     [--optimize energy [--max-itl-ms X] [--max-ttft-ms Y]\n"
"                      [--phase-clocks] [--all]] [-o FILE] [--format FMT] [--quiet]\n\n"
"A serving engine with vLLM's semantics, simulated step by step: requests of\n"
"mixed prompt and output lengths are batched under a token budget per step\n"
"(--max-num-batched-tokens: chunked prefill), a limit on running requests\n"
"(--max-num-seqs) and a paged KV cache sized from the memory the weights and\n"
"activations leave (--gpu-memory-utilization), preempting the latest request\n"
"and recomputing it when the cache runs out. Decode batches run as CUDA graphs\n"
"padded to vLLM's capture sizes; steps with prompt tokens run eagerly; the\n"
"sampler and the engine's host step (the host preset's serve_step_us and\n"
"serve_seq_us) are in every step, overlapped with the GPU with\n"
"--async-scheduling. Each step's time and energy come from its kernels.\n"
"  --gpu LIST          GPUs (default h100-sxm-80gb); --set KEY=LIST for variants\n"
"  --power-limit-w LIST  board power limits, W (--set power_limit_w=LIST)\n"
"  --model ID          a decoder preset (default llama-3-8b); --dtype (default bf16)\n"
"  --clock LIST        SM clocks, MHz (default each GPU's maximum)\n"
"  --prefill-clock MHZ  prefill steps at this clock, decode steps at --clock's\n"
"                      (a --phase-clocks row's prefill_clock_mhz, run again)\n"
"  --workload ID|FILE.csv  the requests: a workload preset (default lm-arena-chat,\n"
"                      'wattlas presets show lm-arena-chat' gives its sources) or a\n"
"                      CSV with prompt_tokens and output_tokens columns\n"
"  --prompt-tokens N --output-tokens N  every request alike instead\n"
"  --output-mean-tokens N  the answers scaled to a mean of N tokens (each by\n"
"                      one factor, at most the workload's longest): the served\n"
"                      model's own length, e.g. the leaderboard's avg_output_len\n"
"  --requests N        how many (default: the preset's, 1024; a CSV's rows)\n"
"  --rate RPS          Poisson arrivals at RPS requests/s (default: all at once,\n"
"                      saturated, as the ML.ENERGY benchmark runs)\n"
"  --temperature T --top-p P --top-k K  how requests are sampled (default: the\n"
"                      workload preset's, lm-arena-chat: 0.8 and 0.95 as ML.ENERGY\n"
"                      sends; greedy for fixed lengths and CSVs; temperature 0:\n"
"                      greedy). Top-p or top-k sorts every row of logits\n"
"                      (vLLM's PyTorch sampler), unless --sampler flashinfer\n"
"                      (VLLM_USE_FLASHINFER_SAMPLER=1)\n"
"  --repetition-penalty R  the requests' (default: the workload preset's,\n"
"                      lm-arena-chat: 1.1 as ML.ENERGY sends; else 1, none):\n"
"                      other than 1, vLLM's penalty kernels run every step\n"
"  --max-num-seqs LIST  running requests at most (default 256)\n"
"  --tp LIST           tensor parallelism: every layer split over N GPUs as vLLM's\n"
"                      --tensor-parallel-size splits it, its all-reduces on the\n"
"                      links of --system (default: the system preset built of\n"
"                      the GPU, dgx-h100 for h100-sxm-80gb); power and energy\n"
"                      columns sum the GPUs (gpus says how many)\n"
"  --ep N              a mixture of experts' experts split whole over the N GPUs\n"
"                      (vLLM's --enable-expert-parallel: its group is --tp's,\n"
"                      which N gives when --tp is not given); without it each\n"
"                      expert's width is split\n"
"  --dp LIST           data parallelism: N engines of --tp GPUs each, each with its\n"
"                      own scheduler, max_num_seqs and KV cache (vLLM's\n"
"                      --data-parallel-size), the requests dealt round robin;\n"
"                      the steady state's counts are theirs together (dp x\n"
"                      max_num_seqs). Dense models\n"
"  --optimize energy   the lowest-energy clock (and cap, over\n"
"                      --power-limit-w) per GPU and max_num_seqs that meets the SLO:\n"
"                      p90_itl_ms <= --max-itl-ms, p90_ttft_ms <= --max-ttft-ms;\n"
"                      --phase-clocks: prefill steps and decode steps at separate\n"
"                      clocks; --all: every point with meets_slo. Without --clock,\n"
"                      24 of the GPU's clocks\n"
"  -o FILE --format csv|ndjson|json|table  where and how (default: FILE's\n"
"                      extension says, else a table)\n"
"  --steps FILE        every run's steps (and idle waits) as rows: when each\n"
"                      starts, its time, energy, running requests, prompt tokens,\n"
"                      sampled tokens, and whether it is in the steady state\n"
"Columns. The steady state is the ML.ENERGY benchmark's window: from when\n"
"max_num_seqs requests have their first token until requests - max_num_seqs - 1\n"
"have finished (steady_start_s, steady_end_s, steady_s). avg_batch,\n"
"output_tokens_per_s, power_w and energy_per_token_j cover it, and\n"
"energy_per_request_j is energy_per_token_j x the mean output, as the\n"
"benchmark reports them; a run without one leaves them empty and says why.\n"
"stable is the benchmark's rule: a window of 20 s or more, avg_batch at least\n"
"0.85 max_num_seqs, and every smaller max_num_seqs of the same GPU and clocks\n"
"stable too. The ITL (the time between a request's tokens) and TTFT (arrival\n"
"to first token, queueing included) percentiles are the client's, over every\n"
"request of the whole run. The run_ columns, time_s and energy_j cover the\n"
"whole run, idle waits included; --optimize ranks by run_energy_per_request_j.\n"
"effective_clock_mhz is the clock the steps ran at (weighted by their time),\n"
"throttled whether a power limit held any step below it.\n");
}

typedef struct {
    wl_serve_job *job;
    const char *out, *steps;
    wl_results_format format;
    int quiet, format_given;
} serve_opts;

static const char *const valued[] = {
    "gpu", "model", "dtype", "host", "set", "power-limit-w", "clock", "workload", "requests", "prompt-tokens",
    "output-tokens", "seed", "rate", "temperature", "top-p", "top-k", "repetition-penalty",
    "sampler",
    "max-num-seqs", "max-num-batched-tokens", "tp", "ep", "dp", "system",
    "gpu-memory-utilization", "optimize", "max-itl-ms", "max-ttft-ms", "prefill-clock",
    "output-mean-tokens"};
static const char *const flags[] = {"async-scheduling", "phase-clocks", "all"};
#define NV (sizeof valued / sizeof *valued)
#define NF (sizeof flags / sizeof *flags)

static int serve_parse(int argc, char **argv, serve_opts *o)
{
    const char *cmd = "serve";
    enum { O_FORMAT = 1000, O_QUIET, O_HELP, O_STEPS };
    struct option lo[NV + NF + 5];
    size_t n = 0;
    for (size_t i = 0; i < NV; i++)
        lo[n++] = (struct option){valued[i], required_argument, 0, 256 + (int)i};
    for (size_t i = 0; i < NF; i++)
        lo[n++] = (struct option){flags[i], no_argument, 0, 512 + (int)i};
    lo[n++] = (struct option){"format", required_argument, 0, O_FORMAT};
    lo[n++] = (struct option){"quiet", no_argument, 0, O_QUIET};
    lo[n++] = (struct option){"steps", required_argument, 0, O_STEPS};
    lo[n++] = (struct option){"help", no_argument, 0, O_HELP};
    lo[n] = (struct option){0, 0, 0, 0};
    optind = 1;
    opterr = 0;
    int c, rc = 0;
    wl_error err = {0};
    while (!rc && (c = getopt_long(argc, argv, ":o:", lo, NULL)) != -1) {
        char key[64], src[80];
        if (c >= 256 && c < 256 + (int)NV) {
            const char *name = valued[c - 256];
            snprintf(key, sizeof key, "%s", name);
            for (char *p = key; *p; p++)
                *p = *p == '-' ? '_' : *p;
            snprintf(src, sizeof src, "--%s", name);
            if (wl_serve_job_set(o->job, key, optarg, src, &err))
                rc = cli_fail(cmd, &err);
            continue;
        }
        if (c >= 512 && c < 512 + (int)NF) {
            snprintf(key, sizeof key, "%s", flags[c - 512]);
            for (char *p = key; *p; p++)
                *p = *p == '-' ? '_' : *p;
            snprintf(src, sizeof src, "--%s", flags[c - 512]);
            if (wl_serve_job_set(o->job, key, "on", src, &err))
                rc = cli_fail(cmd, &err);
            continue;
        }
        switch (c) {
        case 'o': o->out = optarg; break;
        case O_FORMAT:
            rc = cli_format(cmd, optarg, &o->format);
            o->format_given = 1;
            break;
        case O_QUIET: o->quiet = 1; break;
        case O_STEPS: o->steps = optarg; break;
        case O_HELP: help(stdout); return CLI_HELP;
        default: rc = cli_bad_option(cmd, c, argc, argv, lo); break;
        }
    }
    if (!rc && optind < argc)
        rc = cli_usage(cmd, "unexpected argument '%.60s'", argv[optind]);
    if (!rc && o->steps && !strcmp(o->steps, "-") && !strcmp(o->out, "-"))
        rc = cli_usage(cmd, "--steps - and the rows would both go to stdout: give -o FILE or "
                            "--steps FILE");
    if (!o->format_given)
        o->format = cli_format_of_path(o->out, WL_FMT_TABLE);
    return rc;
}

int cmd_serve(int argc, char **argv)
{
    const char *cmd = "serve";
    cli_short_help(argc, argv);
    serve_opts o = {.out = "-", .format = WL_FMT_TABLE, .job = wl_serve_job_create()};
    if (!o.job) {
        fprintf(stderr, "wattlas serve: out of memory\n");
        return EXIT_RUNTIME;
    }
    int rc = serve_parse(argc, argv, &o);
    wl_error err = {0};
    if (!rc && wl_serve_job_finish(o.job, &err))
        rc = cli_fail(cmd, &err);
    if (rc) {
        wl_serve_job_free(o.job);
        return rc == CLI_HELP ? 0 : rc;
    }
    size_t nc, ns;
    const wl_results_col *cols = wl_serve_cols(&nc), *scols = wl_serve_step_cols(&ns);
    cli_rows rows, steps;
    /* the step log in place before the rows: rows are never left without
     * the log they were asked with */
    rc = o.steps ? cli_rows_open(cmd, o.steps, cli_format_of_path(o.steps, WL_FMT_CSV), scols, ns,
                                 &steps)
                 : 0;
    if (!rc && (rc = (o.steps ? cli_rows_open_held : cli_rows_open)(cmd, o.out, o.format, cols,
                                                                     nc, &rows)) &&
        o.steps)
        cli_rows_close(cmd, &steps, 0);
    if (!rc) {
        char line[400];
        wl_serve_job_describe(o.job, line, sizeof line);
        wl_results_writer_note(rows.w, "serve: %s", line);
        if (o.steps)
            wl_serve_job_step_log(o.job, steps.w);
        if (wl_serve_job_run(o.job, rows.w, o.quiet ? NULL : cli_note, (void *)cmd, &err))
            rc = cli_fail(cmd, &err);
        int src = o.steps ? cli_rows_close(cmd, &steps, !rc) : 0;
        if (!rc)
            rc = src;
        int crc = cli_rows_close(cmd, &rows, !rc);
        if (!rc)
            rc = crc;
    }
    wl_serve_job_free(o.job);
    return rc;
}
