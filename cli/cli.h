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

/* --idle values ([ID=]TABLE.csv) applied to gpus by
 * wl_preset_apply_idle_specs, with a note on stderr per GPU; a bad spec is a
 * usage error (EXIT_USAGE), an unreadable table a runtime one. applied[i]
 * gets gpus[i]'s table or NULL; may be NULL (then no notes). */
int apply_idle_specs(const char *cmd, wl_core_gpu *gpus, size_t n_gpus,
                     const char *const *specs, size_t n_specs, const char **applied);
/* Replaces gpu's idle power (and voltage) by a measured idle table, with a
 * note on stderr; EXIT_RUNTIME with the error printed. */
int apply_idle_table(const char *cmd, wl_core_gpu *gpu, const char *path);

#endif
