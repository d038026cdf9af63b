/*
 * busy.h - is this machine's CPU oversubscribed right now? The spin policy's
 * other input (transport/wait.c, coll/prim.c).
 *
 * A waiting rank spins because a peer's answer usually comes sooner than a
 * sleep and a wake-up. That holds only while every runnable task has a core.
 * On a machine loaded by other work (a build, data loaders, the training
 * job's own compute threads) a spinner takes a core from the task it waits
 * for, and the scheduler charges it for the spin: measured here with 2 ranks
 * over TCP between two namespace "hosts" on 2 cores while other jobs kept
 * 5-10 tasks runnable, AllGather 8K-64K at hccl_test's defaults took a median
 * 2-5 ms per call spinning (COLL_TCP_SPIN_US auto = 2000) and 30-70 us
 * sleeping at once. The ranks' own count (COLL_TCP_SPIN_US auto, the
 * oversubscribed spin cap) cannot see other processes; this can.
 */
#ifndef COLL_BUSY_H
#define COLL_BUSY_H

#define COLL_BUSY_SAMPLE_S 0.01 /* the run queue is read at most this often a process */
/* Runnable tasks beyond the CPUs that do not yet make the machine busy: the
 * kernel's own threads (softirq processing of TCP between namespace hosts runs
 * beside the two ranks of a 64 MiB AllReduce on 2 cores: 3 runnable in 10% of
 * 1 ms samples, 4 or more in 2.4%; counting 3 as busy took away the spin that
 * makes that AllReduce 1.6x faster, 0.61x of the build before). */
#define COLL_BUSY_SLACK 1

/* 1 when more tasks are runnable on this machine than it has online CPUs plus
 * COLL_BUSY_SLACK (/proc/loadavg's running count, which includes the caller), as of a sample
 * at most COLL_BUSY_SAMPLE_S old (now = coll_now()); 0 otherwise or when it
 * cannot be read. O(1), one pread of /proc/loadavg per sample (~5 us here),
 * safe from any thread. */
int coll_machine_busy(double now);

/* The runnable count of a /proc/loadavg line ("0.52 0.58 0.59 3/311 12345"
 * gives 3), or -1 when the line is not of that form. */
int coll_busy_running(const char *loadavg);

#endif
