"""Jacobi: compile, set-up and run split, N ranks, K repeats."""
import sys, time, gc
sys.path.insert(0, "benchmarks")
import numpy as np
from engine_jacobi import jacobi_model
from pevpm.machine.comm_models import Hockney
from pevpm.machine.machine import Machine
from pevpm.machine.topology import Topology
from pevpm.vm.kernel import engine, fastcore, program as vm
from pevpm.vm.kernel.fastengine import for_placement
n = int(sys.argv[1]); runs = int(sys.argv[2]); it = int(sys.argv[3]) if len(sys.argv) > 3 else 1000
model = jacobi_model(it)
machine = Machine(Hockney(latency=5e-5, bandwidth=1.0e8), Topology(procs_per_node=2))
gc.disable()
for k in range(runs):
    t0 = time.process_time()
    prog = vm.compile_model(model, None)
    rng = np.random.default_rng(0)
    placement = machine.topology.place(n)
    comm = for_placement(machine.comm, placement.node_of)
    t1 = time.process_time()
    setup = engine.RankSetup.of(prog, model, n, machine, None, rng, None)
    core = fastcore.Core(setup.codes, setup.envs, setup.proc_ids, setup.factors, machine,
                         comm, rng, placement, None, None, False, None, prog.statuses)
    t2 = time.process_time()
    times, critical, messages, *_ = core.run()
    t3 = time.process_time()
    print(f"compile {t1-t0:.4f} setup {t2-t1:.4f} run {t3-t2:.4f} msgs {messages} run-rate {messages/(t3-t2)/1e6:.2f} M/s makespan {max(t[3] for t in times)!r}", flush=True)
