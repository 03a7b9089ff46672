/* mpi_run.h — dpcorr under an MPI launcher (mpirun, srun): detected at run time from the
 * launcher's environment, so `mpirun -np P dpcorr train ...` takes the same options as one
 * process (doc/distributed.md).
 *
 * Built with MPI (the Makefile defines DPCORR_MPI when mpicc exists): MPI_Init, an MPI
 * transport for the trainer (dpc_transport over MPI_Isend/MPI_Irecv with a deadline), and the
 * output policy: rank 0 prints and writes reports; the other ranks' stdout is discarded and their
 * stderr kept aside, so that a rank failing on its own (a data path it cannot read) sends its
 * message to every other rank, which fail with "rank r failed: <message>" instead of waiting.
 * A silent peer (stopped, or a lost node) ends the job after DPCORR_MPI_TIMEOUT seconds (default
 * 600) with a message naming it; a killed rank is reported by the launcher, which ends the job.
 * Built without MPI: a launch by an MPI launcher with more than one rank is refused (exit 2). */
#ifndef DPCORR_TOOLS_MPI_RUN_H
#define DPCORR_TOOLS_MPI_RUN_H

#include "dpcorr/train.h"

/* Call first in main. Returns 0, or an exit code (the process must exit with it). */
int mpi_run_init(int *argc, char ***argv);
/* Whether the command about to run is data-parallel (train's dp-ftrl, demo): other commands run
 * on rank 0 alone, and mpi_run_skip() tells the other ranks to return at once. */
void mpi_run_command(int distributed);
int mpi_run_skip(void);
/* The trainer's transport when the command is data-parallel under a launcher, else NULL. */
const dpc_transport *mpi_run_transport(void);
size_t mpi_run_rank(void);
size_t mpi_run_size(void);
/* Call last in main with the command's exit code; returns the process's exit code. */
int mpi_run_finish(int rc);

#endif
