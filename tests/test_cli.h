/* The command-line tests' shared part (test_cli.c, test_cli_multi.c): the
 * wattlas binary run in the test's own temporary directory, its output
 * captured, CSV columns read by name. */
#ifndef WATTLAS_TEST_CLI_H
#define WATTLAS_TEST_CLI_H

#include "test_util.h"
#include "../presets/wattlas_presets.h"

#include <stdarg.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef WATTLAS_BIN_PATH
#define WATTLAS_BIN_PATH "bin/wattlas"
#endif

static char bin[4096], root[4096];

static inline int realpath_in(const char *rel, char *out)
{
    return realpath(rel, out) != NULL && access(out, X_OK) == 0;
}
static char out_buf[1 << 20], err_buf[1 << 16];

static inline void slurp(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    size_t k = f ? fread(buf, 1, n - 1, f) : 0;
    buf[k] = 0;
    if (f)
        fclose(f);
}

/* Runs wattlas with the formatted arguments in the test directory;
 * captures stdout and stderr; returns the exit status. */
static inline int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int run(const char *fmt, ...)
{
    char args[8192], cmd[16384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "%s %s >cli.out 2>cli.err </dev/null", bin, args);
    int st = system(cmd);
    slurp("cli.out", out_buf, sizeof out_buf);
    slurp("cli.err", err_buf, sizeof err_buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static inline double csv_num(const char *buf, int row, int col)
{
    const char *p = buf;
    for (int r = 0; r < row && p; r++)
        if ((p = strchr(p, '\n')))
            p++;
    for (int c = 0; c < col && p; c++)
        if ((p = strchr(p, ',')))
            p++;
    return p ? atof(p) : NAN;
}

/* The number in row `row` (1: the first data row) of the column named
 * `name` in the header: tests read columns by name, so a new column never
 * shifts what they check. */
static inline double csv_get(const char *buf, int row, const char *name)
{
    const char *eol = strchr(buf, '\n');
    size_t nl = strlen(name);
    int col = 0;
    for (const char *p = buf; p && (!eol || p < eol); col++) {
        if (!strncmp(p, name, nl) && (p[nl] == ',' || p[nl] == '\n' || p[nl] == '\r'))
            return csv_num(buf, row, col);
        if ((p = strchr(p, ',')))
            p++;
    }
    fail_msg("no column %s in %.200s", name, buf);
    return NAN;
}

/* A shell line with $W for the binary. */
static inline int shell(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int shell(const char *fmt, ...)
{
    char line[8192], cmd[16384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "W=%s; %s", bin, line);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static inline int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static const char *const MEAS_HEADER =
    "gpu,model,batch,seq,dtype,mode,attention,sm_clock_mhz,measured_clock_mhz,time_ms,energy_j,"
    "power_w,temp_c\n";

/* Finds the binaries and the shared data, then moves into the test's own
 * directory: 0, or 1 (said on stderr) when the binary is missing. */
static inline int cli_setup(const char *name)
{
    const char *rel = getenv("WATTLAS_BIN") ? getenv("WATTLAS_BIN") : WATTLAS_BIN_PATH;
#ifdef WATTLAS_MPI_BIN_PATH
    static char mpi_abs[4096];
    const char *mrel = getenv("WATTLAS_MPI_BIN") ? getenv("WATTLAS_MPI_BIN") : WATTLAS_MPI_BIN_PATH;
    if (realpath(mrel, mpi_abs))
        setenv("WATTLAS_MPI_BIN", mpi_abs, 1); /* absolute before leaving the tree */
#endif
    if (!realpath(rel, bin)) {
        fprintf(stderr, "%s: no binary at %s\n", name, rel);
        return 1;
    }
    test_shared_data(); /* resolved before leaving the source tree */
    if (!getcwd(root, sizeof root))
        return 1;
    if (chdir(test_dir()) != 0)
        return 1;
    return 0;
}

#endif

