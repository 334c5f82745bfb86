/* Private to cli/: command entry points and argument helpers. */
#ifndef WATTLAS_CLI_H
#define WATTLAS_CLI_H

#include "../core/wattlas_core.h"

#define EXIT_USAGE 2
#define EXIT_RUNTIME 1

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

/* Prints "wattlas CMD: message" to stderr and returns EXIT_USAGE. */
int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prints a wl_error to stderr and returns EXIT_RUNTIME. */
int runtime_error(const char *cmd, const wl_error *err);
int parse_int_arg(const char *cmd, const char *opt, const char *s, long long lo, long long hi,
                  long long *out);
int parse_double_arg(const char *cmd, const char *opt, const char *s, double *out);
/* A confidence level: 0.95 or 95 (percent). */
int parse_level_arg(const char *cmd, const char *opt, const char *s, double *out);
/* "F" or "MIN:MAX:STEP" into a list of clocks (at most max_n). */
int parse_clock_list(const char *cmd, const char *s, double *out, int max_n, int *n);

/* --idle values: FILE (only when one GPU is in play: single) or ID=FILE.
 * Sets *path to the table for gpu_id, or NULL; -1 for a bare FILE with
 * several GPUs. */
int idle_spec_for(const char *const *specs, int n, const char *gpu_id, int single,
                  const char **path);
/* Replaces gpu's idle power (and voltage) by a measured idle table, with a
 * note on stderr unless quiet; EXIT_RUNTIME with the error printed. */
int apply_idle_table(const char *cmd, wl_core_gpu *gpu, const char *path, int quiet);

#endif
