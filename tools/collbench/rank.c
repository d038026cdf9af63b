/*
 * rank.c - one measuring rank of a subcommand whose ranks a launcher starts
 * (cb_launch_run: assess, topo, bw -t hosts and bw -t p2p): place it (pin it
 * to its local rank's CPU, or the job's own placement), join the
 * communicator, name a failed join with the exit code of cbt_exit_of, run the
 * job's body, and free the communicator. What the peers must be told of a
 * failure (coll_comm_abort) the body decides: it knows whether they saw it.
 */
#include "cb.h"

#include <stdio.h>

int cbt_rank_main(void *job, const cb_launch_t *l, int rank, int nranks, const coll_unique_id_t *id)
{
    const cbt_rank_job_t *j = job;
    if (!j->place || !j->place(j->arg, rank)) {
        char prog[64];
        snprintf(prog, sizeof prog, "collbench %s", j->tool);
        cb_pin_local_rank(prog, l->kind == CB_LAUNCH_STANDALONE ? rank : 0);
    }
    coll_comm_t comm;
    coll_status_t st = coll_comm_init_rank(&comm, nranks, *id, rank);
    if (st != COLL_SUCCESS)
        return cbt_error(j->tool, cbt_exit_of(st), "rank %d of %d: coll_comm_init_rank: %s: %s", rank, nranks,
                         coll_strerror(st), coll_last_error());
    int rc = j->body(j->arg, comm, rank, nranks);
    coll_comm_destroy(comm);
    return rc;
}

int cbt_rank_run(cb_launch_t *l, cbt_rank_job_t *job)
{
    int ac = 1;
    char *av0[] = {(char *)"collbench", NULL}, **av = av0;
    return cb_launch_run(l, &ac, &av, cbt_rank_main, job);
}
