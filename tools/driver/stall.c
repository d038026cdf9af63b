/*
 * stall.c - when this rank did not run. A rank that is stopped (SIGSTOP, a
 * debugger, a descheduled VM) or starved of CPU inside a collective holds every
 * other rank, yet it arrives at the next call no later than they do: its
 * lateness shows in no arrival time. A watcher thread sleeps CB_STALL_TICK_US
 * at a time and notes every wake-up that came more than CB_STALL_MIN_US late:
 * the process did not run in that interval. The timed loop then charges each
 * iteration the stalled time that overlaps it (stats.c adds it to the
 * rank's lateness). Started only when per-iteration statistics are wanted
 * (--json/--csv/--stats): 200 wake-ups a second, a few microseconds each.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include "driver.h"

#define CB_STALL_TICK_US 5000.0
#define CB_STALL_MIN_US 5000.0 /* a wake-up this much late is a stall */
#define CB_STALL_RING 1024

static struct {
    pthread_t tid;
    int running;
    atomic_int stop;
    pthread_mutex_t mu;
    double lo[CB_STALL_RING], hi[CB_STALL_RING]; /* stalled intervals (us, CLOCK_MONOTONIC) */
    unsigned n;                                  /* intervals noted (ring index n % CB_STALL_RING) */
} W = {.mu = PTHREAD_MUTEX_INITIALIZER};

static double mono_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static void *watch(void *arg)
{
    (void)arg;
    struct timespec tick = {0, (long)(CB_STALL_TICK_US * 1e3)};
    double prev = mono_us();
    while (!atomic_load(&W.stop)) {
        nanosleep(&tick, NULL);
        double now = mono_us();
        if (now - prev - CB_STALL_TICK_US > CB_STALL_MIN_US) {
            pthread_mutex_lock(&W.mu);
            W.lo[W.n % CB_STALL_RING] = prev + CB_STALL_TICK_US;
            W.hi[W.n % CB_STALL_RING] = now;
            W.n++;
            pthread_mutex_unlock(&W.mu);
        }
        prev = now;
    }
    return NULL;
}

int cb_stall_start(void)
{
    atomic_store(&W.stop, 0);
    W.n = 0;
    if (pthread_create(&W.tid, NULL, watch, NULL) != 0)
        return -1;
    W.running = 1;
    return 0;
}

void cb_stall_stop(void)
{
    if (!W.running)
        return;
    atomic_store(&W.stop, 1);
    pthread_join(W.tid, NULL);
    W.running = 0;
}

/* stall[i] = stalled time within [t0 + (i ? end[i-1] : 0), t0 + end[i]]. */
void cb_stall_charge(double t0, const double *end, int n, double *stall)
{
    memset(stall, 0, (size_t)n * sizeof(double));
    if (!W.running)
        return;
    pthread_mutex_lock(&W.mu);
    unsigned first = W.n > CB_STALL_RING ? W.n - CB_STALL_RING : 0;
    for (unsigned j = first; j < W.n; j++) {
        double lo = W.lo[j % CB_STALL_RING] - t0, hi = W.hi[j % CB_STALL_RING] - t0;
        for (int i = 0; i < n; i++) { /* end[] ascends: intervals overlap a few iterations */
            double a = i ? end[i - 1] : 0, b = end[i];
            if (b <= lo)
                continue;
            if (a >= hi)
                break;
            stall[i] += (b < hi ? b : hi) - (a > lo ? a : lo);
        }
    }
    pthread_mutex_unlock(&W.mu);
}
