/* Results I/O: numbers, buffers and row writers (tables.c: CSV reading
 * and in-memory tables; out.c: the output files). */
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
        /* a value that rounds to zero prints no sign: -0 and -0.0001 at two
         * decimals are "0" and "0.00", not "-0" (issue 77: --rate -0) */
        int neg = signbit(v) && u != 0;
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
        if (neg)
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
    if (v == 0)
        v = 0.0; /* no "-0" */
    char tmp[40]; /* "%.10g" is at most 17 characters */
    int l = snprintf(tmp, sizeof tmp, "%.10g", v);
    if (l < 0 || (size_t)l >= n || (size_t)l >= sizeof tmp) {
        buf[0] = 0;
        return 0;
    }
    memcpy(buf, tmp, (size_t)l + 1);
    return (size_t)l;
}

size_t wl_results_gb_text(char *buf, size_t n, double gb)
{
    int l = snprintf(buf, n, "%.1f GB (%.1f GiB)", gb, gb * 1e9 / 1073741824.0);
    return l < 0 || (size_t)l >= n ? 0 : (size_t)l;
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
    int hashing;                /* the rows' bytes are hashed (a shard's end line) */
    uint64_t hash;              /* FNV-1a 64 over them */
    unsigned long long lines;   /* their newlines */
};

void wl_results_writer_hash_rows(wl_results_writer *w)
{
    w->hashing = 1;
    w->hash = 1469598103934665603ULL; /* FNV-1a's offset basis, as wl_sweep_hash */
    w->lines = 0;
}

uint64_t wl_results_writer_rows_hash(const wl_results_writer *w, unsigned long long *lines)
{
    if (lines)
        *lines = w->lines;
    return w->hash;
}

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
    if (w->hashing)
        for (size_t i = 0; i < len; i++) {
            w->hash = (w->hash ^ (unsigned char)rows[i]) * 1099511628211ULL;
            w->lines += rows[i] == '\n';
        }
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
