/* Results I/O: atomic output files, CSV reading with line numbers, CSV/JSON
 * field writers. Numbers are always printed in the C locale. */
#ifndef WATTLAS_RESULTS_H
#define WATTLAS_RESULTS_H

#include <stdio.h>
#include "../core/wattlas_core.h"

/* Output written to PATH.tmp.PID and renamed on commit, so an interrupted run
 * never leaves a half-written file. "-" writes to stdout. */
typedef struct wl_results_out wl_results_out;
int wl_results_out_open(const char *path, wl_results_out **out, wl_error *err);
FILE *wl_results_out_stream(wl_results_out *o);
int wl_results_out_commit(wl_results_out *o, wl_error *err); /* frees o */
void wl_results_out_abort(wl_results_out *o);                /* frees o, accepts NULL */

/* CSV reader (RFC 4180 quoting, header row required). */
typedef struct wl_results_csv wl_results_csv;
int wl_results_csv_open(const char *path, wl_results_csv **out, wl_error *err);
void wl_results_csv_close(wl_results_csv *c);
/* 1: a row was read; 0: end of file; WL_EPARSE (negated): error in err. */
int wl_results_csv_next(wl_results_csv *c, wl_error *err);
size_t wl_results_csv_ncols(const wl_results_csv *c);
const char *wl_results_csv_header(const wl_results_csv *c, size_t i);
int wl_results_csv_col(const wl_results_csv *c, const char *name); /* -1 if absent */
const char *wl_results_csv_field(const wl_results_csv *c, size_t i);
int wl_results_csv_line(const wl_results_csv *c);
const char *wl_results_csv_path(const wl_results_csv *c);
/* The raw text of the current row, without the line ending. */
const char *wl_results_csv_raw(const wl_results_csv *c);

/* Writers. */
void wl_results_csv_str(FILE *f, const char *s);       /* quoted when needed */
void wl_results_json_str(FILE *f, const char *s);      /* "..." with escapes */
void wl_results_num(FILE *f, double v, int decimals);  /* empty/null-free: NaN -> "" */
/* Fixed-point formatting without printf (hot path of sweeps): writes v with
 * `decimals` (0..9) digits after the point, rounded half away from zero, as
 * "%.*f" does for values below 1e15; NaN/inf write nothing. Returns length. */
int wl_results_fmt(char *buf, double v, int decimals);

#endif
