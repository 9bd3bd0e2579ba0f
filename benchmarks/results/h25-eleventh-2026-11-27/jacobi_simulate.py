"""Jacobi (engine_jacobi.py model, 1,000 iterations): median CPU s of REPEATS simulate calls.

    PYTHONPATH=<tree>/src .venv/bin/python jacobi_simulate.py RANKS REPEATS
"""
import sys, time
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from engine_jacobi import jacobi_model
from pevpm.machine.comm_models import Hockney
from pevpm.machine.machine import Machine
from pevpm.machine.topology import Topology
from pevpm.vm.kernel.fastengine import simulate
m = Machine(Hockney(latency=5e-5, bandwidth=1.0e8), Topology(procs_per_node=2))
n = int(sys.argv[1]); reps = int(sys.argv[2])
model = jacobi_model(1000)
simulate(model, n, m)
ts = []
for _ in range(reps):
    t = time.process_time(); r = simulate(model, n, m); ts.append(time.process_time() - t)
ts.sort()
print(n, "median", ts[len(ts)//2], "M/s", r.messages_simulated / ts[len(ts)//2] / 1e6, "min", ts[0], "max", ts[-1])
