/* Sweeps over MPI ranks (bin/wattlas-mpi, make mpi): the chunks of a plan
 * are dealt to the ranks in blocks, round robin; every rank evaluates its
 * blocks (with its OpenMP threads) and sends them to rank 0, which writes
 * them in order through the plan's writer. The output is the one-process
 * run's, byte for byte, for any number of ranks and threads. Compiled only
 * into the MPI build. */
#include "wattlas_sweep.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define BLOCK 8 /* chunks per message: big enough to amortise, small to stream */

typedef struct {
    int32_t status;  /* WL_OK, or the error of the block */
    uint64_t len;    /* bytes of rows that follow */
    uint64_t rows;
    wl_sweep_tally tally;
    wl_error err;
} block_head;

/* Evaluates the chunks of block k into b (in order) with this rank's
 * threads: each chunk into a slot of its own, the slots joined in order
 * afterwards. (OpenMP's ordered loop made a thread that finished early
 * spin until the one before it was done: on a shared machine, a core
 * taken from the process that needed it.) */
static int eval_block(const wl_sweep_plan *p, unsigned long long k, wl_sweep_scratch **scratch,
                      int threads, wl_results_buf *b, block_head *h)
{
    unsigned long long first = k * BLOCK, n = wl_sweep_plan_chunks(p);
    unsigned long long last = first + BLOCK < n ? first + BLOCK : n;
    memset(h, 0, sizeof *h);
    wl_sweep_tally_init(&h->tally);
    wl_results_buf cb[BLOCK];
    wl_sweep_tally part[BLOCK];
    wl_error e[BLOCK];
    int crc[BLOCK];
    memset(cb, 0, sizeof cb);
    memset(e, 0, sizeof e);
    (void)threads;
#ifdef _OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
#endif
    for (long long i = (long long)first; i < (long long)last; i++) {
#ifdef _OPENMP
        int me = omp_get_thread_num();
#else
        int me = 0;
#endif
        size_t j = (size_t)(i - (long long)first);
        crc[j] = wl_sweep_plan_chunk(p, (unsigned long long)i, scratch ? scratch[me] : NULL,
                                     &cb[j], &part[j], &e[j]);
        /* a chunk a stop cut short is not a block's whole rows */
        if (!crc[j] && part[j].cut) {
            crc[j] = WL_ESTOPPED;
            wl_error_set(&e[j], "sweep", 0, "", "stopped");
        }
    }
    for (size_t j = 0; j < (size_t)(last - first); j++) {
        if (crc[j] && !h->status) {
            h->status = crc[j];
            h->err = e[j];
        }
        if (!h->status) {
            wl_results_buf_put(b, cb[j].p ? cb[j].p : "", cb[j].n);
            wl_sweep_tally_add(&h->tally, &part[j]);
            for (size_t q = 0; q < cb[j].n; q++)
                h->rows += cb[j].p[q] == '\n';
        }
        wl_results_buf_free(&cb[j]);
    }
    if (!h->status && b->oom) {
        h->status = WL_ENOMEM;
        wl_error_set(&h->err, "sweep", 0, "", "out of memory");
    }
    h->len = b->n;
    return h->status;
}

int wl_sweep_run_mpi(const wl_sweep_spec *s, const wl_sweep_options *o, MPI_Comm comm, FILE *out,
                     volatile sig_atomic_t *stop, wl_sweep_stats *stats, wl_error *err)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    memset(stats, 0, sizeof *stats);
    wl_sweep_tally_init(&stats->tally);
    wl_sweep_plan *p = NULL;
    int rc = wl_sweep_plan_create(s, o, &p, err); /* the same on every rank */
    if (rc)
        return rc;
    int threads;
    wl_sweep_scratch **scratch = wl_sweep_scratch_pool(o, &threads);
    unsigned long long nblocks = (wl_sweep_plan_chunks(p) + BLOCK - 1) / BLOCK;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (rank == 0)
        wl_sweep_plan_begin(p, out);
    wl_results_writer *w = wl_sweep_plan_writer(p);
    unsigned long long done = 0, total = wl_sweep_plan_points(p);
    int go = 1;
    for (unsigned long long k = 0; go && k < nblocks; k++) {
        int owner = (int)(k % (unsigned long long)size);
        block_head h;
        wl_results_buf b = {0};
        if (owner == rank) {
            eval_block(p, k, scratch, threads, &b, &h);
            if (rank != 0) {
                MPI_Send(&h, (int)sizeof h, MPI_BYTE, 0, (int)(k % 30000), comm);
                /* in pieces under 2 GiB: MPI counts are ints */
                for (uint64_t off = 0; off < h.len; off += 1u << 30) {
                    uint64_t l = h.len - off < (1u << 30) ? h.len - off : (1u << 30);
                    MPI_Send(b.p + off, (int)l, MPI_BYTE, 0, (int)(k % 30000), comm);
                }
            }
        } else if (rank == 0) {
            MPI_Recv(&h, (int)sizeof h, MPI_BYTE, owner, (int)(k % 30000), comm, MPI_STATUS_IGNORE);
            b.p = malloc(h.len + 1);
            if (!b.p)
                MPI_Abort(comm, 1); /* the peer waits to send: nothing else to do */
            b.cap = h.len + 1;
            for (uint64_t off = 0; off < h.len; off += 1u << 30) {
                uint64_t l = h.len - off < (1u << 30) ? h.len - off : (1u << 30);
                MPI_Recv(b.p + off, (int)l, MPI_BYTE, owner, (int)(k % 30000), comm,
                         MPI_STATUS_IGNORE);
            }
            b.n = h.len;
        }
        if (rank == 0) {
            if (h.status && !rc) {
                rc = h.status;
                *err = h.err;
            }
            if (!rc && !(stop && *stop) && !stats->write_failed) {
                wl_results_writer_emit(w, b.p, b.n);
                stats->write_failed = ferror(out) != 0;
                done += h.tally.points;
                stats->rows += h.rows;
                wl_sweep_tally_add(&stats->tally, &h.tally);
                if (o->progress)
                    o->progress(o->progress_user, done, total);
            }
        }
        wl_results_buf_free(&b);
        /* after each round (a block per rank), rank 0 says whether to go on;
         * within a round every block it waits for is sent */
        if ((k + 1) % (unsigned long long)size == 0 || k + 1 == nblocks) {
            go = rank == 0 ? (!rc && !(stop && *stop) && !stats->write_failed) : 1;
            MPI_Bcast(&go, 1, MPI_INT, 0, comm);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    stats->points = done;
    stats->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    stats->interrupted = stop && *stop;
    if (rank == 0 && !rc && !stats->write_failed)
        wl_sweep_plan_finish(p);
    wl_sweep_plan_free(p);
    wl_sweep_scratch_pool_free(scratch, threads);
    return rc;
}
