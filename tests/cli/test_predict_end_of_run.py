"""``pevpm predict``: warnings for requests left at the end, the wall-clock
limit and run times too long for the statistics (issue 16)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from pevpm.cli import main
from pevpm.errors import SimulationError, WallClockLimitError
from pevpm.machine.presets import parse_machine
from pevpm.model.directives import parse_directives
from pevpm.vm.kernel.engine import Limits, simulate
from pevpm.vm.strategies.prediction import MAX_RUN_SECONDS, PredictionAccumulator, RunSummary

#: Rank 0 posts an Isend (line 3) that rank 1 never receives.
LEAK = ("// PEVPM Runon c0 = procnum == 0\n// PEVPM {\n// PEVPM Message type = MPI_Isend\n"
        "// PEVPM & size = 8\n// PEVPM & from = 0\n// PEVPM & to = 1\n// PEVPM & tag = 7\n"
        "// PEVPM & req = a\n// PEVPM }\n")
FOREVER = ("// PEVPM Loop iterations = 1e15\n// PEVPM {\n// PEVPM Serial time = 1e-9\n"
           "// PEVPM }\n")
ARGS = ["--runs", "4", "--workers", "1", "--seed", "2"]


def write(tmp_path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_predict_warns_once_per_request_and_keeps_status_0(tmp_path, capsys):
    model = write(tmp_path, "leak.c", LEAK)
    assert main(["predict", model, "-n", "2,4", *ARGS]) == 0
    err = capsys.readouterr().err
    warned = [line for line in err.splitlines() if "warning" in line]
    assert warned == [f"pevpm predict: warning: {model}:3:10: rank 0: MPI_Isend to rank 1 tag 7 "
                      f"never matched (in 4 of 4 runs on {n} ranks)" for n in (2, 4)]


def test_predict_json_carries_the_requests(tmp_path, capsys):
    model = write(tmp_path, "leak.c", LEAK)
    assert main(["predict", model, "-n", "2", *ARGS, "--json"]) == 0
    (prediction,) = json.loads(capsys.readouterr().out)["predictions"]
    assert prediction["outstanding"] == [{
        "where": f"{model}:3:10", "rank": 0, "op": "MPI_Isend", "peer": 1, "tag": 7,
        "state": "never matched", "runs": 4, "most_in_a_run": 1}]


def test_max_wall_stops_an_endless_run_on_the_compiled_core(tmp_path, capsys):
    model = write(tmp_path, "forever.c", FOREVER)
    assert main(["predict", model, "-n", "1", *ARGS, "--no-bounds", "--exact",
                 "--max-events", "1000000000000000", "--max-wall", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert err.startswith("pevpm: error: simulation stopped after 1 s of real time and ")
    assert " events while rank 0 ran " in err      # at the Serial, or at the loop's end
    assert (f"of 1000000000000000 of the loop at {model}:1:10 (--max-wall, Limits.max_wall)"
            in err)


def test_max_wall_in_the_reference_engine_names_the_place():
    model = parse_directives(FOREVER, "forever.c")
    with pytest.raises(WallClockLimitError) as info:
        simulate(model, 1, parse_machine("perseus"), limits=Limits(max_wall=0.2))
    message = str(info.value)
    assert message.startswith("simulation stopped after 0.2 s of real time and ")
    # the check may fall on the loop's end, which has no place of its own:
    # then the loop's place alone says where rank 0 was
    assert " events while rank 0 ran " in message
    assert "of 1000000000000000 of the loop at forever.c:1:10 (--max-wall" in message


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf"])
def test_max_wall_must_be_a_positive_number(tmp_path, capsys, value):
    model = write(tmp_path, "leak.c", LEAK)
    assert main(["predict", model, "-n", "2", "--max-wall", value]) == 2
    assert "argument --max-wall: must be a finite number > 0" in capsys.readouterr().err


def test_run_times_too_long_for_the_statistics_are_refused(tmp_path, capsys):
    model = write(tmp_path, "huge.c", "// PEVPM Serial time = 1e300 * (procnum + 1)\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # no numpy RuntimeWarning may escape
        assert main(["predict", model, "-n", "2", *ARGS]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("pevpm: error: run 0 on 2 ranks lasted 2e+300 simulated seconds, more than "
                   "the 1e+150 s a prediction's statistics can take without overflowing: a "
                   "Serial time, size or loop count of the model is far too large (--max-time "
                   "stops runs earlier)")


def summary(seconds: float) -> RunSummary:
    return RunSummary(seconds, np.array([[seconds, 0.0, 0.0, seconds]]), np.array([seconds, 0, 0]),
                      0, {})


def test_statistics_of_the_longest_allowed_times_do_not_overflow():
    acc = PredictionAccumulator(numprocs=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for seconds in (MAX_RUN_SECONDS, MAX_RUN_SECONDS / 2):
            acc.add(summary(seconds))
        p = acc.build()
    assert p.mean == 0.75 * MAX_RUN_SECONDS
    assert p.sd == pytest.approx(MAX_RUN_SECONDS / 2 / np.sqrt(2), rel=1e-12)
    with pytest.raises(SimulationError, match=r"^run 2 on 1 rank lasted 1e\+151 simulated"):
        acc.add(summary(10 * MAX_RUN_SECONDS))
