/* broadcast algorithms, one ALGO(broadcast_<name>) line each, in order of preference. */
ALGO(broadcast_direct)
ALGO(broadcast_cma)
ALGO(broadcast_binomial)
ALGO(broadcast_pipeline)
ALGO(broadcast_scatter_allgather)
ALGO(broadcast_hier)
