"""``pevpm bench``: run MPIBench under mpiexec.

Only the handler imports mpi4py, and only after every option has been
checked, so bad options never start MPI (``pevpm profile``, in
:mod:`pevpm.cli.profile`, inspects what it wrote).

    mpiexec -n 4 python -m pevpm bench --quick -o machine.db
    mpiexec -n 4 python -m pevpm bench --quick --placements 1x2,1x4 -o machine.db
"""

from __future__ import annotations

from pevpm.bench.catalog import CATALOG, DEFAULT_TESTS, resolve_test
from pevpm.bench.options import (
    BINDINGS,
    START_MODES,
    BenchOptions,
    available_memory_bytes,
    launcher_rank_and_size,
    parse_duration,
    parse_placements,
    parse_sizes,
)
from pevpm.cli import numbers
from pevpm.cli.paths import writable_file
from pevpm.errors import BenchmarkError, PevpmError

QUICK_PRESET = {"reps": 100, "sizes": "0,1K,16K,64K", "resend_limit": 100, "budget": "3s"}
FULL_PRESET = {"reps": 1000, "sizes": "0-8-128,256,512,1K,2K,4K,8K,16K,32K,64K",
               "resend_limit": 1000, "budget": "60s"}


def register(subparsers) -> None:
    bench = subparsers.add_parser(
        "bench",
        description="MPIBench: time every operation at every process on a global clock. "
                    "Run as: mpiexec -n N python -m pevpm bench -o machine.db",
    )
    bench.add_argument("-o", "--output", required=True, type=writable_file,
                       help="profile file (SQLite) to write")
    bench.add_argument("--tests", help=f"comma-separated tests (default: {','.join(DEFAULT_TESTS)}; "
                       f"known: {','.join(sorted(CATALOG))})")
    bench.add_argument("--sizes", help="message sizes: START-STEP-STOP, START-*FACTOR-STOP, "
                       f"lists, K/M suffixes (default {FULL_PRESET['sizes']})")
    bench.add_argument("--reps", type=int,
                       help="repetitions per size (default 1000, --quick 100); point-to-point "
                            "tests chained back to back (--start auto/chain) time at least 1000 "
                            "after 100 untimed lead repetitions")
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
    bench.add_argument("--start", choices=START_MODES, default="auto",
                       help="start each repetition after a barrier, at an agreed global time, "
                            "or chain them back to back as a communication loop runs; auto "
                            "(default) chains the one-way point-to-point tests (isend, send, "
                            "isendlocal, isendduplex) as OSU's latency loops do and starts "
                            "the others after a barrier")
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
    bench.add_argument("--binding", choices=BINDINGS, default="auto",
                       help="time with the C core built with the MPI's mpicc (c), with "
                       "mpi4py (python), or C where it builds (auto, the default)")
    bench.add_argument("--stability-retries", type=numbers.whole(0, 10), default=1,
                       help="measure a block whose two halves differ (Mann-Whitney "
                       "p < 0.001 and medians more than 10%% apart) again up to this many "
                       "times, then mark it unstable (default 1)")
    bench.add_argument("--no-stability-repeat", dest="stability_repeat", action="store_false",
                       help="do not repeat the point-to-point blocks at the end of the run "
                       "to check they did not change meanwhile")
    bench.add_argument("--binding-cost", action="store_true",
                       help="also time every block with the mpi4py loops and store what "
                       "the binding adds (for predictions of Python programs)")
    bench.set_defaults(func=run_bench)


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
        progress=args.progress, binding=args.binding,
        binding_cost=args.binding_cost, stability_retries=args.stability_retries,
        stability_repeat=args.stability_repeat,
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
