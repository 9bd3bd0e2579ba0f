"""``pevpm validate``: run an example for real and compare it with predictions.

    pevpm validate jacobi -n 1,2 --machine machine.db --repeats 5
"""

from __future__ import annotations

import functools
import json
import sys

from pevpm.cli import numbers, outputs
from pevpm.cli.lab import json_output, process_counts
from pevpm.cli.paths import writable_file
from pevpm.errors import PevpmError
from pevpm.validate.calibration import calibrate


def register(subparsers) -> None:
    """``pevpm validate EXAMPLE -n LIST``: real runs against predictions."""
    validate = subparsers.add_parser(
        "validate",
        description="Runs the example under mpiexec REPEATS times per process count (after a "
                    "warm-up), predicts the same configurations with the full measured "
                    "distributions and with the baselines (2x1 min/mean, n x p mean, Amdahl "
                    "fitted to the measured speedups, a fitted latency/bandwidth model), and "
                    "prints measured mean ± sd, each prediction and its error.")
    validate.add_argument("example", help="jacobi, bag_of_tasks or fft2d (or examples/NAME)")
    validate.add_argument("-n", type=process_counts, default=[1, 2],
                          help="process counts, e.g. 1,2,4 or 1..4 (default 1,2)")
    validate.add_argument("--repeats", type=numbers.whole(1, 10**6), default=3,
                          help="real runs per count (3)")
    validate.add_argument("--machine", default="default", metavar="PROFILE",
                          help="machine profile from 'pevpm bench', or a built-in profile's "
                               "name ('default': the profile shipped with pevpm; see pevpm "
                               "machine list)")
    validate.add_argument("--runs", type=numbers.runs, default=12, help="Monte Carlo runs (12)")
    validate.add_argument("--seed", type=numbers.seed, default=1,
                          help="seed of every random draw (1)")
    validate.add_argument("--quick", action="store_true", help="half-size problems")
    validate.add_argument("--json", metavar="FILE", type=writable_file,
                          help="also write the rows to this file")
    outputs.add_force(validate)
    validate.set_defaults(func=run_validate)


def run_validate(args) -> int:
    from pevpm.cli.demo import default_progress
    from pevpm.profile.builtin import different_host_note, open_profile, resolve_profile
    from pevpm.validate.cases import ProblemSize, find_case
    from pevpm.validate.validation import format_rows, validate_case

    case = find_case(args.example)
    if args.repeats < 1 or args.runs < 1:
        raise PevpmError("--repeats and --runs must be at least 1")
    size = ProblemSize.quick() if args.quick else ProblemSize()
    case.check_procs(args.n, size)
    json_out = json_output(args, args.machine)
    open_profile(args.machine).close()         # a clear error before any real run
    profile = str(resolve_profile(args.machine))
    note = different_host_note(args.machine)
    if note:
        print(f"pevpm validate: note: {note}", file=sys.stderr)
    default_progress(f"{case.name}: calibration interleaved with the real runs")
    rows = validate_case(case, args.n, profile, None, size, args.repeats, args.runs,
                         args.seed, progress=default_progress,
                         recalibrate=functools.partial(calibrate, [case.name], nprocs=args.n,
                                                       repeats=5))
    print(format_rows(case.name, rows))
    if json_out:
        outputs.write_text(json_out, json.dumps({"example": case.name, "rows": [
            {k: v for k, v in r.items() if k != "breakdown"} for r in rows]}, indent=1))
    return 0
