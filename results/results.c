/* Results I/O helpers. */
#include "wattlas_results.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct wl_results_out {
    FILE *f;
    int is_stdout;
    char path[1024];
    char tmp[1100];
};

int wl_results_out_open(const char *path, wl_results_out **out, wl_error *err)
{
    *out = NULL;
    wl_results_out *o = calloc(1, sizeof *o);
    if (!o)
        return WL_ENOMEM;
    if (strcmp(path, "-") == 0) {
        o->f = stdout;
        o->is_stdout = 1;
        *out = o;
        return WL_OK;
    }
    if (strlen(path) >= sizeof o->path) {
        free(o);
        wl_error_set(err, path, 0, "", "path too long");
        return WL_EINVAL;
    }
    snprintf(o->path, sizeof o->path, "%s", path);
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", path, (long)getpid());
    o->f = fopen(o->tmp, "w");
    if (!o->f) {
        wl_error_set(err, path, 0, "", "cannot create output: %s", strerror(errno));
        free(o);
        return WL_EIO;
    }
    *out = o;
    return WL_OK;
}

FILE *wl_results_out_stream(wl_results_out *o) { return o->f; }

int wl_results_out_commit(wl_results_out *o, wl_error *err)
{
    int rc = WL_OK;
    if (o->is_stdout) {
        if (fflush(stdout) != 0) {
            wl_error_set(err, "<stdout>", 0, "", "write error: %s", strerror(errno));
            rc = WL_EIO;
        }
        free(o);
        return rc;
    }
    int bad = ferror(o->f);
    if (fclose(o->f) != 0 || bad) {
        wl_error_set(err, o->path, 0, "", "write error: %s", strerror(errno));
        remove(o->tmp);
        rc = WL_EIO;
    } else if (rename(o->tmp, o->path) != 0) {
        wl_error_set(err, o->path, 0, "", "cannot rename output into place: %s",
                     strerror(errno));
        remove(o->tmp);
        rc = WL_EIO;
    }
    free(o);
    return rc;
}

void wl_results_out_abort(wl_results_out *o)
{
    if (!o)
        return;
    if (!o->is_stdout) {
        fclose(o->f);
        remove(o->tmp);
    }
    free(o);
}

/* ---- CSV reading ----------------------------------------------------------- */

#define CSV_MAXCOLS 128

struct wl_results_csv {
    FILE *f;
    char path[512];
    char *line;      /* raw row */
    size_t linecap;
    char *buf;       /* unquoted fields, NUL-separated */
    size_t bufcap;
    char *hdr;       /* header copy */
    const char *head[CSV_MAXCOLS];
    const char *field[CSV_MAXCOLS];
    size_t ncols, nf;
    int lineno;
};

static int read_line(wl_results_csv *c)
{
    ssize_t n = getline(&c->line, &c->linecap, c->f);
    if (n < 0)
        return 0;
    c->lineno++;
    while (n > 0 && (c->line[n - 1] == '\n' || c->line[n - 1] == '\r'))
        c->line[--n] = 0;
    return 1;
}

/* Splits c->line into c->field; 0 or -1 on a quoting error. */
static int split(wl_results_csv *c, const char **fields, size_t *nf, wl_error *err)
{
    size_t need = strlen(c->line) + 2;
    if (need > c->bufcap) {
        char *nb = realloc(c->buf, need);
        if (!nb)
            return -1;
        c->buf = nb;
        c->bufcap = need;
    }
    const char *p = c->line;
    char *o = c->buf;
    *nf = 0;
    for (;;) {
        if (*nf >= CSV_MAXCOLS) {
            wl_error_set(err, c->path, c->lineno, "", "more than %d columns", CSV_MAXCOLS);
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

int wl_results_csv_open(const char *path, wl_results_csv **out, wl_error *err)
{
    *out = NULL;
    wl_results_csv *c = calloc(1, sizeof *c);
    if (!c)
        return WL_ENOMEM;
    snprintf(c->path, sizeof c->path, "%s", path);
    c->f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    if (!c->f) {
        wl_error_set(err, path, 0, "", "cannot open: %s", strerror(errno));
        free(c);
        return WL_EIO;
    }
    if (!read_line(c)) {
        wl_error_set(err, path, 1, "", "empty file: a header row is required");
        wl_results_csv_close(c);
        return WL_EPARSE;
    }
    if (split(c, c->head, &c->ncols, err)) {
        wl_results_csv_close(c);
        return WL_EPARSE;
    }
    /* keep the header strings: copy the split buffer */
    size_t len = 0;
    for (size_t i = 0; i < c->ncols; i++)
        len += strlen(c->head[i]) + 1;
    c->hdr = malloc(len ? len : 1);
    if (!c->hdr) {
        wl_results_csv_close(c);
        return WL_ENOMEM;
    }
    char *o = c->hdr;
    for (size_t i = 0; i < c->ncols; i++) {
        size_t l = strlen(c->head[i]) + 1;
        memcpy(o, c->head[i], l);
        c->head[i] = o;
        o += l;
    }
    *out = c;
    return WL_OK;
}

void wl_results_csv_close(wl_results_csv *c)
{
    if (!c)
        return;
    if (c->f && c->f != stdin)
        fclose(c->f);
    free(c->line);
    free(c->buf);
    free(c->hdr);
    free(c);
}

int wl_results_csv_next(wl_results_csv *c, wl_error *err)
{
    for (;;) {
        if (!read_line(c))
            return 0;
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
const char *wl_results_csv_raw(const wl_results_csv *c) { return c->line; }

/* ---- writers ----------------------------------------------------------------- */

void wl_results_csv_str(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void wl_results_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch == '\n')
            fputs("\\n", f);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

void wl_results_num(FILE *f, double v, int decimals)
{
    if (!isfinite(v))
        return;
    fprintf(f, "%.*f", decimals, v);
}

int wl_results_fmt(char *buf, double v, int decimals)
{
    if (!isfinite(v)) {
        buf[0] = 0;
        return 0;
    }
    if (decimals < 0)
        decimals = 0;
    if (decimals > 9)
        decimals = 9;
    static const double pow10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
    double a = fabs(v);
    if (a * pow10[decimals] >= 9e15)
        return sprintf(buf, "%.*f", decimals, v);
    unsigned long long q = (unsigned long long)(a * pow10[decimals] + 0.5);
    char tmp[32];
    int n = 0;
    for (int i = 0; i < decimals; i++) {
        tmp[n++] = (char)('0' + q % 10);
        q /= 10;
    }
    if (decimals)
        tmp[n++] = '.';
    do {
        tmp[n++] = (char)('0' + q % 10);
        q /= 10;
    } while (q);
    int len = 0;
    int nonzero = 0;
    for (int i = 0; i < n; i++)
        nonzero |= tmp[i] != '0' && tmp[i] != '.';
    if (v < 0 && nonzero)
        buf[len++] = '-';
    while (n)
        buf[len++] = tmp[--n];
    buf[len] = 0;
    return len;
}
