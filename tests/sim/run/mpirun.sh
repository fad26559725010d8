#!/bin/sh
# Runs a command under mpirun on this machine: mpirun.sh RANKS COMMAND [ARGS...]
# One place for the flags that make Open MPI work in CI, which runs as root in a container
# with few cores. TILESIM_MPIEXEC names mpirun when it is not on PATH.
set -eu
if [ $# -lt 2 ]; then
  echo "usage: mpirun.sh RANKS COMMAND [ARGS...]" >&2
  exit 2
fi
ranks=$1
shift
# Open MPI refuses root unless both are set.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Shared memory only (one machine), without the single-copy mechanism (CMA), which needs
# ptrace rights that containers often lack; self,vader also keeps Open MPI from probing
# network cards and warning about them.
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
# --oversubscribe: more ranks than cores is fine (CI has 2 cores). --bind-to none: the ranks'
# threads may use every core, and binding fails in some restricted cpusets.
exec "${TILESIM_MPIEXEC:-mpirun}" --oversubscribe --bind-to none -n "$ranks" "$@"
