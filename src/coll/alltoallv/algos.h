/* alltoallv algorithms, one ALGO(alltoallv_<name>) line each, in order of preference. */
ALGO(alltoallv_direct)
ALGO(alltoallv_pairwise)
ALGO(alltoallv_bruck)
