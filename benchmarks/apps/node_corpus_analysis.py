"""The node corpus's traces through ``pipeline.py``: replay, extract from 1, 2
and 4 ranks (LULESH 1 and 8), predict at every traced count on the node's
measured profile, against the traced runs (docs/apps.md, "On a 16-core node").

    python benchmarks/apps/node_corpus_analysis.py RESULTS WORK --machine benchmarks/results/node-2026-11-27/run4/machine.db

``RESULTS`` holds what ``node_corpus.sh`` wrote on the node
(``node_corpus.json``, ``traces-PROGRAM.tar.gz``). For each program and
count, of the traced runs the one of median time is kept (``pipeline.py``'s
rule: the lower of two) as ``WORK/PROGRAM/trace<N>``, all the runs' times and
load averages written where ``pipeline.py --reuse`` keeps them; then
``pipeline.py`` replays, extracts and predicts (``--ranks`` the extracted
counts, ``--predict`` the others), and each count outside the extracted ones
is replayed here. Writes ``WORK/node_corpus_analysis.json`` and prints one Markdown
row a program: replay error and prediction error at every traced count, the
traced runs' median time and spread, the untraced runs' wall time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tarfile
from pathlib import Path

from pipeline import pevpm

#: Each program: its name in the table, language, extracted counts, checked counts.
ROWS = {
    "hpccg": ("HPCCG 1.0, 48^3 rows a rank", "C++", "1,2,4", "1..1024"),
    "comd": ("CoMD 1.1, LJ, 64x8x8 cells, ranks along x", "C", "1,2,4", "1..1024"),
    "lulesh": ("LULESH 2.0, 30^3 a rank, 20 cycles", "C++", "1,8", "cubes..1000"),
    "npb-is": ("NPB 3.3 IS, class A", "C", "1,2,4", "1..1024"),
}
HERE = Path(__file__).resolve().parent


def runs_by_count(report: dict, raw: Path, program: str) -> dict[int, list[dict]]:
    """The traced runs of ``program`` that ended well, by count, each with its
    traced time (end of MPI_Init to start of MPI_Finalize)."""
    from pevpm.trace.otf2.read import read_archive

    out: dict[int, list[dict]] = {}
    for run in report["runs"]:
        if run["program"] == program and run["traced"] and run["rc"] == 0:
            folder = raw / run["trace"]
            out.setdefault(run["ranks"], []).append(
                {**run, "folder": folder, "elapsed_s": read_archive(folder).elapsed})
    return out


def place(runs: dict[int, list[dict]], work: Path) -> dict[int, dict]:
    """Link each count's median run as ``work/trace<N>`` and write what
    ``pipeline.py --reuse`` keeps of the runs; the kept run of each count."""
    work.mkdir(parents=True, exist_ok=True)
    kept, counts = {}, {}
    for n, group in sorted(runs.items()):
        ordered = sorted(group, key=lambda r: r["elapsed_s"])
        kept[n] = ordered[(len(ordered) - 1) // 2]
        link = work / f"trace{n}"
        if link.is_symlink() or link.exists():
            link.unlink()
        link.symlink_to(kept[n]["folder"])
        counts[str(n)] = {"trace_wall_s": kept[n]["wall_s"], "trace": str(kept[n]["folder"]),
                          "runs_s": [round(r["elapsed_s"], 4) for r in group],
                          "load": [[r["load_before"][0], r["load_after"][0]] for r in group]}
    (work / "pipeline.json").write_text(json.dumps({"counts": counts}))
    return kept


def replayed(trace: Path, machine: str) -> tuple[float, float] | str:
    """``(traced, replayed)`` seconds of one trace, or replay's error."""
    done = pevpm("replay", str(trace), "--machine", machine, "--json", cwd=trace.parent)
    if done.returncode != 0:
        return done.stderr.strip()
    result = json.loads(done.stdout)
    return result["traced"], result["mean"]


def percent(value, reference) -> str:
    """``+4.2%``, or ``-`` where either is missing.

    >>> percent(1.05, 1.0), percent("failed", 1.0)
    ('+5.0%', '-')
    """
    if not isinstance(value, float) or not isinstance(reference, float) or not reference:
        return "-"
    return f"{100 * (value - reference) / reference:+.1f}%"


def analyse(program: str, report: dict, raw: Path, work: Path, machine: str) -> dict:
    """Run the pipeline on one program's node traces; its row's figures."""
    name, language, extracted, check = ROWS[program]
    runs = runs_by_count(report, raw, program)
    kept = place(runs, work / program)
    ranks = [n for n in map(int, extracted.split(",")) if n in kept]
    others = [n for n in kept if n not in ranks]
    command = [sys.executable, str(HERE / "pipeline.py"), "--name", name, "--language",
               language, "--mpi", "MPICH 5.0.2 (pip)", "--work", str(work / program),
               "--ranks", ",".join(map(str, ranks)), "--check", check, "--machine", machine,
               "--reuse", "--runs", "3"]
    if others:
        command += ["--predict", ",".join(map(str, others))]
    done = subprocess.run([*command, "--", report["programs"][program]["command"][0]],
                          capture_output=True, text=True, check=False)
    (work / program / "pipeline.out").write_text(done.stdout + done.stderr)
    if done.returncode != 0:
        return {"program": program, "error": done.stderr.strip()[-2000:]}
    result = json.loads((work / program / "pipeline.json").read_text())
    for n in others:
        row = result["counts"].setdefault(str(n), {})
        times = replayed(work / program / f"trace{n}", machine)
        if isinstance(times, str):
            row["replay_error"] = times
        else:
            row["traced_s"], row["replayed_s"] = times
    untraced = {}
    for run in report["runs"]:
        if run["program"] == program and not run["traced"] and run["rc"] == 0:
            untraced.setdefault(run["ranks"], []).append(run["wall_s"])
    figures = {}
    for n in sorted(kept):
        row = result["counts"][str(n)]
        elapsed = [r["elapsed_s"] for r in runs[n]]
        figures[n] = {
            "traced_s": row.get("traced_s"), "replayed_s": row.get("replayed_s"),
            "predicted_s": result["predicted"].get(str(n), result["predicted"].get(n)),
            "runs_s": elapsed, "spread": (max(elapsed) - min(elapsed)) / statistics.median(elapsed),
            "trace_wall_s": [r["wall_s"] for r in runs[n]], "untraced_wall_s": untraced.get(n, [])}
    return {"program": program, "name": name, "extracted": ranks, "predicted_only": others,
            "fails_at": result["fails_at"], "long_at": result["long_at"],
            "extract_check": result["extract_check"], "counts": figures}


def row_text(out: dict) -> str:
    """One Markdown row: replay and prediction error at each traced count, the
    median traced time and the spread of the runs, the untraced wall time."""
    if "error" in out:
        return f"| {out['program']} | pipeline failed: {out['error'][-200:]} |"
    cells = []
    for n, f in out["counts"].items():
        mark = "" if n in out["extracted"] else " (predicted only)"
        cells.append(f"{n}{mark}: replay {percent(f['replayed_s'], f['traced_s'])}, "
                     f"model {percent(f['predicted_s'], f['traced_s'])}, traced "
                     f"{statistics.median(f['runs_s']):.3f} s (spread {100 * f['spread']:.0f}%, "
                     f"{len(f['runs_s'])} runs), untraced wall "
                     f"{', '.join(f'{w:.2f}' for w in f['untraced_wall_s']) or '-'} s")
    ran = "yes" if not out["fails_at"] else "fails at " + ", ".join(map(str, out["fails_at"]))
    return f"| {out['name']} | {ran} | " + "<br>".join(cells) + " |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("work", type=Path)
    parser.add_argument("--machine", required=True)
    parser.add_argument("--programs", default=",".join(ROWS))
    args = parser.parse_args(argv)
    results, work = args.results.resolve(), args.work.resolve()
    report = json.loads((results / "node_corpus.json").read_text())
    raw = work / "raw"
    for packed in sorted(results.glob("traces-*.tar.gz")):
        with tarfile.open(packed) as tar:
            tar.extractall(raw, filter="data")
    outs = [analyse(p, report, raw, work, args.machine) for p in args.programs.split(",")]
    (work / "node_corpus_analysis.json").write_text(json.dumps(outs, indent=1, default=str))
    for out in outs:
        print(row_text(out))
    return 0 if all("error" not in o for o in outs) else 1


if __name__ == "__main__":
    sys.exit(main())
