#!/bin/sh
# The corpus of docs/apps.md: public MPI programs nobody here wrote, built with
# Debian's Open MPI from sources you fetched yourself (never kept in this
# repository), each through benchmarks/apps/pipeline.py (traced at 1, 2 and 4
# ranks -- LULESH at 1 and 8, it needs cubes --, replayed, extracted, the model
# run at every count to 1,024 and predicted).
#
# Usage: benchmarks/apps/corpus.sh SRC WORK [PROGRAM...]
#   SRC: a folder holding the sources as their projects publish them:
#        HPCCG/ (Mantevo HPCCG), CoMD/ (ECP-copa CoMD), CloverLeaf_ref/ (UK-MAC),
#        LULESH/ (LLNL LULESH 2), NPB3.3-MPI/ (NAS Parallel Benchmarks 3.3)
#   WORK: where builds' outputs stay untouched and each program's traces, model
#        and pipeline.json go (WORK/PROGRAM)
#   PROGRAM: hpccg comd cloverleaf lulesh npb-cg npb-mg npb-is lammps (default: all)
# Each count is traced REPEATS times (default 3) and the median run kept, each
# run inside `flock LOCK` (default /tmp/pevpm-measure.lock); the inputs run for
# a second or more on one rank of this 2-core host (NPB class A; the step
# counts of the smaller inputs kept, so that the models stay as long).
# Needs root or the packages: apt-get install -y openmpi-bin libopenmpi-dev gfortran lammps
set -e
src=$(cd "$1" && pwd); work=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-python}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
launch="/usr/bin/mpirun --oversubscribe -n {n}"
repeats=${REPEATS:-3}; lock=${LOCK:-/tmp/pevpm-measure.lock}
mkdir -p "$work"
run() {     # NAME LANGUAGE DIR [pipeline options --] COMMAND...
    name=$1 language=$2 dir=$3; shift 3
    mkdir -p "$work/$dir"
    $python "$here/pipeline.py" --name "$name" --language "$language" \
        --mpi "Open MPI 4.1 (Debian)" --work "$work/$dir" --launcher "$launch" \
        --predict 64 --reuse --repeats "$repeats" --lock "$lock" "$@" > "$work/$dir/pipeline.out" ||
        echo "| $name | $language | pipeline failed: see $work/$dir/pipeline.out |" \
            > "$work/$dir/pipeline.out"
    head -1 "$work/$dir/pipeline.out" | tee -a "$work/rows.md"
}
npb() {     # BENCHMARK: class A, one binary per rank count
    def="$src/NPB3.3-MPI/config/make.def"
    [ -f "$def" ] || sed -e 's/^MPIF77.*/MPIF77 = mpif77.openmpi/' \
        -e 's/^FLINK.*/FLINK = mpif77.openmpi/' -e 's/^MPICC.*/MPICC = mpicc.openmpi/' \
        -e 's/^CLINK.*/CLINK = mpicc.openmpi/' -e 's/^[FC]MPI_\(LIB\|INC\).*//' \
        -e 's/^FFLAGS.*/FFLAGS = -O2 -fallow-argument-mismatch -fallow-invalid-boz/' \
        -e 's/^RAND.*/RAND = randdp/' "$src/NPB3.3-MPI/config/make.def.template" > "$def"
    mkdir -p "$src/NPB3.3-MPI/bin"
    for n in 1 2 4; do
        [ -x "$src/NPB3.3-MPI/bin/$1.A.$n" ] || make -C "$src/NPB3.3-MPI" "$1" NPROCS=$n CLASS=A
    done
}
for program in ${@:-hpccg comd cloverleaf lulesh npb-cg npb-mg npb-is lammps}; do
    case $program in
    hpccg)
        [ -x "$src/HPCCG/test_HPCCG" ] || make -C "$src/HPCCG" CXX=mpicxx.openmpi \
            LINKER=mpicxx.openmpi USE_MPI=-DUSING_MPI
        run "HPCCG 1.0 (Mantevo), 48^3 per rank" "C++" hpccg -- \
            "$src/HPCCG/test_HPCCG" 48 48 48 ;;
    comd)
        [ -x "$src/CoMD/bin/CoMD-mpi" ] || { cp "$src/CoMD/src-mpi/Makefile.vanilla" \
            "$src/CoMD/src-mpi/Makefile"; make -C "$src/CoMD/src-mpi" CC=mpicc.openmpi OPTFLAGS=-O2; }
        run "CoMD 1.1 (ECP), LJ, 16^3 cells, ranks along x" C comd -- \
            "$src/CoMD/bin/CoMD-mpi" -i "{n}" -j 1 -k 1 -x 16 -y 16 -z 16 -N 20 -n 10 ;;
    cloverleaf)
        [ -x "$src/CloverLeaf_ref/clover_leaf" ] || make -C "$src/CloverLeaf_ref" COMPILER=GNU \
            MPI_COMPILER=mpif90.openmpi C_MPI_COMPILER=mpicc.openmpi OMP_GNU=
        mkdir -p "$work/cloverleaf"
        # the benchmark's own deck, shrunk to 320 x 320 cells and 40 steps
        sed -e 's/x_cells=.*/x_cells=320/' -e 's/y_cells=.*/y_cells=320/' \
            -e 's/end_step=.*/end_step=40/' -e '/visit_frequency/d' \
            "$src/CloverLeaf_ref/clover.in" > "$work/cloverleaf/clover.in"
        run "CloverLeaf 1.3 (UK-MAC ref), 320^2, 40 steps" Fortran cloverleaf -- \
            "$src/CloverLeaf_ref/clover_leaf" ;;
    lulesh)
        [ -x "$src/LULESH/lulesh2.0" ] || make -C "$src/LULESH" \
            MPICXX="mpicxx.openmpi -DUSE_MPI=1" CXXFLAGS="-O3 -I. -w" LDFLAGS=-O3
        run "LULESH 2.0 (LLNL), 30^3 per rank, 20 cycles" "C++" lulesh --ranks 1,8 \
            --check cubes..1000 -- "$src/LULESH/lulesh2.0" -s 30 -i 20 -q ;;
    npb-cg|npb-mg|npb-is)
        bench=${program#npb-}
        npb "$bench"
        run "NPB 3.3 $(echo "$bench" | tr a-z A-Z) class A" \
            "$([ "$bench" = is ] && echo C || echo Fortran 77)" "$program" -- \
            "$src/NPB3.3-MPI/bin/$bench.A.{n}" ;;
    lammps)
        sed -e 's/^run.*/run 100/' -e 's/block 0 10 0 10 0 10/block 0 13 0 13 0 13/' \
            /usr/share/lammps/examples/melt/in.melt > "$work/in.melt"
        run "LAMMPS melt (Debian lammps), 8,788 atoms, 100 steps" "C++" lammps -- \
            lmp -in "$work/in.melt" -log none -screen none ;;
    *) echo "corpus.sh: unknown program $program" >&2; exit 2 ;;
    esac
done
