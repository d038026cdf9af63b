/* scatter algorithms, one ALGO(scatter_<name>) line each, in order of preference. */
ALGO(scatter_direct)
ALGO(scatter_cma)
ALGO(scatter_binomial)
ALGO(scatter_linear)
