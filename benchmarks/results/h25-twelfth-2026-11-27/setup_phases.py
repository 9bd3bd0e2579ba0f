"""Set-up phases of one run (CPU s): compile, placement, rank set-up, Core(), run;
the peak resident set after each; with --profile, cProfile's top 25 (cumulative).

    PYTHONPATH=<tree>/src .venv/bin/python setup_phases.py {allreduce,jacobi} RANKS [--profile]

``allreduce`` is one 8-byte MPI_Allreduce, ``jacobi`` one iteration of the
engine benchmark's halo exchange, both on the perseus machine.
"""
import cProfile, pstats, resource, sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from engine_jacobi import jacobi_model
from pevpm.machine.presets import parse_machine
from pevpm.machine.transfer import for_placement
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel import engine, fastcore, program as vm
from pevpm.vm.kernel.fastengine import no_cycle_collection
import numpy as np

case, n = sys.argv[1], int(sys.argv[2])
if case == "allreduce":
    b = ModelBuilder(); b.collective("MPI_Allreduce", 8); model = b.build()
else:
    model = jacobi_model(1)
m = parse_machine("perseus")
rng = np.random.default_rng(0)
got = {}
phases = [
    ("compile", lambda: got.update(prog=vm.compiled(model, None))),
    ("place", lambda: got.update(pl=m.topology.place(n))),
    ("ranksetup", lambda: got.update(s=engine.RankSetup.of(got["prog"], model, n, m, None, rng))),
    ("core-init", lambda: got.update(core=fastcore.Core(
        got["s"].codes, got["s"].envs, got["s"].proc_ids, got["s"].factors, m,
        for_placement(m.comm, got["pl"].node_of), rng, got["pl"], None, None, False, None,
        got["prog"].statuses))),
    ("run", lambda: got["core"].run()),
]
prof = cProfile.Profile() if "--profile" in sys.argv else None
line = [case, str(n)]
with no_cycle_collection():
    if prof: prof.enable()
    for name, phase in phases:
        t = time.process_time()
        phase()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        line.append(f"{name} {time.process_time() - t:.2f} s ({peak:.0f} MiB)")
    if prof: prof.disable()
print("  ".join(line))
if prof:
    pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
