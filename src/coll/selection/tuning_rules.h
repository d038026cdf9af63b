/*
 * tuning_rules.h - measured selection rules (see tuning_rules.c).
 */
#ifndef COLL_TUNING_RULES_H
#define COLL_TUNING_RULES_H

#include <stddef.h>
#include "coll.h"

/* Scope: a group on one host (shm); any group; a group on one host while some
 * host runs more than COLL_RULE_CROWDED_RATIO ranks per core (coll_tuning_oversub):
 * there, single-copy paths that want a core per rank lose to staged ones; a
 * group on one host whose callers' buffers are on 2 MiB pages (comm->buf_huge,
 * COLL_BUF_HUGE): there process_vm_readv pins 512 times fewer pages. */
enum { COLL_RULE_HOST = 1, COLL_RULE_ANY = 2, COLL_RULE_CROWDED = 3, COLL_RULE_HUGE = 4 };
#define COLL_RULE_CROWDED_RATIO 2.0

typedef struct {
    coll_kind_t kind;
    int scope;
    int pmin, pmax;
    size_t bytes_min, bytes_max;
    const char *algo;
} coll_tuning_rule_t;

/* Terminated by an entry with algo == NULL. */
extern const coll_tuning_rule_t coll_tuning_rules[];

#endif
