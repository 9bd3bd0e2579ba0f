"""How fast ``pevpm replay`` is on long traces, end to end and phase by phase.

For each trace directory: the wall and CPU time and the peak memory of
``pevpm replay DIR --machine M --json`` in a fresh process (what a user waits
for; with the traced delays, 1 run, and ``--no-delays --runs R``), then, in
this process, the phases of a replay in arrays (``pevpm.trace.replay.fast``)
with the cycle collector paused and freed memory kept as ``replay`` does:

* arrays   -- the C reader's arrays alone (``record_arrays``),
* read     -- ``read_table``: the reader's arrays made a ``CallTable`` (peers as world ranks),
* checks   -- ``fast.check`` (what the arrays do not take; the request links
  it finds are reused by ``convert``),
* convert  -- ``fast.convert``: every rank's instruction arrays, with the
  traced delays where the case keeps them (the compiled passes where built),
* delays   -- what the delays add to ``convert`` (``convert`` again without them, the
  difference),
* codes    -- each rank's code over its arrays (``ArrayProgram``; no record per instruction),
* simulate -- the runs on the compiled core, first (the core fills its C
  instructions from the arrays) and later (filled already).

With ``--reference`` it also times the replay through model statements (the
trace's objects, ``trace_model``, ``compile_model``, the first run): that
path compiles at most about 330,000 calls.

Prints the calls in the trace, each phase's CPU seconds and calls per CPU
second, the messages simulated, calls per CPU second end to end and the
end-to-end run's peak memory (per call too).  Timings depend on the load
(printed): run it on a quiet machine, under ``flock /tmp/pevpm-measure.lock``,
to quote them.

Run: PYTHONPATH=src python benchmarks/trace_replay_speed.py --machine machine.db DIR [DIR ...]
     [--runs 10] [--repeats 3] [--read-only] [--reference] [--delays-only]

``--read-only`` times only the reading (the C reader's arrays, then the table).

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
from pevpm.cli.replay import keep_freed_memory
from pevpm.machine.presets import parse_machine
from pevpm.trace.otf2.columns import record_arrays
from pevpm.trace.otf2.read import anchor_file, read_archive, read_table
from pevpm.trace.replay import fast
from pevpm.trace.replay.replay import replay_machine, trace_model
from pevpm.vm.kernel import fastengine
from pevpm.vm.kernel.arrays import ArrayProgram
from pevpm.vm.kernel.arrays import simulate as simulate_arrays
from pevpm.vm.kernel.program import compile_model
from pevpm.vm.strategies.montecarlo import run_generator


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


def phases(directory: str, machine, runs: int, delays: bool, reference: bool) -> dict:
    """CPU seconds of each phase of one replay of ``directory`` in arrays (``runs`` runs)."""
    t: dict[str, list[float]] = {k: [] for k in (
        "arrays", "read", "checks", "delays", "convert", "codes", "first", "later",
        "reference read", "reference convert", "reference compile", "reference first")}
    with otf2.reader.open(str(anchor_file(directory))) as reader, timed(t["arrays"]):
        record_arrays(reader, list(reader.definitions.locations))
    with timed(t["read"]):
        table = read_table(Path(directory))
    with timed(t["checks"]):
        checked = fast.check(table)
    del table
    if checked.why is not None:
        raise SystemExit(f"{directory}: not replayed in arrays: {checked.why}")
    if delays:
        with timed(t["delays"]):
            fast.convert(checked, 1.0, False, False)
    with timed(t["convert"]):
        converted = fast.convert(checked, 1.0, delays, False)
    if delays:
        t["delays"][0] = t["convert"][0] - t["delays"][0]
    calls, numprocs = checked.table.calls, checked.table.numprocs
    del checked
    instructions = sum(len(code["op"]) for code in converted.codes)
    with timed(t["codes"]):
        program = ArrayProgram(converted.codes, converted.requests, converted.names, directory)
    del converted
    quiet = replay_machine(machine, delays)
    messages = 0
    for i in range(runs):
        with timed(t["first" if i == 0 else "later"]):
            run = simulate_arrays(program, quiet, rng=run_generator(0, i))
        messages = run.messages_simulated
    del program
    if reference:
        with timed(t["reference read"]):
            trace = read_archive(directory)
        with timed(t["reference convert"]):
            model = trace_model(trace, delays=delays)
        with timed(t["reference compile"]):
            compiled = compile_model(model)
        with timed(t["reference first"]):
            fastengine.simulate(model, trace.numprocs, quiet, rng=run_generator(0, 0),
                                program=compiled)
    return {"calls": calls, "numprocs": numprocs, "instructions": instructions,
            "messages": messages, **{k: sum(v) for k, v in t.items()},
            "later_each": statistics.mean(t["later"]) if t["later"] else 0.0}


def reading(directory: str) -> None:
    """Print the CPU seconds of the C reader's arrays and of the table."""
    t: dict[str, list[float]] = {"arrays": [], "read": []}
    with otf2.reader.open(str(anchor_file(directory))) as reader, timed(t["arrays"]):
        calls, _ = record_arrays(reader, list(reader.definitions.locations))
    with timed(t["read"]):
        read_table(Path(directory))
    n = len(calls)
    print(f"{directory}: {n} calls; C reader's arrays {t['arrays'][0]:.2f} CPU s "
          f"({n / t['arrays'][0]:,.0f} calls/s); the table {t['read'][0]:.2f} "
          f"CPU s ({n / t['read'][0]:,.0f} calls/s); load {os.getloadavg()[0]:.1f}", flush=True)


def rate(calls: int, seconds: float) -> str:
    return f"{calls / seconds:,.0f}/s" if seconds > 0 else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="+", help="trace directories (pevpm trace -o DIR)")
    parser.add_argument("--machine", required=True)
    parser.add_argument("--runs", type=int, default=10, help="runs of the --no-delays replay")
    parser.add_argument("--repeats", type=int, default=3, help="end-to-end timings per case")
    parser.add_argument("--read-only", action="store_true",
                        help="time only the reading (the C reader's arrays, then the table)")
    parser.add_argument("--reference", action="store_true",
                        help="also time the replay through model statements (at most about "
                             "330,000 calls)")
    parser.add_argument("--delays-only", action="store_true",
                        help="only the replay with the traced delays (1 run)")
    args = parser.parse_args()
    machine = parse_machine(args.machine)
    print(f"pevpm from {Path(pevpm.__file__).parent}; load average {os.getloadavg()[0]:.2f}")
    cases = [(True, [], 1)]
    if not args.delays_only:
        cases.append((False, ["--no-delays", "--runs", str(args.runs)], args.runs))
    if args.read_only:
        for directory in args.traces:
            reading(directory)
        return
    # every end-to-end run first: a child's peak memory counts this process's
    # memory at the fork, which the phases below would grow
    ends = {(directory, k): list(zip(*(end_to_end(directory, args.machine, extra)
                                       for _ in range(args.repeats))))
            for directory in args.traces for k, (_, extra, _) in enumerate(cases)}
    keep_freed_memory()     # as pevpm replay does
    for directory in args.traces:
        for k, (delays, extra, runs) in enumerate(cases):
            walls, cpus, means, peaks = ends[(directory, k)]
            p = phases(directory, machine, runs, delays, args.reference)
            wall, cpu = statistics.median(walls), statistics.median(cpus)
            n = p["calls"]
            label = " ".join(extra) or "(traced delays, 1 run)"
            print(f"{directory} {label}: {n} calls, {p['numprocs']} ranks, "
                  f"{p['instructions']} instructions, {p['messages']} messages a run; "
                  f"load {os.getloadavg()[0]:.1f}")
            print(f"  pevpm replay end to end: {wall:.2f} s wall (median of {args.repeats}: "
                  f"{', '.join(f'{w:.2f}' for w in walls)}), CPU {cpu:.2f} s (all: "
                  f"{', '.join(f'{c:.2f}' for c in cpus)}); {n / cpu:,.0f} calls per CPU "
                  f"second; mean {means[0]!r}; peak memory {max(peaks):.2f} GiB "
                  f"({max(peaks) * 2**30 / n:,.0f} bytes a call)")
            print("  phases, CPU s (calls a second): " + ", ".join(
                f"{k} {p[k]:.2f} ({rate(n, p[k])})" for k in (
                    "arrays", "read", "checks", "convert", "delays", "codes", "first"))
                  + f"; later runs {p['later_each']:.2f} s each ({rate(n, p['later_each'])}, "
                  f"{rate(p['messages'], p['later_each'])} messages)", flush=True)
            if args.reference:
                print("  through model statements, CPU s: " + ", ".join(
                    f"{k.split()[1]} {p[k]:.2f}" for k in (
                        "reference read", "reference convert", "reference compile",
                        "reference first")), flush=True)


if __name__ == "__main__":
    main()
