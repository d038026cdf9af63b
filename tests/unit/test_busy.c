/*
 * test_busy.c - coll_machine_busy (core/busy.h): the /proc/loadavg parser on
 * good and bad lines, and the live answer while more CPU hogs run than the
 * machine has CPUs (a forked busy loop each, killed at the end).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/busy.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void parse(void **state)
{
    (void)state;
    assert_int_equal(coll_busy_running("0.52 0.58 0.59 3/311 12345\n"), 3);
    assert_int_equal(coll_busy_running("10.28 8.66 14.53 12/402 99"), 12);
    assert_int_equal(coll_busy_running("0.00 0.00 0.00 0/1 1"), 0);
    assert_int_equal(coll_busy_running(""), -1);
    assert_int_equal(coll_busy_running("0.52 0.58 0.59"), -1);
    assert_int_equal(coll_busy_running("0.52 0.58 0.59 x/311 1"), -1);
    assert_int_equal(coll_busy_running("0.52 0.58 0.59 3 1"), -1);
    assert_int_equal(coll_busy_running("0.52 0.58 0.59 -3/311 1"), -1);
}

/* ncpu + 2 hogs: the run queue holds more than the CPUs, sampled within 2 s. */
static void hogs(void **state)
{
    (void)state;
    long n = sysconf(_SC_NPROCESSORS_ONLN) + 2;
    pid_t pid[256];
    assert_true(n > 2 && n < 256);
    for (long i = 0; i < n; i++) {
        pid[i] = fork();
        assert_true(pid[i] >= 0);
        if (pid[i] == 0) {
            alarm(30); /* never outlive the test */
            for (volatile unsigned long x = 0;; x++)
                ;
        }
    }
    int seen = 0;
    double t0 = now_s();
    while (!seen && now_s() - t0 < 2.0) {
        seen = coll_machine_busy(now_s());
        usleep(2000);
    }
    for (long i = 0; i < n; i++) {
        kill(pid[i], SIGKILL);
        waitpid(pid[i], NULL, 0);
    }
    assert_true(seen);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(parse), cmocka_unit_test(hogs)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
