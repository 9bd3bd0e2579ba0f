# Sourced (bash) by the scripts run on a many-core node that has Python 3 with
# numpy/scipy/matplotlib but no MPI and no network: sets up the pip MPICH,
# mpi4py and otf2 from a folder of carried packages (node_validation.sh
# prepare writes it) for this shell.
#
#   root=REPO; carried=CARRIED; source "$root/benchmarks/node_env.sh"
#
# Reads root, carried (an absolute path; its one mpich wheel is used), py
# (default python3) and modules (more Python modules the caller needs, checked
# with the set-up's own: "matplotlib yaml", say). Sets prefix (a new temporary
# folder: MPICH unpacked under prefix/mpi, whose mpicc finds lib/ and include/
# beside its bin/; mpi4py and otf2 under prefix/site) and exports PATH,
# LD_LIBRARY_PATH, MPI4PY_LIBMPI, PYTHONPATH (root/src first) and one thread
# per BLAS/OpenMP; ends the shell with a message when a package is missing.
py=${py:-python3}
prefix=$(mktemp -d /tmp/pevpm-node.XXXXXX)
"$py" -m zipfile -e "$carried"/mpich-*.whl "$prefix/wheel"    # no unzip needed
mv "$prefix"/wheel/*.data/data "$prefix/mpi"
chmod +x "$prefix"/mpi/bin/*          # zipfile keeps no permissions
tag=$("$py" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')
"$py" -m pip install -q --no-index --no-deps --no-compile --target "$prefix/site" \
    "$carried"/mpi4py-*-"$tag"-*.whl
cp -r "$carried"/otf2site/. "$prefix/site/"
export PATH="$prefix/mpi/bin:$PATH"
export LD_LIBRARY_PATH="$prefix/mpi/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export MPI4PY_LIBMPI="$prefix/mpi/lib/libmpi.so.12"
export PYTHONPATH="$root/src:$prefix/site${PYTHONPATH:+:$PYTHONPATH}"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PYTHONUNBUFFERED=1
"$py" -c "import mpi4py.MPI, otf2, numpy, scipy${modules:+, ${modules// /, }}" \
    || { echo "node_env.sh: a package is missing (above)" >&2; exit 1; }
