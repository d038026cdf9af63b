/*
 * test_topo.c - the topology layer (src/topo) on communicators made by hand
 * from peer records, as the bootstrap join would hand them over: host
 * grouping, local ranks, leaders, groups, the ranks-per-host limit checked at
 * init, and the group questions the algorithms ask.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "topo/topo.h"

/* A communicator of n ranks seen from rank me; rank r on host hosts[r]
 * ("h<id>"), every host with ncpus online CPUs. */
static coll_comm *make_comm(int n, int me, const int *hosts, int ncpus)
{
    coll_comm *c = calloc(1, sizeof *c);
    assert_non_null(c);
    c->rank = me;
    c->nranks = n;
    c->peers = calloc((size_t)n, sizeof *c->peers);
    assert_non_null(c->peers);
    for (int r = 0; r < n; r++) {
        snprintf(c->peers[r].host_id, sizeof c->peers[r].host_id, "h%d", hosts ? hosts[r] : 0);
        snprintf(c->peers[r].hostname, sizeof c->peers[r].hostname, "node%d", hosts ? hosts[r] : 0);
        c->peers[r].rank = r;
        c->peers[r].ncpus = ncpus;
    }
    return c;
}

static void free_comm(coll_comm *c)
{
    coll_topo_free(c);
    free(c->peers);
    free(c);
}

/* Hosts numbered by their first rank, local ranks in rank order, uneven hosts. */
static void test_grouping(void **state)
{
    (void)state;
    const int hosts[7] = {7, 3, 7, 9, 3, 7, 7}; /* host ids: first seen 7 -> 0, 3 -> 1, 9 -> 2 */
    coll_comm *c = make_comm(7, 4, hosts, 2);
    assert_int_equal(coll_topo_build(c), COLL_SUCCESS);
    assert_int_equal(c->nhosts, 3);
    const int want_host[7] = {0, 1, 0, 2, 1, 0, 0}, want_local[7] = {0, 0, 1, 0, 1, 2, 3};
    for (int r = 0; r < 7; r++) {
        assert_int_equal(c->rank_host[r], want_host[r]);
        assert_int_equal(c->rank_local[r], want_local[r]);
    }
    assert_int_equal(c->host, 1);
    assert_int_equal(c->local_rank, 1);
    assert_int_equal(c->local_size, 2);
    assert_int_equal(c->local_ranks[0], 1);
    assert_int_equal(c->local_ranks[1], 4);
    assert_int_equal(c->leader_ranks[0], 0);
    assert_int_equal(c->leader_ranks[1], 1);
    assert_int_equal(c->leader_ranks[2], 3);
    assert_int_equal(c->host_nranks[0], 4);
    assert_false(c->uniform_hosts);
    assert_int_equal(c->world.size, 7);
    assert_int_equal(c->world.me, 4);
    assert_int_equal(c->local.size, 2);
    assert_int_equal(c->local.me, 1);
    assert_int_equal(c->leaders.size, 3);
    assert_int_equal(c->leaders.me, -1);                 /* rank 4 is no leader */
    assert_true(c->oversub > 1.99 && c->oversub < 2.01); /* host 0: 4 ranks on 2 CPUs */
    free_comm(c);
}

/* A leader sees itself in the leaders' group; even hosts are uniform. */
static void test_uniform_leader(void **state)
{
    (void)state;
    const int hosts[6] = {0, 0, 0, 1, 1, 1};
    coll_comm *c = make_comm(6, 3, hosts, 8);
    assert_int_equal(coll_topo_build(c), COLL_SUCCESS);
    assert_true(c->uniform_hosts);
    assert_int_equal(c->leaders.me, 1);
    assert_int_equal(c->local_rank, 0);
    assert_true(c->oversub == 1.0);
    free_comm(c);
}

/* COLL_MAX_LOCAL ranks on one host are fine; one more fails with a message
 * that names the count and the limit. */
static void test_local_limit(void **state)
{
    (void)state;
    coll_comm *c = make_comm(COLL_MAX_LOCAL, 0, NULL, 4096);
    assert_int_equal(coll_topo_build(c), COLL_SUCCESS);
    assert_int_equal(c->local_size, COLL_MAX_LOCAL);
    free_comm(c);

    c = make_comm(COLL_MAX_LOCAL + 1, 5, NULL, 4096);
    assert_int_equal(coll_topo_build(c), COLL_ERR_INVALID_ARG);
    char want[64];
    snprintf(want, sizeof want, "holds %d ranks", COLL_MAX_LOCAL + 1);
    assert_non_null(strstr(coll_last_error(), want));
    snprintf(want, sizeof want, "at most %d ranks per host", COLL_MAX_LOCAL);
    assert_non_null(strstr(coll_last_error(), want));
    assert_non_null(strstr(coll_last_error(), "node0"));
    free_comm(c);
}

/* The group questions: local only with shm (comm->direct), host = exactly my
 * host's ranks, busiest host of the world and of a subgroup. */
static void test_group_queries(void **state)
{
    (void)state;
    static const int direct_dummy = 1;
    const int hosts[6] = {0, 0, 0, 1, 1, 2};
    coll_comm *c = make_comm(6, 1, hosts, 8);
    assert_int_equal(coll_topo_build(c), COLL_SUCCESS);
    const int two_local[2] = {0, 2}, mixed[4] = {0, 3, 4, 5}, one[1] = {1};
    coll_group_t g2 = {2, -1, two_local}, gm = {4, -1, mixed}, g1 = {1, 0, one};
    assert_false(coll_group_is_local(c, &g2)); /* no shm: only a group of one is local */
    assert_true(coll_group_is_local(c, &g1));
    c->direct = (const void *)&direct_dummy;
    assert_true(coll_group_is_local(c, &g2));
    assert_false(coll_group_is_local(c, &gm));
    assert_false(coll_group_is_host(c, &g2)); /* two of my host's three */
    assert_true(coll_group_is_host(c, &c->local));
    assert_true(coll_group_is_host(c, &g1));
    assert_int_equal(coll_group_busiest_host(c, &c->world), 3);
    assert_int_equal(coll_group_busiest_host(c, &gm), 2); /* ranks 3 and 4 on host 1 */
    assert_int_equal(coll_group_busiest_host(c, &g1), 1);
    c->direct = NULL;
    free_comm(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grouping),
        cmocka_unit_test(test_uniform_leader),
        cmocka_unit_test(test_local_limit),
        cmocka_unit_test(test_group_queries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
