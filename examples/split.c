/*
 * split.c - sub-communicators: data-parallel groups of the even and the odd
 * ranks (coll_comm_split), each reducing on its own, and a last rank left out.
 *
 * Launch like torchrun: every process gets RANK, WORLD_SIZE, MASTER_ADDR and
 * MASTER_PORT (rank 0 hosts the rendezvous there) and the same COLL_SECRET
 * (a random string: only processes that know it can join). Without WORLD_SIZE it runs as a single rank.
 *   RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 COLL_SECRET=$S ./split &
 *   RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 COLL_SECRET=$S ./split
 */
#include <stdio.h>
#include <stdlib.h>

#include "coll.h"
#include "join.h" /* join(): the communicator from the launcher's environment */

int main(void)
{
    int rank, size;
    coll_comm_t world = join(&rank, &size);
    if (!world)
        return 1;

    /* color = group, key = order inside it (here: the world order) */
    coll_comm_t group;
    coll_status_t st = coll_comm_split(world, rank % 2, rank, &group);
    if (st != COLL_SUCCESS) {
        fprintf(stderr, "rank %d: split: %s\n", rank, coll_last_error());
        return 1;
    }
    int grank, gsize;
    coll_comm_rank(group, &grank);
    coll_comm_size(group, &gsize);
    long long mine = rank, sum = 0, want = 0;
    for (int r = rank % 2; r < size; r += 2)
        want += r;
    st = coll_all_reduce(&mine, &sum, 1, COLL_INT64, COLL_SUM, group);
    int ok = st == COLL_SUCCESS && sum == want && grank == rank / 2;
    printf("split: rank %d of %d: group %d, rank %d of %d, sum of world ranks %lld: %s\n", rank, size, rank % 2, grank,
           gsize, sum, ok ? "ok" : "WRONG");

    /* a rank may stay out: COLL_SPLIT_NOCOLOR gives it NULL */
    coll_comm_t most;
    st = coll_comm_split(world, rank == size - 1 && size > 1 ? COLL_SPLIT_NOCOLOR : 0, 0, &most);
    ok = ok && st == COLL_SUCCESS && (most == NULL) == (rank == size - 1 && size > 1);

    /* communicators are independent: destroy them in any order */
    coll_comm_destroy(world);
    coll_comm_destroy(group);
    if (most)
        coll_comm_destroy(most);
    return ok ? 0 : 1;
}
