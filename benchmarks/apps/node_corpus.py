"""Trace the C/C++ corpus with a core per rank, within a deadline: the runs
behind docs/apps.md, "On a 16-core node". Run by ``node_corpus.sh``, which
sets up the carried MPICH first.

    python benchmarks/apps/node_corpus.py APPS OUT --deadline 330 --max-ranks 16

``APPS`` holds the programs built with the pip MPICH (``test_HPCCG``,
``CoMD-mpi``, ``lulesh2.0``, ``is.A.<n>`` for each count). Every run is
``mpiexec -bind-to core -n N PROGRAM``: traced (``pevpm trace`` with
``PEVPM_TRACE_CPU=1``, as ``pipeline.py`` traces) into
``OUT/traces/PROGRAM/trace<N>.run<K>``, or not traced (its wall time and the
last lines it printed). The steps run in the order of their value -- every
program's traces at 1, 2 and 4 ranks (LULESH at 1 and 8), then those at 8
and 16, then the untraced runs, then the same again for the second repeat
-- and a step is skipped, and named in the JSON, when its expected time
(``--expect`` seconds, or twice the last run of the same program, count
and kind)
would end it past ``--deadline`` seconds after the start. Counts above
``--max-ranks`` (default: the cores this process may use) are left out.
Writes ``OUT/node_corpus.json`` (the node, each run's times and load average
before and after, what was skipped) and one ``traces-PROGRAM.tar.gz`` a
program.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

#: Each program: its command (``{n}``: the rank count) and the counts it is run at.
PROGRAMS = {
    "hpccg": (["test_HPCCG", "48", "48", "48"], [1, 2, 4, 8, 16]),
    "comd": (["CoMD-mpi", "-i", "{n}", "-j", "1", "-k", "1", "-x", "64", "-y", "8",
              "-z", "8", "-N", "20", "-n", "10"], [1, 2, 4, 8, 16]),
    "lulesh": (["lulesh2.0", "-s", "30", "-i", "20", "-q"], [1, 8]),
    "npb-is": (["is.A.{n}"], [1, 2, 4, 8, 16]),
}
#: The counts extract is given; the others are traced to be predicted.
EXTRACTED = {1, 2, 4}


def steps(programs: dict, max_ranks: int, repeats: int) -> list[tuple[str, int, int, bool]]:
    """``(program, count, repeat, traced)`` in the order they run: for each
    repeat, the traces at the extracted counts (LULESH's cubes too), then the
    other traces, then the untraced runs.

    >>> steps({"a": ([], [1, 8])}, 4, 1)
    [('a', 1, 0, True), ('a', 1, 0, False)]
    """
    order = []
    for k in range(repeats):
        first = [(p, n, k, True) for p, (_, ns) in programs.items() for n in ns
                 if n <= max_ranks and (n in EXTRACTED or max(ns) <= 8)]
        later = [(p, n, k, True) for p, (_, ns) in programs.items() for n in ns
                 if n <= max_ranks and (p, n, k, True) not in first]
        plain = [(p, n, k, False) for p, (_, ns) in programs.items() for n in ns
                 if n <= max_ranks]
        order += first + later + plain
    return order


def command(apps: Path, program: str, n: int) -> list[str]:
    """The launch line of ``program`` at ``n`` ranks, one rank a core."""
    words, _ = PROGRAMS[program]
    words = [w.replace("{n}", str(n)) for w in words]
    return ["mpiexec", "-bind-to", "core", "-n", str(n), str(apps / words[0]), *words[1:]]


def run_step(step, apps: Path, out: Path, scratch: Path, timeout: float) -> dict:
    """Run one step in ``scratch`` (the programs write files in their working
    folder) and say how it went."""
    program, n, k, traced = step
    launch = command(apps, program, n)
    row = {"program": program, "ranks": n, "repeat": k, "traced": traced,
           "command": " ".join(launch), "load_before": os.getloadavg()}
    if traced:
        folder = out / "traces" / program / f"trace{n}.run{k}"
        folder.parent.mkdir(parents=True, exist_ok=True)
        launch = [sys.executable, "-m", "pevpm", "trace", "-o", str(folder), "--", *launch]
        row["trace"] = str(folder.relative_to(out))
    env = {**os.environ, "PEVPM_TRACE_CPU": "1"} if traced else dict(os.environ)
    start = time.perf_counter()
    # a session of its own, so that a run past its time is ended with its mpiexec and ranks
    with subprocess.Popen(launch, cwd=scratch, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, start_new_session=True) as proc:
        try:
            text, _ = proc.communicate(timeout=timeout)
            row["rc"] = proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            text, _ = proc.communicate()
            row["rc"] = "timeout"
    row["wall_s"] = round(time.perf_counter() - start, 3)
    row["load_after"] = os.getloadavg()
    row["tail"] = text[-1500:]
    return row


def expected(step, rows: list[dict], guess: float) -> float:
    """Twice the last run of the same program and count, traced or untraced as
    ``step`` is, else ``guess``."""
    same = [r["wall_s"] for r in rows
            if (r["program"], r["ranks"], r["traced"]) == (step[0], step[1], step[3])]
    return 2 * same[-1] if same else guess


def pack(out: Path) -> list[str]:
    """One ``traces-PROGRAM.tar.gz`` a program, the folders removed."""
    made = []
    root = out / "traces"
    for folder in sorted(p for p in root.iterdir() if p.is_dir()) if root.exists() else []:
        name = out / f"traces-{folder.name}.tar.gz"
        with tarfile.open(name, "w:gz") as tar:
            tar.add(folder, arcname=f"traces/{folder.name}")
        made.append(f"{name.name} ({name.stat().st_size / 1e6:.1f} MB)")
    shutil.rmtree(root, ignore_errors=True)
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("apps", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--deadline", type=float, default=330,
                        help="seconds from the start after which no step may end")
    parser.add_argument("--max-ranks", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--expect", type=float, default=8,
                        help="seconds a step is expected to take before one like it ran")
    parser.add_argument("--pack-s", type=float, default=15,
                        help="seconds kept at the end for packing the traces")
    parser.add_argument("--programs", default=",".join(PROGRAMS))
    args = parser.parse_args(argv)
    start = time.perf_counter()
    apps, out = args.apps.resolve(), args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="node-corpus-"))
    chosen = {p: PROGRAMS[p] for p in args.programs.split(",")}
    report = {"started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
              "cores": len(os.sched_getaffinity(0)), "cpu_count": os.cpu_count(),
              "max_ranks": args.max_ranks, "deadline_s": args.deadline,
              "host": platform.node(), "python": platform.python_version(),
              "mpich": subprocess.run(["mpichversion"], capture_output=True, text=True,
                                      check=False).stdout.splitlines()[:1],
              "programs": {p: {"command": words, "counts": ns} for p, (words, ns)
                           in chosen.items()},
              "load_start": os.getloadavg(), "runs": [], "skipped": []}
    end = args.deadline - args.pack_s
    for step in steps(chosen, args.max_ranks, args.repeats):
        left = end - (time.perf_counter() - start)
        if expected(step, report["runs"], args.expect) > left:
            report["skipped"].append(list(step))
            continue
        row = run_step(step, apps, out, scratch, timeout=left)
        report["runs"].append(row)
        (out / "node_corpus.json").write_text(json.dumps(report, indent=1))   # if stopped
        print(f"node_corpus: {step[0]} {step[1]} ranks, repeat {step[2]}, "
              f"{'traced' if step[3] else 'untraced'}: {row['wall_s']} s, rc {row['rc']}",
              file=sys.stderr)
    report["load_end"] = os.getloadavg()
    report["run_s"] = round(time.perf_counter() - start, 1)
    shutil.rmtree(scratch, ignore_errors=True)
    report["packed"] = pack(out)
    report["total_s"] = round(time.perf_counter() - start, 1)
    (out / "node_corpus.json").write_text(json.dumps(report, indent=1))
    print(f"node_corpus: {len(report['runs'])} runs, {len(report['skipped'])} skipped, "
          f"{report['total_s']} s", file=sys.stderr)
    return 0 if all(r["rc"] == 0 for r in report["runs"]) else 1


if __name__ == "__main__":
    sys.exit(main())
