"""The fuzzing harness tells clean outcomes from failures."""

from __future__ import annotations

import time

import pytest
from fuzz_harness import LIMIT_SECONDS, WallAlarm, _kind, changed_files, run, snapshot


def test_a_command_past_its_time_is_a_hang(tmp_path):
    def predict(iterations: str, limit: float = 1.0):
        model = tmp_path / f"loop-{iterations}.c"
        model.write_text(f"// PEVPM Loop iterations = {iterations}\n// PEVPM {{\n"
                         "// PEVPM Serial time = 1e-9\n// PEVPM }\n")
        return run(["predict", str(model), "-n", "1", "--runs", "1", "--workers", "1",
                    "--max-events", "0", "--no-bounds", "--exact"], limit=limit)

    # Ready first: the command's modules loaded by a run that ends (importing
    # them may take more than the timed run's second of CPU time), so the timed
    # run's Ctrl-C cannot land in an import however slow a busy machine is.
    ready = predict("2", limit=LIMIT_SECONDS)
    assert ready.kind == "ok", ready.describe()
    outcome = predict("1e12")
    assert outcome.kind == "hang" and outcome.failed and outcome.status == 130, \
        outcome.describe()


def test_the_wall_alarm_sends_ctrl_c_again_until_the_command_stops():
    caught = 0
    with WallAlarm(0.05) as alarm:
        deadline = time.monotonic() + 60
        while caught < 2 and time.monotonic() < deadline:
            try:
                time.sleep(0.01)
            except KeyboardInterrupt:     # the first one lost, as in a finalizer
                caught += 1
    assert caught == 2 and alarm.fired.is_set()
    with pytest.raises(KeyboardInterrupt), WallAlarm(0.05):
        time.sleep(60)


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
