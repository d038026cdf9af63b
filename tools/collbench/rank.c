/*
 * rank.c - the start and the end of one measuring rank of a subcommand whose
 * ranks a launcher starts (cb_launch_run: assess, topo, bw -t hosts and
 * bw -t p2p): pin it, join the communicator, name a failed join with the
 * exit code of cbt_exit_of; at the end abort the peers when asked, and free
 * the communicator.
 */
#include "cb.h"

#include <stdio.h>

int cbt_rank_join(const char *tool, const cb_launch_t *l, int rank, int nranks, const coll_unique_id_t *id, int pin,
                  coll_comm_t *comm)
{
    if (pin) {
        char prog[64];
        snprintf(prog, sizeof prog, "collbench %s", tool);
        cb_pin_local_rank(prog, l->kind == CB_LAUNCH_STANDALONE ? rank : 0);
    }
    coll_status_t st = coll_comm_init_rank(comm, nranks, *id, rank);
    if (st != COLL_SUCCESS)
        return cbt_error(tool, cbt_exit_of(st), "rank %d of %d: coll_comm_init_rank: %s: %s", rank, nranks,
                         coll_strerror(st), coll_last_error());
    return CBT_EXIT_OK;
}

int cbt_rank_leave(coll_comm_t comm, int rc, int abort_peers)
{
    if (abort_peers)
        coll_comm_abort(comm);
    coll_comm_destroy(comm);
    return rc;
}
