/* alltoall algorithms, one ALGO(alltoall_<name>) line each, in order of preference. */
