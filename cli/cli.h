/* Private to cli/: the command table's entries and the helpers every
 * command uses to parse options and print. Application logic lives in the
 * library; a command parses its options into a struct (X_parse), runs them
 * (X_run) and prints. */
#ifndef WATTLAS_CLI_H
#define WATTLAS_CLI_H

#include <getopt.h>

#include "../core/wattlas_core.h"
#include "../results/wattlas_results.h"

#define EXIT_USAGE 2
#define EXIT_RUNTIME 1
#define CLI_HELP (-1) /* X_parse printed the help: exit 0 */

/* The training and decode options: their help lines and their sweep keys,
 * shared by predict, compare and sweep. */
#define CLI_MODE_HELP \
    "  --mode prefill|train|decode   what runs (default prefill: one forward pass;\n" \
    "                          also inference, forward): train is one optimizer step\n" \
    "                          (forward, loss, backward, optimizer), decode a generation\n" \
    "  --optimizer adamw|sgd|none  train: the optimizer (default adamw, PyTorch foreach;\n" \
    "                          none: forward and backward only, a pipeline stage's)\n" \
    "  --master-dtype fp32|none  train: fp32 master weights, main gradients and state\n" \
    "                          with bf16/fp16 compute (default fp32), or all in dtype\n" \
    "  --recompute none|selective|full  train: activation recomputation (default none)\n" \
    "  --grad-accum N          train: micro-batches of --batch per step (default 1)\n" \
    "  --finetune full|lora    train: the whole model (default), or PEFT LoRA adapters\n" \
    "                          on a frozen model (no weight gradients for the base; the\n" \
    "                          optimizer and its memory over the adapters only)\n" \
    "  --lora-rank R           lora: the adapters' rank (default 16)\n" \
    "  --lora-targets LIST     lora: projections among q,k,v,o,gate,up,down (or\n" \
    "                          attention, mlp, all; default attention: q,k,v,o)\n" \
    "  --freeze N              full: the embeddings and the first N layers frozen (the\n" \
    "                          backward stops above them; default 0)\n" \
    "  --gen N                 decode: tokens generated after the --seq prompt (default 128)\n" \
    "  --launch eager|graphs   decode: eager (default) is static batching: --batch\n" \
    "                          requests prefilled together (ttft_ms: the batch's\n" \
    "                          prefill), then decoded kernel by kernel; graphs is a\n" \
    "                          continuous-batching server's steady state (vLLM):\n" \
    "                          --batch requests running, each step replayed from a\n" \
    "                          CUDA graph, ttft_ms one arriving request's own prefill\n" \
    "                          with no queue, whatever --batch ('wattlas serve':\n" \
    "                          mixed requests, queues, SLOs)\n" \
    "  --stack hf5|hf4         the software whose kernels run: HF transformers 5.x on\n" \
    "                          PyTorch 2.11 (default; what wattlas.measure runs), or the\n" \
    "                          transformers 4.x of EnergAIzer's A100 sets\n" \
    "  --impl hf-eager|fused   HF's eager modules (default), or a fused implementation\n" \
    "                          (Megatron/TransformerEngine, vLLM, torch.compile)\n" \
    "  --profile-clock MHZ     --trace profiles: the SM clock they were requested at,\n" \
    "                          for files that do not say (neither \"wattlas\" metadata\n" \
    "                          nor a name ending _<MHz>mhz)\n" \
    "  --profile-power-limit-w W  --trace profiles: the board power limit they ran\n" \
    "                          under (default: their \"wattlas\" metadata, else the\n" \
    "                          GPU's default limit, its tdp_w); a prediction at any\n" \
    "                          limit starts from the clocks that limit allowed\n" \
    "  --profile-gpu ID|FILE.ini  --trace profiles: the board they ran on (default:\n" \
    "                          their \"wattlas\" metadata's gpu, else the GPU asked\n" \
    "                          about); each kernel's measured/model ratio there\n" \
    "                          carries to the GPU asked about\n" \
    "  --profile-step-ms MS    --trace profiles: the step's wall time unprofiled, from\n" \
    "                          which the profiler's host cost per op is solved\n" \
    "                          (default: their \"wattlas\" metadata's wall_ms_per_step,\n" \
    "                          else the summary.csv row beside them, else 4 us an op)\n"
#define CLI_MODE_AXES                                                                        \
    {"mode", "mode"}, {"optimizer", "optimizer"}, {"master-dtype", "master_dtype"},            \
        {"recompute", "recompute"}, {"grad-accum", "grad_accum"}, {"gen", "gen"},            \
        {"finetune", "finetune"}, {"lora-rank", "lora_rank"}, {"lora-targets", "lora_targets"}, \
        {"freeze", "freeze"},                                                                \
        {"launch", "launch"}, {"stack", "stack"}, {"impl", "impl"},                         \
        {"profile-clock", "profile_clock"}, {"profile-power-limit-w", "profile_power_limit_w"}, \
        {"profile-gpu", "profile_gpu"}, {"profile-step-ms", "profile_step_ms"}

typedef struct {
    const char *name, *summary;
    int (*main)(int argc, char **argv); /* argv[0] is the command's name */
    int stops; /* its library calls poll wl_stop_requested: Ctrl-C ends it cleanly */
} cli_command;

int cmd_predict(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_energy_check(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_presets(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_sweep(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_pareto(int argc, char **argv);
int cmd_optimize(int argc, char **argv);
int cmd_plot(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_cluster(int argc, char **argv);
int cmd_learn(int argc, char **argv);
int cmd_serve(int argc, char **argv);

/* Prints "wattlas CMD: message" and a pointer to --help; returns EXIT_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Reports a library error and returns the exit status: EXIT_USAGE when the
 * error is about an option's value (its source is the option, "--clock"),
 * else EXIT_RUNTIME (files, data, memory). */
int cli_fail(const char *cmd, const wl_error *err);
/* Numbers and lists from option values, in the one grammar, with the
 * option named in the message; EXIT_USAGE on error. */
int cli_real(const char *cmd, const char *opt, const char *s, double lo, double hi, double *out);
int cli_int(const char *cmd, const char *opt, const char *s, long long lo, long long hi,
            long long *out);
int cli_format(const char *cmd, const char *s, wl_results_format *out);
/* "I/N" with 1 <= I <= N. */
int cli_shard(const char *cmd, const char *s, unsigned *i, unsigned *n);
/* The single input file: --in or the one positional argument. */
int cli_input(const char *cmd, const char *in_opt, int argc, char **argv, int first,
              const char **path);

/* Rows to an output file or stdout through the one writer. */
typedef struct {
    wl_results_out *out;
    wl_results_writer *w;
} cli_rows;
/* The format an output file's name asks for when --format is not given:
 * .csv, .ndjson, .json; else dflt (a table for '-' and other names). */
wl_results_format cli_format_of_path(const char *path, wl_results_format dflt);
int cli_rows_open(const char *cmd, const char *path, wl_results_format fmt,
                  const wl_results_col *cols, size_t n, cli_rows *r);
/* The same, stdout's rows held until cli_rows_close (another output that
 * can fail after the rows are written: they are printed only if it holds). */
int cli_rows_open_held(const char *cmd, const char *path, wl_results_format fmt,
                       const wl_results_col *cols, size_t n, cli_rows *r);
/* Finishes and commits (ok) or discards the output; returns the status. */
int cli_rows_close(const char *cmd, cli_rows *r, int ok);

/* Notes on stderr ("wattlas CMD: text"), unless quiet. */
void cli_note(void *cmd, const char *text);


/* getopt_long's "unknown option"/"needs a value" as usage errors, naming
 * the word (a long option with one dash, "-seq", says so) and the options
 * of lo it may have meant ("--modle": did you mean --model?). */
int cli_bad_option(const char *cmd, int c, int argc, char **argv, const struct option *lo);
/* A progress bar on stderr (callers draw it when stderr is a terminal):
 * cli_bar_draw is a progress callback (user: the bar), first after half a
 * second (quicker work shows none), then at most five times a second,
 * ending its line when done reaches total. */
typedef struct {
    double t0, last;
    const char *what; /* "points", "configurations" */
    int open;         /* a bar line waits for its newline */
    int drawn;        /* drawn at least once */
    struct cli_beat *beat; /* cli_beat_start's, while it runs (NULL: none) */
} cli_bar;
void cli_bar_start(cli_bar *b, const char *what);
void cli_bar_draw(void *user, unsigned long long done, unsigned long long total);
void cli_bar_end(cli_bar *b); /* ends an unfinished bar's line */
/* The same progress as plain lines for a stderr that is not a terminal:
 * a line when it starts (done 0), then at most one every five seconds, and
 * the last (user: the bar). */
void cli_bar_log(void *user, unsigned long long done, unsigned long long total);
/* For a log whose steps can each take minutes (a model trained): a thread
 * that writes "k/N what, T s: still working" when the log has had no line
 * for five seconds. Start after cli_bar_start; stop before cli_bar_end (a
 * failed start leaves the log as it was). */
void cli_beat_start(cli_bar *b);
void cli_beat_stop(cli_bar *b);
/* Work with no count to show (a large table read and its front found, a
 * merge, a figure): on a terminal, after two seconds, "wattlas CMD:
 * working, N s" redrawn four times a second and erased when stopped. NULL
 * (nothing shown) with --quiet, when stderr is not a terminal, or when the
 * output (out "-") goes to the terminal's stdout. Stop before writing to
 * stderr; stopping NULL does nothing. */
typedef struct cli_work cli_work;
cli_work *cli_work_start(const char *cmd, const char *out, int quiet);
void cli_work_stop(cli_work *w);
/* A report line on stderr below any unfinished bar (user: the bar): the
 * callback of the library's runs (wl_calib_run, wl_learn_run, report). */
void cli_bar_line(void *user, const char *line);
/* -h as --help (argv's words rewritten in place). */
void cli_short_help(int argc, char **argv);
/* No output names an input or another output (wl_results_paths_distinct
 * over the command's arguments): 0, or EXIT_USAGE having said which. */
int cli_paths_check(const char *cmd, int argc, char **argv);

/* "wattlas ARGS..." for a file's record of how it was made (malloc'd). */
char *cli_command_line(int argc, char **argv);

/* Options that set sweep keys (--voltage-offset-mv sets voltage_offset_mv):
 * a command lists the ones it takes; they get getopt codes CLI_AXIS + i
 * and set the key with the option as the values' origin. */
#define CLI_AXIS 512
typedef struct {
    const char *opt, *key;
} cli_axis;
/* Appends the axes to a getopt table at *n. */
void cli_axis_options(const cli_axis *axes, size_t naxes, struct option *lo, size_t *n);
/* The axis of getopt code c, or NULL. */
const cli_axis *cli_axis_of(const cli_axis *axes, size_t naxes, int c);
/* Sets the axis's key from optarg; a usage error names the option. */
struct wl_sweep_spec;
int cli_axis_set(const char *cmd, struct wl_sweep_spec *spec, const cli_axis *a, const char *value);
/* The spec's warnings on stderr, and notes for GPUs that leave requested
 * clocks out (outside their range). */
void cli_spec_notes(const char *cmd, const struct wl_sweep_spec *spec, int quiet);
/* The warning for n points outside the spec's learned model's training
 * domain (nothing when n is 0). */
void cli_learned_outside(const char *cmd, const struct wl_sweep_spec *spec, unsigned long long n);

#endif
