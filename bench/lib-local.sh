# bench/lib-local.sh - sourced by the single-host benches (run-bench.sh,
# cma-ab.sh): build coll_bench and the MPI twins, and run one MPI's
# mpi_bench on P local ranks, so every bench runs the MPIs with the same
# flags. Expects B (the build folder, e.g. build/bench).

# glibc keeps freed large buffers instead of unmapping them (no page faults
# per call), for every implementation alike
BENCH_TUN="glibc.malloc.mmap_max=0:glibc.malloc.trim_threshold=8589934592"

bench_build_coll() {   # libcoll and $B/coll_bench
    make -s lib &&
        cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Isrc -Ibench -o "$B/coll_bench" bench/coll_bench.c lib/libcoll.a -pthread -lm -ldl
}

bench_build_mpi() {   # bench_build_mpi openmpi|mpich: $B/mpi_bench.IMPL; 1 when that MPI is not installed
    command -v "mpicc.$1" >/dev/null || return 1
    "mpicc.$1" -O2 -Ibench -o "$B/mpi_bench.$1" bench/mpi_bench.c
}

bench_run_mpi() {   # bench_run_mpi openmpi|mpich P MPI_BENCH-ARGS...: mpi_bench on P local ranks
    local impl=$1 p=$2
    shift 2
    case $impl in
        openmpi) GLIBC_TUNABLES=$BENCH_TUN timeout 600 mpirun.openmpi --allow-run-as-root --oversubscribe \
                     --mca mpi_yield_when_idle 1 -x GLIBC_TUNABLES -n "$p" "$B/mpi_bench.openmpi" "$@" ;;
        mpich) GLIBC_TUNABLES=$BENCH_TUN timeout 600 mpirun.mpich -genv GLIBC_TUNABLES "$BENCH_TUN" -n "$p" \
                   "$B/mpi_bench.mpich" "$@" ;;
    esac
}
