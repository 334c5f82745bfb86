/* Helpers shared by the commands: messages, option values, outputs. */
#include "cli.h"
#include "../sweep/wattlas_sweep.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

int cli_usage(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "wattlas %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(see 'wattlas %s --help')\n", cmd);
    va_end(ap);
    return EXIT_USAGE;
}

/* "--voltage-offset-mv" names the field "voltage_offset_mv": do not repeat it. */
static int same_name(const char *opt, const char *field)
{
    while (*opt == '-')
        opt++;
    for (; *opt && *field; opt++, field++)
        if (*opt != *field && !(*opt == '-' && *field == '_'))
            return 0;
    return *opt == *field;
}

int cli_fail(const char *cmd, const wl_error *err)
{
    if (err->source[0] == '-' && err->source[1]) {
        if (err->field[0] && !same_name(err->source, err->field))
            return cli_usage(cmd, "%s: %s: %s", err->source, err->field, err->text);
        return cli_usage(cmd, "%s: %s", err->source, err->text);
    }
    char buf[800];
    wl_error_format(err, buf, sizeof buf);
    /* a call stopped by Ctrl-C (wl_stop_watch) may say nothing more */
    fprintf(stderr, "wattlas %s: %s\n", cmd, buf[0] ? buf : wl_stop_requested() ? "stopped" : "failed");
    return EXIT_RUNTIME;
}

int cli_real(const char *cmd, const char *opt, const char *s, double lo, double hi, double *out)
{
    wl_error err = {0};
    if (wl_core_parse_real(s, lo, hi, opt, 0, "", out, &err))
        return cli_fail(cmd, &err);
    return 0;
}

int cli_int(const char *cmd, const char *opt, const char *s, long long lo, long long hi,
            long long *out)
{
    wl_error err = {0};
    if (wl_core_parse_int(s, lo, hi, opt, 0, "", out, &err))
        return cli_fail(cmd, &err);
    return 0;
}

int cli_format(const char *cmd, const char *s, wl_results_format *out)
{
    if (wl_results_format_parse(s, out))
        return cli_usage(cmd, "--format: expected table, csv, ndjson or json, got '%.60s'", s);
    return 0;
}

int cli_shard(const char *cmd, const char *s, unsigned *i, unsigned *n)
{
    wl_error err = {0};
    if (wl_sweep_shard_parse(s, i, n, &err))
        return cli_usage(cmd, "--shard: %s", err.text);
    return 0;
}

int cli_input(const char *cmd, const char *in_opt, int argc, char **argv, int first,
              const char **path)
{
    int npos = argc - first;
    if (in_opt && npos > 0)
        return cli_usage(cmd, "give the input once: --in %s or %s", in_opt, argv[first]);
    if (npos > 1)
        return cli_usage(cmd, "expected one input file, got '%s' and '%s'", argv[first],
                         argv[first + 1]);
    *path = in_opt ? in_opt : npos ? argv[first] : NULL;
    return 0;
}

wl_results_format cli_format_of_path(const char *path, wl_results_format dflt)
{
    static const struct {
        const char *ext;
        wl_results_format f;
    } by[] = {{".csv", WL_FMT_CSV}, {".ndjson", WL_FMT_NDJSON}, {".json", WL_FMT_JSON}};
    size_t n = path ? strlen(path) : 0;
    for (size_t i = 0; i < sizeof by / sizeof *by; i++) {
        size_t e = strlen(by[i].ext);
        if (n > e && !strcmp(path + n - e, by[i].ext))
            return by[i].f;
    }
    return dflt;
}

static int rows_open(const char *cmd, const char *path, int held, wl_results_format fmt,
                     const wl_results_col *cols, size_t n, cli_rows *r)
{
    wl_error err = {0};
    memset(r, 0, sizeof *r);
    if ((held ? wl_results_out_open_held : wl_results_out_open)(path, &r->out, &err))
        return cli_fail(cmd, &err);
    if (wl_results_writer_create(wl_results_out_stream(r->out), fmt, cols, n, &r->w)) {
        wl_results_out_abort(r->out);
        r->out = NULL;
        fprintf(stderr, "wattlas %s: out of memory\n", cmd);
        return EXIT_RUNTIME;
    }
    return 0;
}

int cli_rows_open(const char *cmd, const char *path, wl_results_format fmt,
                  const wl_results_col *cols, size_t n, cli_rows *r)
{
    return rows_open(cmd, path, 0, fmt, cols, n, r);
}

int cli_rows_open_held(const char *cmd, const char *path, wl_results_format fmt,
                       const wl_results_col *cols, size_t n, cli_rows *r)
{
    return rows_open(cmd, path, 1, fmt, cols, n, r);
}

int cli_rows_close(const char *cmd, cli_rows *r, int ok)
{
    wl_error err = {0};
    int rc = 0;
    if (ok) {
        wl_results_writer_finish(r->w);
        if (wl_results_out_commit(r->out, &err))
            rc = cli_fail(cmd, &err);
    } else {
        wl_results_writer_free(r->w);
        wl_results_out_abort(r->out);
    }
    memset(r, 0, sizeof *r);
    return rc;
}

void cli_spec_notes(const char *cmd, const struct wl_sweep_spec *spec, int quiet)
{
    for (size_t i = 0; i < wl_sweep_spec_warning_count(spec); i++)
        fprintf(stderr, "wattlas %s: warning: %s\n", cmd, wl_sweep_spec_warning(spec, i));
    for (size_t i = 0; !quiet && i < wl_sweep_spec_note_count(spec); i++)
        fprintf(stderr, "wattlas %s: note: %s\n", cmd, wl_sweep_spec_note(spec, i));
    for (size_t i = 0; !quiet && wl_sweep_spec_gpu(spec, i); i++) {
        const wl_core_gpu *g = wl_sweep_spec_gpu(spec, i);
        size_t n = wl_sweep_spec_clipped(spec, i);
        if (n)
            fprintf(stderr, "wattlas %s: note: %s sweeps the requested clocks within its range "
                            "%.0f-%.0f MHz; %zu outside it are left out\n",
                    cmd, g->id, g->sm_clock_min_mhz, g->sm_clock_max_mhz, n);
    }
}

void cli_note(void *cmd, const char *text)
{
    fprintf(stderr, "wattlas %s: %s\n", (const char *)cmd, text);
}

/* The word getopt stopped at: for a short option inside a word ("-seq":
 * 's', 'e', 'q') optind still points at that word until its last letter,
 * so argv[optind - 1] can be the word before it ("gpt2"). */
static const char *offending(int argc, char **argv)
{
    for (int k = optind; k >= optind - 1 && k >= 1; k--)
        if (k < argc && argv[k][0] == '-' && argv[k][1] != '-' && optopt && strchr(argv[k] + 1, optopt))
            return argv[k];
    return argv[optind - 1];
}

/* The long options as candidates for wl_core_name_hint, "--" written in. */
typedef struct {
    const struct option *lo;
    char buf[64];
} opt_names;

static const char *opt_name_at(void *user, size_t i)
{
    opt_names *o = user;
    snprintf(o->buf, sizeof o->buf, "--%s", o->lo[i].name);
    return o->buf;
}

int cli_bad_option(const char *cmd, int c, int argc, char **argv, const struct option *lo)
{
    if (c == ':')
        return cli_usage(cmd, "option %s needs a value", argv[optind - 1]);
    const char *w = offending(argc, argv);
    if (w[0] == '-' && w[1] != '-' && w[1] && w[2])
        return cli_usage(cmd, "unknown option '%s' (long options take two dashes: -%s)", w, w);
    /* "--modle=gpt2" is looked up as "--modle"; getopt's own prefixes
     * ("--mod") are ambiguous when they get here, so the options they
     * start are the suggestions */
    char word[64], hint[300] = "";
    size_t wl = strcspn(w, "=");
    if (wl >= sizeof word)
        wl = sizeof word - 1;
    memcpy(word, w, wl);
    word[wl] = 0;
    if (lo && word[0] == '-' && word[1] == '-' && word[2]) {
        opt_names o = {.lo = lo};
        size_t n = 0;
        while (lo[n].name)
            n++;
        wl_core_name_hint(opt_name_at, &o, n, word, hint, sizeof hint);
    }
    return cli_usage(cmd, "unknown option '%s'%s", w, hint);
}

void cli_short_help(int argc, char **argv)
{
    /* -h is --help wherever it is an option (not the file of -o) */
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") && strcmp(argv[i - 1], "-o"))
            argv[i] = (char *)"--help";
}

/* The options that name a file a command writes: every other argument
 * that names an existing file or folder is one it may read. */
static const char *const out_opts[] = {"-o", "--host-out", "--timeline", "--importance",
                                       "--steps"};

static const char *out_value(int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    for (size_t k = 0; k < sizeof out_opts / sizeof *out_opts; k++) {
        size_t l = strlen(out_opts[k]);
        if (strncmp(a, out_opts[k], l))
            continue;
        if (!a[l])
            return *i + 1 < argc ? argv[++*i] : NULL;
        if (a[l] == '=' || (l == 2 && a[1] == 'o'))
            return a + l + (a[l] == '=');
    }
    return NULL;
}

int cli_paths_check(const char *cmd, int argc, char **argv)
{
    wl_results_path *in = calloc((size_t)argc + 1, sizeof *in),
                    *out = calloc((size_t)argc + 1, sizeof *out);
    size_t nin = 0, nout = 0;
    int rc = 0;
    if (!in || !out) {
        fprintf(stderr, "wattlas %s: out of memory\n", cmd);
        rc = EXIT_RUNTIME;
    }
    for (int i = 1; !rc && i < argc; i++) {
        int at = i;
        const char *o = out_value(argc, argv, &i);
        if (o) {
            out[nout++] = (wl_results_path){o, argv[at][1] == 'o' ? "-o" : argv[at]};
            continue;
        }
        const char *v = argv[i], *eq = v[0] == '-' && v[1] == '-' ? strchr(v, '=') : NULL;
        in[nin++] = (wl_results_path){eq ? eq + 1 : v, "the input"};
    }
    wl_error err = {0};
    if (!rc && wl_results_paths_distinct(in, nin, out, nout, &err)) {
        /* "-o=x" names the option "-o=x": cut at the value */
        size_t fl = strcspn(err.field, "=");
        rc = cli_usage(cmd, "%.*s %s %s", (int)fl, err.field, err.source, err.text);
    }
    free(in);
    free(out);
    return rc;
}

char *cli_command_line(int argc, char **argv)
{
    size_t len = sizeof "wattlas";
    for (int i = 0; i < argc; i++)
        len += strlen(argv[i]) + 1;
    char *p = malloc(len);
    if (!p)
        return NULL;
    size_t at = 7;
    memcpy(p, "wattlas", at);
    for (int i = 0; i < argc; i++) {
        size_t l = strlen(argv[i]);
        p[at++] = ' ';
        memcpy(p + at, argv[i], l);
        at += l;
    }
    p[at] = 0;
    return p;
}

void cli_axis_options(const cli_axis *axes, size_t naxes, struct option *lo, size_t *n)
{
    for (size_t i = 0; i < naxes; i++)
        lo[(*n)++] = (struct option){axes[i].opt, required_argument, 0, (int)(CLI_AXIS + i)};
}

const cli_axis *cli_axis_of(const cli_axis *axes, size_t naxes, int c)
{
    return c >= CLI_AXIS && c < CLI_AXIS + (int)naxes ? &axes[c - CLI_AXIS] : NULL;
}

int cli_axis_set(const char *cmd, struct wl_sweep_spec *spec, const cli_axis *a, const char *value)
{
    char opt[48];
    wl_error err = {0};
    snprintf(opt, sizeof opt, "--%s", a->opt);
    return wl_sweep_spec_set(spec, a->key, value, opt, 0, &err) ? cli_fail(cmd, &err) : 0;
}

void cli_learned_outside(const char *cmd, const struct wl_sweep_spec *spec, unsigned long long n)
{
    wl_learn_use u;
    if (n && wl_sweep_spec_learned(spec, &u))
        fprintf(stderr, "wattlas %s: warning: %llu point%s outside the learned model's training "
                        "domain: %s\n",
                cmd, n, n == 1 ? " lies" : "s lie", wl_learn_outside_note(u.model));
}

static double bar_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cli_bar_start(cli_bar *b, const char *what)
{
    b->t0 = bar_now();
    b->last = 0;
    b->what = what;
    b->open = 0;
    b->drawn = 0;
    b->beat = NULL;
}

void cli_bar_end(cli_bar *b)
{
    if (b->open)
        fputc('\n', stderr);
    b->open = 0;
}

/* Waits on cv (mu held) for at most ms milliseconds. */
static void wait_ms(pthread_cond_t *cv, pthread_mutex_t *mu, long ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(cv, mu, &ts);
}

struct cli_beat {
    pthread_t th;
    pthread_mutex_t mu; /* the bar's last line and counts, and stop */
    pthread_cond_t cv;
    int stop;
    unsigned long long done, total;
    cli_bar *b;
};

static void beat_lock(cli_bar *b)
{
    if (b->beat)
        pthread_mutex_lock(&b->beat->mu);
}

static void beat_unlock(cli_bar *b)
{
    if (b->beat)
        pthread_mutex_unlock(&b->beat->mu);
}

static void *beat_main(void *p)
{
    struct cli_beat *h = p;
    pthread_mutex_lock(&h->mu);
    while (!h->stop) {
        wait_ms(&h->cv, &h->mu, 1000);
        double t = bar_now();
        if (h->stop || !h->b->drawn || t - h->b->last < 5.0)
            continue;
        fprintf(stderr, "%llu/%llu %s, %.0f s: still working\n", h->done, h->total, h->b->what,
                t - h->b->t0);
        fflush(stderr);
        h->b->last = t;
    }
    pthread_mutex_unlock(&h->mu);
    return NULL;
}

void cli_beat_start(cli_bar *b)
{
    struct cli_beat *h = calloc(1, sizeof *h);
    if (!h)
        return;
    h->b = b;
    if (pthread_mutex_init(&h->mu, NULL)) {
        free(h);
        return;
    }
    if (pthread_cond_init(&h->cv, NULL)) {
        pthread_mutex_destroy(&h->mu);
        free(h);
        return;
    }
    b->beat = h;
    if (pthread_create(&h->th, NULL, beat_main, h)) {
        b->beat = NULL;
        pthread_cond_destroy(&h->cv);
        pthread_mutex_destroy(&h->mu);
        free(h);
    }
}

void cli_beat_stop(cli_bar *b)
{
    struct cli_beat *h = b->beat;
    if (!h)
        return;
    pthread_mutex_lock(&h->mu);
    h->stop = 1;
    pthread_cond_signal(&h->cv);
    pthread_mutex_unlock(&h->mu);
    pthread_join(h->th, NULL);
    b->beat = NULL;
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->mu);
    free(h);
}

void cli_bar_line(void *user, const char *line)
{
    cli_bar *b = user;
    beat_lock(b);
    cli_bar_end(b);
    fprintf(stderr, "%s\n", line);
    if (b->beat) /* a line of the report counts as the log's */
        b->last = bar_now();
    beat_unlock(b);
}

void cli_bar_draw(void *user, unsigned long long done, unsigned long long total)
{
    cli_bar *b = user;
    double t = bar_now();
    /* nothing for work done within half a second (a bar that flashes by
     * is noise), then at most five times a second and at the end */
    if (!b->drawn && t - b->t0 < 0.5)
        return;
    if (t - b->last < 0.2 && done < total)
        return;
    b->drawn = 1;
    b->last = t;
    double el = t - b->t0, rate = el > 0 ? (double)done / el : 0;
    double frac = total ? (double)done / (double)total : 1;
    char line[31];
    int fill = (int)(frac * 30);
    for (int i = 0; i < 30; i++)
        line[i] = i < fill ? '#' : '.';
    line[30] = 0;
    double eta = rate > 0 ? (double)(total - done) / rate : 0;
    fprintf(stderr, "\r[%s] %5.1f%% %llu/%llu %s, %.0f/s, ETA %02d:%02d ", line, 100 * frac,
            done, total, b->what, rate, (int)(eta / 60), (int)fmod(eta, 60));
    b->open = 1;
    if (done >= total) /* the line is done: what comes next starts a new one */
        cli_bar_end(b);
    fflush(stderr);
}

static void bar_log(cli_bar *b, unsigned long long done, unsigned long long total);

void cli_bar_log(void *user, unsigned long long done, unsigned long long total)
{
    cli_bar *b = user;
    beat_lock(b);
    if (b->beat) {
        b->beat->done = done;
        b->beat->total = total;
    }
    bar_log(b, done, total);
    beat_unlock(b);
}

static void bar_log(cli_bar *b, unsigned long long done, unsigned long long total)
{
    double t = bar_now();
    /* a line every five seconds, and the last when any was written: a log
     * file or a pipe gets no carriage returns, and a quiet minute is not
     * taken for a hang */
    if (done == 0 && !b->drawn) {
        fprintf(stderr, "0/%llu %s: started\n", total, b->what);
        b->drawn = 1;
        b->last = t;
        return;
    }
    if (done < total ? t - (b->drawn ? b->last : b->t0) < 5.0 : !b->drawn)
        return;
    b->drawn = 1;
    b->last = t;
    double el = t - b->t0, rate = el > 0 ? (double)done / el : 0;
    double eta = rate > 0 ? (double)(total - done) / rate : 0;
    fprintf(stderr, "%llu/%llu %s in %.0f s, about %.0f s left\n", done, total, b->what, el, eta);
    fflush(stderr);
}

/* ---- an elapsed-time line for work with no count to show ------------------------
 * (cli.h: cli_work_start); redrawn when its whole seconds change. */

struct cli_work {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop, drawn;
    long shown; /* the whole seconds last drawn */
    double t0;
    const char *cmd;
};

static void *work_main(void *p)
{
    struct cli_work *w = p;
    pthread_mutex_lock(&w->mu);
    while (!w->stop) {
        wait_ms(&w->cv, &w->mu, 250);
        double t = bar_now() - w->t0;
        if (w->stop || t < 2.0 || (long)t == w->shown)
            continue;
        w->shown = (long)t;
        fprintf(stderr, "\rwattlas %s: working, %ld s", w->cmd, w->shown);
        fflush(stderr);
        w->drawn = 1;
    }
    if (w->drawn) { /* the line erased: what follows starts clean */
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

cli_work *cli_work_start(const char *cmd, const char *out, int quiet)
{
    if (quiet || !isatty(STDERR_FILENO) || (out && !strcmp(out, "-") && isatty(STDOUT_FILENO)))
        return NULL;
    struct cli_work *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->cmd = cmd;
    w->t0 = bar_now();
    if (pthread_mutex_init(&w->mu, NULL)) {
        free(w);
        return NULL;
    }
    if (pthread_cond_init(&w->cv, NULL) || pthread_create(&w->th, NULL, work_main, w)) {
        pthread_cond_destroy(&w->cv);
        pthread_mutex_destroy(&w->mu);
        free(w);
        return NULL;
    }
    return w;
}

void cli_work_stop(cli_work *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->th, NULL);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
