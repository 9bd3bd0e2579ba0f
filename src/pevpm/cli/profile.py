"""``pevpm profile``: inspect a machine profile (imports no MPI).

    pevpm profile show machine.db
    pevpm profile export-csv machine.db -o machine.csv
    pevpm profile plot machine.db -o plots/
    pevpm profile import osu_latency.txt IMB-MPI1.txt -o cluster.db
"""

from __future__ import annotations

import sys

from pevpm.cli import numbers, outputs
from pevpm.cli.paths import writable_file, writable_folder


def register(subparsers) -> None:
    profile = subparsers.add_parser("profile")
    actions = profile.add_subparsers(dest="profile_command", metavar="ACTION", required=True)
    profile_help = "profile file, or a built-in profile's name (default; see pevpm machine list)"
    show = actions.add_parser("show", help="list what the profile holds and where it was "
                              "measured")
    show.add_argument("profile", help=profile_help)
    show.set_defaults(func=run_profile_show)
    export = actions.add_parser("export-csv", help="summaries as CSV (size, min, avg, max, "
                                "percentiles in microseconds)")
    export.add_argument("profile", help=profile_help)
    export.add_argument("-o", "--output", type=writable_file,
                        help="CSV file (default: standard output)")
    export.add_argument("--test", help="only this test")
    export.add_argument("--nxp", help="only this placement, e.g. 1x4")
    outputs.add_force(export)
    export.set_defaults(func=run_profile_export_csv)
    plot = actions.add_parser("plot", help="one PNG page per test and placement")
    plot.add_argument("profile", help=profile_help)
    plot.add_argument("-o", "--output", default="bench-plots", type=writable_folder,
                      help="directory for the PNGs")
    plot.add_argument("--test", help="only this test")
    outputs.add_force(plot)
    plot.set_defaults(func=run_profile_plot)
    imports = actions.add_parser(
        "import", help="read OSU micro-benchmark or Intel MPI Benchmarks output into a profile",
        description="Read the text output of OSU (osu_latency, osu_multi_lat, osu_bw, "
                    "osu_bibw, collectives) or IMB-MPI1 (PingPong, PingPing, Sendrecv, "
                    "Exchange, collectives) into a profile, one block per test, size and "
                    "process count.")
    imports.add_argument("files", nargs="+", metavar="FILE", help="OSU or IMB output")
    imports.add_argument("-o", "--output", required=True, type=writable_file,
                         help="profile to write (created, or added to)")
    imports.add_argument("--procs", type=numbers.whole(2, 10**7),
                         help="process count of OSU runs (their output does not say; "
                              "default 2)")
    imports.add_argument("--nodes", type=numbers.whole(1, 10**7), default=1,
                         help="nodes the processes ran on (default 1)")
    imports.set_defaults(func=run_profile_import)


def run_profile_show(args) -> int:
    from pevpm.bench.results import describe
    from pevpm.profile.builtin import open_profile

    with open_profile(args.profile) as prof:
        print(describe(prof))
    return 0


def run_profile_export_csv(args) -> int:
    from pevpm.bench.results import write_csv
    from pevpm.profile.builtin import open_profile

    if args.output:
        out = outputs.check_output(args.output, outputs.CSV, force=args.force,
                                   inputs=outputs.machine_input(args.profile))
    with open_profile(args.profile) as prof:
        if args.output:
            with outputs.replacing(out) as temp, open(temp, "w", newline="") as stream:
                count = write_csv(prof, stream, test=args.test, nxp=args.nxp)
            print(f"wrote {count} rows to {args.output}", file=sys.stderr)
        else:
            write_csv(prof, sys.stdout, test=args.test, nxp=args.nxp)
    return 0


def run_profile_plot(args) -> int:
    from pevpm.profile.builtin import open_profile
    from pevpm.report.bench_plots import plot_profile

    folder = outputs.check_folder(args.output, outputs.PLOTS, force=args.force,
                                  inputs=outputs.machine_input(args.profile))
    with open_profile(args.profile) as prof, \
            outputs.replacing_folder(folder, outputs.PLOTS.what) as stage:
        paths = plot_profile(prof, stage, test=args.test)
    for path in paths:
        print(folder / path.name)
    return 0


def run_profile_import(args) -> int:
    from pevpm.profile.imported import SHAPE, import_file

    for path in args.files:
        table, keys = import_file(path, args.output, procs=args.procs, nodes=args.nodes)
        tests = ", ".join(dict.fromkeys(f"{k.test}{k.variant} {k.nxp}" for k in keys))
        print(f"pevpm profile import: {len(keys)} blocks ({tests}) from {table.source} "
              f"output {path} into {args.output}")
        if table.skipped:
            print(f"pevpm profile import: note: {path}: skipped benchmarks with no profile "
                  f"counterpart: {', '.join(dict.fromkeys(table.skipped))}", file=sys.stderr)
        if args.procs is None and table.source.startswith("OSU"):
            print(f"pevpm profile import: note: {path}: OSU output does not say how many "
                  "processes ran; assumed 2 (give --procs)", file=sys.stderr)
    print(f"pevpm profile import: note: {SHAPE}", file=sys.stderr)
    return 0
