"""Set-up phases of one run (CPU s): compile, placement, RankSetup.of, Core(), run;
the peak resident set
(after each phase); with --profile, cProfile's top 25 by cumulative time.

    PYTHONPATH=<tree>/src .venv/bin/python setup_phases.py {allreduce,jacobi} RANKS [--profile]
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

def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

case, n = sys.argv[1], int(sys.argv[2])
if case == "allreduce":
    b = ModelBuilder(); b.collective("MPI_Allreduce", 8); model = b.build()
else:
    model = jacobi_model(1)
m = parse_machine("perseus")
prof = cProfile.Profile() if "--profile" in sys.argv else None
if prof: prof.enable()
t0 = time.process_time()
prog = vm.compiled(model, None)
rng = np.random.default_rng(0)
with no_cycle_collection():
    t1 = time.process_time()
    pl = m.topology.place(n)
    comm = for_placement(m.comm, pl.node_of)
    t2 = time.process_time(); m2 = rss()
    s = engine.RankSetup.of(prog, model, n, m, None, rng)
    t3 = time.process_time(); m3 = rss()
    c = fastcore.Core(s.codes, s.envs, s.proc_ids, s.factors, m, comm, rng, pl, None, None, False, None, prog.statuses)
    t4 = time.process_time(); m4 = rss()
    r = c.run()
    t5 = time.process_time()
if prof: prof.disable()
print(f"{case} {n} compile {t1-t0:.2f} place {t2-t1:.2f} ranksetup {t3-t2:.2f} core-init {t4-t3:.2f} "
      f"run {t5-t4:.2f} total {t5-t0:.2f} rss {rss():.0f} MiB "
      f"(peak after placement {m2:.0f}, rank set-up {m3:.0f}, Core() {m4:.0f})")
if prof:
    pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
