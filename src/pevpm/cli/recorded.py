"""A recorded trace beside a prediction: ``pevpm predict --recorded`` and
``pevpm report --recorded``.

    pevpm predict model.py --recorded run --trace both.json --machine default
    pevpm report demo --recorded run                       # the replay of the trace
    pevpm report demo --recorded run --model jacobi --section MPI_Barrier:MPI_Gather

The prediction always runs at the trace's rank count; without a model it is
the replay of the trace (as ``pevpm replay --perfetto``: run 0, the traced
delays kept).  See docs/trace.md.

>>> from pevpm.trace.events import Call, Trace
>>> two = Trace(((Call("MPI_Init", 0.0, 1.0),),) * 2)
>>> traced_count(two, None), traced_count(two, [2])
(2, 2)
>>> traced_count(two, [4])
Traceback (most recent call last):
...
pevpm.errors.PevpmError: -n: the recorded trace has 2 ranks, not 4
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

from pevpm.cli.outputs import (
    REDRAWN_REPORT,
    SIDE_BY_SIDE,
    archive_input,
    check_folder,
    check_output,
    input_paths,
    machine_input,
    replacing,
    replacing_folder,
)
from pevpm.errors import PevpmError

#: The side-by-side Perfetto file ``pevpm report --recorded`` writes into the report.
PERFETTO_FILE = "recorded-vs-predicted.json"
#: What predicts the recorded run when no model is given.
REPLAYED = ("the replay of the trace (its gaps as computation, its traced delays kept, "
            "every message through the machine's communication model)")


def read_recorded(path: str, section: str | None = None):
    """The :class:`~pevpm.trace.events.Trace` in trace directory or ``.otf2`` file
    ``path`` (``section``: ``START:STOP``, only each rank's run between them)."""
    from pevpm.trace.otf2.read import read_archive

    trace = read_archive(Path(path))
    if trace.numprocs == 0:
        raise PevpmError("the archive holds no MPI ranks", path)
    for rank, calls in enumerate(trace.ranks):
        if not calls:
            raise PevpmError(f"rank {rank} made no MPI calls", path)
    if section:
        start, _, stop = section.partition(":")
        if not start or not stop:
            raise PevpmError(f"expected START:STOP (two MPI call names), got {section!r}",
                             "--section")
        trace = trace.section(start, stop)
    return trace


def traced_count(trace, counts: list[int] | None) -> int:
    """The rank count a prediction beside ``trace`` runs at: the trace's; ``counts``
    (``-n``, when given) may only repeat it."""
    if counts is not None and counts != [trace.numprocs]:
        asked = ", ".join(map(str, counts))
        raise PevpmError(f"the recorded trace has {trace.numprocs} ranks, not {asked}", "-n")
    return trace.numprocs


def model_run(model, trace, machine, *, name: str, params=None, seed: int = 0, limits=None):
    """Run 0 of ``model`` (file ``name``) at the trace's rank count, with time slices;
    a model that does not run there is one error saying so."""
    from pevpm.vm.kernel.fastengine import simulate
    from pevpm.vm.strategies.montecarlo import run_generator

    try:
        return simulate(model, trace.numprocs, machine, params=params,
                        rng=run_generator(seed, 0), trace=True, limits=limits)
    except PevpmError as exc:
        raise PevpmError(f"the model does not run at the recorded trace's {trace.numprocs} "
                         f"ranks: {exc}", name) from None


def replay_run(trace, machine, *, source: str, seed: int = 0, speed: float = 1.0,
               delays: bool = True, table=None):
    """Run 0 of the replay of ``trace`` on ``machine``, with time slices: in arrays
    where they take the trace (no limit on its length), else through model
    statements (at most about 330,000 calls; a ``note:`` says why).  ``table``:
    the trace's :class:`~pevpm.trace.table.CallTable` if read already."""
    from pevpm.trace.replay import fast
    from pevpm.trace.replay.replay import replay_machine, table_program, trace_model
    from pevpm.vm.kernel.arrays import simulate as simulate_arrays
    from pevpm.vm.kernel.fastengine import simulate
    from pevpm.vm.strategies.montecarlo import run_generator

    quiet, rng = replay_machine(machine, delays), run_generator(seed, 0)
    checked = fast.check(table if table is not None else fast.table_of(trace))
    why = checked.why
    if why is None:
        program, _ = table_program(checked, speed, delays, source)
        return simulate_arrays(program, quiet, rng=rng, trace=True)
    print(f"pevpm: note: the run beside the recording is replayed through model statements, "
          f"not in arrays (at most about 330,000 calls): {why}", file=sys.stderr)
    return simulate(trace_model(trace, speed, source, delays), trace.numprocs, quiet, rng=rng,
                    trace=True)


def write_beside(trace, run, path, *, source: str, predicted: str, shown=None) -> None:
    """Write the recorded ``trace`` and the predicted ``run`` side by side to ``path``
    (``shown``: the path to tell the user, where it differs)."""
    from pevpm.report.side_by_side import write_side_by_side

    with replacing(path) as temp:
        write_side_by_side(trace, run, temp, f"{source} ({trace.numprocs} ranks)", predicted)
    print(f"recorded and predicted run written side by side to {shown or path}",
          file=sys.stderr)


def add_to_report(args) -> str:
    """``pevpm report DIR --recorded TRACE``: predict the trace's run (the replay, or
    ``--model`` at its rank count), write both side by side into the report and add
    the "recorded vs predicted" section; returns the page's path."""
    from pevpm.report.html import figure_files, read_results, write_report
    from pevpm.report.recorded import comparison_section

    inputs = [*archive_input(args.recorded), *input_paths(args.model),
              *machine_input(args.machine)]
    directory = check_folder(args.directory, REDRAWN_REPORT, inputs=inputs, force=args.force,
                             own=("machine.db", "calibration.json"))
    check_output(str(directory / PERFETTO_FILE), SIDE_BY_SIDE, inputs=inputs, force=args.force)
    trace = read_recorded(args.recorded, args.section)
    source = args.recorded + (f" (from {args.section.replace(':', ' to ')})"
                              if args.section else "")
    results = (read_results(str(directory)) if (directory / "results.json").is_file()
               else {"title": f"pevpm report: {args.recorded}"})
    spec = args.machine or (str(directory / "machine.db")
                            if (directory / "machine.db").is_file() else "default")
    run, predicted_by, title = _predicted_run(args, trace, directory, spec)
    results["recorded"] = comparison_section(trace, run, source=source,
                                             predicted_by=predicted_by, machine=spec,
                                             perfetto=PERFETTO_FILE)
    with replacing_folder(directory, REDRAWN_REPORT.what,
                          reuse=figure_files(results)) as stage:
        write_beside(trace, run, stage / PERFETTO_FILE, source=source, predicted=title,
                     shown=directory / PERFETTO_FILE)
        write_report(results, str(stage))
    return str(directory / "index.html")


def _predicted_run(args, trace, directory: Path, spec: str):
    """Run 0 beside the trace on machine ``spec``: of ``--model`` (with the default
    event limit of ``pevpm predict``), else of the replay; what predicted it, and the
    title of its process group."""
    from pevpm.cli.event_budget import EventBudget
    from pevpm.machine.presets import parse_machine
    from pevpm.vm.kernel.engine import Limits

    machine = parse_machine(spec)
    if not args.model:
        run = replay_run(trace, _with_collectives(machine, args.coll), source=args.recorded,
                         seed=args.seed)
        return run, REPLAYED, f"replay on {spec}"
    model, name, params, collectives = compared_model(args.model, directory, trace.numprocs,
                                                      args.defines, machine)
    run = model_run(model, trace, _with_collectives(machine, [*collectives, *args.coll]),
                    name=name, params=params, seed=args.seed,
                    limits=Limits(max_events=EventBudget.of(model, trace.numprocs, params).limit))
    shown = ", ".join(f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}"
                      for k, v in sorted(params.items()))
    return run, f"the model {name}" + (f" ({shown})" if shown else ""), f"{name} on {spec}"


def _with_collectives(machine, items: list[str]):
    from pevpm.machine.collectives import CollectiveConfig

    if not items:
        return machine
    return replace(machine, collectives=CollectiveConfig.parse(items, machine.collectives))


def compared_model(spec: str, directory: Path, numprocs: int, defines: list[str], machine):
    """The model ``--model`` names (a file, or one of the demo's examples: jacobi,
    fft2d, bag_of_tasks), its name, its parameters at ``numprocs`` ranks on ``machine``
    and the collective algorithms it assumes.  An example's parameters come from the
    report's ``calibration.json`` (``pevpm demo``'s) at the demo's full problem size;
    ``-D`` overrides them."""
    from pevpm.cli.arguments import parse_defines
    from pevpm.model.loader import load_model
    from pevpm.validate.cases import CASES, ProblemSize, with_machine

    path = Path(spec)
    case = CASES.get(spec) or next((c for c in CASES.values() if path.is_file()
                                    and path.resolve() == c.model_path.resolve()), None)
    if case:
        path = case.model_path
    if not path.is_file():
        raise PevpmError(f"no such model file (nor one of the demo's examples: "
                         f"{', '.join(CASES)})", spec)
    params: dict = {}
    calibration = directory / "calibration.json"
    if case and calibration.is_file():
        try:
            measured = json.loads(calibration.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise PevpmError(f"cannot read the calibration ({exc})", str(calibration)) from None
        params = case.model_params(measured, numprocs, ProblemSize())
    model = load_model(path)
    if case:
        params = with_machine(params, model, machine)
    params.update(parse_defines(defines))
    name = f"examples/{case.name}/model.py" if case else spec
    collectives = [case.collectives] if case and case.collectives else []
    return model, name, params, collectives
