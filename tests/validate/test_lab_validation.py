"""Lab validation of the bag of tasks: full vs restricted PEVPM, speedups, saturation."""

import json

import numpy as np
import pytest

from pevpm.cli import main
from pevpm.errors import PevpmError
from pevpm.profile.store import LOCAL_TEST, TRANSFER_TEST, BlockKey, ProfileWriter, block_contention
from pevpm.validate.cases import ProblemSize
from pevpm.validate.lab_validation import (
    LAB_EAGER_LIMIT,
    LAB_SWITCH_CAPACITY,
    format_lab_report,
    lab_args,
    lab_machine,
    predict_in_lab,
    saturation,
    saved_calibration,
    saved_measurements,
    speedups,
    validate_in_lab,
)
from pevpm.validate.runner import EXAMPLES_DIR, Measurement

LINK = 10e6          # bytes/s: an 80 Mbit/s link
LATENCY = 100e-6
CALIBRATION = {"bag_of_tasks": {"sleep": {"overhead": 1e-4, "slope": 1.0}}}
SMALL = ProblemSize(bag_jobs=60)


def shared_link_profile(path, placements=((2, 1), (2, 2), (2, 4), (2, 8))):
    """A profile of a switched network whose node links are shared fairly: a
    message under contention c takes c times (latency + size / LINK), +-2 %."""
    rng = np.random.default_rng(7)
    with ProfileWriter.open(path, machine="shared-link") as writer:
        for n, p in placements:
            run = writer.begin_run(n=n, p=p, hosts=[f"node{i}" for i in range(n)],
                                   mpi_library="test", mpi_version="0", clock="test",
                                   clock_resolution=0.0, sync_method="none", resend_limit=0,
                                   plan={})
            for size in (0, 1024, 16384, 65536):
                for test in (TRANSFER_TEST, LOCAL_TEST):
                    key = BlockKey(test, "", size, n, p)
                    base = (LATENCY + size / LINK) * block_contention(key)
                    mean = base if test == TRANSFER_TEST else LATENCY / 4
                    times = mean * rng.uniform(0.98, 1.02, size=(n * p, 20))
                    writer.write_block(run, key, times, reps=20, warmup=0, start_mode="test",
                                       sync_error=0.0, elapsed=0.0)
            writer.finish_run(run, [])
    return str(path)


def rows_of(times: dict[int, float]) -> list[dict]:
    return [{"n": n, "measured_mean": t, "measured_sd": 0.0, "predictions": {}}
            for n, t in times.items()]


def test_saturation_is_where_the_speedup_stops_rising():
    rising = rows_of({1: 4.0, 2: 2.0, 4: 1.0, 8: 0.5})
    flat = rows_of({1: 4.0, 2: 2.0, 3: 1.6, 4: 1.45, 5: 1.6, 6: 1.44})
    assert speedups(rising, "measured") == {1: 1.0, 2: 2.0, 4: 4.0, 8: 8.0}
    assert saturation(rising, "measured") is None
    # 4 -> 6 gains 0.7 % (< 5 %); a dip at 5 does not matter
    assert saturation(flat, "measured") == 4
    assert saturation(flat, "measured", rise=0.001) is None   # 6 is 0.7 % above 4


def test_lab_machine_has_one_rank_per_node_and_a_switch_that_never_limits(tmp_path):
    profile = shared_link_profile(tmp_path / "lab.db")
    full, restricted = lab_machine(profile), lab_machine(profile, node_contention=False)
    assert full.topology.procs_per_node == restricted.topology.procs_per_node == 1
    assert full.topology.backplane_capacity == LAB_SWITCH_CAPACITY
    assert (full.node_contention, restricted.node_contention) == (True, False)
    assert full.eager_limit == LAB_EAGER_LIMIT
    assert full.is_eager(24) and not full.is_eager(1024)


class FakeLab:
    """Stands in for measure_in_lab: fixed times, remembers how it was called."""

    def __init__(self, times):
        self.times, self.calls = times, []

    def __call__(self, program, counts, args, **options):
        self.calls.append((program, counts, args, options))
        for n in counts:
            options["progress"](n, Measurement(program, n, args, self.times[n]))
        return {n: Measurement(program, n, args, self.times[n]) for n in counts}


def test_full_model_levels_off_far_below_the_restricted_one_on_a_shared_link(tmp_path):
    profile = shared_link_profile(tmp_path / "lab.db")
    counts = [1, 2, 4, 6, 8]
    lab = FakeLab({1: [1.99, 2.01], 2: [2.5, 2.5], 4: [0.9, 0.9], 6: [0.7, 0.7],
                   8: [0.68, 0.70]})
    messages = []
    rows = validate_in_lab(counts, profile, CALIBRATION, SMALL, rate="80mbit", repeats=2,
                           runs=2, seed=3, progress=messages.append, measure=lab)
    (program, called_counts, args, options), = lab.calls
    assert (program, called_counts, options["ranks_per_node"], options["rate"]) == \
        ("bag_of_tasks", counts, 1, "80mbit")
    assert args[:2] == ["--jobs", "60"] and "sleep" in args
    assert [r["n"] for r in rows] == counts
    assert rows[0]["measured_mean"] == pytest.approx(2.0)
    assert rows[0]["measured_sd"] == pytest.approx(np.std([1.99, 2.01], ddof=1))
    # one process does every job itself: no messages, the models agree
    assert rows[0]["predictions"]["full"] == rows[0]["predictions"]["restricted"]
    # 60 jobs x 2 x 32 KiB on the master's 10 MB/s links: at least 0.2 s per direction
    for r in rows[2:]:
        assert r["predictions"]["full"] > 1.2 * r["predictions"]["restricted"]
        assert r["predictions"]["full"] > 60 * 32768 / LINK
    assert saturation(rows, "full") is not None
    # The level of the plateau separates the models (where the restricted one
    # levels off, if at all, sits near the 5 % rule in so small a run).
    assert speedups(rows, "restricted")[8] > 1.5 * speedups(rows, "full")[8]
    assert saturation(rows, "measured") == 6
    assert any("predicting 8 process(es) with the restricted model" in m for m in messages)
    report = format_lab_report(rows, "80mbit")
    assert report.startswith("bag_of_tasks in the lab (80mbit links, one rank per node)")
    assert "measured: saturates at n = 6" in report
    peak = max(speedups(rows, "restricted").values())
    assert f"restricted: saturates at n = {saturation(rows, 'restricted')} " \
        f"(peak speedup {peak:.2f})" in report


def test_the_one_process_run_is_required(tmp_path):
    with pytest.raises(PevpmError, match="needs the 1-process run"):
        validate_in_lab([2, 4], "unused.db", CALIBRATION, SMALL, measure=FakeLab({}))


def test_lab_validate_refuses_a_missing_profile_before_building_anything(capsys):
    assert main(["lab", "validate", "--profile", "/nonexistent/lab.db", "-n", "1,2"]) == 2
    assert "no such profile file" in capsys.readouterr().err


@pytest.mark.mpi
def test_bag_of_tasks_in_a_real_lab(tmp_path):
    from pevpm.validate.lab import lab_available

    available, why_not = lab_available()
    if not available:
        pytest.skip(f"contention lab unavailable: {why_not}")
    profile = shared_link_profile(tmp_path / "lab.db")
    size = ProblemSize(bag_jobs=20, bag_max_compute=0.002)
    rows = validate_in_lab([1, 2], profile, CALIBRATION, size, rate="200mbit", repeats=1,
                           runs=1, seed=1, timeout=60)
    assert [r["n"] for r in rows] == [1, 2]
    assert all(r["measured_mean"] > 0 and len(r["measured_times"]) == 1 for r in rows)
    json.dumps(rows)   # the command's --json must be able to write them


def test_model_draws_are_matched_to_the_real_job_stream():
    from pevpm.validate.calibration import load_example
    from pevpm.validate.cases import CASES

    size = ProblemSize(bag_jobs=200, bag_max_compute=0.04)
    params = CASES["bag_of_tasks"].model_params(CALIBRATION, 4, size)
    jobs = load_example("bag_of_tasks").job_stream(200, 65536, 0.04, 310952)
    assert params["max_compute"] / 2 == pytest.approx(jobs[:, 1].mean())
    assert params["max_size"] == round(jobs[:, 0].mean() + jobs[:, 2].mean())
    assert params["jobs"] == 200 and params["overhead"] == 1e-4
    assert 0.0188 < params["max_compute"] / 2 < 0.0191          # 19.0 ms, not 20


def test_saved_measurements_replay_an_earlier_run(tmp_path):
    size = ProblemSize(bag_jobs=200, bag_max_compute=0.04)
    saved = tmp_path / "lab.json"
    saved.write_text(json.dumps({"args": lab_args(size), "rows": [
        {"n": 1, "measured_times": [3.8, 3.9]}, {"n": 2, "measured_times": [5.3]}]}))
    assert saved_calibration(str(saved)) is None
    saved.write_text(json.dumps({"args": lab_args(size), "calibration": CALIBRATION, "rows": [
        {"n": 1, "measured_times": [3.8, 3.9]}, {"n": 2, "measured_times": [5.3]}]}))
    assert saved_calibration(str(saved)) == CALIBRATION
    measure = saved_measurements(str(saved))
    got = measure("bag_of_tasks", [1, 2], lab_args(size), rate="80mbit")
    assert got[1].times == [3.8, 3.9] and got[2].mean == 5.3
    with pytest.raises(PevpmError, match="holds counts"):
        measure("bag_of_tasks", [1, 4], lab_args(size))
    with pytest.raises(PevpmError, match="holds counts"):
        measure("bag_of_tasks", [1], lab_args(ProblemSize(bag_jobs=20)))
    (tmp_path / "other.json").write_text("{}")
    with pytest.raises(PevpmError, match="not a 'pevpm lab validate --json' file"):
        saved_measurements(str(tmp_path / "other.json"))


def test_measured_lab_profile_makes_the_full_model_slower_where_workers_contend():
    """The profile MPIBench measured in the lab (80 Mbit/s, 2x1 .. 2x8, 4x1, 8x1)."""
    profile = str(EXAMPLES_DIR / "bag_of_tasks" / "lab-80mbit.db")
    size = ProblemSize(bag_jobs=100, bag_max_compute=0.04)
    rows = predict_in_lab([1, 8], profile, CALIBRATION, size, runs=2, seed=1)
    assert rows[1]["predictions"]["full"] == rows[1]["predictions"]["restricted"]
    assert rows[8]["predictions"]["full"] > 1.15 * rows[8]["predictions"]["restricted"]
