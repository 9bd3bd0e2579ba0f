"""The long fuzzing campaign against the pevpm command line (issue 16).

Draws ``--examples`` inputs from the Hypothesis strategies of tests/fuzz
(directive files generated and mutated from the examples, expressions,
Python model files, damaged profiles, hostile command lines, the trace
commands on damaged or foreign OTF2 archives, and issue 30's families: an
input used as an output (a file, or a folder holding, inside or linking to an
input; the user's folders), type-confused results.json, very long literals,
deep nesting, encodings, special files, hostile SQLite schemas, early
Ctrl-C), runs each one's commands in this process and counts what
happened: status 0, one clean error, or a failure (traceback, hang, unclean
exit, or a changed file: every file there before a command keeps its bytes
unless it is that command's output, :func:`fuzz_harness.run_checked`).
Nothing stops at the first failure; each failing input's files are kept
under ``--keep``.  ``--families`` runs only the named families (comma-separated).

    PYTHONPATH=src python benchmarks/fuzz.py --examples 20000 [--seed 1] [--keep fuzz-failures]

Prints the figures docs/reliability.md quotes.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "fuzz"))

from fuzz_harness import LIMIT_SECONDS, WALL_FACTOR, Tally, run_checked, small_profile
from fuzz_strategies import (
    command_line_case,
    directive_case,
    expression_case,
    profile_case,
    python_model_case,
)
from hostile_strategies import HOSTILE_FAMILIES
from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hypothesis_seed
from trace_strategies import trace_case

#: Weight of each family in the examples asked for (the weights are normalised,
#: so ``--examples`` is the number of inputs drawn in all).
FAMILIES = {      # issue 30's classes first: a campaign stopped early has run them
    **{name: (HOSTILE_FAMILIES[name], share) for name, share in (
        ("outputs onto inputs", 0.04), ("output folders", 0.012), ("results.json types", 0.04),
        ("long literals", 0.05),
        ("encodings", 0.04), ("special files", 0.02), ("hostile SQLite", 0.03),
        ("deep nesting", 0.02), ("early Ctrl-C", 0.02))},
    "directive files": (directive_case, 0.30),
    "expressions": (expression_case, 0.25),
    "python models": (python_model_case, 0.10),
    "damaged profiles": (profile_case, 0.15),
    "command lines": (command_line_case, 0.20),
    "trace commands": (trace_case, 0.10),
}


def campaign(examples: int, seed: int, keep: Path | None, profile: Path,
             families: list[str] | None = None) -> Tally:
    tally = Tally()
    chosen = {name: FAMILIES[name] for name in (families or FAMILIES)}
    weights = sum(share for _, share in chosen.values())
    for family, (strategy, share) in chosen.items():
        count = max(1, round(examples * share / weights))
        started, inputs_before = time.perf_counter(), tally.inputs
        explore = _explorer(family, strategy, count, seed, keep, profile, tally)
        try:
            explore()
        except Stopped:
            tally.stopped = family
        except Exception as exc:  # noqa: BLE001 - a bug of the generator while drawing
            tally.generator_errors.append(f"{family}: {type(exc).__name__}: "
                                          f"{str(exc)[:200]} (the family stopped there)")
        seen = sum(tally.by_family.get(family, {}).values())
        print(f"{family}: {tally.inputs - inputs_before} inputs ({count} asked; a family with "
              f"fewer distinct inputs stops at those), {seen} commands, "
              f"{time.perf_counter() - started:.0f} s, {dict(tally.by_family.get(family, {}))}",
              flush=True)
        if tally.stopped:
            break
    return tally


class Stopped(KeyboardInterrupt):
    """SIGTERM came: the campaign stops after the command it is running and
    prints what it has seen so far."""


#: Set by SIGTERM.
STOP = threading.Event()


def _explorer(family, strategy, count, seed, keep, profile, tally):
    """A Hypothesis-driven function that runs ``count`` inputs of one family."""
    @hypothesis_seed(seed)
    @settings(max_examples=count, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(case=strategy())
    def explore(case):
        if STOP.is_set():
            raise Stopped
        tally.inputs += 1
        with tempfile.TemporaryDirectory() as tmp:
            try:
                commands = case(Path(tmp), profile)
            except Exception as exc:  # noqa: BLE001 - a bug of the generator, counted apart
                tally.generator_errors.append(f"{family}: {type(exc).__name__}: {exc}")
                return
            for argv in commands:
                outcome = run_checked(argv, [Path(tmp), profile])
                tally.add(family, outcome)
                if outcome.failed and keep is not None:
                    target = keep / f"{len(tally.failures):04d}"
                    shutil.copytree(tmp, target)
                    (target / "outcome.txt").write_text(outcome.describe())
    return explore


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=20000, help="inputs to draw (20000)")
    parser.add_argument("--seed", type=int, default=1, help="Hypothesis seed (1)")
    parser.add_argument("--keep", type=Path, help="folder for the files of failing inputs")
    parser.add_argument("--families", help=f"only these ({', '.join(FAMILIES)})")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: STOP.set())
    families = [f.strip() for f in args.families.split(",")] if args.families else None
    unknown = sorted(set(families or ()) - set(FAMILIES))
    if unknown:
        parser.error(f"unknown families: {', '.join(unknown)}")
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        profile = Path(small_profile(Path(tmp) / "small.db"))
        tally = campaign(args.examples, args.seed, args.keep, profile, families)
    elapsed = time.perf_counter() - started
    kinds = tally.kinds
    if tally.stopped:
        print(f"\nstopped by SIGTERM during the family {tally.stopped!r}")
    print(f"\n{tally.inputs} inputs ({tally.total} commands) in {elapsed:.0f} s; "
          f"seed {args.seed}; hang limit {LIMIT_SECONDS:.0f} s of CPU time or "
          f"{LIMIT_SECONDS * WALL_FACTOR:.0f} s by the wall clock per command")
    print(f"ok {kinds['ok']}, clean errors {kinds['error']}, tracebacks {kinds['traceback']}, "
          f"hangs {kinds['hang']}, unclean exits {kinds['unclean']}, "
          f"changed files {kinds['changed']}; "
          f"commands with Python warnings {tally.warned}; slowest command {tally.slowest:.1f} s; "
          f"inputs the generator failed to build {len(tally.generator_errors)}")
    for warning, argv in list(tally.warnings.items())[:10]:
        print(f"warning: {warning} (first from: pevpm {argv})")
    for error in tally.generator_errors[:5]:
        print(f"generator: {error}")
    for family, outcome in tally.failures[:20]:
        print(f"\n[{family}] {outcome.describe()}")
    return 1 if tally.failures else 0


if __name__ == "__main__":
    sys.exit(main())
