/* Pareto fronts (Kung et al. 1975 sweep for 2-D/3-D; sort-filter-skyline,
 * Chomicki et al. 2003, beyond) and objective-based point selection. */
#include "wattlas_pareto.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const double *pts;
    int k;
} sort_ctx;

/* qsort has no context argument: the comparison reads a file-level pointer,
 * set only inside wl_pareto_front (not reentrant across threads). */
static _Thread_local sort_ctx g_sort;

static int cmp_lex(const void *a, const void *b)
{
    size_t i = *(const size_t *)a, j = *(const size_t *)b;
    const double *p = g_sort.pts + i * (size_t)g_sort.k, *q = g_sort.pts + j * (size_t)g_sort.k;
    for (int d = 0; d < g_sort.k; d++) {
        if (p[d] < q[d])
            return -1;
        if (p[d] > q[d])
            return 1;
    }
    return i < j ? -1 : (i > j ? 1 : 0);
}

static int dominates(const double *a, const double *b, int k)
{
    int strict = 0;
    for (int d = 0; d < k; d++) {
        if (a[d] > b[d])
            return 0;
        if (a[d] < b[d])
            strict = 1;
    }
    return strict;
}

static int all_equal(const double *a, const double *b, int k)
{
    for (int d = 0; d < k; d++)
        if (a[d] != b[d])
            return 0;
    return 1;
}

/* 2-D: in (x, y) order, a point is on the front iff its y is below every y
 * seen before at a smaller x (or it equals the last front point). */
static void front2(const double *pts, const size_t *idx, size_t m, unsigned char *on)
{
    double best_y = INFINITY;
    const double *last = NULL;
    for (size_t r = 0; r < m; r++) {
        const double *p = pts + idx[r] * 2;
        if (p[1] < best_y || (last && all_equal(p, last, 2))) {
            on[idx[r]] = 1;
            best_y = p[1] < best_y ? p[1] : best_y;
            last = p;
        }
    }
}

/* 3-D: sweep in x order keeping the (y, z) staircase of front points seen so
 * far, sorted by y ascending with z strictly descending. A new point is
 * dominated iff the staircase entry with the largest y <= its y has z <= its
 * z (ties in x handled by the lexicographic order). */
typedef struct {
    double y, z;
    size_t id;
} step;

static void front3(const double *pts, const size_t *idx, size_t m, unsigned char *on, step *st)
{
    size_t ns = 0;
    for (size_t r = 0; r < m; r++) {
        size_t i = idx[r];
        const double *p = pts + i * 3;
        /* last staircase entry with y <= p.y */
        size_t lo = 0, hi = ns;
        while (lo < hi) {
            size_t mid = (lo + hi) / 2;
            if (st[mid].y <= p[1])
                lo = mid + 1;
            else
                hi = mid;
        }
        int dominated = 0;
        if (lo > 0) {
            const step *s = &st[lo - 1];
            const double *q = pts + s->id * 3;
            if (s->z <= p[2] && !all_equal(q, p, 3))
                dominated = 1;
            /* an equal point is on the front too, but must not be pushed twice */
        }
        if (dominated)
            continue;
        on[i] = 1;
        /* insert at lo, dropping entries with y >= p.y and z >= p.z */
        size_t e = lo;
        while (e < ns && st[e].z >= p[2])
            e++;
        /* entries [lo, e) are dominated in (y, z) by p */
        size_t removed = e - lo;
        if (removed == 0) {
            memmove(&st[lo + 1], &st[lo], (ns - lo) * sizeof *st);
            ns++;
        } else if (removed > 1) {
            memmove(&st[lo + 1], &st[e], (ns - e) * sizeof *st);
            ns -= removed - 1;
        }
        st[lo].y = p[1];
        st[lo].z = p[2];
        st[lo].id = i;
    }
}

/* k >= 4: sort-filter-skyline. Points sorted lexicographically can only be
 * dominated by earlier points, so each is checked against the front so far. */
static void front_k(const double *pts, const size_t *idx, size_t m, int k, unsigned char *on,
                    size_t *fr)
{
    size_t nf = 0;
    for (size_t r = 0; r < m; r++) {
        const double *p = pts + idx[r] * (size_t)k;
        int dom = 0;
        for (size_t j = 0; j < nf && !dom; j++)
            dom = dominates(pts + fr[j] * (size_t)k, p, k);
        if (!dom) {
            on[idx[r]] = 1;
            fr[nf++] = idx[r];
        }
    }
}

int wl_pareto_front(const double *pts, size_t n, int k, unsigned char *on_front)
{
    if (k < 1 || (n && (!pts || !on_front)))
        return WL_EINVAL;
    if (n)
        memset(on_front, 0, n);
    size_t *idx = malloc((n ? n : 1) * sizeof *idx);
    if (!idx)
        return WL_ENOMEM;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        int ok = 1;
        for (int d = 0; d < k; d++)
            ok &= !isnan(pts[i * (size_t)k + (size_t)d]);
        if (ok)
            idx[m++] = i;
    }
    g_sort.pts = pts;
    g_sort.k = k;
    qsort(idx, m, sizeof *idx, cmp_lex);
    int rc = WL_OK;
    if (k == 1) {
        for (size_t r = 0; r < m && pts[idx[r]] == pts[idx[0]]; r++)
            on_front[idx[r]] = 1;
    } else if (k == 2) {
        front2(pts, idx, m, on_front);
    } else if (k == 3) {
        step *st = malloc((m ? m : 1) * sizeof *st);
        if (!st)
            rc = WL_ENOMEM;
        else
            front3(pts, idx, m, on_front, st);
        free(st);
    } else {
        size_t *fr = malloc((m ? m : 1) * sizeof *fr);
        if (!fr)
            rc = WL_ENOMEM;
        else
            front_k(pts, idx, m, k, on_front, fr);
        free(fr);
    }
    free(idx);
    return rc;
}

/* ---- objectives ------------------------------------------------------------ */

struct wl_pareto_objective_type {
    const char *name;
    int has_param;
    /* score to minimise, or NAN when the point is not allowed */
    double (*score)(double t, double p, double e, double param, double t_min);
};

static double s_energy(double t, double p, double e, double a, double tm)
{
    (void)t; (void)p; (void)a; (void)tm;
    return e;
}
static double s_edp(double t, double p, double e, double a, double tm)
{
    (void)p; (void)a; (void)tm;
    return e * t;
}
static double s_ed2p(double t, double p, double e, double a, double tm)
{
    (void)p; (void)a; (void)tm;
    return e * t * t;
}
static double s_slowdown(double t, double p, double e, double pct, double tm)
{
    (void)p;
    return t <= tm * (1 + pct / 100.0) * (1 + 1e-12) ? e : NAN;
}
static double s_power(double t, double p, double e, double w, double tm)
{
    (void)e; (void)tm;
    return p <= w ? t : NAN;
}

static const wl_pareto_objective_type objectives[] = {
    {"energy", 0, s_energy},
    {"edp", 0, s_edp},
    {"ed2p", 0, s_ed2p},
    {"energy-within-slowdown", 1, s_slowdown},
    {"time-within-power", 1, s_power},
};

int wl_pareto_objective_parse(const char *text, wl_pareto_objective *out, wl_error *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->text, sizeof out->text, "%s", text);
    const char *eq = strchr(text, '=');
    size_t nl = eq ? (size_t)(eq - text) : strlen(text);
    for (size_t i = 0; i < sizeof objectives / sizeof *objectives; i++) {
        const wl_pareto_objective_type *t = &objectives[i];
        if (strlen(t->name) != nl || strncmp(t->name, text, nl) != 0)
            continue;
        if (t->has_param != (eq != NULL)) {
            wl_error_set(err, "objective", 0, t->name, t->has_param ? "needs =VALUE" : "takes no value");
            return WL_EINVAL;
        }
        if (eq && wl_core_parse_real(eq + 1, 0, 1e6, "objective", 0, t->name, &out->param, err))
            return WL_EINVAL;
        out->type = t;
        return WL_OK;
    }
    wl_error_set(err, "objective", 0, "", "unknown objective '%.60s' (energy, edp, ed2p, "
                 "energy-within-slowdown=P, time-within-power=W)", text);
    return WL_EINVAL;
}

const char *wl_pareto_objective_name(const wl_pareto_objective *o)
{
    return o->type ? o->type->name : "?";
}

long wl_pareto_choose(const wl_pareto_objective *o, const double *t, const double *p,
                      const double *e, size_t n)
{
    double tmin = INFINITY;
    for (size_t i = 0; i < n; i++)
        if (t[i] < tmin)
            tmin = t[i];
    long best = -1;
    double bs = INFINITY;
    for (size_t i = 0; i < n; i++) {
        double s = o->type->score(t[i], p[i], e[i], o->param, tmin);
        if (isnan(s) || isnan(t[i]))
            continue;
        if (s < bs || (s == bs && best >= 0 && t[i] < t[best])) {
            bs = s;
            best = (long)i;
        }
    }
    return best;
}

/* ---- per-class clock schedules -------------------------------------------- */

static void schedule_cost(int nc, int nk, const double *t, const double *e, const double *launches,
                          double switch_us, double switch_w, const int *choice,
                          wl_pareto_schedule_result *r)
{
    int base = 0;
    for (int c = 1; c < nc; c++)
        if (t[c * nk + choice[c]] > t[base * nk + choice[base]])
            base = c;
    r->time_ms = r->energy_j = r->switches = 0;
    for (int c = 0; c < nc; c++) {
        r->time_ms += t[c * nk + choice[c]];
        r->energy_j += e[c * nk + choice[c]];
        if (choice[c] != choice[base])
            r->switches += 2 * launches[c];
    }
    r->time_ms += r->switches * switch_us * 1e-3;
    r->energy_j += r->switches * switch_us * 1e-6 * switch_w;
}

int wl_pareto_schedule(int nc, int nk, const double *t, const double *e, const double *launches,
                       double switch_us, double switch_w, double budget_ms, int *choice,
                       wl_pareto_schedule_result *res)
{
    if (nc < 1 || nk < 1 || nc > 64)
        return WL_EINVAL;
    int cur[64], best[64];
    int found = 0;
    wl_pareto_schedule_result r, br = {0, INFINITY, 0};
    /* lambda is the price of a millisecond in joules; sweep it on a log
     * grid: each class then picks its clock independently */
    for (int it = -1; it <= 240; it++) {
        double lam = it < 0 ? 0 : pow(10, -6 + it * 0.05);
        for (int c = 0; c < nc; c++) {
            int bk = -1;
            double bs = INFINITY;
            for (int k = 0; k < nk; k++) {
                double tv = t[c * nk + k], ev = e[c * nk + k];
                if (isnan(tv) || isnan(ev))
                    continue;
                double s = ev + lam * tv;
                if (s < bs) {
                    bs = s;
                    bk = k;
                }
            }
            if (bk < 0)
                return WL_EINVAL;
            cur[c] = bk;
        }
        /* one clock for all, if it helps (no switches) */
        for (int pass = 0; pass < 2; pass++) {
            if (pass == 1) {
                int base = 0;
                for (int c = 1; c < nc; c++)
                    if (t[c * nk + cur[c]] > t[base * nk + cur[base]])
                        base = c;
                for (int c = 0; c < nc; c++)
                    cur[c] = cur[base];
            }
            schedule_cost(nc, nk, t, e, launches, switch_us, switch_w, cur, &r);
            if (r.time_ms <= budget_ms * (1 + 1e-12) && r.energy_j < br.energy_j) {
                br = r;
                memcpy(best, cur, (size_t)nc * sizeof *cur);
                found = 1;
            }
        }
    }
    /* every fixed clock too: the schedule never loses to one */
    for (int k = 0; k < nk; k++) {
        for (int c = 0; c < nc; c++)
            cur[c] = k;
        schedule_cost(nc, nk, t, e, launches, switch_us, switch_w, cur, &r);
        if (!isnan(r.energy_j) && r.time_ms <= budget_ms * (1 + 1e-12) && r.energy_j < br.energy_j) {
            br = r;
            memcpy(best, cur, (size_t)nc * sizeof *cur);
            found = 1;
        }
    }
    if (!found)
        return WL_ENOTFOUND;
    memcpy(choice, best, (size_t)nc * sizeof *best);
    *res = br;
    return WL_OK;
}
