#!/usr/bin/env bash
# The C/C++ corpus traced on a many-core node that has Python 3 with numpy and
# scipy but no MPI and no network (docs/apps.md, "On a 16-core node"): the pip
# MPICH, mpi4py and otf2 set up from the carried packages as
# benchmarks/node_validation.sh does (benchmarks/node_env.sh), then
# benchmarks/apps/node_corpus.py runs the programs in APPS, one rank a core.
#
#   bash benchmarks/apps/node_corpus.sh CARRIED APPS OUT [node_corpus.py options]
#
# CARRIED: the folder node_validation.sh prepare wrote; APPS: HPCCG, CoMD,
# LULESH and NPB IS built with that MPICH's mpicc/mpicxx (test_HPCCG, CoMD-mpi,
# lulesh2.0, is.A.1 ... is.A.16); OUT gets node_corpus.json, node_corpus.log
# and one traces-PROGRAM.tar.gz a program.  Options: --deadline S (330),
# --max-ranks N (the usable cores), --repeats K (2), --programs a,b.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
py=${PYTHON:-python3}
carried=$(cd "${1:?the folder of carried packages}" && pwd)
apps=$(cd "${2:?the folder of built programs}" && pwd)
out=${3:?the output folder}
shift 3
mkdir -p "$out"
source "$root/benchmarks/node_env.sh"
status=0
{
    echo "node: $("$py" -c "import os; print(len(os.sched_getaffinity(0)))") cores," \
         "$("$py" --version), $(mpichversion | head -1), $(uptime)"
    lscpu 2>/dev/null | grep -E '^(Model name|Socket|Core|Thread|CPU\(s\)|NUMA node\(s\))' || true
    "$py" "$root/benchmarks/apps/node_corpus.py" "$apps" "$out" "$@"
} > >(tee "$out/node_corpus.log") 2>&1 || status=$?
rm -rf "$prefix"
ls -la "$out"
exit $status
