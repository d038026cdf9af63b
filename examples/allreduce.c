/*
 * allreduce.c - the smallest libcoll program: every rank adds its vector.
 *
 * Launch like torchrun: every process gets RANK, WORLD_SIZE, MASTER_ADDR and
 * MASTER_PORT (rank 0 hosts the rendezvous there) and the same COLL_SECRET
 * (a random string: only processes that know it can join). Without WORLD_SIZE it runs as a single rank.
 *   RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 COLL_SECRET=$S ./allreduce &
 *   RANK=1 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 COLL_SECRET=$S ./allreduce
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
    float *x = malloc(COUNT * sizeof *x);
    for (int i = 0; i < COUNT; i++)
        x[i] = (float)(rank + 1);
    coll_status_t st = coll_all_reduce(x, x, COUNT, COLL_FP32, COLL_SUM, comm); /* in place */
    if (st != COLL_SUCCESS) {
        fprintf(stderr, "rank %d: allreduce: %s\n", rank, coll_last_error());
        return 1;
    }
    float want = (float)size * (size + 1) / 2;
    int bad = 0;
    for (int i = 0; i < COUNT; i++)
        bad += x[i] != want;
    printf("allreduce: rank %d of %d: %s (every element %g, algorithm %s)\n", rank, size, bad ? "WRONG" : "ok",
           (double)want, coll_comm_last_algo(comm));
    free(x);
    coll_comm_destroy(comm);
    return bad ? 1 : 0;
}
