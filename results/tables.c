/* CSV reading (bounded lines, quoted fields, comments, hostile input
 * refused with the file and line) and in-memory tables of rows. */
#include "wattlas_results.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- CSV reading ------------------------------------------------------------------- */

struct wl_results_csv {
    FILE *f;
    char *path;
    char *line;      /* raw row */
    size_t linecap;
    char *buf;       /* unquoted fields, NUL-separated */
    size_t bufcap;
    char *hdr;       /* header copy */
    char *comments;
    const char *head[WL_RESULTS_CSV_MAXCOLS];
    const char *field[WL_RESULTS_CSV_MAXCOLS];
    size_t ncols, nf;
    int lineno;
};

#define CSV_MAX_LINE (64u << 20) /* a row of 64 MiB is no row of ours */

/* 1: a line; 0: end of file; -1: error (err set). A line is read byte by
 * byte up to its newline, so that a NUL byte is seen and a line without
 * end (/dev/zero) stops at CSV_MAX_LINE instead of taking all memory. */
static int read_line(wl_results_csv *c, wl_error *err)
{
    size_t n = 0;
    int ch, nul = 0;
    errno = 0;
    while ((ch = getc_unlocked(c->f)) != EOF) {
        if (n + 2 > c->linecap) {
            size_t nc = c->linecap ? c->linecap * 2 : 4096;
            char *nl = n + 2 > CSV_MAX_LINE ? NULL : realloc(c->line, nc);
            if (!nl) {
                wl_error_set(err, c->path, c->lineno + 1, "", n + 2 > CSV_MAX_LINE
                             ? "line longer than 64 MiB" : "out of memory");
                return -1;
            }
            c->line = nl;
            c->linecap = nc;
        }
        nul |= ch == 0;
        c->line[n++] = (char)ch;
        if (ch == '\n')
            break;
    }
    if (ch == EOF && ferror(c->f)) {
        int e = errno ? errno : EIO;
        /* a read that Ctrl-C interrupted (wl_stop_watch) */
        if (e == EINTR && wl_stop_requested())
            wl_error_set(err, c->path, c->lineno + 1, "", "stopped");
        else
            wl_error_set(err, c->path, c->lineno + 1, "", "read error: %s", strerror(e));
        return -1;
    }
    if (n == 0)
        return 0;
    c->line[n] = 0;
    c->lineno++;
    if (nul) {
        wl_error_set(err, c->path, c->lineno, "", "NUL byte in a text file");
        return -1;
    }
    while (n > 0 && (c->line[n - 1] == '\n' || c->line[n - 1] == '\r'))
        c->line[--n] = 0;
    if (c->lineno == 1 && (unsigned char)c->line[0] == 0xEF &&
        (unsigned char)c->line[1] == 0xBB && (unsigned char)c->line[2] == 0xBF)
        memmove(c->line, c->line + 3, n - 2); /* UTF-8 byte-order mark */
    return 1;
}

/* Splits c->line into fields; -1 on a quoting error. */
static int split(wl_results_csv *c, const char **fields, size_t *nf, wl_error *err)
{
    size_t need = strlen(c->line) + 2;
    if (need > c->bufcap) {
        char *nb = realloc(c->buf, need);
        if (!nb) {
            wl_error_set(err, c->path, c->lineno, "", "out of memory");
            return -1;
        }
        c->buf = nb;
        c->bufcap = need;
    }
    const char *p = c->line;
    char *o = c->buf;
    *nf = 0;
    for (;;) {
        if (*nf >= WL_RESULTS_CSV_MAXCOLS) {
            wl_error_set(err, c->path, c->lineno, "", "more than %d columns",
                         WL_RESULTS_CSV_MAXCOLS);
            return -1;
        }
        fields[(*nf)++] = o;
        if (*p == '"') {
            p++;
            for (;;) {
                if (!*p) {
                    wl_error_set(err, c->path, c->lineno, "", "unterminated quoted field");
                    return -1;
                }
                if (*p == '"') {
                    if (p[1] == '"') {
                        *o++ = '"';
                        p += 2;
                        continue;
                    }
                    p++;
                    break;
                }
                *o++ = *p++;
            }
            if (*p && *p != ',') {
                wl_error_set(err, c->path, c->lineno, "", "text after a closing quote");
                return -1;
            }
        } else {
            while (*p && *p != ',')
                *o++ = *p++;
        }
        *o++ = 0;
        if (!*p)
            break;
        p++; /* comma */
    }
    return 0;
}

static int csv_start(wl_results_csv *c, wl_error *err)
{
    int r;
    size_t clen = 0;
    for (;;) {
        r = read_line(c, err);
        if (r < 0)
            return WL_EPARSE;
        if (r == 0) {
            wl_error_set(err, c->path, c->lineno ? c->lineno : 1, "",
                         "empty file: a header row is required");
            return WL_EPARSE;
        }
        if (c->line[0] != '#')
            break;
        size_t l = strlen(c->line);
        char *nc = realloc(c->comments, clen + l + 2);
        if (!nc)
            return WL_ENOMEM;
        c->comments = nc;
        if (clen)
            c->comments[clen++] = '\n';
        memcpy(c->comments + clen, c->line, l + 1);
        clen += l;
    }
    if (split(c, c->head, &c->ncols, err))
        return WL_EPARSE;
    /* keep the header strings: copy the split buffer */
    size_t len = 0;
    for (size_t i = 0; i < c->ncols; i++)
        len += strlen(c->head[i]) + 1;
    c->hdr = malloc(len ? len : 1);
    if (!c->hdr)
        return WL_ENOMEM;
    char *o = c->hdr;
    for (size_t i = 0; i < c->ncols; i++) {
        size_t l = strlen(c->head[i]) + 1;
        memcpy(o, c->head[i], l);
        c->head[i] = o;
        o += l;
    }
    /* a column named twice: a reader takes one of the two without a word */
    for (size_t i = 1; i < c->ncols; i++)
        for (size_t j = 0; j < i && c->head[i][0]; j++)
            if (!strcmp(c->head[i], c->head[j])) {
                wl_error_set(err, c->path, c->lineno, c->head[i],
                             "column named twice (columns %zu and %zu)", j + 1, i + 1);
                return WL_EPARSE;
            }
    return WL_OK;
}

static int csv_create(const char *path, FILE *f, wl_results_csv **out, wl_error *err)
{
    wl_results_csv *c = calloc(1, sizeof *c);
    if (!c || !(c->path = strdup(path))) {
        free(c);
        if (f && f != stdin)
            fclose(f);
        return WL_ENOMEM;
    }
    c->f = f;
    int rc = csv_start(c, err);
    if (rc) {
        wl_results_csv_close(c);
        return rc;
    }
    *out = c;
    return WL_OK;
}

int wl_results_csv_open(const char *path, wl_results_csv **out, wl_error *err)
{
    *out = NULL;
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    if (!f) {
        wl_error_set(err, path, 0, "", "cannot open: %s", strerror(errno));
        return WL_EIO;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        wl_error_set(err, path, 0, "", "is a directory, not a CSV file");
        if (f != stdin)
            fclose(f);
        return WL_EIO;
    }
    return csv_create(strcmp(path, "-") == 0 ? "<stdin>" : path, f, out, err);
}

int wl_results_csv_open_mem(const char *data, size_t len, const char *source,
                            wl_results_csv **out, wl_error *err)
{
    *out = NULL;
    if (len == 0) {
        wl_error_set(err, source, 1, "", "empty file: a header row is required");
        return WL_EPARSE;
    }
    FILE *f = fmemopen((void *)(uintptr_t)data, len, "r");
    if (!f) {
        wl_error_set(err, source, 0, "", "cannot open: %s", strerror(errno));
        return WL_EIO;
    }
    return csv_create(source, f, out, err);
}

void wl_results_csv_close(wl_results_csv *c)
{
    if (!c)
        return;
    if (c->f && c->f != stdin)
        fclose(c->f);
    free(c->path);
    free(c->line);
    free(c->buf);
    free(c->hdr);
    free(c->comments);
    free(c);
}

int wl_results_csv_next(wl_results_csv *c, wl_error *err)
{
    for (;;) {
        int r = read_line(c, err);
        if (r <= 0)
            return r < 0 ? -WL_EPARSE : 0;
        if (c->line[0] == 0)
            continue; /* blank lines are ignored */
        if (split(c, c->field, &c->nf, err))
            return -WL_EPARSE;
        if (c->nf != c->ncols) {
            wl_error_set(err, c->path, c->lineno, "", "expected %zu columns, found %zu", c->ncols,
                         c->nf);
            return -WL_EPARSE;
        }
        return 1;
    }
}

size_t wl_results_csv_ncols(const wl_results_csv *c) { return c->ncols; }
const char *wl_results_csv_header(const wl_results_csv *c, size_t i)
{
    return i < c->ncols ? c->head[i] : NULL;
}
int wl_results_csv_col(const wl_results_csv *c, const char *name)
{
    for (size_t i = 0; i < c->ncols; i++)
        if (strcmp(c->head[i], name) == 0)
            return (int)i;
    return -1;
}
const char *wl_results_csv_field(const wl_results_csv *c, size_t i)
{
    return i < c->nf ? c->field[i] : "";
}
int wl_results_csv_line(const wl_results_csv *c) { return c->lineno; }
const char *wl_results_csv_path(const wl_results_csv *c) { return c->path; }
const char *wl_results_csv_raw(const wl_results_csv *c) { return c->line ? c->line : ""; }
const char *wl_results_csv_comments(const wl_results_csv *c)
{
    return c->comments ? c->comments : "";
}

/* The one check behind every numeric cell: empty, a finite number, or an
 * error naming where. */
static int cell_num(const char *s, const char *source, int line, const char *col, double *v,
                    wl_error *err)
{
    *v = NAN;
    if (!*s)
        return WL_ENOTFOUND;
    if (wl_core_parse_number(s, v)) {
        *v = NAN;
        const char *why = wl_core_number_why(s);
        wl_error_set(err, source, line, col, "%s: '%.60s'", why ? why : "not a number", s);
        return WL_EPARSE;
    }
    return WL_OK;
}

int wl_results_csv_num(const wl_results_csv *c, size_t i, double *v, wl_error *err)
{
    return cell_num(wl_results_csv_field(c, i), c->path, c->lineno,
                    i < c->ncols ? c->head[i] : "", v, err);
}

/* ---- in-memory tables ------------------------------------------------------------- */

struct wl_results_table {
    char *source;
    size_t ncols;
    char **head;
    char *arena;        /* every cell, NUL-terminated */
    size_t arena_n, arena_cap;
    size_t *cell;       /* rows x ncols offsets into arena */
    int *lines;
    size_t nrows, cap;
};

static int arena_add(wl_results_table *t, const char *s, size_t *off)
{
    size_t l = strlen(s) + 1;
    if (t->arena_n + l > t->arena_cap) {
        size_t nc = t->arena_cap ? t->arena_cap : 4096;
        while (nc < t->arena_n + l)
            nc *= 2;
        char *na = realloc(t->arena, nc);
        if (!na)
            return WL_ENOMEM;
        t->arena = na;
        t->arena_cap = nc;
    }
    memcpy(t->arena + t->arena_n, s, l);
    *off = t->arena_n;
    t->arena_n += l;
    return WL_OK;
}

static int table_grow(wl_results_table *t)
{
    if (t->nrows < t->cap)
        return WL_OK;
    size_t nc = t->cap ? t->cap * 2 : 256;
    size_t *ncell = realloc(t->cell, nc * (t->ncols ? t->ncols : 1) * sizeof *ncell);
    if (!ncell)
        return WL_ENOMEM;
    t->cell = ncell;
    int *nl = realloc(t->lines, nc * sizeof *nl);
    if (!nl)
        return WL_ENOMEM;
    t->lines = nl;
    t->cap = nc;
    return WL_OK;
}

static wl_results_table *table_new(const char *source, size_t ncols, const char *const *head)
{
    wl_results_table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->source = strdup(source);
    t->ncols = ncols;
    t->head = calloc(ncols ? ncols : 1, sizeof *t->head);
    int ok = t->source && t->head;
    for (size_t i = 0; ok && i < ncols; i++)
        ok = (t->head[i] = strdup(head[i])) != NULL;
    if (!ok) {
        wl_results_table_free(t);
        return NULL;
    }
    return t;
}

int wl_results_table_read(wl_results_csv *csv, wl_results_table **out, wl_error *err)
{
    *out = NULL;
    wl_results_table *t = table_new(csv->path, csv->ncols, csv->head);
    if (!t)
        return WL_ENOMEM;
    int r, rc = WL_OK;
    while ((r = wl_results_csv_next(csv, err)) == 1) {
        if ((t->nrows & 4095) == 4095 && wl_stop_requested()) { /* wl_stop_watch */
            wl_error_set(err, t->source, 0, "", "stopped");
            rc = WL_ESTOPPED;
            break;
        }
        if ((rc = table_grow(t)))
            break;
        for (size_t c = 0; !rc && c < t->ncols; c++)
            rc = arena_add(t, wl_results_csv_field(csv, c), &t->cell[t->nrows * t->ncols + c]);
        if (rc)
            break;
        t->lines[t->nrows++] = wl_results_csv_line(csv);
    }
    if (!rc && r < 0)
        rc = WL_EPARSE;
    if (rc == WL_ENOMEM)
        wl_error_set(err, t->source, 0, "", "out of memory");
    if (rc) {
        wl_results_table_free(t);
        return rc;
    }
    *out = t;
    return WL_OK;
}

static int table_load_from(wl_results_csv *csv, int rc, wl_results_table **out, wl_error *err)
{
    if (rc)
        return rc;
    rc = wl_results_table_read(csv, out, err);
    if (!rc && wl_results_table_rows(*out) == 0) {
        wl_error_set(err, csv->path, 1, "", "no data rows");
        wl_results_table_free(*out);
        *out = NULL;
        rc = WL_EPARSE;
    }
    wl_results_csv_close(csv);
    return rc;
}

int wl_results_table_load(const char *path, wl_results_table **out, wl_error *err)
{
    *out = NULL;
    wl_results_csv *csv = NULL;
    int rc = wl_results_csv_open(path, &csv, err);
    return table_load_from(csv, rc, out, err);
}

int wl_results_table_load_mem(const char *data, size_t len, const char *source,
                              wl_results_table **out, wl_error *err)
{
    *out = NULL;
    wl_results_csv *csv = NULL;
    int rc = wl_results_csv_open_mem(data, len, source, &csv, err);
    return table_load_from(csv, rc, out, err);
}

void wl_results_table_free(wl_results_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; t->head && i < t->ncols; i++)
        free(t->head[i]);
    free(t->head);
    free(t->source);
    free(t->arena);
    free(t->cell);
    free(t->lines);
    free(t);
}

size_t wl_results_table_rows(const wl_results_table *t) { return t->nrows; }
size_t wl_results_table_ncols(const wl_results_table *t) { return t->ncols; }
const char *wl_results_table_header(const wl_results_table *t, size_t col)
{
    return col < t->ncols ? t->head[col] : "";
}
const char *wl_results_table_source(const wl_results_table *t) { return t->source; }

int wl_results_table_col(const wl_results_table *t, const char *name)
{
    for (size_t i = 0; i < t->ncols; i++)
        if (strcmp(t->head[i], name) == 0)
            return (int)i;
    return -1;
}

int wl_results_table_need(const wl_results_table *t, const char *name, wl_error *err)
{
    int c = wl_results_table_col(t, name);
    if (c < 0)
        wl_error_set(err, t->source, 1, name, "missing column");
    return c;
}

const char *wl_results_table_cell(const wl_results_table *t, size_t row, int col)
{
    if (row >= t->nrows || col < 0 || (size_t)col >= t->ncols)
        return "";
    return t->arena + t->cell[row * t->ncols + (size_t)col];
}

int wl_results_table_line(const wl_results_table *t, size_t row)
{
    return row < t->nrows ? t->lines[row] : 0;
}

int wl_results_table_num(const wl_results_table *t, size_t row, int col, double *v,
                         wl_error *err)
{
    return cell_num(wl_results_table_cell(t, row, col), t->source, wl_results_table_line(t, row),
                    wl_results_table_header(t, col >= 0 ? (size_t)col : t->ncols), v, err);
}

int wl_results_table_filter(const wl_results_table *t, const int *cols, const char *const *vals,
                            size_t n, wl_results_table **out)
{
    *out = NULL;
    wl_results_table *f = table_new(t->source, t->ncols, (const char *const *)t->head);
    if (!f)
        return WL_ENOMEM;
    int rc = WL_OK;
    for (size_t r = 0; !rc && r < t->nrows; r++) {
        int ok = 1;
        for (size_t i = 0; i < n && ok; i++)
            ok = strcmp(wl_results_table_cell(t, r, cols[i]), vals[i]) == 0;
        if (!ok)
            continue;
        if ((rc = table_grow(f)))
            break;
        for (size_t c = 0; !rc && c < t->ncols; c++)
            rc = arena_add(f, wl_results_table_cell(t, r, (int)c), &f->cell[f->nrows * f->ncols + c]);
        if (!rc)
            f->lines[f->nrows++] = t->lines[r];
    }
    if (rc) {
        wl_results_table_free(f);
        return rc;
    }
    *out = f;
    return WL_OK;
}

size_t wl_results_table_distinct(const wl_results_table *t, int col, size_t *first_row,
                                 size_t max)
{
    size_t n = 0;
    for (size_t r = 0; col >= 0 && r < t->nrows; r++) {
        const char *v = wl_results_table_cell(t, r, col);
        size_t i = 0;
        while (i < n && strcmp(wl_results_table_cell(t, first_row[i], col), v) != 0)
            i++;
        if (i == n && n < max)
            first_row[n++] = r;
    }
    return n;
}

int wl_results_table_same(const wl_results_table *t, size_t a, size_t b, const int *cols,
                          size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int c = cols ? cols[i] : (int)i;
        if (strcmp(wl_results_table_cell(t, a, c), wl_results_table_cell(t, b, c)) != 0)
            return 0;
    }
    return 1;
}

void wl_results_table_write_csv_rows(const wl_results_table *t, const unsigned char *keep,
                                     FILE *f)
{
    for (size_t c = 0; c < t->ncols; c++) {
        if (c)
            fputc(',', f);
        wl_results_csv_str(f, t->head[c]);
    }
    fputc('\n', f);
    for (size_t r = 0; r < t->nrows; r++) {
        if (keep && !keep[r])
            continue;
        for (size_t c = 0; c < t->ncols; c++) {
            if (c)
                fputc(',', f);
            wl_results_csv_str(f, wl_results_table_cell(t, r, (int)c));
        }
        fputc('\n', f);
    }
}

void wl_results_table_write_csv(const wl_results_table *t, FILE *f)
{
    wl_results_table_write_csv_rows(t, NULL, f);
}
