import argparse

import pytest

from pevpm.cli import bench as commands
from pevpm.errors import BenchmarkError


def _parse(*argv):
    parser = argparse.ArgumentParser()
    commands.register(parser.add_subparsers(dest="command"))
    return parser.parse_args(list(argv))


def test_quick_preset_and_explicit_overrides():
    quick = commands.options_from_args(_parse("bench", "--quick", "-o", "m.db"))
    assert (quick.reps, quick.sizes, quick.resend_limit, quick.budget) == (
        100, [0, 1024, 16384, 65536], 100, 3.0)
    custom = commands.options_from_args(
        _parse("bench", "--quick", "--reps", "7", "--tests", "scattertotal,isend,isend",
               "--sizes", "1-*2-4", "--spacing", "80us", "-o", "m.db"))
    assert custom.reps == 7 and custom.sizes == [1, 2, 4]
    assert custom.tests == [("scatter", "total"), ("isend", "")]
    assert custom.spacing == pytest.approx(80e-6)


def test_full_defaults_follow_the_thesis():
    full = commands.options_from_args(_parse("bench", "-o", "m.db"))
    assert (full.reps, full.warmup, full.resend_limit) == (1000, 10, 1000)
    assert (full.outlier_percentile, full.outlier_multiplier) == (99.0, 10.0)
    assert full.sizes[:3] == [0, 8, 16] and full.sizes[-1] == 65536


def test_bad_words_are_refused_without_mpi():
    with pytest.raises(BenchmarkError, match="unknown test"):
        commands.options_from_args(_parse("bench", "--tests", "bcast,nope", "-o", "m.db"))
