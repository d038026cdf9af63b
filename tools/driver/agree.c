/*
 * agree.c - every rank runs the same command line, or none runs at all.
 *
 * Under mpirun every rank gets the same arguments; under an env launch
 * (torchrun's variables, a job script per node) each process has its own, and
 * options that add or change collectives (--json/--csv/--stats gather hosts and
 * per-iteration times, -n/-w, sizes, types, --in-place ...) would leave the ranks
 * in different calls: a hang until COLL_EXEC_TIMEOUT (seen: rank 0 alone given
 * --json, 30 s, then a timeout naming the wrong call). One allreduce at start
 * compares a hash of what shapes the run; output file names, the table format,
 * --timeout and --hold-after may differ.
 */
#include <stdio.h>
#include <string.h>

#include "../common/fnv.h"
#include "driver.h"

#define PUT(h, x) ((h) = cb_fnv1a((h), &(x), sizeof(x)))

/* FNV-1a over the options that decide which collectives run, in which order. */
static uint64_t opts_hash(const cb_opts_t *o)
{
    uint64_t f = CB_FNV_INIT;
    int json = o->json != NULL, csv = o->csv != NULL;
    PUT(f, o->minbytes), PUT(f, o->maxbytes), PUT(f, o->stepbytes), PUT(f, o->stepfactor);
    PUT(f, o->op), PUT(f, o->dt), PUT(f, o->root), PUT(f, o->iters), PUT(f, o->warmup);
    PUT(f, o->check), PUT(f, o->zero_copy), PUT(f, json), PUT(f, csv), PUT(f, o->agg);
    PUT(f, o->equal_counts), PUT(f, o->min_bw), PUT(f, o->stats), PUT(f, o->in_place);
    PUT(f, o->ndt), PUT(f, o->nop), PUT(f, o->nsizes), PUT(f, o->duration), PUT(f, o->cycles);
    PUT(f, o->off_cache);
    f = cb_fnv1a(f, o->dts, (size_t)o->ndt * sizeof o->dts[0]);
    f = cb_fnv1a(f, o->ops, (size_t)o->nop * sizeof o->ops[0]);
    f = cb_fnv1a(f, o->sizes, (size_t)o->nsizes * sizeof o->sizes[0]);
    f = cb_fnv1a(f, o->algo ? o->algo : "", o->algo ? strlen(o->algo) + 1 : 1);
    return f;
}

int cb_agree_opts(cb_ctx_t *c)
{
    const cb_opts_t *o = c->opts;
    uint64_t h = opts_hash(o), v[2] = {h, ~h}; /* max(h) and max(~h) equal h, ~h on every rank iff all agree */
    coll_status_t st = coll_all_reduce(v, v, 2, COLL_UINT64, COLL_MAX, c->comm);
    if (st != COLL_SUCCESS)
        return cb_fail_call(c, NULL, "coll_all_reduce (options check)", st);
    if (v[0] == h && v[1] == ~h)
        return 0;
    fprintf(stderr,
            "%s: rank %d: the ranks were given different options (this rank's: %s): every rank must run the "
            "same command line (output files, --format, --timeout and --hold-after may differ)\n",
            o->prog, c->rank, o->command);
    return CB_EXIT_USAGE;
}
