/*
 * tests/lib/sim_hosts.h - simulated hosts for the programs that fork their
 * ranks (matrix, determ; first_use and bench/coll_bench claim hosts in blocks): "-H 2,1,2" gives 3 hosts of 2, 1 and 2 ranks, dealt
 * in blocks or round-robin; each rank then claims its host id (COLL_HOST_ID =
 * simhost<h>) and loopback (COLL_IF_IP), so TCP runs between the hosts and
 * shared memory inside each. Header only, like fork_ranks.h. Needs src/ on
 * the include path (core/config.h).
 */
#ifndef CB_SIM_HOSTS_H
#define CB_SIM_HOSTS_H

#include <stdio.h>
#include <stdlib.h>

#include "core/config.h"

#define CB_SIM_MAX 64 /* ranks in all, and hosts */

typedef struct {
    int nhosts;           /* 0: no -H, one real host */
    int nranks;           /* the sum of the counts */
    int host[CB_SIM_MAX]; /* simulated host of each rank */
} cb_sim_hosts_t;

/* Parses "2,1,2" (counts 1..64, at most 64 ranks in all) into *sh, ranks dealt
 * in blocks (0,0,1,2,2) or round-robin (0,1,2,0,2); -1 when malformed. */
static inline int cb_sim_hosts_parse(const char *spec, int round_robin, cb_sim_hosts_t *sh)
{
    int cnt[CB_SIM_MAX], h = 0, sum = 0;
    for (const char *s = spec; *s;) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > CB_SIM_MAX || h == CB_SIM_MAX || (*end && *end != ','))
            return -1;
        cnt[h++] = (int)v;
        sum += (int)v;
        s = *end ? end + 1 : end;
    }
    if (h == 0 || sum > CB_SIM_MAX)
        return -1;
    sh->nhosts = h;
    sh->nranks = sum;
    int r = 0;
    if (!round_robin) {
        for (int k = 0; k < h; k++)
            for (int j = 0; j < cnt[k]; j++)
                sh->host[r++] = k;
    } else {
        for (int k = 0; r < sum; k = (k + 1) % h)
            if (cnt[k]) {
                cnt[k]--;
                sh->host[r++] = k;
            }
    }
    return 0;
}

/* In a forked rank, before coll_comm_init_rank: simulated host h, and
 * loopback only (never another address). */
static inline void cb_sim_host_claim(int h)
{
    char host[32];
    snprintf(host, sizeof host, "simhost%d", h);
    coll_cfg_set(COLL_CFG_HOST_ID, host);
    coll_cfg_set(COLL_CFG_IF_IP, "127.0.0.1");
}

/* The same for rank of a parsed -H layout; nothing without -H. */
static inline void cb_sim_hosts_claim(const cb_sim_hosts_t *sh, int rank)
{
    if (sh->nhosts)
        cb_sim_host_claim(sh->host[rank]);
}

#endif
