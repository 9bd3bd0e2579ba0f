#!/bin/bash
# The real runs of docs/own-program.md's accuracy check on any machine with an MPI
# compiler, without pevpm installed there: heat.c built with the region library, a
# warm-up at each count, then 3 calibration runs and 7 measured runs at 1 and 2 ranks,
# interleaved; every run's loop time and region times go to OUT/KIND-N-I/.
#   benchmarks/own_program_runs.sh OUT [MPICC] [MPIEXEC]
# then, here: .venv/bin/python benchmarks/own_program_accuracy.py --recorded OUT
set -eu
out=$1 mpicc=${2:-mpicc} mpiexec=${3:-mpiexec}
root=$(cd "$(dirname "$0")/.." && pwd)
lib=$root/src/pevpm/calibrate/region_c
args="--points 200000 --iterations 2000"
mkdir -p "$out"
"$mpicc" -O2 "$root/examples/heat/heat.c" -I"$lib" "$lib/pevpm_region.c" -lm -o "$out/heat"
{ "$mpiexec" --version 2>&1 | grep -m1 -iE "version|openrte" || true; nproc; uptime; } > "$out/machine.txt"
one() {  # KIND N I: one run, its loop time and region files in OUT/KIND-N-I
    mkdir -p "$out/$1-$2-$3"
    PEVPM_REGION_DIR="$out/$1-$2-$3" "$mpiexec" -n "$2" "$out/heat" $args > "$out/$1-$2-$3/out.txt"
}
for n in 1 2; do "$mpiexec" -n $n "$out/heat" $args > /dev/null; done
for i in 1 2 3; do for n in 1 2; do one cal $n $i; done; done
for i in 1 2 3 4 5 6 7; do for n in 1 2; do one run $n $i; done; done
uptime >> "$out/machine.txt"
