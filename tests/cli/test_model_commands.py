"""pevpm show / pevpm check, driven through their argparse registration."""

import argparse
from pathlib import Path

import pytest

from pevpm.cli import check, show
from pevpm.errors import PevpmError
from pevpm.model.directives import parse_directives
from pevpm.model.loader import load_model

JACOBI = Path(__file__).resolve().parents[2] / "examples" / "jacobi" / "jacobi.c"


def run(argv):
    parser = argparse.ArgumentParser(prog="pevpm")
    subparsers = parser.add_subparsers()
    show.register(subparsers)
    check.register(subparsers)
    args = parser.parse_args(argv)
    return args.func(args)


def test_show_prints_the_tree(capsys):
    assert run(["show", str(JACOBI), "-D", "iterations=10"]) == 0
    out = capsys.readouterr().out
    assert "parameters: iterations = 10, t_perseus = 3.24" in out
    assert "    Serial on perseus: parameter t_perseus / numprocs * 0.001 s  [line 152]" in out


def test_show_directives_parse_back_to_the_same_model(capsys):
    assert run(["show", str(JACOBI), "--directives", "--language", "python"]) == 0
    text = capsys.readouterr().out
    assert parse_directives(text, "x.py", "python") == load_model(JACOBI)


def test_check_reports_and_sets_the_exit_status(tmp_path, capsys):
    assert run(["check", str(JACOBI)]) == 0
    assert "no problems found" in capsys.readouterr().out
    bad = tmp_path / "bad.c"
    bad.write_text("MPI_Barrier(MPI_COMM_WORLD);\n")
    assert run(["check", str(bad)]) == 1
    assert capsys.readouterr().out == (f"{bad}:1:1: MPI_Barrier call has no Message "
                                       "directive before it\n")


def test_malformed_define():
    with pytest.raises(PevpmError, match="-D: expected NAME=VALUE, got 'iterations'"):
        run(["show", str(JACOBI), "-D", "iterations"])
