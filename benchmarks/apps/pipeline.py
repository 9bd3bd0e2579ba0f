"""Trace a real MPI program at a few rank counts, replay each trace, extract one
model from them all and predict with it: the rows of docs/apps.md.

    python benchmarks/apps/pipeline.py --name "LAMMPS melt" --work /tmp/apps/melt \\
        --launcher "mpirun --oversubscribe -n {n}" -- lmp -in in.melt -log none -screen none

``--launcher`` is the launch command with ``{n}`` for the rank count (the
command after ``--`` may hold ``{n}`` too: NPB's ``cg.S.{n}``); it runs in
``--work`` (where the traces, the model and ``pipeline.json`` go); with
``--reuse`` a count whose trace is there already is not traced again.
``--repeats K`` traces each count K times and keeps the trace whose run
(end of ``MPI_Init`` to start of ``MPI_Finalize``) is the median, the
others' times and the load average around each run kept in the JSON;
``--lock FILE`` holds ``flock FILE`` while each run is traced (only then),
so that two people's measurements never overlap.
For each count of ``--ranks`` (1,2,4): ``pevpm trace``, then ``pevpm replay
--machine M --json``; then ``pevpm extract`` of all of them
(``--allow-broken``, so that a model that fails its self-check is still
measured: the check's lines are kept in the JSON), the model's trial run at
every count of ``--check`` (1..1024) and its prediction (``--runs R``) at
each traced count and at ``--predict`` (8..1024).  Prints one Markdown
table row (program, language, MPI, replay error, the counts it ran at,
prediction error at the traced counts) and the JSON.
Nothing of the program is kept here: build it where you like
(``benchmarks/apps/README.md``).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path


def pevpm(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """``python -m pevpm args...`` in ``cwd``, output captured; the tracer
    records CPU seconds at every count (``PEVPM_TRACE_CPU=1``), one rank
    included, so that extract fits every count's computations in the same
    kind of time."""
    return subprocess.run([sys.executable, "-m", "pevpm", *args], cwd=cwd, text=True,
                          capture_output=True, check=False,
                          env={**os.environ, "PEVPM_TRACE_CPU": "1"})


#: What a count's row keeps from the run that took its trace, when it is reused.
RECORDED = ("trace_wall_s", "trace", "runs_s", "load")


def traced(trace: Path, launch: list[str], work: Path, repeats: int, lock: str | None
           ) -> dict | str:
    """Trace ``launch`` into ``trace`` ``repeats`` times and keep the run whose
    time is the median (its own folder renamed to ``trace``): what the JSON
    keeps of the runs, or the tracer's error."""
    runs = []
    for k in range(repeats):
        folder = trace.with_name(f"{trace.name}.run{k}")
        if folder.exists():     # left by a pipeline that was stopped: its run is taken again
            print(f"pipeline: note: {folder} was left by a stopped run: removed, traced again",
                  file=sys.stderr)
            shutil.rmtree(folder)
        with open(lock or os.devnull, "a") as held:
            if lock:
                fcntl.flock(held, fcntl.LOCK_EX)
            load = os.getloadavg()[0]
            start = time.perf_counter()
            done = pevpm("trace", "-o", str(folder), "--", *launch, cwd=work)
            wall = time.perf_counter() - start
            load_after = os.getloadavg()[0]
        if done.returncode != 0:
            return done.stderr
        from pevpm.trace.otf2.read import read_archive

        runs.append({"folder": folder, "elapsed_s": read_archive(folder).elapsed,
                     "trace_wall_s": round(wall, 2), "load": [load, load_after],
                     "trace": done.stderr.strip().splitlines()[-1].replace(str(folder), str(trace))})
    kept = sorted(runs, key=lambda r: r["elapsed_s"])[(len(runs) - 1) // 2]
    kept["folder"].rename(trace)
    for r in runs:
        if r is not kept:
            shutil.rmtree(r["folder"])
    return {"trace_wall_s": kept["trace_wall_s"], "trace": kept["trace"],
            "runs_s": [round(r["elapsed_s"], 4) for r in runs],
            "load": [r["load"] for r in runs]}


def counts(text: str) -> list[int]:
    """``1,2,4``, ``8..1024`` (doubling) or ``cubes..1000``.

    >>> counts("1,2,4"), counts("8..64"), counts("cubes..64")
    ([1, 2, 4], [8, 16, 32, 64], [1, 8, 27, 64])
    """
    if text.startswith("cubes.."):
        top = int(text[len("cubes.."):])
        return [k**3 for k in range(1, top + 1) if k**3 <= top]
    if ".." in text:
        low, high = (int(v) for v in text.split(".."))
        out = [low]
        while out[-1] * 2 <= high:
            out.append(out[-1] * 2)
        return out
    return [int(v) for v in text.split(",")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--name", required=True)
    parser.add_argument("--work", required=True, type=Path)
    parser.add_argument("--launcher", default="mpiexec -n {n}")
    parser.add_argument("--ranks", default="1,2,4", type=counts)
    parser.add_argument("--predict", default="8..1024", type=counts)
    parser.add_argument("--machine", default="default")
    parser.add_argument("--runs", default="3")
    parser.add_argument("--reuse", action="store_true")
    parser.add_argument("--repeats", default=1, type=int,
                        help="trace each count this many times, keep the median run")
    parser.add_argument("--lock", help="hold flock on this file while tracing")
    parser.add_argument("--check", default="1..1024", type=counts,
                        help="counts the model is run at on a 1 us machine (trial runs)")
    parser.add_argument("--language", default="C")
    parser.add_argument("--mpi", default="")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    out: dict = {"name": args.name, "command": command, "machine": args.machine, "counts": {}}
    # a reused trace keeps what the run that took it recorded (its runs, the load)
    before = (json.loads((work / "pipeline.json").read_text())["counts"]
              if args.reuse and (work / "pipeline.json").exists() else {})
    for n in args.ranks:
        trace = work / f"trace{n}"
        row = {k: v for k, v in before.get(str(n), {}).items() if k in RECORDED}
        if not (args.reuse and (trace / "traces.otf2").exists()):
            if trace.exists():
                shutil.rmtree(trace)
            row = traced(trace, [*shlex.split(args.launcher.format(n=n)),
                                 *(word.replace("{n}", str(n)) for word in command)],
                         work, args.repeats, args.lock)
            if isinstance(row, str):
                print(row, file=sys.stderr)
                return 1
        replay = pevpm("replay", str(trace), "--machine", args.machine, "--json", cwd=work)
        if replay.returncode == 0:
            result = json.loads(replay.stdout)
            row.update(traced_s=result["traced"], replayed_s=result["mean"])
        else:
            row["replay_error"] = replay.stderr.strip()
        out["counts"][n] = row
    model = work / "model.py"
    start = time.perf_counter()
    done = pevpm("extract", *(str(work / f"trace{n}") for n in args.ranks), "-o", str(model),
                 "--allow-broken", cwd=work)
    out["extract_wall_s"] = round(time.perf_counter() - start, 1)
    out["extract_check"] = [line for line in done.stderr.splitlines()
                            if "the model runs at" in line or "does not run at" in line
                            or "not run to its end" in line]
    out["model_lines"] = len(model.read_text().splitlines()) if model.exists() else None
    out["language"], out["mpi"] = args.language, args.mpi
    out["checked"] = args.check
    out["fails_at"], out["long_at"], out["predicted"] = checked(
        model, args.check, sorted(set(args.ranks) | set(args.predict)), args.machine,
        int(args.runs))
    print(row_text(out, args.ranks))
    (work / "pipeline.json").write_text(json.dumps(out, indent=1))
    print(json.dumps(out, indent=1))
    return 0


def checked(model: Path, check: list[int], predict: list[int], machine: str, runs: int
            ) -> tuple[dict[int, str], list[int], dict[int, float | str]]:
    """Why the model does not run at each count of ``check`` where it does not
    (``pevpm extract``'s trial run: every message a microsecond), the counts
    where that run stopped at its event limit without a fault (a long run), and
    the model's predicted mean at each count of ``predict`` on ``machine``
    (``pevpm.predict``, as ``pevpm predict`` does, but in this process: a model
    of thousands of lines takes longer than predict's 30 s to build on a loaded
    host)."""
    from pevpm import parse_machine
    from pevpm import predict as predicted
    from pevpm.errors import EventLimitError, PevpmError, WallClockLimitError
    from pevpm.model.model_file import run_model_file
    from pevpm.trace.extract.extract import trial_run

    if not model.exists():
        return {0: "no model"}, [], {}
    try:
        loaded = run_model_file(str(model), seconds=600)
    except PevpmError as err:
        return {0: f"the model does not build: {err}"}, [], {}
    fails, long = {}, []
    for n in check:
        err = trial_run(loaded, n)
        if isinstance(err, EventLimitError | WallClockLimitError):
            long.append(n)
        elif err is not None:
            fails[n] = err.message[:300]
    means: dict[int, float | str] = {}
    for n in predict:
        try:
            means[n] = predicted(loaded, n, parse_machine(machine), runs=runs).mean
        except PevpmError as err:
            means[n] = err.message[:300]
    return fails, long, means


def _error(value, reference) -> str:
    if not isinstance(value, float) or not reference:
        return "-"
    return f"{100 * (value - reference) / reference:+.0f}%"


def row_text(out: dict, ranks: list[int]) -> str:
    """One Markdown row: program, language, MPI, replay error at each traced count,
    whether the model ran at every checked count, its prediction error at each
    traced count (against the traced run)."""
    replay = ", ".join(_error(out["counts"][n].get("replayed_s"), out["counts"][n].get("traced_s"))
                       for n in ranks)
    predicted = ", ".join(_error(out["predicted"].get(n), out["counts"][n].get("traced_s"))
                          for n in ranks)
    counts = out["checked"]
    ran = (f"yes ({counts[0]}-{counts[-1]}, {len(counts)} counts)" if not out["fails_at"]
           else "no: fails at " + ", ".join(map(str, out["fails_at"])))
    if out["long_at"]:
        ran += f"; stopped without a fault at {', '.join(map(str, out['long_at']))} (5 M events)"
    return (f"| {out['name']} | {out['language']} | {out['mpi']} | {replay} | {ran} | "
            f"{predicted} |")


if __name__ == "__main__":
    sys.exit(main())
