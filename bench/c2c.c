/*
 * bench/c2c.c - cross-core round trip: two processes pinned to two CPUs pass a
 * cache line back and forth; prints the median of 5 batches in ns per round
 * trip. On the 2-vCPU EPYC VM it reads either ~63 ns or ~330 ns, and which one
 * changes from second to second as the hypervisor places the two vCPUs: near
 * (a shared last-level cache) or far (another CCD). Every staged collective
 * moves lines between the cores, so a run made while far is 3-5x slower
 * (docs/performance.md "Slow launches"); the benches print this figure per
 * round so such rounds can be told apart.
 *
 *   c2c [-n ROUND_TRIPS] [-a CPU] [-b CPU]
 * Default: 20000 round trips a batch, the first two CPUs this process may run
 * on. Prints "c2c_ns N" (0 with one CPU). Exit 1 on a system error.
 */
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    return sched_setaffinity(0, sizeof s, &s);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The child echoes every odd value it sees as the next even one, n times per
 * batch, batches times; the parent times each batch (-1: the child did not
 * answer within 5 s). */
static double batch(_Atomic long *f, long base, long n)
{
    double t = now_ns();
    for (long i = 0; i < n; i++) {
        long v = base + 2 * i;
        atomic_store_explicit(f, v + 1, memory_order_release);
        for (unsigned long spin = 1; atomic_load_explicit(f, memory_order_acquire) != v + 2; spin++)
            if (spin % (1ul << 20) == 0 && now_ns() - t > 5e9)
                return -1;
    }
    return (now_ns() - t) / (double)n;
}

int main(int argc, char **argv)
{
    long n = 20000;
    int a = -1, b = -1, opt;
    while ((opt = getopt(argc, argv, "n:a:b:")) != -1) {
        switch (opt) {
        case 'n': n = atol(optarg); break;
        case 'a': a = atoi(optarg); break;
        case 'b': b = atoi(optarg); break;
        default: fprintf(stderr, "usage: c2c [-n ROUND_TRIPS] [-a CPU] [-b CPU]\n"); return 2;
        }
    }
    if (n < 1) {
        fprintf(stderr, "c2c: -n %ld: want at least 1 round trip\n", n);
        return 2;
    }
    cpu_set_t s;
    if (sched_getaffinity(0, sizeof s, &s) != 0) {
        perror("c2c: sched_getaffinity");
        return 1;
    }
    for (int c = 0; c < CPU_SETSIZE && (a < 0 || b < 0); c++)
        if (CPU_ISSET(c, &s) && c != a) {
            if (a < 0)
                a = c;
            else if (b < 0)
                b = c;
        }
    if (a < 0 || b < 0) {
        printf("c2c_ns 0\n"); /* one CPU: nothing crosses */
        return 0;
    }
    enum { BATCHES = 5 };
    _Atomic long *f = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (f == MAP_FAILED) {
        perror("c2c: mmap");
        return 1;
    }
    atomic_store(f, 0);
    pid_t pid = fork();
    if (pid < 0) {
        perror("c2c: fork");
        return 1;
    }
    if (pid == 0) {
        if (pin(b) != 0)
            _exit(1);
        for (long i = 0; i < BATCHES * n; i++) {
            while (atomic_load_explicit(f, memory_order_acquire) != 2 * i + 1)
                ;
            atomic_store_explicit(f, 2 * i + 2, memory_order_release);
        }
        _exit(0);
    }
    if (pin(a) != 0) {
        perror("c2c: sched_setaffinity");
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        return 1;
    }
    double t[BATCHES];
    for (int k = 0; k < BATCHES; k++)
        if ((t[k] = batch(f, 2L * k * n, n)) < 0) {
            fprintf(stderr, "c2c: no answer from CPU %d within 5 s\n", b);
            kill(pid, SIGKILL);
            waitpid(pid, NULL, 0);
            return 1;
        }
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "c2c: the partner process failed (pinning to CPU %d?)\n", b);
        return 1;
    }
    qsort(t, BATCHES, sizeof t[0], cmp);
    printf("c2c_ns %.0f\n", t[BATCHES / 2]);
    return 0;
}
