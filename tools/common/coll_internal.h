/*
 * coll_internal.h - the one door from tools/ into libcoll's internals.
 *
 * Programs outside this repository use include/coll.h only (the installed
 * header; libcoll.so exports nothing else: -fvisibility=hidden + COLL_API).
 * The collbench executables need a little more than a library user does, and
 * they get it here rather than by including src/ headers one by one. They link
 * lib/libcoll.a (where these symbols are visible), never libcoll.so.
 *
 * What the tools use, by header:
 *   core/config.h    the settings table: coll_cfg_str/int/set/try_set/is_set/check/
 *                    report/print/nondefault, coll_cfg_env_rank, COLL_CFG_*
 *                    and COLL_CFG_ENV_* (launcher), coll_parse_size
 *   coll/algo.h      coll_algo_list, coll_algo_find,
 *                    coll_algo_select (collbench topo)
 *   coll/selection/explain.h  coll_comm_explain, coll_comm_net_cost,
 *                    coll_comm_ranks_per_core, coll_comm_transport_name (topo)
 *   core/netif.h     coll_netif_select, coll_sockaddr_str (topo)
 *   bootstrap/bootstrap.h  coll_id_decode, coll_id_info_t (spdir)
 *   core/auth.h      coll_auth_* (collbench net's challenge-response), coll_sha256
 *   core/copy.h      coll_copy_nt (bw -t d2d's nt method: the transports' copy),
 *                    coll_thp_mode (huge_hint.h: the tools' COLL_BUF_HUGE hint)
 *
 * Not installed, not part of the ABI: any of this may change with the library.
 * Adding a name here is a design decision: prefer putting it in coll.h if a
 * library user would want it too.
 */
#ifndef COLL_INTERNAL_H
#define COLL_INTERNAL_H

#include "coll.h"
#include "core/config.h"
#include "coll/algo.h"
#include "coll/selection/explain.h"
#include "core/netif.h"
#include "bootstrap/bootstrap.h"
#include "core/copy.h"
#include "core/auth.h"
#include "coll/selection/tuning.h" /* collbench sim: the simulated network as measured constants */
#include "transport/sim.h"         /* collbench sim: simulated communicators */

#endif /* COLL_INTERNAL_H */
