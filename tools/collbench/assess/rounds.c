/*
 * rounds.c - how the measurements of `collbench assess` are scheduled, and the
 * steps every round and confirmation pass shares.
 *
 * pairs: a round-robin schedule (circle method): host n-1 (or a virtual host n
 *   when n is odd, whose partner idles) stays put, host h meets 2r - h mod m in
 *   round r, m = n - 1 (n even) or n (n odd). Every pair meets exactly once and
 *   every host is busy with one peer per round, so the matrix costs m rounds.
 *   Example n = 5 (m = 5, virtual host 5): round 0 = 0-5 (0 idle), 1-4, 2-3.
 * ring: random orders of the hosts from --seed (Fisher-Yates).
 * bisect: halving g relabels the hosts by a random permutation drawn from
 *   --seed and pairs them as round g of the round-robin schedule, each pair's
 *   two hosts on opposite sides by a coin drawn from --seed and g.
 * coll: groups of --group-size consecutive hosts.
 * Shared steps: rank 0's suspects to every rank before a confirmation pass,
 * and the progress line on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assess.h"
#include "../cb.h"

static const char *TOOL = "assess";

int cbt_as_rounds(int n) { return n < 2 ? 0 : n % 2 ? n : n - 1; }

int cbt_as_partner(int r, int h, int n)
{
    int m = n % 2 ? n + 1 : n; /* even host count, virtual host n when odd */
    if (n < 2 || r < 0 || r >= m - 1 || h < 0 || h >= n)
        return -1;
    int p;
    if (h == m - 1)
        p = r;
    else if (h == r)
        p = m - 1;
    else
        p = ((2 * r - h) % (m - 1) + (m - 1)) % (m - 1);
    return p >= n ? -1 : p;
}

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return *s = x;
}

void cbt_as_ring_order(unsigned long long seed, int n, int *perm)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ULL + 1;
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(xorshift(&s) % (uint64_t)(i + 1));
        int t = perm[i];
        perm[i] = perm[j], perm[j] = t;
    }
}

static uint64_t mix(uint64_t x) /* splitmix64 */
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

void cbt_as_halving(unsigned long long seed, int g, int n, int *peer, int *side)
{
    int *perm = malloc((size_t)(n > 0 ? n : 1) * sizeof *perm);
    for (int h = 0; h < n; h++)
        peer[h] = -1, side[h] = 0;
    if (!perm || n < 2) {
        free(perm);
        return;
    }
    cbt_as_ring_order(mix(seed ^ 0xB15EC7ULL), n, perm); /* label i -> host perm[i] */
    int nr = cbt_as_rounds(n), r = g % nr;
    for (int i = 0; i < n; i++) {
        int j = cbt_as_partner(r, i, n);
        if (j < 0)
            continue;
        peer[perm[i]] = perm[j];
        if (i < j) {
            int coin = (int)(mix(seed + 0x1000ULL * (unsigned long long)(g + 1) + (unsigned long long)i) & 1);
            side[perm[i]] = coin, side[perm[j]] = !coin;
        }
    }
    free(perm);
}

int cbt_as_groups(int n, int k, int *grp)
{
    if (k < 1)
        k = 1;
    int ng = n / k > 0 ? n / k : 1;
    for (int h = 0; h < n; h++)
        grp[h] = h / k < ng ? h / k : ng - 1;
    return ng;
}

int cbt_as_share_suspects(cbt_as_ctx_t *c, int *sus, size_t len)
{
    coll_status_t st = coll_broadcast(sus, len, COLL_INT32, 0, c->comm);
    if (st == COLL_SUCCESS)
        return CBT_EXIT_OK;
    int rc = cbt_error(TOOL, cbt_exit_of(st), "rank %d: broadcast: %s", c->rank, coll_strerror(st));
    coll_comm_abort(c->comm);
    return rc;
}

coll_status_t cbt_as_exchange(cbt_as_ctx_t *c, int to, int from, double *ex, double *med)
{
    size_t sz = (size_t)c->o->size;
    coll_status_t st = COLL_SUCCESS;
    for (long long t = -1; t < c->o->et && st == COLL_SUCCESS; t++) {
        double t0 = cbt_now();
        st = coll_sendrecv(c->src, sz, to, c->dst, sz, from, COLL_UINT8, c->comm);
        if (t >= 0)
            ex[t] = cbt_now() - t0;
    }
    double m = cbt_as_median(ex, (int)c->o->et);
    *med = m > 0 ? m : 1e-9;
    return st;
}

void cbt_as_progress(const char *what, int done, int total, double t_start)
{
    double el = cbt_now() - t_start, left = done ? el / done * (total - done) : 0;
    fprintf(stderr, "collbench assess: %s round %d/%d done, %.1f s, about %.1f s left\n", what, done, total, el, left);
}

void *cbt_as_round_bufs(cbt_as_ctx_t *c, size_t rec, size_t nsus, int **sus, int *rc)
{
    void *all = c->rank == 0 ? calloc((size_t)c->nranks, rec) : NULL;
    *sus = malloc(nsus * sizeof **sus);
    *rc = CBT_EXIT_OK;
    if ((c->rank == 0 && !all) || !*sus) {
        free(all), free(*sus);
        *rc = cbt_error(TOOL, CBT_EXIT_FAIL, "out of memory");
        return NULL;
    }
    return all;
}

int cbt_as_confirm(cbt_as_ctx_t *c, const cbt_as_confirm_t *cf, int *sus)
{
    int rc = CBT_EXIT_OK;
    for (int pass = 0; pass < cf->passes && !rc; pass++) {
        sus[0] = 0;
        if (c->rank == 0)
            cf->find(c, pass, sus, cf->arg);
        if ((rc = cbt_as_share_suspects(c, sus, cf->len)) != CBT_EXIT_OK || !sus[0])
            break;
        const char *what = pass && cf->what_later ? cf->what_later : cf->what;
        double t_start = cbt_now();
        for (int k = 0; k < sus[0] && !rc; k++) {
            rc = cf->again(c, sus, k, cf->arg);
            if (!rc && c->rank == 0 && !c->o->quiet)
                cbt_as_progress(what, k + 1, sus[0], t_start);
        }
    }
    return rc;
}
