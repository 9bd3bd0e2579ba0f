import pytest

from pevpm.bench.catalog import resolve_test
from pevpm.bench.options import (
    CHAIN_MIN_LEAD,
    CHAIN_MIN_REPS,
    BenchOptions,
    parse_duration,
    parse_placements,
    parse_sizes,
)
from pevpm.errors import BenchmarkError


def test_sizes_ranges_lists_and_suffixes():
    assert parse_sizes("0-8-32") == [0, 8, 16, 24, 32]
    assert parse_sizes("0-1024-4096,64K,8") == [0, 8, 1024, 2048, 3072, 4096, 65536]
    assert parse_sizes("1-*2-16") == [1, 2, 4, 8, 16]
    assert parse_sizes("1M") == [1024 * 1024]


@pytest.mark.parametrize("text, message", [
    ("-4", "negative message size"),
    ("0,-8", "negative message size"),
    ("abc", "cannot read"),
    ("64-8-0", "ends before it starts"),
    ("0-0-8", "positive step"),
    ("0-*2-8", "geometric"),
    ("", "no sizes"),
])
def test_bad_sizes_are_refused(text, message):
    with pytest.raises(BenchmarkError, match=message):
        parse_sizes(text)


def test_durations():
    assert parse_duration("50us") == pytest.approx(50e-6)
    assert parse_duration("1.5ms") == pytest.approx(1.5e-3)
    assert parse_duration("2min") == 120.0
    with pytest.raises(BenchmarkError, match="duration"):
        parse_duration("soon")


def test_placements_are_normalised_and_checked():
    assert parse_placements("1X2, 2x1,1x2") == ["1x2", "2x1"]
    assert parse_placements("all") == ["all"]
    for text in ("1x", "0x2", "two", ","):
        with pytest.raises(BenchmarkError, match="--placements"):
            parse_placements(text)


def test_placements_lift_the_even_count_rule_and_round_trip():
    opts = BenchOptions(output="x.db", tests=[("isend", "")], placements=["1x2"], launch="t1")
    opts.validate(3, None)
    again = BenchOptions.from_plan(opts.plan(), output="x.db")
    assert again.placements == ["1x2"] and again.launch == "t1"


def test_test_names_and_variants():
    assert resolve_test("scattertotal") == ("scatter", "total")
    assert resolve_test("alltoall:each") == ("alltoall", "each")
    assert resolve_test("gather") == ("gather", "each")
    assert resolve_test("ISEND") == ("isend", "")
    assert resolve_test("send") == ("send", "")
    with pytest.raises(BenchmarkError, match="unknown test 'pingpong'"):
        resolve_test("pingpong")
    with pytest.raises(BenchmarkError, match="no variant"):
        resolve_test("bcast:total")


def test_plan_runs_sizeless_tests_once():
    opts = BenchOptions(output="x.db", tests=[("barrier", ""), ("bcast", "")], sizes=[0, 8])
    assert opts.blocks() == [("barrier", "", 0), ("bcast", "", 0), ("bcast", "", 8)]


def test_plan_round_trips_through_json_form():
    opts = BenchOptions(output="x.db", tests=[("scatter", "total")], sizes=[0, 4], reps=7)
    again = BenchOptions.from_plan(opts.plan(), output="x.db")
    assert again.blocks() == opts.blocks() and again.reps == 7


@pytest.mark.parametrize("kwargs, nprocs, message", [
    ({"tests": [("isend", "")]}, 3, "must be even"),
    ({"tests": [("bcast", "")]}, 1, "at least 2 processes"),
    ({"ppn": 3}, 4, "does not divide"),
    ({"reps": 0}, 2, "--reps"),
    ({"outlier_percentile": 0.0}, 2, "percent"),
    ({"gap": -1e-6}, 2, "--gap must be positive"),
    ({"gap": 5e-5, "start": "time"}, 2, "goes with --start auto, barrier or chain"),
])
def test_validation_refuses(kwargs, nprocs, message):
    with pytest.raises(BenchmarkError, match=message):
        BenchOptions(output="x.db", **kwargs).validate(nprocs, None)


def test_odd_count_is_fine_for_collectives_only():
    BenchOptions(output="x.db", tests=[("bcast", "")]).validate(3, None)


def test_sizes_beyond_memory_are_refused():
    opts = BenchOptions(output="x.db", tests=[("alltoall", "each")], sizes=[1 << 30])
    with pytest.raises(BenchmarkError, match="MiB of buffers"):
        opts.validate(4, memory=8 << 30)
    BenchOptions(output="x.db", tests=[("alltoall", "each")], sizes=[1 << 20]).validate(4, 8 << 30)


@pytest.mark.parametrize("reps, warmup, mode, expected", [
    (100, 10, "chain", (CHAIN_MIN_REPS, CHAIN_MIN_LEAD)),   # --quick: chained blocks take more
    (5000, 300, "chain", (5000, 300)),              # more asked for: as asked
    (100, 10, "barrier", (100, 0)),                 # a barrier starts every repetition
    (100, 10, "time", (100, 0)),
])
def test_chained_blocks_get_their_floor_of_repetitions_and_a_lead(reps, warmup, mode, expected):
    options = BenchOptions(output="x.db", reps=reps, warmup=warmup)
    assert (options.reps_for(mode), options.lead_for(mode)) == expected
