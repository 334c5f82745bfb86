/* Pipeline schedules as type objects, and the simulation of their timeline
 * as a graph: every forward (F), backward (B) and split-off weight-gradient
 * (W) chunk of every micro-batch is a task on its stage's GPU; a task starts
 * when its GPU is free and its input has arrived (the previous virtual
 * stage's F, the next one's B, plus the point-to-point transfer). Bubbles,
 * warm-up and cool-down, and uneven stages come out of the simulation; no
 * closed formula is used.
 *
 * Orders per stage:
 *  gpipe        all forwards, then all backwards (Huang et al. 2019);
 *  1f1b         PipeDream-Flush (Narayanan et al. 2021): p - i - 1 warm-up
 *               forwards on stage i, then one forward and one backward in
 *               turn, then the remaining backwards;
 *  interleaved  Megatron-LM's interleaved 1F1B over v model chunks per GPU
 *               (Narayanan et al. SC'21; schedules.py
 *               forward_backward_pipelining_with_interleaving): warm-up
 *               (p - i - 1) 2 + (v - 1) p virtual micro-batches, chunk of the
 *               k-th forward (k mod pv) / p, of the k-th backward v - 1 minus
 *               that; micro-batches a multiple of p;
 *  zb-h1        Zero Bubble's H1 (Qi et al. ICLR 2024): 1F1B with each
 *               backward split into B (input gradient, on the critical path)
 *               and W (weight gradient); stage i holds back up to i W passes
 *               and runs a W whenever its next F or B has not arrived yet and
 *               the W fits before it does. The later a stage, the earlier
 *               its last B and the more W it has left for the tail: the
 *               backward chain of the cool-down carries B alone, and the
 *               weight gradients fill what were the bubbles, (p - 1)(F + B
 *               - W) against 1F1B's (p - 1)(F + B + W) once m >= p. A
 *               micro-batch waiting for its W keeps its activations, so
 *               every stage holds up to p micro-batches, 1F1B's peak on its
 *               first stage (the paper's memory bound for H1). */
#include "wattlas_cluster.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct wl_cluster_schedule_type {
    const char *name;
    int split_w;      /* runs W apart from B */
    int interleaves;  /* takes v > 1 */
};

static const struct wl_cluster_schedule_type sched_gpipe = {"gpipe", 0, 0};
static const struct wl_cluster_schedule_type sched_1f1b = {"1f1b", 0, 0};
static const struct wl_cluster_schedule_type sched_inter = {"interleaved", 0, 1};
static const struct wl_cluster_schedule_type sched_zbh1 = {"zb-h1", 1, 0};
const wl_cluster_schedule_type *wl_cluster_gpipe = &sched_gpipe;
const wl_cluster_schedule_type *wl_cluster_1f1b = &sched_1f1b;
const wl_cluster_schedule_type *wl_cluster_interleaved = &sched_inter;
const wl_cluster_schedule_type *wl_cluster_zbh1 = &sched_zbh1;
static const wl_cluster_schedule_type *const all_scheds[] = {&sched_gpipe, &sched_1f1b, &sched_inter,
                                                             &sched_zbh1};

const wl_cluster_schedule_type *wl_cluster_schedule_at(int i)
{
    return i >= 0 && (size_t)i < sizeof all_scheds / sizeof *all_scheds ? all_scheds[i] : NULL;
}

const wl_cluster_schedule_type *wl_cluster_schedule_lookup(const char *name)
{
    for (size_t i = 0; i < sizeof all_scheds / sizeof *all_scheds; i++)
        if (!strcmp(all_scheds[i]->name, name))
            return all_scheds[i];
    if (!strcmp(name, "pipedream-flush") || !strcmp(name, "1F1B"))
        return &sched_1f1b;
    if (!strcmp(name, "zbh1") || !strcmp(name, "zero-bubble"))
        return &sched_zbh1;
    return NULL;
}

const char *wl_cluster_schedule_name(const wl_cluster_schedule_type *t)
{
    return t ? t->name : "1f1b";
}

const char *wl_cluster_schedule_names(void)
{
    return "gpipe, 1f1b, interleaved, zb-h1";
}

int wl_cluster_schedule_splits_w(const wl_cluster_schedule_type *t)
{
    return t && t->split_w;
}

int wl_cluster_schedule_interleaves(const wl_cluster_schedule_type *t)
{
    return t && t->interleaves;
}

/* The chunks a training stage holds at its peak, as its fixed order in
 * build_order below implies: each forward adds one, each backward frees
 * one; gpipe holds every chunk; 1f1b and interleaving hold their warm-up
 * forwards and one more (Narayanan et al. SC'21). Where W passes run apart
 * (zb-h1) the W frees the chunk and runs when the timeline lets it: this is
 * the least, with each W right after its B. */
/* The forwards stage runs before its first backward under 1f1b (v 1) or
 * interleaving (v chunks): at most its v m chunks. */
static int warmup(int p, int v, int m, int stage)
{
    int warm = v == 1 ? p - stage - 1 : (p - stage - 1) * 2 + (v - 1) * p;
    return warm < v * m ? warm : v * m;
}

int wl_cluster_schedule_peak(const wl_cluster_schedule_type *t, int p, int v, int m, int stage)
{
    if (!t || p < 1 || v < 1 || m < 1 || stage < 0 || stage >= p)
        return 0;
    int n = v * m, warm = warmup(p, v, m, stage);
    if (t == &sched_gpipe)
        return n;
    return warm + 1 < n ? warm + 1 : n;
}

/* ---- the simulation ----------------------------------------------------------- */

typedef struct stage_state {
    double free;          /* GPU free from */
    int pos;              /* next entry of the order */
    int wnext, bdone;     /* zb-h1: next W micro-batch, backwards done */
    int inflight, peak;
} stage_state;

/* A task's place, decoded once per pipeline shape: its stage, chunk and
 * micro-batch, and the tasks it waits for on another stage (pred) and on
 * its own (local: B its F, W its B); -1: none. */
typedef struct {
    int pred, local, stage, chunk, micro, kind;
} task_meta;

struct wl_cluster_sim {
    int p, v, m, nk;                 /* stages, chunks, micro-batches, task kinds */
    int round;                       /* decode: micro-batches per round, 0: none */
    double *end;                     /* per task id: end of its compute, -1 not run */
    double *arrive;                  /* per task id: when its output reaches the consumer */
    int *order;                      /* per stage: task ids in order (fixed orders) */
    int *olen;
    wl_cluster_task *tasks;
    int *task_id;                    /* per task of the list: its id */
    size_t ntasks, captasks;
    wl_cluster_stage_stats *st;
    stage_state *ss;
    task_meta *meta;                 /* per task id */
    /* the shape meta and the orders were built for (a power-limit search
     * reruns one shape at other clocks) */
    int key_p, key_v, key_m, key_nk, key_round, key_fwd;
    const wl_cluster_schedule_type *key_sched;
    int *queue;                      /* stages that may run a task now */
    unsigned char *queued;
    /* the order the last event-driven run ran the tasks in, which for a
     * fixed order (every schedule but zb-h1) is the shape's alone: a task
     * runs once its inputs have run, whatever their times, so any run of
     * the same shape is a replay of this list (run_rec), each entry with
     * its input's place in it */
    task_meta *rec;
    int *rec_pos;                    /* per task id: its place in rec */
    double *rec_end, *rec_arrive;    /* per entry, during a replay */
    size_t nrec;
    int rec_valid;
    size_t cap_ids, cap_order;
    int cap_p;
};

wl_cluster_sim *wl_cluster_sim_create(void)
{
    return calloc(1, sizeof(wl_cluster_sim));
}

void wl_cluster_sim_free(wl_cluster_sim *s)
{
    if (!s)
        return;
    free(s->end);
    free(s->arrive);
    free(s->order);
    free(s->olen);
    free(s->tasks);
    free(s->task_id);
    free(s->st);
    free(s->ss);
    free(s->queue);
    free(s->queued);
    free(s->meta);
    free(s->rec);
    free(s->rec_pos);
    free(s->rec_end);
    free(s->rec_arrive);
    free(s);
}

enum { K_F = 0, K_B = 1, K_W = 2 };

/* Stage-major: a stage's tasks, which it runs in about this order, lie
 * side by side (its forward and backward of a micro-batch next to each
 * other), so that the simulation walks memory in order. */
static int tid(const wl_cluster_sim *s, int kind, int stage, int chunk, int micro)
{
    return ((stage * s->v + chunk) * s->m + micro) * s->nk + kind;
}

static int reserve(wl_cluster_sim *s, int p, int v, int m, int nk)
{
    size_t ids = (size_t)nk * (size_t)p * (size_t)v * (size_t)m;
    if (ids > s->cap_ids) {
        double *a = realloc(s->end, ids * sizeof *a);
        if (!a)
            return WL_ENOMEM;
        s->end = a;
        a = realloc(s->arrive, ids * sizeof *a);
        if (!a)
            return WL_ENOMEM;
        s->arrive = a;
        task_meta *mt = realloc(s->meta, ids * sizeof *mt);
        if (!mt)
            return WL_ENOMEM;
        s->meta = mt;
        mt = realloc(s->rec, ids * sizeof *mt);
        if (!mt)
            return WL_ENOMEM;
        s->rec = mt;
        int *rp = realloc(s->rec_pos, ids * sizeof *rp);
        if (!rp)
            return WL_ENOMEM;
        s->rec_pos = rp;
        a = realloc(s->rec_end, ids * sizeof *a);
        if (!a)
            return WL_ENOMEM;
        s->rec_end = a;
        a = realloc(s->rec_arrive, ids * sizeof *a);
        if (!a)
            return WL_ENOMEM;
        s->rec_arrive = a;
        s->cap_ids = ids;
    }
    /* the tasks, and after them a gradient sync and an optimizer step per
     * stage (wl_cluster_sim_append) */
    if (ids + 2 * (size_t)p > s->captasks) {
        wl_cluster_task *t = realloc(s->tasks, (ids + 2 * (size_t)p) * sizeof *t);
        if (!t)
            return WL_ENOMEM;
        s->tasks = t;
        int *ti = realloc(s->task_id, (ids + 2 * (size_t)p) * sizeof *ti);
        if (!ti)
            return WL_ENOMEM;
        s->task_id = ti;
        s->captasks = ids + 2 * (size_t)p;
    }
    if (ids > s->cap_order) {
        int *o = realloc(s->order, ids * sizeof *o);
        if (!o)
            return WL_ENOMEM;
        s->order = o;
        s->cap_order = ids;
    }
    if (p > s->cap_p) {
        int *l = realloc(s->olen, (size_t)p * sizeof *l);
        if (!l)
            return WL_ENOMEM;
        s->olen = l;
        wl_cluster_stage_stats *st = realloc(s->st, (size_t)p * sizeof *st);
        if (!st)
            return WL_ENOMEM;
        s->st = st;
        stage_state *ss = realloc(s->ss, (size_t)p * sizeof *ss);
        if (!ss)
            return WL_ENOMEM;
        s->ss = ss;
        int *q = realloc(s->queue, (size_t)p * sizeof *q);
        if (!q)
            return WL_ENOMEM;
        s->queue = q;
        unsigned char *qd = realloc(s->queued, (size_t)p);
        if (!qd)
            return WL_ENOMEM;
        s->queued = qd;
        s->cap_p = p;
    }
    return WL_OK;
}

/* The fixed order of stage i, written at s->order + i * per. */
static int build_order(wl_cluster_sim *s, const wl_cluster_schedule_type *t, int i, int fwd_only)
{
    int p = s->p, v = s->v, m = s->m;
    int *o = s->order + (size_t)i * (size_t)s->nk * (size_t)v * (size_t)m;
    int n = 0;
    if (fwd_only || t == &sched_gpipe) {
        for (int c = 0; c < v; c++)
            for (int j = 0; j < m; j++)
                o[n++] = tid(s, K_F, i, c, j);
        for (int c = v - 1; !fwd_only && c >= 0; c--)
            for (int j = 0; j < m; j++)
                o[n++] = tid(s, K_B, i, c, j);
        return n;
    }
    if (v == 1) { /* 1f1b; zb-h1 inserts its W passes as it runs */
        int warm = warmup(p, 1, m, i);
        for (int j = 0; j < warm; j++)
            o[n++] = tid(s, K_F, i, 0, j);
        for (int k = 0; k < m - warm; k++) {
            o[n++] = tid(s, K_F, i, 0, warm + k);
            o[n++] = tid(s, K_B, i, 0, k);
        }
        for (int k = m - warm; k < m; k++)
            o[n++] = tid(s, K_B, i, 0, k);
        return n;
    }
    /* interleaved */
    int N = m * v, pv = p * v;
    int warm = warmup(p, v, m, i);
#define CHUNK(k, f) ((f) ? ((k) % pv) / p : v - 1 - ((k) % pv) / p)
#define MICRO(k) (((k) / pv) * p + (k) % p)
    for (int k = 0; k < warm; k++)
        o[n++] = tid(s, K_F, i, CHUNK(k, 1), MICRO(k));
    for (int k = 0; k < N - warm; k++) {
        o[n++] = tid(s, K_F, i, CHUNK(k + warm, 1), MICRO(k + warm));
        o[n++] = tid(s, K_B, i, CHUNK(k, 0), MICRO(k));
    }
    for (int k = N - warm; k < N; k++)
        o[n++] = tid(s, K_B, i, CHUNK(k, 0), MICRO(k));
#undef CHUNK
#undef MICRO
    return n;
}

/* The task whose output a task needs from another stage (-1: none). */
static int pred_of(const wl_cluster_sim *s, int kind, int stage, int chunk, int micro)
{
    int vs = chunk * s->p + stage, V = s->v * s->p;
    /* a decode round: the next token of a micro-batch starts when its
     * last one has left the last stage */
    if (kind == K_F && vs == 0 && s->round > 0 && micro >= s->round)
        return tid(s, K_F, (V - 1) % s->p, (V - 1) / s->p, micro - s->round);
    if (kind == K_F)
        return vs > 0 ? tid(s, K_F, (vs - 1) % s->p, (vs - 1) / s->p, micro) : -1;
    if (kind == K_B)
        return vs < V - 1 ? tid(s, K_B, (vs + 1) % s->p, (vs + 1) / s->p, micro) : -1;
    return -1;
}

/* Same-stage prerequisite: B needs its F, W its B. */
static int local_of(const wl_cluster_sim *s, int kind, int stage, int chunk, int micro)
{
    if (kind == K_B)
        return tid(s, K_F, stage, chunk, micro);
    if (kind == K_W)
        return tid(s, K_B, stage, chunk, micro);
    return -1;
}

static double dur_of(const wl_cluster_pipeline *pl, int kind, int stage, int chunk, int micro)
{
    size_t k = (size_t)stage * (size_t)pl->chunks + (size_t)chunk;
    if (kind == K_F && pl->round_micro > 0 && micro >= pl->round_micro)
        return pl->f2_s[k];
    return kind == K_F ? pl->f_s[k] : kind == K_B ? pl->b_s[k] : pl->w_s[k];
}

/* Runs task id on its stage from the stage's free time or its input's
 * arrival; records it and the send that follows. Returns the stage whose
 * next task may now be ready (the consumer of the output), -1: none. */
static int run_one(wl_cluster_sim *s, const wl_cluster_pipeline *pl, stage_state *ss, int id,
                   const task_meta *tm, double pr_end, double pr_arrive)
{
    int kind = tm->kind, i = tm->stage, c = tm->chunk, j = tm->micro, pr = tm->pred;
    double arrive = pr >= 0 ? pr_arrive : 0;
    double start = ss->free > arrive ? ss->free : arrive;
    wl_cluster_stage_stats *st = &s->st[i];
    if (pr >= 0 && start > ss->free) {
        /* the wait overlapping the transfer is the receiver's share of it */
        double lo = ss->free > pr_end ? ss->free : pr_end;
        if (arrive > lo)
            st->recv_wait_s += arrive - lo;
    }
    double d = dur_of(pl, kind, i, c, j);
    double end = start + d;
    s->end[id] = end;
    st->busy_s += d;
    /* a send to the next virtual stage on another GPU: Megatron's
     * point-to-point exchange blocks the sender for the transfer */
    int vs = c * s->p + i, V = s->v * s->p;
    double send = 0;
    if (kind == K_F && vs < V - 1)
        send = pl->send_s[i];
    else if (kind == K_B && vs > 0)
        send = pl->send_s[(i + s->p - 1) % s->p];
    if (s->p == 1)
        send = 0;
    s->arrive[id] = end + send;
    /* the sampled tokens back to the first stage: small, and not a wait of
     * the sender */
    if (kind == K_F && vs == V - 1 && s->round > 0)
        s->arrive[id] = end + (s->p > 1 ? pl->ring_send_s : 0) + pl->round_host_s;
    st->send_s += send;
    ss->free = end + send;
    if (kind == K_F) {
        if (++ss->inflight > ss->peak)
            ss->peak = ss->inflight;
    } else if (kind == K_B) {
        ss->bdone++;
        ss->inflight -= s->nk != 3; /* split: the W frees the activations */
    } else {
        ss->inflight--;
    }
    if (s->ntasks < s->captasks) {
        s->task_id[s->ntasks] = id;
        s->tasks[s->ntasks++] = (wl_cluster_task){.stage = i, .chunk = c, .micro = j,
                                                  .kind = kind == K_F ? 'F' : kind == K_B ? 'B' : 'W',
                                                  .start_s = start, .dur_s = d, .send_s = send};
    }
    if (end + send > st->end_s)
        st->end_s = end + send;
    if (kind == K_F)
        return vs < V - 1 ? (i + 1) % s->p : s->round > 0 ? 0 : -1;
    return kind == K_B && vs > 0 ? (i + s->p - 1) % s->p : -1;
}

static int run_task(wl_cluster_sim *s, const wl_cluster_pipeline *pl, stage_state *ss, int id)
{
    const task_meta *tm = &s->meta[id];
    int pr = tm->pred;
    int to = run_one(s, pl, ss, id, tm, pr >= 0 ? s->end[pr] : 0, pr >= 0 ? s->arrive[pr] : 0);
    if (!s->rec_valid) { /* recorded: the entry, its input's place */
        size_t k = s->nrec++;
        s->rec[k] = *tm;
        s->rec[k].pred = pr >= 0 ? s->rec_pos[pr] : -1;
        s->rec[k].local = id;
        s->rec_pos[id] = (int)k;
    }
    return to;
}

/* A run of a recorded shape: its list in order, each entry's input at its
 * place in the list; the same arithmetic as the event-driven run
 * (run_one), so the same times to the last bit. */
static void run_rec(wl_cluster_sim *s, const wl_cluster_pipeline *pl)
{
    const task_meta *r = s->rec;
    for (size_t k = 0; k < s->nrec; k++) {
        int pr = r[k].pred, id = r[k].local;
        run_one(s, pl, &s->ss[r[k].stage], id, &r[k], pr >= 0 ? s->rec_end[pr] : 0,
                pr >= 0 ? s->rec_arrive[pr] : 0);
        s->rec_end[k] = s->end[id];
        s->rec_arrive[k] = s->arrive[id];
        s->ss[r[k].stage].pos++;
    }
}

/* The work list: a ring of the stages to visit, each at most once. */
static void enqueue(wl_cluster_sim *s, int *tail, int i)
{
    if (i < 0 || s->queued[i])
        return;
    s->queued[i] = 1;
    s->queue[*tail] = i;
    *tail = (*tail + 1) % s->p;
}

static int ready(const wl_cluster_sim *s, int id)
{
    int pr = s->meta[id].pred, lo = s->meta[id].local;
    return (pr < 0 || s->end[pr] >= 0) && (lo < 0 || s->end[lo] >= 0);
}

/* zb-h1: whether stage i runs a held-back W before its next order entry. */
static int zb_take_w(const wl_cluster_sim *s, const wl_cluster_pipeline *pl, const stage_state *ss,
                     int i, int next, int *known)
{
    int pending = ss->bdone - ss->wnext;
    *known = 1;
    if (pending <= 0)
        return 0;
    if (next < 0)
        return 1; /* the order is done: flush */
    if (pending > i)
        return 1;
    if (!ready(s, next)) {
        *known = 0; /* decided once the input's time is known */
        return 0;
    }
    int pr = s->meta[next].pred;
    double arrive = pr >= 0 ? s->arrive[pr] : 0;
    return ss->free + dur_of(pl, K_W, i, 0, 0) <= arrive + 1e-12;
}

int wl_cluster_sim_run(wl_cluster_sim *s, const wl_cluster_pipeline *pl, wl_error *err)
{
    int p = pl->stages, v = pl->chunks, m = pl->micro;
    const wl_cluster_schedule_type *t = pl->schedule ? pl->schedule : &sched_1f1b;
    int split = t->split_w && !pl->forward_only;
    if (p < 1 || v < 1 || m < 1 || (v > 1 && !t->interleaves && !pl->forward_only) ||
        (split && v > 1)) {
        wl_error_set(err, "cluster", 0, "schedule", "%s takes %s", t->name,
                     t->interleaves ? "one or more chunks per stage" : "one chunk per stage (--vp 1)");
        return WL_EINVAL;
    }
    if (t->interleaves && v > 1 && !pl->forward_only && m % p) {
        wl_error_set(err, "cluster", 0, "micro_batches",
                     "interleaving needs micro-batches a multiple of the %d stages, got %d", p, m);
        return WL_EINVAL;
    }
    if (pl->round_micro < 0 || (pl->round_micro > 0 && (!pl->forward_only || v > 1 ||
                                                      m % pl->round_micro || !pl->f2_s))) {
        wl_error_set(err, "cluster", 0, "schedule", "decode rounds take a forward-only pipeline of "
                     "one chunk per stage and whole rounds of micro-batches");
        return WL_EINVAL;
    }
    s->p = p;
    s->v = v;
    s->m = m;
    s->round = pl->round_micro;
    s->nk = pl->forward_only ? 1 : split ? 3 : 2;
    if (reserve(s, p, v, m, s->nk)) {
        wl_error_set(err, "cluster", 0, "", "out of memory for the pipeline simulation");
        return WL_ENOMEM;
    }
    size_t ids = (size_t)s->nk * (size_t)p * (size_t)v * (size_t)m;
    s->ntasks = 0;
    stage_state *ss = s->ss;
    memset(ss, 0, sizeof *ss * (size_t)p);
    if (s->key_p != p || s->key_v != v || s->key_m != m || s->key_nk != s->nk ||
        s->key_round != s->round || s->key_fwd != pl->forward_only || s->key_sched != t) {
        s->rec_valid = 0;
        /* in id order (tid: kind fastest, then micro, chunk, stage) */
        task_meta *tm = s->meta;
        for (int i = 0; i < p; i++)
            for (int c = 0; c < v; c++)
                for (int j = 0; j < m; j++)
                    for (int kd = 0; kd < s->nk; kd++, tm++) {
                        *tm = (task_meta){.kind = kd, .stage = i, .chunk = c, .micro = j,
                                          .pred = pred_of(s, kd, i, c, j),
                                          .local = local_of(s, kd, i, c, j)};
                    }
        for (int i = 0; i < p; i++)
            s->olen[i] = build_order(s, t, i, pl->forward_only);
        s->key_p = p, s->key_v = v, s->key_m = m, s->key_nk = s->nk;
        s->key_round = s->round, s->key_fwd = pl->forward_only, s->key_sched = t;
    }
    size_t total = 0;
    for (int i = 0; i < p; i++) {
        total += (size_t)s->olen[i];
        memset(&s->st[i], 0, sizeof s->st[i]);
    }
    if (split)
        total += (size_t)p * (size_t)m;
    if (s->rec_valid && !split) {
        run_rec(s, pl);
        for (int i = 0; i < p; i++)
            s->st[i].peak_in_flight = ss[i].peak;
        return WL_OK;
    }
    for (size_t k = 0; k < ids; k++)
        s->end[k] = s->arrive[k] = -1;
    s->nrec = 0;
    s->rec_valid = 0;
    /* Event-driven: a stage runs its order until the next task's input is
     * missing; a task's end can only unblock the stage its output goes to
     * (and itself, which runs on), so only those are visited again. The
     * times do not depend on the visiting order: each stage's tasks run in
     * its fixed order, each at max(stage free, input arrival). */
    size_t done = 0, per = (size_t)s->nk * (size_t)v * (size_t)m;
    int head = 0, tail = 0, nq = p;
    for (int i = 0; i < p; i++) {
        s->queue[i] = i;
        s->queued[i] = 1;
    }
    while (nq > 0) {
        int i = s->queue[head];
        head = (head + 1) % p;
        nq--;
        s->queued[i] = 0;
        const int *o = s->order + (size_t)i * per;
        for (;;) {
            int next = ss[i].pos < s->olen[i] ? o[ss[i].pos] : -1, to;
            if (split) {
                int known;
                if (zb_take_w(s, pl, &ss[i], i, next, &known)) {
                    to = run_task(s, pl, &ss[i], tid(s, K_W, i, 0, ss[i].wnext++));
                    done++;
                    if (to >= 0 && !s->queued[to]) {
                        enqueue(s, &tail, to);
                        nq++;
                    }
                    continue;
                }
                if (!known)
                    break;
            }
            if (next < 0 || !ready(s, next))
                break;
            to = run_task(s, pl, &ss[i], next);
            ss[i].pos++;
            done++;
            if (to >= 0 && to != i && !s->queued[to]) {
                enqueue(s, &tail, to);
                nq++;
            }
        }
    }
    for (int i = 0; i < p; i++)
        s->st[i].peak_in_flight = ss[i].peak;
    if (done < total) {
        wl_error_set(err, "cluster", 0, "schedule", "the %s schedule deadlocked (%zu of %zu tasks)",
                     t->name, done, total);
        return WL_EINVAL;
    }
    s->rec_valid = !split;
    return WL_OK;
}

const wl_cluster_stage_stats *wl_cluster_sim_stage(const wl_cluster_sim *s, int stage)
{
    return &s->st[stage];
}

size_t wl_cluster_sim_task_count(const wl_cluster_sim *s)
{
    return s->ntasks;
}

wl_cluster_task *wl_cluster_sim_task(wl_cluster_sim *s, size_t i)
{
    return &s->tasks[i];
}

int wl_cluster_sim_append(wl_cluster_sim *s, const wl_cluster_task *t)
{
    if (s->ntasks >= s->captasks)
        return WL_ENOMEM;
    s->task_id[s->ntasks] = -1;
    s->tasks[s->ntasks++] = *t;
    return WL_OK;
}

int wl_cluster_sim_graph(const wl_cluster_sim *s, int *pred, double *delay, size_t *n)
{
    size_t k = 0;
    while (k < s->ntasks && s->task_id[k] >= 0)
        k++;
    *n = k;
    /* a task's place in the list, by id (the ids' end times are scratch
     * no longer needed: the list holds them) */
    int *pos = (int *)calloc(s->cap_ids ? s->cap_ids : 1, sizeof *pos);
    if (!pos)
        return WL_ENOMEM;
    for (size_t j = 0; j < k; j++)
        pos[s->task_id[j]] = (int)j;
    for (size_t j = 0; j < k; j++) {
        int id = s->task_id[j], pr = s->meta[id].pred;
        pred[j] = pr >= 0 ? pos[pr] : -1;
        delay[j] = s->arrive[id] - s->end[id];
    }
    free(pos);
    return WL_OK;
}
