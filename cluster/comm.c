/* Collective costs: the alpha-beta model of NCCL's ring and tree algorithms
 * on the fabric a group spans (Thakur, Rabenseifner and Gropp 2005 for the
 * ring and tree costs; NCCL's tuning model, src/graph/tuning.cc, picks the
 * faster algorithm per size the same way). */
#include "wattlas_cluster.h"

#include <math.h>

void wl_cluster_group_of(const wl_cluster_system *s, int n, int stride, wl_cluster_group *g)
{
    int gpn = s->gpus_per_node > 0 ? s->gpus_per_node : 1;
    if (n < 1)
        n = 1;
    if (stride < 1)
        stride = 1;
    g->n = n;
    /* ranks fill nodes in order: a group of stride st has gpn / st members
     * in a node (all n when they fit), one per node once st >= gpn */
    int per = stride >= gpn ? 1 : gpn / stride;
    g->per_node = per < n ? per : n;
    double fabric = s->fabric_bw_gbs * s->fabric_eff;
    g->fabric_gbs = fabric;
    g->nic_gbs = 0;
    if (g->per_node >= n) {
        g->bw_gbs = fabric;
        g->alpha_us = s->fabric_latency_us;
        return;
    }
    /* across nodes: the ring's node-boundary hops of the group's k members
     * in a node share their NICs (rails: nics_per_node / gpn each), every
     * ring channel leaving by its own; the slower of that and the fabric */
    double nic = s->nic_gbps / 8.0 * s->net_eff;
    double share = (double)s->nics_per_node / gpn;
    double net = g->per_node * share * nic;
    g->nic_gbs = share * nic;
    g->bw_gbs = net < fabric ? net : fabric;
    g->alpha_us = s->net_latency_us > s->fabric_latency_us ? s->net_latency_us : s->fabric_latency_us;
}

double wl_cluster_ring_time(const wl_cluster_group *g, wl_cluster_coll op, double bytes)
{
    double n = g->n, a = g->alpha_us * 1e-6, B = g->bw_gbs * 1e9;
    if (g->n <= 1 || bytes <= 0)
        return 0;
    if (!(B > 0))
        return INFINITY;
    switch (op) {
    case WL_COLL_ALL_REDUCE:
        return 2 * (n - 1) * a + 2 * (n - 1) / n * bytes / B;
    case WL_COLL_REDUCE_SCATTER:
    case WL_COLL_ALL_GATHER:
        return (n - 1) * a + (n - 1) / n * bytes / B;
    case WL_COLL_ALL_TO_ALL: {
        double k = g->per_node, in = (k - 1) / n * bytes / (g->fabric_gbs * 1e9);
        double out = n <= k ? 0 : g->nic_gbs > 0 ? (n - k) / n * bytes / (g->nic_gbs * 1e9) : INFINITY;
        return a + (in > out ? in : out);
    }
    case WL_COLL_SEND:
    case WL_COLL_COUNT:
        break;
    }
    return a + bytes / B;
}

double wl_cluster_coll_time(const wl_cluster_group *g, wl_cluster_coll op, double bytes)
{
    double ring = wl_cluster_ring_time(g, op, bytes);
    if (op != WL_COLL_ALL_REDUCE || g->n <= 2)
        return ring;
    double a = g->alpha_us * 1e-6, B = g->bw_gbs * 1e9;
    double tree = 2 * ceil(log2((double)g->n)) * a + 2 * bytes / B;
    return tree < ring ? tree : ring;
}
