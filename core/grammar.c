/* The one grammar of numbers, lists and ranges (see wattlas_core.h). */
#include "wattlas_core.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_blank(char c) { return c == ' ' || c == '\t'; }

int wl_core_parse_number(const char *s, double *out)
{
    while (is_blank(*s))
        s++;
    if (!*s)
        return WL_EINVAL;
    /* strtod reads C's hexadecimal (0x48, 0x1p3); no preset, table or
     * option writes a number so, so one is a mistake, not 72 */
    const char *d = s + (*s == '+' || *s == '-');
    if (d[0] == '0' && (d[1] == 'x' || d[1] == 'X'))
        return WL_EINVAL;
    char *e;
    errno = 0;
    double v = strtod(s, &e);
    if (e == s || errno == ERANGE || !isfinite(v))
        return WL_EINVAL;
    while (is_blank(*e))
        e++;
    if (*e)
        return WL_EINVAL;
    *out = v;
    return WL_OK;
}

/* A number as people write it in a message: 1000000, not 1e+06. */
void wl_core_num_text(char *buf, size_t n, double v)
{
    if (v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, n, "%.0f", v);
    else
        snprintf(buf, n, "%g", v);
}

static void range_error(wl_error *err, const char *source, int line, const char *field,
                        const char *what, double lo, double hi, const char *got)
{
    char a[40], b[40];
    wl_core_num_text(a, sizeof a, lo);
    wl_core_num_text(b, sizeof b, hi);
    wl_error_set(err, source, line, field, "expected %s in [%s, %s], got '%.80s'", what, a, b, got);
}

int wl_core_parse_real(const char *s, double lo, double hi, const char *source, int line,
                       const char *field, double *out, wl_error *err)
{
    double v;
    if (wl_core_parse_number(s, &v) || !(v >= lo && v <= hi)) {
        range_error(err, source, line, field, "a number", lo, hi, s);
        return WL_EINVAL;
    }
    *out = v;
    return WL_OK;
}

int wl_core_parse_int(const char *s, long long lo, long long hi, const char *source, int line,
                      const char *field, long long *out, wl_error *err)
{
    double v;
    if (wl_core_parse_number(s, &v) || v != floor(v) || !(v >= (double)lo && v <= (double)hi)) {
        range_error(err, source, line, field, "an integer", (double)lo, (double)hi, s);
        return WL_EINVAL;
    }
    *out = (long long)v;
    return WL_OK;
}

static int numlist_push(wl_core_numlist *l, double x)
{
    if (l->n == l->cap) {
        size_t nc = l->cap ? l->cap * 2 : 16;
        double *nv = realloc(l->v, nc * sizeof *nv);
        if (!nv)
            return WL_ENOMEM;
        l->v = nv;
        l->cap = nc;
    }
    l->v[l->n++] = x;
    return WL_OK;
}

void wl_core_numlist_free(wl_core_numlist *l)
{
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* The items of a comma-separated list, trimmed: calls fn on each (as a
 * NUL-terminated copy). */
typedef int (*item_fn)(void *user, const char *item, const char *whole);

static int each_item(const char *s, const char *source, int line, const char *field,
                     item_fn fn, void *user, wl_error *err)
{
    size_t total = strlen(s);
    char *tmp = malloc(total + 1);
    if (!tmp)
        return WL_ENOMEM;
    int rc = WL_OK, n = 0;
    const char *p = s;
    for (;;) {
        const char *e = strchr(p, ',');
        const char *end = e ? e : p + strlen(p);
        const char *a = p, *b = end;
        while (a < b && is_blank(*a))
            a++;
        while (b > a && is_blank(b[-1]))
            b--;
        if (a == b) {
            if (e || n)
                wl_error_set(err, source, line, field, "empty item in the list '%.80s'", s);
            else
                wl_error_set(err, source, line, field, "empty value");
            rc = WL_EINVAL;
            break;
        }
        memcpy(tmp, a, (size_t)(b - a));
        tmp[b - a] = 0;
        if ((rc = fn(user, tmp, s)))
            break;
        n++;
        if (!e)
            break;
        p = e + 1;
    }
    free(tmp);
    return rc;
}

typedef struct {
    double lo, hi;
    int integers;
    const char *source, *field;
    int line;
    wl_core_numlist *out;
    wl_error *err;
} list_ctx;

static int check_value(list_ctx *c, double x, const char *item)
{
    if (!(x >= c->lo && x <= c->hi) || (c->integers && x != floor(x))) {
        range_error(c->err, c->source, c->line, c->field,
                    c->integers ? "integers" : "numbers", c->lo, c->hi, item);
        return WL_EINVAL;
    }
    return WL_OK;
}

static int list_item(void *user, const char *item, const char *whole)
{
    list_ctx *c = user;
    const char *colon = strchr(item, ':');
    if (!colon) {
        double x;
        if (wl_core_parse_number(item, &x)) {
            wl_error_set(c->err, c->source, c->line, c->field,
                         "expected a number, a list or MIN:MAX:STEP, got '%.80s'", whole);
            return WL_EINVAL;
        }
        int rc = check_value(c, x, item);
        /* a list written out value by value has the limit a range has: a
         * spec of 1.2M comma-separated clocks was accepted (846 MB) */
        if (!rc && c->out->n >= WL_LIST_MAX) {
            wl_error_set(c->err, c->source, c->line, c->field,
                         "the list has more than %d values", WL_LIST_MAX);
            rc = WL_EINVAL;
        }
        return rc ? rc : numlist_push(c->out, x);
    }
    /* MIN:MAX:STEP */
    char parts[3][64];
    const char *p = item;
    int k = 0;
    for (; k < 3; k++) {
        const char *e = strchr(p, ':');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l >= sizeof parts[k] || (k < 2 && !e) || (k == 2 && e))
            break;
        memcpy(parts[k], p, l);
        parts[k][l] = 0;
        p = e ? e + 1 : p + l;
    }
    double a, b, st;
    if (k != 3 || wl_core_parse_number(parts[0], &a) || wl_core_parse_number(parts[1], &b) ||
        wl_core_parse_number(parts[2], &st)) {
        wl_error_set(c->err, c->source, c->line, c->field,
                     "expected MIN:MAX:STEP with three numbers, got '%.80s'", item);
        return WL_EINVAL;
    }
    if (!(st > 0) || !(b >= a)) {
        wl_error_set(c->err, c->source, c->line, c->field,
                     "range '%.80s' needs MIN <= MAX and STEP > 0", item);
        return WL_EINVAL;
    }
    double count = floor((b - a) / st * (1 + 1e-12) + 1e-9) + 1;
    if (!(count <= (double)WL_LIST_MAX) || c->out->n + (size_t)count > WL_LIST_MAX) {
        wl_error_set(c->err, c->source, c->line, c->field, "range '%.80s' has more than %d values",
                     item, WL_LIST_MAX);
        return WL_EINVAL;
    }
    int rc = check_value(c, a, item);
    if (!rc)
        rc = check_value(c, a + (count - 1) * st, item);
    /* each value from MIN by multiplication: no drift from repeated addition */
    for (size_t i = 0; !rc && i < (size_t)count; i++) {
        double x = a + (double)i * st;
        if (c->integers && x != floor(x))
            rc = check_value(c, x, item);
        else
            rc = numlist_push(c->out, x);
    }
    return rc;
}

int wl_core_parse_list(const char *s, double lo, double hi, int integers, const char *source,
                       int line, const char *field, wl_core_numlist *out, wl_error *err)
{
    list_ctx c = {lo, hi, integers, source, field, line, out, err};
    int rc = each_item(s, source, line, field, list_item, &c, err);
    if (rc == WL_ENOMEM)
        wl_error_set(err, source, line, field, "out of memory");
    return rc;
}

typedef struct {
    wl_core_strlist *out;
} names_ctx;

static int name_item(void *user, const char *item, const char *whole)
{
    (void)whole;
    wl_core_strlist *l = ((names_ctx *)user)->out;
    char **nv = realloc(l->v, (l->n + 1) * sizeof *nv);
    if (!nv)
        return WL_ENOMEM;
    l->v = nv;
    if (!(l->v[l->n] = strdup(item)))
        return WL_ENOMEM;
    l->n++;
    return WL_OK;
}

int wl_core_parse_names(const char *s, const char *source, int line, const char *field,
                        wl_core_strlist *out, wl_error *err)
{
    names_ctx c = {out};
    int rc = each_item(s, source, line, field, name_item, &c, err);
    if (rc == WL_ENOMEM)
        wl_error_set(err, source, line, field, "out of memory");
    return rc;
}

void wl_core_strlist_free(wl_core_strlist *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}
