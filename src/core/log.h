/*
 * log.h - levelled, subsystem-filtered logging (COLL_DEBUG, COLL_DEBUG_SUBSYS)
 * and the per-thread "last error" that coll_last_error() returns.
 */
#ifndef COLL_LOG_H
#define COLL_LOG_H

#include <errno.h>
#include <string.h>
#include "coll.h"

typedef enum {
    COLL_LOG_NONE = 0,
    COLL_LOG_ERROR,
    COLL_LOG_WARN,
    COLL_LOG_INFO,
    COLL_LOG_DEBUG,
    COLL_LOG_TRACE
} coll_log_level_t;

typedef enum {
    COLL_SUB_INIT = 1 << 0,
    COLL_SUB_BOOTSTRAP = 1 << 1,
    COLL_SUB_SHM = 1 << 2,
    COLL_SUB_TCP = 1 << 3,
    COLL_SUB_COLL = 1 << 4,
    COLL_SUB_TUNING = 1 << 5,
    COLL_SUB_ENV = 1 << 6,
    COLL_SUB_ALL = 0x7f
} coll_log_sub_t;

extern int coll_log_level_cur; /* read often: kept global, set by coll_log_init */
void coll_log_init(void);      /* idempotent; reads the config table */
int coll_log_enabled(coll_log_level_t lvl, coll_log_sub_t sub);
void coll_log_msg(coll_log_level_t lvl, coll_log_sub_t sub, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Rank prefix shown in messages ("[host:pid rank 3]"); set by comm init. */
void coll_log_set_rank(int rank);
int coll_log_get_rank(void); /* -1 when unset */

#define COLL_LOG(lvl, sub, ...) \
    do { \
        if (coll_log_level_cur >= (lvl) && coll_log_enabled((lvl), (sub))) \
            coll_log_msg((lvl), (sub), __FILE__, __LINE__, __VA_ARGS__); \
    } while (0)
#define COLL_WARN(sub, ...) COLL_LOG(COLL_LOG_WARN, sub, __VA_ARGS__)
#define COLL_INFO(sub, ...) COLL_LOG(COLL_LOG_INFO, sub, __VA_ARGS__)
#define COLL_DEBUG(sub, ...) COLL_LOG(COLL_LOG_DEBUG, sub, __VA_ARGS__)
#define COLL_TRACE(sub, ...) COLL_LOG(COLL_LOG_TRACE, sub, __VA_ARGS__)

/* Record the error of this thread (coll_last_error) and log it at ERROR level
 * (DEBUG level when quiet is set in the status context). Returns st. */
coll_status_t coll_error(coll_status_t st, coll_log_sub_t sub, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Same, appending ": strerror(errno)". */
coll_status_t coll_error_errno(coll_status_t st, coll_log_sub_t sub, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void coll_error_clear(void);

/* Check a call returning coll_status_t; on failure log where the error climbs
 * ("-> code") and return it. */
#define COLL_CHECK(call) \
    do { \
        coll_status_t st__ = (call); \
        if (st__ != COLL_SUCCESS) { \
            COLL_DEBUG(COLL_SUB_ALL, "%s -> %s", #call, coll_strerror(st__)); \
            return st__; \
        } \
    } while (0)
/* Same but jump to a cleanup label with st set. */
#define COLL_CHECK_GOTO(call, st, label) \
    do { \
        (st) = (call); \
        if ((st) != COLL_SUCCESS) { \
            COLL_DEBUG(COLL_SUB_ALL, "%s -> %s", #call, coll_strerror(st)); \
            goto label; \
        } \
    } while (0)

#endif
