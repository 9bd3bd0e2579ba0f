"""Quick fuzzing profile (a few hundred generated inputs, run with the suite):
every command ends with status 0 or one clean error line, never a traceback,
never a hang.  The long campaign is ``benchmarks/fuzz.py --examples 20000``
(figures in docs/reliability.md).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from fuzz_harness import run, run_checked, small_profile
from fuzz_strategies import (
    command_line_case,
    directive_case,
    expression_case,
    profile_case,
    python_model_case,
)
from hostile_strategies import HOSTILE_FAMILIES
from hypothesis import HealthCheck, given, settings
from trace_strategies import output_paths, trace_case

QUICK = settings(deadline=None, derandomize=True, database=None, print_blob=True,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                 HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def profile(tmp_path_factory) -> Path:
    return Path(small_profile(tmp_path_factory.mktemp("fuzz") / "small.db"))


def run_case(case, profile: Path) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for argv in case(Path(tmp), profile):
            outcome = run(argv)
            assert not outcome.failed, outcome.describe()


@settings(QUICK, max_examples=60)
@given(case=directive_case())
def test_directive_files(case, profile):
    run_case(case, profile)


@settings(QUICK, max_examples=80)
@given(case=expression_case())
def test_expressions(case, profile):
    run_case(case, profile)


@settings(QUICK, max_examples=40)
@given(case=python_model_case())
def test_python_model_files(case, profile):
    run_case(case, profile)


@settings(QUICK, max_examples=40)
@given(case=profile_case())
def test_damaged_profiles(case, profile):
    run_case(case, profile)


@settings(QUICK, max_examples=80)
@given(case=command_line_case())
def test_command_lines(case, profile):
    run_case(case, profile)


def _state(path: Path):
    """What is at ``path``: nothing (None), a folder, or a file's bytes."""
    if path.is_dir():
        return "folder"
    return path.read_bytes() if path.exists() else None


@settings(QUICK, max_examples=60)
@given(case=trace_case())
def test_trace_commands(case, profile):
    """Damaged archives and hostile options for replay, extract, predict --recorded and
    report --recorded; an error also leaves every output path as it was."""
    with tempfile.TemporaryDirectory() as tmp:
        for argv in case(Path(tmp), profile):
            before = {path: _state(path) for path in output_paths(argv)}
            outcome = run(argv)
            assert not outcome.failed, outcome.describe()
            if outcome.kind == "error":
                after = {path: _state(path) for path in before}
                assert after == before, f"output changed by an error: {outcome.describe()}"


#: Inputs per family of issue 30's classes in the quick profile (the slow ones fewer).
HOSTILE_EXAMPLES = {"outputs onto inputs": 15, "output folders": 12, "results.json types": 20,
                    "long literals": 30,
                    "deep nesting": 6, "encodings": 20, "special files": 12,
                    "hostile SQLite": 10, "early Ctrl-C": 6}


@pytest.mark.parametrize("family", sorted(HOSTILE_EXAMPLES))
def test_hostile_families(family, profile):
    """Issue 30's classes: no traceback, hang or unclean exit, and no file there before a
    command changed unless it is that command's output."""
    @settings(QUICK, max_examples=HOSTILE_EXAMPLES[family])
    @given(case=HOSTILE_FAMILIES[family]())
    def check(case):
        with tempfile.TemporaryDirectory() as tmp:
            for argv in case(Path(tmp), profile):
                outcome = run_checked(argv, [Path(tmp), profile])
                assert not outcome.failed, outcome.describe()
    check()
