/* reduce_scatterv algorithms, one ALGO(reduce_scatterv_<name>) line each, in order of preference. */
