"""``predict --precision``: the runs per count picked from a pilot's spread (issue 29)."""

import json

import pytest

from pevpm.cli import main
from pevpm.cli.predict import PILOT_RUNS, runs_for_precision
from pevpm.machine.presets import parse_machine
from pevpm.model.loader import load_model
from pevpm.vm.strategies.montecarlo import predict

MODEL = """\
from pevpm.model.builder import ModelBuilder

def model():
    b = ModelBuilder()
    b.serial("gamma(1.0, 0.1 * numprocs)")
    return b
"""


def test_precision_picks_the_runs_each_count_needs(tmp_path, capsys):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    machine = "constant:latency=0"
    code = main(["predict", str(path), "-n", "1,2", "--machine", machine, "--precision", "2%",
                 "--workers", "1", "--json", "--no-bounds"])
    out, err = capsys.readouterr()
    assert code == 0, err
    model = load_model(str(path))
    expected = []
    for n in (1, 2):
        pilot = predict(model, n, parse_machine(machine), runs=PILOT_RUNS, seed=0, workers=1,
                        bounds=False)
        expected.append(runs_for_precision(pilot.mean, pilot.sd, 0.02))
        assert (f"note: {n} rank{'s' if n > 1 else ''}: --precision 2%: 20 pilot runs gave "
                f"sd/mean {pilot.sd / pilot.mean:.2%}, so {expected[-1]:,} runs") in err
    assert [p["runs"] for p in json.loads(out)["predictions"]] == expected
    assert 40 < expected[0] < 200 and expected[1] > 2 * expected[0]   # cv 0.1 and 0.2


def test_a_deterministic_model_keeps_the_pilot(tmp_path, capsys):
    path = tmp_path / "model.py"
    path.write_text(MODEL.replace("gamma(1.0, 0.1 * numprocs)", "1.0"))
    assert main(["predict", str(path), "-n", "1,4", "--machine", "constant:latency=0",
                 "--precision", "0.5%", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1].endswith("20 runs per count, seed 0")


@pytest.mark.parametrize("text", ["0%", "100%", "abc", "-1%", "nan"])
def test_a_bad_precision_is_one_line(tmp_path, capsys, text):
    path = tmp_path / "model.py"
    path.write_text(MODEL)
    assert main(["predict", str(path), "-n", "1", f"--precision={text}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pevpm: error: argument --precision: ") and "\n" == err[-1]


def test_a_large_request_is_announced_before_it_runs(tmp_path, capsys, monkeypatch):
    import pevpm.cli.predict as command

    monkeypatch.setattr(command, "MANY_MESSAGES", 1000)
    path = tmp_path / "ring.py"
    path.write_text(MODEL.replace('b.serial("gamma(1.0, 0.1 * numprocs)")',
                                  'b.sendrecv(8, dest="(procnum + 1) % numprocs", '
                                  'source="(procnum + numprocs - 1) % numprocs")'))
    assert main(["predict", str(path), "-n", "2,64", "--machine", "constant:latency=0",
                 "--runs", "20", "--workers", "1", "--no-bounds"]) == 0
    err = capsys.readouterr().err
    # 2 ranks: one exchange = 2 messages a run, 1 a rank; 64 ranks x 20 runs = 1,280
    assert ("note: 64 ranks: 20 runs will simulate about 1.3e+03 messages (from 2 ranks' 1 a "
            "rank a run;") in err
    assert "note: 2 ranks" not in err
