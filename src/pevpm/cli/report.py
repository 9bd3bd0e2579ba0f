"""``pevpm report``: redraw the report (``pevpm demo``, in :mod:`pevpm.cli.demo`, writes it).

>>> import argparse
>>> parser = argparse.ArgumentParser(prog="pevpm")
>>> register(parser.add_subparsers())
>>> parser.parse_args(["report", "out"]).directory
'out'
"""

from __future__ import annotations

import argparse
import os

from pevpm.cli import numbers, outputs
from pevpm.cli.arguments import add_collective_arguments
from pevpm.errors import PevpmError

#: The files a report folder holds that ``pevpm report`` (re)writes.
REPORT_FILES = ("index.html", "results.json")
#: Options that only mean something with ``pevpm report --recorded``.
RECORDED_OPTIONS = {"machine": "--machine", "model": "--model", "defines": "-D",
                    "section": "--section", "coll": "--coll"}


def register(subparsers) -> None:
    report = subparsers.add_parser(
        "report",
        description="Re-draw DIR/index.html from DIR/results.json. With --recorded TRACE, "
                    "also predict the traced run at its rank count (the replay of the trace, "
                    "or --model), write both side by side as a Perfetto file in DIR and add a "
                    "'recorded vs predicted' section; with --noise, add a 'computation noise "
                    "at scale' section; with --links, the busiest links of 'pevpm predict "
                    "--explain --json' and, on a --topology network, its picture with the "
                    "ranks placed (DIR needs no results.json for these two).")
    report.add_argument("directory", nargs="?", default="pevpm-report",
                        help="report folder holding results.json (default: %(default)s)")
    report.add_argument("--noise", nargs="+", metavar="JSON",
                        help="files of 'pevpm predict --json --calibration FILE' of one model "
                             "under different --compute-noise choices: show them side by side "
                             "(a table, printed too, and a plot; docs/calibration.md)")
    report.add_argument("--links", nargs="+", metavar="JSON",
                        help="files of 'pevpm predict --explain --json': show each explained "
                             "count's busiest links, and the network with the ranks placed on "
                             "it when it ran with --topology (docs/topology.md)")
    recorded = report.add_argument_group("recorded vs predicted")
    recorded.add_argument("--recorded", metavar="TRACE",
                          help="a trace directory or .otf2 file (pevpm trace's or Score-P's)")
    recorded.add_argument("--machine", metavar="SPEC",
                          help="as for pevpm predict (default: DIR/machine.db when there, "
                               "else default)")
    recorded.add_argument("--model", metavar="MODEL",
                          help="predict with this model file, or one of the demo's examples "
                               "(jacobi, fft2d, bag_of_tasks: parameters from "
                               "DIR/calibration.json), instead of replaying the trace")
    recorded.add_argument("-D", dest="defines", action="append", default=[],
                          metavar="NAME=VALUE", help="set a model parameter (repeatable)")
    recorded.add_argument("--section", metavar="START:STOP",
                          help="compare only each rank's run from the end of its first START "
                               "call to the first STOP call after it (e.g. "
                               "MPI_Barrier:MPI_Gather, the examples' timed loop)")
    recorded.add_argument("--seed", type=numbers.seed, default=0, help="random seed (0)")
    add_collective_arguments(recorded)
    outputs.add_force(report)
    report.set_defaults(func=run_report)


def run_report(args: argparse.Namespace) -> int:
    given = [flag for flag in ("noise", "links", "recorded") if getattr(args, flag)]
    if len(given) > 1:
        raise PevpmError(f"give one of --{' or --'.join(given)} (run pevpm report again for "
                         "the other)")
    if args.recorded:
        from pevpm.cli.recorded import add_to_report

        print(f"report: {add_to_report(args)}")
        return 0
    stray = [flag for key, flag in RECORDED_OPTIONS.items() if getattr(args, key)]
    if stray:
        raise PevpmError(f"only with --recorded TRACE: {', '.join(stray)}")
    if args.noise:
        return _add_noise(args.directory, args.noise, args.force)
    if args.links:
        return _add_links(args.directory, args.links, args.force)
    from pevpm.report.html import figure_files, read_results, write_report

    folder = outputs.check_folder(args.directory, outputs.REDRAWN_REPORT, force=args.force)
    results = read_results(args.directory)
    with outputs.replacing_folder(folder, outputs.REDRAWN_REPORT.what,
                                  reuse=figure_files(results)) as stage:
        write_report(results, str(stage))
    print(f"report: {os.path.join(args.directory, 'index.html')}")
    return 0


def _add_noise(directory: str, files: list[str], force: bool) -> int:
    """``pevpm report DIR --noise A.json B.json ...``: add (or replace) the view of these
    predictions to the report in ``directory``, print it as a table."""
    from pevpm.report.noise import noise_text, noise_view

    def add(loaded: list) -> tuple[str, dict, str]:
        title, view = noise_view(loaded, files)
        return title, {"noise": {title: view}}, noise_text(title, view)

    return _add_to_report(directory, files, force, add)


def _add_links(directory: str, files: list[str], force: bool) -> int:
    """``pevpm report DIR --links A.json ...``: add (or replace) the busiest links of
    every explained count of these predictions, each named "MODEL, N ranks"."""
    def add(loaded: list) -> tuple[str, dict, str]:
        sections = {}
        for data, path in zip(loaded, files):
            if not isinstance(data, dict) or not isinstance(data.get("predictions"), list):
                raise PevpmError("not the output of pevpm predict --json", path)
            for found in data["predictions"]:
                if isinstance(found, dict) and "links" in found:
                    sections[f"{data.get('model')}, {found.get('numprocs')} ranks"] = {
                        "network": found.get("network"), "rows": found["links"],
                        **({"placement": found["placement"]} if "placement" in found else {})}
        if not sections:
            raise PevpmError("no busiest links in these predictions: run pevpm predict with "
                             "--explain --json", files[0])
        return "busiest links", {"links": sections}, "\n".join(f"links: {t}" for t in sections)

    return _add_to_report(directory, files, force, add)


def _add_to_report(directory: str, files: list[str], force: bool, add) -> int:
    """Read ``files`` (JSON), merge the sections ``add(loaded)`` gives into the report
    in ``directory`` (a new one titled after them if it has no results.json), print
    its text and redraw the report."""
    from pathlib import Path

    from pevpm.files import read_json
    from pevpm.report.html import figure_files, read_results, write_report
    from pevpm.report.results_schema import check_results

    for path in map(Path, files):
        if path.name in REPORT_FILES and path.resolve().parent == Path(directory).resolve():
            raise PevpmError("is one of the files this report writes; give predictions "
                             "saved elsewhere", str(path))
    folder = outputs.check_folder(directory, outputs.REDRAWN_REPORT, inputs=files, force=force)
    title, sections, text = add([read_json(path, "pevpm predict --json output")
                                 for path in files])
    results = (read_results(directory) if (folder / "results.json").is_file()
               else {"title": f"pevpm report: {title}"})
    for key, entries in sections.items():
        results.setdefault(key, {}).update(entries)
    check_results(results, files[0])
    print(text)
    with outputs.replacing_folder(folder, outputs.REDRAWN_REPORT.what,
                                  reuse=figure_files(results)) as stage:
        write_report(results, str(stage))
    print(f"report: {os.path.join(directory, 'index.html')}")
    return 0
