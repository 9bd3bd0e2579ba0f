#!/bin/sh
# Debian's packaged LAMMPS (built with Open MPI) on its in.melt example, through
# benchmarks/apps/pipeline.py: traced at 1, 2 and 4 ranks, replayed, extracted,
# predicted at 1-1,024.  Needs root for apt (or the packages already there):
#     apt-get install -y openmpi-bin libopenmpi-dev lammps
# Usage: benchmarks/apps/lammps_melt.sh [WORK_DIR]   (default /tmp/apps/melt)
set -e
work=${1:-/tmp/apps/melt}
here=$(dirname "$0")
input=/usr/share/lammps/examples/melt/in.melt
command -v lmp >/dev/null && [ -f "$input" ] || {
    echo "lammps_melt.sh: needs Debian's lammps (apt-get install lammps)" >&2; exit 2; }
# Open MPI refuses root unless told; 4 ranks on fewer cores need --oversubscribe
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
exec python "$here/pipeline.py" --name "LAMMPS melt (Debian lammps, Open MPI)" \
    --work "$work" --launcher "/usr/bin/mpirun --oversubscribe -n {n}" \
    --predict 8,64,1024 -- lmp -in "$input" -log none -screen none
