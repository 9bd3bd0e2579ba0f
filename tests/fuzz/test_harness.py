"""The fuzzing harness tells clean outcomes from failures."""

from __future__ import annotations

from fuzz_harness import _kind, changed_files, run, snapshot


def test_a_command_past_its_time_is_a_hang(tmp_path):
    model = tmp_path / "forever.c"
    model.write_text("// PEVPM Loop iterations = 1e12\n// PEVPM {\n// PEVPM Serial time = 1e-9\n"
                     "// PEVPM }\n")
    outcome = run(["predict", str(model), "-n", "1", "--runs", "1", "--workers", "1",
                   "--max-events", "0", "--no-bounds", "--exact"], limit=1.0)
    assert outcome.kind == "hang" and outcome.failed


def test_clean_and_unclean_exits():
    assert _kind(2, "pevpm: error: x.c:1:1: bad\n", "", False) == "error"
    assert _kind(2, "pevpm: error: x.c:1:1: bad\n// PEVPM Serail\n         ^\n", "", False) \
        == "error"
    assert _kind(2, "pevpm: error: one\npevpm: error: two\n", "", False) == "unclean"
    assert _kind(None, "", "Traceback (most recent call last):\n", False) == "traceback"
    assert _kind(0, "Traceback (most recent call last):\n", "", False) == "traceback"
    assert _kind(130, "pevpm: interrupted\n", "", False) == "error"     # Ctrl-C, cleanly
    assert _kind(130, "pevpm: interrupted\nTraceback\n", "", False) == "unclean"


def test_a_command_that_changes_a_file_it_does_not_own(tmp_path):
    model = tmp_path / "m.c"
    model.write_text("// PEVPM Serial time = 1\n")
    before = snapshot(tmp_path)
    model.write_text("// PEVPM Serial time = 2\n")
    assert changed_files(before, ["show", str(model)], 0) == [str(model.resolve())]
    assert changed_files(before, ["x", "-o", str(model)], 0) == []        # its output
    assert changed_files(before, ["x", "-o", str(model)], 2) == [str(model.resolve())]
    assert changed_files(before, ["x", str(model), "-o", str(model)], 0) == [
        str(model.resolve())]                                             # also its input


def test_in_an_output_folder_only_the_files_pevpm_writes_may_change(tmp_path):
    folder = tmp_path / "report"
    folder.mkdir()
    page, notes = folder / "index.html", folder / "notes.txt"
    page.write_text("old")
    notes.write_text("mine")
    before = snapshot(tmp_path)
    page.write_text("new")
    assert changed_files(before, ["report", str(folder)], 0) == []
    assert changed_files(before, ["@interrupt=0.5", "demo", "-o", str(folder)], 0) == []
    assert changed_files(before, ["report", str(folder)], 130) == [str(page.resolve())]
    notes.write_text("overwritten")
    assert changed_files(before, ["report", str(folder)], 0) == [str(notes.resolve())]
