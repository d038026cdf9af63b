/* alltoallv algorithms, one ALGO(alltoallv_<name>) line each, in order of preference. */
