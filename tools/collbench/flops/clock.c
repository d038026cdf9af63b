/*
 * clock.c - the clock a core actually runs at, for `collbench flops`'
 * measured peak. /proc/cpuinfo's 'cpu MHz' (or cpufreq's maximum) is a
 * nominal figure: a VM shows its host's base clock while the cores turbo above
 * it, and AVX-512 licences run below it. Here a chain of dependent integer
 * adds (each needs the one before: one per cycle on every current x86-64 and
 * Arm64 core, whatever the width of the machine) is timed with the monotonic
 * clock: adds / seconds = cycles / second. The best of a few short runs is
 * kept, so a run that was preempted does not count.
 */
#include <stdint.h>

#include "../cb.h"
#include "flops.h"

#define CHAIN 32 /* dependent adds per loop iteration */

/* n iterations of CHAIN dependent adds; returns x so none is dead. */
static uint64_t add_chain(uint64_t n, uint64_t x)
{
    for (uint64_t i = 0; i < n; i++) {
#if defined(__x86_64__) || defined(__i386__)
#define A1 "add $1, %0\n\t"
        __asm__ volatile(A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1
                         : "+r"(x));
#undef A1
#elif defined(__aarch64__)
#define A1 "add %0, %0, #1\n\t"
        __asm__ volatile(A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1 A1
                         : "+r"(x));
#undef A1
#else
        for (int j = 0; j < CHAIN; j++) {
            x += 1;
            __asm__ volatile("" : "+r"(x));
        }
#endif
    }
    return x;
}

double cbt_flops_clock_ghz(void)
{
    const uint64_t n = 1u << 14; /* 0.5M adds: ~0.15 ms at 3 GHz, short enough to run unpreempted */
    double best = 0;
    uint64_t x = 0;
    for (int r = 0; r < 15; r++) {
        double t0 = cbt_now();
        x = add_chain(n, x);
        double t = cbt_now() - t0;
        if (t > 0 && (double)(n * CHAIN) / t / 1e9 > best)
            best = (double)(n * CHAIN) / t / 1e9;
    }
    return x == (uint64_t)15 * n * CHAIN ? best : 0;
}
