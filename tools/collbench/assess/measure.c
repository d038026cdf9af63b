/*
 * measure.c - the measurements of `collbench assess` between host speakers:
 * pairs, ring and node (node-shm in shm.c, bisect.c, coll.c).
 *
 * pairs: every pair of hosts once, in the round-robin rounds of rounds.c.
 *   Per pair, in this order: latency (--lat-iters 8-byte ping-pongs, the
 *   smallest half round trip: the link's floor, scheduling noise only adds),
 *   unidirectional low -> high and high -> low (-et sends of -s bytes, each
 *   closed by a 1-byte ack, timed by the sender), bidirectional (coll_sendrecv
 *   and a 1-byte exchange, the slower end's time). Each kind is preceded by one
 *   untimed execution; a figure is that of the median execution, so a burst of
 *   noise from other processes slows single executions, not the figure.
 * ring: every host sends to its successor and receives from its predecessor at
 *   once (-et coll_sendrecv of -s bytes); one ordered ring (host order) and
 *   --rings random orders; a host's figure is its median execution. Blocking
 *   exchanges couple the ring, so a slow link lowers every host's figure: a
 *   ring's figure is its slowest host, and rings are compared with each other
 *   (a ring slower than the others shows contention of that order); pairs says
 *   which host or link.
 * node: one host at a time, its speaker copies -s bytes with the d2d memcpy
 *   path and runs the FP64 flops kernel on one thread, each for 0.3 s after
 *   0.1 s of warm-up; figures are throughput over that time (bytes or
 *   operations / elapsed), so a host whose rank gets a small CPU share shows.
 *   Then node-shm (shm.c): two ranks of each host, all hosts at once.
 * Confirmation (each test): what is past the threshold after the first pass
 *   (a pair, a ring, a host; judge.c) is measured again, alone, and keeps the
 *   better of its figures, then what is still past it once more
 *   (CBT_AS_CONFIRM passes; pairs and bisect: CBT_AS_CONFIRM_PAIRS, marginal
 *   suspects only after the first); report.c names only what is still past
 *   it after that.
 * Every round opens with a barrier of all ranks and closes with a gather to
 * rank 0 (the non-speakers contribute an empty record), which prints progress.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assess.h"
#include "../bw/bw.h"
#include "../cb.h"
#include "../flops/flops.h"

static const char *TOOL = "assess";

#define TRY(call) CBT_TRY(TOOL, c->rank, "", c->comm, call)

/* One round's record of a rank (gathered to rank 0). */
typedef struct {
    int32_t peer; /* partner host (pairs) or successor host (ring); -1: none */
    int32_t pad;
    double lat_us;   /* pairs: measured by the lower host */
    double uni_gbs;  /* pairs: my sends to peer; ring: my link to the successor */
    double bidi_gbs; /* pairs: both ends' slower time */
} rec_t;

/* Unidirectional: one untimed then -et executions of -s bytes, each closed by
 * a 1-byte ack and timed by the sender; GB/s of the median execution (noise
 * from other processes on a host only slows single executions). */
static int uni(cbt_as_ctx_t *c, int me_sends, int peer, double *ex, double *gbs)
{
    size_t n = (size_t)c->o->size;
    unsigned char ack = 1;
    for (long long t = -1; t < c->o->et; t++) {
        double t0 = cbt_now();
        if (me_sends) {
            TRY(coll_send(c->src, n, COLL_UINT8, peer, c->comm));
            TRY(coll_recv(&ack, 1, COLL_UINT8, peer, c->comm));
        } else {
            TRY(coll_recv(c->dst, n, COLL_UINT8, peer, c->comm));
            TRY(coll_send(&ack, 1, COLL_UINT8, peer, c->comm));
        }
        if (t >= 0)
            ex[t] = cbt_now() - t0;
    }
    double med = cbt_as_median(ex, (int)c->o->et);
    *gbs = me_sends ? (double)n / (med > 0 ? med : 1e-9) / 1e9 : -1;
    return CBT_EXIT_OK;
}

/* Latency: one untimed ping-pong of 8 bytes, then the smallest half round trip
 * of lat_iters (us; the lower host's figure, -1 at the other end). */
static int pair_latency(cbt_as_ctx_t *c, int peer, int low, double *lat_us)
{
    long long li = c->o->lat_iters;
    double *rt = calloc((size_t)li + 1, sizeof *rt);
    if (!rt)
        return cbt_error(TOOL, CBT_EXIT_FAIL, "out of memory");
    uint64_t ping[1] = {0};
    for (long long i = -1; i < li; i++) {
        double t0 = cbt_now();
        coll_status_t st;
        if (low) {
            st = coll_send(ping, 8, COLL_UINT8, peer, c->comm);
            if (st == COLL_SUCCESS)
                st = coll_recv(ping, 8, COLL_UINT8, peer, c->comm);
        } else {
            st = coll_recv(ping, 8, COLL_UINT8, peer, c->comm);
            if (st == COLL_SUCCESS)
                st = coll_send(ping, 8, COLL_UINT8, peer, c->comm);
        }
        if (st != COLL_SUCCESS)
            free(rt);
        TRY(st);
        if (i >= 0)
            rt[i] = (cbt_now() - t0) * 1e6 / 2;
    }
    double mn = -1;
    for (long long i = 0; i < li; i++)
        if (mn < 0 || rt[i] < mn)
            mn = rt[i];
    *lat_us = low ? mn : -1;
    free(rt);
    return CBT_EXIT_OK;
}

/* Bidirectional: both ends at once, -et times after one untimed; per
 * execution the slower end's time (the two exchange theirs), the median's
 * 2 x size / time in *gbs (GB/s). ex: 2 x et doubles. */
static int pair_bidi(cbt_as_ctx_t *c, int peer, double *ex, double *gbs)
{
    size_t n = (size_t)c->o->size;
    long long et = c->o->et;
    unsigned char b = 0, b2 = 0;
    for (long long t = -1; t < et; t++) {
        double t0 = cbt_now();
        TRY(coll_sendrecv(c->src, n, peer, c->dst, n, peer, COLL_UINT8, c->comm));
        TRY(coll_sendrecv(&b, 1, peer, &b2, 1, peer, COLL_UINT8, c->comm));
        if (t >= 0)
            ex[t] = cbt_now() - t0;
    }
    TRY(coll_sendrecv(ex, (size_t)et, peer, ex + et, (size_t)et, peer, COLL_FP64, c->comm));
    for (long long t = 0; t < et; t++)
        if (ex[et + t] > ex[t])
            ex[t] = ex[et + t];
    double med = cbt_as_median(ex, (int)et);
    *gbs = 2.0 * (double)n / (med > 0 ? med : 1e-9) / 1e9;
    return CBT_EXIT_OK;
}

/* One pair, both ends: latency, unidirectional both ways (the lower host
 * sends first), bidirectional; the figures into r. */
static int pair_measure(cbt_as_ctx_t *c, int peer_host, rec_t *r)
{
    int peer = c->hosts[peer_host].speaker, low = c->me_host < peer_host, rc;
    unsigned char b = 0, b2 = 0;
    TRY(coll_sendrecv(&b, 1, peer, &b2, 1, peer, COLL_UINT8, c->comm));
    if ((rc = pair_latency(c, peer, low, &r->lat_us)))
        return rc;
    long long et = c->o->et;
    double *ex = calloc((size_t)et * 2, sizeof *ex), g1 = -1, g2 = -1;
    if (!ex)
        return cbt_error(TOOL, CBT_EXIT_FAIL, "out of memory");
    rc = uni(c, low, peer, ex, &g1);
    if (!rc)
        rc = uni(c, !low, peer, ex, &g2);
    r->uni_gbs = low ? g1 : g2;
    if (!rc)
        rc = pair_bidi(c, peer, ex, &r->bidi_gbs);
    free(ex);
    return rc;
}

/* Gathers this round's records to rank 0 (all: nranks records). */
static int gather(cbt_as_ctx_t *c, const rec_t *mine, rec_t *all)
{
    TRY(coll_gather(mine, all, sizeof *mine, COLL_UINT8, 0, c->comm));
    return CBT_EXIT_OK;
}

/* One pairs round: my host measures with host p (-1: idle), then rank 0 files
 * the records under round r. confirm 1: a confirmation round, whose figures,
 * scaled by f (uni, bidi, latency; NULL: 1), replace the first only where
 * better (bandwidth higher, latency lower); confirm 2: a reference round,
 * nothing filed (rank 0 reads all[]). */
static int pairs_round(cbt_as_ctx_t *c, int p, int r, int confirm, rec_t *all, const double *f)
{
    int n = c->nhosts, rc;
    rec_t me = {.peer = -1, .lat_us = -1, .uni_gbs = -1, .bidi_gbs = -1};
    TRY(coll_barrier(c->comm));
    if (c->speaker && p >= 0) {
        me.peer = p;
        if ((rc = pair_measure(c, p, &me)))
            return rc;
    }
    if ((rc = gather(c, &me, all)))
        return rc;
    if (c->rank != 0 || confirm == 2)
        return CBT_EXIT_OK;
    cbt_as_result_t *res = c->res;
    for (int k = 0; k < c->nranks; k++) {
        rec_t sc = all[k];
        const rec_t *x = &sc;
        if (x->peer < 0)
            continue;
        if (confirm && f) {
            sc.uni_gbs = sc.uni_gbs >= 0 ? sc.uni_gbs * f[0] : -1;
            sc.bidi_gbs = sc.bidi_gbs >= 0 ? sc.bidi_gbs * f[1] : -1;
            sc.lat_us = sc.lat_us >= 0 ? sc.lat_us * f[2] : -1;
        }
        int h = -1;
        for (int i = 0; i < n; i++)
            if (c->hosts[i].speaker == k)
                h = i;
        if (h < 0)
            continue;
        int ij = h * n + x->peer, ji = x->peer * n + h;
        if (!confirm) {
            res->uni[ij] = x->uni_gbs;
            res->round[ij] = res->round[ji] = r;
            if (x->lat_us >= 0)
                res->lat[ij] = res->lat[ji] = x->lat_us;
            res->bidi[ij] = res->bidi[ji] = x->bidi_gbs;
            continue;
        }
        res->again_uni[ij] = x->uni_gbs;
        res->uni[ij] = cbt_as_better(0, res->uni[ij], x->uni_gbs);
        if (x->lat_us >= 0) {
            res->again_lat[ij] = res->again_lat[ji] = x->lat_us;
            res->lat[ij] = res->lat[ji] = cbt_as_better(1, res->lat[ij], x->lat_us);
        }
        res->again_bidi[ij] = res->again_bidi[ji] = x->bidi_gbs;
        res->bidi[ij] = res->bidi[ji] = cbt_as_better(0, res->bidi[ij], x->bidi_gbs);
    }
    return CBT_EXIT_OK;
}

/* My partner when hosts a and b meet (-1: not my host or not its speaker). */
static int pair_peer(const cbt_as_ctx_t *c, int a, int b)
{
    if (c->speaker && c->me_host == a)
        return b;
    if (c->speaker && c->me_host == b)
        return a;
    return -1;
}

/* Reference pair (a * n + b, a < b) for the confirmation: hosts in no suspect
 * pair, uni figure (both ways) nearest the median of such pairs; -1 none. */
static int pick_ref(const cbt_as_result_t *r, const int *sus, int ns)
{
    int n = r->n, best = -1;
    char *touched = calloc((size_t)n, 1);
    double *v = malloc(((size_t)n * (size_t)n + 1) * sizeof *v);
    if (!touched || !v) {
        free(touched), free(v);
        return -1;
    }
    for (int k = 0; k < ns; k++)
        touched[sus[k] / n] = touched[sus[k] % n] = 1;
    int m = 0;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            if (!touched[a] && !touched[b] && r->uni[a * n + b] >= 0 && r->uni[b * n + a] >= 0)
                v[m++] = r->uni[a * n + b] + r->uni[b * n + a];
    double med = cbt_as_median(v, m), bd = -1;
    for (int a = 0; a < n && m; a++)
        for (int b = a + 1; b < n; b++)
            if (!touched[a] && !touched[b] && r->uni[a * n + b] >= 0 && r->uni[b * n + a] >= 0) {
                double d = r->uni[a * n + b] + r->uni[b * n + a] - med;
                d = d < 0 ? -d : d;
                if (bd < 0 || d < bd)
                    bd = d, best = a * n + b;
            }
    free(touched), free(v);
    return best;
}

/* Scale factors (uni, bidi, latency) from the reference pair a-b just measured
 * (all[]) against its first-pass figures: first / now, clamped so that they
 * only ever help the suspect (bandwidth 1..4, latency 1/4..1): alone, a pair
 * is faster than in the first pass, where two pairs shared the machine, and
 * scaling that away would make a healthy suspect look as slow as it did then;
 * only a machine busier now than then is corrected for. */
static void ref_scale(const cbt_as_ctx_t *c, int a, int b, const rec_t *all, double *f)
{
    const cbt_as_result_t *r = c->res;
    int n = r->n;
    const rec_t *x = &all[c->hosts[a].speaker], *y = &all[c->hosts[b].speaker];
    double now[3] = {x->uni_gbs + y->uni_gbs, x->bidi_gbs, x->lat_us >= 0 ? x->lat_us : y->lat_us};
    double first[3] = {r->uni[a * n + b] + r->uni[b * n + a], r->bidi[a * n + b], r->lat[a * n + b]};
    for (int i = 0; i < 3; i++) {
        f[i] = 1;
        if (now[i] > 0 && first[i] > 0)
            f[i] = first[i] / now[i];
        if (i < 2)
            f[i] = f[i] < 1 ? 1 : f[i] > 4 ? 4 : f[i];
        else
            f[i] = f[i] > 1 ? 1 : f[i] < 0.25 ? 0.25 : f[i];
    }
}

/* Pairs' confirmation, pass `pass` (rank 0): the suspects (after the first
 * pass only marginal ones) and the reference pair (sus[1], a * n + b; -1 none). */
static void pairs_find(cbt_as_ctx_t *c, int pass, int *sus, void *arg)
{
    int n = c->nhosts;
    sus[0] = cbt_as_suspects(c->res, c->o->threshold, pass > 0, sus + 2, n * n / 2);
    sus[1] = sus[0] ? pick_ref(c->res, sus + 2, sus[0]) : -1;
    if (sus[0]) /* the report: how many were measured again, the last pass's reference */
        c->res->nconfirm += sus[0], c->res->pairs_ref = sus[1];
}

/* Suspect k alone, after the reference pair alone (its scale f on rank 0). */
static int pairs_again(cbt_as_ctx_t *c, const int *sus, int k, void *arg)
{
    rec_t *all = arg;
    int n = c->nhosts, rc;
    double f[3] = {1, 1, 1};
    if (sus[1] >= 0) {
        int a = sus[1] / n, b = sus[1] % n;
        if ((rc = pairs_round(c, pair_peer(c, a, b), -1, 2, all, NULL)))
            return rc;
        if (c->rank == 0)
            ref_scale(c, a, b, all, f);
    }
    return pairs_round(c, pair_peer(c, sus[2 + k] / n, sus[2 + k] % n), -1, 1, all, f);
}

int cbt_as_pairs(cbt_as_ctx_t *c)
{
    int n = c->nhosts, nr = cbt_as_rounds(n), rc, *sus;
    rec_t *all = cbt_as_round_bufs(c, sizeof *all, (size_t)n * (size_t)n + 2, &sus, &rc);
    if (rc)
        return rc;
    double t_start = cbt_now();
    for (int r = 0; r < nr && !rc; r++) {
        rc = pairs_round(c, c->speaker ? cbt_as_partner(r, c->me_host, n) : -1, r, 0, all, NULL);
        if (!rc && c->rank == 0 && !c->o->quiet)
            cbt_as_progress("pairs", r + 1, nr, t_start);
    }
    /* Confirmation: every suspect pair (one of its figures past the threshold)
     * is measured again, alone (one pair at a time, so the others' traffic and
     * CPU load are not in it), up to CBT_AS_CONFIRM_PAIRS passes, each over the pairs
     * still suspect and not past CBT_AS_CLEAR x the threshold (a clear outlier measured
     * alone once is not measured again); a link is named only if still past it
     * after the last. Each suspect is preceded by a reference pair (a healthy pair of the
     * first pass, hosts touched by no suspect, figure nearest the median),
     * measured alone too: the suspect's figures are scaled by the reference's
     * first-pass / now (clamped to 1/4..4), so a machine that is busier now
     * than during the first pass (other jobs; on a shared VM the same link
     * measured 0.3-1.4 GB/s a few seconds apart) does not make a healthy link
     * look slow against a median taken earlier. */
    if (!rc) {
        cbt_as_confirm_t cf = {"pairs confirmation",
                               "pairs confirmation (marginal)",
                               CBT_AS_CONFIRM_PAIRS,
                               2,
                               (size_t)n * (size_t)n + 2,
                               pairs_find,
                               pairs_again,
                               all};
        rc = cbt_as_confirm(c, &cf, sus);
    }
    free(all), free(sus);
    return rc;
}

/* Ring g (0 ordered, else random from --seed + g) once; confirm: a second
 * run of a suspect ring, each host's figure the better of the two. */
static int ring_run(cbt_as_ctx_t *c, int g, int confirm, int *perm, int *pos, double *ex, rec_t *all)
{
    int n = c->nhosts, rc;
    size_t sz = (size_t)c->o->size;
    if (g == 0)
        for (int i = 0; i < n; i++)
            perm[i] = i;
    else
        cbt_as_ring_order(c->o->seed + (unsigned long long)g, n, perm);
    for (int i = 0; i < n; i++)
        pos[perm[i]] = i;
    rec_t me = {.peer = -1, .lat_us = -1, .uni_gbs = -1, .bidi_gbs = -1};
    coll_status_t st = coll_barrier(c->comm);
    if (st == COLL_SUCCESS && c->speaker && n > 1) {
        int i = pos[c->me_host];
        int succ = perm[(i + 1) % n], pred = perm[(i + n - 1) % n];
        int rs = c->hosts[succ].speaker, rp = c->hosts[pred].speaker;
        double med;
        st = cbt_as_exchange(c, rs, rp, ex, &med);
        me.peer = succ;
        me.uni_gbs = (double)sz / med / 1e9;
    }
    if (st != COLL_SUCCESS) {
        rc = cbt_error(TOOL, cbt_exit_of(st), "rank %d: ring %d: %s: %s", c->rank, g, coll_strerror(st),
                       coll_last_error());
        coll_comm_abort(c->comm);
        return rc;
    }
    if ((rc = gather(c, &me, all)))
        return rc;
    if (c->rank != 0)
        return CBT_EXIT_OK;
    for (int k = 0; k < c->nranks; k++)
        for (int h = 0; h < n; h++)
            if (c->hosts[h].speaker == k && all[k].peer >= 0) {
                c->res->succ[g * n + h] = all[k].peer;
                if (confirm) {
                    c->res->ring_again[g * n + h] = all[k].uni_gbs;
                    c->res->ring[g * n + h] = cbt_as_better(0, c->res->ring[g * n + h], all[k].uni_gbs);
                } else {
                    c->res->ring[g * n + h] = all[k].uni_gbs;
                }
            }
    return CBT_EXIT_OK;
}

typedef struct {
    int *perm, *pos;
    double *ex;
    rec_t *all;
    int nrings;
} ring_bufs_t;

static void ring_find(cbt_as_ctx_t *c, int pass, int *sus, void *arg)
{
    const ring_bufs_t *b = arg;
    sus[0] = cbt_as_ring_suspects(c->res, b->nrings, c->o->threshold, sus + 1);
}

static int ring_again(cbt_as_ctx_t *c, const int *sus, int k, void *arg)
{
    ring_bufs_t *b = arg;
    return ring_run(c, sus[1 + k], 1, b->perm, b->pos, b->ex, b->all);
}

int cbt_as_ring(cbt_as_ctx_t *c)
{
    int n = c->nhosts, nrings = 1 + (int)c->o->rings, rc = CBT_EXIT_OK;
    int *perm = malloc((size_t)n * sizeof *perm), *pos = malloc((size_t)n * sizeof *pos);
    int *sus = malloc((size_t)(nrings + 1) * sizeof *sus);
    rec_t *all = c->rank == 0 ? calloc((size_t)c->nranks, sizeof *all) : NULL;
    double *ex = calloc((size_t)c->o->et, sizeof *ex);
    if (!perm || !pos || !ex || !sus || (c->rank == 0 && !all)) {
        free(perm), free(pos), free(all), free(ex), free(sus);
        return cbt_error(TOOL, CBT_EXIT_FAIL, "out of memory");
    }
    double t_start = cbt_now();
    for (int g = 0; g < nrings && rc == CBT_EXIT_OK; g++) {
        rc = ring_run(c, g, 0, perm, pos, ex, all);
        if (!rc && c->rank == 0 && !c->o->quiet)
            cbt_as_progress(g ? "ring (random)" : "ring (ordered)", g + 1, nrings, t_start);
    }
    /* confirmation: a ring past the threshold runs again (up to CBT_AS_CONFIRM
     * times); named if still so */
    if (!rc) {
        ring_bufs_t rb = {perm, pos, ex, all, nrings};
        cbt_as_confirm_t cf = {"ring confirmation", NULL,      CBT_AS_CONFIRM, 1,
                               (size_t)nrings + 1,  ring_find, ring_again,     &rb};
        rc = cbt_as_confirm(c, &cf, sus);
    }
    if (c->rank == 0 && rc == CBT_EXIT_OK)
        c->res->nrings = nrings;
    free(perm), free(pos), free(all), free(ex), free(sus);
    return rc;
}

/* node: host h's speaker measures d2d and flops while every other rank waits
 * in the gather (one host at a time: hosts that share a machine, as VMs or
 * namespaces do, would otherwise measure each other). */
static int node_host(cbt_as_ctx_t *c, int h, int confirm, rec_t *all)
{
    int rc;
    rec_t me = {.peer = -1, .lat_us = -1, .uni_gbs = -1, .bidi_gbs = -1};
    TRY(coll_barrier(c->comm));
    if (c->speaker && c->me_host == h) {
        me.peer = h;
        me.uni_gbs = cbt_d2d_probe(c->dst, c->src, (size_t)c->o->size, CBT_AS_NODE_WARMUP_S, CBT_AS_NODE_S);
        me.bidi_gbs = cbt_flops_probe(CBT_AS_NODE_WARMUP_S, CBT_AS_NODE_S);
    }
    if ((rc = gather(c, &me, all)))
        return rc;
    if (c->rank != 0)
        return CBT_EXIT_OK;
    cbt_as_result_t *res = c->res;
    const rec_t *x = &all[c->hosts[h].speaker];
    if (confirm) {
        res->again_d2d[h] = x->uni_gbs, res->again_gflops[h] = x->bidi_gbs;
        res->d2d[h] = cbt_as_better(0, res->d2d[h], x->uni_gbs);
        res->gflops[h] = cbt_as_better(0, res->gflops[h], x->bidi_gbs);
    } else {
        res->d2d[h] = x->uni_gbs, res->gflops[h] = x->bidi_gbs;
    }
    return CBT_EXIT_OK;
}

static void node_find(cbt_as_ctx_t *c, int pass, int *sus, void *arg)
{
    sus[0] = cbt_as_node_suspects(c->res, c->o->threshold, sus + 1);
}

static int node_again(cbt_as_ctx_t *c, const int *sus, int k, void *arg) { return node_host(c, sus[1 + k], 1, arg); }

int cbt_as_node(cbt_as_ctx_t *c)
{
    int n = c->nhosts, rc, *sus;
    rec_t *all = cbt_as_round_bufs(c, sizeof *all, (size_t)n + 1, &sus, &rc);
    if (rc)
        return rc;
    double t_start = cbt_now();
    for (int h = 0; h < n && !rc; h++) {
        rc = node_host(c, h, 0, all);
        if (!rc && c->rank == 0 && !c->o->quiet)
            cbt_as_progress("node host", h + 1, n, t_start);
    }
    if (!rc && n > 1) {
        cbt_as_confirm_t cf = {"node confirmation", NULL, CBT_AS_CONFIRM, 1, (size_t)n + 1, node_find, node_again, all};
        rc = cbt_as_confirm(c, &cf, sus);
    }
    if (!rc)
        rc = cbt_as_node_shm(c); /* shm.c: all hosts at once */
    if (c->rank == 0 && !rc)
        c->res->node_done = 1;
    free(all), free(sus);
    return rc;
}
