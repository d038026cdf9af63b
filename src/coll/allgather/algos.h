/* allgather algorithms, one ALGO(allgather_<name>) line each, in order of preference. */
ALGO(allgather_direct)
ALGO(allgather_cma)
ALGO(allgather_ring)
ALGO(allgather_bruck)
ALGO(allgather_hier)
