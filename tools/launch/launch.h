/*
 * launch.h - how the ranks of a test executable come to exist and meet.
 *   MPI:        OMPI_COMM_WORLD_SIZE / PMI_SIZE set: a plugin built with mpicc
 *               (lib/collbench-mpi-<openmpi|mpich|custom>.so, dlopen'ed) gives
 *               rank/size and broadcasts the unique id; nothing else uses MPI.
 *   env:        torchrun style RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT.
 *   slurm:      srun: SLURM_PROCID / SLURM_NTASKS / SLURM_JOB_NODELIST.
 *   standalone: none of those: this process forks the ranks itself.
 */
#ifndef CB_LAUNCH_H
#define CB_LAUNCH_H

#include <stddef.h>
#include "coll.h"

typedef enum { CB_LAUNCH_STANDALONE = 0, CB_LAUNCH_MPI, CB_LAUNCH_ENV, CB_LAUNCH_SLURM } cb_launch_kind_t;

typedef struct {
    cb_launch_kind_t kind;
    const char *name;  /* "standalone" "openmpi" "mpich" "mpi" "env" "slurm" */
    int nranks;        /* known from the environment before anything starts */
    int rank;          /* env/slurm: this process's rank; else -1 */
    int npus;          /* standalone: ranks to fork */
    const char *prog;  /* for messages */
    char plugin[4096]; /* MPI: plugin path */
} cb_launch_t;

/* Runs one rank; returns its exit code, or'ed with CB_LAUNCH_AGREED when
 * every rank returns that error having agreed on it (they met after it was
 * printed; none is blocked): under mpirun the job then ends with
 * MPI_Finalize, not MPI_Abort, whose kill could reach a rank before its
 * launcher forwarded the rank's last output (MPICH's hydra: the one line that
 * says why). */
#define CB_LAUNCH_AGREED 0x100
typedef int (*cb_rank_fn)(void *arg, const cb_launch_t *l, int rank, int nranks, const coll_unique_id_t *id);

/* Finds the launch mode (no side effect). Returns 0 or 2 with a message. */
int cb_launch_detect(cb_launch_t *l, const char *prog, int npus, char *err, size_t errlen);
/* Starts/joins the ranks and runs fn in each; returns the exit code of this
 * process (standalone: the worst of the children, see launch.c). */
int cb_launch_run(cb_launch_t *l, int *argc, char ***argv, cb_rank_fn fn, void *arg);

/* COLL_TEST_CPUS helpers: "0-3,8,10-11". count: -1 if malformed. */
int cb_cpulist_count(const char *list);
int cb_cpulist_nth(const char *list, int idx);
/* Pins this process to the local_rank-th CPU of COLL_TEST_CPUS (if set). */
void cb_pin_local_rank(const char *prog, int local_rank);
/* Host number idx of a Slurm node list ("node[01-03,07],gpu5"): 0 or -1. */
int cb_nodelist_host(const char *list, int idx, char *out, size_t outlen);
/* Exit code of a set of ranks: the highest of codes 1..4 if any, else 5 when
 * any rank aborted (5, a signal, an unknown code), else 6 when any rank
 * reported the --min-bw gate, else 0. */
int cb_worst_code(const int *codes, int n);

#endif
