/* reduce algorithms, one ALGO(reduce_<name>) line each, in order of preference. */
