/* Results I/O: numbers, buffers, CSV reading, tables and row writers
 * (out.c: the output files). */
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

/* ---- numbers ------------------------------------------------------------------ */

static const double pow10_exact[WL_RESULTS_MAX_DECIMALS + 1] = {
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
    1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17}; /* all exact in binary64 */

/* Copies text into buf unless it does not fit; drops the sign of a result
 * that is all zeros ("-0.00"). */
static size_t finish_num(char *buf, size_t n, const char *text, size_t len)
{
    if (len + 1 > n) {
        if (n)
            buf[0] = 0;
        return 0;
    }
    if (text[0] == '-' && strspn(text + 1, "0.") == len - 1) {
        text++;
        len--;
    }
    memcpy(buf, text, len);
    buf[len] = 0;
    return len;
}

size_t wl_results_fmt(char *buf, size_t n, double v, int decimals)
{
    if (n)
        buf[0] = 0;
    if (!isfinite(v) || n == 0)
        return 0;
    if (decimals < 0)
        decimals = 0;
    if (decimals > WL_RESULTS_MAX_DECIMALS)
        decimals = WL_RESULTS_MAX_DECIMALS;
    char tmp[WL_RESULTS_NUM_MAX];
    double a = fabs(v);
    /* Fast path, exact: s = |v| 10^d is one rounded product (10^d is exact)
     * and fma gives its rounding error e exactly, so the true value is
     * s + e. Below 2^50 the fraction of s is exact; the digits round up
     * when (frac - 1/2) + e > 0, down when < 0, and to even on an exact tie
     * -- printf's rule for the binary value (near an integer either way
     * gives that integer). Larger values go to snprintf. */
    double s = a * pow10_exact[decimals];
    if (s < 0x1p50) {
        double e = fma(a, pow10_exact[decimals], -s);
        double q = floor(s), frac = s - q;
        uint64_t u = (uint64_t)q;
        /* frac - 1/2 is exact for frac >= 1/4 (Sterbenz); below, |e| is far
         * smaller than it and cannot change the sign of the sum, whose sign
         * rounding keeps */
        double side = (frac - 0.5) + e;
        if (side > 0 || (side == 0 && (u & 1)))
            u++;
        char rev[40];
        int k = 0;
        for (int i = 0; i < decimals; i++) {
            rev[k++] = (char)('0' + u % 10);
            u /= 10;
        }
        if (decimals)
            rev[k++] = '.';
        do {
            rev[k++] = (char)('0' + u % 10);
            u /= 10;
        } while (u);
        size_t len = 0;
        if (signbit(v))
            tmp[len++] = '-';
        while (k)
            tmp[len++] = rev[--k];
        tmp[len] = 0;
        return finish_num(buf, n, tmp, len);
    }
    int l = snprintf(tmp, sizeof tmp, "%.*f", decimals, v);
    if (l < 0 || (size_t)l >= sizeof tmp)
        return 0;
    return finish_num(buf, n, tmp, (size_t)l);
}

size_t wl_results_fmt_param(char *buf, size_t n, double v)
{
    if (n)
        buf[0] = 0;
    if (!isfinite(v) || n == 0)
        return 0;
    char tmp[40]; /* "%.10g" is at most 17 characters */
    int l = snprintf(tmp, sizeof tmp, "%.10g", v);
    if (l < 0 || (size_t)l >= n || (size_t)l >= sizeof tmp) {
        buf[0] = 0;
        return 0;
    }
    memcpy(buf, tmp, (size_t)l + 1);
    return (size_t)l;
}

/* ---- buffers ------------------------------------------------------------------ */

void wl_results_buf_put(wl_results_buf *b, const char *s, size_t len)
{
    if (b->oom)
        return;
    if (len > SIZE_MAX / 2 - b->n - 1) {
        b->oom = 1;
        return;
    }
    if (b->n + len + 1 > b->cap) {
        size_t nc = b->cap ? b->cap : 4096;
        while (nc < b->n + len + 1)
            nc *= 2;
        char *np = realloc(b->p, nc);
        if (!np) {
            b->oom = 1;
            return;
        }
        b->p = np;
        b->cap = nc;
    }
    if (len)
        memcpy(b->p + b->n, s, len);
    b->n += len;
    b->p[b->n] = 0;
}

void wl_results_buf_puts(wl_results_buf *b, const char *s) { wl_results_buf_put(b, s, strlen(s)); }

void wl_results_buf_num(wl_results_buf *b, double v, int decimals)
{
    char t[WL_RESULTS_NUM_MAX];
    wl_results_buf_put(b, t, wl_results_fmt(t, sizeof t, v, decimals));
}

/* CSV and JSON string escaping, written once for both sinks: a buffer
 * (rows formatted ahead) and a stream (tables written directly). */
typedef void (*sink_fn)(void *to, const char *p, size_t n);

static void sink_buf(void *to, const char *p, size_t n) { wl_results_buf_put(to, p, n); }

static void sink_file(void *to, const char *p, size_t n)
{
    if (n)
        fwrite(p, 1, n, to);
}

static void csv_escape(sink_fn put, void *to, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        put(to, s, strlen(s));
        return;
    }
    put(to, "\"", 1);
    for (const char *p = s; *p; p++) {
        size_t run = strcspn(p, "\"");
        put(to, p, run);
        p += run;
        if (!*p)
            break;
        put(to, "\"\"", 2); /* a quote doubled */
    }
    put(to, "\"", 1);
}

static void json_escape(sink_fn put, void *to, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    put(to, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') {
            char e[2] = {'\\', (char)*p};
            put(to, e, 2);
        } else if (*p == '\n') {
            put(to, "\\n", 2);
        } else if (*p < 0x20) {
            char e[6] = {'\\', 'u', '0', '0', hex[*p >> 4], hex[*p & 15]};
            put(to, e, 6);
        } else {
            put(to, (const char *)p, 1);
        }
    }
    put(to, "\"", 1);
}

void wl_results_buf_csv(wl_results_buf *b, const char *s) { csv_escape(sink_buf, b, s); }

void wl_results_buf_json(wl_results_buf *b, const char *s) { json_escape(sink_buf, b, s); }

void wl_results_buf_free(wl_results_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

static void put_buf(FILE *f, wl_results_buf *b)
{
    if (b->n)
        fwrite(b->p, 1, b->n, f);
    wl_results_buf_free(b);
}

void wl_results_csv_str(FILE *f, const char *s) { csv_escape(sink_file, f, s); }

void wl_results_json_str(FILE *f, const char *s) { json_escape(sink_file, f, s); }

void wl_results_num(FILE *f, double v, int decimals)
{
    char t[WL_RESULTS_NUM_MAX];
    size_t l = wl_results_fmt(t, sizeof t, v, decimals);
    if (l)
        fwrite(t, 1, l, f);
}

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
        wl_error_set(err, c->path, c->lineno + 1, "", "read error: %s",
                     strerror(errno ? errno : EIO));
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
        wl_error_set(err, source, line, col, "not a finite number: '%.60s'", s);
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

/* ---- row writers ------------------------------------------------------------------------ */

static const char *const format_names[] = {"table", "csv", "ndjson", "json"};

int wl_results_format_parse(const char *s, wl_results_format *out)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(s, format_names[i]) == 0) {
            *out = (wl_results_format)i;
            return WL_OK;
        }
    return WL_EINVAL;
}

const char *wl_results_format_name(wl_results_format f)
{
    return (unsigned)f < 4 ? format_names[f] : f == WL_FMT_COLUMNS ? "columns" : "?";
}

struct wl_results_writer {
    FILE *f;
    wl_results_format fmt;
    const wl_results_col *cols;
    size_t ncols;
    int *width;
    size_t first_vis, last_vis; /* table: the first and last shown columns */
    int header_done, any_row;
};

static int shown(const wl_results_writer *w, size_t i)
{
    return w->fmt != WL_FMT_TABLE || !w->cols[i].table_hide;
}

int wl_results_writer_create(FILE *f, wl_results_format fmt, const wl_results_col *cols,
                             size_t ncols, wl_results_writer **out)
{
    *out = NULL;
    wl_results_writer *w = calloc(1, sizeof *w);
    if (!w)
        return WL_ENOMEM;
    w->width = calloc(ncols ? ncols : 1, sizeof *w->width);
    if (!w->width) {
        free(w);
        return WL_ENOMEM;
    }
    w->f = f;
    w->fmt = fmt;
    w->cols = cols;
    w->ncols = ncols;
    for (size_t i = 0; i < ncols; i++) {
        int wd = (int)strlen(cols[i].name);
        int by_type = cols[i].type == WL_COL_NUM
                          ? (cols[i].sig > 0 ? 10 : cols[i].decimals < 0 ? 6 : cols[i].decimals + 6)
                      : cols[i].type == WL_COL_INT ? 6 : cols[i].type == WL_COL_BOOL ? 1 : 8;
        if (by_type > wd)
            wd = by_type;
        if (cols[i].width > wd)
            wd = cols[i].width;
        w->width[i] = wd;
    }
    w->first_vis = ncols;
    for (size_t i = 0; i < ncols; i++)
        if (shown(w, i)) {
            if (w->first_vis == ncols)
                w->first_vis = i;
            w->last_vis = i;
        }
    *out = w;
    return WL_OK;
}

void wl_results_writer_header(wl_results_writer *w)
{
    if (w->header_done)
        return;
    w->header_done = 1;
    wl_results_buf b = {0};
    if (w->fmt == WL_FMT_CSV) {
        for (size_t i = 0; i < w->ncols; i++) {
            if (i)
                wl_results_buf_put(&b, ",", 1);
            wl_results_buf_csv(&b, w->cols[i].name);
        }
        wl_results_buf_put(&b, "\n", 1);
    } else if (w->fmt == WL_FMT_TABLE) {
        for (size_t i = 0; i < w->ncols; i++) {
            if (!shown(w, i))
                continue;
            size_t l = strlen(w->cols[i].name);
            int left = w->cols[i].type == WL_COL_TEXT || w->cols[i].type == WL_COL_AUTO;
            if (i > w->first_vis)
                wl_results_buf_put(&b, " ", 1);
            for (size_t k = l; !left && k < (size_t)w->width[i]; k++)
                wl_results_buf_put(&b, " ", 1);
            wl_results_buf_puts(&b, w->cols[i].name);
            for (size_t k = l; left && i < w->last_vis && k < (size_t)w->width[i]; k++)
                wl_results_buf_put(&b, " ", 1);
        }
        wl_results_buf_put(&b, "\n", 1);
    } else if (w->fmt == WL_FMT_JSON) {
        wl_results_buf_put(&b, "[", 1);
    } else if (w->fmt == WL_FMT_COLUMNS) {
        uint32_t n = (uint32_t)w->ncols;
        wl_results_buf_put(&b, (const char *)&n, sizeof n);
        for (size_t i = 0; i < w->ncols; i++) {
            const wl_results_col *c = &w->cols[i];
            uint32_t l = (uint32_t)strlen(c->name);
            uint8_t t = (uint8_t)c->type;
            int32_t dec = c->decimals, sig = c->sig;
            wl_results_buf_put(&b, (const char *)&l, sizeof l);
            wl_results_buf_put(&b, c->name, l);
            wl_results_buf_put(&b, (const char *)&t, 1);
            wl_results_buf_put(&b, (const char *)&dec, sizeof dec);
            wl_results_buf_put(&b, (const char *)&sig, sizeof sig);
        }
    }
    put_buf(w->f, &b);
}

/* A text cell that JSON can carry as a number: finite, and as written. */
static int auto_numeric(const char *s)
{
    double v;
    if (!s || !*s || wl_core_parse_number(s, &v))
        return 0;
    /* JSON numbers: no leading '+', '.', blanks, hex, or leading zeros */
    if (*s == '-')
        s++;
    if (!(*s >= '0' && *s <= '9') || (s[0] == '0' && s[1] >= '0' && s[1] <= '9'))
        return 0;
    for (; *s; s++)
        if (!strchr("0123456789.eE+-", *s))
            return 0;
    return s[-1] >= '0' && s[-1] <= '9';
}

static size_t cell_text(const wl_results_col *c, const wl_results_cell *v, wl_results_format fmt,
                        char *t, size_t n)
{
    t[0] = 0;
    switch (c->type) {
    case WL_COL_NUM:
        if (c->sig > 0) {
            /* decimals that leave sig significant digits: 21.7, 0.604, 0.00123 */
            int dec = 0;
            if (isfinite(v->v) && v->v != 0)
                dec = c->sig - 1 - (int)floor(log10(fabs(v->v)));
            if (dec < 0)
                dec = 0;
            return wl_results_fmt(t, n, v->v, dec);
        }
        return c->decimals < 0 ? wl_results_fmt_param(t, n, v->v)
                               : wl_results_fmt(t, n, v->v, c->decimals);
    case WL_COL_INT: return wl_results_fmt(t, n, v->v, 0);
    case WL_COL_BOOL:
        if (isnan(v->v))
            return 0;
        if (fmt == WL_FMT_JSON || fmt == WL_FMT_NDJSON)
            return (size_t)snprintf(t, n, "%s", v->v != 0 ? "true" : "false");
        t[0] = v->v != 0 ? '1' : '0';
        t[1] = 0;
        return 1;
    default: return 0;
    }
}

void wl_results_writer_format_cols(const wl_results_writer *w, const wl_results_cell *cells,
                                   size_t first, size_t last, wl_results_buf *b)
{
    char t[WL_RESULTS_NUM_MAX];
    int json = w->fmt == WL_FMT_JSON || w->fmt == WL_FMT_NDJSON;
    if (last > w->ncols)
        last = w->ncols;
    if (first == 0) {
        if (w->fmt == WL_FMT_JSON)
            wl_results_buf_puts(b, ",\n  {");
        else if (json)
            wl_results_buf_put(b, "{", 1);
    }
    for (size_t i = first; i < last; i++) {
        const wl_results_col *c = &w->cols[i];
        const wl_results_cell *v = &cells[i];
        if (w->fmt == WL_FMT_COLUMNS) {
            /* numbers as the CSV writes them, read back */
            const char *txt = NULL;
            size_t l = 0;
            if (c->type == WL_COL_TEXT || c->type == WL_COL_AUTO) {
                txt = v->s;
                l = txt ? strlen(txt) : 0;
            } else {
                l = cell_text(c, v, WL_FMT_CSV, t, sizeof t);
            }
            if (!l && !txt) {
                wl_results_buf_put(b, "\0", 1);
            } else if (txt) {
                uint32_t n = (uint32_t)l;
                wl_results_buf_put(b, "\2", 1);
                wl_results_buf_put(b, (const char *)&n, sizeof n);
                wl_results_buf_put(b, txt, l);
            } else {
                double d = strtod(t, NULL);
                wl_results_buf_put(b, "\1", 1);
                wl_results_buf_put(b, (const char *)&d, sizeof d);
            }
            continue;
        }
        if (json) {
            if (i)
                wl_results_buf_put(b, ", ", w->fmt == WL_FMT_JSON ? 2 : 1);
            wl_results_buf_json(b, c->name);
            wl_results_buf_put(b, w->fmt == WL_FMT_JSON ? ": " : ":", w->fmt == WL_FMT_JSON ? 2 : 1);
            if (c->type == WL_COL_TEXT || (c->type == WL_COL_AUTO && !auto_numeric(v->s))) {
                if (v->s)
                    wl_results_buf_json(b, v->s);
                else
                    wl_results_buf_puts(b, "null");
            } else if (c->type == WL_COL_AUTO) {
                wl_results_buf_puts(b, v->s);
            } else {
                size_t l = cell_text(c, v, w->fmt, t, sizeof t);
                if (l)
                    wl_results_buf_put(b, t, l);
                else
                    wl_results_buf_put(b, "null", 4);
            }
            continue;
        }
        if (!shown(w, i))
            continue;
        if (w->fmt == WL_FMT_CSV ? i > 0 : i > w->first_vis)
            wl_results_buf_put(b, w->fmt == WL_FMT_CSV ? "," : " ", 1);
        if (c->type == WL_COL_TEXT || c->type == WL_COL_AUTO) {
            const char *s = v->s ? v->s : "";
            if (w->fmt == WL_FMT_CSV) {
                wl_results_buf_csv(b, s);
            } else {
                size_t l = strlen(s);
                wl_results_buf_put(b, s, l);
                for (size_t k = l; i < w->last_vis && k < (size_t)w->width[i]; k++)
                    wl_results_buf_put(b, " ", 1);
            }
            continue;
        }
        size_t l = cell_text(c, v, w->fmt, t, sizeof t);
        for (size_t k = l; w->fmt == WL_FMT_TABLE && k < (size_t)w->width[i]; k++)
            wl_results_buf_put(b, " ", 1);
        wl_results_buf_put(b, t, l);
    }
    if (last == w->ncols && w->fmt != WL_FMT_COLUMNS) {
        if (json)
            wl_results_buf_put(b, "}", 1);
        if (w->fmt != WL_FMT_JSON)
            wl_results_buf_put(b, "\n", 1);
    }
}

void wl_results_writer_format(const wl_results_writer *w, const wl_results_cell *cells,
                              wl_results_buf *b)
{
    wl_results_writer_format_cols(w, cells, 0, w->ncols, b);
}

void wl_results_writer_set_stream(wl_results_writer *w, FILE *f) { w->f = f; }

void wl_results_writer_emit(wl_results_writer *w, const char *rows, size_t len)
{
    if (!w->header_done)
        wl_results_writer_header(w);
    if (!len)
        return;
    /* JSON rows start with ",\n": the first element of the array has none */
    if (w->fmt == WL_FMT_JSON && !w->any_row && rows[0] == ',') {
        rows++;
        len--;
    }
    w->any_row = 1;
    fwrite(rows, 1, len, w->f);
}

int wl_results_writer_row(wl_results_writer *w, const wl_results_cell *cells)
{
    wl_results_buf b = {0};
    wl_results_writer_format(w, cells, &b);
    int rc = b.oom ? WL_ENOMEM : WL_OK;
    if (!rc)
        wl_results_writer_emit(w, b.p, b.n);
    wl_results_buf_free(&b);
    return rc;
}

void wl_results_writer_note(wl_results_writer *w, const char *fmt, ...)
{
    if (w->fmt != WL_FMT_TABLE)
        return;
    va_list ap;
    va_start(ap, fmt);
    fputs("# ", w->f);
    vfprintf(w->f, fmt, ap);
    fputc('\n', w->f);
    va_end(ap);
}

void wl_results_writer_finish(wl_results_writer *w)
{
    if (!w)
        return;
    if (!w->header_done)
        wl_results_writer_header(w);
    if (w->fmt == WL_FMT_JSON)
        fputs(w->any_row ? "\n]\n" : "]\n", w->f);
    wl_results_writer_free(w);
}

void wl_results_writer_free(wl_results_writer *w)
{
    if (!w)
        return;
    free(w->width);
    free(w);
}
