/*
 * fuzz_common.h - helpers shared by the libFuzzer targets (tests/fuzz/fuzz_*.c).
 * Built by tests/fuzz/build.sh; run by tests/mp/80-fuzz.sh.
 */
#ifndef CB_FUZZ_COMMON_H
#define CB_FUZZ_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/config.h"

/* A NUL-terminated heap copy of data[0..len) (ASan sees reads past the end). */
static inline char *fz_strndup(const uint8_t *data, size_t len)
{
    char *s = malloc(len + 1);
    if (!s)
        abort();
    memcpy(s, data, len);
    s[len] = '\0';
    return s;
}

/* The code under test prints warnings with fprintf(stderr): send those to
 * /dev/null. Sanitizer and libFuzzer reports do not go through this FILE. */
static inline void fz_quiet_stderr(void)
{
    FILE *f = fopen("/dev/null", "w");
    if (f)
        stderr = f;
}

/* Once per process: quiet stderr, the library's log off, then extra() when
 * given (a target's own settings). Each call: 1 when the input's size lies in
 * [min, max], else 0 (the target returns 0 at once). Targets that use it link
 * the library's config (core/config.h). */
static inline int fz_setup(size_t size, size_t min, size_t max, void (*extra)(void))
{
    static int init;
    if (!init) {
        init = 1;
        fz_quiet_stderr();
        coll_cfg_set(COLL_CFG_DEBUG, "NONE");
        if (extra)
            extra();
    }
    return size >= min && size <= max;
}

#define FZ_ASSERT(cond) \
    do { \
        if (!(cond)) { \
            fprintf(stdout, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, #cond); \
            fflush(stdout); \
            abort(); \
        } \
    } while (0)

#endif
