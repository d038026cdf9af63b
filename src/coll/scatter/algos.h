/* scatter algorithms, one ALGO(scatter_<name>) line each, in order of preference. */
