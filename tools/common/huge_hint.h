/*
 * huge_hint.h - the one rule by which the test tools tell libcoll's selection
 * that their private buffers are on 2 MiB pages (huge_buf.h): the driver of
 * the *_test executables and bench/coll_bench both call it before their
 * communicator is made, so they select alike. Needs libcoll's config table,
 * which mpi_bench (also a huge_buf.h user) does not link: hence apart.
 */
#ifndef CB_HUGE_HINT_H
#define CB_HUGE_HINT_H

#include "coll_internal.h" /* the config table, coll_thp_mode */

/* Private buffers allocated huge-first (`huge`: COLL_TEST_HUGE) where the
 * kernel has transparent huge pages: COLL_BUF_HUGE=1, unless the user set
 * it. The same on every rank (same settings, same sysfs). */
static inline void cb_buf_huge_hint(int huge)
{
    if (huge && coll_thp_mode() != COLL_THP_NEVER && !coll_cfg_is_set(COLL_CFG_BUF_HUGE))
        coll_cfg_set(COLL_CFG_BUF_HUGE, "1");
}

#endif
