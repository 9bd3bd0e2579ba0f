"""``pevpm calibrate``: time a program's own serial regions and write them as model parameters.

    pevpm calibrate -o calibration.json --repeats 3 -- mpiexec -n 2 python ring.py
    pevpm predict ring_model.py -n 2..64 --calibration calibration.json
    pevpm calibrate -o calibration.json --from-trace run     # a pevpm trace archive

The program prints ``PEVPM-REGION NAME SECONDS`` lines (see
:mod:`pevpm.calibrate.regions`); the machine's load is probed before and
after, and a run taken while other processes were busy is repeated.  With
``--from-trace`` the regions are the gaps between a traced run's MPI calls
(:mod:`pevpm.calibrate.from_trace`).
"""

from __future__ import annotations

import argparse
import shlex
import sys

from pevpm.cli import numbers, outputs
from pevpm.errors import PevpmError


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "calibrate",
        description="Run PROGRAM (which prints 'PEVPM-REGION NAME SECONDS' lines), or read "
                    "a trace (--from-trace), summarise each region robustly and write "
                    "t_NAME / t_NAME_sd parameters for 'pevpm predict --calibration'.")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write the calibration (JSON) here; without it, only print")
    p.add_argument("--repeats", type=numbers.whole(1, 1000), default=3, metavar="N",
                   help="runs of the program whose region times are pooled (default 3)")
    p.add_argument("--prefix", default="t_",
                   help="parameter names are PREFIX + region name (default t_)")
    p.add_argument("--busy-retries", type=numbers.whole(0, 100), default=1, metavar="N",
                   help="measure again up to N times when other processes kept the machine "
                        "busy (default 1)")
    p.add_argument("--from-trace", metavar="DIR",
                   help="take the computation between the MPI calls of a 'pevpm trace' archive "
                        "(a folder or its .otf2 file) instead of running a program; each gap "
                        "is named by the calls around it (Sendrecv_tag1_to_Allreduce)")
    p.add_argument("--timeout", type=numbers.positive, default=600.0, metavar="SECONDS",
                   help="longest one run of the program may take (default 600)")
    build = p.add_mutually_exclusive_group()
    for kind, what in (("cflags", "the compiler flag that finds pevpm_region.h"),
                       ("libs", "the region library's C source, to compile with the program"),
                       ("fortran", ("the Fortran module's source (use pevpm_region), to "
                                    "compile before the program"))):
        build.add_argument(f"--{kind}", dest="build_flags", action="store_const", const=kind,
                           help=f"print {what}, and exit (mpicc prog.c $(pevpm calibrate "
                                "--cflags) $(pevpm calibrate --libs))")
    outputs.add_force(p)
    p.add_argument("command", nargs=argparse.REMAINDER, metavar="-- PROGRAM ARGS",
                   help="the program to run, after --")
    p.set_defaults(func=run_calibrate)


def run_calibrate(args) -> int:
    from pevpm.calibrate import Calibration, quietest, run_program

    if args.build_flags:
        from pevpm.calibrate.regions import build_flags

        print(build_flags(args.build_flags))
        return 0

    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if args.from_trace and command:
        raise PevpmError("give either --from-trace DIR or a program after --, not both")
    inputs = (outputs.archive_input(args.from_trace) if args.from_trace
              else [p for p in outputs.input_paths(*command) if p.is_file()])
    if args.output:
        output = outputs.check_output(args.output, outputs.CALIBRATION, force=args.force,
                                      inputs=inputs)
    if args.from_trace:
        from pevpm.calibrate.from_trace import calibration_from_trace

        calibration, notes = calibration_from_trace(args.from_trace, args.prefix)
        for note in notes:
            print(f"pevpm calibrate: note: {note}", file=sys.stderr)
    else:
        watched = quietest(
            lambda: run_program(command, args.repeats, args.timeout), args.busy_retries,
            on_retry=lambda why: print(f"pevpm calibrate: note: {why}; measuring again",
                                       file=sys.stderr))
        calibration = Calibration.from_region_times(
            watched.value, shlex.join(command), args.prefix, (watched.before, watched.after),
            watched.disturbed)
    why = calibration.disturbed
    print(format_calibration(calibration))
    if why:
        print(f"pevpm calibrate: warning: measured while the machine was {why}; the times "
              "may be too long", file=sys.stderr)
    if args.output:
        with outputs.replacing(output) as temp:
            calibration.save(temp)
        print(f"wrote {args.output}: use 'pevpm predict ... --calibration {args.output}'")
    return 0


def format_calibration(calibration) -> str:
    """The regions as a table (the robust centre and spread first, then the raw
    mean and sd), the machine's load, and the ``-D`` options of each noise choice.

    >>> from pevpm.calibrate import Calibration
    >>> print(format_calibration(Calibration.from_region_times(
    ...     {"spmv": [1e-3] * 8 + [1.2e-3, 9e-3]}, "prog")))
    region             calls      median   robust sd robust cv        mean          sd outliers
    -------------------------------------------------------------------------------------------
    spmv                  10       0.001           0     0.000     0.00182    0.002394        0
    robust: median and 1.4826 x median absolute deviation (the parameters); raw: mean and sd after MPIBench's outlier rule (above 10x the 99th percentile)
    parameters: -D t_spmv=0.001 -D t_spmv_sd=0
    with --compute-noise calibrated (the raw spread, other jobs' noise included): -D t_spmv=0.00182 -D t_spmv_sd=0.00239408
    """
    from pevpm.calibrate.parameters import DEFAULT_NOISE

    width = max([16, *map(len, calibration.regions)])
    header = (f"{'region':<{width}} {'calls':>7} {'median':>11} {'robust sd':>11} "
              f"{'robust cv':>9} {'mean':>11} {'sd':>11} {'outliers':>8}")
    rows = [header, "-" * len(header)]
    for name, s in calibration.regions.items():
        rows.append(f"{name:<{width}} {s.calls:>7} {s.median:>11.4g} {s.robust_sd:>11.4g} "
                    f"{s.robust_cv:>9.3f} {s.body_mean:>11.4g} {s.body_sd:>11.4g} "
                    f"{s.outliers:>8}")
    rows.append("robust: median and 1.4826 x median absolute deviation (the parameters); "
                "raw: mean and sd after MPIBench's outlier rule (above 10x the 99th "
                "percentile)")
    for label, state in zip(("before", "after"), calibration.states):
        rows.append(f"machine {label}: {state.describe()}")
    rows.append("parameters: " + " ".join(calibration.defines(DEFAULT_NOISE)))
    rows.append("with --compute-noise calibrated (the raw spread, other jobs' noise "
                "included): " + " ".join(calibration.defines("calibrated")))
    return "\n".join(rows)
