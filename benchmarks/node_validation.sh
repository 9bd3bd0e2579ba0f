#!/usr/bin/env bash
# Validation on a many-core node that has Python 3 with numpy, scipy, matplotlib,
# PyYAML and tqdm but no MPI and no network: set up the pip MPICH, mpi4py and
# otf2 from a folder of carried packages, run benchmarks/node_validation.py,
# and pack the traces into one file so the results fit in a few files.
#
#   bash benchmarks/node_validation.sh prepare CARRIED      # here, with a network
#   bash benchmarks/node_validation.sh measure CARRIED OUT [node_validation.py options]
#   bash benchmarks/node_validation.sh all CARRIED OUT [options]   # measure + analyse
#
# prepare: the mpich wheel, mpi4py wheels for Python 3.11-3.13 and this
# environment's otf2 (its C library is loaded with ctypes, so it serves any
# Python 3) into CARRIED.  measure/all: MPICH unpacked under one prefix (its
# mpicc finds lib/ and include/ beside its bin/), the rest on PYTHONPATH;
# the node's own results go to OUT (node.json, node.log, machine.db,
# traces.tar.gz; with all also results.json, tables.md, report/).
#
# If CARRIED/osu-src holds an OSU micro-benchmarks source folder (copy it
# there yourself: it is not on PyPI), measure/all then also run
# benchmarks/bench_vs_osu.py (osu_latency beside MPIBench's C core and
# predictions of its loop) for at most OSU_SECONDS (150) into OUT/osu.txt.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
py=${PYTHON:-python3}
phase=${1:?usage: node_validation.sh prepare|measure|all CARRIED [OUT options]}
carried=${2:?the folder of carried packages}
MPICH=${MPICH_VERSION:-5.0.2}
MPI4PY=${MPI4PY_VERSION:-4.1.2}

if [ "$phase" = prepare ]; then
    mkdir -p "$carried"
    platforms=(--platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64
               --platform manylinux2014_x86_64 --platform manylinux_2_5_x86_64
               --platform manylinux1_x86_64)
    "$py" -m pip download -q --no-deps --only-binary=:all: "${platforms[@]}" \
        -d "$carried" "mpich==$MPICH"
    for version in 3.11 3.12 3.13; do
        "$py" -m pip download -q --no-deps --only-binary=:all: --implementation cp \
            --python-version "$version" "${platforms[@]}" -d "$carried" "mpi4py==$MPI4PY"
    done
    site=$("$py" -c 'import otf2, pathlib; print(pathlib.Path(otf2.__file__).parents[1])')
    rm -rf "$carried/otf2site" && mkdir -p "$carried/otf2site"
    cp -r "$site/otf2" "$site/_otf2" "$carried/otf2site/"
    for lib in "$carried"/otf2site/_otf2/_otf2.*.so; do mv "$lib" "$carried/otf2site/_otf2/_otf2.so"; done
    find "$carried/otf2site" -name __pycache__ -prune -exec rm -rf {} +
    du -sh "$carried"
    exit 0
fi

out=${3:?the output folder}
shift 3
carried=$(cd "$carried" && pwd)
modules="matplotlib yaml tqdm"
source "$root/benchmarks/node_env.sh"
echo "node: $("$py" -c "import os; print(len(os.sched_getaffinity(0)))") cores, $("$py" --version), $(mpichversion | head -1)" >&2
status=0
"$py" "$root/benchmarks/node_validation.py" "$phase" "$out" "$@" || status=$?
if [ -d "$carried/osu-src" ]; then
    timeout "${OSU_SECONDS:-150}" "$py" "$root/benchmarks/bench_vs_osu.py" \
        --osu "$carried/osu-src" --rounds "${OSU_ROUNDS:-3}" --workdir "$prefix/osu" \
        > "$out/osu.txt" 2>&1 || echo "node_validation.sh: bench_vs_osu ended with $?" >&2
fi
if [ -d "$out/traces" ]; then
    tar czf "$out/traces.tar.gz" -C "$out" traces && rm -rf "$out/traces"
fi
ls -la "$out" >&2
exit $status
