/*
 * mpi_plugin.c - the only code that touches MPI. Built by mpicc into
 * lib/collbench-mpi-{openmpi,mpich,custom}.so and dlopen'ed by the test
 * executables when mpirun started them: MPI gives rank/size and broadcasts the
 * 128-byte unique id; all communication then goes through libcoll.
 */
#include <mpi.h>
#include <stdio.h>

const char cb_mpi_name[] =
#if defined(OPEN_MPI)
    "openmpi";
#elif defined(MPICH)
    "mpich";
#else
    "mpi";
#endif

static char version_buf[MPI_MAX_LIBRARY_VERSION_STRING];

const char *cb_mpi_version(void)
{
    int len = 0;
    MPI_Get_library_version(version_buf, &len);
    for (int i = 0; i < len; i++)
        if (version_buf[i] == '\n') {
            version_buf[i] = '\0';
            break;
        }
    return version_buf;
}

int cb_mpi_init(int *argc, char ***argv, int *rank, int *size)
{
    if (MPI_Init(argc, argv) != MPI_SUCCESS)
        return -1;
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return 0;
}

int cb_mpi_bcast(void *buf, int bytes, int root)
{
    return MPI_Bcast(buf, bytes, MPI_BYTE, root, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
}

/* Ranks on this node (MPI-3 shared-memory split). */
int cb_mpi_local(int *local_rank, int *local_size)
{
    MPI_Comm node;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
        return -1;
    MPI_Comm_rank(node, local_rank);
    MPI_Comm_size(node, local_size);
    MPI_Comm_free(&node);
    return 0;
}

void cb_mpi_finalize(void) { MPI_Finalize(); }

void cb_mpi_abort(int code)
{
    fflush(stdout);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
}
