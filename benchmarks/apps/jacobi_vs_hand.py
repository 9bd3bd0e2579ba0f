"""The Jacobi model extracted from a node run's traces against the hand-written
model beyond the node (issue 28's comparison, without the rest of
``benchmarks/node_validation.py analyse``): the section both describe, two
ranks per node, the main loop sampled at 100 and 200 iterations and
extrapolated, as ``benchmarks/node_analysis.py`` does.

    PYTHONPATH=src .venv/bin/python benchmarks/apps/jacobi_vs_hand.py \\
        benchmarks/results/node-2026-11-26/run3 -n 64,256,1024

RUN holds ``node.json``, ``traces.tar.gz`` (or ``traces/``) and the node's
profile ``machine.db`` (the node run writes it; git ignores ``*.db``, so a
checkout has it only where the run was analysed); the extracted model is
written to ``--model``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from node_cases import SECTION  # noqa: E402
from trace_extract import extracted, hand_params, mean_time  # noqa: E402

from pevpm.machine.profile_model import machine_from_profile  # noqa: E402
from pevpm.model.loader import load_model  # noqa: E402
from pevpm.trace.otf2.read import read_archive  # noqa: E402
from pevpm.validate.cases import CASES, ProblemSize  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("-n", dest="counts", default="64")
    parser.add_argument("--model", type=Path, default=Path("jacobi_extracted.py"))
    args = parser.parse_args(argv)
    record = json.loads((args.run / "node.json").read_text())
    work = Path(tempfile.mkdtemp(prefix="pevpm-jacobi-"))
    if not (args.run / "traces").is_dir():
        with tarfile.open(args.run / "traces.tar.gz") as packed:
            packed.extractall(work, filter="data")
    base = args.run if (args.run / "traces").is_dir() else work
    case = CASES["jacobi"]
    counts = [n for n in record["trace_counts"] if f"jacobi-{n}" in record["traces"]]
    traces = {n: read_archive(base / record["traces"][f"jacobi-{n}"]) for n in counts}
    x, _, model = extracted(traces, counts, "jacobi", work, SECTION)
    args.model.write_text(x.text)
    largest = max(record["cases"]["jacobi"], key=int)
    calibration = record["cases"]["jacobi"][largest]["calibrations"][0]
    beyond = machine_from_profile(str(args.run / "machine.db"),
                                  ppn=record["conditions"]["cores"], collectives=case.collectives)
    size = ProblemSize(**record["size"])
    print("ranks  extracted (s)  hand-written (s)  extracted vs hand")
    for n in (int(v) for v in args.counts.split(",")):
        params, _ = hand_params(case, calibration, n, size)
        got = mean_time(model, n, beyond, 3, {}, 100)
        hand = mean_time(load_model(case.model_path), n, beyond, 3, params, 100)
        print(f"{n:5d}  {got:>13}  {hand:>16}  {float(got) / float(hand) - 1:+.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
