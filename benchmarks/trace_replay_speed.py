"""How fast ``pevpm replay`` is on long traces, end to end and phase by phase.

For each trace directory: the wall time of ``pevpm replay DIR --machine M --json``
in a fresh process (what a user waits for; with the traced delays, 1 run, and
``--no-delays --runs R``), then, in this process, the phases one replay goes
through with the cycle collector paused as ``replay`` pauses it:

* read     -- ``read_archive``: the C reader into arrays, then one object per call and event
  (timed beside it: ``arrays``, the C reader's arrays alone, and ``reference read``, the
  ``otf2`` package's Python reader),
* delays   -- ``ready_times`` (when each call's peers were there),
* convert  -- ``trace_model`` less the delays: statements per call, the model,
* compile  -- ``compile_model`` (the model into instructions),
* simulate -- the runs on the compiled core (``fastengine.simulate``), first and later
  (the first run also folds and translates every rank's code).

Prints the calls in the trace, each phase's CPU seconds, the messages the virtual
machine simulated, calls per CPU second end to end and the end-to-end run's peak
memory (the wall time is printed too; on a shared machine the CPU time varies
less).  Timings depend on the load (printed): run it on a quiet machine to quote them.

Run: PYTHONPATH=src python benchmarks/trace_replay_speed.py --machine machine.db DIR [DIR ...]
     [--runs 10] [--repeats 3] [--read-only]

``--read-only`` times only the reading (the C reader's arrays, then the whole
read with its objects), for a trace too long to replay in memory.

To compare with an older version, run the same command with ``PYTHONPATH``
pointing at that version's ``src`` (the end-to-end timing runs ``python -m
pevpm`` with the same ``PYTHONPATH``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import otf2

import pevpm
from pevpm.machine.presets import parse_machine
from pevpm.trace.otf2.columns import record_arrays
from pevpm.trace.otf2.read import anchor_file, read_archive
from pevpm.trace.replay.delays import ready_times
from pevpm.trace.replay.replay import replay_machine, trace_model
from pevpm.vm.kernel import fastengine
from pevpm.vm.strategies.montecarlo import run_generator
from pevpm.vm.kernel.program import compile_model


@contextmanager
def timed(into: list[float]):
    """Append the CPU seconds of the block to ``into``, the cycle collector paused."""
    was = gc.isenabled()
    gc.disable()
    start = time.process_time()
    try:
        yield
    finally:
        into.append(time.process_time() - start)
        if was:
            gc.enable()


def end_to_end(directory: str, machine: str,
               extra: list[str]) -> tuple[float, float, float, float]:
    """Wall and CPU seconds of ``pevpm replay`` in a fresh process, its predicted mean
    and its peak resident memory (GiB; the largest of this process's children so far)."""
    env = {**os.environ, "PYTHONPATH": str(Path(pevpm.__file__).parents[1])}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "pevpm", "replay", directory, "--machine",
                           machine, "--json", *extra], capture_output=True, text=True,
                          env=env, check=True)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return took, cpu, json.loads(done.stdout)["mean"], after.ru_maxrss / 2**20


def phases(directory: str, machine, runs: int, delays: bool) -> dict:
    """Seconds of each phase of one replay of ``directory`` (``runs`` runs)."""
    t: dict[str, list[float]] = {k: [] for k in ("reference read", "arrays", "read", "delays",
                                                 "convert", "compile", "first", "later")}
    with otf2.reader.open(str(anchor_file(directory))) as reader, timed(t["arrays"]):
        record_arrays(reader, list(reader.definitions.locations))
    with timed(t["reference read"]):
        read_archive(directory, reference=True)
    with timed(t["read"]):
        trace = read_archive(directory)
    if delays:
        with timed(t["delays"]):
            ready_times(trace)
    with timed(t["convert"]):
        model = trace_model(trace, delays=delays)
    if delays:
        t["convert"][0] -= t["delays"][0]
    with timed(t["compile"]):
        program = compile_model(model)
    quiet = replay_machine(machine, delays)
    messages = 0
    for i in range(runs):
        with timed(t["first" if i == 0 else "later"]):
            run = fastengine.simulate(model, trace.numprocs, quiet, rng=run_generator(0, i),
                                      program=program)
        messages = run.messages_simulated
    return {"calls": sum(len(calls) for calls in trace.ranks), "numprocs": trace.numprocs,
            "messages": messages, **{k: sum(v) for k, v in t.items()},
            "later_each": statistics.mean(t["later"]) if t["later"] else 0.0}


def reading(directory: str) -> None:
    """Print the CPU seconds of the C reader's arrays and of the whole read."""
    t: dict[str, list[float]] = {"arrays": [], "read": []}
    with otf2.reader.open(str(anchor_file(directory))) as reader, timed(t["arrays"]):
        calls, _ = record_arrays(reader, list(reader.definitions.locations))
    with timed(t["read"]):
        read_archive(directory)
    n = len(calls)
    print(f"{directory}: {n} calls; C reader's arrays {t['arrays'][0]:.2f} CPU s "
          f"({n / t['arrays'][0]:,.0f} calls/s); the trace's objects too {t['read'][0]:.2f} "
          f"CPU s ({n / t['read'][0]:,.0f} calls/s); load {os.getloadavg()[0]:.1f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="+", help="trace directories (pevpm trace -o DIR)")
    parser.add_argument("--machine", required=True)
    parser.add_argument("--runs", type=int, default=10, help="runs of the --no-delays replay")
    parser.add_argument("--repeats", type=int, default=3, help="end-to-end timings per case")
    parser.add_argument("--read-only", action="store_true",
                        help="time only the C reader (arrays, then the trace's objects): "
                             "for traces too long to replay in this machine's memory")
    args = parser.parse_args()
    machine = parse_machine(args.machine)
    print(f"pevpm from {Path(pevpm.__file__).parent}; load average {os.getloadavg()[0]:.2f}")
    for directory in args.traces:
        if args.read_only:
            reading(directory)
            continue
        for delays, extra, runs in ((True, [], 1),
                                    (False, ["--no-delays", "--runs", str(args.runs)],
                                     args.runs)):
            p = phases(directory, machine, runs, delays)
            walls, cpus, means, peaks = zip(*(end_to_end(directory, args.machine, extra)
                                              for _ in range(args.repeats)))
            wall, cpu = statistics.median(walls), statistics.median(cpus)
            label = " ".join(extra) or "(traced delays, 1 run)"
            print(f"{directory} {label}: {p['calls']} calls, {p['numprocs']} ranks, "
                  f"{p['messages']} messages a run; load {os.getloadavg()[0]:.1f}")
            print(f"  pevpm replay end to end: {wall:.2f} s (median of {args.repeats}: "
                  f"{', '.join(f'{w:.2f}' for w in walls)}), CPU {cpu:.2f} s; "
                  f"{p['calls'] / cpu:,.0f} calls per CPU second; mean {means[0]!r}; "
                  f"peak memory {max(peaks):.2f} GiB")
            print(f"  phases (CPU s): reference read {p['reference read']:.2f} s, arrays "
                  f"{p['arrays']:.2f} s ({p['calls'] / p['arrays']:,.0f} calls/s), "
                  f"read {p['read']:.2f} s, delays {p['delays']:.2f} s, convert "
                  f"{p['convert']:.2f} s, compile {p['compile']:.2f} s, simulate first run "
                  f"{p['first']:.2f} s, later runs {p['later_each']:.3f} s each "
                  f"({p['messages'] / p['later_each'] if p['later_each'] else 0:,.0f} "
                  "messages/s)", flush=True)


if __name__ == "__main__":
    main()
