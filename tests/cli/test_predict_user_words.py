"""Errors in the user's words and a table that survives a failing count (issue 29)."""

import json

import pytest

from pevpm.cli import main

MACHINE = "constant:latency=1ms"

# Rank 1 never joins the Allreduce (line 8): a deadlock at 2 ranks and more.
SKIPS_ALLREDUCE = """\
from pevpm.model.builder import ModelBuilder

def model():
    b = ModelBuilder(parameters={"n": 2})
    with b.loop("parameter n"):
        b.serial(0.001)
        with b.on_ranks("procnum != 1"):
            b.collective("MPI_Allreduce", size=8)
    return b
"""

# Every rank gives the Allreduce (line 6) a different size.
SIZES_DIFFER = """\
from pevpm.model.builder import ModelBuilder

def model():
    b = ModelBuilder()
    b.serial(0.001)
    b.collective("MPI_Allreduce", size="8 * (procnum + 1)")
    return b
"""

# A negative time at 1 rank only (line 5).
NEGATIVE_AT_ONE = """\
from pevpm.model.builder import ModelBuilder

def model():
    b = ModelBuilder()
    b.serial("0.375 - 0.5 / numprocs")
    return b
"""


def predict(capsys, path, *argv):
    code = main(["predict", str(path), "--machine", MACHINE, "--runs", "2", "--workers", "1",
                 *argv])
    out, err = capsys.readouterr()
    return code, out, err


def model_file(tmp_path, text):
    path = tmp_path / "model.py"
    path.write_text(text)
    return path


def test_a_deadlock_inside_a_collective_names_the_collective_and_its_line(tmp_path, capsys):
    path = model_file(tmp_path, SKIPS_ALLREDUCE)
    code, out, err = predict(capsys, path, "-n", "2")
    assert code == 2 and out == ""
    assert err == (f"pevpm: error: deadlock: rank 0 blocked in MPI_Allreduce at {path}:8:13, "
                   "waiting on rank 1; rank 1 terminated\n")


def test_different_sizes_to_a_collective_name_it_not_its_messages(tmp_path, capsys):
    path = model_file(tmp_path, SIZES_DIFFER)
    code, _, err = predict(capsys, path, "-n", "2")
    assert code == 2
    assert err.startswith(f"pevpm: error: {path}:6:5: MPI_Allreduce called with different "
                          "sizes: rank 0's call expects at most 8 bytes from rank 1")
    assert "MPI_Sendrecv" not in err and "-2000" not in err


def test_an_error_in_a_model_file_names_its_line(tmp_path, capsys):
    path = model_file(tmp_path, NEGATIVE_AT_ONE)
    code, _, err = predict(capsys, path, "-n", "1")
    assert code == 2
    assert err == (f"pevpm: error: {path}:5:5: negative serial time -0.125 from "
                   "'0.375 - 0.5 / numprocs'\n")
    assert "statement" not in err


def test_a_failing_count_keeps_the_other_rows_and_exits_non_zero(tmp_path, capsys):
    path = model_file(tmp_path, NEGATIVE_AT_ONE)
    code, out, err = predict(capsys, path, "-n", "1,2,4")
    assert code == 2
    rows = out.splitlines()
    assert rows[2] == (f"     1  failed: {path}:5:5: negative serial time -0.125 from "
                       "'0.375 - 0.5 / numprocs' (error below)")
    assert rows[3].split() == ["2", "0.125", "0", "0.125", "0.125", "1.00", "1.000"]
    assert rows[4].split() == ["4", "0.25", "0", "0.25", "0.25", "0.50", "0.250"]
    assert rows[5].startswith("speedup and efficiency relative to 2 ranks")
    assert err.splitlines() == [(f"pevpm: error: 1 rank: {path}:5:5: negative serial time "
                                 "-0.125 from '0.375 - 0.5 / numprocs'")]


def test_a_failing_count_in_json_is_an_entry_with_its_error(tmp_path, capsys):
    path = model_file(tmp_path, NEGATIVE_AT_ONE)
    code, out, _ = predict(capsys, path, "-n", "1,2", "--json")
    assert code == 2
    first, second = json.loads(out)["predictions"]
    assert first == {"numprocs": 1, "error": f"{path}:5:5: negative serial time -0.125 from "
                                             "'0.375 - 0.5 / numprocs'"}
    assert second["mean"] == pytest.approx(0.125)


def test_every_count_failing_is_one_error(tmp_path, capsys):
    path = model_file(tmp_path, SKIPS_ALLREDUCE)
    code, out, err = predict(capsys, path, "-n", "2,4")
    assert code == 2 and out == ""
    assert err.count("pevpm: error:") == 1 and "MPI_Allreduce" in err


def test_a_note_on_one_rank_says_rank(tmp_path, capsys):
    path = model_file(tmp_path, "from pevpm.model.builder import ModelBuilder\n\n"
                                "def model():\n    b = ModelBuilder()\n"
                                "    with b.loop(300):\n        b.serial(0.001)\n"
                                "        b.collective('MPI_Barrier')\n    return b\n")
    code, _, err = predict(capsys, path, "-n", "1,2")
    assert code == 0
    assert f"pevpm predict: note: 1 rank: the loop at {path}:5:5 was simulated" in err
    assert f"pevpm predict: note: 2 ranks: the loop at {path}:5:5 was simulated" in err
