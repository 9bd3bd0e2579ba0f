"""``pevpm predict`` end to end, on small annotated C models."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pevpm.cli import main

SRC = Path(__file__).resolve().parents[2] / "src"

# Even ranks send 1 KiB to the next odd rank, then everyone computes 1 ms.
PAIRS = """\
int main(void) {
// PEVPM Parameter iterations = 3
// PEVPM Loop iterations = parameter iterations
// PEVPM {
// PEVPM Runon c1 = procnum%2 == 0
// PEVPM &      c2 = procnum%2 != 0
// PEVPM {
// PEVPM Message type = MPI_Send
// PEVPM &      size = 1024
// PEVPM &      from = procnum
// PEVPM &      to = {to}
// PEVPM }
// PEVPM {
// PEVPM Message type = MPI_Recv
// PEVPM &      size = {size}
// PEVPM &      from = procnum-1
// PEVPM &      to = procnum
// PEVPM }
// PEVPM Serial time = 0.001
// PEVPM }
  return 0;
}
"""

# Both ranks send first with blocking sends: deadlock (no eager protocol).
DEADLOCK = """\
int main(void) {
// PEVPM Message type = MPI_Send
// PEVPM &      size = 8
// PEVPM &      from = procnum
// PEVPM &      to = 1-procnum
// PEVPM Message type = MPI_Recv
// PEVPM &      size = 8
// PEVPM &      from = 1-procnum
// PEVPM &      to = procnum
  return 0;
}
"""

MACHINE = "constant:latency=1ms"


def write(tmp_path, text, name="model.c"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def pairs(tmp_path, to="procnum+1", size="1024"):
    return write(tmp_path, PAIRS.replace("{to}", to).replace("{size}", size))


def error_line(err: str) -> str:
    """The one error line; directive errors may add the source line and a caret under it."""
    lines = err.strip("\n").splitlines()
    assert "Traceback" not in err
    assert len(lines) == 1 or (len(lines) == 3 and lines[2].strip() == "^"), err
    assert lines[0].startswith("pevpm: error: ")
    return lines[0]


def run_cli(capsys, *argv):
    code = main(["predict", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_table_with_speedup(tmp_path, capsys):
    code, out, err = run_cli(capsys, pairs(tmp_path), "-n", "2..8", "--runs", "3",
                             "--machine", MACHINE, "--workers", "1")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["procs", "mean", "(s)", "sd", "(s)", "min", "bound", "max",
                                "bound", "speedup", "efficiency"]
    rows = [line.split() for line in lines[2:5]]
    assert [r[0] for r in rows] == ["2", "4", "8"]
    # every pair: 1 ms message then 1 ms work, 3 iterations, whatever the count
    assert [float(r[1]) for r in rows] == pytest.approx([0.006] * 3)
    assert [float(r[-2]) for r in rows] == pytest.approx([1.0] * 3)
    assert [float(r[-1]) for r in rows] == pytest.approx([1.0, 0.5, 0.25])
    assert "relative to 2 ranks" in lines[5]


PYTHON_MODEL = """\
from pevpm.model.builder import ModelBuilder


def model():
    b = ModelBuilder(parameters={"work": 0.004})
    b.serial("parameter work / numprocs")
    return b
"""


def test_python_model_file_scales_by_count(tmp_path, capsys):
    path = write(tmp_path, PYTHON_MODEL, name="model.py")
    code, out, err = run_cli(capsys, path, "-n", "1..4", "--runs", "2", "--json",
                             "--machine", MACHINE, "--workers", "1")
    assert code == 0, err
    doc = json.loads(out)
    assert [p["mean"] for p in doc["predictions"]] == pytest.approx([0.004, 0.002, 0.001])
    assert [p["speedup"] for p in doc["predictions"]] == pytest.approx([1.0, 2.0, 4.0])
    assert doc["speedup_base"] == 1


def test_json_output_and_parameters(tmp_path, capsys):
    code, out, _ = run_cli(capsys, pairs(tmp_path), "-n", "2,4", "--runs", "2", "--json",
                           "--machine", MACHINE, "-D", "iterations=5", "--workers", "1")
    assert code == 0
    doc = json.loads(out)
    assert [p["numprocs"] for p in doc["predictions"]] == [2, 4]
    assert doc["predictions"][0]["mean"] == pytest.approx(0.010)
    assert doc["predictions"][0]["params"] == {"iterations": 5}
    assert doc["predictions"][0]["min_bound"] == pytest.approx(0.010)


def test_trace_file_has_a_track_per_rank_and_message_flows(tmp_path, capsys):
    trace = tmp_path / "run.json"
    code, _, err = run_cli(capsys, pairs(tmp_path), "-n", "4", "--runs", "1",
                           "--machine", MACHINE, "--trace", str(trace), "--workers", "1")
    assert code == 0, err
    events = json.loads(trace.read_text())["traceEvents"]
    tracks = {e["tid"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    assert tracks == {0, 1, 2, 3}
    assert {e["tid"] for e in events if e["ph"] == "X"} == {0, 1, 2, 3}
    starts = [e for e in events if e["ph"] == "s"]
    ends = [e for e in events if e["ph"] == "f"]
    assert len(starts) == len(ends) == 2 * 3  # 2 pairs x 3 iterations
    assert {e["id"] for e in starts} == {e["id"] for e in ends}


@pytest.mark.parametrize("case, expected", [
    ("typo", "procnu"),
    ("negative size", "-4"),
    ("rank out of range", "rank"),
    ("deadlock", "deadlock"),
])
def test_bad_models_give_one_line_errors(tmp_path, capsys, case, expected):
    path = {"typo": lambda: pairs(tmp_path, to="procnu+1"),
            "negative size": lambda: pairs(tmp_path, size="-4"),
            "rank out of range": lambda: pairs(tmp_path, to="procnum+2"),
            "deadlock": lambda: write(tmp_path, DEADLOCK)}[case]()
    code, _, err = run_cli(capsys, path, "-n", "2", "--runs", "2", "--machine", MACHINE,
                             "--workers", "1")
    assert code != 0
    line = error_line(err)
    assert expected.lower() in line.lower()
    if case != "deadlock":
        assert re.search(r"model\.c:\d+:\d+: ", line)  # names the place in the model


def test_truncated_message_is_a_one_line_error_naming_both_ends(tmp_path, capsys):
    path = pairs(tmp_path, size="512")   # odd ranks receive at most 512 of the 1024 bytes
    code, _, err = run_cli(capsys, path, "-n", "2", "--runs", "2", "--machine", MACHINE,
                           "--workers", "1")
    assert code == 2
    assert error_line(err) == (
        f"pevpm: error: {path}:14:10: message truncated: rank 1's MPI_Recv takes at most 512 "
        f"bytes but matched 1024 bytes with tag 0 from rank 0's MPI_Send at {path}:8:10 "
        "(MPI_ERR_TRUNCATE)")


def test_event_limit_stops_a_model_that_runs_too_long(tmp_path, capsys):
    # --exact: simulated whole (the steady loop would otherwise be extrapolated
    # from 64 iterations, well within the limit)
    code, _, err = run_cli(capsys, pairs(tmp_path), "-n", "2", "--runs", "1", "--machine",
                           MACHINE, "--workers", "1", "-D", "iterations=1000000000",
                           "--max-events", "1000", "--exact")
    assert code == 2 and "1000 events" in error_line(err)


def test_virtual_time_limit(tmp_path, capsys):
    code, _, err = run_cli(capsys, pairs(tmp_path), "-n", "2", "--runs", "1", "--machine",
                           MACHINE, "--workers", "1", "--max-time", "0.003")
    assert code == 2 and "time limit" in error_line(err)


@pytest.mark.parametrize("argv, expected", [
    (["-n", "4..2"], "-n"),
    (["-n", "x"], "-n"),
    (["-D", "iterations"], "-D"),
    (["--machine", "hockny:latency=1ms"], "did you mean 'hockney'"),
    (["--machine", "hockney:latency=1ms"], "bandwidth"),
    (["--machine", "constant:latncy=1ms"], "did you mean 'latency'"),
    (["--runs", "0"], "argument --runs: must be a whole number from 1"),
    (["--executor", "threads"], "unknown executor"),
])
def test_bad_options_give_one_line_errors(tmp_path, capsys, argv, expected):
    code, _, err = run_cli(capsys, pairs(tmp_path), "-n", "2", "--machine", MACHINE,
                           "--workers", "1", *argv)
    assert code == 2
    assert expected in error_line(err)


def test_missing_model_file_is_a_one_line_error(tmp_path, capsys):
    code, _, err = run_cli(capsys, str(tmp_path / "nope.c"), "-n", "2")
    assert code == 2 and "nope.c" in error_line(err)


def test_subprocess_error_has_no_traceback(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = subprocess.run([sys.executable, "-m", "pevpm", "predict", pairs(tmp_path, to="procnu+1"),
                          "-n", "2", "--runs", "1", "--machine", MACHINE],
                         check=False, capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 2
    assert "procnu" in error_line(out.stderr)


def test_subprocess_prediction_runs_on_a_process_pool(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = subprocess.run([sys.executable, "-m", "pevpm", "predict", pairs(tmp_path),
                          "-n", "2", "--runs", "4", "--machine", MACHINE, "--workers", "2",
                          "--json"], check=False, capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["predictions"][0]["mean"] == pytest.approx(0.006)


def test_a_profile_measured_while_busy_is_noted(tmp_path, capsys):
    import sqlite3

    from pevpm.cli import main

    profile = tmp_path / "busy.db"
    assert main(["machine", "new", "-o", str(profile), "--latency", "5us", "--bandwidth",
                 "1GB/s", "--samples", "200", "--placements", "1x2,2x1"]) == 0
    model = tmp_path / "m.py"
    model.write_text("from pevpm.model.builder import ModelBuilder\n"
                     "def model():\n    b = ModelBuilder()\n    b.serial('1e-3')\n    return b\n")
    capsys.readouterr()
    assert main(["predict", str(model), "-n", "1", "--runs", "1", "--machine", str(profile)]) == 0
    assert "machine load while measuring" not in capsys.readouterr().err   # nothing recorded
    with sqlite3.connect(profile) as conn:
        block = conn.execute("SELECT id FROM blocks WHERE test='isend' AND size=1024 AND n=1"
                             ).fetchone()[0]
        conn.execute("INSERT INTO conditions VALUES (?, 1.25, 2.9, 2)", (block,))
    assert main(["predict", str(model), "-n", "1", "--runs", "1", "--machine", str(profile)]) == 0
    err = capsys.readouterr().err
    assert ("note: machine load while measuring: 1 of 1 blocks ran while other processes used "
            "more than 0.2 cores (worst 1.25 cores, isend 1024 B 1x2)") in err
