/*
 * transport.c - the list of transports every communicator sets up, and the
 * communicator's calls through their tables (set-up, teardown, abort).
 */
#include "transport/transport.h"

#include "core/log.h"

const coll_transport_ops_t *const coll_transports[] = {&coll_shm_ops, &coll_tcp_ops, NULL};

void coll_transports_prepare(coll_comm *comm, coll_peer_info_t *me)
{
    for (int i = 0; coll_transports[i]; i++) {
        const coll_transport_ops_t *t = coll_transports[i];
        if (t->prepare && t->prepare(comm, me) != COLL_SUCCESS) {
            COLL_INFO(COLL_SUB_INIT, "%s not prepared: %s", t->name, coll_last_error());
            coll_error_clear();
        }
    }
}

coll_status_t coll_transports_agree(coll_comm *comm)
{
    for (int i = 0; coll_transports[i]; i++)
        if (coll_transports[i]->agree)
            COLL_CHECK(coll_transports[i]->agree(comm));
    return COLL_SUCCESS;
}

coll_status_t coll_transports_setup(coll_comm *comm)
{
    for (int i = 0; coll_transports[i]; i++) {
        const coll_transport_ops_t *t = coll_transports[i];
        if (t->setup)
            COLL_CHECK(t->setup(comm));
        if (!t->in_use || !t->in_use(comm))
            continue;
        if ((t->caps & COLL_TP_DIRECT) && t->direct && !comm->direct)
            comm->direct = t->direct;
    }
    return COLL_SUCCESS;
}

void coll_transports_teardown(coll_comm *comm)
{
    comm->direct = NULL;
    for (int i = 0; coll_transports[i]; i++)
        if (coll_transports[i]->teardown)
            coll_transports[i]->teardown(comm);
}

void coll_transports_abort(coll_comm *comm, const char *why, int after_notice)
{
    for (int i = 0; coll_transports[i]; i++) {
        const coll_transport_ops_t *t = coll_transports[i];
        if (t->abort && !!(t->caps & COLL_TP_ABORT_AFTER_NOTICE) == !!after_notice && t->in_use && t->in_use(comm))
            t->abort(comm, why);
    }
}
