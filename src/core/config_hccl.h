/*
 * config_hccl.h - HCCL's environment names onto collbench's knobs (internal to
 * config.c; the HCCL_* entries themselves are rows of the table in config.h).
 */
#ifndef COLL_CONFIG_HCCL_H
#define COLL_CONFIG_HCCL_H

#include <stddef.h>
#include "core/config.h"

/* The COLL_ knob an HCCL_* entry stands for; COLL_CFG_COUNT when id is not an
 * HCCL_* entry (see coll_hccl_is). */
coll_cfg_id_t coll_hccl_target(coll_cfg_id_t id);
int coll_hccl_is(coll_cfg_id_t id);

/* Translate HCCL_* entry id's value v into its COLL_ knob's text (out), in
 * collbench's units and syntax. Returns 0, or -1 with err = one line naming the
 * variable, the value and what is allowed. Warnings worth printing (HCCL
 * algorithms collbench lacks, and what it uses instead) go to notes, one per
 * line; remarks for INFO go to info. */
int coll_hccl_translate(coll_cfg_id_t id, const char *v, char *out, size_t outlen, char *notes, size_t noteslen,
                        char *info, size_t infolen, char *err, size_t errlen);

/* For an HCCL_* name collbench does not know: the COLL_ setting to use
 * instead, or NULL. */
const char *coll_hccl_hint(const char *name);

#endif
