/*
 * main.c - entry point of bin/<CB_COLL>_test: the shared driver with the
 * descriptor named at compile time (-DCB_COLL=all_reduce ...).
 */
#include "driver.h"

#ifndef CB_COLL
#error "build with -DCB_COLL=<collective> (see Makefile)"
#endif
#define CB_CAT_(a, b) a##b
#define CB_CAT(a, b) CB_CAT_(a, b)

int main(int argc, char **argv) { return cb_main(&CB_CAT(cb_desc_, CB_COLL), argc, argv); }
