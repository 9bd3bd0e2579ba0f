"""Run one kernel on one platform at N ranks, flows reserved from the send, REPS times; print the simulated time and the CPU seconds (round 13's speed check)."""
import sys, time
sys.path.insert(0, "benchmarks")
import topology_vs_smpi as t
kernel, kind, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
reps = int(sys.argv[4]) if len(sys.argv) > 4 else 1
for _ in range(reps):
    r = t.run_pevpm(kernel, kind, n)
    print(kernel, kind, n, repr(r["time"]), f"cpu {r['cpu']:.2f}", f"wall {r['wall']:.2f}", flush=True)
