"""Validation and extrapolation on one many-core node: measure there, predict anywhere.

Two phases, so that a borrowed node's minutes go to measuring only:

``measure OUT``  (on the node; every step uses the node's cores)
    * ``pevpm bench --quick`` once, with ``--placements 1x2,1x4,...,1xN`` (the
      powers of two up to the node's N cores) in one launch -> ``OUT/machine.db``;
    * the three case studies (Jacobi, 2-D FFT, bag of tasks) and the tutorial's
      CG at every power-of-two rank count up to N, largest first: a warm-up,
      ``--repeats`` timed runs, with the examples' kernels calibrated on the node
      just before the timed runs and just after them (as ``pevpm demo`` does,
      with two calibrations per count instead of one per run);
    * ``pevpm trace`` of the Jacobi and the bag of tasks at 2, 4 and 8 ranks
      (1 and 2 on a node with fewer than 4 cores);
    * everything recorded in ``OUT/node.json`` (times, calibrations, the node's
      cores, processor, load before and after each step, what was skipped for
      lack of time) and the traces under ``OUT/traces``.

``analyse OUT``  (anywhere: a simulation's result does not depend on the host
that runs it, only on the profile, the calibrations and the seed)
    * predictions of every measured point from ``OUT/machine.db`` with the
      ``full`` model and the baselines (``pevpm validate``'s), Amdahl fitted to
      the measured speedups;
    * models extracted from the traces (the timed section, first barrier to
      the final gather, as ``benchmarks/trace_extract.py`` does) predicting the
      real runs at every measured count, and compared with the hand-written
      models at 64, 256 and 1,024 ranks (nodes like this one, N ranks each);
    * for the Jacobi and the FFT, ``full`` again at the clock speed of the
      timed runs themselves (:func:`node_analysis.clock_factor`: the kernels'
      seconds inside the runs, the ranks' mean and the slowest rank's,
      against the calibrations' seconds for the same kernels), which tells
      a model's error from the node's speed drifting between a calibration
      and the runs;
    * ``OUT/results.json``, ``OUT/tables.md`` and an HTML report in
      ``OUT/report``.

``all OUT`` runs both.  ``--deadline SECONDS`` bounds the measure phase: a
step that would start after it is skipped and named in ``node.json``.
``--programs jacobi,fft2d --no-bench --no-traces`` times only those programs
(a short node call; copy a profile of the same node kind to
``OUT/machine.db`` before ``analyse``).

Run (2-core dry run):  PYTHONPATH=src python benchmarks/node_validation.py all /tmp/nv
On a lent node:        bash benchmarks/node_validation.sh  (sets up the carried MPI first)
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from node_cases import CG_ARGS, CG_ROWS, FFT_ITERATIONS, TRACED
from trace_replay_examples import trace_example

from pevpm.errors import PevpmError
from pevpm.validate import calibration as calib
from pevpm.validate.cases import CASES, ProblemSize
from pevpm.validate.runner import LocalLauncher, find_mpiexec, run_example

#: Everything the measure phase can time: the case studies and the tutorial's CG.
PROGRAMS = (*CASES, "cg")


def node_cores() -> int:
    """Cores this process may use (the affinity mask where there is one)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def rank_counts(cores: int) -> list[int]:
    """Powers of two up to ``cores``: every point has a core per rank.

    >>> rank_counts(16), rank_counts(2), rank_counts(6)
    ([1, 2, 4, 8, 16], [1, 2], [1, 2, 4])
    """
    return [1 << i for i in range(cores.bit_length()) if 1 << i <= cores]


def trace_counts(cores: int) -> list[int]:
    """Rank counts traced for extraction: 2, 4, 8 where the cores allow (at least two).

    >>> trace_counts(16), trace_counts(2)
    ([2, 4, 8], [1, 2])
    """
    counts = [n for n in (2, 4, 8) if n <= cores]
    return counts if len(counts) >= 2 else [1, 2]


def conditions() -> dict:
    """Where and when: host, cores, processor, load average."""
    model = ""
    try:
        model = next((line.split(":", 1)[1].strip() for line in
                      Path("/proc/cpuinfo").read_text().splitlines()
                      if line.startswith("model name")), "")
    except OSError:
        pass
    return {"host": platform.node(), "cores": node_cores(), "processor": model,
            "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "load": os.getloadavg()[0]}


class Steps:
    """Runs named steps until a deadline, logging each and recording skips."""

    def __init__(self, record: dict, deadline: float, log: Path):
        self.record, self.deadline, self.log = record, deadline, log
        self.started = time.monotonic()

    def say(self, message: str) -> None:
        line = f"[{time.monotonic() - self.started:6.1f} s] {message}"
        print(line, file=sys.stderr, flush=True)
        with open(self.log, "a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def run(self, name: str, estimate: float, work, *args):
        """``work(*args)`` unless fewer than ``estimate`` seconds are left; its result,
        or None when skipped or failed."""
        left = self.deadline - (time.monotonic() - self.started)
        if left < estimate:
            self.say(f"skipped {name}: {left:.0f} s left, needs about {estimate:.0f} s")
            self.record["skipped"].append(name)
            return None
        start, load = time.monotonic(), os.getloadavg()[0]
        self.say(f"{name} (load {load:.2f})")
        try:
            result = work(*args)
        except (PevpmError, subprocess.SubprocessError, OSError) as err:
            message = getattr(err, "message", None) or str(err)
            self.say(f"FAILED {name}: {message[:2000]}")
            self.record["failed"][name] = message[:2000]
            return None
        took = time.monotonic() - start
        self.record["steps"][name] = {"seconds": round(took, 2), "load_before": load,
                                      "load_after": os.getloadavg()[0]}
        return result


def python_env(extra: dict | None = None) -> dict:
    env = {**os.environ, **(extra or {})}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"),
                                                      env.get("PYTHONPATH")]))
    return env


def bench(out: Path, counts: list[int]) -> dict:
    """MPIBench --quick at every 1xP placement, in one launch of the largest count,
    timed through mpi4py as the validated programs call MPI, every repetition after
    a barrier (their messages follow computation, not each other)."""
    placements = [f"1x{n}" for n in counts if n >= 2]
    command = [find_mpiexec(), "-n", str(counts[-1]), sys.executable, "-m", "pevpm", "bench",
               "--quick", "--no-progress", "--binding", "python", "--start", "barrier",
               "--placements", ",".join(placements), "--machine", platform.node() or "node", "-o", str(out / "machine.db")]
    proc = subprocess.run(command, capture_output=True, text=True, env=python_env(),
                          timeout=300, check=False)
    if proc.returncode:
        raise PevpmError(f"bench exited {proc.returncode}: {(proc.stdout + proc.stderr)[-2000:]}")
    return {"placements": placements, "output": proc.stderr.strip()[-500:]}


def calibrate_case(name: str, n: int, size: ProblemSize, repeats: int) -> dict:
    """One calibration of ``name``'s kernels fit for predicting ``n`` ranks."""
    if name == "jacobi":
        data = calib.calibrate_jacobi(size.grid, nprocs=(1, n), repeats=repeats)
    elif name == "fft2d":
        data = calib.calibrate_fft2d(size.grid, nprocs=(1, n), repeats=repeats)
    else:
        data = calib.calibrate_bag_of_tasks(repeats=repeats)
    return {name: data}


def measure_case(name: str, n: int, size: ProblemSize, repeats: int,
                 calibration_repeats: int) -> dict:
    """Calibrate, warm up, ``repeats`` timed runs, calibrate again."""
    case = CASES[name]
    calibrations: list[dict] = []
    calls = 0

    def between() -> None:                  # the first and the last of repeats + 1 calls
        nonlocal calls
        if calls in (0, repeats):
            calibrations.append(calibrate_case(name, n, size, calibration_repeats))
        calls += 1

    m = run_example(name, n, case.program_args(size), repeats=repeats,
                    launcher=LocalLauncher(env=dict(case.environment)), between=between)
    return {"times": list(m.times), "others": list(m.others), "calibrations": calibrations,
            "ranks": [record["ranks"] for record in m.records]}


CG_TIME = re.compile(r"cg: (\d+) ranks, .*?: ([0-9.]+) s")


def cg_run(n: int) -> float:
    """Seconds of one real run of the tutorial's CG on ``n`` ranks (its own timer)."""
    command = [find_mpiexec(), "-n", str(n), sys.executable,
               str(ROOT / "examples" / "tutorial" / "cg.py"), *CG_ARGS]
    proc = subprocess.run(command, capture_output=True, text=True, env=python_env(),
                          timeout=300, check=False)
    found = CG_TIME.search(proc.stdout)
    if proc.returncode or not found:
        raise PevpmError(f"cg on {n} ranks failed (exit {proc.returncode}): "
                         f"{(proc.stdout + proc.stderr)[-1500:]}")
    return float(found.group(2))


def cg_calibrate() -> dict:
    """The tutorial's calibration script: ``-D`` flags as a dict of seconds."""
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "tutorial" / "calibrate.py"),
                           "--nx", CG_ARGS[1], "--rows", CG_ROWS], capture_output=True,
                          text=True, env=python_env(), timeout=300, check=False)
    if proc.returncode:
        raise PevpmError(f"cg calibration failed: {proc.stderr[-1500:]}")
    return {k: float(v) for k, v in re.findall(r"-D (\w+)=(\S+)", proc.stdout)}


def measure_cg(n: int, repeats: int) -> dict:
    before = cg_calibrate()
    cg_run(n)                                       # warm-up
    times = [cg_run(n) for _ in range(repeats)]
    return {"times": times, "calibrations": [before, cg_calibrate()]}


def measure(out: Path, repeats: int, deadline: float, cores: int | None,
            calibration_repeats: int, fft_iterations: int = FFT_ITERATIONS,
            programs: tuple[str, ...] = PROGRAMS, with_bench: bool = True,
            with_traces: bool = True) -> dict:
    """The measure phase (module doc); returns and writes ``out/node.json``.
    ``programs`` are the ones timed; without ``with_bench`` no profile is
    measured (copy one to ``out/machine.db`` before analysing), without
    ``with_traces`` nothing is traced."""
    out.mkdir(parents=True, exist_ok=True)
    if with_bench:
        (out / "machine.db").unlink(missing_ok=True)
    cores = cores or node_cores()
    counts, size = rank_counts(cores), replace(ProblemSize(), fft_iterations=fft_iterations)
    record = {"format": "pevpm-node-validation/1", "conditions": conditions(),
              "counts": counts, "trace_counts": trace_counts(cores), "repeats": repeats,
              "size": size.__dict__, "steps": {}, "skipped": [], "failed": {},
              "cases": {name: {} for name in PROGRAMS}, "traces": {}}
    steps = Steps(record, deadline, out / "node.log")

    def save() -> None:
        record["conditions"]["load_end"] = os.getloadavg()[0]
        (out / "node.json").write_text(json.dumps(record, indent=1) + "\n")

    if with_bench:
        record["bench"] = steps.run("bench", 20, bench, out, counts)
    save()
    for name in TRACED if with_traces else ():
        for n in record["trace_counts"]:
            where = out / "traces" / f"{name}-{n}"
            shutil.rmtree(where, ignore_errors=True)
            where.parent.mkdir(parents=True, exist_ok=True)
            steps.run(f"trace {name} n={n}", 10, trace_example, name, n, size, where)
            if (where / "traces.otf2").is_file():
                record["traces"][f"{name}-{n}"] = f"traces/{where.name}"
        save()
    for n in reversed(counts):
        for name in (name for name in CASES if name in programs):
            point = steps.run(f"{name} n={n}", 15, measure_case, name, n, size, repeats,
                              calibration_repeats)
            if point:
                record["cases"][name][str(n)] = point
                steps.say(f"  {name} n={n}: " + ", ".join(f"{t:.4f}" for t in point["times"]))
            save()
        point = steps.run(f"cg n={n}", 10, measure_cg, n, repeats) if "cg" in programs else None
        if point:
            record["cases"]["cg"][str(n)] = point
            steps.say(f"  cg n={n}: " + ", ".join(f"{t:.4f}" for t in point["times"]))
        save()
    steps.say(f"measure phase done; skipped: {record['skipped'] or 'nothing'}; "
              f"failed: {list(record['failed']) or 'nothing'}")
    save()
    return record


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("phase", choices=("measure", "analyse", "all"))
    parser.add_argument("out", type=Path, help="folder for node.json, the profile, traces")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per point (3)")
    parser.add_argument("--calibration-repeats", type=int, default=3,
                        help="timed batches per kernel in each calibration (3)")
    parser.add_argument("--deadline", type=float, default=420.0,
                        help="seconds the measure phase may take (420)")
    parser.add_argument("--cores", type=int, help="cores to use (default: detected)")
    parser.add_argument("--fft-iterations", type=int, default=FFT_ITERATIONS,
                        help=f"FFT iterations per real run ({FFT_ITERATIONS})")
    parser.add_argument("--runs", type=int, default=12, help="Monte Carlo runs per prediction")
    parser.add_argument("--programs", default=",".join(PROGRAMS),
                        help=f"programs to time, comma-separated ({','.join(PROGRAMS)})")
    parser.add_argument("--bench", action=argparse.BooleanOptionalAction, default=True,
                        help="measure the node's profile (--no-bench: copy one to "
                             "OUT/machine.db before analysing)")
    parser.add_argument("--traces", action=argparse.BooleanOptionalAction, default=True,
                        help="trace the Jacobi and the bag for extraction")
    args = parser.parse_args(argv)
    programs = tuple(name for name in args.programs.split(",") if name)
    unknown = sorted(set(programs) - set(PROGRAMS))
    if unknown or not programs:
        parser.error(f"--programs: {', '.join(unknown) or 'none given'}; "
                     f"known: {', '.join(PROGRAMS)}")
    if args.phase in ("measure", "all"):
        measure(args.out, args.repeats, args.deadline, args.cores, args.calibration_repeats,
                args.fft_iterations, programs, args.bench, args.traces)
    if args.phase in ("analyse", "all"):
        from node_analysis import analyse
        analyse(args.out, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
