/*
 * sim.h - `collbench sim`: predicts a collective's time on a cluster layout by
 * running the real algorithms on the simulated transport (src/transport/sim.h).
 * sim.c parses the command line and prints; run.c sets up the ranks'
 * buffers with the test driver's descriptors (tools/driver) and runs a size.
 */
#ifndef CBT_SIM_H
#define CBT_SIM_H

#include "../../driver/driver.h"
#include "../../common/coll_internal.h"

typedef struct {
    int nranks, nhosts;
    int *host_nranks; /* [nhosts] */
    const cb_desc_t *desc;
    cb_opts_t o;      /* sizes, dtype, op, root, check (driver's struct) */
    const char *algo; /* --algo NAME or NULL */
    int json, compare;
    const char *calibration; /* --calibration FILE or NULL */
    int buf_huge;            /* --buf-huge 0|1, -1: as the test executables */
    int iters, warmup;       /* --iters K --warmup W: calls back to back, the mean of the last K */
    coll_sim_params_t p;
} cbt_sim_opts_t;

typedef struct {
    const cbt_sim_opts_t *so;
    coll_sim_t *sim;
    cb_ctx_t *c;    /* [nranks] */
    cb_data_t data; /* shared pattern tables */
    size_t *arrays; /* the ranks' count arrays (shared unless alltoallv) */
    void *shared_send, *shared_recv;
    size_t send_max, recv_max; /* their sizes (coll_sim_alias_map) */
    cb_desc_t d;               /* the descriptor, gather-family check replaced */
    char *pats;                /* gather family: every rank's pattern, computed once */
    size_t *ws;                /* [nranks] each rank's send + receive bytes in the current run */
    int calls;                 /* calls of the collective each rank makes in this run */
} cbt_sim_job_t;

typedef struct {
    size_t bytes;
    double t_us;
    uint64_t wrong;
    const char *algo;                  /* the algorithm rank 0 ran on the world */
    int failed;                        /* the run failed (message printed) */
    unsigned long long msgs, switches; /* simulated messages, context switches */
    double wall_s;                     /* host time of the run */
} cbt_sim_result_t;

int cbt_sim_job_init(cbt_sim_job_t *j, const cbt_sim_opts_t *so);
void cbt_sim_job_free(cbt_sim_job_t *j);
/* One run of size `bytes` with whatever algorithm is forced (coll_algo_force). */
void cbt_sim_job_run(cbt_sim_job_t *j, size_t bytes, cbt_sim_result_t *res);

#endif
