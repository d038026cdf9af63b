/*
 * coll.c - `collbench assess --tests coll`: the AllReduce sweep of
 * libcoll (coll_all_reduce, FP32 sum, every rank of the hosts) per group of
 * --group-size K consecutive hosts, then on the whole job.
 *
 * Groups: host h is in group h / K; a remainder smaller than K joins the last
 * group (a group of one host would measure shared memory, not the network).
 * Each group is a communicator of its hosts' ranks (coll_comm_split). The
 * whole job's sweep runs first, then all groups' at once (cost independent of H).
 * Sweep: sizes -s, -s/8, -s/64, ... down to 1K (CBT_AS_COLL_SIZES at most);
 * per size one untimed then -et allreduces, each timed by every rank; the
 * execution's time is the slowest rank's (an element-wise MAX allreduce of
 * the times over the group), the figure the bus bandwidth of the median
 * execution: SIZE / t x 2(n-1)/n for n ranks (nccl-tests' factor), so groups
 * of different rank counts compare.
 * Confirmation as for pairs: a group whose bus bandwidth at the largest size
 * is below the threshold x the median group runs again alone (the others
 * wait), CBT_AS_CONFIRM passes at most, best kept (report.c names it).
 * Cost: (groups at once + the job) x sizes x (et + 1) allreduces; memory 2 x
 * SIZE per rank.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "assess.h"
#include "../cb.h"

static const char *TOOL = "assess";

static int sizes_of(unsigned long long size, unsigned long long *out)
{
    int k = 0;
    for (unsigned long long s = size; k < CBT_AS_COLL_SIZES && s >= 1024; s /= 8)
        out[k++] = s & ~3ULL;
    return k;
}

typedef struct {
    int32_t group; /* group reported (its rank 0), -1 none, -2 the whole job */
    int32_t pad;
    double bus[CBT_AS_COLL_SIZES];
} crec_t;

/* The sweep on communicator cm (every member calls it); bus[] on every member. */
static int sweep(cbt_as_ctx_t *c, coll_comm_t cm, float *sb, float *rb, double *ex, double *bus)
{
    unsigned long long sz[CBT_AS_COLL_SIZES];
    int ns = sizes_of(c->o->size, sz), nr = 1;
    long long et = c->o->et;
    coll_status_t st = coll_comm_size(cm, &nr);
    for (int i = 0; i < ns && st == COLL_SUCCESS; i++) {
        size_t cnt = (size_t)(sz[i] / 4);
        for (long long t = -1; t < et && st == COLL_SUCCESS; t++) {
            double t0 = cbt_now();
            st = coll_all_reduce(sb, rb, cnt, COLL_FP32, COLL_SUM, cm);
            if (t >= 0)
                ex[t] = cbt_now() - t0;
        }
        if (st == COLL_SUCCESS) /* per execution the slowest rank */
            st = coll_all_reduce(ex, ex + et, (size_t)et, COLL_FP64, COLL_MAX, cm);
        double med = cbt_as_median(ex + et, (int)et);
        bus[i] = (double)sz[i] / (med > 0 ? med : 1e-9) / 1e9 * (nr > 1 ? 2.0 * (nr - 1) / nr : 1.0);
    }
    if (st != COLL_SUCCESS) {
        int rc = cbt_error(TOOL, cbt_exit_of(st), "rank %d: coll sweep: %s: %s", c->rank, coll_strerror(st),
                           coll_last_error());
        coll_comm_abort(c->comm);
        return rc;
    }
    return CBT_EXIT_OK;
}

/* One step: groups (which = -1 all, else that group alone) or the job (-2). */
static int step(cbt_as_ctx_t *c, int which, int mygrp, float *sb, float *rb, double *ex, crec_t *all)
{
    coll_comm_t gc = NULL;
    int rc, grank = 0;
    crec_t me = {.group = -1};
    coll_status_t st = coll_barrier(c->comm);
    if (st != COLL_SUCCESS) {
        rc = cbt_error(TOOL, cbt_exit_of(st), "rank %d: barrier: %s", c->rank, coll_strerror(st));
        coll_comm_abort(c->comm);
        return rc;
    }
    if (which == -2) {
        if ((rc = sweep(c, c->comm, sb, rb, ex, me.bus)))
            return rc;
        me.group = c->rank == 0 ? -2 : -1;
    } else {
        /* the group's communicator lives for this step only (made by every
         * rank: coll_comm_split is collective over the job; a rank of another
         * group passes no colour). Its init's network probe keeps the job's
         * constants (coll_net_probe): a probe of its own hosts had left the
         * job's ranks with different ones, and the job's next collective
         * hung (different algorithms on different ranks). */
        int in = which == -1 || which == mygrp;
        st = coll_comm_split(c->comm, in ? mygrp : COLL_SPLIT_NOCOLOR, c->rank, &gc);
        if (st != COLL_SUCCESS) {
            rc = cbt_error(TOOL, cbt_exit_of(st), "rank %d: coll_comm_split: %s: %s", c->rank, coll_strerror(st),
                           coll_last_error());
            coll_comm_abort(c->comm);
            return rc;
        }
        if (in) {
            rc = sweep(c, gc, sb, rb, ex, me.bus);
            coll_comm_rank(gc, &grank);
            if (!rc && (st = coll_barrier(gc)) != COLL_SUCCESS)
                rc = cbt_error(TOOL, cbt_exit_of(st), "rank %d: group barrier: %s", c->rank, coll_strerror(st));
            coll_comm_destroy(gc);
            if (rc)
                return rc;
            me.group = grank == 0 ? mygrp : -1;
        }
    }
    if ((st = coll_gather(&me, all, sizeof me, COLL_UINT8, 0, c->comm)) != COLL_SUCCESS) {
        rc = cbt_error(TOOL, cbt_exit_of(st), "rank %d: gather: %s", c->rank, coll_strerror(st));
        coll_comm_abort(c->comm);
        return rc;
    }
    if (c->rank != 0)
        return CBT_EXIT_OK;
    cbt_as_result_t *r = c->res;
    for (int k = 0; k < c->nranks; k++) {
        const crec_t *x = &all[k];
        if (x->group == -2)
            memcpy(r->job_bus, x->bus, sizeof r->job_bus);
        if (x->group < 0)
            continue;
        for (int i = 0; i < r->ncsizes; i++) {
            double *v = &r->gbus[x->group * CBT_AS_COLL_SIZES + i];
            if (which >= 0) {
                r->gbus_again[x->group * CBT_AS_COLL_SIZES + i] = x->bus[i];
                *v = cbt_as_better(0, *v, x->bus[i]);
            } else {
                *v = x->bus[i];
            }
        }
    }
    return CBT_EXIT_OK;
}

typedef struct {
    int mygrp;
    float *sb, *rb;
    double *ex;
    crec_t *all;
} coll_bufs_t;

static void coll_find(cbt_as_ctx_t *c, int pass, int *sus, void *arg)
{
    sus[0] = cbt_as_coll_suspects(c->res, c->o->threshold, sus + 1);
}

static int coll_again(cbt_as_ctx_t *c, const int *sus, int k, void *arg)
{
    coll_bufs_t *b = arg;
    return step(c, sus[1 + k], b->mygrp, b->sb, b->rb, b->ex, b->all);
}

int cbt_as_coll(cbt_as_ctx_t *c)
{
    int n = c->nhosts, rc = CBT_EXIT_OK;
    int *grp = malloc((size_t)n * sizeof *grp), *sus = malloc((size_t)(n + 1) * sizeof *sus);
    long long et = c->o->et;
    size_t sz = (size_t)(c->o->size & ~3ULL);
    float *sb = malloc(sz), *rb = malloc(sz);
    double *ex = calloc((size_t)et * 2, sizeof *ex);
    crec_t *all = c->rank == 0 ? calloc((size_t)c->nranks, sizeof *all) : NULL;
    if (!grp || !sus || !sb || !rb || !ex || (c->rank == 0 && !all)) {
        free(grp), free(sus), free(sb), free(rb), free(ex), free(all);
        return cbt_error(TOOL, CBT_EXIT_FAIL, "out of memory");
    }
    for (size_t i = 0; i < sz / 4; i++)
        sb[i] = 1.0f;
    int ng = cbt_as_groups(n, (int)c->o->group_size, grp), mygrp = grp[c->me_host];
    if (c->rank == 0) {
        cbt_as_result_t *r = c->res;
        r->ngroups = ng, r->ncsizes = sizes_of(c->o->size, r->csize);
        memcpy(r->grp, grp, (size_t)n * sizeof *grp);
    }
    /* the whole job first, then every group at once (one communicator per
     * group, ranked as in the job, made per step: step()) */
    double t_start = cbt_now();
    if ((rc = step(c, -2, mygrp, sb, rb, ex, all)))
        goto out;
    if (c->rank == 0 && !c->o->quiet)
        cbt_as_progress("coll (whole job)", 1, 2, t_start);
    if ((rc = step(c, -1, mygrp, sb, rb, ex, all)))
        goto out;
    if (c->rank == 0 && !c->o->quiet)
        cbt_as_progress("coll (groups at once)", 2, 2, t_start);
    if (ng > 1) {
        coll_bufs_t cb = {mygrp, sb, rb, ex, all};
        cbt_as_confirm_t cf = {"coll confirmation", NULL, CBT_AS_CONFIRM, 1, (size_t)n + 1, coll_find, coll_again, &cb};
        rc = cbt_as_confirm(c, &cf, sus);
    }
out:
    free(grp), free(sus), free(sb), free(rb), free(ex), free(all);
    return rc;
}
