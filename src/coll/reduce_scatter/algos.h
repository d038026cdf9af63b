/* reduce_scatter algorithms, one ALGO(reduce_scatter_<name>) line each, in order of preference. */
ALGO(reduce_scatter_direct)
ALGO(reduce_scatter_ring)
ALGO(reduce_scatter_halving)
ALGO(reduce_scatter_hier)
ALGO(reduce_scatter_ordered)
