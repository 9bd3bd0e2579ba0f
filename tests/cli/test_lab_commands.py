import argparse
import json

import pytest

from pevpm.cli import main
from pevpm.cli.lab import process_counts
from pevpm.validate.lab import ContentionLab, lab_available

AVAILABLE, WHY_NOT = lab_available()


def test_process_count_lists():
    assert process_counts("4,1,2") == [1, 2, 4]
    assert process_counts("1..3,8") == [1, 2, 3, 8]
    for bad in ("0,1", "a", "3..x"):
        with pytest.raises(argparse.ArgumentTypeError):
            process_counts(bad)


def test_lab_check_says_whether_the_lab_works(capsys):
    assert main(["lab", "check"]) == (0 if AVAILABLE else 1)
    assert capsys.readouterr().out.startswith("contention lab: ")


def test_unknown_example_is_a_one_line_error(capsys):
    assert main(["lab", "run", "nosuch", "-n", "1"]) == 2
    assert "no example program 'nosuch'" in capsys.readouterr().err


@pytest.mark.skipif(not AVAILABLE, reason=f"contention lab unavailable: {WHY_NOT}")
@pytest.mark.mpi
def test_lab_run_prints_a_table_and_writes_json(capsys, tmp_path):
    out = tmp_path / "lab.json"
    code = main(["lab", "run", "jacobi", "-n", "1,2", "--repeats", "1", "--warmup", "0",
                 "--rate", "100mbit", "--json", str(out), "-a", "--size 16 --iterations 3"])
    assert code == 0
    table = capsys.readouterr().out.splitlines()
    assert table[0].startswith("jacobi in the lab, link rate 100mbit")
    rows = [line for line in table[2:] if not line.startswith("note:")]  # a busy machine is noted
    assert [line.split()[:2] for line in rows] == [["1", "1"], ["2", "1"]]
    saved = json.loads(out.read_text())
    assert [m["nprocs"] for m in saved["measurements"]] == [1, 2]
    assert saved["measurements"][1]["args"] == ["--size", "16", "--iterations", "3"]


@pytest.mark.skipif(not AVAILABLE, reason=f"contention lab unavailable: {WHY_NOT}")
def test_lab_clean_removes_a_lab_that_was_never_torn_down(capsys):
    lab = ContentionLab(nodes=2, rate=None).setup()
    assert main(["lab", "clean"]) == 0
    out = capsys.readouterr().out
    for name in (lab.switch, *lab.namespaces):
        assert name in out
    assert main(["lab", "clean"]) == 0
    assert capsys.readouterr().out.startswith("removed 0 lab namespace(s)")


@pytest.mark.skipif(not AVAILABLE, reason=f"contention lab unavailable: {WHY_NOT}")
@pytest.mark.mpi
def test_lab_exec_kills_a_job_that_outlives_its_timeout(capsys):
    assert main(["lab", "exec", "-n", "1", "--rate", "none", "--timeout", "1",
                 "--", "sleep", "30"]) == 2
    assert "did not finish within 1 s; killed" in capsys.readouterr().err
