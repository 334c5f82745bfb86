/* Sets of operating points read from sweep tables: grouping by parameter
 * columns, fronts per group, the savings table and per-class clock
 * schedules. Everything is sized from the input: no field, key or group
 * count is bounded by a fixed buffer. */
#include "wattlas_pareto.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct wl_pareto_set {
    char *source;
    char **cols;          /* header */
    size_t ncols;
    size_t nv;            /* value columns */
    char **vnames;
    size_t n, cap;
    double *val;          /* n x nv */
    uint32_t *group;
    int *line;
    size_t *src;          /* n: the row's index in its input (data rows from 0) */
    size_t *fields;       /* n: offset of the row's fields in text (keep_fields) */
    size_t *label;        /* n: offset of the label in text */
    char *text;
    size_t text_n, text_cap;
    char **gkeys;         /* group -> key, fields joined by '/' */
    char **gfields;       /* group -> its fields, each NUL-terminated in turn */
    char **gnames;        /* the columns grouped by */
    size_t ngc;
    size_t ngroups, gcap;
    size_t *hash;         /* open addressing: group + 1, 0 = empty */
    size_t hcap;
    double *pt;           /* collapse: n x 4 (effective clock, voltage, request,
                             throttled), then the highest request folded in */
    size_t collapsed;
    size_t unfit;         /* rows left out with fits = 0 */
};

void wl_pareto_set_free(wl_pareto_set *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->ncols; i++)
        free(s->cols[i]);
    free(s->cols);
    for (size_t i = 0; i < s->nv; i++)
        free(s->vnames[i]);
    free(s->vnames);
    for (size_t g = 0; g < s->ngroups; g++) {
        free(s->gkeys[g]);
        free(s->gfields[g]);
    }
    free(s->gkeys);
    free(s->gfields);
    for (size_t i = 0; i < s->ngc; i++)
        free(s->gnames[i]);
    free(s->gnames);
    free(s->hash);
    free(s->val);
    free(s->group);
    free(s->line);
    free(s->src);
    free(s->fields);
    free(s->label);
    free(s->pt);
    free(s->text);
    free(s->source);
    free(s);
}

static uint64_t fnv(const char *p, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* The group of a key (created when new, with its fields: nf bytes of
 * NUL-terminated values); -1 when out of memory. */
static long group_of(wl_pareto_set *s, const char *key, size_t kl, const char *fields, size_t nf)
{
    if (s->ngroups * 2 >= s->hcap) {
        size_t nc = s->hcap ? s->hcap * 2 : 64;
        size_t *nh = calloc(nc, sizeof *nh);
        if (!nh)
            return -1;
        for (size_t g = 0; g < s->ngroups; g++) {
            size_t h = (size_t)fnv(s->gkeys[g], strlen(s->gkeys[g])) & (nc - 1);
            while (nh[h])
                h = (h + 1) & (nc - 1);
            nh[h] = g + 1;
        }
        free(s->hash);
        s->hash = nh;
        s->hcap = nc;
    }
    size_t h = (size_t)fnv(key, kl) & (s->hcap - 1);
    while (s->hash[h]) {
        const char *k = s->gkeys[s->hash[h] - 1];
        if (strlen(k) == kl && memcmp(k, key, kl) == 0)
            return (long)(s->hash[h] - 1);
        h = (h + 1) & (s->hcap - 1);
    }
    if (s->ngroups == s->gcap) {
        size_t nc = s->gcap ? s->gcap * 2 : 32;
        char **ng = realloc(s->gkeys, nc * sizeof *ng);
        if (!ng)
            return -1;
        s->gkeys = ng;
        char **nf2 = realloc(s->gfields, nc * sizeof *nf2);
        if (!nf2)
            return -1;
        s->gfields = nf2;
        s->gcap = nc;
    }
    char *copy = malloc(kl + 1), *fc = malloc(nf ? nf : 1);
    if (!copy || !fc) {
        free(copy);
        free(fc);
        return -1;
    }
    memcpy(copy, key, kl);
    copy[kl] = 0;
    if (nf)
        memcpy(fc, fields, nf);
    else
        fc[0] = 0;
    s->gkeys[s->ngroups] = copy;
    s->gfields[s->ngroups] = fc;
    s->hash[h] = s->ngroups + 1;
    return (long)s->ngroups++;
}

static int text_add(wl_pareto_set *s, const char *p, size_t len, size_t *off)
{
    if (len + 1 > SIZE_MAX / 4 - s->text_n)
        return WL_ENOMEM;
    if (s->text_n + len + 1 > s->text_cap) {
        size_t nc = s->text_cap ? s->text_cap : 4096;
        while (nc < s->text_n + len + 1)
            nc *= 2;
        char *nt = realloc(s->text, nc);
        if (!nt)
            return WL_ENOMEM;
        s->text = nt;
        s->text_cap = nc;
    }
    memcpy(s->text + s->text_n, p, len);
    s->text[s->text_n + len] = 0;
    *off = s->text_n;
    s->text_n += len + 1;
    return WL_OK;
}

static int grow_rows(wl_pareto_set *s, int fields, int label, int points)
{
    if (s->n < s->cap)
        return WL_OK;
    size_t nc = s->cap ? s->cap * 2 : 64;
    double *nv = realloc(s->val, nc * (s->nv ? s->nv : 1) * sizeof *nv);
    if (!nv)
        return WL_ENOMEM;
    s->val = nv;
    uint32_t *ng = realloc(s->group, nc * sizeof *ng);
    if (!ng)
        return WL_ENOMEM;
    s->group = ng;
    int *nl = realloc(s->line, nc * sizeof *nl);
    if (!nl)
        return WL_ENOMEM;
    s->line = nl;
    size_t *ns = realloc(s->src, nc * sizeof *ns);
    if (!ns)
        return WL_ENOMEM;
    s->src = ns;
    if (fields) {
        size_t *nf = realloc(s->fields, nc * sizeof *nf);
        if (!nf)
            return WL_ENOMEM;
        s->fields = nf;
    }
    if (label) {
        size_t *nb = realloc(s->label, nc * sizeof *nb);
        if (!nb)
            return WL_ENOMEM;
        s->label = nb;
    }
    if (points) {
        double *np = realloc(s->pt, nc * 4 * sizeof *np);
        if (!np)
            return WL_ENOMEM;
        s->pt = np;
    }
    s->cap = nc;
    return WL_OK;
}

/* Rows from a CSV reader or an in-memory table, read the same way. */
typedef struct {
    wl_results_csv *csv;
    const wl_results_table *t;
    size_t row; /* table: the next row */
} row_source;

static const char *rs_source(const row_source *r)
{
    return r->csv ? wl_results_csv_path(r->csv) : wl_results_table_source(r->t);
}
static size_t rs_ncols(const row_source *r)
{
    return r->csv ? wl_results_csv_ncols(r->csv) : wl_results_table_ncols(r->t);
}
static const char *rs_header(const row_source *r, size_t i)
{
    return r->csv ? wl_results_csv_header(r->csv, i) : wl_results_table_header(r->t, i);
}
static int rs_col(const row_source *r, const char *name)
{
    return r->csv ? wl_results_csv_col(r->csv, name) : wl_results_table_col(r->t, name);
}
static int rs_next(row_source *r, wl_error *err)
{
    if (r->csv)
        return wl_results_csv_next(r->csv, err);
    return ++r->row <= wl_results_table_rows(r->t);
}
static const char *rs_field(const row_source *r, size_t i)
{
    return r->csv ? wl_results_csv_field(r->csv, i) : wl_results_table_cell(r->t, r->row - 1, (int)i);
}
static int rs_num(const row_source *r, size_t i, double *v, wl_error *err)
{
    return r->csv ? wl_results_csv_num(r->csv, i, v, err)
                  : wl_results_table_num(r->t, r->row - 1, (int)i, v, err);
}
static int rs_line(const row_source *r)
{
    return r->csv ? wl_results_csv_line(r->csv) : wl_results_table_line(r->t, r->row - 1);
}

/* Physical quantities by their unit suffix are not negative; nothing in a
 * sweep table is beyond 1e15 in magnitude (1e15 J, ms, W): larger is not a
 * measurement but a broken file. */
static int value_ok(const char *name, double v)
{
    if (!(fabs(v) <= 1e15))
        return 0;
    static const char *const nonneg[] = {"_ms", "_j", "_w", "_mhz", "_s"};
    size_t l = strlen(name);
    for (size_t i = 0; i < sizeof nonneg / sizeof *nonneg; i++) {
        size_t sl = strlen(nonneg[i]);
        if (l > sl && strcmp(name + l - sl, nonneg[i]) == 0)
            return v >= 0;
    }
    return 1;
}

/* The parameter columns of a sweep table: those before the voltage and
 * clock columns (the decision variables), plus kernel_class; or all before
 * sm_clock_mhz (through_voltage). */
static size_t default_groups(const row_source *csv, int through_voltage, int *gcol,
                             size_t max)
{
    int stop = rs_col(csv, "sm_clock_mhz");
    if (!through_voltage) {
        int v = rs_col(csv, "voltage_offset_mv");
        int f = rs_col(csv, "fixed_voltage_mv");
        if (v >= 0 && (stop < 0 || v < stop))
            stop = v;
        if (f >= 0 && (stop < 0 || f < stop))
            stop = f;
    }
    size_t n = 0;
    for (int i = 0; i < stop && n < max; i++)
        gcol[n++] = i;
    int kc = rs_col(csv, "kernel_class");
    if (!through_voltage && kc >= 0 && n < max)
        gcol[n++] = kc;
    return n;
}

/* Sort order of collapse: group, effective clock, voltage, request. */
typedef struct {
    const double *pt;
    uint32_t group;
    size_t row;
} pt_key;

static int cmp_pt(const void *a, const void *b)
{
    const pt_key *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    for (int k = 0; k < 3; k++) {
        double u = x->pt[k], v = y->pt[k];
        int un = isnan(u), vn = isnan(v);
        if (un != vn)
            return un - vn;
        if (!un && u != v)
            return u < v ? -1 : 1;
    }
    return x->row < y->row ? -1 : x->row > y->row;
}

/* Folds throttled requests into the lowest request that reaches the same
 * effective clock and voltage in the same group: the governor gives them
 * all one operating point, so a front or an optimum lists it once. The
 * kept row remembers the highest request folded in (pt[4 r + 2] is reused
 * afterwards as that highest request). */
static int collapse_rows(wl_pareto_set *s)
{
    size_t n = s->n;
    pt_key *k = malloc((n ? n : 1) * sizeof *k);
    unsigned char *drop = calloc(n ? n : 1, 1);
    double *upto = malloc((n ? n : 1) * sizeof *upto);
    if (!k || !drop || !upto) {
        free(k);
        free(drop);
        free(upto);
        return WL_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        k[i] = (pt_key){s->pt + 4 * i, s->group[i], i};
        upto[i] = s->pt[4 * i + 2];
    }
    qsort(k, n, sizeof *k, cmp_pt);
    for (size_t a = 0; a < n;) {
        size_t b = a + 1;
        /* same group and point: printed clocks and voltages agree exactly */
        while (b < n && k[b].group == k[a].group && k[b].pt[0] == k[a].pt[0] &&
               (k[b].pt[1] == k[a].pt[1] || (isnan(k[b].pt[1]) && isnan(k[a].pt[1]))))
            b++;
        for (size_t j = a + 1; j < b && !isnan(k[a].pt[0]); j++)
            if (k[j].pt[3] == 1 && k[j].pt[2] > k[a].pt[2]) {
                drop[k[j].row] = 1;
                if (k[j].pt[2] > upto[k[a].row])
                    upto[k[a].row] = k[j].pt[2];
            }
        a = b;
    }
    free(k);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (drop[i]) {
            s->collapsed++;
            continue;
        }
        memmove(s->val + m * s->nv, s->val + i * s->nv, s->nv * sizeof *s->val);
        s->group[m] = s->group[i];
        s->line[m] = s->line[i];
        s->src[m] = s->src[i];
        if (s->fields)
            s->fields[m] = s->fields[i];
        if (s->label)
            s->label[m] = s->label[i];
        s->pt[4 * m + 2] = upto[i];
        m++;
    }
    s->n = m;
    free(drop);
    free(upto);
    return WL_OK;
}

/* A boolean cell that says no (CSV 0, JSON false); empty is unknown. */
static int cell_false(const char *v)
{
    return !strcmp(v, "0") || !strcmp(v, "false");
}

static int set_read(row_source *csv, const wl_pareto_load_options *o, wl_pareto_set **out,
                    wl_error *err)
{
    *out = NULL;
    const char *src = rs_source(csv);
    size_t nc = rs_ncols(csv);
    wl_pareto_set *s = calloc(1, sizeof *s);
    int *vcol = calloc(o->nvalues ? o->nvalues : 1, sizeof *vcol);
    int *gcol = calloc(nc ? nc : 1, sizeof *gcol);
    int rc = s && vcol && gcol ? WL_OK : WL_ENOMEM;
    if (!rc) {
        s->source = strdup(src);
        s->cols = calloc(nc ? nc : 1, sizeof *s->cols);
        s->vnames = calloc(o->nvalues ? o->nvalues : 1, sizeof *s->vnames);
        if (!s->source || !s->cols || !s->vnames)
            rc = WL_ENOMEM;
    }
    for (size_t i = 0; !rc && i < nc; i++)
        if (!(s->cols[s->ncols++] = strdup(rs_header(csv, i))))
            rc = WL_ENOMEM;
    for (size_t i = 0; !rc && i < o->nvalues; i++) {
        if (!(s->vnames[s->nv++] = strdup(o->values[i]))) {
            rc = WL_ENOMEM;
            break;
        }
        vcol[i] = rs_col(csv, o->values[i]);
        if (vcol[i] < 0 && !o->optional_values) {
            wl_error_set(err, src, 1, o->values[i], "no such column");
            rc = WL_EINVAL;
        }
    }
    size_t ng = 0;
    if (!rc && o->group_by) {
        wl_core_strlist names = {0};
        rc = wl_core_parse_names(o->group_by, src, 0, "group_by", &names, err);
        for (size_t i = 0; !rc && i < names.n; i++) {
            gcol[ng] = rs_col(csv, names.v[i]);
            if (gcol[ng] < 0) {
                wl_error_set(err, src, 1, names.v[i], "no such column to group by");
                rc = WL_EINVAL;
            } else if (ng < nc) {
                ng++;
            }
        }
        wl_core_strlist_free(&names);
    } else if (!rc) {
        ng = default_groups(csv, o->through_voltage, gcol, nc);
    }
    int lcol = -1;
    if (!rc && o->label) {
        lcol = rs_col(csv, o->label);
        if (lcol < 0) {
            wl_error_set(err, src, 1, o->label, "no such column");
            rc = WL_EINVAL;
        }
    }
    int fcol = o->keep_infeasible ? -1 : rs_col(csv, "feasible");
    /* a point that needs more memory than its GPU has cannot run either */
    int mcol = o->keep_infeasible ? -1 : rs_col(csv, "fits");
    /* the columns a collapse compares (a voltage column is optional) */
    int pcol[4] = {rs_col(csv, "effective_clock_mhz"), rs_col(csv, "voltage_mv"),
                   rs_col(csv, "sm_clock_mhz"), rs_col(csv, "throttled")};
    int collapse = o->collapse && pcol[0] >= 0 && pcol[2] >= 0 && pcol[3] >= 0;
    wl_results_buf key = {0}, row = {0}, gf = {0};
    /* the columns grouped by, for tables keyed by them */
    if (!rc && ng && !(s->gnames = calloc(ng, sizeof *s->gnames)))
        rc = WL_ENOMEM;
    for (size_t i = 0; !rc && i < ng; i++)
        if (!(s->gnames[s->ngc++] = strdup(rs_header(csv, (size_t)gcol[i]))))
            rc = WL_ENOMEM;
    int r = 1;
    size_t src_row = (size_t)-1;
    while (!rc && (r = rs_next(csv, err)) == 1) {
        src_row++;
        if (fcol >= 0 && cell_false(rs_field(csv, (size_t)fcol)))
            continue;
        if (mcol >= 0 && cell_false(rs_field(csv, (size_t)mcol))) {
            s->unfit++;
            continue;
        }
        if ((rc = grow_rows(s, o->keep_fields, lcol >= 0, collapse)))
            break;
        double *v = s->val + s->n * s->nv;
        for (size_t i = 0; !rc && i < s->nv; i++) {
            if (vcol[i] < 0) { /* an optional column the table lacks */
                v[i] = NAN;
                continue;
            }
            int nrc = rs_num(csv, (size_t)vcol[i], &v[i], err);
            if (nrc == WL_ENOTFOUND)
                continue; /* empty: not evaluated, never chosen */
            if (nrc) {
                rc = WL_EPARSE;
            } else if (!value_ok(s->vnames[i], v[i])) {
                wl_error_set(err, src, rs_line(csv), s->vnames[i],
                             "%g is not a possible value", v[i]);
                rc = WL_EPARSE;
            }
        }
        if (rc)
            break;
        key.n = 0;
        for (size_t i = 0; i < ng; i++) {
            if (i)
                wl_results_buf_put(&key, "/", 1);
            wl_results_buf_puts(&key, rs_field(csv, (size_t)gcol[i]));
        }
        wl_results_buf_put(&key, "", 0);
        gf.n = 0;
        for (size_t i = 0; i < ng; i++) {
            const char *f = rs_field(csv, (size_t)gcol[i]);
            wl_results_buf_put(&gf, f, strlen(f) + 1);
        }
        long g = key.oom || gf.oom ? -1
                                   : group_of(s, key.p ? key.p : "", key.n, gf.p, gf.n);
        if (g < 0 || (size_t)g > UINT32_MAX) {
            rc = WL_ENOMEM;
            break;
        }
        if (o->keep_fields) {
            row.n = 0;
            for (size_t i = 0; i < nc; i++) {
                const char *f = rs_field(csv, i);
                wl_results_buf_put(&row, f, strlen(f) + 1);
            }
            if (row.oom || (rc = text_add(s, row.p, row.n ? row.n - 1 : 0, &s->fields[s->n])))
                rc = WL_ENOMEM;
        }
        if (!rc && lcol >= 0) {
            const char *l = rs_field(csv, (size_t)lcol);
            rc = text_add(s, l, strlen(l), &s->label[s->n]);
        }
        if (rc)
            break;
        for (int k = 0; collapse && k < 4; k++) {
            double *pt = s->pt + 4 * s->n + k;
            *pt = NAN;
            if (pcol[k] >= 0 && rs_num(csv, (size_t)pcol[k], pt, err) == WL_EPARSE) {
                rc = WL_EPARSE;
                break;
            }
        }
        if (rc)
            break;
        s->group[s->n] = (uint32_t)g;
        s->line[s->n] = rs_line(csv);
        s->src[s->n] = src_row;
        s->n++;
    }
    if (!rc && r < 0)
        rc = WL_EPARSE;
    if (!rc && collapse)
        rc = collapse_rows(s);
    if (rc == WL_ENOMEM)
        wl_error_set(err, src, 0, "", "out of memory");
    wl_results_buf_free(&key);
    wl_results_buf_free(&row);
    wl_results_buf_free(&gf);
    free(vcol);
    free(gcol);
    if (rc) {
        wl_pareto_set_free(s);
        return rc;
    }
    *out = s;
    return WL_OK;
}

int wl_pareto_set_read(wl_results_csv *csv, const wl_pareto_load_options *o, wl_pareto_set **out,
                       wl_error *err)
{
    row_source r = {.csv = csv};
    return set_read(&r, o, out, err);
}

int wl_pareto_set_from_table(const wl_results_table *t, const wl_pareto_load_options *o,
                             wl_pareto_set **out, wl_error *err)
{
    row_source r = {.t = t};
    return set_read(&r, o, out, err);
}

int wl_pareto_set_load(const char *path, const wl_pareto_load_options *o, wl_pareto_set **out,
                       wl_error *err)
{
    *out = NULL;
    wl_results_csv *csv = NULL;
    int rc = wl_results_csv_open(path, &csv, err);
    if (!rc)
        rc = wl_pareto_set_read(csv, o, out, err);
    wl_results_csv_close(csv);
    return rc;
}

size_t wl_pareto_set_rows(const wl_pareto_set *s) { return s->n; }
size_t wl_pareto_set_collapsed(const wl_pareto_set *s) { return s->collapsed; }
size_t wl_pareto_set_unfit(const wl_pareto_set *s) { return s->unfit; }
double wl_pareto_set_request_upto(const wl_pareto_set *s, size_t row)
{
    return s->pt && row < s->n ? s->pt[4 * row + 2] : NAN;
}
size_t wl_pareto_set_groups(const wl_pareto_set *s) { return s->ngroups; }
size_t wl_pareto_set_group_of(const wl_pareto_set *s, size_t row) { return s->group[row]; }
const char *wl_pareto_set_group_key(const wl_pareto_set *s, size_t g)
{
    return g < s->ngroups ? s->gkeys[g] : "";
}
size_t wl_pareto_set_group_ncols(const wl_pareto_set *s) { return s->ngc; }
const char *wl_pareto_set_group_colname(const wl_pareto_set *s, size_t i)
{
    return i < s->ngc ? s->gnames[i] : "";
}
const char *wl_pareto_set_group_field(const wl_pareto_set *s, size_t g, size_t i)
{
    if (g >= s->ngroups || i >= s->ngc)
        return "";
    const char *f = s->gfields[g];
    for (size_t k = 0; k < i; k++)
        f += strlen(f) + 1;
    return f;
}

const double *wl_pareto_set_values(const wl_pareto_set *s, size_t row)
{
    return s->val + row * s->nv;
}
int wl_pareto_set_line(const wl_pareto_set *s, size_t row) { return s->line[row]; }
size_t wl_pareto_set_source_row(const wl_pareto_set *s, size_t row) { return s->src[row]; }
size_t wl_pareto_set_ncols(const wl_pareto_set *s) { return s->ncols; }
const char *wl_pareto_set_col(const wl_pareto_set *s, size_t i)
{
    return i < s->ncols ? s->cols[i] : "";
}
const char *wl_pareto_set_label(const wl_pareto_set *s, size_t row)
{
    return s->label ? s->text + s->label[row] : "";
}

size_t wl_pareto_set_fields(const wl_pareto_set *s, size_t row, const char **fields)
{
    if (!s->fields)
        return 0;
    const char *p = s->text + s->fields[row];
    for (size_t i = 0; i < s->ncols; i++) {
        fields[i] = p;
        p += strlen(p) + 1;
    }
    return s->ncols;
}

/* Rows of each group, contiguous: order[start[g] .. start[g + 1]). */
static int by_group(const wl_pareto_set *s, size_t **order, size_t **start)
{
    *order = malloc((s->n ? s->n : 1) * sizeof **order);
    *start = calloc(s->ngroups + 2, sizeof **start);
    size_t *fill = malloc((s->ngroups + 1) * sizeof *fill);
    if (!*order || !*start || !fill) {
        free(fill);
        return WL_ENOMEM;
    }
    for (size_t i = 0; i < s->n; i++)
        (*start)[s->group[i] + 1]++;
    for (size_t g = 0; g < s->ngroups; g++)
        (*start)[g + 1] += (*start)[g];
    memcpy(fill, *start, (s->ngroups + 1) * sizeof *fill);
    for (size_t i = 0; i < s->n; i++)
        (*order)[fill[s->group[i]]++] = i;
    free(fill);
    return WL_OK;
}

int wl_pareto_set_fronts(const wl_pareto_set *s, unsigned char *on_front)
{
    size_t *order = NULL, *start = NULL;
    size_t k = s->nv;
    unsigned char *tmp = malloc(s->n ? s->n : 1);
    double *pts = malloc((s->n ? s->n : 1) * (k ? k : 1) * sizeof *pts);
    int rc = tmp && pts ? by_group(s, &order, &start) : WL_ENOMEM;
    memset(on_front, 0, s->n);
    for (size_t g = 0; !rc && g < s->ngroups; g++) {
        size_t m = start[g + 1] - start[g];
        for (size_t r = 0; r < m; r++)
            memcpy(pts + r * k, s->val + order[start[g] + r] * k, k * sizeof *pts);
        if ((rc = wl_pareto_front(pts, m, (int)k, tmp)))
            break;
        for (size_t r = 0; r < m; r++)
            on_front[order[start[g] + r]] = tmp[r];
    }
    free(order);
    free(start);
    free(tmp);
    free(pts);
    return rc;
}

/* ---- fronts and savings as rows ----------------------------------------------------------- */

size_t wl_pareto_front_cols(const wl_pareto_set *s, wl_results_col *cols)
{
    size_t nc = wl_pareto_set_ncols(s);
    for (size_t i = 0; i < nc; i++)
        cols[i] = (wl_results_col)WL_RESULTS_COL(wl_pareto_set_col(s, i), WL_COL_AUTO, 0, 0);
    /* with collapsed requests, each point says up to which request it holds */
    if (s->n && !isnan(wl_pareto_set_request_upto(s, 0)))
        cols[nc++] = (wl_results_col)WL_RESULTS_COL("same_point_up_to_mhz", WL_COL_NUM, 1, 0);
    return nc;
}

int wl_pareto_front_rows(const wl_pareto_set *s, wl_results_writer *w)
{
    size_t n = s->n, nc = wl_pareto_set_ncols(s);
    unsigned char *on = malloc(n ? n : 1);
    const char **fields = calloc(nc ? nc : 1, sizeof *fields);
    wl_results_cell *cells = calloc(nc + 1, sizeof *cells);
    int rc = on && fields && cells ? wl_pareto_set_fronts(s, on) : WL_ENOMEM;
    for (size_t r = 0; !rc && r < n; r++) {
        if (!on[r])
            continue;
        wl_pareto_set_fields(s, r, fields);
        for (size_t i = 0; i < nc; i++)
            cells[i] = (wl_results_cell){fields[i], NAN};
        cells[nc] = (wl_results_cell){NULL, wl_pareto_set_request_upto(s, r)};
        if (wl_results_writer_row(w, cells))
            rc = WL_EIO;
    }
    free(on);
    free(fields);
    free(cells);
    return rc;
}

static size_t n_savings_cols(void);

int wl_pareto_savings_rows(const wl_pareto_set *s, const wl_pareto_objective *obj,
                           wl_results_writer *w)
{
    size_t ng = wl_pareto_set_groups(s), nc = s->ngc + n_savings_cols();
    wl_pareto_saving *sv = calloc(ng + 1, sizeof *sv);
    wl_results_cell *cells = calloc(nc, sizeof *cells);
    int rc = sv && cells ? wl_pareto_savings(s, obj, sv) : WL_ENOMEM;
    for (size_t g = 0; !rc && g < ng; g++) {
        wl_pareto_saving_cells(s, obj, &sv[g], cells);
        if (wl_results_writer_row(w, cells))
            rc = WL_EIO;
    }
    free(sv);
    free(cells);
    return rc;
}

/* ---- savings ---------------------------------------------------------------------------- */


/* Energy against clock is flat near its minimum: a clock a little off the
 * optimum costs almost nothing, and a user choosing one clock for several
 * workloads needs the range, not the point. The band is the run of
 * adjacent clocks (in clock order) around the minimum whose energy stays
 * within (1 + tol) of it; rows with a non-finite clock or energy are
 * skipped. NaN, NaN when none has both. */
void wl_pareto_flat_band(const double *clock_mhz, const double *energy_j, size_t n, double tol,
                         double *lo_mhz, double *hi_mhz)
{
    *lo_mhz = *hi_mhz = NAN;
    double emin = INFINITY, cmin = NAN;
    for (size_t i = 0; i < n; i++)
        if (isfinite(clock_mhz[i]) && isfinite(energy_j[i]) && energy_j[i] < emin) {
            emin = energy_j[i];
            cmin = clock_mhz[i];
        }
    if (!isfinite(emin))
        return;
    double lim = emin + fabs(emin) * tol, lo = cmin, hi = cmin;
    /* walk outwards: the nearest clock beyond the band's edge decides
     * whether it grows (O(n) per step; groups are a clock grid long) */
    for (;;) {
        double next = -INFINITY, e_next = NAN;
        for (size_t i = 0; i < n; i++)
            if (isfinite(energy_j[i]) && clock_mhz[i] < lo && clock_mhz[i] > next)
                next = clock_mhz[i], e_next = energy_j[i];
        /* at one clock several rows (voltages): the best of them counts */
        for (size_t i = 0; i < n; i++)
            if (clock_mhz[i] == next && isfinite(energy_j[i]) && energy_j[i] < e_next)
                e_next = energy_j[i];
        if (!(next > -INFINITY) || !(e_next <= lim))
            break;
        lo = next;
    }
    for (;;) {
        double next = INFINITY, e_next = NAN;
        for (size_t i = 0; i < n; i++)
            if (isfinite(energy_j[i]) && clock_mhz[i] > hi && clock_mhz[i] < next)
                next = clock_mhz[i], e_next = energy_j[i];
        for (size_t i = 0; i < n; i++)
            if (clock_mhz[i] == next && isfinite(energy_j[i]) && energy_j[i] < e_next)
                e_next = energy_j[i];
        if (!(next < INFINITY) || !(e_next <= lim))
            break;
        hi = next;
    }
    *lo_mhz = lo;
    *hi_mhz = hi;
}

static const wl_results_col savings_cols[] = {
    WL_RESULTS_COL("objective", WL_COL_TEXT, 0, 0),
    WL_RESULTS_COL("sm_clock_mhz", WL_COL_NUM, 1, 0),
    WL_RESULTS_COL("time_ms", WL_COL_NUM, 5, 0),
    WL_RESULTS_COL("power_w", WL_COL_NUM, 3, 0),
    WL_RESULTS_COL("energy_j", WL_COL_NUM, 6, 0),
    WL_RESULTS_COL("fastest_sm_clock_mhz", WL_COL_NUM, 1, 0),
    WL_RESULTS_COL("fastest_time_ms", WL_COL_NUM, 5, 0),
    WL_RESULTS_COL("fastest_energy_j", WL_COL_NUM, 6, 0),
    WL_RESULTS_COL("max_sm_clock_mhz", WL_COL_NUM, 1, 0),
    WL_RESULTS_COL("max_effective_clock_mhz", WL_COL_NUM, 1, 0),
    WL_RESULTS_COL("max_time_ms", WL_COL_NUM, 5, 0),
    WL_RESULTS_COL("max_energy_j", WL_COL_NUM, 6, 0),
    WL_RESULTS_COL("energy_saving_vs_fastest_pct", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("runtime_penalty_vs_fastest_pct", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("energy_saving_vs_max_clock_pct", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("runtime_penalty_vs_max_clock_pct", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("clock_within_1pct_min_mhz", WL_COL_NUM, 1, 0),
    WL_RESULTS_COL("clock_within_1pct_max_mhz", WL_COL_NUM, 1, 0),
};

/* A table keyed by the set's group columns (echoed as read), then fixed
 * columns; 0 when cap is too small. */
static size_t keyed_cols(const wl_pareto_set *s, const wl_results_col *fixed, size_t nfixed,
                         wl_results_col *cols, size_t cap)
{
    if (s->ngc + nfixed > cap)
        return 0;
    for (size_t i = 0; i < s->ngc; i++) {
        /* a table's key column as wide as its widest value */
        int wd = 0;
        for (size_t g = 0; g < s->ngroups; g++) {
            size_t l = strlen(wl_pareto_set_group_field(s, g, i));
            wd = l > (size_t)wd ? (int)(l < 200 ? l : 200) : wd;
        }
        cols[i] = (wl_results_col)WL_RESULTS_COL(s->gnames[i], WL_COL_AUTO, 0, wd);
    }
    memcpy(cols + s->ngc, fixed, nfixed * sizeof *fixed);
    return s->ngc + nfixed;
}

static size_t n_savings_cols(void)
{
    return sizeof savings_cols / sizeof *savings_cols;
}

size_t wl_pareto_savings_cols(const wl_pareto_set *s, wl_results_col *cols, size_t cap)
{
    return keyed_cols(s, savings_cols, sizeof savings_cols / sizeof *savings_cols, cols, cap);
}

/* The group's key cells: its fields as read. */
static size_t key_cells(const wl_pareto_set *s, size_t g, wl_results_cell *cells)
{
    const char *f = g < s->ngroups ? s->gfields[g] : "";
    for (size_t i = 0; i < s->ngc; i++) {
        cells[i] = (wl_results_cell){f, NAN};
        f += strlen(f) + 1;
    }
    return s->ngc;
}

/* The highest clock requested of a row's operating point, and the clock it
 * ran at (NAN without an effective clock column). */
static double top_request(const wl_pareto_set *s, size_t row)
{
    double v = s->val[row * s->nv + 3], up = wl_pareto_set_request_upto(s, row);
    return up > v ? up : v;
}

static double ran_at(const wl_pareto_set *s, size_t row)
{
    return s->pt ? s->pt[4 * row] : s->val[row * s->nv + 3];
}

int wl_pareto_savings(const wl_pareto_set *s, const wl_pareto_objective *obj,
                      wl_pareto_saving *out)
{
    if (s->nv < 4)
        return WL_EINVAL;
    size_t *order = NULL, *start = NULL;
    double *t = malloc((s->n ? s->n : 1) * 3 * sizeof *t);
    int rc = t ? by_group(s, &order, &start) : WL_ENOMEM;
    for (size_t g = 0; !rc && g < s->ngroups; g++) {
        size_t m = start[g + 1] - start[g];
        double *pp = t + m, *ee = t + 2 * m;
        long fast = -1, maxc = -1;
        for (size_t r = 0; r < m; r++) {
            const double *v = s->val + order[start[g] + r] * s->nv;
            t[r] = v[0];
            pp[r] = v[1];
            ee[r] = v[2];
            if (!isnan(v[0]) && (fast < 0 || v[0] < t[fast]))
                fast = (long)r;
            /* the top request: a throttled one folded into a lower request
             * (collapse_rows) counts as the highest request it holds */
            if (!isnan(v[0]) && !isnan(v[3]) &&
                (maxc < 0 || top_request(s, order[start[g] + r]) >
                                 top_request(s, order[start[g] + (size_t)maxc])))
                maxc = (long)r;
        }
        long c = wl_pareto_choose(obj, t, pp, ee, m);
        wl_pareto_saving *sv = &out[g];
        sv->group = g;
        /* the flat optimum: clocks in pp (power is no longer needed) */
        for (size_t r = 0; r < m; r++)
            pp[r] = s->val[order[start[g] + r] * s->nv + 3];
        wl_pareto_flat_band(pp, ee, m, 0.01, &sv->band_lo_mhz, &sv->band_hi_mhz);
        sv->chosen = c < 0 || fast < 0 ? -1 : (long)order[start[g] + (size_t)c];
        sv->fastest = fast < 0 ? -1 : (long)order[start[g] + (size_t)fast];
        sv->max_clock = maxc < 0 ? -1 : (long)order[start[g] + (size_t)maxc];
    }
    free(t);
    free(order);
    free(start);
    return rc;
}

void wl_pareto_saving_cells(const wl_pareto_set *s, const wl_pareto_objective *obj,
                            const wl_pareto_saving *sv, wl_results_cell *cells)
{
    size_t n = sizeof savings_cols / sizeof *savings_cols;
    cells += key_cells(s, sv->group, cells);
    for (size_t i = 0; i < n; i++)
        cells[i] = (wl_results_cell){NULL, NAN};
    cells[0].s = obj->text;
    if (sv->chosen < 0)
        return; /* nothing qualifies */
    /* no clock column value: no maximum-clock point, those cells stay empty */
    static const double none[4] = {NAN, NAN, NAN, NAN};
    const double *c = s->val + (size_t)sv->chosen * s->nv;
    const double *f = s->val + (size_t)sv->fastest * s->nv;
    const double *m = sv->max_clock >= 0 ? s->val + (size_t)sv->max_clock * s->nv : none;
    /* the maximum clock's baseline: the top clock requested, and where the
     * governor ran it */
    double m_req = sv->max_clock >= 0 ? top_request(s, (size_t)sv->max_clock) : NAN;
    double m_ran = sv->max_clock >= 0 ? ran_at(s, (size_t)sv->max_clock) : NAN;
    const double v[17] = {c[3], c[0], c[1], c[2], f[3], f[0], f[2], m_req, m_ran, m[0], m[2],
                          100 * (1 - c[2] / f[2]), 100 * (c[0] / f[0] - 1),
                          100 * (1 - c[2] / m[2]), 100 * (c[0] / m[0] - 1),
                          sv->band_lo_mhz, sv->band_hi_mhz};
    for (size_t i = 0; i < 17; i++)
        cells[1 + i].v = v[i];
}

/* ---- schedules: one clock per kernel class or per phase ------------------------------- */

static const wl_results_col schedule_cols[] = {
    WL_RESULTS_COL("objective", WL_COL_TEXT, 0, 0),
    WL_RESULTS_COL("fixed_sm_clock_mhz", WL_COL_NUM, 1, 0),
    WL_RESULTS_COL("fixed_time_ms", WL_COL_NUM, 5, 0),
    WL_RESULTS_COL("fixed_energy_j", WL_COL_NUM, 6, 0),
    WL_RESULTS_COL("schedule_mhz", WL_COL_TEXT, 0, 0),
    WL_RESULTS_COL("schedule_time_ms", WL_COL_NUM, 5, 0),
    WL_RESULTS_COL("schedule_energy_j", WL_COL_NUM, 6, 0),
    WL_RESULTS_COL("clock_switches", WL_COL_INT, 0, 0),
    WL_RESULTS_COL("extra_saving_pct", WL_COL_NUM, 2, 0),
    WL_RESULTS_COL("slowdown_pct", WL_COL_NUM, 2, 0),
};

size_t wl_pareto_schedule_cols(const wl_pareto_set *s, wl_results_col *cols, size_t cap)
{
    return keyed_cols(s, schedule_cols, sizeof schedule_cols / sizeof *schedule_cols, cols, cap);
}

const char *const wl_pareto_schedule_values[WL_PARETO_SCHEDULE_NV] = {
    "class_time_ms", "class_energy_j", "class_launches", "sm_clock_mhz", "energy_static_j",
    "time_ms"};

/* The phase columns of a training step and of a generation (optional:
 * a sweep has those of the modes it ran). */
enum { PV_CLK, PV_STATIC, PV_TIME, PV_TF, PV_TB, PV_TO, PV_EF, PV_EB, PV_EO, PV_MICRO, PV_TTFT,
       PV_EPRE, PV_EDEC };
const char *const wl_pareto_phase_values[WL_PARETO_PHASE_NV] = {
    "sm_clock_mhz", "energy_static_j", "time_ms", "time_fwd_ms", "time_bwd_ms", "time_opt_ms",
    "energy_fwd_j", "energy_bwd_j", "energy_opt_j", "micro_batches", "ttft_ms",
    "energy_prefill_j", "energy_decode_j"};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A schedule problem: nc parts (kernel classes or phases), nk clocks; part
 * c at clock k takes t[c nk + k] ms and e[c nk + k] J; entries[c] times a
 * step enters part c (a switch there and back when it runs off the base
 * clock). */
#define SCHED_MAXC 64
typedef struct {
    const char *name[SCHED_MAXC];
    int nc;
    double *clk; /* nk sorted distinct clocks */
    size_t nk;
    double *t, *e;
    double entries[SCHED_MAXC];
    double static_w_sum; /* power while switching: the mean static power */
    int static_n;        /* of this many rows */
} sched_problem;

static void add_static(sched_problem *p, double static_j, double time_ms)
{
    if (time_ms > 0) {
        p->static_w_sum += static_j / (time_ms * 1e-3);
        p->static_n++;
    }
}

static void sched_free(sched_problem *p)
{
    free(p->clk);
    free(p->t);
}

/* The distinct clocks of the group's rows, and t, e sized for nc parts. */
static int sched_alloc(sched_problem *p, const wl_pareto_set *s, const size_t *rows, size_t m,
                       size_t clk_col)
{
    p->clk = malloc((m ? m : 1) * sizeof *p->clk);
    if (!p->clk)
        return WL_ENOMEM;
    size_t nk = 0;
    for (size_t r = 0; r < m; r++)
        if (!isnan(s->val[rows[r] * s->nv + clk_col]))
            p->clk[nk++] = s->val[rows[r] * s->nv + clk_col];
    qsort(p->clk, nk, sizeof *p->clk, cmp_double);
    size_t u = 0;
    for (size_t i = 0; i < nk; i++)
        if (!u || p->clk[i] != p->clk[u - 1])
            p->clk[u++] = p->clk[i];
    p->nk = u;
    size_t n = (size_t)p->nc * p->nk;
    p->t = malloc((n ? n : 1) * 2 * sizeof *p->t);
    if (!p->t)
        return WL_ENOMEM;
    p->e = p->t + n;
    for (size_t i = 0; i < n; i++)
        p->t[i] = p->e[i] = NAN;
    return WL_OK;
}

static size_t clock_index(const sched_problem *p, double clk)
{
    return (size_t)((const double *)bsearch(&clk, p->clk, p->nk, sizeof clk, cmp_double) - p->clk);
}

/* The best fixed clock and the schedule under the objective, into cells. */
static int sched_solve(const sched_problem *p, const wl_pareto_objective *obj, double switch_us,
                       wl_results_buf *sched, wl_results_cell *cells)
{
    size_t nk = p->nk;
    int nc = p->nc, choice[SCHED_MAXC];
    /* a part missing at some clock makes that fixed clock incomparable */
    double tmin = INFINITY;
    for (size_t k = 0; k < nk; k++) {
        double tf = 0;
        for (int c = 0; c < nc; c++)
            tf += isnan(p->t[(size_t)c * nk + k]) ? INFINITY : p->t[(size_t)c * nk + k];
        if (tf < tmin)
            tmin = tf;
    }
    double budget = strcmp(wl_pareto_objective_name(obj), "energy") == 0
                        ? INFINITY : tmin * (1 + obj->param / 100.0);
    double tf_best = NAN, ef_best = NAN;
    long kf = -1;
    for (size_t k = 0; k < nk; k++) {
        double tf = 0, ef = 0;
        for (int c = 0; c < nc; c++) {
            tf += isnan(p->t[(size_t)c * nk + k]) ? INFINITY : p->t[(size_t)c * nk + k];
            ef += p->e[(size_t)c * nk + k];
        }
        if (!isnan(ef) && tf <= budget * (1 + 1e-12) && (kf < 0 || ef < ef_best)) {
            kf = (long)k;
            tf_best = tf;
            ef_best = ef;
        }
    }
    wl_pareto_schedule_result res;
    int rc = kf < 0 ? WL_ENOTFOUND
                    : wl_pareto_schedule(nc, (int)nk, p->t, p->e, p->entries, switch_us,
                                         p->static_n ? p->static_w_sum / p->static_n : 0,
                                         budget, choice, &res);
    if (rc != WL_OK)
        return rc == WL_ENOTFOUND || rc == WL_EINVAL ? WL_OK : rc; /* no schedule: empty cells */
    cells[1].v = p->clk[kf];
    cells[2].v = tf_best;
    cells[3].v = ef_best;
    for (int c = 0; c < nc; c++) {
        char num[WL_RESULTS_NUM_MAX];
        if (c)
            wl_results_buf_put(sched, ";", 1);
        wl_results_buf_puts(sched, p->name[c]);
        wl_results_buf_put(sched, "=", 1);
        wl_results_buf_put(sched, num, wl_results_fmt(num, sizeof num, p->clk[choice[c]], 0));
    }
    wl_results_buf_put(sched, "", 0);
    cells[4].s = sched->oom ? NULL : sched->p;
    cells[5].v = res.time_ms;
    cells[6].v = res.energy_j;
    cells[7].v = res.switches;
    cells[8].v = 100 * (1 - res.energy_j / ef_best);
    cells[9].v = 100 * (res.time_ms / tf_best - 1);
    return WL_OK;
}

/* Kernel classes: one row per class and clock. A class's launches
 * interleave with the others', so each launch off the base clock is
 * entered once. */
static int class_problem(const wl_pareto_set *s, const size_t *rows, size_t m,
                         sched_problem *p, wl_error *err)
{
    for (size_t r = 0; r < m; r++) {
        const char *l = wl_pareto_set_label(s, rows[r]);
        int c = 0;
        while (c < p->nc && strcmp(p->name[c], l) != 0)
            c++;
        if (c == p->nc) {
            if (p->nc == SCHED_MAXC) {
                wl_error_set(err, s->source, s->line[rows[r]], "kernel_class",
                             "more than %d kernel classes in one group", SCHED_MAXC);
                return WL_EINVAL;
            }
            p->name[p->nc++] = l;
        }
    }
    int rc = sched_alloc(p, s, rows, m, 3);
    if (rc)
        return rc;
    for (size_t r = 0; r < m; r++) {
        const double *v = s->val + rows[r] * s->nv;
        if (isnan(v[3]))
            continue; /* not evaluated */
        const char *l = wl_pareto_set_label(s, rows[r]);
        int c = 0;
        while (strcmp(p->name[c], l) != 0)
            c++;
        size_t k = clock_index(p, v[3]);
        p->t[(size_t)c * p->nk + k] = v[0];
        p->e[(size_t)c * p->nk + k] = v[1];
        p->entries[c] = v[2];
        add_static(p, v[4], v[5]);
    }
    return WL_OK;
}

/* Phases: one row per clock with the phases' columns. A training step
 * enters its forward and backward once per micro-batch and its optimizer
 * once; a generation enters its prefill and its decode once. A row with
 * neither set of columns gives no problem (nc = 0). */
static int phase_problem(const wl_pareto_set *s, const size_t *rows, size_t m,
                         sched_problem *p)
{
    static const char *const train[3] = {"forward", "backward", "optimizer"};
    static const char *const gen[2] = {"prefill", "decode"};
    const double *v0 = NULL;
    for (size_t r = 0; r < m && !v0; r++) {
        const double *v = s->val + rows[r] * s->nv;
        if (!isnan(v[PV_TF]) || !isnan(v[PV_TTFT]))
            v0 = v;
    }
    if (!v0)
        return WL_OK;
    int is_train = !isnan(v0[PV_TF]);
    p->nc = is_train ? 3 : 2;
    for (int c = 0; c < p->nc; c++)
        p->name[c] = is_train ? train[c] : gen[c];
    int rc = sched_alloc(p, s, rows, m, PV_CLK);
    if (rc)
        return rc;
    for (size_t r = 0; r < m; r++) {
        const double *v = s->val + rows[r] * s->nv;
        if (isnan(v[PV_CLK]))
            continue;
        size_t k = clock_index(p, v[PV_CLK]), nk = p->nk;
        if (is_train) {
            for (int c = 0; c < 3; c++) {
                p->t[(size_t)c * nk + k] = v[PV_TF + c];
                p->e[(size_t)c * nk + k] = v[PV_EF + c];
            }
            double micro = isnan(v[PV_MICRO]) || v[PV_MICRO] < 1 ? 1 : v[PV_MICRO];
            p->entries[0] = p->entries[1] = micro;
            p->entries[2] = 1;
        } else {
            p->t[k] = v[PV_TTFT];
            p->t[nk + k] = v[PV_TIME] - v[PV_TTFT];
            p->e[k] = v[PV_EPRE];
            p->e[nk + k] = v[PV_EDEC];
            p->entries[0] = p->entries[1] = 1;
        }
        add_static(p, v[PV_STATIC], v[PV_TIME]);
    }
    return WL_OK;
}

int wl_pareto_schedule_supports(const wl_pareto_objective *obj)
{
    const char *name = wl_pareto_objective_name(obj);
    return !strcmp(name, "energy") || !strcmp(name, "energy-within-slowdown");
}

int wl_pareto_schedules(const wl_pareto_set *s, const wl_pareto_objective *obj,
                        wl_pareto_schedule_by by, double switch_us, wl_results_writer *w,
                        wl_error *err)
{
    if (!wl_pareto_schedule_supports(obj)) {
        wl_error_set(err, "objective", 0, wl_pareto_objective_name(obj),
                     "a schedule supports the energy and energy-within-slowdown=P objectives");
        return WL_EINVAL;
    }
    if (by == WL_PARETO_BY_CLASS ? s->nv < WL_PARETO_SCHEDULE_NV || !s->label
                                 : s->nv < WL_PARETO_PHASE_NV)
        return WL_EINVAL;
    size_t *order = NULL, *start = NULL;
    int rc = by_group(s, &order, &start), phases = 0;
    size_t ncols = sizeof schedule_cols / sizeof *schedule_cols;
    wl_results_cell all[WL_PARETO_KEYED_MAX], *cells = all + s->ngc;
    if (s->ngc + ncols > WL_PARETO_KEYED_MAX)
        rc = WL_EINVAL;
    for (size_t g = 0; !rc && g < s->ngroups; g++) {
        key_cells(s, g, all);
        for (size_t i = 0; i < ncols; i++)
            cells[i] = (wl_results_cell){NULL, NAN};
        cells[0].s = obj->text;
        wl_results_buf sched = {0};
        sched_problem p = {.nc = 0};
        const size_t *rows = order + start[g];
        size_t m = start[g + 1] - start[g];
        rc = by == WL_PARETO_BY_CLASS ? class_problem(s, rows, m, &p, err)
                                      : phase_problem(s, rows, m, &p);
        phases += p.nc > 0;
        if (!rc && p.nc > 0)
            rc = sched_solve(&p, obj, switch_us, &sched, cells);
        /* a group without phases (a prefill beside them) has no row */
        if (!rc && (by == WL_PARETO_BY_CLASS || p.nc > 0))
            rc = wl_results_writer_row(w, all);
        wl_results_buf_free(&sched);
        sched_free(&p);
    }
    if (!rc && by == WL_PARETO_BY_PHASE && s->ngroups && !phases) {
        wl_error_set(err, s->source, 0, "mode",
                     "no training or decode rows: a phase schedule needs a sweep with --mode "
                     "train or decode");
        rc = WL_EINVAL;
    }
    if (rc == WL_ENOMEM)
        wl_error_set(err, s->source, 0, "", "out of memory");
    free(order);
    free(start);
    return rc;
}
