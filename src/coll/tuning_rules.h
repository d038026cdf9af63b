/*
 * tuning_rules.h - measured selection rules (see tuning_rules.c).
 */
#ifndef COLL_TUNING_RULES_H
#define COLL_TUNING_RULES_H

#include <stddef.h>
#include "coll.h"

enum { COLL_RULE_HOST = 1, COLL_RULE_ANY = 2 };   /* group on one host (shm) / any group */

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
