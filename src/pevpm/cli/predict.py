"""``pevpm predict``: Monte Carlo prediction of a model over process counts.

    pevpm predict jacobi.c -n 2..64 --runs 200 --seed 1 --machine perseus
    pevpm predict model.py -n 1,2,4 -D iterations=10 --json
    pevpm predict model.py -n 16 --trace jacobi16.json     # open in ui.perfetto.dev
    pevpm predict model.py --recorded run --trace both.json  # beside a traced run
    pevpm predict ring.py -n 2 --machine default --explain  # which profile blocks served what

``-n`` takes counts (``1,2,4``), doubling ranges (``2..64`` = 2, 4, ..., 64)
or both (``2,3,8..64``).  The table shows the predicted mean run time, its
standard deviation, the min/max-bound runs and the speedup over the
smallest count.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

from pevpm.cli import numbers, outputs
from pevpm.cli.arguments import add_collective_arguments, collective_config, parse_defines
from pevpm.cli.paths import writable_file
from pevpm.errors import PevpmError
from pevpm.vm.executors import EXECUTOR_NAMES, default_workers

DEFAULT_MACHINE = "perseus"
#: Stops a model that never ends within seconds (the compiled engine runs one
#: to two million events a second); real models need far fewer per run ...
DEFAULT_MAX_EVENTS = 5 * 10**6
#: ... and a run's events grow with its ranks: the default allows this many per
#: rank when that is more (1,024 ranks: 5.1 x 10^7, a Jacobi of 2,800 iterations).
DEFAULT_EVENTS_PER_RANK = 50_000


def default_max_events(numprocs: int) -> int:
    """The event limit of a run on ``numprocs`` ranks when ``--max-events`` is
    not given.

    >>> default_max_events(4), default_max_events(1024)
    (5000000, 51200000)
    """
    return max(DEFAULT_MAX_EVENTS, DEFAULT_EVENTS_PER_RANK * numprocs)
#: Most process counts one ``-n`` may list.
MAX_COUNTS = 1000
#: Most local worker processes per CPU (more only costs memory and start-up).
LOCAL_WORKERS_PER_CPU = 4


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "predict", help="predict a model's run time over process counts (Monte Carlo)",
        description="Simulate a PEVPM model (annotated C/Python source or a Python model "
                    "file) many times per process count and report the predicted run time.")
    p.add_argument("model", nargs="?",
                   help="annotated source (.c, .py) or Python model file")
    p.add_argument("--list-models", action="store_true",
                   help="say what each communication model of --machine PROFILE:model=NAME "
                        "is, and exit")
    p.add_argument("-n", "--procs", dest="procs", metavar="COUNTS",
                   help="process counts: 4 | 1,2,4 | 2..64 (doubling) | 2,8..64 "
                        "(default: the model's Default numprocs)")
    p.add_argument("--runs", type=numbers.runs, default=100,
                   help="Monte Carlo runs per count (100)")
    p.add_argument("--seed", type=numbers.seed, default=0, help="random seed (0)")
    p.add_argument("--machine", default=DEFAULT_MACHINE, metavar="SPEC",
                   help="constant:latency=50us | hockney:latency=..,bandwidth=.. | "
                        "loggp:L=..,o=..,g=..,G=.. | perseus | PROFILE.db[:model=mean2x1] | "
                        "default (the profile shipped with pevpm; pevpm machine list) "
                        "(default perseus)")
    p.add_argument("--ppn", type=numbers.procs_per_node, metavar="P",
                   help="processes per node (n x p placement; default for a profile measured "
                        "on one host: every rank on that host, sharing its cores)")
    p.add_argument("--nodes", type=numbers.procs_per_node, metavar="N",
                   help="spread the ranks evenly over N nodes (with --ppn: N nodes of P)")
    p.add_argument("--processor", metavar="ID",
                   help="processor id of every rank (selects 'Serial on ID' lines)")
    p.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME=VALUE",
                   help="set a model parameter (repeatable)")
    p.add_argument("--workers", type=numbers.workers, metavar="W",
                   help="parallel workers (CPUs)")
    p.add_argument("--executor", default="local", metavar="KIND",
                   help=f"where runs execute: {' | '.join(EXECUTOR_NAMES)} | dask:ADDRESS "
                        "(local)")
    p.add_argument("--max-events", type=numbers.max_events, metavar="N",
                   help="stop a run after N instructions and matches: a model that never "
                        f"ends (default {DEFAULT_MAX_EVENTS:.0e}, or "
                        f"{DEFAULT_EVENTS_PER_RANK:,} per rank when more; 0 = no limit)")
    p.add_argument("--max-time", type=numbers.positive, metavar="SECONDS",
                   help="stop a run whose simulated (virtual) time passes SECONDS")
    p.add_argument("--max-wall", type=numbers.positive, metavar="SECONDS",
                   help="stop a run after SECONDS of real (wall-clock) time; each run has "
                        "its own allowance (default: none, docs/reliability.md)")
    p.add_argument("--no-bounds", dest="bounds", action="store_false",
                   help="skip the min/max-bound runs")
    p.add_argument("--exact", action="store_true",
                   help="simulate every iteration of a long steady loop instead of "
                        "extrapolating it once its pace has settled (docs/engine.md)")
    add_collective_arguments(p)
    p.add_argument("--explain", action="store_true",
                   help="after the table, say which profile block served which kind of "
                        "message in one run per count (operation, sizes, contention, "
                        "placement, how many)")
    p.add_argument("--json", action="store_true", help="print the predictions as JSON")
    p.add_argument("--trace", metavar="FILE", type=writable_file,
                   help="write a Chrome/Perfetto trace of one run at the largest count")
    p.add_argument("--recorded", metavar="TRACE",
                   help="with --trace: put this recorded run (pevpm trace's directory or an "
                        ".otf2 file) beside the predicted one, which runs at its rank count")
    p.add_argument("--calibration", metavar="FILE",
                   help="parameters measured by 'pevpm calibrate' (-D options override them)")
    outputs.add_force(p)
    p.set_defaults(func=run_predict)


def _extrapolation_note(extrapolation: dict | None) -> str | None:
    """One line on a steady loop: extrapolated from where, how precisely, or why not."""
    if not extrapolation:
        return None
    if extrapolation.get("corrected_by"):
        pilots = extrapolation["corrected_by"]
        return (f"the loop at {extrapolation['loop']} did not settle "
                f"({extrapolation['why_corrected']}): the first {pilots} runs were simulated "
                f"whole, the others for {extrapolation['from_iteration']} of "
                f"{extrapolation['iterations']} iterations, extrapolated and corrected by "
                f"what the whole runs added (estimated error of the mean "
                f"{extrapolation['estimated_error']:.2%}; --exact simulates all)")
    if extrapolation["extrapolated"]:
        wave = extrapolation.get("wave_settles_by")
        through = (f" through a start-up wave that reaches the last rank near iteration "
                   f"{wave}" if wave else "")
        return (f"the loop at {extrapolation['loop']} was simulated for "
                f"{extrapolation['from_iteration']} of {extrapolation['iterations']} "
                f"iterations and extrapolated{through} (estimated error of the mean "
                f"{extrapolation['estimated_error']:.2%}; --exact simulates all)")
    return f"simulated every iteration: {extrapolation['reason']}"


def run_predict(args) -> int:
    from pevpm.machine.presets import parse_machine
    from pevpm.model.loader import load_model, with_parameters
    from pevpm.vm.engine import Limits
    from pevpm.vm.executors import open_executor
    from pevpm.vm.fastengine import why_reference
    from pevpm.vm.leftovers import warning_lines
    from pevpm.vm.montecarlo import predict
    from pevpm.vm.program import compile_model

    if args.list_models:
        from pevpm.cli.machine import model_listing

        print(model_listing())
        return 0
    if args.model is None:
        raise PevpmError("give the model file to predict (or --list-models)")
    if args.trace:
        args.trace = outputs.check_output(
            args.trace, outputs.PERFETTO, force=args.force,
            inputs=[*outputs.input_paths(args.model, args.calibration),
                    *outputs.machine_input(args.machine),
                    *outputs.archive_input(args.recorded or "")])
    params = parse_defines(args.defines)
    _check_local_workers(args.workers, args.executor)
    machine = parse_machine(args.machine, ppn=args.ppn, processor=args.processor,
                            nodes=args.nodes)
    if args.coll:
        machine = replace(machine, collectives=collective_config(args, machine.collectives))
    if not Path(args.model).is_file():
        raise PevpmError("no such model file", args.model)
    model = load_model(args.model, processor=args.processor)
    if args.calibration:
        params = {**calibrated_parameters(args.calibration, model), **params}
    if params:
        model = with_parameters(model, params)
    engine_note = why_reference(compile_model(model, params))
    if engine_note:
        print(f"pevpm predict: note: {engine_note}", file=sys.stderr)
    recorded = _recorded(args)
    if recorded is not None:
        from pevpm.cli.recorded import traced_count

        counts = [traced_count(recorded, parse_counts(args.procs) if args.procs else None)]
    else:
        counts = parse_counts(args.procs) if args.procs else _default_counts(model)
    for note in (*_origin_notes(args.machine), *_profile_notes(machine, counts)):
        print(f"pevpm predict: note: {note}", file=sys.stderr)
    limits = Limits(max_events=args.max_events or None, max_time=args.max_time,
                    max_wall=args.max_wall)

    def limits_for(n: int) -> Limits:
        if args.max_events is None:
            return replace(limits, max_events=default_max_events(n))
        return limits

    if recorded is not None:        # before the Monte Carlo: the model must run at its count
        from pevpm.cli.recorded import model_run

        recorded_run = model_run(model, recorded, machine, name=args.model, params=params,
                                 seed=args.seed, limits=limits_for(counts[0]))
    predictions = []
    with _progress(len(counts) * args.runs) as bar, \
            open_executor(args.executor, args.workers) as executor:
        for n in counts:
            bar.set_description(f"{n} ranks")
            predictions.append(predict(model, n, machine, runs=args.runs, seed=args.seed,
                                       params=params, executor=executor,
                                       workers=args.workers, bounds=args.bounds,
                                       progress=bar.update, limits=limits_for(n),
                                       exact=args.exact))
    for n, prediction in zip(counts, predictions):
        note = _extrapolation_note(prediction.extrapolation)
        if note:
            print(f"pevpm predict: note: {n} ranks: {note}", file=sys.stderr)
    for line in warning_lines((p.numprocs, p.runs, p.outstanding) for p in predictions):
        print(f"pevpm predict: warning: {line}", file=sys.stderr)
    if recorded is not None:
        from pevpm.cli.recorded import write_beside

        write_beside(recorded, recorded_run, args.trace, source=args.recorded,
                     predicted=f"{args.model} on {args.machine}")
    elif args.trace:
        _write_trace(model, max(counts), machine, params, args.seed, limits_for(max(counts)),
                     args.trace)
    explanations = {}
    if args.explain:
        from pevpm.vm.explain import explain

        explanations = {n: explain(model, n, machine, params=params, seed=args.seed,
                                   limits=limits_for(n)) for n in counts}
    if args.json:
        base = predictions[0].mean
        print(json.dumps({"model": args.model, "machine": args.machine, "seed": args.seed,
                          "runs": args.runs, "speedup_base": predictions[0].numprocs,
                          "predictions": [{**p.to_dict(), "speedup": base / p.mean if p.mean
                                           else None, **_explained(explanations, p.numprocs)}
                                          for p in predictions]}))
    else:
        print(format_table(predictions))
        if explanations:
            from pevpm.vm.explain import format_explanation

            for n, uses in explanations.items():
                print()
                print(format_explanation(n, uses))
    return 0


def _recorded(args):
    """The trace of ``--recorded`` (which needs ``--trace``), or None."""
    if not args.recorded:
        return None
    if not args.trace:
        raise PevpmError("--recorded needs --trace FILE (the side-by-side Perfetto file)")
    from pevpm.cli.recorded import read_recorded

    return read_recorded(args.recorded)


def _explained(explanations: dict, numprocs: int) -> dict:
    """``{"explain": [...]}`` for a count that was explained, else nothing."""
    if numprocs not in explanations:
        return {}
    return {"explain": [use.to_dict() for use in explanations[numprocs]]}


def _profile_notes(machine, counts: list[int]) -> tuple[str, ...]:
    """The profile model's fallback notes that apply to these counts (one about
    inter-node messages only when some count puts ranks on two nodes)."""
    notes_for = getattr(machine.comm, "notes_for", None)
    if notes_for is None:
        return ()
    leaves_node = any(len(set(machine.topology.place(n).node_of)) > 1 for n in counts)
    return notes_for(leaves_node)


def _origin_notes(spec: str) -> list[str]:
    """Notes on the spec's profile: measured on another machine, or while this
    one was busy."""
    from pevpm.bench.results import conditions_note
    from pevpm.machine.presets import profile_of
    from pevpm.profile.builtin import different_host_note
    from pevpm.profile.store import Profile

    path = profile_of(spec)
    if path is None:
        return []
    notes = [different_host_note(spec.strip().partition(":")[0])]
    with Profile.open(path) as profile:
        notes.append(conditions_note(profile, quiet_too=False))
    return [note for note in notes if note]


def parse_counts(text: str) -> list[int]:
    """Process counts from ``-n``: ``"2,8..32"`` -> ``[2, 8, 16, 32]``; each at
    most :data:`pevpm.cli.numbers.MAX_PROCS`, at most :data:`MAX_COUNTS` of them.

    >>> parse_counts("1,2,4"), parse_counts("2..64"), parse_counts("3..24")
    ([1, 2, 4], [2, 4, 8, 16, 32, 64], [3, 6, 12, 24])
    """
    numbers.check_count_list(text, "-n")
    if text.count(",") >= MAX_COUNTS:
        raise PevpmError(f"more than {MAX_COUNTS} process counts", "-n")
    counts: list[int] = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        lo, dots, hi = part.partition("..")
        try:
            first = int(lo)
            last = int(hi) if dots else first
        except ValueError:
            raise PevpmError(f"process count {part!r} is not a number or a range a..b",
                             "-n") from None
        if first < 1 or last < first:
            raise PevpmError(f"process counts must be >= 1 and ranges a..b need a <= b, "
                             f"got {part!r}", "-n")
        n = first
        while n <= last:
            counts.append(n)
            n *= 2
    if not counts:
        raise PevpmError("no process counts given", "-n")
    return sorted(set(counts))


def calibrated_parameters(path: str, model) -> dict[str, float]:
    """The parameters of calibration file ``path`` that ``model`` declares (a note
    names the others; none at all is an error)."""
    from pevpm.calibrate import load_parameters
    from pevpm.model.loader import parameter_names

    measured = load_parameters(path)
    known = parameter_names(model) | set(model.constants)
    used = {name: value for name, value in measured.items() if name in known}
    if not used:
        raise PevpmError(f"the model uses none of its parameters ({', '.join(sorted(measured))})",
                         path)
    unused = sorted(set(measured) - set(used))
    if unused:
        print(f"pevpm predict: note: {path}: the model does not use {', '.join(unused)}",
              file=sys.stderr)
    return used


def _check_local_workers(workers: int | None, executor: str) -> None:
    """Refuse more local worker processes than :data:`LOCAL_WORKERS_PER_CPU` per CPU."""
    limit = LOCAL_WORKERS_PER_CPU * default_workers()
    if workers is not None and executor in ("local", "inline") and workers > limit:
        raise PevpmError(f"{workers} local workers on {default_workers()} CPUs; at most "
                         f"{limit} (use --executor dask:ADDRESS or mpi for more)", "--workers")


def format_table(predictions) -> str:
    """The text table of predictions (one row per process count)."""
    base = predictions[0]
    header = (f"{'procs':>6} {'mean (s)':>12} {'sd (s)':>11} {'min bound':>12} "
              f"{'max bound':>12} {'speedup':>8}")
    rows = [header, "-" * len(header)]
    for p in predictions:
        rows.append(f"{p.numprocs:>6} {p.mean:>12.6g} {p.sd:>11.3g} {_num(p.min_bound):>12} "
                    f"{_num(p.max_bound):>12} {base.mean / p.mean if p.mean else 0:>8.2f}")
    rows.append(f"speedup relative to {base.numprocs} rank{'s' if base.numprocs > 1 else ''}; "
                f"{base.runs} runs per count, seed {base.seed}")
    return "\n".join(rows)


def _num(value) -> str:
    return "-" if value is None else f"{value:.6g}"


def _default_counts(model) -> list[int]:
    if model.defaults.numprocs:
        return [int(model.defaults.numprocs)]
    raise PevpmError("give process counts with -n (the model has no Default numprocs)")


def _write_trace(model, numprocs, machine, params, seed, limits, path) -> None:
    from pevpm.report.trace import write_trace
    from pevpm.vm.engine import simulate
    from pevpm.vm.montecarlo import run_generator

    result = simulate(model, numprocs, machine, params=params, rng=run_generator(seed, 0),
                      trace=True, limits=limits)
    with outputs.replacing(path) as temp:
        write_trace(result, temp, title=f"pevpm: {model.source or 'model'} on {numprocs} ranks")
    print(f"trace of run 0 on {numprocs} ranks written to {path}", file=sys.stderr)


def _progress(total: int):
    """A bar on a terminal; in a log, a line every half minute of a long prediction."""
    from pevpm.progress import progress_bar

    return progress_bar(total, "predict", "run", leave=False, quiet_close=True)
