/* bench/tables-micro.c - the per-call and per-run costs the issue-29 table features add to a
 * default sweep: one clock read per timed iteration, cb_cost_local (after the last size),
 * cb_stall_charge with the watcher off. Build: make bench (build/bench/tables-micro).
 */
#include <stdio.h>
#include <time.h>
#include "driver/driver.h"
static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}
int main(void)
{
    double t0 = now_us(), x = 0;
    int n = 10000000;
    for (int i = 0; i < n; i++)
        x += now_us();
    double per = (now_us() - t0) / n;
    cb_cost_t c;
    double t1 = now_us();
    for (int i = 0; i < 100; i++)
        cb_cost_local(&c, 0.1, 0, 0);
    double cost = (now_us() - t1) / 100;
    double st[4096];
    t1 = now_us();
    for (int i = 0; i < 10000; i++)
        cb_stall_charge(0, st, 30, st + 30);
    double charge = (now_us() - t1) / 10000;
    printf(
        "clock read per iteration: %.1f ns (x=%g)\ncb_cost_local (/proc/self/maps, fds, rusage): %.1f us\ncb_stall_charge(30 iters, watcher off): %.3f us\n",
        per * 1e3, x > 0 ? 1.0 : 0.0, cost, charge);
    return 0;
}
