/* reduce_scatterv algorithms, one ALGO(reduce_scatterv_<name>) line each, in order of preference. */
ALGO(reduce_scatterv_direct)
ALGO(reduce_scatterv_ring)
ALGO(reduce_scatterv_halving)
ALGO(reduce_scatterv_ordered)
