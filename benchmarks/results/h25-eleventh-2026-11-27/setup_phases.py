"""Set-up phases of one Jacobi run (CPU s): compile, placement, RankSetup.of, Core(), run.

    PYTHONPATH=<tree>/src .venv/bin/python setup_phases.py RANKS ITERATIONS
"""
import sys, time, resource
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from engine_jacobi import jacobi_model
from pevpm.machine.comm_models import Hockney
from pevpm.machine.machine import Machine
from pevpm.machine.topology import Topology
from pevpm.machine.transfer import for_placement
from pevpm.vm.kernel import engine, fastcore, program as vm
from pevpm.vm.kernel.fastengine import no_cycle_collection
import numpy as np
m = Machine(Hockney(latency=5e-5, bandwidth=1.0e8), Topology(procs_per_node=2))
n = int(sys.argv[1]); it = int(sys.argv[2])
model = jacobi_model(it)
t0 = time.process_time()
prog = vm.compiled(model, None)
rng = np.random.default_rng(0)
with no_cycle_collection():
    t1 = time.process_time()
    pl = m.topology.place(n)
    comm = for_placement(m.comm, pl.node_of)
    t2 = time.process_time()
    s = engine.RankSetup.of(prog, model, n, m, None, rng)
    t3 = time.process_time()
    c = fastcore.Core(s.codes, s.envs, s.proc_ids, s.factors, m, comm, rng, pl, None, None, False, None, prog.statuses)
    t4 = time.process_time()
    r = c.run()
    t5 = time.process_time()
print(f"compile {t1-t0:.2f} place {t2-t1:.2f} ranksetup {t3-t2:.2f} core-init {t4-t3:.2f} run {t5-t4:.2f} rss {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss/1024:.0f} MiB")
