/*
 * fuzz_peers.c - the peer records the bootstrap join exchanges (every rank's
 * coll_peer_info_t, as another rank sent it: src/core/comm.c
 * coll_peers_check), then what is built from them: the hosts and local ranks
 * (src/topo/topo.c coll_topo_build), the TCP spin policy's count of ranks on
 * this machine (coll_comm_tcp_spin_us), and the descriptions naming a peer in
 * errors (its host name, its listener address: coll_peer_desc,
 * coll_tcp_peer_desc). Input: byte 0 = ranks (1..16), byte 1 = my rank, then
 * the records back to back (zeros past the input's end). Records not in their
 * slot must be refused; accepted ones must give a topology where every rank
 * has a host, the host sizes add up to the ranks, my local ranks hold me, and
 * the machine's ranks lie between my host's and all.
 */
#include "fuzz_common.h"
#include "core/comm.h"
#include "core/config.h"
#include "topo/topo.h"
#include "transport/tcp_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!fz_setup(size, 2, 2 + 16 * sizeof(coll_peer_info_t), NULL))
        return 0;
    int n = 1 + data[0] % 16, me = data[1] % n;
    coll_peer_info_t *peers = calloc((size_t)n, sizeof *peers);
    coll_comm *comm = calloc(1, sizeof *comm);
    if (!peers || !comm)
        abort();
    size_t bytes = size - 2 < (size_t)n * sizeof *peers ? size - 2 : (size_t)n * sizeof *peers;
    memcpy(peers, data + 2, bytes);
    int in_slot = 1;
    for (int r = 0; r < n; r++)
        in_slot &= peers[r].rank == r;
    coll_status_t st = coll_peers_check(peers, n);
    FZ_ASSERT((st == COLL_SUCCESS) == in_slot);
    if (st == COLL_SUCCESS) {
        comm->nranks = n;
        comm->rank = me;
        comm->peers = peers;
        if (coll_topo_build(comm) == COLL_SUCCESS) {
            FZ_ASSERT(comm->nhosts >= 1 && comm->nhosts <= n);
            int sum = 0, mine = 0;
            for (int r = 0; r < n; r++)
                FZ_ASSERT(comm->rank_host[r] >= 0 && comm->rank_host[r] < comm->nhosts);
            for (int h = 0; h < comm->nhosts; h++)
                sum += comm->host_nranks[h];
            FZ_ASSERT(sum == n);
            FZ_ASSERT(comm->local_size >= 1 && comm->local_rank >= 0 && comm->local_rank < comm->local_size);
            for (int i = 0; i < comm->local_size; i++)
                mine |= comm->local_ranks[i] == me;
            FZ_ASSERT(mine && comm->local_ranks[comm->local_rank] == me);
            int machine = 0;
            coll_comm_tcp_spin_us(peers, n, &peers[me], comm->local_size, -1, &machine);
            FZ_ASSERT(machine >= comm->local_size && machine <= n);
            char d[192];
            for (int r = 0; r < n; r++) {
                FZ_ASSERT(strlen(coll_peer_desc(comm, r, d, sizeof d)) < sizeof d);
                FZ_ASSERT(strlen(coll_tcp_peer_desc(comm, r, d, sizeof d)) < sizeof d);
            }
        }
        coll_topo_free(comm);
    }
    free(comm);
    free(peers);
    return 0;
}
