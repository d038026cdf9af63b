/* reduce_scatter algorithms, one ALGO(reduce_scatter_<name>) line each, in order of preference. */
