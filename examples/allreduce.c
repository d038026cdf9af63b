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

/* The communicator of this process, from the launcher's environment. */
static coll_comm_t join(void)
{
    const char *ws = getenv("WORLD_SIZE"), *addr = getenv("MASTER_ADDR"), *port = getenv("MASTER_PORT");
    int nranks = ws ? atoi(ws) : 1, rank = ws && getenv("RANK") ? atoi(getenv("RANK")) : 0;
    coll_unique_id_t id;
    coll_status_t st;
    if (nranks == 1)
        st = coll_get_unique_id(&id);
    else if (!addr || !port)
        return fprintf(stderr, "MASTER_ADDR and MASTER_PORT must be set\n"), NULL;
    else if (!getenv("COLL_SECRET") && !getenv("COLL_SECRET_FILE"))
        return fprintf(stderr, "COLL_SECRET must be set (the same random string on every rank)\n"), NULL;
    else if (rank == 0) /* NULL: the secret of COLL_SECRET / COLL_SECRET_FILE */
        st = coll_unique_id_listen(addr, atoi(port), NULL, &id);
    else
        st = coll_unique_id_from_addr(addr, atoi(port), NULL, &id);
    coll_comm_t comm = NULL;
    if (st == COLL_SUCCESS)
        st = coll_comm_init_rank(&comm, nranks, id, rank);
    if (st != COLL_SUCCESS)
        fprintf(stderr, "rank %d: %s: %s\n", rank, coll_strerror(st), coll_last_error());
    return comm;
}

int main(void)
{
    coll_comm_t comm = join();
    if (!comm)
        return 1;
    int rank, size;
    coll_comm_rank(comm, &rank);
    coll_comm_size(comm, &size);

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
