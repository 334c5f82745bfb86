/* The one grammar of numbers, lists and ranges (see wattlas_core.h). */
#include "wattlas_core.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int is_blank(char c) { return c == ' ' || c == '\t'; }

/* Reads s as a number: NULL with *out set, else why it is none. */
static const char *number_read(const char *s, double *out)
{
    while (is_blank(*s))
        s++;
    if (!*s)
        return "not a number";
    /* strtod reads C's hexadecimal (0x48, 0x1p3); no preset, table or
     * option writes a number so, so one is a mistake, not 72 */
    const char *d = s + (*s == '+' || *s == '-');
    if (d[0] == '0' && (d[1] == 'x' || d[1] == 'X'))
        return "hexadecimal: write it in decimal";
    char *e;
    errno = 0;
    double v = strtod(s, &e);
    int range = errno == ERANGE;
    while (e != s && is_blank(*e))
        e++;
    if (e == s || *e)
        return "not a number";
    /* strtod's ERANGE: beyond DBL_MAX, or below DBL_MIN (a subnormal or
     * less, which no measurement or setting is) */
    if (range)
        return fabs(v) >= 1 ? "beyond the largest double, 1.8e308"
                            : "too close to zero: below 2.2e-308, a subnormal or less";
    if (!isfinite(v))
        return "not a finite number";
    *out = v;
    return NULL;
}

int wl_core_parse_number(const char *s, double *out)
{
    return number_read(s, out) ? WL_EINVAL : WL_OK;
}

const char *wl_core_number_why(const char *s)
{
    double v;
    return number_read(s, &v);
}

/* A number as people write it in a message: 1000000, not 1e+06. */
void wl_core_num_text(char *buf, size_t n, double v)
{
    if (v == floor(v) && fabs(v) < 1e15)
        snprintf(buf, n, "%.0f", v);
    else
        snprintf(buf, n, "%g", v);
}

/* ---- units written into numbers ----------------------------------------- */

/* Numbers carry no unit: the unit is in the name (sm_clock_mhz,
 * power_limit_w) or the option's help (--clock: MHz). "1.4GHz" is a
 * natural thing to type, so the error names the unit it found, the unit
 * the name takes and, where one converts to the other, the number to
 * write. */
typedef struct {
    const char *name;
    char dim;      /* f frequency, p power, v voltage, t time, b bytes, %: percent */
    double factor; /* in the dimension's base unit */
} unit;

static const unit units[] = {
    {"Hz", 'f', 1},      {"kHz", 'f', 1e3},    {"MHz", 'f', 1e6},   {"GHz", 'f', 1e9},
    {"mW", 'p', 1e-3},   {"W", 'p', 1},        {"kW", 'p', 1e3},    {"MW", 'p', 1e6},
    {"mV", 'v', 1e-3},   {"V", 'v', 1},        {"ns", 't', 1e-9},   {"us", 't', 1e-6},
    {"\xc2\xb5s", 't', 1e-6}, {"ms", 't', 1e-3}, {"s", 't', 1},   {"min", 't', 60},
    {"h", 't', 3600},    {"B", 'b', 1},        {"KB", 'b', 1e3},    {"kB", 'b', 1e3},
    {"MB", 'b', 1e6},    {"GB", 'b', 1e9},     {"TB", 'b', 1e12},   {"KiB", 'b', 1024.0},
    {"MiB", 'b', 1048576.0}, {"GiB", 'b', 1073741824.0}, {"TiB", 'b', 1099511627776.0},
    {"%", '%', 1},       {"pct", '%', 1},
};

/* The unit a written unit names: case as written first ("mW" is not "MW"),
 * then any case ("ghz"). */
static const unit *unit_find(const char *u)
{
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < sizeof units / sizeof *units; i++)
            if (pass ? !strcasecmp(units[i].name, u) : !strcmp(units[i].name, u))
                return &units[i];
    return NULL;
}

/* The unit a field or option takes: its name's last word (sm_clock_mhz,
 * --step-mhz, power_limit_w), or the options whose help gives it. */
static const unit *unit_of_name(const char *name)
{
    static const struct {
        const char *opt, *unit;
    } opts[] = {{"clock", "MHz"}, {"clocks", "MHz"}, {"power-limit", "W"}, {"power-limits", "W"}};
    while (*name == '-')
        name++;
    for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
        if (!strcmp(name, opts[i].opt))
            return unit_find(opts[i].unit);
    const char *w = name + strlen(name);
    while (w > name && w[-1] != '_' && w[-1] != '-')
        w--;
    if (w == name)
        return NULL;
    static const struct {
        const char *word, *unit;
    } words[] = {{"mhz", "MHz"}, {"ghz", "GHz"}, {"w", "W"},   {"mv", "mV"}, {"ms", "ms"},
                 {"us", "us"},   {"s", "s"},     {"gb", "GB"}, {"pct", "%"}};
    for (size_t i = 0; i < sizeof words / sizeof *words; i++)
        if (!strcmp(w, words[i].word))
            return unit_find(words[i].unit);
    return NULL;
}

/* " ('1.4GHz' carries the unit GHz; --clock takes plain MHz: write 1400)"
 * when text is a number with a unit after it; "" otherwise. The unit
 * wanted is the field's (power_limit_w), else the option's (--clock); the
 * name shown is the option's, unless it is --set, whose field is the name. */
void wl_core_unit_hint(const char *text, const char *source, const char *field, char *buf,
                       size_t n)
{
    buf[0] = 0;
    char *e;
    double v = strtod(text, &e);
    if (e == text || !isfinite(v))
        return;
    while (is_blank(*e))
        e++;
    size_t ul = strlen(e);
    while (ul && is_blank(e[ul - 1]))
        ul--;
    char u[16];
    if (!ul || ul >= sizeof u)
        return;
    memcpy(u, e, ul);
    u[ul] = 0;
    int opt = source && source[0] == '-';
    const unit *got = unit_find(u), *want = field && *field ? unit_of_name(field) : NULL;
    if (!want && opt)
        want = unit_of_name(source);
    const char *name = opt && strcmp(source, "--set") ? source : field ? field : "";
    if (!got && !want)
        return;
    if (got && want && got->dim == want->dim) {
        char num[40];
        wl_core_num_text(num, sizeof num, v * got->factor / want->factor);
        snprintf(buf, n, " ('%.40s' carries the unit %s; %s takes plain %s: write %s)", text,
                 got->name, name, want->name, num);
    } else if (want) {
        snprintf(buf, n, " ('%.40s' carries a unit; %s takes a plain number in %s)", text, name,
                 want->name);
    } else {
        snprintf(buf, n, " ('%.40s' carries the unit %s; numbers here take none)", text,
                 got->name);
    }
}

/* The unit hint, else why a number-like text is none (1e-310 is in [0, 1],
 * yet no number a setting or a measurement takes) */
static void number_hint(const char *got, const char *source, const char *field, char *hint,
                        size_t n)
{
    wl_core_unit_hint(got, source, field, hint, n);
    const char *why = wl_core_number_why(got);
    if (!hint[0] && why && strncmp(why, "not a", 5))
        snprintf(hint, n, " (%s)", why);
}

static void range_error(wl_error *err, const char *source, int line, const char *field,
                        const char *what, double lo, double hi, const char *got)
{
    char a[40], b[40], hint[200];
    wl_core_num_text(a, sizeof a, lo);
    wl_core_num_text(b, sizeof b, hi);
    number_hint(got, source, field, hint, sizeof hint);
    wl_error_set(err, source, line, field, "expected %s in [%s, %s], got '%.80s'%s", what, a, b,
                 got, hint);
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
            char hint[200];
            number_hint(item, c->source, c->field, hint, sizeof hint);
            wl_error_set(c->err, c->source, c->line, c->field,
                         "expected a number, a list or MIN:MAX:STEP, got '%.80s'%s", whole, hint);
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
        char hint[200] = "";
        for (int j = 0; j < k && !hint[0]; j++)
            wl_core_unit_hint(parts[j], c->source, c->field, hint, sizeof hint);
        wl_error_set(c->err, c->source, c->line, c->field,
                     "expected MIN:MAX:STEP with three numbers, got '%.80s'%s", item, hint);
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

int wl_core_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
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

int wl_core_parse_axis(const char *s, double lo, double hi, int integers, const char *source,
                       int line, const char *field, wl_core_numlist *out, wl_error *err)
{
    int rc = wl_core_parse_list(s, lo, hi, integers, source, line, field, out, err);
    /* a value twice is one row twice (issue 77: --max-num-seqs 1,1,1
     * printed one row three times): a mistake, said where it is made */
    double *v = !rc && out->n > 1 ? malloc(out->n * sizeof *v) : NULL;
    if (!rc && out->n > 1 && !v) {
        wl_error_set(err, source, line, field, "out of memory");
        return WL_ENOMEM;
    }
    if (v) {
        memcpy(v, out->v, out->n * sizeof *v);
        qsort(v, out->n, sizeof *v, wl_core_cmp_double);
        for (size_t i = 1; i < out->n && !rc; i++)
            if (v[i] == v[i - 1]) {
                char t[WL_CORE_NUM_TEXT];
                wl_core_num_text(t, sizeof t, v[i]);
                wl_error_set(err, source, line, field,
                             "%s is in the list twice ('%.80s'): each value is one row", t, s);
                rc = WL_EINVAL;
            }
        free(v);
    }
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
