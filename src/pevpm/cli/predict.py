"""``pevpm predict``: Monte Carlo prediction of a model over process counts.

    pevpm predict jacobi.c -n 2..64 --runs 200 --seed 1 --machine perseus
    pevpm predict model.py -n 1,2,4 -D iterations=10 --json
    pevpm predict model.py -n 16 --trace jacobi16.json     # open in ui.perfetto.dev
    pevpm predict model.py --recorded run --trace both.json  # beside a traced run
    pevpm predict ring.py -n 2 --machine default --explain  # profile blocks, busiest links

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
from pevpm.cli.arguments import (
    add_collective_arguments,
    add_topology_arguments,
    collective_config,
    parse_defines,
)
from pevpm.cli.event_budget import EventBudget
from pevpm.cli.paths import writable_file
from pevpm.errors import EventLimitError, PevpmError, did_you_mean
from pevpm.model.event_estimate import (
    ABSURD,
    CEILING,
    DEFAULT_EVENTS_PER_RANK,
    DEFAULT_MAX_EVENTS,
    MARGIN,
)
from pevpm.vm.strategies.executors import EXECUTOR_NAMES, default_workers

DEFAULT_MACHINE = "perseus"
#: Runs a ``--precision`` request judges the spread on first.
PILOT_RUNS = 20
#: Most runs ``--precision`` picks for one count.
MAX_PRECISION_RUNS = 10_000
#: Normal quantile of a two-sided 95% confidence interval.
Z_95 = 1.96
#: Simulated messages past which ``--precision`` says how many a request implies.
MANY_MESSAGES = 10**8


def precision(text: str) -> float:
    """``--precision``: a relative half-width, ``1%`` or ``0.01`` (above 0, below 1).

    >>> precision("1%"), precision("0.5 %"), precision("0.02")
    (0.01, 0.005, 0.02)
    """
    import argparse
    import math

    value = text.strip()
    percent = value.endswith("%")
    try:
        number = float(value.rstrip("%").strip()) / (100 if percent else 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a precision: {text!r} (e.g. 1%)") from None
    if not (math.isfinite(number) and 0 < number < 1):
        raise argparse.ArgumentTypeError(f"precision must be above 0 and below 100%, got "
                                         f"{text!r}")
    return number


def noise_choice(text: str) -> tuple[str | None, dict[str, str]]:
    """``--compute-noise``: a noise for every region and/or ``PARAMETER=NOISE`` for
    one (its ``_sd`` follows), comma-separated.

    >>> noise_choice("robust"), noise_choice("none,t_dot=calibrated")
    (('robust', {}), ('none', {'t_dot': 'calibrated'}))
    """
    import argparse

    from pevpm.calibrate.parameters import NOISE_MODES

    default, chosen = None, {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, _, mode = item.rpartition("=")
        if mode not in NOISE_MODES or (name and not name.isidentifier()) \
                or (not name and "=" in item):
            raise argparse.ArgumentTypeError(
                f"{item!r}: give {' | '.join(NOISE_MODES)}, or PARAMETER=NOISE "
                "(e.g. robust,t_dot=calibrated)")
        if name:
            chosen[name] = mode
        else:
            default = mode
    if default is None and not chosen:
        raise argparse.ArgumentTypeError(f"no noise given in {text!r}")
    return default, chosen


def runs_for_precision(mean: float, sd: float, wanted: float) -> int:
    """Monte Carlo runs that put the mean within ``wanted`` (relative) at 95%
    confidence, given a pilot's ``mean`` and ``sd``: ``(1.96 sd / (wanted mean))^2``,
    at least :data:`PILOT_RUNS`, at most :data:`MAX_PRECISION_RUNS`.

    >>> runs_for_precision(1.0, 0.1, 0.01), runs_for_precision(1.0, 0.0, 0.01)
    (385, 20)
    """
    import math

    if mean <= 0 or sd <= 0:
        return PILOT_RUNS
    needed = math.ceil((Z_95 * sd / (wanted * mean)) ** 2)
    return min(MAX_PRECISION_RUNS, max(PILOT_RUNS, needed))


#: Most process counts one ``-n`` may list.
MAX_COUNTS = 1000
#: Most local worker processes per CPU (more only costs memory and start-up).
LOCAL_WORKERS_PER_CPU = 4


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "predict",
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
    p.add_argument("--precision", type=precision, metavar="P%",
                   help="pick the runs per count: enough for the mean to within P%% at 95%% "
                        f"confidence, judged on {PILOT_RUNS} pilot runs (at most "
                        f"{MAX_PRECISION_RUNS:,}); replaces --runs")
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
    add_topology_arguments(p)
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
                        f"ends (default: {MARGIN} x the events the model's loop counts imply, "
                        f"at least {DEFAULT_MAX_EVENTS:.0e} and {DEFAULT_EVENTS_PER_RANK:,} "
                        f"per rank, at most {CEILING:.0e}, the least past {ABSURD:.0e}; "
                        "0 = no limit)")
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
                        "placement, how many) and which network links were busiest "
                        "(use, messages, time waited, the place they slowed most)")
    p.add_argument("--weak", action="store_true",
                   help="weak scaling (the model grows the problem with the ranks): show "
                        "the efficiency t(1)/t(p) and the time per rank of work t(p)/p "
                        "instead of the speedup")
    p.add_argument("--json", action="store_true",
                   help="print the predictions as JSON: per rank count its summary, every "
                        "rank's times and each collective call site")
    p.add_argument("--json-full", action="store_true",
                   help="--json with every call of every collective and each rank's "
                        "completion time in it (megabytes at 1,024 ranks)")
    p.add_argument("--trace", metavar="FILE", type=writable_file,
                   help="write a Chrome/Perfetto trace of one run at the largest count")
    p.add_argument("--recorded", metavar="TRACE",
                   help="with --trace: put this recorded run (pevpm trace's directory or an "
                        ".otf2 file) beside the predicted one, which runs at its rank count")
    p.add_argument("--binding", choices=("auto", "c", "python"), default="auto",
                   help="how the program calls MPI: python (mpi4py) adds the binding cost "
                        "a profile measured with MPIBench's C core stores; auto: python for "
                        "annotated .py sources and model files saying BINDING = \"python\"")
    p.add_argument("--calibration", metavar="FILE",
                   help="parameters measured by 'pevpm calibrate' (-D options override them)")
    p.add_argument("--compute-noise", type=noise_choice, metavar="NOISE",
                   help="with --calibration, the spread of each region's time: robust "
                        "(median and MAD, the default), calibrated (mean and sd as measured, "
                        "other jobs' noise included) or none; per parameter too: "
                        "robust,t_dot=calibrated (docs/calibration.md)")
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
    from pevpm.vm.kernel.engine import Limits
    from pevpm.vm.strategies.executors import open_executor
    from pevpm.vm.strategies.leftovers import warning_lines
    from pevpm.vm.strategies.montecarlo import predict

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
    machine = parse_machine(_with_binding(args.machine, args.model, args.binding),
                            ppn=args.ppn, processor=args.processor, nodes=args.nodes,
                            topology=args.topology, placement=args.placement, seed=args.seed)
    if args.coll:
        machine = replace(machine, collectives=collective_config(args, machine.collectives))
    if not Path(args.model).is_file():
        raise PevpmError("no such model file", args.model)
    model = load_model(args.model, processor=args.processor)
    if args.compute_noise and not args.calibration:
        raise PevpmError("--compute-noise chooses among a calibration file's figures: give "
                         "--calibration FILE too")
    noise = None
    if args.calibration:
        measured, noise = calibrated_parameters(args.calibration, model, args.compute_noise)
        params = {**measured, **params}
    if params:
        model = with_parameters(model, params)
    recorded = _recorded(args)
    if recorded is not None:
        from pevpm.cli.recorded import traced_count

        counts = [traced_count(recorded, parse_counts(args.procs) if args.procs else None)]
    else:
        counts = parse_counts(args.procs) if args.procs else _default_counts(model)
    for note in (*_origin_notes(args.machine), *_profile_notes(machine, counts)):
        print(f"pevpm predict: note: {note}", file=sys.stderr)
    budgets = {n: EventBudget.of(model, n, params) for n in counts}
    limits = Limits(max_events=args.max_events or None, max_time=args.max_time,
                    max_wall=args.max_wall)

    def limits_for(n: int) -> Limits:
        if args.max_events is None:
            return replace(limits, max_events=budgets[n].limit)
        return limits

    if recorded is not None:        # before the Monte Carlo: the model must run at its count
        from pevpm.cli.recorded import model_run

        recorded_run = model_run(model, recorded, machine, name=args.model, params=params,
                                 seed=args.seed, limits=limits_for(counts[0]))
    predictions, failures = [], {}
    runs = PILOT_RUNS if args.precision else args.runs
    with _progress(None if args.precision else len(counts) * runs, sum(counts) * runs) as bar, \
            open_executor(args.executor, args.workers) as executor:
        for n in counts:
            bar.set_description(f"{n} ranks")
            if hasattr(bar, "set_weight"):
                bar.set_weight(n)           # a run's cost grows with its ranks

            def run(count: int, n: int = n):
                return predict(model, n, machine, runs=count, seed=args.seed, params=params,
                               executor=executor, workers=args.workers, bounds=args.bounds,
                               progress=bar.update, limits=limits_for(n), exact=args.exact)
            if predictions and not args.precision:
                _warn_if_large(predictions[-1], n, runs)
            try:
                prediction = run(runs)
                if args.precision:
                    prediction = _to_precision(prediction, args.precision, run)
                predictions.append(prediction)
            except PevpmError as err:
                if isinstance(err, EventLimitError) and args.max_events is None:
                    err = budgets[n].stopped(err)
                if len(counts) == 1:
                    raise err from None
                failures[n] = err
    if not predictions:             # every count failed: the first error says it all
        raise next(iter(failures.values()))
    counts = [p.numprocs for p in predictions]
    for n, prediction in zip(counts, predictions):
        note = _extrapolation_note(prediction.extrapolation)
        for line in ([note] if note else []) + list(prediction.engine_notes):
            print(f"pevpm predict: note: {n} rank{'s' if n > 1 else ''}: {line}",
                  file=sys.stderr)
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
        from pevpm.vm.strategies.explain import explain_network

        explanations = {n: explain_network(model, n, machine, params=params, seed=args.seed,
                                           limits=limits_for(n)) for n in counts}
        for n, explained in explanations.items():
            print(f"pevpm predict: note: {n} rank{'s' if n > 1 else ''}: "
                  f"{explained.engine_note}", file=sys.stderr)
    if args.json or args.json_full:
        from pevpm.analytic.scaling import scaling_views
        from pevpm.cli.predict_json import prediction_entry

        views = scaling_views(counts, [p.mean for p in predictions], weak=args.weak)
        entries = {p.numprocs: {**prediction_entry(p, full=args.json_full), **view,
                                **_explained(explanations, p.numprocs, machine, args.topology)}
                   for p, view in zip(predictions, views)}
        entries.update({n: {"numprocs": n, "error": str(err)} for n, err in failures.items()})
        print(json.dumps({"model": args.model, "machine": args.machine, "seed": args.seed,
                          "runs": args.runs, "scaling": "weak" if args.weak else "strong",
                          "calibration": args.calibration, "compute_noise": noise,
                          "speedup_base": predictions[0].numprocs,
                          "predictions": [entries[n] for n in sorted(entries)]}))
    else:
        print(format_table(predictions, failures, weak=args.weak))
        if explanations:
            from pevpm.vm.kernel.links import format_links
            from pevpm.vm.strategies.explain import format_explanation

            for n, explained in explanations.items():
                print()
                if explained.blocks is None:
                    print(f"{n} rank{'s' if n != 1 else ''}: no profile blocks (the "
                          f"communication model is {type(machine.comm).__name__})")
                else:
                    print(format_explanation(n, explained.blocks))
                print(f"{n} rank{'s' if n != 1 else ''}: busiest links of one run")
                print(format_links(explained.links, explained.network))
    for n, err in sorted(failures.items()):
        print(f"pevpm: error: {n} rank{'s' if n > 1 else ''}: {err}", file=sys.stderr)
    return 2 if failures else 0


def _warn_if_large(previous, numprocs: int, runs: int) -> None:
    """Before a count, a note when its runs will simulate more than
    :data:`MANY_MESSAGES` messages, estimated from the ``previous`` count's
    messages per rank (a run's messages grow with its ranks)."""
    per_rank_run = previous.messages_simulated / previous.runs / previous.numprocs
    estimate = per_rank_run * numprocs * runs
    if estimate > MANY_MESSAGES:
        print(f"pevpm predict: note: {numprocs} ranks: {runs:,} runs will simulate about "
              f"{estimate:.2g} messages (from {previous.numprocs} ranks' "
              f"{per_rank_run:.3g} a rank a run; minutes at 1-2 million a second per "
              "worker); --precision P% picks the runs a precision needs", file=sys.stderr)


def _to_precision(pilot, wanted: float, run):
    """The prediction of as many runs as ``wanted`` precision needs, judged on the
    ``pilot`` prediction (reused when it has enough); notes say how many, and how
    many messages they simulate when that is large."""
    n = pilot.numprocs
    needed = runs_for_precision(pilot.mean, pilot.sd, wanted)
    cv = pilot.sd / pilot.mean if pilot.mean else 0.0
    capped = (f" (capped: {MAX_PRECISION_RUNS:,} runs reach "
              f"{Z_95 * cv / MAX_PRECISION_RUNS ** 0.5:.2%})"
              if needed == MAX_PRECISION_RUNS else "")
    print(f"pevpm predict: note: {n} rank{'s' if n > 1 else ''}: --precision {wanted * 100:g}%: "
          f"{pilot.runs} pilot runs gave sd/mean {cv:.2%}, so {needed:,} runs{capped}",
          file=sys.stderr)
    messages = pilot.messages_simulated / pilot.runs * needed
    if messages > MANY_MESSAGES:
        print(f"pevpm predict: note: {n} ranks: {needed:,} runs simulate about {messages:.2g} "
              "messages (minutes at 1-2 million a second per worker); a looser --precision "
              "or a fixed --runs costs less", file=sys.stderr)
    return pilot if needed <= pilot.runs else run(needed)


def _with_binding(spec: str, model: str, choice: str) -> str:
    """The machine spec with ``binding=python`` added for a Python program (``choice``
    ``python``, or ``auto`` and :func:`~pevpm.model.loader.program_binding` says so)
    when it names a profile and does not set the binding itself."""
    from pevpm.machine.presets import profile_of
    from pevpm.model.loader import program_binding

    binding = program_binding(model) if choice == "auto" else choice
    if binding != "python" or profile_of(spec) is None or "binding=" in spec:
        return spec
    return spec + ("," if ":" in spec else ":") + "binding=python"


def _recorded(args):
    """The trace of ``--recorded`` (which needs ``--trace``), or None."""
    if not args.recorded:
        return None
    if not args.trace:
        raise PevpmError("--recorded needs --trace FILE (the side-by-side Perfetto file)")
    from pevpm.cli.recorded import read_recorded

    return read_recorded(args.recorded)


def _explained(explanations: dict, numprocs: int, machine, topology: str | None) -> dict:
    """``{"explain": [...], "links": [...], "network": ..., "placement": ...}`` for a
    count that was explained (``explain`` only with a profile; ``placement``, the
    node of each rank, only on a ``--topology`` network), else nothing."""
    if numprocs not in explanations:
        return {}
    explained = explanations[numprocs]
    found = {"links": [use.to_dict() for use in explained.links],
             "network": explained.network}
    if topology is not None:
        placed = machine.topology.place(numprocs)
        found["placement"] = {"topology": topology, "how": placed.how,
                              "node_of": list(placed.node_of)}
    if explained.blocks is not None:
        found["explain"] = [use.to_dict() for use in explained.blocks]
    return found


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


def calibrated_parameters(path: str, model, noise=None) -> tuple[dict[str, float], str]:
    """The parameters of calibration file ``path`` that ``model`` declares, under
    computation noise ``noise`` (:func:`noise_choice`'s pair; default: the file's,
    robust), and the noise as ``--compute-noise`` would say it; a note says which
    noise was used and names the parameters the model does not use; none used at
    all is an error."""
    from pevpm.calibrate.parameters import NOISE_MEANING, load_calibration
    from pevpm.model.loader import parameter_names

    default, per_parameter = noise or (None, {})
    measured, default = load_calibration(path, default)
    for name, mode in per_parameter.items():
        chosen = load_calibration(path, mode)[0]
        if name not in chosen:
            raise PevpmError(f"no parameter {name!r} in the calibration"
                             + did_you_mean(name, chosen), "--compute-noise")
        measured.update({key: chosen[key] for key in (name, f"{name}_sd") if key in chosen})
    exceptions = "".join(f"; {name}: {mode}" for name, mode in per_parameter.items())
    print(f"pevpm predict: note: computation noise: {default} ({NOISE_MEANING[default]}, "
          f"from {path}){exceptions}; --compute-noise "
          f"{'|'.join(n for n in NOISE_MEANING if n != default)} for the others",
          file=sys.stderr)
    known = parameter_names(model) | set(model.constants)
    used = {name: value for name, value in measured.items() if name in known}
    if not used:
        raise PevpmError(f"the model uses none of its parameters ({', '.join(sorted(measured))})",
                         path)
    unused = sorted(set(measured) - set(used))
    if unused:
        print(f"pevpm predict: note: {path}: the model does not use {', '.join(unused)}",
              file=sys.stderr)
    return used, ",".join([default, *(f"{name}={mode}" for name, mode in per_parameter.items())])


def _check_local_workers(workers: int | None, executor: str) -> None:
    """Refuse more local worker processes than :data:`LOCAL_WORKERS_PER_CPU` per CPU."""
    limit = LOCAL_WORKERS_PER_CPU * default_workers()
    if workers is not None and executor in ("local", "inline") and workers > limit:
        raise PevpmError(f"{workers} local workers on {default_workers()} CPUs; at most "
                         f"{limit} (use --executor dask:ADDRESS or mpi for more)", "--workers")


def format_table(predictions, failures: dict | None = None, weak: bool = False) -> str:
    """The text table of predictions, one row per process count: a count in
    ``failures`` (count -> error) gets a row saying it failed.  Strong scaling
    shows the speedup and parallel efficiency over the smallest count; ``weak``
    the efficiency ``t(b)/t(p)`` and the time per rank of work ``t(p)/p``
    (:mod:`pevpm.analytic.scaling`).

    >>> from pevpm.model.builder import ModelBuilder
    >>> from pevpm.machine.presets import parse_machine
    >>> from pevpm.vm.strategies.montecarlo import predict
    >>> b = ModelBuilder()
    >>> b.serial("1.0 / numprocs")
    >>> ps = [predict(b.build(), n, parse_machine("constant:latency=0"), runs=2) for n in (1, 4)]
    >>> print(format_table(ps, {2: PevpmError("deadlock: rank 1 ...")}))
     procs     mean (s)      sd (s)    min bound    max bound  speedup  efficiency
    ------------------------------------------------------------------------------
         1            1           0            1            1     1.00       1.000
         2  failed: deadlock: rank 1 ... (error below)
         4         0.25           0         0.25         0.25     4.00       1.000
    speedup and efficiency relative to 1 rank; 2 runs per count, seed 0
    """
    from pevpm.analytic.scaling import scaling_views

    base = predictions[0]
    views = dict(zip((p.numprocs for p in predictions),
                     scaling_views([p.numprocs for p in predictions],
                                   [p.mean for p in predictions], weak=weak)))
    columns = ((("efficiency", 11, "efficiency", ".3f"),
                ("s/rank work", 12, "seconds_per_rank_work", ".6g")) if weak else
               (("speedup", 8, "speedup", ".2f"), ("efficiency", 11, "efficiency", ".3f")))
    header = (f"{'procs':>6} {'mean (s)':>12} {'sd (s)':>11} {'min bound':>12} "
              f"{'max bound':>12}" + "".join(f" {title:>{width}}"
                                                 for title, width, _, _ in columns))
    rows = [header, "-" * len(header)]
    by_count = {p.numprocs: p for p in predictions}
    for n in sorted({*by_count, *(failures or {})}):
        if n not in by_count:
            rows.append(f"{n:>6}  failed: {failures[n]} (error below)")
            continue
        p = by_count[n]
        rows.append(f"{n:>6} {p.mean:>12.6g} {p.sd:>11.3g} {_num(p.min_bound):>12} "
                    f"{_num(p.max_bound):>12}" + "".join(
                        f" {_num(views[n][key], spec):>{width}}"
                        for _, width, key, spec in columns))
    what = "efficiency (weak scaling)" if weak else "speedup and efficiency"
    runs = sorted({p.runs for p in predictions})
    per_count = (f"{runs[0]} runs per count" if len(runs) == 1 else
                 "runs per count: " + ", ".join(str(p.runs) for p in predictions))
    rows.append(f"{what} relative to {base.numprocs} rank{'s' if base.numprocs > 1 else ''}; "
                f"{per_count}, seed {base.seed}")
    return "\n".join(rows)


def _num(value, spec: str = ".6g") -> str:
    return "-" if value is None else f"{value:{spec}}"


def _default_counts(model) -> list[int]:
    if model.defaults.numprocs:
        return [int(model.defaults.numprocs)]
    raise PevpmError("give process counts with -n (the model has no Default numprocs)")


def _write_trace(model, numprocs, machine, params, seed, limits, path) -> None:
    from pevpm.report.trace import write_trace
    from pevpm.vm.kernel.fastengine import simulate
    from pevpm.vm.strategies.montecarlo import run_generator

    result = simulate(model, numprocs, machine, params=params, rng=run_generator(seed, 0),
                      trace=True, limits=limits)
    if result.engine_note:
        print(f"pevpm predict: note: the trace of run 0 on {numprocs} ranks: the "
              f"pure-Python engine ran it: {result.engine_note}", file=sys.stderr)
    with outputs.replacing(path) as temp:
        write_trace(result, temp, title=f"pevpm: {model.source or 'model'} on {numprocs} ranks")
    print(f"trace of run 0 on {numprocs} ranks written to {path}", file=sys.stderr)


def _progress(total: int, work: int):
    """A bar on a terminal; in a log, a line every half minute of a long prediction,
    with the time left at the pace so far (a run's work taken as its rank count)."""
    from pevpm.progress import progress_bar

    return progress_bar(total, "predict", "run", leave=False, quiet_close=True,
                        work_total=work)
