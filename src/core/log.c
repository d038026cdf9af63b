/*
 * log.c - COLL_DEBUG levels and subsystems, the per-thread last error.
 */
#include "core/log.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "core/config.h"

int coll_log_level_cur = COLL_LOG_WARN;
static unsigned log_mask = COLL_SUB_ALL;
static FILE *log_file;
static atomic_int log_rank = -1; /* communicators of other threads may set it */
static char log_host[64];
static pthread_once_t log_once = PTHREAD_ONCE_INIT;
static _Thread_local char last_err[1024];

static const struct {
    const char *name;
    unsigned bit;
} subs[] = {
    {"INIT", COLL_SUB_INIT}, {"BOOTSTRAP", COLL_SUB_BOOTSTRAP}, {"SHM", COLL_SUB_SHM},       {"TCP", COLL_SUB_TCP},
    {"NET", COLL_SUB_TCP},   {"COLL", COLL_SUB_COLL},           {"TUNING", COLL_SUB_TUNING}, {"ENV", COLL_SUB_ENV},
    {"ALL", COLL_SUB_ALL},
};

static unsigned parse_mask(const char *s)
{
    unsigned mask = 0;
    int any_incl = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int excl = (*t == '^');
        if (excl)
            t++;
        for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
            if (!strcasecmp(t, subs[i].name)) {
                if (excl) {
                    if (!any_incl)
                        mask = COLL_SUB_ALL, any_incl = 1;
                    mask &= ~subs[i].bit;
                } else {
                    mask |= subs[i].bit, any_incl = 1;
                }
            }
    }
    return any_incl ? mask : COLL_SUB_ALL;
}

static void log_init_once(void)
{
    static const char *levels[] = {"NONE", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"};
    const char *lv = coll_cfg_str(COLL_CFG_DEBUG);
    for (int i = 0; i < 6; i++)
        if (!strcasecmp(lv, levels[i]))
            coll_log_level_cur = i;
    if (!strcasecmp(lv, "VERSION"))
        coll_log_level_cur = COLL_LOG_WARN;
    log_mask = parse_mask(coll_cfg_str(COLL_CFG_DEBUG_SUBSYS));
    gethostname(log_host, sizeof log_host - 1);
    char *dot = strchr(log_host, '.');
    if (dot)
        *dot = '\0';
    const char *f = coll_cfg_str(COLL_CFG_DEBUG_FILE);
    if (*f) {
        char path[512];
        size_t o = 0;
        for (const char *p = f; *p && o + 64 < sizeof path; p++) {
            if (p[0] == '%' && p[1] == 'h') {
                o += (size_t)snprintf(path + o, sizeof path - o, "%s", log_host);
                p++;
            } else if (p[0] == '%' && p[1] == 'p') {
                o += (size_t)snprintf(path + o, sizeof path - o, "%d", (int)getpid());
                p++;
            } else {
                path[o++] = *p;
            }
        }
        path[o] = '\0';
        log_file = fopen(path, "a");
        if (log_file)
            setvbuf(log_file, NULL, _IOLBF, 0);
    }
}

void coll_log_init(void) { pthread_once(&log_once, log_init_once); }

void coll_log_set_rank(int rank) { log_rank = rank; }

int coll_log_get_rank(void) { return log_rank; }

int coll_log_enabled(coll_log_level_t lvl, coll_log_sub_t sub)
{
    coll_log_init();
    return coll_log_level_cur >= (int)lvl && (log_mask & (unsigned)sub);
}

static const char *sub_name(coll_log_sub_t sub)
{
    for (size_t i = 0; i < sizeof subs / sizeof subs[0]; i++)
        if (subs[i].bit == (unsigned)sub)
            return subs[i].name;
    return "COLL";
}

static void vlog(coll_log_level_t lvl, coll_log_sub_t sub, const char *file, int line, const char *fmt, va_list ap)
{
    static const char *lname[] = {"", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"};
    char msg[1200];
    int n = 0;
    int lr = log_rank;
    if (lr >= 0)
        n = snprintf(msg, sizeof msg, "%s:%d [rank %d] COLL %s %s ", log_host, (int)getpid(), lr, lname[lvl],
                     sub_name(sub));
    else
        n = snprintf(msg, sizeof msg, "%s:%d COLL %s %s ", log_host, (int)getpid(), lname[lvl], sub_name(sub));
    if (n < 0)
        n = 0;
    vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    FILE *out = log_file ? log_file : stderr;
    if (lvl >= COLL_LOG_DEBUG)
        fprintf(out, "%s (%s:%d)\n", msg, file, line);
    else
        fprintf(out, "%s\n", msg);
}

void coll_log_msg(coll_log_level_t lvl, coll_log_sub_t sub, const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(lvl, sub, file, line, fmt, ap);
    va_end(ap);
}

static coll_status_t record(coll_status_t st, coll_log_sub_t sub, int with_errno, int err, const char *fmt, va_list ap)
{
    char buf[sizeof last_err];
    vsnprintf(buf, sizeof buf, fmt, ap);
    if (with_errno)
        snprintf(last_err, sizeof last_err, "%s: %s", buf, strerror(err));
    else
        snprintf(last_err, sizeof last_err, "%s", buf);
    COLL_DEBUG(sub, "error %s: %s", coll_strerror(st), last_err);
    return st;
}

coll_status_t coll_error(coll_status_t st, coll_log_sub_t sub, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(st, sub, 0, 0, fmt, ap);
    va_end(ap);
    return st;
}

coll_status_t coll_error_errno(coll_status_t st, coll_log_sub_t sub, const char *fmt, ...)
{
    int err = errno;
    va_list ap;
    va_start(ap, fmt);
    record(st, sub, 1, err, fmt, ap);
    va_end(ap);
    return st;
}

void coll_error_clear(void) { last_err[0] = '\0'; }

const char *coll_last_error(void) { return last_err; }

const char *coll_strerror(coll_status_t st)
{
    static const char *msg[COLL_STATUS_COUNT] = {
        [COLL_SUCCESS] = "success",
        [COLL_ERR_INVALID_ARG] = "invalid argument",
        [COLL_ERR_NO_MEMORY] = "out of memory",
        [COLL_ERR_SYSTEM] = "system call failed",
        [COLL_ERR_NETWORK] = "network error",
        [COLL_ERR_TIMEOUT] = "timeout",
        [COLL_ERR_ABORTED] = "aborted",
        [COLL_ERR_AUTH] = "authentication failed",
        [COLL_ERR_UNSUPPORTED] = "unsupported",
        [COLL_ERR_INTERNAL] = "internal error",
    };
    return (unsigned)st < COLL_STATUS_COUNT ? msg[st] : "unknown status";
}

const char *coll_get_version(int *major, int *minor, int *patch)
{
    if (major)
        *major = COLL_VERSION_MAJOR;
    if (minor)
        *minor = COLL_VERSION_MINOR;
    if (patch)
        *patch = COLL_VERSION_PATCH;
    return COLL_VERSION_STRING;
}
