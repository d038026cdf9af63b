/* gather algorithms, one ALGO(gather_<name>) line each, in order of preference. */
