/* The refinement of a balanced split on simulated runs: a layer moves
 * between stages while that lowers the busiest GPU's work under the power
 * limit. Above cluster.c, whose runs score each split. */
#include "cluster_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What balanced minimises, from a run with every GPU at the top clock and
 * the power limit applied: the busiest GPU's pipeline work (its chunks:
 * the water-filling's load), then the iteration's time. */
typedef struct {
    double busiest_s, time_s;
} split_score;

static int score_split(wl_cluster *c, split_score *sc, double *load, wl_error *err)
{
    wl_cluster_result r;
    int rc = wl_cluster_stage_optimizers(c);
    if (rc) {
        wl_error_set(err, "cluster", 0, "", "out of memory");
        return rc;
    }
    if ((rc = wl_cluster_run(c, c->gpu.sm_clock_max_mhz, NULL, &r, err)))
        return rc;
    sc->busiest_s = 0;
    sc->time_s = r.time_s;
    for (int i = 0; i < c->p; i++) {
        load[i] = wl_cluster_sim_stage(c->sim, i)->busy_s;
        sc->busiest_s = fmax(sc->busiest_s, load[i]);
    }
    return WL_OK;
}

static int split_better(const split_score *a, const split_score *b)
{
    double tol = 1e-9 * b->busiest_s;
    return a->busiest_s < b->busiest_s - tol ||
           (a->busiest_s <= b->busiest_s + tol && a->time_s < b->time_s * (1 - 1e-12));
}

/* The i-th least loaded GPU other than `not` (-1: none). */
static int nth_least(const double *load, int p, int not, int nth)
{
    for (int i = 0; i < p; i++) {
        if (i == not)
            continue;
        int below = 0; /* GPUs before i in (load, index) order */
        for (int j = 0; j < p; j++)
            if (j != not && j != i && (load[j] < load[i] || (load[j] == load[i] && j < i)))
                below++;
        if (below == nth)
            return i;
    }
    return -1;
}

/* balanced, after the water-filling: the power limit slows each GPU by
 * its own average power, which per-layer costs at the top clock cannot
 * see, so a split the limit throttles is refined on simulated runs (one
 * it does not is optimal already: the simulation's busy time is the
 * water-filled load). Uniform (when the layers divide) is a start too, and
 * the better start is kept; then a layer moves from the busiest GPU's
 * largest chunk to the smallest chunk of one of the three least busy GPUs
 * while that lowers the score. */
int wl_cluster_refine_split(wl_cluster *c, wl_error *err)
{
    if (c->cfg.partition != WL_CLUSTER_PART_BALANCED || c->p == 1)
        return WL_OK;
    int V = c->p * c->v, L = c->model.layers, p = c->p, rc;
    int *keep = malloc(sizeof(int) * (size_t)V);
    double *load = malloc(sizeof(double) * 2 * (size_t)p), *best_load = load + p;
    split_score best, sc;
    if (!keep || !load) {
        wl_error_set(err, "cluster", 0, "", "out of memory");
        rc = WL_ENOMEM;
        goto done;
    }
    memcpy(keep, c->lay, sizeof(int) * (size_t)V);
    if ((rc = score_split(c, &best, best_load, err)))
        goto done;
    int throttled = 0;
    for (int i = 0; i < 2 * p; i++)
        throttled |= c->stage_clock[i] < c->gpu.sm_clock_max_mhz;
    if (!throttled)
        goto done;
    if (L % V == 0) {
        for (int k = 0; k < V; k++)
            c->lay[k] = L / V;
        if ((rc = score_split(c, &sc, load, err)))
            goto done;
        if (split_better(&sc, &best)) {
            best = sc;
            memcpy(best_load, load, sizeof(double) * (size_t)p);
            memcpy(keep, c->lay, sizeof(int) * (size_t)V);
        }
        memcpy(c->lay, keep, sizeof(int) * (size_t)V);
    }
    for (int iter = 0, moved = 1; iter < 4 * V && moved; iter++) {
        moved = 0;
        int hi = 0;
        for (int i = 1; i < p; i++)
            if (best_load[i] > best_load[hi])
                hi = i;
        /* the busiest GPU's largest chunk gives a layer */
        int kh = -1;
        for (int ch = 0; ch < c->v; ch++) {
            int k = ch * p + hi;
            if (c->lay[k] > 1 && (kh < 0 || c->lay[k] > c->lay[kh]))
                kh = k;
        }
        for (int tries = 0; kh >= 0 && tries < 3 && !moved; tries++) {
            int lo = nth_least(best_load, p, hi, tries);
            if (lo < 0)
                break;
            int kl = lo;
            for (int ch = 1; ch < c->v; ch++)
                if (c->lay[ch * p + lo] < c->lay[kl])
                    kl = ch * p + lo;
            c->lay[kh]--;
            c->lay[kl]++;
            if ((rc = score_split(c, &sc, load, err)))
                goto done;
            if (split_better(&sc, &best)) {
                best = sc;
                memcpy(best_load, load, sizeof(double) * (size_t)p);
                moved = 1;
            } else {
                c->lay[kh]++;
                c->lay[kl]--;
            }
        }
    }
done:
    free(keep);
    free(load);
    if (!rc && (rc = wl_cluster_stage_optimizers(c)))
        wl_error_set(err, "cluster", 0, "", "out of memory");
    return rc;
}
