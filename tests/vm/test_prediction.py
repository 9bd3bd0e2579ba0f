"""Aggregation of hand-made runs into a Prediction."""

import json

import numpy as np
import pytest

from pevpm.vm.kernel.result import CollectiveRecord, RankTimes, RunResult
from pevpm.vm.strategies.prediction import PredictionAccumulator, RunSummary


def make_run(makespan, ranks, critical, collectives=()):
    return RunResult(makespan, [RankTimes(*r) for r in ranks], critical,
                     messages_simulated=4, collectives=list(collectives))


RUN_A = make_run(3.0, [(1.0, 1.0, 1.0, 3.0), (2.0, 0.5, 0.0, 2.5)],
                 {"compute": 1.0, "communication": 1.0, "waiting": 1.0},
                 [CollectiveRecord("MPI_Barrier", "m.py:3:1", 0, np.array([2.0, 2.5]))])
RUN_B = make_run(5.0, [(3.0, 1.0, 1.0, 5.0), (4.0, 0.5, 0.0, 4.5)],
                 {"compute": 3.0, "communication": 1.0, "waiting": 0.0},
                 [CollectiveRecord("MPI_Barrier", "m.py:3:1", 0, np.array([4.0, 4.0]))])


def build(*runs, **kwargs):
    acc = PredictionAccumulator(numprocs=2, seed=7, **kwargs)
    for run in runs:
        acc.add(RunSummary.of(run))
    return acc


def test_run_time_statistics_are_exact():
    p = build(RUN_A, RUN_B).build()
    assert p.makespans.tolist() == [3.0, 5.0]
    assert p.mean == 4.0
    assert p.sd == pytest.approx(np.sqrt(2.0), rel=1e-12)
    assert p.median == 4.0
    assert p.quantile(0.25) == 3.5
    assert p.messages_simulated == 8


def test_per_rank_breakdown_means_and_sds():
    p = build(RUN_A, RUN_B).build()
    assert p.breakdown()["compute"].tolist() == [2.0, 3.0]
    assert p.breakdown()["communication"].tolist() == [1.0, 0.5]
    assert p.breakdown()["waiting"].tolist() == [1.0, 0.0]
    assert p.finish_mean.tolist() == [4.0, 3.5]
    # compute differs by 2 s between the two runs on both ranks: sample sd sqrt(2)
    np.testing.assert_allclose(p.breakdown_sd[:, 0], [np.sqrt(2)] * 2, rtol=1e-12)
    np.testing.assert_allclose(p.breakdown_sd[:, 1:], 0.0, atol=1e-12)


def test_critical_path_shares_sum_to_one():
    p = build(RUN_A, RUN_B).build()
    assert p.critical_path_seconds == {"compute": 2.0, "communication": 1.0, "waiting": 0.5}
    shares = p.critical_path_shares
    assert shares["compute"] == pytest.approx(2.0 / 3.5)
    assert sum(shares.values()) == pytest.approx(1.0)


def test_collective_completion_summary():
    (barrier,) = build(RUN_A, RUN_B).build().collectives
    assert (barrier.op, barrier.where, barrier.occurrence, barrier.runs) == \
        ("MPI_Barrier", "m.py:3:1", 0, 2)
    assert barrier.mean_completion.tolist() == [3.0, 3.25]
    assert barrier.spread == 0.25  # (0.5 + 0.0) / 2
    np.testing.assert_allclose(barrier.sd_completion, [1.0, 0.75])


def test_single_run_has_zero_sd():
    p = build(RUN_A).build()
    assert p.sd == 0.0
    assert p.breakdown_sd.tolist() == [[0.0] * 3] * 2


def test_bounds_and_json_round_trip():
    acc = build(RUN_A, RUN_B, params={"iterations": 10})
    acc.min_bound, acc.max_bound = 2.5, 6.0
    p = acc.build()
    data = json.loads(p.to_json())
    assert data["min_bound"] == 2.5 and data["max_bound"] == 6.0
    assert data["mean"] == 4.0 and data["runs"] == 2 and data["seed"] == 7
    assert data["params"] == {"iterations": 10}
    assert data["makespans"] == [3.0, 5.0]
    assert data["per_rank"]["compute"] == [2.0, 3.0]
    assert data["collectives"][0]["mean_completion"] == [3.0, 3.25]
    brief = p.to_dict(per_rank=False)
    assert "makespans" not in brief and "per_rank" not in brief
    assert "mean_completion" not in brief["collectives"][0]


def test_empty_accumulator_is_refused():
    with pytest.raises(ValueError):
        PredictionAccumulator(numprocs=1).build()
