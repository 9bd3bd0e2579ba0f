"""``pevpm lab``: run programs on a shaped network of namespaces on this machine.

    pevpm lab check
    pevpm lab clean
    pevpm lab run bag_of_tasks -n 1,2,4,8 --rate 80mbit --repeats 3 -a '--compute sleep' 
    pevpm lab exec -n 4 --rate 80mbit -- python my_benchmark.py
    pevpm lab validate --profile lab.db -n 1..8 --rate 80mbit --repeats 3 --jobs 200

``run`` prints a table of the example's real times and speedups; ``--rate
none`` gives the same namespaces and TCP transport without shaping (the
control). ``exec`` runs any command as every rank of an MPI job in the lab
(e.g. MPIBench, to measure the lab's "network"). ``validate`` runs the bag
of tasks in the lab and compares it with the full and the restricted PEVPM
on the lab's profile (:mod:`pevpm.validate.lab_validation`).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys

from pevpm.cli import numbers, outputs
from pevpm.cli.paths import writable_file
from pevpm.errors import PevpmError
from pevpm.validate.calibration import calibrate
from pevpm.validate.lab import ContentionLab, lab_available, measure_in_lab, remove_stale_labs
from pevpm.validate.runner import find_mpiexec, format_table, program_environment


def process_counts(text: str) -> list[int]:
    """Process counts from '1,2,4' or '1..4' (every count from 1 to 4), sorted."""
    counts: list[int] = []
    try:
        for part in text.split(","):
            if ".." in part:
                lo, hi = (int(x) for x in part.split(".."))
                counts += range(lo, hi + 1)
            else:
                counts.append(int(part))
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a list like 1,2,4 or 1..8") from None
    if not counts or min(counts) < 1:
        raise argparse.ArgumentTypeError(f"'{text}' must name process counts >= 1")
    return sorted(set(counts))


def rate_value(text: str) -> str | None:
    return None if text.lower() == "none" else text


def _add_link_options(parser) -> None:
    parser.add_argument("--rate", type=rate_value, default="80mbit",
                        help="each node's link rate, a tc rate (default 80mbit), or 'none'")
    parser.add_argument("--burst", default="4kb", help="token bucket size (default 4kb)")
    parser.add_argument("--ranks-per-node", type=numbers.procs_per_node, default=1,
                        help="default 1")


def json_output(args, *inputs):
    """The checked ``--json FILE`` of a validation command (None without one);
    ``inputs``: the profile and measurement files it reads
    (:func:`pevpm.cli.outputs.check_output`)."""
    if not args.json:
        return None
    return outputs.check_output(args.json, outputs.MEASUREMENTS, force=args.force,
                                inputs=[p for spec in inputs
                                        for p in outputs.machine_input(spec)])


def run_lab_check(args) -> int:
    ok, reason = lab_available()
    print("contention lab: available" if ok else f"contention lab: unavailable: {reason}")
    return 0 if ok else 1


def _after_dashes(words: list[str]) -> list[str]:
    return words[1:] if words[:1] == ["--"] else words


def run_lab_clean(args) -> int:
    removed = remove_stale_labs()
    print(f"removed {len(removed)} lab namespace(s)" + "".join(f"\n  {n}" for n in removed))
    return 0


def run_lab_run(args) -> int:
    def progress(n, m):
        print(f"  -n {n}: median {m.median:.4f} s over {len(m.times)} runs",
              file=sys.stderr, flush=True)

    json_out = json_output(args)
    results = measure_in_lab(args.example, args.n, args.program_args, args.rate, args.burst,
                             args.ranks_per_node, args.repeats, args.warmup, args.timeout,
                             progress)
    print(f"{args.example} in the lab, link rate {args.rate or 'unshaped'}, "
          f"{args.ranks_per_node} rank(s) per node, args {args.program_args}")
    print(format_table(results))
    if json_out:
        outputs.write_text(json_out, json.dumps(
            {"rate": args.rate, "burst": args.burst, "ranks_per_node": args.ranks_per_node,
             "measurements": [m.to_dict() for m in results.values()]}, indent=1))
    return 0


def run_lab_exec(args) -> int:
    args.command = _after_dashes(args.command)
    if not args.command:
        raise PevpmError("give the command to run after '--'")
    nodes = -(-args.n // args.ranks_per_node)
    with ContentionLab(nodes, args.rate, args.burst) as lab:
        launcher = lab.launcher(args.ranks_per_node)
        command = launcher.command(find_mpiexec(), args.n, args.command)
        env = program_environment(launcher.env)
        job = subprocess.Popen(command, env=env, start_new_session=True)
        try:
            return job.wait(timeout=args.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(job.pid, signal.SIGKILL)
            job.wait()
            raise PevpmError(f"'{' '.join(args.command)}' did not finish within "
                             f"{args.timeout:g} s; killed", where="pevpm lab exec") from None


#: The lab's bag of tasks: 200 jobs of up to 40 ms (mean 19 ms), mean 32 KiB each way.
LAB_JOBS, LAB_MAX_COMPUTE = 200, 0.04


def run_lab_validate(args) -> int:
    from pevpm.cli.demo import default_progress
    from pevpm.profile.builtin import open_profile, resolve_profile
    from pevpm.validate.cases import ProblemSize
    from pevpm.validate.lab import measure_in_lab
    from pevpm.validate.lab_validation import (
        format_lab_report,
        lab_args,
        saved_calibration,
        saved_measurements,
        validate_in_lab,
    )

    if args.repeats < 1 or args.runs < 1:
        raise PevpmError("--repeats and --runs must be at least 1")
    json_out = json_output(args, args.profile, args.measured)
    open_profile(args.profile).close()         # a clear error before the lab is built
    args.profile = str(resolve_profile(args.profile))
    if args.jobs < 1 or args.max_compute <= 0:
        raise PevpmError("--jobs must be at least 1 and --max-compute positive")
    size = ProblemSize(bag_jobs=args.jobs, bag_max_compute=args.max_compute)
    calibration = saved_calibration(args.measured) if args.measured else None
    if calibration is None:
        default_progress("bag_of_tasks: calibrating job times on one rank")
        calibration = calibrate(["bag_of_tasks"], nprocs=args.n, repeats=5)
    measure = saved_measurements(args.measured) if args.measured else measure_in_lab
    rows = validate_in_lab(args.n, args.profile, calibration, size, args.rate, args.burst,
                           args.repeats, args.runs, args.seed, args.timeout,
                           progress=default_progress, measure=measure)
    print(format_lab_report(rows, args.rate))
    if json_out:
        outputs.write_text(json_out, json.dumps(
            {"example": "bag_of_tasks", "rate": args.rate, "burst": args.burst,
             "profile": args.profile, "args": lab_args(size), "calibration": calibration,
             "rows": rows}, indent=1))
    return 0


def register(subparsers) -> None:
    lab = subparsers.add_parser("lab",
                                description=__doc__.split("\n\n")[0])
    sub = lab.add_subparsers(dest="lab_command", metavar="ACTION", required=True)

    check = sub.add_parser("check", help="can a lab be built here?")
    check.set_defaults(func=run_lab_check)

    clean = sub.add_parser("clean", help="delete namespaces left by a killed lab "
                                         "(only while no lab is running)")
    clean.set_defaults(func=run_lab_clean)

    run = sub.add_parser("run", help="time an example at several process counts in the lab")
    run.add_argument("example", help="jacobi, bag_of_tasks, fft2d or a program path")
    run.add_argument("-n", type=process_counts, required=True, help="e.g. 1,2,4 or 1..8")
    _add_link_options(run)
    run.add_argument("--repeats", type=numbers.whole(1, 10**6), default=3,
                     help="recorded runs per count (3)")
    run.add_argument("--warmup", type=numbers.whole(0, 10**6), default=1,
                     help="unrecorded runs first (1)")
    run.add_argument("--timeout", type=numbers.positive, default=300.0,
                     help="seconds per run (300)")
    run.add_argument("--json", type=writable_file, help="also write the measurements to this file")
    outputs.add_force(run)
    run.add_argument("-a", "--args", dest="program_args", type=shlex.split, default=[],
                     help="arguments for the example, quoted: -a '--compute sleep --jobs 200'")
    run.set_defaults(func=run_lab_run)

    exec_ = sub.add_parser("exec", help="run a command as every rank of an MPI job in the lab")
    exec_.add_argument("-n", type=numbers.whole(1, numbers.MAX_PROCS), required=True,
                       help="number of ranks")
    _add_link_options(exec_)
    exec_.add_argument("--timeout", type=numbers.positive, default=1800.0,
                       help="seconds before the job is killed (1800)")
    exec_.add_argument("command", nargs="*", help="after '--': the command")
    exec_.set_defaults(func=run_lab_exec)

    lab_validate = sub.add_parser(
        "validate", help="the bag of tasks in the lab against the full and restricted PEVPM",
        description="Runs the bag of tasks in the lab (one rank per node) and predicts it on "
                    "the lab's machine profile with the full PEVPM (contention counted on "
                    "node links) and the restricted one (every message at contention 1); "
                    "prints measured mean ± sd, predictions, errors, speedups and where "
                    "each speedup curve saturates.")
    lab_validate.add_argument("--profile", required=True,
                              help="the lab's profile (pevpm bench run inside the lab), or a "
                                   "built-in profile's name")
    lab_validate.add_argument("-n", type=process_counts, default=list(range(1, 9)),
                              help="process counts including 1 (default 1..8)")
    lab_validate.add_argument("--rate", type=rate_value, default="80mbit",
                              help="each node's link rate (default 80mbit), or 'none'")
    lab_validate.add_argument("--burst", default="4kb", help="token bucket size (default 4kb)")
    lab_validate.add_argument("--repeats", type=numbers.whole(1, 10**6), default=3,
                              help="real runs per count (3)")
    lab_validate.add_argument("--runs", type=numbers.runs, default=12, help="Monte Carlo runs (12)")
    lab_validate.add_argument("--seed", type=numbers.seed, default=1, help="seed of every draw (1)")
    lab_validate.add_argument("--timeout", type=numbers.positive, default=300.0,
                              help="seconds per real run (300)")
    lab_validate.add_argument("--jobs", type=numbers.whole(1, 10**6), default=LAB_JOBS,
                              help=f"jobs in the bag ({LAB_JOBS})")
    lab_validate.add_argument("--max-compute", type=numbers.positive, default=LAB_MAX_COMPUTE,
                              help=f"longest job, seconds ({LAB_MAX_COMPUTE})")
    lab_validate.add_argument("--json", metavar="FILE", type=writable_file,
                              help="also write the rows to this file")
    lab_validate.add_argument("--measured", metavar="FILE",
                              help="take the real runs (and the calibration, if saved) from an "
                                   "earlier --json file instead of running the lab (predict "
                                   "again, no root needed)")
    outputs.add_force(lab_validate)
    lab_validate.set_defaults(func=run_lab_validate)
