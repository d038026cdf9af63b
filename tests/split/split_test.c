/*
 * split_test.c - coll_comm_split on 8 forked ranks over 2 simulated hosts
 * (COLL_HOST_ID simhost0 = ranks 0-3, simhost1 = ranks 4-7; tcp on 127.0.0.1
 * between them). Splits by host, by parity, with a key that reverses the
 * order, with COLL_SPLIT_NOCOLOR, and nested (a split of a split). On each
 * sub-communicator: size, rank, hosts and local ranks as expected, members in
 * the expected order (allgather of world ranks), AllReduce exact (small and
 * large counts); two threads of each rank reduce on two of them at once. Then bad arguments and an aborted parent, and every rank
 * destroys its communicators in its own order (one sub-communicator is used
 * after its parent is gone). Exit 0 when every check passed.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll.h"
#include "core/config.h"
#include "../lib/fork_ranks.h"

#define N 8
#define HOST(r) ((r) / 4)
#define BIG 70001

static int me;
static int fails;

#define CHECK(cond, ...) \
    do { \
        if (!(cond)) { \
            fprintf(stderr, "rank %d: FAILED %s:%d: ", me, __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__); \
            fprintf(stderr, "\n"); \
            fails++; \
        } \
    } while (0)

/* comm must hold exactly the world ranks members[0..n-1] in that order, on nhosts hosts. */
static void verify(const char *what, coll_comm_t c, const int *members, int n, int nhosts)
{
    int size = -1, rank = -1, h = -1, lr = -1, ls = -1, want = -1, want_ls = 0;
    for (int i = 0; i < n; i++) {
        if (members[i] == me)
            want = i;
        want_ls += HOST(members[i]) == HOST(me);
    }
    coll_comm_size(c, &size);
    coll_comm_rank(c, &rank);
    coll_comm_nhosts(c, &h);
    coll_comm_local(c, &lr, &ls);
    CHECK(size == n && rank == want && h == nhosts && ls == want_ls,
          "%s: size %d rank %d nhosts %d local_size %d (want %d %d %d %d)", what, size, rank, h, ls, n, want, nhosts,
          want_ls);
    int64_t w = me, order[N];
    coll_status_t st = coll_all_gather(&w, order, 1, COLL_INT64, c);
    CHECK(st == COLL_SUCCESS, "%s: allgather: %s", what, coll_last_error());
    for (int i = 0; st == COLL_SUCCESS && i < n; i++)
        CHECK(order[i] == members[i], "%s: member %d is world rank %lld, want %d", what, i, (long long)order[i],
              members[i]);
    int64_t sum = 0, want_sum = 0;
    for (int i = 0; i < n; i++)
        want_sum += members[i] + 1;
    w = me + 1;
    st = coll_all_reduce(&w, &sum, 1, COLL_INT64, COLL_SUM, c);
    CHECK(st == COLL_SUCCESS && sum == want_sum, "%s: allreduce(1) = %lld want %lld (%s)", what, (long long)sum,
          (long long)want_sum, coll_last_error());
    int32_t *buf = malloc(BIG * sizeof *buf);
    for (int i = 0; i < BIG; i++)
        buf[i] = me * 3 + i % 101;
    st = coll_all_reduce(buf, buf, BIG, COLL_INT32, COLL_SUM, c);
    int bad = st != COLL_SUCCESS;
    for (int i = 0; !bad && i < BIG; i++) {
        int64_t e = 0;
        for (int m = 0; m < n; m++)
            e += members[m] * 3 + i % 101;
        bad = buf[i] != e;
    }
    CHECK(!bad, "%s: allreduce(%d) in place wrong (%s, algo %s)", what, BIG, coll_strerror(st), coll_comm_last_algo(c));
    free(buf);
}

/* Two communicators used at once from two threads of each rank (coll.h: one
 * thread per communicator at a time, different communicators concurrently). */
typedef struct {
    coll_comm_t comm;
    int64_t want;
    int bad;
} thr_arg_t;

static void *hammer(void *p)
{
    thr_arg_t *a = p;
    for (int i = 0; i < 200; i++) {
        int64_t v = me + 1, sum = 0;
        if (coll_all_reduce(&v, &sum, 1, COLL_INT64, COLL_SUM, a->comm) != COLL_SUCCESS || sum != a->want)
            a->bad++;
    }
    return NULL;
}

static void two_threads(coll_comm_t c1, int64_t want1, coll_comm_t c2, int64_t want2)
{
    thr_arg_t a1 = {c1, want1, 0}, a2 = {c2, want2, 0};
    pthread_t t;
    pthread_create(&t, NULL, hammer, &a1);
    hammer(&a2);
    pthread_join(t, NULL);
    CHECK(!a1.bad && !a2.bad, "two threads: %d and %d wrong allreduces", a1.bad, a2.bad);
}

static coll_comm_t split(coll_comm_t parent, int color, int key)
{
    coll_comm_t c = (coll_comm_t)&c; /* must be overwritten */
    coll_status_t st = coll_comm_split(parent, color, key, &c);
    CHECK(st == COLL_SUCCESS, "split(color %d, key %d): %s", color, key, coll_last_error());
    return st == COLL_SUCCESS ? c : NULL;
}

static int run_rank(int rank, void *arg)
{
    coll_unique_id_t id = *(const coll_unique_id_t *)arg;
    me = rank;
    char host[32];
    snprintf(host, sizeof host, "simhost%d", HOST(me));
    coll_cfg_set(COLL_CFG_HOST_ID, host);
    coll_cfg_set(COLL_CFG_IF_IP, "127.0.0.1");
    coll_comm_t world;
    if (coll_comm_init_rank(&world, N, id, me) != COLL_SUCCESS) {
        fprintf(stderr, "rank %d: init: %s\n", me, coll_last_error());
        return 3;
    }
    int m[N], k = 0;
    coll_comm_t byhost = split(world, HOST(me), me);
    for (int r = 0; r < N; r++)
        if (HOST(r) == HOST(me))
            m[k++] = r;
    if (byhost)
        verify("by host", byhost, m, k, 1);

    coll_comm_t parity = split(world, me % 2, me);
    k = 0;
    for (int r = 0; r < N; r++)
        if (r % 2 == me % 2)
            m[k++] = r;
    if (parity)
        verify("by parity", parity, m, k, 2);

    coll_comm_t rev = split(world, 7, -me); /* key reverses the order */
    for (int i = 0; i < N; i++)
        m[i] = N - 1 - i;
    if (rev)
        verify("reversed", rev, m, N, 2);

    coll_comm_t some = split(world, me == 3 || me == 6 ? COLL_SPLIT_NOCOLOR : 1, 0); /* equal keys: old order */
    CHECK((me == 3 || me == 6) == (some == NULL), "NOCOLOR: comm %p", (void *)some);
    k = 0;
    for (int r = 0; r < N; r++)
        if (r != 3 && r != 6)
            m[k++] = r;
    if (some)
        verify("without 3 and 6", some, m, k, 2);

    /* nested: the parity comm (4 ranks: 2 per host) split into its halves by new rank / 2 */
    coll_comm_t nested = NULL;
    if (parity) {
        int prank = -1;
        coll_comm_rank(parity, &prank);
        nested = split(parity, prank / 2, -prank); /* reversed inside too */
        k = 0;
        for (int r = N - 1; r >= 0; r--)
            if (r % 2 == me % 2 && HOST(r) == HOST(me))
                m[k++] = r;
        if (nested)
            verify("nested", nested, m, k, 1);
    }

    if (byhost && parity) {
        int64_t wh = 0, wp = 0;
        for (int r = 0; r < N; r++) {
            wh += HOST(r) == HOST(me) ? r + 1 : 0;
            wp += r % 2 == me % 2 ? r + 1 : 0;
        }
        two_threads(byhost, wh, parity, wp);
    }

    /* bad arguments and an aborted parent */
    coll_comm_t out = NULL;
    CHECK(coll_comm_split(NULL, 0, 0, &out) == COLL_ERR_INVALID_ARG && !out, "split(NULL comm)");
    CHECK(coll_comm_split(world, 0, 0, NULL) == COLL_ERR_INVALID_ARG, "split(NULL newcomm)");
    coll_comm_t doomed = split(world, 0, me);
    if (doomed) {
        coll_comm_abort(doomed);
        CHECK(coll_comm_split(doomed, 0, 0, &out) == COLL_ERR_ABORTED && !out, "split of an aborted comm: %s",
              coll_last_error());
    }

    /* every rank its own destroy order; byhost is used after world is gone */
    coll_comm_t all[] = {world, byhost, parity, rev, some, nested, doomed};
    int nall = (int)(sizeof all / sizeof all[0]);
    for (int i = 0; i < nall; i++) {
        int j = (i * 3 + me) % nall; /* a permutation that differs per rank */
        if (all[j] && all[j] != byhost)
            CHECK(coll_comm_destroy(all[j]) == COLL_SUCCESS, "destroy %d", j);
        if (all[j] != byhost)
            all[j] = NULL;
    }
    if (byhost) {
        for (int i = 0; i < 4; i++)
            m[i] = HOST(me) * 4 + i;
        verify("by host after the others are destroyed", byhost, m, 4, 1);
        CHECK(coll_comm_destroy(byhost) == COLL_SUCCESS, "destroy byhost");
    }
    return fails ? 1 : 0;
}

int main(void)
{
    coll_unique_id_t id;
    if (coll_unique_id_listen("127.0.0.1", 0, NULL, &id) != COLL_SUCCESS) {
        fprintf(stderr, "split_test: id: %s\n", coll_last_error());
        return 3;
    }
    int worst = cb_ranks_run(N, run_rank, &id, "split_test");
    coll_unique_id_release(&id);
    printf("split_test: %d ranks on 2 simulated hosts: %s\n", N, worst ? "FAILED" : "all checks passed");
    return worst ? 1 : 0;
}
