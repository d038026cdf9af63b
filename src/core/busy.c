/*
 * busy.c - coll_machine_busy (busy.h): the machine's run queue against its CPUs.
 */
#include "core/busy.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int busy_fd = -1;
static long busy_cpus;
static pthread_once_t busy_once = PTHREAD_ONCE_INIT;
static _Atomic double busy_next; /* when the next sample is due */
static atomic_int busy_now;

static void busy_open(void)
{
    busy_fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    busy_cpus = sysconf(_SC_NPROCESSORS_ONLN);
}

int coll_busy_running(const char *loadavg)
{
    const char *p = loadavg;
    for (int f = 0; f < 3 && p; f++)
        if ((p = strchr(p, ' ')))
            p++;
    if (!p || *p < '0' || *p > '9')
        return -1;
    char *end;
    long v = strtol(p, &end, 10);
    return *end == '/' && v >= 0 && v <= 1000000 ? (int)v : -1;
}

static int read_running(void)
{
    char b[128];
    ssize_t k = pread(busy_fd, b, sizeof b - 1, 0);
    if (k <= 0)
        return -1;
    b[k] = '\0';
    return coll_busy_running(b);
}

int coll_machine_busy(double now)
{
    if (now < atomic_load_explicit(&busy_next, memory_order_relaxed))
        return atomic_load_explicit(&busy_now, memory_order_relaxed);
    pthread_once(&busy_once, busy_open);
    atomic_store_explicit(&busy_next, now + COLL_BUSY_SAMPLE_S, memory_order_relaxed);
    if (busy_fd < 0 || busy_cpus < 1)
        return 0;
    int running = read_running();
    int b = running > busy_cpus + COLL_BUSY_SLACK;
    atomic_store_explicit(&busy_now, b, memory_order_relaxed);
    return b;
}
