/* The algorithm table, assembled from one list per collective folder
 * (src/coll/<collective>/algos.h: one ALGO(<collective>_<name>) line per file
 * <collective>_<name>.c). Included by registry.c with ALGO(x) defined. */
#include "coll/allreduce/algos.h"
#include "coll/allgather/algos.h"
#include "coll/allgatherv/algos.h"
#include "coll/reduce_scatter/algos.h"
#include "coll/reduce_scatterv/algos.h"
#include "coll/reduce/algos.h"
#include "coll/broadcast/algos.h"
#include "coll/scatter/algos.h"
#include "coll/gather/algos.h"
#include "coll/alltoall/algos.h"
#include "coll/alltoallv/algos.h"
#include "coll/barrier/algos.h"
