/* Pieces shared by configurations of one search: a configuration's layer,
 * embedding and head kernels depend on the tensor, context and expert
 * parallel sizes, the micro-batch, sequence, precision, recomputation and
 * the like, never on the pipeline depth, data parallelism, chunks per GPU,
 * ZeRO or the split of layers; a search enumerates a few dozen such shapes
 * under thousands of configurations. A cache keeps the pieces (kernels and
 * their evaluators, which clusters only read) of the shapes it has built,
 * lends them to the clusters it creates, and evicts the least recently
 * used one that none holds once it has CACHE_MAX. One cache serves one
 * thread at a time. */
#include "cluster_internal.h"

#include <stdlib.h>
#include <string.h>

enum { CACHE_MAX = 96, COST_MEMO = 16 };

/* The pieces' costs at a pair of clocks (wl_cluster_chunk_costs's memo),
 * which every cluster lent the entry shares: a search's bounds scan the
 * same few clocks below the top for many configurations of one shape. */
typedef struct {
    double ff, fb;
    int ign, valid;
    cost at[PC_COUNT], at2[PC_COUNT];
} cost_memo;

/* What the builder reads (cl_build and its configuration's fields that
 * layers.c and counts.c use); set field by field on a zeroed key so that
 * keys compare by their bytes. */
typedef struct {
    const void *sys, *gpu, *model;
    long long micro_batch, seq, gen, kv_len, chunk, vocab;
    double capacity_factor;
    int tp, cp, ep, sequence_parallel, tp_comm_overlap, ep_overlap, split_w;
    int recompute, dtype, attention, mode, launch;
    long long lora_rank;  /* LoRA: the rank and adapted projections */
    unsigned lora;
} piece_key;

typedef struct {
    piece_key key;
    cl_piece pc[PC_COUNT], pc2[PC_COUNT];
    int refs;
    unsigned long long used;
    cost_memo memo[COST_MEMO];
    int next_memo;               /* the slot the next costs replace */
} piece_entry;

struct wl_cluster_piece_cache {
    piece_entry e[CACHE_MAX];
    int n;
    unsigned long long clock;
};

wl_cluster_piece_cache *wl_cluster_piece_cache_create(void)
{
    return calloc(1, sizeof(wl_cluster_piece_cache));
}

void wl_cluster_piece_cache_free(wl_cluster_piece_cache *pc)
{
    if (!pc)
        return;
    for (int i = 0; i < pc->n; i++) {
        wl_cluster_free_pieces(pc->e[i].pc);
        wl_cluster_free_pieces(pc->e[i].pc2);
    }
    free(pc);
}

static void key_of(piece_key *k, const void *sys, const cl_build *b, const cl_build *b2)
{
    memset(k, 0, sizeof *k);
    const wl_cluster_config *c = b->cfg;
    k->sys = sys;
    k->gpu = b->gpu;
    k->model = b->m;
    k->micro_batch = c->micro_batch;
    k->seq = c->seq;
    k->gen = b2 ? b2->cfg->gen : 0;
    k->kv_len = b2 ? b2->kv_len : 0;
    k->chunk = b2 ? b2->chunk : 0;
    k->vocab = b->vocab;
    k->capacity_factor = c->capacity_factor;
    k->tp = c->tp;
    k->cp = c->cp;
    k->ep = c->ep;
    k->sequence_parallel = c->sequence_parallel;
    k->tp_comm_overlap = c->tp_comm_overlap;
    k->ep_overlap = c->ep_overlap;
    k->split_w = b->split_w;
    k->recompute = (int)c->recompute;
    k->dtype = (int)c->dtype;
    k->attention = (int)c->attention;
    k->mode = (int)c->mode;
    k->launch = (int)c->launch;
    k->lora = wl_cluster_lora_projs(c, &k->lora_rank);
}

int wl_cluster_piece_cache_get(wl_cluster_piece_cache *pc, const void *sys, const cl_build *b,
                               const cl_build *b2, cl_piece *pieces, cl_piece *pieces2,
                               void **entry, wl_error *err)
{
    piece_key k;
    key_of(&k, sys, b, b2);
    piece_entry *e = NULL;
    for (int i = 0; i < pc->n && !e; i++)
        if (!memcmp(&pc->e[i].key, &k, sizeof k))
            e = &pc->e[i];
    if (!e) {
        if (pc->n < CACHE_MAX) {
            e = &pc->e[pc->n++];
        } else { /* the least recently used that no cluster holds */
            for (int i = 0; i < pc->n; i++)
                if (!pc->e[i].refs && (!e || pc->e[i].used < e->used))
                    e = &pc->e[i];
            if (!e) { /* every one lent: the caller builds its own */
                *entry = NULL;
                int rc = wl_cluster_build_pieces(b, pieces, err);
                if (!rc && b2)
                    rc = wl_cluster_build_pieces(b2, pieces2, err);
                return rc;
            }
            wl_cluster_free_pieces(e->pc);
            wl_cluster_free_pieces(e->pc2);
        }
        memset(e, 0, sizeof *e);
        int rc = wl_cluster_build_pieces(b, e->pc, err);
        if (!rc && b2)
            rc = wl_cluster_build_pieces(b2, e->pc2, err);
        if (rc) { /* the slot left empty: its zeroed key matches nothing */
            wl_cluster_free_pieces(e->pc);
            wl_cluster_free_pieces(e->pc2);
            memset(e, 0, sizeof *e);
            return rc;
        }
        e->key = k;
    }
    e->refs++;
    e->used = ++pc->clock;
    memcpy(pieces, e->pc, sizeof e->pc);
    memcpy(pieces2, e->pc2, sizeof e->pc2);
    *entry = e;
    return WL_OK;
}

void wl_cluster_piece_cache_put(void *entry)
{
    if (entry)
        ((piece_entry *)entry)->refs--;
}

int wl_cluster_piece_cache_costs(void *entry, double ff, double fb, int ign, cost *at, cost *at2)
{
    const piece_entry *e = entry;
    for (int i = 0; i < COST_MEMO; i++) {
        const cost_memo *m = &e->memo[i];
        if (m->valid && m->ff == ff && m->fb == fb && m->ign == ign) {
            memcpy(at, m->at, sizeof m->at);
            memcpy(at2, m->at2, sizeof m->at2);
            return 1;
        }
    }
    return 0;
}

void wl_cluster_piece_cache_keep(void *entry, double ff, double fb, int ign, const cost *at,
                                 const cost *at2)
{
    piece_entry *e = entry;
    cost_memo *m = &e->memo[e->next_memo];
    e->next_memo = (e->next_memo + 1) % COST_MEMO;
    m->ff = ff;
    m->fb = fb;
    m->ign = ign;
    m->valid = 1;
    memcpy(m->at, at, sizeof m->at);
    memcpy(m->at2, at2, sizeof m->at2);
}
