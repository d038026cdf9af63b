/*
 * safe_file.c - see safe_file.h.
 */
#include "safe_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cb_safe_open(cb_safe_file_t *s, const char *path, mode_t mode)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    if (snprintf(s->tmp, sizeof s->tmp, "%s.tmp.XXXXXX", path) >= (int)sizeof s->tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = mkstemp(s->tmp); /* O_CREAT | O_EXCL, mode 0600 */
    if (fd < 0)
        return -1;
    if (fchmod(fd, mode) != 0 || !(s->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        unlink(s->tmp);
        errno = e;
        return -1;
    }
    return 0;
}

int cb_safe_commit(cb_safe_file_t *s)
{
    int bad = fflush(s->f) != 0 || ferror(s->f) || fsync(fileno(s->f)) != 0;
    int e = errno;
    if (fclose(s->f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    s->f = NULL;
    if (!bad && rename(s->tmp, s->path) != 0) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        unlink(s->tmp);
        errno = e ? e : EIO;
        return -1;
    }
    return 0;
}

void cb_safe_abort(cb_safe_file_t *s)
{
    if (s->f)
        fclose(s->f);
    s->f = NULL;
    unlink(s->tmp);
}
