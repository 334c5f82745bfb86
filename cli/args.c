/* Argument helpers shared by the commands. */
#include "cli.h"
#include "../presets/wattlas_presets.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "wattlas %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(see 'wattlas %s --help')\n", cmd);
    va_end(ap);
    return EXIT_USAGE;
}

int runtime_error(const char *cmd, const wl_error *err)
{
    char buf[700];
    wl_error_format(err, buf, sizeof buf);
    fprintf(stderr, "wattlas %s: %s\n", cmd, buf);
    return EXIT_RUNTIME;
}

int parse_int_arg(const char *cmd, const char *opt, const char *s, long long lo, long long hi,
                  long long *out)
{
    char *e;
    errno = 0;
    long long v = strtoll(s, &e, 10);
    if (e == s || *e || errno || v < lo || v > hi)
        return usage_error(cmd, "%s: expected an integer in [%lld, %lld], got '%s'", opt, lo, hi,
                           s);
    *out = v;
    return 0;
}

int parse_double_arg(const char *cmd, const char *opt, const char *s, double *out)
{
    char *e;
    errno = 0;
    double v = strtod(s, &e);
    if (e == s || *e || errno || !isfinite(v))
        return usage_error(cmd, "%s: expected a number, got '%s'", opt, s);
    *out = v;
    return 0;
}

int parse_clock_list(const char *cmd, const char *s, double *out, int max_n, int *n)
{
    *n = 0;
    if (strchr(s, ':')) {
        double a, b, st;
        char extra;
        if (sscanf(s, "%lf:%lf:%lf%c", &a, &b, &st, &extra) != 3 || !(a > 0) || !(b >= a) ||
            !(st > 0))
            return usage_error(cmd, "--clock: expected MIN:MAX:STEP with 0 < MIN <= MAX, STEP > 0, got '%s'", s);
        for (double f = a; f <= b + 1e-9; f += st) {
            if (*n >= max_n)
                return usage_error(cmd, "--clock: more than %d clocks", max_n);
            out[(*n)++] = f;
        }
        return 0;
    }
    const char *p = s;
    while (*p) {
        char *e;
        errno = 0;
        double v = strtod(p, &e);
        if (e == p || errno || !(v > 0) || !isfinite(v) || (*e && *e != ','))
            return usage_error(cmd, "--clock: expected MHz, a list or MIN:MAX:STEP, got '%s'", s);
        if (*n >= max_n)
            return usage_error(cmd, "--clock: more than %d clocks", max_n);
        out[(*n)++] = v;
        p = *e ? e + 1 : e;
    }
    if (*n == 0)
        return usage_error(cmd, "--clock: empty");
    return 0;
}

int parse_level_arg(const char *cmd, const char *opt, const char *s, double *out)
{
    if (parse_double_arg(cmd, opt, s, out))
        return EXIT_USAGE;
    if (*out > 1)
        *out /= 100.0; /* 95 means 95% */
    if (!(*out > 0 && *out < 1))
        return usage_error(cmd, "%s: a level in (0, 1) or a percentage, got '%s'", opt, s);
    return 0;
}

int apply_idle_specs(const char *cmd, wl_core_gpu *gpus, size_t n_gpus,
                     const char *const *specs, size_t n_specs, const char **applied)
{
    wl_error err = {0};
    int rc = wl_preset_apply_idle_specs(gpus, n_gpus, specs, n_specs, applied, &err);
    if (rc == WL_EINVAL && strcmp(err.field, "idle") == 0)
        return usage_error(cmd, "--idle %s: %s", err.source, err.text);
    if (rc)
        return runtime_error(cmd, &err);
    for (size_t i = 0; applied && i < n_gpus; i++)
        if (applied[i])
            fprintf(stderr, "wattlas %s: %s uses the measured idle table %s\n", cmd, gpus[i].id,
                    applied[i]);
    return 0;
}

int apply_idle_table(const char *cmd, wl_core_gpu *gpu, const char *path)
{
    wl_error err = {0};
    if (wl_preset_gpu_idle_table(gpu, path, &err))
        return runtime_error(cmd, &err);
    fprintf(stderr, "wattlas %s: %s uses the measured idle table %s\n", cmd, gpu->id, path);
    return 0;
}
