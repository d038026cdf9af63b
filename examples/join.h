/*
 * join.h - how every example joins its job: the communicator of this process
 * from the launcher's environment, as torchrun sets it.
 *
 * Every process gets RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT (rank 0
 * hosts the rendezvous there) and the same COLL_SECRET (a random string: only
 * processes that know it can join). Without WORLD_SIZE a program runs as a
 * single rank. Copy it beside your own program, or write your own launch
 * (mpirun: broadcast a coll_get_unique_id with MPI_Bcast).
 */
#ifndef EXAMPLES_JOIN_H
#define EXAMPLES_JOIN_H

#include <stdio.h>
#include <stdlib.h>

#include "coll.h"

/* The communicator of this process, from the launcher's environment, and
 * its rank and size; NULL (after a line on stderr) when it cannot join. */
static inline coll_comm_t join(int *rank_out, int *size_out)
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
    if (st != COLL_SUCCESS) {
        fprintf(stderr, "rank %d: %s: %s\n", rank, coll_strerror(st), coll_last_error());
        return NULL;
    }
    coll_comm_rank(comm, rank_out);
    coll_comm_size(comm, size_out);
    return comm;
}

#endif
