#!/bin/sh
# mpirun -np P gpu-per-rank.sh PROGRAM ARGS...: each rank sees one GPU, the
# one of its node-local rank (Open MPI's OMPI_COMM_WORLD_LOCAL_RANK), as
# CUDA device 0 (for StarPU: one CUDA worker per rank, --ncuda 1).
export CUDA_VISIBLE_DEVICES="${OMPI_COMM_WORLD_LOCAL_RANK:-0}"
exec "$@"
