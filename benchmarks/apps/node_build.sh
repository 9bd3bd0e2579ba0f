#!/bin/sh
# Build the C/C++ programs of benchmarks/apps/node_corpus.sh with the pip
# MPICH (the wheel's mpicc/mpicxx, on PATH or in BIN), from sources you
# fetched yourself (never kept in this repository), and put the binaries into
# one folder to carry to the node.
#
# Usage: benchmarks/apps/node_build.sh SRC BUILD APPS
#   SRC: HPCCG/, CoMD/, LULESH/, NPB3.3-MPI/ as their projects publish them
#   BUILD: a scratch folder; the sources are copied there and built
#   APPS: gets test_HPCCG, CoMD-mpi, lulesh2.0, is.A.1 ... is.A.16
# BIN (default: the folder of the mpicc on PATH) holds mpicc and mpicxx. Plain
# -O3/-O2 with no -march, so that the binaries run on another x86-64 host.
# No Fortran: the wheel has no mpif90.
set -e
src=$(cd "$1" && pwd); build=$2; apps=$3
bin=${BIN:-$(dirname "$(command -v mpicc)")}
mkdir -p "$build" "$apps"
build=$(cd "$build" && pwd)
for d in HPCCG CoMD LULESH NPB3.3-MPI; do    # -H: a link (SRC/NPB3.3-MPI may be one) is copied as its folder
    rm -rf "${build:?}/$d"; cp -rH "$src/$d" "$build/"
done
make -C "$build/HPCCG" clean > /dev/null
make -C "$build/HPCCG" CXX="$bin/mpicxx" LINKER="$bin/mpicxx" USE_MPI=-DUSING_MPI CPP_OPT_FLAGS=-O3
rm -f "$build"/CoMD/src-mpi/*.o "$build"/CoMD/bin/* "$build"/CoMD/src-mpi/CoMD_info.h
cp "$build/CoMD/src-mpi/Makefile.vanilla" "$build/CoMD/src-mpi/Makefile"
make -C "$build/CoMD/src-mpi" CC="$bin/mpicc" OPTFLAGS=-O2
rm -f "$build"/LULESH/*.o "$build/LULESH/lulesh2.0"
make -C "$build/LULESH" MPICXX="$bin/mpicxx -DUSE_MPI=1" CXXFLAGS="-O3 -I. -w" LDFLAGS=-O3
npb="$build/NPB3.3-MPI"
sed -e 's/^MPIF77.*/MPIF77 = false/' -e 's/^FLINK.*/FLINK = false/' \
    -e "s|^MPICC.*|MPICC = $bin/mpicc|" -e "s|^CLINK.*|CLINK = $bin/mpicc|" \
    -e 's/^[FC]MPI_\(LIB\|INC\).*//' -e 's/^RAND.*/RAND = randdp/' \
    "$npb/config/make.def.template" > "$npb/config/make.def"
rm -rf "$npb"/bin/* "$npb"/IS/*.o
mkdir -p "$npb/bin"
for n in 1 2 4 8 16; do make -C "$npb" IS NPROCS=$n CLASS=A; done
cp "$build/HPCCG/test_HPCCG" "$build/CoMD/bin/CoMD-mpi" "$build/LULESH/lulesh2.0" \
    "$npb"/bin/is.A.* "$apps/"
ls -la "$apps"
