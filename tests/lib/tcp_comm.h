/*
 * tests/lib/tcp_comm.h - a hand-made communicator for driving the TCP
 * transport directly (tests/unit/test_tcp.c, tests/fuzz/fuzz_tcp.c): rank
 * `rank` of n, every rank its own host named "node<i>", the given secret and
 * nonce, no bootstrap behind it. Header only:
 *   #include "../lib/tcp_comm.h"   (from tests/<dir>/; needs -Isrc)
 *
 *   cbt_tcp_comm_build(&c, rank, n, secret, nonce, timeout_s)
 *   cbt_tcp_comm_free(&c)      tears the transport down, frees what build made
 *
 * An allocation that fails aborts: these are test programs.
 */
#ifndef CB_TCP_COMM_H
#define CB_TCP_COMM_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "transport/tcp_internal.h"

static inline void cbt_tcp_comm_build(coll_comm *c, int rank, int n, const uint8_t secret[32], uint64_t nonce,
                                      double timeout_s)
{
    memset(c, 0, sizeof *c);
    c->rank = rank;
    c->nranks = n;
    c->peers = calloc((size_t)n, sizeof *c->peers);
    c->rank_host = calloc((size_t)n, sizeof(int));
    c->tp = calloc((size_t)n, sizeof *c->tp);
    c->id = calloc(1, sizeof *c->id);
    c->bs = calloc(1, sizeof *c->bs);
    if (!c->peers || !c->rank_host || !c->tp || !c->id || !c->bs) {
        fprintf(stderr, "tcp_comm: out of memory for a %d-rank communicator\n", n);
        abort();
    }
    for (int i = 0; i < n; i++) {
        c->rank_host[i] = i;
        snprintf(c->peers[i].hostname, sizeof c->peers[i].hostname, "node%d", i);
        c->peers[i].rank = i;
    }
    c->host = rank;
    c->nhosts = n;
    memcpy(c->id->secret, secret, 32);
    c->id->nonce = nonce;
    c->connect_timeout_s = timeout_s;
}

static inline void cbt_tcp_comm_free(coll_comm *c)
{
    coll_tcp_teardown(c);
    free(c->peers);
    free(c->rank_host);
    free(c->tp);
    free(c->id);
    free(c->bs);
}

#endif
