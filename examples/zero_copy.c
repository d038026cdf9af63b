/*
 * zero_copy.c - AllReduce on memory from coll_mem_alloc: ranks of one host
 * read each other's buffer directly (no copy into the library's shared
 * memory). coll_mem_alloc and coll_mem_free are collective.
 *
 * Launch like torchrun: every process gets RANK, WORLD_SIZE, MASTER_ADDR and
 * MASTER_PORT (rank 0 hosts the rendezvous there) and the same COLL_SECRET
 * (a random string: only processes that know it can join). Without WORLD_SIZE it runs as a single rank.
 *   RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 COLL_SECRET=$S ./zero_copy &
 *   RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 COLL_SECRET=$S ./zero_copy
 */
#include <stdio.h>
#include <stdlib.h>

#include "coll.h"
#include "join.h" /* join(): the communicator from the launcher's environment */

int main(void)
{
    int rank, size;
    coll_comm_t comm = join(&rank, &size);
    if (!comm)
        return 1;

    enum { COUNT = 1 << 20 };
    double *x;
    coll_status_t st = coll_mem_alloc(comm, COUNT * sizeof *x, (void **)&x);
    if (st != COLL_SUCCESS) {
        fprintf(stderr, "rank %d: coll_mem_alloc: %s\n", rank, coll_last_error());
        return 1;
    }
    int bad = 0;
    for (int iter = 0; iter < 3; iter++) { /* the buffer is reused: that is the point */
        for (int i = 0; i < COUNT; i++)
            x[i] = rank + i % 7 + iter;
        st = coll_all_reduce(x, x, COUNT, COLL_FP64, COLL_SUM, comm);
        if (st != COLL_SUCCESS) {
            fprintf(stderr, "rank %d: allreduce: %s\n", rank, coll_last_error());
            return 1;
        }
        for (int i = 0; i < COUNT; i++)
            bad += x[i] != (double)size * (size - 1) / 2 + (double)size * (i % 7 + iter);
    }
    printf("zero_copy: rank %d of %d: %s (algorithm %s)\n", rank, size, bad ? "WRONG" : "ok",
           coll_comm_last_algo(comm));
    coll_mem_free(comm, x);
    coll_comm_destroy(comm);
    return bad ? 1 : 0;
}
