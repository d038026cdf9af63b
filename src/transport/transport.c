/*
 * transport.c - the list of transports every communicator sets up, and the
 * communicator's calls through their tables (set-up, teardown, abort).
 */
#include "transport/transport.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bootstrap/bootstrap.h"
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

void coll_comm_set_aborted(coll_comm *comm, coll_status_t why, const char *fmt, ...)
{
    if (atomic_exchange(&comm->aborted, 1))
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    COLL_INFO(COLL_SUB_INIT, "aborting communicator (%s): %s", coll_strerror(why), msg);
    coll_transports_abort(comm, msg, 0); /* shm: flag in the segment, local peers woken */
    /* every rank, whatever transport reaches it; best effort: a notice that
     * fails must not replace the error the caller is about to return */
    char saved[1024];
    snprintf(saved, sizeof saved, "%s", coll_last_error());
    coll_bootstrap_abort(comm->bs, msg);
    if (!*saved)
        coll_error_clear();
    else if (strcmp(saved, coll_last_error()) != 0)
        coll_error(why, COLL_SUB_INIT, "%s", saved);
    coll_transports_abort(comm, msg, 1); /* tcp, after the notice: peers blocked on our sockets see EOF */
}
