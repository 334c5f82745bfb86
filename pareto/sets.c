/* Sets of operating points read from sweep tables: grouping by parameter
 * columns, fronts per group and the savings table (the per-class and
 * per-phase clock schedules are in schedule.c). Everything is sized from the input: no field, key or group
 * count is bounded by a fixed buffer. */
#include "wattlas_pareto.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sets_internal.h"

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
    wl_core_strlist_free(&s->unfit_groups);
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
/* The group of key (-1: none yet). */
static long group_find(const wl_pareto_set *s, const char *key, size_t kl)
{
    if (!s->hcap)
        return -1;
    size_t h = (size_t)fnv(key, kl) & (s->hcap - 1);
    while (s->hash[h]) {
        const char *k = s->gkeys[s->hash[h] - 1];
        if (strlen(k) == kl && memcmp(k, key, kl) == 0)
            return (long)(s->hash[h] - 1);
        h = (h + 1) & (s->hcap - 1);
    }
    return -1;
}

/* Notes the group of an unfit row (key, kl long), once. */
static int unfit_group(wl_pareto_set *s, const char *key, size_t kl)
{
    wl_core_strlist *u = &s->unfit_groups;
    for (size_t i = u->n; i-- > 0;)
        if (strlen(u->v[i]) == kl && memcmp(u->v[i], key, kl) == 0)
            return WL_OK;
    char **nv = realloc(u->v, (u->n + 1) * sizeof *nv);
    if (!nv)
        return WL_ENOMEM;
    u->v = nv;
    if (!(u->v[u->n] = malloc(kl + 1)))
        return WL_ENOMEM;
    memcpy(u->v[u->n], key, kl);
    u->v[u->n++][kl] = 0;
    return WL_OK;
}

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

/* The current row's group key: its ng group fields joined by '/'
 * (NUL-terminated, key->n its length). */
static void row_key(const row_source *csv, const int *gcol, size_t ng, wl_results_buf *key)
{
    key->n = 0;
    for (size_t i = 0; i < ng; i++) {
        if (i)
            wl_results_buf_put(key, "/", 1);
        wl_results_buf_puts(key, rs_field(csv, (size_t)gcol[i]));
    }
    wl_results_buf_put(key, "", 0);
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
 * sm_clock_mhz (through_voltage), with kernel_class too (voltage_groups). */
static size_t default_groups(const row_source *csv, int through_voltage, int voltage_groups,
                             int *gcol, size_t max)
{
    int stop = rs_col(csv, "sm_clock_mhz");
    if (!through_voltage && !voltage_groups) {
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

/* Whether two rows hold the same values (time, power, energy, ...: all
 * but the requested clock), as printed. */
static int same_values(const wl_pareto_set *s, size_t a, size_t b)
{
    for (size_t v = 0; v < s->nv; v++) {
        if (!strcmp(s->vnames[v], "sm_clock_mhz"))
            continue;
        double x = s->val[a * s->nv + v], y = s->val[b * s->nv + v];
        if (!(x == y || (isnan(x) && isnan(y))))
            return 0;
    }
    return 1;
}

/* Folds throttled requests into the lowest request that reaches the same
 * effective clock and voltage in the same group, and the same time, power
 * and energy: the governor gives them all one operating point, so a front
 * or an optimum lists it once. (Two requests can print one effective clock
 * and voltage and still differ: kernels the governor holds at the request
 * keep the request's voltage in the run's leakage; issue 59 found an fp32
 * ReLU loop at -50 mV drawing 221.5 W asked 1380 MHz and 217.3 W asked 1410
 * at one 1262.0 MHz, whose max-clock column took the 1380 row's.) The
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
            if (k[j].pt[3] == 1 && k[j].pt[2] > k[a].pt[2] &&
                same_values(s, k[j].row, k[a].row)) {
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
        /* the kept row's point moves with it (its effective clock, voltage
         * and throttled flag), then holds the highest request folded in */
        memmove(s->pt + 4 * m, s->pt + 4 * i, 4 * sizeof *s->pt);
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
    /* a --kernels sweep's rows each carry the whole pass's time_ms and
     * energy_j beside their class's: chosen on those, every class got the
     * same point */
    if (!rc && o->class_values)
        s->by_class = rs_col(csv, "kernel_class") >= 0;
    for (size_t i = 0; !rc && i < o->nvalues; i++) {
        const char *name = o->values[i];
        if (s->by_class && !strcmp(name, "time_ms"))
            name = "class_time_ms";
        else if (s->by_class && !strcmp(name, "energy_j"))
            name = "class_energy_j";
        if (!(s->vnames[s->nv++] = strdup(name))) {
            rc = WL_ENOMEM;
            break;
        }
        vcol[i] = rs_col(csv, name);
        if (vcol[i] < 0 && !o->optional_values) {
            wl_error_set(err, src, 1, name, "no such column");
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
        ng = default_groups(csv, o->through_voltage, o->voltage_groups, gcol, nc);
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
    /* the points are read whenever the columns are there: a row's
     * effective clock is reported (max_effective_clock_mhz) with or
     * without a collapse */
    int points = pcol[0] >= 0 && pcol[2] >= 0 && pcol[3] >= 0;
    int collapse = o->collapse && points;
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
            row_key(csv, gcol, ng, &key);
            rc = key.oom ? WL_ENOMEM : unfit_group(s, key.p ? key.p : "", key.n);
            continue;
        }
        if ((rc = grow_rows(s, o->keep_fields, lcol >= 0, points)))
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
        row_key(csv, gcol, ng, &key);
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
        for (int k = 0; points && k < 4; k++) {
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
    if (!rc && collapse) {
        rc = collapse_rows(s);
        s->folded = 1;
    }
    /* of the unfit rows' groups, those with no row that fits */
    size_t kept = 0;
    for (size_t i = 0; !rc && i < s->unfit_groups.n; i++) {
        char *k = s->unfit_groups.v[i];
        if (group_find(s, k, strlen(k)) >= 0)
            free(k);
        else
            s->unfit_groups.v[kept++] = k;
    }
    if (!rc)
        s->unfit_groups.n = kept;
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

int wl_pareto_set_by_class(const wl_pareto_set *s) { return s ? s->by_class : 0; }

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
size_t wl_pareto_set_unfit_groups(const wl_pareto_set *s) { return s->unfit_groups.n; }
const char *wl_pareto_set_unfit_group(const wl_pareto_set *s, size_t i)
{
    return i < s->unfit_groups.n ? s->unfit_groups.v[i] : NULL;
}
double wl_pareto_set_request_upto(const wl_pareto_set *s, size_t row)
{
    return s->folded && s->pt && row < s->n ? s->pt[4 * row + 2] : NAN;
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
int wl_pareto_i_by_group(const wl_pareto_set *s, size_t **order, size_t **start)
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
    int rc = tmp && pts ? wl_pareto_i_by_group(s, &order, &start) : WL_ENOMEM;
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
size_t wl_pareto_i_keyed_cols(const wl_pareto_set *s, const wl_results_col *fixed, size_t nfixed,
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
    return wl_pareto_i_keyed_cols(s, savings_cols, sizeof savings_cols / sizeof *savings_cols, cols, cap);
}

/* The group's key cells: its fields as read. */
size_t wl_pareto_i_key_cells(const wl_pareto_set *s, size_t g, wl_results_cell *cells)
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
    int rc = t ? wl_pareto_i_by_group(s, &order, &start) : WL_ENOMEM;
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
    cells += wl_pareto_i_key_cells(s, sv->group, cells);
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
