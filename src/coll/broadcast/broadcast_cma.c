/*
 * broadcast_cma.c - Broadcast for the ranks of one host, one copy, every rank
 * copying: the message is cut into p parts; member j (not the root) reads
 * every part but part j straight from the root's buffer (process_vm_readv,
 * at most 2 calls: the parts before j and those after it are contiguous)
 * while the root writes part j into member j's buffer (process_vm_writev).
 * A memcpy replaces either where the other side's buffer is coll_mem_alloc
 * memory mapped here. With 2 ranks both cores copy half each.
 *
 * Opening (cma.h): every member's buffer address published in the shared
 * control area, a barrier; a closing barrier after the copies keeps the
 * buffers unchanged until every copy into or out of them is done.
 *
 * Per rank: (p-1)/p n bytes copied; the root p - 1 writes, a member at most 2
 * reads (O(p) system calls at the root, O(1) published words per rank).
 * Cost: 2 barriers + (p - 1) syscalls + (p-1)/p n (pin + beta_cma).
 * Constraints: the group is exactly the ranks of this host and the kernel lets
 * them read and write each other's memory (probed at init; COLL_CMA=0 disables it).
 */
#include "coll/algo.h"
#include "coll/broadcast/broadcast.h"
#include "coll/execution/cma.h"
#include "coll/util/coll_util.h"
#include "coll/selection/tuning.h"
#include "transport/direct.h"

enum { PUB_BUF = 0 }; /* cma and zero-copy slot */

static coll_status_t run(coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    int p = g->size, me = g->me, ri;
    size_t n = a->count * a->esize;
    char *buf = a->recvbuf;
    COLL_CHECK(coll_root_index(g, "broadcast", a->root, &ri));
    if (p == 1 || n == 0)
        return COLL_SUCCESS;
    const void *pub = buf;
    COLL_CHECK(coll_cma_open(comm, 1, &pub, &n, PUB_BUF, PUB_BUF));
    if (me == ri) {
        for (int s = 1; s < p; s++) {
            int j = (me + s) % p;
            size_t off = coll_block_offset(n, p, j), len = coll_block_count(n, p, j);
            if (len)
                COLL_CHECK(coll_cma_put(comm, g, j, PUB_BUF, off, buf + off, len));
        }
    } else {
        size_t off = coll_block_offset(n, p, me), end = off + coll_block_count(n, p, me);
        if (off)
            COLL_CHECK(coll_cma_get(comm, g, ri, PUB_BUF, 0, buf, off));
        if (end < n)
            COLL_CHECK(coll_cma_get(comm, g, ri, PUB_BUF, end, buf + end, n - end));
    }
    return coll_direct_barrier(comm); /* every copy into or out of my buffer is done */
}

static double cost(const coll_comm *comm, const coll_group_t *g, const coll_args_t *a)
{
    double p = g->size, n = (double)a->bytes;
    return coll_cma_cost(comm, g, p - 1, (p - 1) / p * n);
}

const coll_algo_t coll_algo_broadcast_cma = COLL_ALGO(
    COLL_BROADCAST, "cma", .flags = COLL_ALGO_F_SINGLE_HOST,
    .desc = "one host: members read the root's buffer (process_vm_readv) while the root writes a part into each "
            "(process_vm_writev), one copy, every rank copying (p-1)/p n; 2 barriers",
    .usable = coll_cma_usable);
