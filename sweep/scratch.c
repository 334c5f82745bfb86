/* Per-thread scratch: curves and workloads kept across chunks.
 *
 * GPU variants that differ only in their governor (power limit, cap
 * fraction) compute the same unlimited results at every clock: the power
 * limit only decides where the clock settles. A thread keeps the curves of
 * its last chunks and applies each variant's limit to them (results are the
 * same bit for bit whether a curve was kept or not, so the output does not
 * depend on which thread ran which chunk). */
#include "sweep_internal.h"

#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define CURVES 8
/* A curve holds a result per clock and voltage (about 600 bytes): one of a
 * million clocks would hold 600 MB, eight per thread several GB. A grid
 * with more points per curve than fit in CURVE_MAX_BYTES is evaluated
 * without curves (the same results, each variant's computed afresh): such
 * grids sweep clocks, not variants, so the curves would not be shared. */
#define CURVE_MAX_BYTES (4u << 20)


/* Workloads of recent shapes: the builder's output does not depend on the
 * GPU, so the variants of one shape share it. */
#define SHAPES 4

typedef struct {
    unsigned long long stamp;
    size_t wl, b, sq, dt, at;
    wl_core_workload *w;
} shape_slot;

struct wl_sweep_scratch {
    curve c[CURVES];
    shape_slot shapes[SHAPES];
    unsigned long long tick;
    /* the clocks at which the governor holds the kernels of the last
     * variant (keyed by its evaluator, cap and voltage): the same at every
     * clock of a scan, so each is found once per scan, not per point */
    wl_core_targets *targets;
};

wl_sweep_scratch *wl_sweep_scratch_create(void) { return calloc(1, sizeof(wl_sweep_scratch)); }

wl_sweep_scratch **wl_sweep_scratch_pool(const wl_sweep_options *o, int *threads)
{
#ifdef _OPENMP
    *threads = o->threads > 0 ? o->threads : omp_get_max_threads();
#else
    (void)o;
    *threads = 1;
#endif
    wl_sweep_scratch **pool = calloc((size_t)*threads, sizeof *pool);
    for (int t = 0; pool && t < *threads; t++)
        pool[t] = wl_sweep_scratch_create();
    return pool;
}

void wl_sweep_scratch_pool_free(wl_sweep_scratch **pool, int threads)
{
    for (int t = 0; pool && t < threads; t++)
        wl_sweep_scratch_free(pool[t]);
    free(pool);
}

void wl_sweep_scratch_free(wl_sweep_scratch *sc)
{
    if (!sc)
        return;
    for (int i = 0; i < CURVES; i++) {
        free(sc->c[i].res);
        free(sc->c[i].have);
    }
    for (int i = 0; i < SHAPES; i++)
        wl_core_workload_free(sc->shapes[i].w);
    wl_core_targets_free(sc->targets);
    free(sc);
}

/* What the unlimited results depend on. A profile's measured kernels are
 * anchored at the clocks the governor gave them under the limit they were
 * recorded under (core/evaluator.c), which its cap fraction sets: for
 * them the fraction stays in the key, and only the limit asked for goes. */
static void governor_free_key(const wl_core_gpu *g, int anchored, wl_core_gpu *key)
{
    *key = *g;
    key->power_limit_w = 0;
    if (!anchored)
        key->coef.power_cap_frac = 0;
}

/* The curve of this variant and shape: a kept one, or the least recently
 * used slot made ready for it; NULL without scratch or memory, or for a
 * curve of more than CURVE_MAX_BYTES. */
curve *wl_sweep_i_curve_for(wl_sweep_scratch *sc, const wl_core_gpu *g, int anchored, size_t wl,
                             size_t b, size_t sq, size_t dt, size_t at, size_t n)
{
    if (!sc || n > CURVE_MAX_BYTES / sizeof(wl_core_result))
        return NULL;
    wl_core_gpu key;
    governor_free_key(g, anchored, &key);
    sc->tick++;
    curve *lru = &sc->c[0];
    for (int i = 0; i < CURVES; i++) {
        curve *c = &sc->c[i];
        if (c->used && c->n == n && c->wl == wl && c->b == b && c->sq == sq && c->dt == dt &&
            c->at == at && memcmp(&c->key, &key, sizeof key) == 0) {
            c->stamp = sc->tick;
            return c;
        }
        if (!c->used || c->stamp < lru->stamp)
            lru = c;
    }
    if (lru->n < n || !lru->res) {
        wl_core_result *r = realloc(lru->res, n * sizeof *r);
        if (r)
            lru->res = r;
        unsigned char *h = r ? realloc(lru->have, n) : NULL;
        if (!h) {
            lru->used = 0;
            return NULL;
        }
        lru->have = h;
    }
    memset(lru->have, 0, n);
    lru->used = 1;
    lru->stamp = sc->tick;
    lru->key = key;
    lru->wl = wl, lru->b = b, lru->sq = sq, lru->dt = dt, lru->at = at;
    lru->n = n;
    return lru;
}


/* Combination c's workload: kept in sc from an earlier chunk of the same
 * shape (ak: its attention and mode key), or built and kept there for the
 * next variants of this shape (*own 0: sc owns it); *own 1 when the caller
 * must free it (no scratch). */
int wl_sweep_i_scratch_workload(wl_sweep_scratch *sc, const wl_sweep_spec *s, const combo *c,
                                size_t ak, wl_core_workload **wl, int *own, wl_error *err)
{
    shape_slot *slot = NULL;
    int rc;
    for (int i = 0; sc && i < SHAPES && !slot; i++) {
        shape_slot *q = &sc->shapes[i];
        if (q->w && q->wl == c->wl && q->b == c->b && q->sq == c->sq && q->dt == c->dt &&
            q->at == ak)
            slot = q;
    }
    if (slot) {
        *wl = slot->w;
        slot->stamp = ++sc->tick;
    } else if ((rc = wl_sweep_i_shape_workload(s, c, wl, own, err))) {
        return rc;
    } else if (*own && sc) {
        /* kept for the next variants of this shape */
        slot = &sc->shapes[0];
        for (int i = 1; i < SHAPES; i++)
            if (sc->shapes[i].stamp < slot->stamp)
                slot = &sc->shapes[i];
        wl_core_workload_free(slot->w);
        *slot = (shape_slot){++sc->tick, c->wl, c->b, c->sq, c->dt, ak, *wl};
        *own = 0;
    }
    return WL_OK;
}

wl_core_targets *wl_sweep_i_scratch_targets(wl_sweep_scratch *sc)
{
    if (sc && !sc->targets)
        sc->targets = wl_core_targets_create();
    return sc ? sc->targets : NULL;
}
