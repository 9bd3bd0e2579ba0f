"""``pevpm bench`` (run MPIBench under mpiexec) and ``pevpm profile`` (inspect a profile).

Only the ``bench`` handler imports mpi4py, and only after every option has
been checked, so ``pevpm profile ...`` and bad ``bench`` options never start MPI.

    mpiexec -n 4 python -m pevpm bench --quick -o machine.db
    mpiexec -n 4 python -m pevpm bench --quick --placements 1x2,1x4 -o machine.db
    pevpm profile show machine.db
    pevpm profile export-csv machine.db -o machine.csv
    pevpm profile plot machine.db -o plots/
"""

from __future__ import annotations

import sys

from pevpm.bench.catalog import CATALOG, DEFAULT_TESTS, resolve_test
from pevpm.bench.options import (
    START_MODES,
    BenchOptions,
    available_memory_bytes,
    launcher_rank_and_size,
    parse_duration,
    parse_placements,
    parse_sizes,
)
from pevpm.cli import numbers, outputs
from pevpm.cli.paths import writable_file, writable_folder
from pevpm.errors import BenchmarkError, PevpmError

QUICK_PRESET = {"reps": 100, "sizes": "0,1K,16K,64K", "resend_limit": 100, "budget": "3s"}
FULL_PRESET = {"reps": 1000, "sizes": "0-8-128,256,512,1K,2K,4K,8K,16K,32K,64K",
               "resend_limit": 1000, "budget": "60s"}


def register(subparsers) -> None:
    bench = subparsers.add_parser(
        "bench", help="measure the machine's MPI performance (run under mpiexec)",
        description="MPIBench: time every operation at every process on a global clock. "
                    "Run as: mpiexec -n N python -m pevpm bench -o machine.db",
    )
    bench.add_argument("-o", "--output", required=True, type=writable_file,
                       help="profile file (SQLite) to write")
    bench.add_argument("--tests", help=f"comma-separated tests (default: {','.join(DEFAULT_TESTS)}; "
                       f"known: {','.join(sorted(CATALOG))})")
    bench.add_argument("--sizes", help="message sizes: START-STEP-STOP, START-*FACTOR-STOP, "
                       f"lists, K/M suffixes (default {FULL_PRESET['sizes']})")
    bench.add_argument("--reps", type=int, help="repetitions per size (default 1000)")
    bench.add_argument("--warmup", type=numbers.whole(0, 10**9), default=10,
                       help="warm-up repetitions (10)")
    bench.add_argument("--ppn", type=numbers.procs_per_node,
                       help="processes per node for placement "
                       "(default: from the real host names)")
    bench.add_argument("--placements", help="benchmark these NxP placements inside this "
                       "launch, e.g. 1x2,1x4 (the first N nodes, the first P ranks on each; "
                       "idle ranks sleep), or all (default: the launch's own placement)")
    bench.add_argument("--quick", action="store_true",
                       help="small plan finishing in under a minute on a few ranks: "
                            + ", ".join(f"{k}={v}" for k, v in QUICK_PRESET.items()))
    bench.add_argument("--resume", action="store_true",
                       help="continue the interrupted run stored in the output file")
    bench.add_argument("--sync", choices=("pairwise", "hierarchical"), default="pairwise",
                       help="clock sync: pairwise against rank 0 (thesis) or hierarchical "
                            "tree (log2 p rounds)")
    bench.add_argument("--resend-limit", type=int,
                       help="stop syncing after this many exchanges without a new minimum "
                            "round trip (thesis default 1000)")
    bench.add_argument("--start", choices=START_MODES, default="barrier",
                       help="start each repetition after a barrier, at an agreed global time, "
                            "or chain them back to back as a communication loop runs")
    bench.add_argument("--spacing", help="interval between timed starts (e.g. 100us; "
                       "default twice the slowest warm-up repetition)")
    bench.add_argument("--gap", help="compute for this long (e.g. 50us) before every "
                       "repetition, so messages follow computation as in most programs "
                       "(default: none)")
    bench.add_argument("--budget", help="time budget per test, e.g. 30s (default 60s)")
    bench.add_argument("--outlier-percentile", type=numbers.finite, default=99.0,
                       help="percentile (in percent) of the outlier rule (99)")
    bench.add_argument("--outlier-multiplier", type=numbers.finite, default=10.0,
                       help="times above this multiple of the percentile are outliers "
                            "(10 as in the thesis text; its appendix B uses 5)")
    bench.add_argument("--bin-width", help="histogram bin width, e.g. 0.05ms "
                       "(default automatic from the spread)")
    bench.add_argument("--max-raw", type=numbers.whole(1, 10**12), default=1_000_000,
                       help="keep at most this many raw times per block (random subsample)")
    bench.add_argument("--seed", type=numbers.seed, default=0,
                       help="seed of the raw-time subsampling")
    bench.add_argument("--machine", default="", help="machine name (default: first host)")
    bench.add_argument("--no-bind", dest="bind", action="store_false",
                       help="do not pin ranks to cores")
    bench.add_argument("--no-progress", dest="progress", action="store_false",
                       help="no progress bar")
    bench.set_defaults(func=run_bench)

    profile = subparsers.add_parser("profile", help="inspect a machine profile")
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
    plot.set_defaults(func=run_profile_plot)


def options_from_args(args) -> BenchOptions:
    """Turn parsed arguments into checked-later :class:`BenchOptions` (no MPI)."""
    preset = QUICK_PRESET if args.quick else FULL_PRESET

    def pick(name):
        value = getattr(args, name)
        return preset[name] if value is None else value

    tests = ([resolve_test(word) for word in args.tests.split(",") if word.strip()]
             if args.tests else [resolve_test(word) for word in DEFAULT_TESTS])
    if not tests:
        raise BenchmarkError("--tests: no tests given")
    return BenchOptions(
        output=args.output, tests=list(dict.fromkeys(tests)), sizes=parse_sizes(pick("sizes")),
        reps=pick("reps"), warmup=args.warmup, ppn=args.ppn,
        placements=parse_placements(args.placements) if args.placements else [],
        resume=args.resume,
        sync=args.sync, resend_limit=pick("resend_limit"), start=args.start,
        spacing=_duration(args.spacing, "--spacing") if args.spacing else None,
        gap=_duration(args.gap, "--gap") if args.gap else None,
        budget=_duration(pick("budget"), "--budget"), outlier_percentile=args.outlier_percentile,
        outlier_multiplier=args.outlier_multiplier,
        bin_width=_duration(args.bin_width, "--bin-width") if args.bin_width else None,
        max_raw=args.max_raw, seed=args.seed, machine=args.machine, bind=args.bind,
        progress=args.progress,
    )


def _duration(text: str, option: str) -> float:
    return numbers.finite_result(parse_duration, option)(text)


def run_bench(args) -> int:
    launch = launcher_rank_and_size()
    rank, nprocs = launch if launch else (0, None)
    try:
        options = options_from_args(args)
        options.validate(nprocs, available_memory_bytes())
    except PevpmError:
        if rank == 0:
            raise
        return 2
    from pevpm.bench.interrupts import InterruptWatch

    watch = InterruptWatch.install()
    from pevpm.bench.runner import run_benchmark

    return run_benchmark(options, watch)


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

    with open_profile(args.profile) as prof:
        paths = plot_profile(prof, args.output, test=args.test)
    for path in paths:
        print(path)
    return 0
