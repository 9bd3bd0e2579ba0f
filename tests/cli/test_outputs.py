"""Output paths are checked before any work (issue 16)."""

from __future__ import annotations

import pytest

from pevpm.cli import main
from pevpm.profile.store import default_profile_path

PROFILE = str(default_profile_path())


def error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err.strip()


@pytest.mark.parametrize("command", [["profile", "export-csv", PROFILE, "-o"],
                                     ["analytic", "laws", "-f", "0.9", "--plot"]])
def test_a_file_in_a_missing_folder(tmp_path, capsys, command):
    assert main(command + [str(tmp_path / "no" / "out.csv")]) == 2
    assert f"folder {tmp_path / 'no'} does not exist" in error(capsys)


def test_a_folder_where_a_file_belongs(tmp_path, capsys):
    assert main(["profile", "export-csv", PROFILE, "-o", str(tmp_path)]) == 2
    assert "argument -o/--output: is a folder; give a file name" in error(capsys)


def test_plots_onto_an_existing_file_are_refused_and_it_is_kept(tmp_path, capsys):
    existing = tmp_path / "notes.txt"
    existing.write_text("keep")
    assert main(["profile", "plot", PROFILE, "-o", str(existing)]) == 2
    assert "is an existing file, not a folder" in error(capsys)
    assert existing.read_text() == "keep"


def test_trace_path_is_checked_before_simulating(tmp_path, capsys):
    model = tmp_path / "m.c"
    model.write_text("// PEVPM Serial time = 1\n")
    assert main(["predict", str(model), "-n", "1", "--trace", str(tmp_path / "x" / "t.json")]) == 2
    assert "argument --trace: folder" in error(capsys)
