"""Each rank's computation in wall and in CPU seconds, and what taking wall
seconds would predict: where an extracted model departs from its traced run
because the run's ranks were off their cores (docs/apps.md, "First passes").

``pevpm extract`` takes CPU seconds at every count once one count shared its
cores; a rank with a core of its own that was still preempted has more wall
than CPU seconds between its calls, which the model leaves out.  This prints,
for each trace, each rank's sum of the gaps between its calls both ways, and
with ``--model OUT`` writes the model extracted with wall seconds at every
count (``extract(..., wall=True)``) and predicts it at the traced counts.

    python benchmarks/apps/seconds.py WORK/npb-mg/trace1 WORK/npb-mg/trace2 \\
        WORK/npb-mg/trace4 --model /tmp/mg-wall.py --runs 3
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pevpm import parse_machine, predict
from pevpm.model.model_file import run_model_file
from pevpm.trace.extract.extract import extract
from pevpm.trace.extract.tokens import is_computation, rank_tokens
from pevpm.trace.otf2.read import read_archive
from pevpm.trace.replay.delays import ready_times


def sums(trace) -> list[tuple[float, float | None]]:
    """Each rank's computation seconds, wall and CPU (None: the trace has no CPU times)."""
    ready = ready_times(trace)
    out = []
    for r in range(trace.numprocs):
        both = [sum(sum(t.values) for t in rank_tokens(trace, r, ready[r], cpu)
                    if is_computation(t)) for cpu in (False, True)]
        out.append((both[0], both[1] if trace.has_cpu else None))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("traces", nargs="+", help="pevpm trace folders, one per count")
    parser.add_argument("--model", type=Path, help="write the wall-seconds model here")
    parser.add_argument("--machine", default="default")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    traces = [read_archive(Path(t)) for t in args.traces]
    for trace, name in zip(traces, args.traces):
        print(f"{name} ({trace.numprocs} ranks, elapsed {trace.elapsed:.6g} s):")
        for r, (wall, cpu) in enumerate(sums(trace)):
            off = "" if cpu is None else f", CPU {cpu:.6g} s ({cpu / wall - 1:+.1%})"
            print(f"  rank {r}: wall {wall:.6g} s{off}")
    if args.model:
        args.model.write_text(extract(traces, ", ".join(args.traces), wall=True).text)
        model = run_model_file(str(args.model), seconds=600)
        machine = parse_machine(args.machine)
        for trace in traces:
            mean = predict(model, trace.numprocs, machine, runs=args.runs).mean
            print(f"wall-seconds model at {trace.numprocs} ranks: {mean:.6g} s "
                  f"({mean / trace.elapsed - 1:+.1%} against the traced {trace.elapsed:.6g} s)")


if __name__ == "__main__":
    main()
