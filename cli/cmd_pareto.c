/* wattlas pareto, wattlas optimize: read a sweep CSV, group it, and print
 * the non-dominated rows or one chosen operating point per group. */
#include "cli.h"
#include "../pareto/wattlas_pareto.h"
#include "../results/wattlas_results.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAXCOLS 16

int cmd_schedule(const char *in, const char *out_path, const wl_pareto_objective *obj,
                 double switch_us, int keep_infeasible);

/* The rows we keep: raw text (for output), group id, numeric columns. */
typedef struct {
    char *text;         /* all raw rows, NUL-separated */
    size_t text_n, text_cap;
    size_t *off;        /* row -> offset in text */
    uint32_t *group;    /* row -> group id */
    double *val;        /* row -> ncols values */
    size_t n, cap;
    int ncols;
    char **gkeys;       /* group id -> key text */
    size_t ngroups, gcap;
    size_t *hash;       /* open addressing: group id + 1, 0 = empty */
    size_t hcap;
    char header[8192];
} table;

static void table_free(table *t)
{
    free(t->text);
    free(t->off);
    free(t->group);
    free(t->val);
    for (size_t i = 0; i < t->ngroups; i++)
        free(t->gkeys[i]);
    free(t->gkeys);
    free(t->hash);
}

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ULL;
    }
    return h;
}

static long group_of(table *t, const char *key)
{
    if (t->ngroups * 2 >= t->hcap) {
        size_t nc = t->hcap ? t->hcap * 2 : 1024;
        size_t *nh = calloc(nc, sizeof *nh);
        if (!nh)
            return -1;
        for (size_t g = 0; g < t->ngroups; g++) {
            size_t h = (size_t)fnv(t->gkeys[g]) & (nc - 1);
            while (nh[h])
                h = (h + 1) & (nc - 1);
            nh[h] = g + 1;
        }
        free(t->hash);
        t->hash = nh;
        t->hcap = nc;
    }
    size_t h = (size_t)fnv(key) & (t->hcap - 1);
    while (t->hash[h]) {
        if (strcmp(t->gkeys[t->hash[h] - 1], key) == 0)
            return (long)(t->hash[h] - 1);
        h = (h + 1) & (t->hcap - 1);
    }
    if (t->ngroups == t->gcap) {
        size_t nc = t->gcap ? t->gcap * 2 : 256;
        char **ng = realloc(t->gkeys, nc * sizeof *ng);
        if (!ng)
            return -1;
        t->gkeys = ng;
        t->gcap = nc;
    }
    t->gkeys[t->ngroups] = strdup(key);
    if (!t->gkeys[t->ngroups])
        return -1;
    t->hash[h] = t->ngroups + 1;
    return (long)t->ngroups++;
}

static int split_names(const char *list, char names[][64], int max)
{
    int n = 0;
    const char *p = list;
    while (*p && n < max) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l && l < 64) {
            memcpy(names[n], p, l);
            names[n][l] = 0;
            n++;
        }
        p += l + (e ? 1 : 0);
    }
    return n;
}

/* Loads the CSV; value columns vnames (all required); group columns gnames
 * (NULL: default = the sweep's parameter columns before the decision
 * variables); rows with feasible = 0 are skipped unless keep_infeasible. */
static int load_table(const char *cmd, const char *path, char vnames[][64], int nv,
                      const char *group_by, int keep_infeasible, table *t)
{
    wl_error err = {0};
    wl_results_csv *csv = NULL;
    if (wl_results_csv_open(path, &csv, &err))
        return runtime_error(cmd, &err);
    int vcol[MAXCOLS], gcol[64], ng = 0;
    for (int i = 0; i < nv; i++) {
        vcol[i] = wl_results_csv_col(csv, vnames[i]);
        if (vcol[i] < 0) {
            wl_error_set(&err, path, 1, vnames[i], "no such column");
            wl_results_csv_close(csv);
            return runtime_error(cmd, &err);
        }
    }
    if (group_by) {
        char names[64][64];
        ng = split_names(group_by, names, 64);
        for (int i = 0; i < ng; i++) {
            gcol[i] = wl_results_csv_col(csv, names[i]);
            if (gcol[i] < 0) {
                wl_error_set(&err, path, 1, names[i], "no such column for --group-by");
                wl_results_csv_close(csv);
                return runtime_error(cmd, &err);
            }
        }
    } else {
        int stop = wl_results_csv_col(csv, "voltage_offset_mv");
        if (stop < 0)
            stop = wl_results_csv_col(csv, "sm_clock_mhz");
        for (int i = 0; i < stop && ng < 64; i++)
            gcol[ng++] = i;
        int kc = wl_results_csv_col(csv, "kernel_class");
        if (kc >= 0 && ng < 64)
            gcol[ng++] = kc;
    }
    int fcol = keep_infeasible ? -1 : wl_results_csv_col(csv, "feasible");
    /* header text */
    size_t hl = 0;
    for (size_t i = 0; i < wl_results_csv_ncols(csv) && hl < sizeof t->header - 2; i++)
        hl += (size_t)snprintf(t->header + hl, sizeof t->header - hl, "%s%s", i ? "," : "",
                               wl_results_csv_header(csv, i));
    t->ncols = nv;
    int r, rc = 0;
    char key[4096];
    while ((r = wl_results_csv_next(csv, &err)) == 1) {
        if (fcol >= 0 && strcmp(wl_results_csv_field(csv, (size_t)fcol), "0") == 0)
            continue;
        double v[MAXCOLS];
        for (int i = 0; i < nv; i++) {
            const char *f = wl_results_csv_field(csv, (size_t)vcol[i]);
            char *e;
            errno = 0;
            v[i] = strtod(f, &e);
            if (!*f) {
                v[i] = NAN; /* not evaluated: never chosen */
            } else if (*e || errno) {
                wl_error_set(&err, path, wl_results_csv_line(csv), vnames[i], "not a number: '%s'", f);
                rc = runtime_error(cmd, &err);
                break;
            }
        }
        if (rc)
            break;
        size_t kl = 0;
        for (int i = 0; i < ng && kl < sizeof key - 2; i++)
            kl += (size_t)snprintf(key + kl, sizeof key - kl, "%s\x1f",
                                   wl_results_csv_field(csv, (size_t)gcol[i]));
        key[kl] = 0;
        long g = group_of(t, key);
        const char *raw = wl_results_csv_raw(csv);
        size_t rl = strlen(raw) + 1;
        if (t->n == t->cap) {
            size_t nc = t->cap ? t->cap * 2 : 4096;
            size_t *no = realloc(t->off, nc * sizeof *no);
            uint32_t *ngp = no ? realloc(t->group, nc * sizeof *ngp) : NULL;
            double *nval = ngp ? realloc(t->val, nc * (size_t)nv * sizeof *nval) : NULL;
            if (no) t->off = no;
            if (ngp) t->group = ngp;
            if (!nval) {
                g = -1;
            } else {
                t->val = nval;
                t->cap = nc;
            }
        }
        while (g >= 0 && t->text_n + rl > t->text_cap) {
            size_t nc = t->text_cap ? t->text_cap * 2 : (1u << 20);
            char *nt = realloc(t->text, nc);
            if (!nt)
                g = -1;
            else {
                t->text = nt;
                t->text_cap = nc;
            }
        }
        if (g < 0) {
            fprintf(stderr, "wattlas %s: out of memory\n", cmd);
            rc = EXIT_RUNTIME;
            break;
        }
        memcpy(t->text + t->text_n, raw, rl);
        t->off[t->n] = t->text_n;
        t->text_n += rl;
        t->group[t->n] = (uint32_t)g;
        memcpy(t->val + t->n * (size_t)nv, v, (size_t)nv * sizeof *v);
        t->n++;
    }
    if (!rc && r < 0)
        rc = runtime_error(cmd, &err);
    wl_results_csv_close(csv);
    return rc;
}

/* Rows of each group, contiguous: order[start[g] .. start[g+1]). */
static int by_group(const table *t, size_t **order, size_t **start)
{
    *order = malloc((t->n ? t->n : 1) * sizeof **order);
    *start = calloc(t->ngroups + 1, sizeof **start);
    if (!*order || !*start)
        return -1;
    for (size_t i = 0; i < t->n; i++)
        (*start)[t->group[i] + 1]++;
    for (size_t g = 0; g < t->ngroups; g++)
        (*start)[g + 1] += (*start)[g];
    size_t *fill = malloc((t->ngroups + 1) * sizeof *fill);
    if (!fill)
        return -1;
    memcpy(fill, *start, (t->ngroups + 1) * sizeof *fill);
    for (size_t i = 0; i < t->n; i++)
        (*order)[fill[t->group[i]]++] = i;
    free(fill);
    return 0;
}

static void pareto_help(FILE *f)
{
    fprintf(f,
"usage: wattlas pareto [--in FILE|-] [--x COL] [--y COL] [--minimize COL,...]\n"
"                      [--group-by COL,...] [--all] [-o FILE]\n\n"
"Prints the non-dominated rows (all objectives minimised) of each group, in\n"
"input order, with the input header. Default objectives: --x time_ms\n"
"--y energy_j; --minimize adds more (fronts of three or more objectives).\n"
"Default groups: the sweep's parameter columns before voltage_offset_mv (or\n"
"sm_clock_mhz), plus kernel_class. Rows with feasible = 0 are left out\n"
"unless --all. O(n log n) for two and three objectives.\n");
}

int cmd_pareto(int argc, char **argv)
{
    const char *cmd = "pareto";
    const char *in = "-", *out_path = "-", *x = "time_ms", *y = "energy_j", *more = NULL,
               *group_by = NULL;
    int all = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **dst = NULL;
        if (strcmp(a, "--help") == 0) { pareto_help(stdout); return 0; }
        else if (strcmp(a, "--all") == 0) { all = 1; continue; }
        else if (strcmp(a, "--in") == 0) dst = &in;
        else if (strcmp(a, "-o") == 0) dst = &out_path;
        else if (strcmp(a, "--x") == 0) dst = &x;
        else if (strcmp(a, "--y") == 0) dst = &y;
        else if (strcmp(a, "--minimize") == 0) dst = &more;
        else if (strcmp(a, "--group-by") == 0) dst = &group_by;
        else return usage_error(cmd, "unknown option '%s'", a);
        if (i + 1 >= argc)
            return usage_error(cmd, "%s needs a value", a);
        *dst = argv[++i];
    }
    char names[MAXCOLS][64];
    snprintf(names[0], 64, "%s", x);
    snprintf(names[1], 64, "%s", y);
    int k = 2;
    if (more)
        k += split_names(more, names + 2, MAXCOLS - 2);
    table t;
    memset(&t, 0, sizeof t);
    int rc = load_table(cmd, in, names, k, group_by, all, &t);
    size_t *order = NULL, *start = NULL;
    unsigned char *on = calloc(t.n ? t.n : 1, 1), *tmp_on = malloc(t.n ? t.n : 1);
    double *pts = malloc((t.n ? t.n : 1) * (size_t)k * sizeof *pts);
    if (!rc && (!on || !tmp_on || !pts || by_group(&t, &order, &start))) {
        fprintf(stderr, "wattlas pareto: out of memory\n");
        rc = EXIT_RUNTIME;
    }
    for (size_t g = 0; !rc && g < t.ngroups; g++) {
        size_t m = start[g + 1] - start[g];
        for (size_t r = 0; r < m; r++)
            memcpy(pts + r * (size_t)k, t.val + order[start[g] + r] * (size_t)k,
                   (size_t)k * sizeof *pts);
        if (wl_pareto_front(pts, m, k, tmp_on)) {
            fprintf(stderr, "wattlas pareto: out of memory\n");
            rc = EXIT_RUNTIME;
            break;
        }
        for (size_t r = 0; r < m; r++)
            on[order[start[g] + r]] = tmp_on[r];
    }
    if (!rc) {
        wl_error err = {0};
        wl_results_out *out = NULL;
        if (wl_results_out_open(out_path, &out, &err)) {
            rc = runtime_error(cmd, &err);
        } else {
            FILE *f = wl_results_out_stream(out);
            fprintf(f, "%s\n", t.header);
            for (size_t i = 0; i < t.n; i++)
                if (on[i])
                    fprintf(f, "%s\n", t.text + t.off[i]);
            if (wl_results_out_commit(out, &err))
                rc = runtime_error(cmd, &err);
        }
    }
    free(order);
    free(start);
    free(on);
    free(tmp_on);
    free(pts);
    table_free(&t);
    return rc;
}

static void optimize_help(FILE *f)
{
    fprintf(f,
"usage: wattlas optimize --objective OBJ [--in FILE|-] [--group-by COL,...]\n"
"                        [--time COL] [--power COL] [--energy COL] [--all] [-o FILE]\n\n"
"Picks one operating point per group and prints the practitioner's savings\n"
"table: the chosen clock, time, power and energy; the fastest point and the\n"
"maximum-clock point; energy saved and runtime penalty against each.\n"
"objectives:\n"
"  energy                      least energy\n"
"  edp                         least energy x delay\n"
"  ed2p                        least energy x delay^2\n"
"  energy-within-slowdown=P    least energy with time <= (1 + P/100) x fastest\n"
"  time-within-power=W         least time with average power <= W watts\n"
"Defaults: time_ms, power_w, energy_j; groups as in 'wattlas pareto'.\n\n"
"--schedule [--switch-us US]  with a --scope kernel sweep: one clock per kernel\n"
"        class (energy or energy-within-slowdown=P objectives), counting a clock\n"
"        switch of US microseconds (default 20) twice per launch of a class that\n"
"        runs off the schedule's base clock; prints the best fixed clock, the\n"
"        schedule and its extra saving. Class times are GPU busy times.\n");
}

int cmd_optimize(int argc, char **argv)
{
    const char *cmd = "optimize";
    const char *in = "-", *out_path = "-", *obj_text = NULL, *group_by = NULL;
    const char *tcol = "time_ms", *pcol = "power_w", *ecol = "energy_j", *switch_text = NULL;
    int all = 0, schedule = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **dst = NULL;
        if (strcmp(a, "--help") == 0) { optimize_help(stdout); return 0; }
        else if (strcmp(a, "--all") == 0) { all = 1; continue; }
        else if (strcmp(a, "--schedule") == 0) { schedule = 1; continue; }
        else if (strcmp(a, "--switch-us") == 0) dst = &switch_text;
        else if (strcmp(a, "--in") == 0) dst = &in;
        else if (strcmp(a, "-o") == 0) dst = &out_path;
        else if (strcmp(a, "--objective") == 0) dst = &obj_text;
        else if (strcmp(a, "--group-by") == 0) dst = &group_by;
        else if (strcmp(a, "--time") == 0) dst = &tcol;
        else if (strcmp(a, "--power") == 0) dst = &pcol;
        else if (strcmp(a, "--energy") == 0) dst = &ecol;
        else return usage_error(cmd, "unknown option '%s'", a);
        if (i + 1 >= argc)
            return usage_error(cmd, "%s needs a value", a);
        *dst = argv[++i];
    }
    if (!obj_text)
        return usage_error(cmd, "--objective is required");
    wl_pareto_objective obj;
    wl_error err = {0};
    if (wl_pareto_objective_parse(obj_text, &obj, &err)) {
        char msg[400];
        wl_error_format(&err, msg, sizeof msg);
        return usage_error(cmd, "%s", msg);
    }
    if (schedule) {
        double sw = 20;
        if (switch_text && (parse_double_arg(cmd, "--switch-us", switch_text, &sw) || sw < 0))
            return sw < 0 ? usage_error(cmd, "--switch-us must be >= 0") : EXIT_USAGE;
        return cmd_schedule(in, out_path, &obj, sw, all);
    }
    char names[4][64];
    snprintf(names[0], 64, "%s", tcol);
    snprintf(names[1], 64, "%s", pcol);
    snprintf(names[2], 64, "%s", ecol);
    snprintf(names[3], 64, "%s", "sm_clock_mhz");
    table t;
    memset(&t, 0, sizeof t);
    int rc = load_table(cmd, in, names, 4, group_by, all, &t);
    size_t *order = NULL, *start = NULL;
    double *tt = malloc((t.n ? t.n : 1) * sizeof *tt), *pp = malloc((t.n ? t.n : 1) * sizeof *pp),
           *ee = malloc((t.n ? t.n : 1) * sizeof *ee);
    if (!rc && (!tt || !pp || !ee || by_group(&t, &order, &start))) {
        fprintf(stderr, "wattlas optimize: out of memory\n");
        rc = EXIT_RUNTIME;
    }
    wl_results_out *out = NULL;
    if (!rc && wl_results_out_open(out_path, &out, &err))
        rc = runtime_error(cmd, &err);
    if (!rc) {
        FILE *f = wl_results_out_stream(out);
        fprintf(f, "group,objective,sm_clock_mhz,time_ms,power_w,energy_j,"
                   "fastest_clock_mhz,fastest_time_ms,fastest_energy_j,"
                   "max_clock_mhz,max_clock_time_ms,max_clock_energy_j,"
                   "energy_saving_vs_fastest_pct,runtime_penalty_vs_fastest_pct,"
                   "energy_saving_vs_max_clock_pct,runtime_penalty_vs_max_clock_pct\n");
        for (size_t g = 0; g < t.ngroups; g++) {
            size_t m = start[g + 1] - start[g];
            long fast = -1, maxc = -1;
            for (size_t r = 0; r < m; r++) {
                const double *v = t.val + order[start[g] + r] * 4;
                tt[r] = v[0];
                pp[r] = v[1];
                ee[r] = v[2];
                if (!isnan(v[0]) && (fast < 0 || v[0] < tt[fast]))
                    fast = (long)r;
                const double *vm = maxc >= 0 ? t.val + order[start[g] + (size_t)maxc] * 4 : NULL;
                if (!isnan(v[0]) && (!vm || v[3] > vm[3]))
                    maxc = (long)r;
            }
            long c = wl_pareto_choose(&obj, tt, pp, ee, m);
            /* the group key, readable: fields joined by '/' */
            char key[4096];
            snprintf(key, sizeof key, "%s", t.gkeys[g]);
            size_t kl = strlen(key);
            if (kl && key[kl - 1] == '\x1f')
                key[--kl] = 0;
            for (char *q = key; *q; q++)
                if (*q == '\x1f')
                    *q = '/';
            wl_results_csv_str(f, key);
            fprintf(f, ",%s,", obj.text);
            if (c < 0 || fast < 0) {
                fprintf(f, ",,,,,,,,,,,,,\n"); /* nothing qualifies */
                continue;
            }
            const double *vc = t.val + order[start[g] + (size_t)c] * 4;
            const double *vf = t.val + order[start[g] + (size_t)fast] * 4;
            const double *vm = t.val + order[start[g] + (size_t)maxc] * 4;
            fprintf(f, "%.1f,%.5f,%.3f,%.6f,%.1f,%.5f,%.6f,%.1f,%.5f,%.6f,%.2f,%.2f,%.2f,%.2f\n",
                    vc[3], vc[0], vc[1], vc[2], vf[3], vf[0], vf[2], vm[3], vm[0], vm[2],
                    100 * (1 - vc[2] / vf[2]), 100 * (vc[0] / vf[0] - 1),
                    100 * (1 - vc[2] / vm[2]), 100 * (vc[0] / vm[0] - 1));
        }
        if (wl_results_out_commit(out, &err))
            rc = runtime_error(cmd, &err);
    }
    free(order);
    free(start);
    free(tt);
    free(pp);
    free(ee);
    table_free(&t);
    return rc;
}

/* ---- per-kernel-class clock schedules ------------------------------------- */

#define SCH_MAXC 16
#define SCH_MAXK 512

typedef struct {
    char key[1024];
    int nc, nk;
    char cls[SCH_MAXC][32];
    double clk[SCH_MAXK];
    double t[SCH_MAXC * SCH_MAXK], e[SCH_MAXC * SCH_MAXK], launches[SCH_MAXC];
    double static_w_sum;
    int static_n;
} sch_group;

static int sch_index(double *arr, int *n, int max, double v)
{
    for (int i = 0; i < *n; i++)
        if (arr[i] == v)
            return i;
    if (*n >= max)
        return -1;
    arr[*n] = v;
    return (*n)++;
}

static void sch_emit(FILE *f, sch_group *g, const wl_pareto_objective *obj, double switch_us)
{
    /* clocks ascending, so the output reads naturally */
    int order[SCH_MAXK];
    for (int k = 0; k < g->nk; k++)
        order[k] = k;
    for (int a = 1; a < g->nk; a++)
        for (int b = a; b > 0 && g->clk[order[b]] < g->clk[order[b - 1]]; b--) {
            int tmp = order[b];
            order[b] = order[b - 1];
            order[b - 1] = tmp;
        }
    static double t[SCH_MAXC * SCH_MAXK], e[SCH_MAXC * SCH_MAXK];
    double tf[SCH_MAXK], ef[SCH_MAXK], tmin = INFINITY;
    for (int k = 0; k < g->nk; k++) {
        tf[k] = ef[k] = 0;
        for (int c = 0; c < g->nc; c++) {
            t[c * g->nk + k] = g->t[c * SCH_MAXK + order[k]];
            e[c * g->nk + k] = g->e[c * SCH_MAXK + order[k]];
            tf[k] += t[c * g->nk + k];
            ef[k] += e[c * g->nk + k];
        }
        if (tf[k] < tmin)
            tmin = tf[k];
    }
    double budget = obj->type && strcmp(wl_pareto_objective_name(obj), "energy") == 0
                        ? INFINITY
                        : tmin * (1 + obj->param / 100.0);
    int kf = -1;
    for (int k = 0; k < g->nk; k++)
        if (!isnan(ef[k]) && tf[k] <= budget * (1 + 1e-12) && (kf < 0 || ef[k] < ef[kf]))
            kf = k;
    for (char *q = g->key; *q; q++)
        if (*q == '\x1f')
            *q = '/';
    size_t kl = strlen(g->key);
    if (kl && g->key[kl - 1] == '/')
        g->key[kl - 1] = 0;
    wl_results_csv_str(f, g->key);
    fprintf(f, ",%s,", obj->text);
    int choice[SCH_MAXC];
    wl_pareto_schedule_result r;
    double sw = g->static_n ? g->static_w_sum / g->static_n : 0;
    if (kf < 0 || wl_pareto_schedule(g->nc, g->nk, t, e, g->launches, switch_us, sw, budget,
                                     choice, &r) != WL_OK) {
        fprintf(f, ",,,,,,,\n");
        return;
    }
    fprintf(f, "%.1f,%.5f,%.6f,", g->clk[order[kf]], tf[kf], ef[kf]);
    char sched[1024];
    size_t sl = 0;
    for (int c = 0; c < g->nc && sl < sizeof sched - 64; c++)
        sl += (size_t)snprintf(sched + sl, sizeof sched - sl, "%s%s=%.0f", c ? ";" : "", g->cls[c],
                               g->clk[order[choice[c]]]);
    fprintf(f, "%s,%.5f,%.6f,%.0f,%.2f\n", sched, r.time_ms, r.energy_j, r.switches,
            100 * (1 - r.energy_j / ef[kf]));
}

/* optimize --schedule: rows of a --scope kernel sweep */
int cmd_schedule(const char *in, const char *out_path, const wl_pareto_objective *obj,
                 double switch_us, int keep_infeasible)
{
    const char *cmd = "optimize";
    const char *name = wl_pareto_objective_name(obj);
    if (strcmp(name, "energy") != 0 && strcmp(name, "energy-within-slowdown") != 0)
        return usage_error(cmd, "--schedule supports the energy and energy-within-slowdown=P objectives");
    wl_error err = {0};
    wl_results_csv *csv = NULL;
    if (wl_results_csv_open(in, &csv, &err))
        return runtime_error(cmd, &err);
    static const char *const need[] = {"kernel_class", "class_time_ms", "class_energy_j",
                                       "class_launches", "sm_clock_mhz", "energy_static_j",
                                       "time_ms"};
    int col[7];
    for (int i = 0; i < 7; i++)
        if ((col[i] = wl_results_csv_col(csv, need[i])) < 0) {
            wl_error_set(&err, in, 1, need[i], "no such column (--schedule needs a --scope kernel sweep)");
            wl_results_csv_close(csv);
            return runtime_error(cmd, &err);
        }
    int fcol = keep_infeasible ? -1 : wl_results_csv_col(csv, "feasible");
    wl_results_out *out = NULL;
    if (wl_results_out_open(out_path, &out, &err)) {
        wl_results_csv_close(csv);
        return runtime_error(cmd, &err);
    }
    FILE *f = wl_results_out_stream(out);
    fprintf(f, "group,objective,fixed_clock_mhz,fixed_time_ms,fixed_energy_j,schedule_mhz,"
               "schedule_time_ms,schedule_energy_j,clock_switches,extra_saving_pct\n");
    sch_group *g = calloc(1, sizeof *g);
    int r, rc = 0, have = 0;
    while (g && (r = wl_results_csv_next(csv, &err)) == 1) {
        if (fcol >= 0 && strcmp(wl_results_csv_field(csv, (size_t)fcol), "0") == 0)
            continue;
        char key[1024];
        size_t kl = 0;
        for (int i = 0; i < col[4] && kl < sizeof key - 2; i++)
            kl += (size_t)snprintf(key + kl, sizeof key - kl, "%s\x1f", wl_results_csv_field(csv, (size_t)i));
        key[kl] = 0;
        if (have && strcmp(key, g->key) != 0) {
            sch_emit(f, g, obj, switch_us);
            memset(g, 0, sizeof *g);
            have = 0;
        }
        if (!have) {
            snprintf(g->key, sizeof g->key, "%s", key);
            have = 1;
        }
        double v[6];
        for (int i = 1; i < 7; i++) {
            char *e;
            const char *s = wl_results_csv_field(csv, (size_t)col[i]);
            v[i - 1] = strtod(s, &e);
            if (e == s || *e) {
                wl_error_set(&err, in, wl_results_csv_line(csv), need[i], "not a number: '%s'", s);
                rc = runtime_error(cmd, &err);
                break;
            }
        }
        if (rc)
            break;
        const char *cls = wl_results_csv_field(csv, (size_t)col[0]);
        int c;
        for (c = 0; c < g->nc; c++)
            if (strcmp(g->cls[c], cls) == 0)
                break;
        if (c == g->nc) {
            if (g->nc >= SCH_MAXC) {
                wl_error_set(&err, in, wl_results_csv_line(csv), "kernel_class", "too many classes");
                rc = runtime_error(cmd, &err);
                break;
            }
            snprintf(g->cls[c], sizeof g->cls[c], "%s", cls);
            for (int k = 0; k < SCH_MAXK; k++)
                g->t[c * SCH_MAXK + k] = g->e[c * SCH_MAXK + k] = NAN;
            g->nc++;
        }
        int k = sch_index(g->clk, &g->nk, SCH_MAXK, v[3]);
        if (k < 0) {
            wl_error_set(&err, in, wl_results_csv_line(csv), "sm_clock_mhz", "more than %d clocks", SCH_MAXK);
            rc = runtime_error(cmd, &err);
            break;
        }
        g->t[c * SCH_MAXK + k] = v[0];
        g->e[c * SCH_MAXK + k] = v[1];
        g->launches[c] = v[2];
        if (v[5] > 0) {
            g->static_w_sum += v[4] / (v[5] * 1e-3);
            g->static_n++;
        }
    }
    if (!g) {
        fprintf(stderr, "wattlas optimize: out of memory\n");
        rc = EXIT_RUNTIME;
    }
    if (!rc && r < 0)
        rc = runtime_error(cmd, &err);
    if (!rc && have) {
        /* classes missing at some clock would make a fixed clock incomparable */
        for (int c = 0; c < g->nc; c++)
            for (int k = 0; k < g->nk; k++)
                if (isnan(g->t[c * SCH_MAXK + k]))
                    g->t[c * SCH_MAXK + k] = INFINITY;
        sch_emit(f, g, obj, switch_us);
    }
    free(g);
    wl_results_csv_close(csv);
    if (rc) {
        wl_results_out_abort(out);
        return rc;
    }
    if (wl_results_out_commit(out, &err))
        return runtime_error(cmd, &err);
    return 0;
}
