/* Results I/O: the one number formatter, output files written atomically,
 * a CSV reader with line numbers, an in-memory table, and one row writer
 * for every format a command writes (table, CSV, NDJSON, JSON). Numbers are
 * always written in the C locale. */
#ifndef WATTLAS_RESULTS_H
#define WATTLAS_RESULTS_H

#include <stdint.h>
#include <stdio.h>
#include "../core/wattlas_core.h"

/* ---- numbers ---------------------------------------------------------------- */

/* Room for any double in fixed point with up to WL_RESULTS_MAX_DECIMALS
 * decimals: sign, 309 integer digits, point, decimals, NUL. */
#define WL_RESULTS_MAX_DECIMALS 17
#define WL_RESULTS_NUM_MAX 336

/* Writes v with `decimals` (0..17) digits after the point into buf (n
 * bytes) and returns the length. The digits are those of printf("%.*f"):
 * correctly rounded from the binary value, exact halves to even (1412.25
 * -> "1412.2"), except that a result that rounds to zero never carries a
 * minus sign ("0.00", not "-0.00"). Non-finite values write "" (empty CSV
 * cell); so does a buffer too small for the result (never a partial
 * number). Without printf for ordinary values (the sweep's hot path). */
size_t wl_results_fmt(char *buf, size_t n, double v, int decimals);
/* Shortest round-trip-safe text for a parameter value ("%.10g"). */
size_t wl_results_fmt_param(char *buf, size_t n, double v);
/* A memory size in GB (10^9 B) for a message, with its GiB (2^30 B): an
 * "80GB" card's 81920 MiB is "85.9 GB (80.0 GiB)". */
size_t wl_results_gb_text(char *buf, size_t n, double gb);

/* A growing output buffer: formatting never writes past it; on allocation
 * failure oom is set and further appends are dropped. */
typedef struct {
    char *p;
    size_t n, cap;
    int oom;
} wl_results_buf;

void wl_results_buf_put(wl_results_buf *b, const char *s, size_t len);
void wl_results_buf_puts(wl_results_buf *b, const char *s);
void wl_results_buf_num(wl_results_buf *b, double v, int decimals);
void wl_results_buf_csv(wl_results_buf *b, const char *s);  /* quoted when needed */
void wl_results_buf_json(wl_results_buf *b, const char *s); /* "..." with escapes */
void wl_results_buf_free(wl_results_buf *b);

/* Stream versions, for writers that are not on a hot path. */
void wl_results_csv_str(FILE *f, const char *s);
void wl_results_json_str(FILE *f, const char *s);
void wl_results_num(FILE *f, double v, int decimals); /* NaN/inf write nothing */

/* ---- output files ------------------------------------------------------------ */

/* An output "-" is stdout. A path that is a regular file or does not exist
 * is written to a temporary file beside it (PATH.tmp.PID.N, with the old
 * file's permissions) and renamed over it on commit, so an interrupted or
 * failed run leaves the old file or nothing, never half a file. Anything
 * else -- a device (/dev/null, /dev/full), a FIFO, a symlink -- is opened and
 * written in place, never replaced. A directory is an error. Commit checks
 * every write (a full disk or a full device is an error, WL_EIO). */
typedef struct wl_results_out wl_results_out;
int wl_results_out_open(const char *path, wl_results_out **out, wl_error *err);
/* As wl_results_out_open, but "-" is held in memory and printed on commit,
 * nothing on abort: for rows that must not reach stdout when another output
 * of the same command fails after them. */
int wl_results_out_open_held(const char *path, wl_results_out **out, wl_error *err);
FILE *wl_results_out_stream(wl_results_out *o);
int wl_results_out_commit(wl_results_out *o, wl_error *err); /* frees o */
/* An output cut short (an interrupted run): a regular file's rows go to
 * PATH.partial beside it (its name in name; "" for a stream, a device or a
 * FIFO, written in place), and PATH keeps what it held. Frees o. */
int wl_results_out_commit_partial(wl_results_out *o, char *name, size_t cap, wl_error *err);
void wl_results_out_abort(wl_results_out *o);                /* frees o, accepts NULL */
/* Installs handlers for SIGINT, SIGTERM and SIGHUP (those not ignored)
 * that remove the temporary files of the outputs still open, then die of
 * the signal as before (the command-line tool calls it at start). A
 * command that stops gracefully on a signal (sweep) installs its own
 * handler while it runs. */
void wl_results_out_cleanup_on_signals(void);
/* Whether the output is a terminal (for the default table format). */
int wl_results_out_isatty(const wl_results_out *o);

/* An output is never one of the inputs, nor another output: a path and
 * what names it ("-o", "--host-out", "the input"). */
typedef struct {
    const char *path;
    const char *what;
} wl_results_path;
/* WL_EINVAL (a usage error) naming both when an output is the same file as
 * an input or as an earlier output, before any work is done. Files are
 * compared by device and inode, links followed; an output not made yet is
 * its folder (device and inode) and its name; an existing output folder
 * (report -o DIR) is refused where it is an input folder or holds one of
 * the inputs. Devices and FIFOs (/dev/null, a pipe) are never refused;
 * NULL paths and "-" (stdin, stdout) are skipped. */
int wl_results_paths_distinct(const wl_results_path *in, size_t nin, const wl_results_path *out,
                              size_t nout, wl_error *err);

/* Removes the "BASE.tmp.PID.N" files and folders of runs that died (their
 * PID is gone) beside base; wl_results_out_open does it for its output. */
void wl_results_remove_stale(const char *base);

/* A file named inside a data file (a row's gpu, host, model or workload
 * cell): a value with a '/' or ending in .ini, .csv or .json is such a path,
 * anything else a preset name, copied as it is. A path is taken relative to
 * the data file's folder and must lie, links followed, under that folder:
 * a row cannot make a command read /etc/passwd (issue 77). out gets the
 * real path; WL_EINVAL names the data file, its line and the column, never
 * the file's content. */
int wl_results_row_path(const char *data_path, int line, const char *column, const char *value,
                        char *out, size_t cap, wl_error *err);
/* Whether a row's value names a file (as wl_results_row_path decides). */
int wl_results_row_names_file(const char *value);

/* ---- CSV reading ----------------------------------------------------------------- */

/* RFC 4180 quoting (no newlines inside quotes), a header row required. A
 * UTF-8 byte-order mark is dropped; lines starting with '#' before the
 * header are comments (sweep shard metadata); blank lines are skipped. A
 * directory, a NUL byte or a row with the wrong column count is an error
 * naming the file and line. */
#define WL_RESULTS_CSV_MAXCOLS 256
typedef struct wl_results_csv wl_results_csv;
int wl_results_csv_open(const char *path, wl_results_csv **out, wl_error *err);
/* Reads len bytes of data (not copied: must outlive the reader); source
 * names it in errors. */
int wl_results_csv_open_mem(const char *data, size_t len, const char *source,
                            wl_results_csv **out, wl_error *err);
void wl_results_csv_close(wl_results_csv *c);
/* 1: a row was read; 0: end of file; negative: error in err. */
int wl_results_csv_next(wl_results_csv *c, wl_error *err);
size_t wl_results_csv_ncols(const wl_results_csv *c);
const char *wl_results_csv_header(const wl_results_csv *c, size_t i);
int wl_results_csv_col(const wl_results_csv *c, const char *name); /* -1 if absent */
const char *wl_results_csv_field(const wl_results_csv *c, size_t i);
int wl_results_csv_line(const wl_results_csv *c);
const char *wl_results_csv_path(const wl_results_csv *c);
/* The raw text of the current row (or of the header before the first row),
 * without the line ending. */
const char *wl_results_csv_raw(const wl_results_csv *c);
/* The comment lines before the header, joined by '\n' ("" when none). */
const char *wl_results_csv_comments(const wl_results_csv *c);
/* A finite number in field i of the current row: WL_OK; an empty field:
 * WL_ENOTFOUND (*v = NaN); anything else (text, NaN, inf, overflow):
 * WL_EPARSE with the file, line and column in err. */
int wl_results_csv_num(const wl_results_csv *c, size_t i, double *v, wl_error *err);

/* ---- in-memory tables ---------------------------------------------------------------- */

/* Every cell of a CSV as text, with its line number, for figures, reports
 * and selections. */
typedef struct wl_results_table wl_results_table;
int wl_results_table_load(const char *path, wl_results_table **out, wl_error *err);
int wl_results_table_load_mem(const char *data, size_t len, const char *source,
                              wl_results_table **out, wl_error *err);
/* Reads the remaining rows of an open reader. */
int wl_results_table_read(wl_results_csv *csv, wl_results_table **out, wl_error *err);
void wl_results_table_free(wl_results_table *t);
size_t wl_results_table_rows(const wl_results_table *t);
size_t wl_results_table_ncols(const wl_results_table *t);
const char *wl_results_table_header(const wl_results_table *t, size_t col);
int wl_results_table_col(const wl_results_table *t, const char *name); /* -1 if absent */
const char *wl_results_table_cell(const wl_results_table *t, size_t row, int col); /* "" if none */
int wl_results_table_line(const wl_results_table *t, size_t row);
const char *wl_results_table_source(const wl_results_table *t);
/* A column that must exist: its index, or -1 with err naming file and column. */
int wl_results_table_need(const wl_results_table *t, const char *name, wl_error *err);
/* As wl_results_csv_num, for a cell. */
int wl_results_table_num(const wl_results_table *t, size_t row, int col, double *v,
                         wl_error *err);
/* The rows whose cells equal vals in cols (n pairs), as a new table with the
 * same header and source. */
int wl_results_table_filter(const wl_results_table *t, const int *cols, const char *const *vals,
                            size_t n, wl_results_table **out);
/* Distinct values of a column in order of first appearance: fills idx
 * (first row of each value, at most max) and returns their count. */
size_t wl_results_table_distinct(const wl_results_table *t, int col, size_t *first_row,
                                 size_t max);
/* Whether rows a and b hold the same text in the n columns cols (the first
 * n columns when cols is NULL). */
int wl_results_table_same(const wl_results_table *t, size_t a, size_t b, const int *cols,
                          size_t n);
/* The table as CSV (header and rows). */
void wl_results_table_write_csv(const wl_results_table *t, FILE *f);
/* The header and the rows with keep[row] set, as CSV. */
void wl_results_table_write_csv_rows(const wl_results_table *t, const unsigned char *keep,
                                     FILE *f);

/* ---- row writers ------------------------------------------------------------------- */

/* WL_FMT_COLUMNS: a binary stream for bindings that build column arrays
 * (the Python package), never parsed from text. Header: the column count
 * (u32), then per column its name (u32 length, bytes), type (u8, a
 * wl_results_coltype), decimals and sig (i32). Then ncols cells a row, each
 * a tag byte: 0 empty; 1 a number (an f64: the value the CSV writes, read
 * back, so that it equals the command line's digit for digit); 2 text (u32
 * length, bytes). Native byte order. */
typedef enum { WL_FMT_TABLE = 0, WL_FMT_CSV, WL_FMT_NDJSON, WL_FMT_JSON, WL_FMT_COLUMNS } wl_results_format;
/* "table", "csv", "ndjson", "json"; WL_EINVAL otherwise. */
int wl_results_format_parse(const char *s, wl_results_format *out);
const char *wl_results_format_name(wl_results_format f);

/* TEXT: a string; NUM: a number with `decimals` digits (negative: the
 * shortest exact form, for parameters); INT, BOOL; AUTO: text echoed from an
 * input that JSON writes as a number when it is one. */
typedef enum { WL_COL_TEXT = 0, WL_COL_NUM, WL_COL_INT, WL_COL_BOOL, WL_COL_AUTO } wl_results_coltype;
typedef struct {
    const char *name;  /* with its unit: time_ms, power_w (must outlive the writer) */
    wl_results_coltype type;
    int decimals;      /* WL_COL_NUM; < 0: shortest exact form */
    int width;         /* table format: minimum width (0: from the name and type) */
    int table_hide;    /* table format: left out (a constant a title line names) */
    int sig;           /* WL_COL_NUM: > 0: this many significant digits instead of
                          fixed decimals (quantities spanning decades, such
                          as a kernel class's FLOPs) */
} wl_results_col;

#define WL_RESULTS_COL(n, t, d, w) {.name = (n), .type = (t), .decimals = (d), .width = (w)}
#define WL_RESULTS_COL_SIG(n, s) {.name = (n), .type = WL_COL_NUM, .decimals = 0, .sig = (s)}

/* One cell: text (NULL: empty) or a number (NaN: empty; JSON null). */
typedef struct {
    const char *s;
    double v;
} wl_results_cell;

/* Writes rows of fixed columns: a header line (table, CSV), one line per
 * row (NDJSON: one object; JSON: one array element), and the closing
 * bracket of a JSON array on finish. Booleans are 0/1 in CSV and table,
 * true/false in JSON. */
typedef struct wl_results_writer wl_results_writer;
int wl_results_writer_create(FILE *f, wl_results_format fmt, const wl_results_col *cols,
                             size_t ncols, wl_results_writer **out);
/* The header (nothing for NDJSON, "[" for JSON). */
void wl_results_writer_header(wl_results_writer *w);
/* Formats one row into b (appended; thread-safe for distinct buffers). */
void wl_results_writer_format(const wl_results_writer *w, const wl_results_cell *cells,
                              wl_results_buf *b);
/* Formats columns [first, last) of a row (cells indexed by column): a row
 * made of consecutive pieces equals the whole row, so a prefix that stays
 * the same for many rows can be formatted once. */
void wl_results_writer_format_cols(const wl_results_writer *w, const wl_results_cell *cells,
                                   size_t first, size_t last, wl_results_buf *b);
/* Points the writer at another stream (a writer may be created on NULL). */
void wl_results_writer_set_stream(wl_results_writer *w, FILE *f);
/* From now on, the rows written are hashed (FNV-1a 64 over their bytes)
 * and their lines counted: a shard's end line (wl_sweep_shard_end). */
void wl_results_writer_hash_rows(wl_results_writer *w);
uint64_t wl_results_writer_rows_hash(const wl_results_writer *w, unsigned long long *lines);
/* Writes formatted rows (whole rows, as wl_results_writer_format made). */
void wl_results_writer_emit(wl_results_writer *w, const char *rows, size_t len);
/* Formats and writes one row. WL_ENOMEM when formatting failed. */
int wl_results_writer_row(wl_results_writer *w, const wl_results_cell *cells);
/* A comment line, written only in the table format ("# text"). */
void wl_results_writer_note(wl_results_writer *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Closes a JSON array (and writes the header if no row was written); frees w. */
void wl_results_writer_finish(wl_results_writer *w);
void wl_results_writer_free(wl_results_writer *w); /* without finishing; accepts NULL */

#endif
