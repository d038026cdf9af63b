/* alltoall algorithms, one ALGO(alltoall_<name>) line each, in order of preference. */
ALGO(alltoall_direct)
ALGO(alltoall_cma)
ALGO(alltoall_pairwise)
ALGO(alltoall_bruck)
ALGO(alltoall_hier)
