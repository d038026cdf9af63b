/*
 * tests/lib/fork_ranks.h - fork N ranks of this process and wait for them: the
 * one helper of the tests and benches (matrix, determ, split_test, the unit
 * tests, bench/coll_bench.c, bench/pingpong.c). Header only, so that a test or
 * bench built by a one-line cc command needs no extra object:
 *   #include "../lib/fork_ranks.h"          (from tests/<dir>/)
 *   #include "../tests/lib/fork_ranks.h"    (from bench/)
 * The launcher (tools/launch/launch.c) keeps its own loop: it forwards SIGINT /
 * SIGTERM and gives the ranks a grace period, which these programs do not need.
 *
 *   cb_ranks_run(n, fn, arg, "matrix")   fork, wait, 0 when every rank exited 0
 *   cb_ranks_start / cb_ranks_wait       the same in two steps, for a parent
 *                                        that talks to its ranks in between
 *
 * A rank runs fn(rank, arg) and exits with its value; it dies with the parent
 * (PR_SET_PDEATHSIG). The first rank to fail is named on stderr; when it crashed
 * (a signal, or an exit code other than 0 and 1) the others are stopped with
 * SIGTERM rather than left to wait for it until their timeouts.
 * Scale: waiting polls the N children every millisecond, O(N) each time.
 */
#ifndef CB_FORK_RANKS_H
#define CB_FORK_RANKS_H

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef int (*cb_rank_fn)(int rank, void *arg);

typedef struct {
    int n; /* ranks started */
    pid_t *pid;
    const char *who; /* program name for the messages */
} cb_ranks_t;

static inline void cb_ranks_signal(cb_ranks_t *rs, int sig)
{
    for (int r = 0; r < rs->n; r++)
        if (rs->pid[r] > 0)
            kill(rs->pid[r], sig);
}

/* Reaps every rank; returns 0 when all exited 0, else the status of the first
 * to fail (its exit code, or 128 + the signal that killed it). */
static inline int cb_ranks_wait(cb_ranks_t *rs)
{
    int first = 0, left = rs->n, stopped = 0;
    while (left > 0) {
        int reaped = 0;
        for (int r = 0; r < rs->n; r++) {
            int st;
            if (rs->pid[r] <= 0)
                continue;
            pid_t p = waitpid(rs->pid[r], &st, WNOHANG);
            if (p == 0)
                continue;
            int code;
            if (p < 0) {
                fprintf(stderr, "%s: waitpid of rank %d (pid %d): %s\n", rs->who, r, (int)rs->pid[r], strerror(errno));
                code = 127;
            } else {
                code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            }
            rs->pid[r] = 0;
            left--;
            reaped = 1;
            if (!code || (stopped && p > 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM))
                continue;
            if (p > 0 && WIFSIGNALED(st))
                fprintf(stderr, "%s: rank %d killed by signal %d (%s)\n", rs->who, r, WTERMSIG(st),
                        strsignal(WTERMSIG(st)));
            else
                fprintf(stderr, "%s: rank %d exited with %d\n", rs->who, r, code);
            if (!first)
                first = code;
            if (code != 1 && !stopped) { /* a crash: stop the others rather than wait for timeouts */
                cb_ranks_signal(rs, SIGTERM);
                stopped = 1;
            }
        }
        if (!reaped && left > 0) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
    }
    free(rs->pid);
    rs->pid = NULL;
    rs->n = 0;
    return first;
}

/* Forks n ranks. 0, or -1 when out of memory or a fork fails (the message
 * printed, the ranks already started killed and reaped). */
static inline int cb_ranks_start(cb_ranks_t *rs, int n, cb_rank_fn fn, void *arg, const char *who)
{
    rs->n = 0;
    rs->who = who;
    rs->pid = calloc(n > 0 ? (size_t)n : 1, sizeof *rs->pid);
    if (!rs->pid) {
        fprintf(stderr, "%s: out of memory for %d ranks\n", who, n);
        return -1;
    }
    pid_t parent = getpid();
    fflush(NULL); /* no buffered output printed once per rank */
    for (int r = 0; r < n; r++) {
        pid_t p = fork();
        if (p < 0) {
            fprintf(stderr, "%s: fork of rank %d failed: %s\n", who, r, strerror(errno));
            cb_ranks_signal(rs, SIGKILL);
            cb_ranks_wait(rs);
            return -1;
        }
        if (p == 0) {
            free(rs->pid); /* the parent's bookkeeping (a leak of every rank under valgrind) */
            rs->pid = NULL;
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (getppid() != parent) /* the parent died before prctl */
                _exit(127);
            int rc = fn(r, arg);
            fflush(NULL);
            _exit(rc);
        }
        rs->pid[rs->n++] = p;
    }
    return 0;
}

/* Fork n ranks running fn and wait for them: 0 when every rank exited 0, else
 * the first failure's status (see cb_ranks_wait), -1 when they could not start. */
static inline int cb_ranks_run(int n, cb_rank_fn fn, void *arg, const char *who)
{
    cb_ranks_t rs;
    if (cb_ranks_start(&rs, n, fn, arg, who))
        return -1;
    return cb_ranks_wait(&rs);
}

#endif
