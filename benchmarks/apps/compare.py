"""A hand-written model beside the model ``pevpm extract`` wrote, predicted at the
same counts on the same machine (docs/apps.md, "Hand-written against extracted").

    python benchmarks/apps/compare.py --hand benchmarks/apps/hand/hpccg.py \\
        --extracted /tmp/apps/corpus/hpccg/model.py --per-iteration /tmp/apps/corpus/hpccg/trace1 \\
        -D iterations=149 -n 2,4,64

``--per-iteration TRACE``: the hand model's ``t_iter`` is the one-rank trace's
run time over ``iterations`` (what a user times on one rank).  Prints one line
per count: both means and the extracted model's difference from the hand one.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys


def predicted(model: str, n: int, defines: list[str], machine: str, ppn: str) -> float:
    """``pevpm predict``'s mean for one count (one run: both models' draws are
    their own, the spread is not compared)."""
    args = [sys.executable, "-m", "pevpm", "predict", model, "-n", str(n), "--machine", machine,
            "--ppn", ppn, "--runs", "1", "--json"]
    for d in defines:
        args += ["-D", d]
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{model} at {n} ranks: {done.stderr.strip().splitlines()[-1]}")
    return json.loads(done.stdout)["predictions"][0]["mean"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hand", required=True)
    parser.add_argument("--extracted", required=True)
    parser.add_argument("--per-iteration", metavar="TRACE")
    parser.add_argument("-D", dest="defines", action="append", default=[])
    parser.add_argument("-n", dest="counts", default="64")
    parser.add_argument("--machine", default="default")
    parser.add_argument("--ppn", default="1")
    args = parser.parse_args(argv)
    defines = list(args.defines)
    if args.per_iteration:
        from pevpm.trace.otf2.read import read_archive

        iterations = next(float(d.split("=")[1]) for d in defines if d.startswith("iterations="))
        t_iter = read_archive(args.per_iteration).elapsed / iterations
        defines.append(f"t_iter={t_iter:.6g}")
        print(f"t_iter = {t_iter:.6g} s (the one-rank run over {iterations:g} iterations)")
    for n in (int(v) for v in args.counts.split(",")):
        hand = predicted(args.hand, n, defines, args.machine, args.ppn)
        extracted = predicted(args.extracted, n, [], args.machine, args.ppn)
        print(f"{n} ranks: hand-written {hand:.4g} s, extracted {extracted:.4g} s, "
              f"{100 * (extracted - hand) / hand:+.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
