/* allgather algorithms, one ALGO(allgather_<name>) line each, in order of preference. */
