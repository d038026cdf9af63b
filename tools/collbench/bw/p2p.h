/*
 * p2p.h - `collbench bw -t p2p` (ascend-dmi --bw -t p2p): point-to-point
 * bandwidth between ranks of libcoll, internal to tools/collbench.
 *   p2p_cmd.c  options, launch (standalone / mpirun / shared directory)
 *   p2p.c      the measurement
 *   p2p_out.c  the ascend-dmi tables, the pair matrix and JSON
 *   spdir.c       the shared-directory rendezvous of --sp 0 / --sp 1
 */
#ifndef CBT_BW_P2P_H
#define CBT_BW_P2P_H

#include <stddef.h>

#include "bw.h"
#include "coll.h"

#define CBT_P2P_NPUS_MAX 64
#define CBT_P2P_HOST_MAX 64
#define CBT_SPDIR_WAIT_S 10.0 /* both ends of --sp 0/1 must start within this */

typedef struct {
    const cbt_bw_opts_t *bw;
    int sp;          /* --sp: -1 not given, 0 source, 1 target, 2 MPI */
    const char *ip;  /* --ip peer address (--sp 0/1) */
    const char *hip; /* --hip own address (--sp 0/1) */
    const char *spp; /* --spp shared directory (--sp 0/1) */
    int ds, dd;      /* --ds/--dd (or -d): device ids of the source (rank 0) and the target
                           (rank 1) on their nodes; -1: no device given, every pair (matrix) */
    int card;        /* -m card: the ids are sockets, not NUMA nodes */
    int dev;         /* -d (shared-directory mode: this end's device); -1 not given */
    int npus;        /* -p: standalone ranks (default 2) */
    int npus_set;
    const char *launch; /* "standalone", "openmpi", ..., "spdir" */
} cbt_p2p_opts_t;

/* What every rank tells the printing rank about itself. */
typedef struct {
    char host[CBT_P2P_HOST_MAX];
    int device; /* the device it is bound to (--ds/--dd/-d), else its local rank */
} cbt_p2p_rank_t;

/* One measurement: unidirectional src -> dst, or bidirectional src <-> dst. */
typedef struct {
    int src, dst, bidi;
    double us;  /* mean elapsed time of one execution */
    double gbs; /* bytes moved (bidi: both directions) / us */
    int ok;     /* received data verified */
} cbt_p2p_result_t;

/* Everything the output needs. pod[r] names rank r ("rank 3" or an address). */
typedef struct {
    const cbt_p2p_opts_t *o;
    int nranks, me;
    const cbt_p2p_rank_t *ranks;
    char (*pod)[64];
    const cbt_p2p_result_t *res;
    int nres;
    const char *transport; /* "shm", "tcp", "shm+tcp" */
} cbt_p2p_report_t;

/* The mode's entry (bw.c's table). */
int cbt_bw_p2p(const cbt_bw_opts_t *bw);

/* Runs the measurements on an initialised communicator and prints (rank 0, or
 * both ends in shared-directory mode). pods: names of the ranks for the tables
 * (NULL: "rank N"). Returns a CBT_EXIT_* code. */
int cbt_p2p_run(coll_comm_t comm, const cbt_p2p_opts_t *o, const char *const *pods);
/* 1 when cbt_p2p_run's failure was a verdict every rank reached and returned
 * alike, after the ranks met again: no peer is left inside a collective, so
 * the caller destroys the communicator without coll_comm_abort (whose notice
 * would turn a peer's exit code into "aborted"). */
int cbt_p2p_agreed(void);
/* Bind this process to device id of card (--ds/--dd/-d): 0, or -1 with the
 * reason kept (cbt_p2p_dev_error) for the settings exchange of cbt_p2p_run to report. */
int cbt_p2p_bind_dev(int card, int id);
const char *cbt_p2p_dev_error(void);

/* p2p_out.c */
void cbt_p2p_print_pair(const cbt_p2p_report_t *r, int first, int count);
void cbt_p2p_print_matrix(const cbt_p2p_report_t *r);
void cbt_p2p_print_json(const cbt_p2p_report_t *r, int first, int count);

/* spdir.c: the shared directory of --sp 0/1 (see spdir.c for the layout and
 * the security rules). Returns a CBT_EXIT_* code. */
int cbt_p2p_spdir(const cbt_p2p_opts_t *o);
/* Path rules alone: 0, or -1 with a message in err. */
int cbt_spdir_check_path(const char *path, char *err, size_t errlen);

#endif
