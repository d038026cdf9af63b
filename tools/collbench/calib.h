/*
 * calib.h - the calibration file of `collbench sim` (docs/sim-calibration.md):
 * plain text, one `key = value` per line, `#` comments, the link model's
 * parameters (coll_sim_params_t, src/transport/sim.h) in the units of the
 * sim's command-line flags. Measuring runs (`collbench net --calibration-out`,
 * `collbench bw -t p2p|d2d --calibration-out`) each write the keys they measured
 * into the file, keeping the others; `collbench sim --calibration FILE` reads
 * it, flags given on its command line winning over single keys.
 */
#ifndef CBT_CALIB_H
#define CBT_CALIB_H

#include "../common/coll_internal.h"

typedef struct {
    const char *key;
    double value;
} cbt_calib_kv_t;

/* Sets FILE's keys kv[0..n) (replacing their lines, appending new ones; the
 * other lines are kept) and records `by` (the measuring command) in a comment.
 * Written to FILE.tmp, then renamed. 0, or an exit code after one line on
 * stderr. */
int cbt_calib_write(const char *tool, const char *path, const char *by, const cbt_calib_kv_t *kv, int n);

/* Reads FILE into *p: every key of the file whose bit (1 << index in the key
 * table, cbt_calib_bit) is not in `keep` (the flags given explicitly).
 * 0, or -1 after one line "collbench sim: FILE:LINE: ..." on stderr. */
int cbt_calib_read(const char *tool, const char *path, coll_sim_params_t *p, unsigned keep);

/* One key's value in FILE (no checks beyond the number): 0, or -1 when the
 * file or the key is missing. */
int cbt_calib_get(const char *path, const char *key, double *out);

/* The key table's bit of a key (for the flags that override it); 0 if unknown. */
unsigned cbt_calib_bit(const char *key);

/* Reduction throughput of this core: fp32 sum of two buffers of `bytes`
 * (what a receive-reduce does per byte received), Gbit/s of input. */
double cbt_calib_reduce_gbps(size_t bytes, double seconds);

#endif
