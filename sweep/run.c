/* Running a sweep: its chunks evaluated in parallel and written in order
 * (split from sweep.c, which plans and evaluates them). */
#include "sweep_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* ---- running ------------------------------------------------------------------------ */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A stop asked for: the caller's flag, or the process's (wl_stop_watch). */
static int stopping(volatile sig_atomic_t *stop)
{
    return (stop && *stop) || wl_stop_requested();
}

static unsigned long long count_lines(const char *p, size_t n)
{
    unsigned long long k = 0;
    for (const char *q = p; (q = memchr(q, '\n', (size_t)(p + n - q))) != NULL; q++)
        k++;
    return k;
}

int wl_sweep_run_table(const wl_sweep_spec *s, const wl_sweep_options *o, const char *source,
                       wl_results_table **out, wl_sweep_stats *stats, wl_error *err)
{
    *out = NULL;
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return WL_ENOMEM;
    wl_sweep_options so = *o;
    so.format = WL_FMT_CSV;
    so.shard_index = so.shard_count = 0;
    int rc = wl_sweep_run(s, &so, m, NULL, stats, err);
    if (fclose(m) && !rc)
        rc = WL_ENOMEM;
    if (!rc)
        rc = wl_results_table_load_mem(text, len, source, out, err);
    free(text);
    return rc;
}

/* A chunk done out of turn, waiting for those before it to be written. */
typedef struct {
    wl_results_buf b;
    wl_sweep_tally part;
    int rc, ready;
    wl_error err;
} done_chunk;

/* Chunks are computed in parallel and written in order: whichever thread
 * finishes a chunk parks it in a ring and writes every chunk that is next
 * in order, so no thread waits for another's turn (OpenMP's `ordered` made
 * each wait, spinning, for the chunk before its own: on a machine where
 * another process holds a core that cost the sweep 5-40x). A thread more
 * than the ring ahead of the oldest chunk not yet written sleeps until it
 * is written, which bounds the memory to the ring's chunks (at most 4,096
 * points each, PIECE_POINTS). The ring holds 16 chunks a thread: with
 * another process on one of two cores, the thread that shares it runs at
 * half speed, and a ring of 4 a thread made the other wait for it (the
 * bench grid 1.5-1.9x its idle time; with 16, 1.1-1.4x). */
int wl_sweep_run(const wl_sweep_spec *s, const wl_sweep_options *o, FILE *out,
                 volatile sig_atomic_t *stop, wl_sweep_stats *stats, wl_error *err)
{
    memset(stats, 0, sizeof *stats);
    wl_sweep_tally_init(&stats->tally);
    wl_sweep_plan *p = NULL;
    int rc = wl_sweep_plan_create(s, o, &p, err);
    if (rc)
        return rc;
    wl_sweep_plan_begin(p, out);
    wl_sweep_plan_set_stop(p, stop);
    double t0 = now_s();
    volatile int failed = 0, wfail = 0;
    int gap = 0; /* a chunk a stop cut was written: the rows after it are not a prefix */
    unsigned long long done = 0, rows = 0, total = wl_sweep_plan_points(p);
    wl_error first_err;
    memset(&first_err, 0, sizeof first_err);
    long long n_o = (long long)wl_sweep_plan_chunks(p);
    int threads;
    wl_sweep_scratch **scratch = wl_sweep_scratch_pool(o, &threads);
    long long nring = 16 * (long long)(threads > 0 ? threads : 1);
    done_chunk *ring = calloc((size_t)nring, sizeof *ring);
    long long next = 0; /* the next chunk to write */
    if (!ring) {
        wl_sweep_scratch_pool_free(scratch, threads);
        wl_sweep_plan_free(p);
        wl_error_set(err, "sweep", 0, "", "out of memory");
        return WL_ENOMEM;
    }
    /* Threads claim chunks in order from a shared counter and leave as
     * soon as the run is stopped or failed: a grid of 10^10 chunks is not
     * walked to its end after a Ctrl-C, as a for loop over it would be. */
    long long claim = 0;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
#endif
    for (;;) {
#ifdef _OPENMP
        int me = omp_get_thread_num();
#else
        int me = 0;
#endif
        long long k;
#ifdef _OPENMP
#pragma omp atomic capture
#endif
        k = claim++;
        if (k >= n_o || failed || wfail || stopping(stop))
            break;
        wl_sweep_scratch *sc = scratch && me < threads ? scratch[me] : NULL;
        for (;;) { /* too far ahead: wait, asleep, for the writer */
            long long w;
#ifdef _OPENMP
#pragma omp atomic read
#endif
            w = next;
            if (k - w < nring || failed || wfail || stopping(stop))
                break;
            struct timespec nap = {0, 100000};
            nanosleep(&nap, NULL);
        }
        done_chunk d = {.rc = WL_OK};
        wl_sweep_tally_init(&d.part);
        if (!failed && !stopping(stop) && !wfail)
            d.rc = wl_sweep_plan_chunk(p, (unsigned long long)k, sc, &d.b, &d.part, &d.err);
#ifdef _OPENMP
#pragma omp critical(wl_sweep_write)
#endif
        {
            /* once the run has failed a thread no longer waits its turn, so
             * its slot may still hold a chunk never to be written: that
             * one is dropped, and this one too */
            if (ring[k % nring].ready) {
                wl_results_buf_free(&ring[k % nring].b);
                ring[k % nring].ready = 0;
                wl_results_buf_free(&d.b);
            } else {
                d.ready = 1;
                ring[k % nring] = d;
            }
            /* write what is next in order */
            for (done_chunk *c = &ring[next % nring]; c->ready; c = &ring[next % nring]) {
                if (c->rc && !failed) {
                    failed = 1;
                    rc = c->rc;
                    first_err = c->err;
                }
                /* after a stop, the chunks ready in order are still
                 * written, up to and with the first one the stop cut:
                 * the file keeps every finished row, in order */
                if (!failed && !gap && !wfail && c->b.n) {
                    wl_results_writer_emit(wl_sweep_plan_writer(p), c->b.p, c->b.n);
                    wfail = ferror(out) != 0;
                    done += c->part.points;
                    wl_sweep_tally_add(&stats->tally, &c->part);
                    /* a JSON row is ",\n  {...}": one newline each; the
                     * binary stream of columns has no lines */
                    rows += o->format == WL_FMT_COLUMNS ? c->part.points : count_lines(c->b.p, c->b.n);
                }
                gap |= c->part.cut;
                if (!failed && o->progress)
                    o->progress(o->progress_user, done, total);
                wl_results_buf_free(&c->b);
                c->ready = 0;
#ifdef _OPENMP
#pragma omp atomic update
#endif
                next++;
            }
        }
    }
    for (long long i = 0; i < nring; i++) /* a failed run's chunks never written */
        if (ring[i].ready)
            wl_results_buf_free(&ring[i].b);
    free(ring);
    wl_sweep_scratch_pool_free(scratch, threads);
    stats->points = done;
    stats->rows = rows;
    stats->seconds = now_s() - t0;
    stats->interrupted = stopping(stop);
    stats->write_failed = wfail;
    if (!rc && !wfail)
        wl_sweep_plan_finish(p);
    else
        *err = first_err;
    wl_sweep_plan_free(p);
    return rc;
}
