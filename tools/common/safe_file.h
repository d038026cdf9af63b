/*
 * safe_file.h - result and calibration files written whole or not at all:
 * a fresh temporary name next to the target (mkstemp: random, O_EXCL, so it
 * never follows a link someone planted), the mode set on purpose (results are
 * meant to be shared: 0644; nothing secret goes into them), flushed to disk,
 * then renamed over the target. Any failure (a full disk included) removes
 * the temporary file and leaves the target as it was.
 */
#ifndef CB_SAFE_FILE_H
#define CB_SAFE_FILE_H

#include <stdio.h>
#include <sys/types.h>

#define CB_RESULT_MODE 0644

typedef struct {
    FILE *f;
    char tmp[4200];
    const char *path;
} cb_safe_file_t;

/* 0, or -1 with errno (the target's directory not writable, path too long). */
int cb_safe_open(cb_safe_file_t *s, const char *path, mode_t mode);
/* Flush, fsync, close, rename: 0, or -1 with errno (the temporary is gone). */
int cb_safe_commit(cb_safe_file_t *s);
/* Give up: close and remove the temporary file. */
void cb_safe_abort(cb_safe_file_t *s);

#endif
