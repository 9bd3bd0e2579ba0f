"""Damaged and foreign OTF2 archives and bad options of the trace commands: each is
one exact ``pevpm: error:`` line (status 2), nothing on the file descriptor from
the OTF2 C library, and no output file where one was to be written."""

from __future__ import annotations

import math

import pytest
from fuzz_harness import run
from trace_archives import call, damage, ping_records, write_archive

MACHINE = ["--machine", "constant:latency=1us"]
PREDICT = "// PEVPM Serial time = 1e-6\n"


def _error(argv, capfd) -> str:
    outcome = run([str(a) for a in argv])
    assert outcome.kind == "error", outcome.describe()
    assert capfd.readouterr().err == ""       # no [OTF2] lines from the C library
    assert outcome.stderr.count("\n") == 1
    return outcome.stderr.strip()


def _with(records_change):
    ranks = ping_records()
    records_change(ranks)
    return ranks


def _peer(ranks, peer):
    ranks[0][4] = ("send", 3000, peer, 5, 800)


def _mismatched_leave(ranks):
    ranks[0][2:2] = [("enter", 1500, "compute", None, None), ("leave", 1600, "other")]


def _leave_first(ranks):
    ranks[0].insert(0, ("leave", 0, "MPI_Init"))


@pytest.mark.parametrize("ranks, message", [
    (_with(lambda r: _peer(r, 7)),
     "rank 0: a message names rank 7 of MPI_COMM_WORLD, which has 2 ranks"),
    (_with(_mismatched_leave), "rank 0: Leave of other inside compute"),
    (_with(_leave_first), "rank 0: Leave of MPI_Init without Enter"),
    (ping_records(cpu=-1.0),
     "rank 0: an Enter's pevpm::cpu attribute is -1.0, not a finite number of seconds >= 0"),
    (ping_records(cpu=math.nan),
     "rank 0: an Enter's pevpm::cpu attribute is nan, not a finite number of seconds >= 0"),
    (ping_records(sleep=math.inf),
     "rank 0: an Enter's pevpm::sleep attribute is inf, not a finite number of seconds >= 0"),
    (ping_records(sleep=-2e-3), ("rank 0: an Enter's pevpm::sleep attribute is -0.002, not a "
                                "finite number of seconds >= 0")),
])
@pytest.mark.parametrize("command", ["replay", "extract", "predict", "report"])
def test_a_foreign_archive_is_one_error(tmp_path, capfd, ranks, message, command):
    anchor = write_archive(tmp_path / "trace", ranks)
    model = tmp_path / "serial.c"
    model.write_text(PREDICT)
    output = tmp_path / "out.json"
    argv = {"replay": ["replay", anchor.parent, *MACHINE, "--perfetto", output],
            "extract": ["extract", anchor.parent, "-o", output],
            "predict": ["predict", model, "--recorded", anchor.parent, "--trace", output,
                        *MACHINE],
            "report": ["report", output, "--recorded", anchor.parent, *MACHINE]}[command]
    assert _error(argv, capfd) == f"pevpm: error: {anchor}: {message}"
    assert not output.exists()


@pytest.mark.parametrize("how, cause", [
    ("no-definitions", "INVALID_ARGUMENT (78): Parameter value out of range)"),
    ("no-events", "INVALID_ARGUMENT (78): Parameter value out of range)"),
    ("empty-anchor", "INVALID (1): Unknown error code)"),
    # The cause OTF2 gives for a cut or overwritten file changes with what the process
    # read before (seen: INVALID_DATA, a duplicate ClockProperties record).
    ("truncated-events", ""),
    ("truncated-definitions", ""),
    ("garbled-events", ""),
])
def test_a_damaged_archive_is_one_error_without_the_librarys_lines(tmp_path, capfd, how,
                                                                   cause):
    anchor = write_archive(tmp_path / "trace", ping_records())
    damage(anchor.parent, how)
    assert _error(["replay", anchor.parent, *MACHINE], capfd).startswith(
        f"pevpm: error: {anchor}: not a readable OTF2 archive ({cause}")


def test_an_exception_in_the_readers_callbacks_is_no_traceback(tmp_path, capfd):
    """After other damaged archives, reading one with its definitions cut short made the
    otf2 package print a traceback from inside its callback (a duplicate clock)."""
    messages = []
    for how in ("no-definitions", "no-events", "truncated-events", "truncated-definitions"):
        anchor = write_archive(tmp_path / how, ping_records())
        damage(anchor.parent, how)
        messages.append(_error(["replay", anchor.parent, *MACHINE], capfd))
    assert all("not a readable OTF2 archive (" in m for m in messages)
    assert not any("Traceback" in m for m in messages)


def test_one_rank_and_unknown_regions_replay(tmp_path):
    one = write_archive(tmp_path / "one", [call("MPI_Init", 0, 10) + call("MPI_Finalize", 20, 30)])
    assert run(["replay", str(one.parent), *MACHINE]).kind == "ok"
    ranks = ping_records()
    ranks[0][2:2] = call("MPI_Frobnicate", 1500, 1600) + call("compute", 1700, 1800)
    odd = write_archive(tmp_path / "odd", ranks)
    assert run(["replay", str(odd.parent), *MACHINE]).kind == "ok"


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "0"])
def test_replay_speed_must_be_finite_and_positive(tmp_path, capfd, value):
    anchor = write_archive(tmp_path / "trace", ping_records())
    assert _error(["replay", anchor.parent, *MACHINE, "--speed", value], capfd) == (
        f"pevpm: error: --speed: the speed ratio must be a finite number > 0, "
        f"got {float(value)}")


def test_report_into_an_uncreatable_folder_is_one_error(tmp_path, capfd):
    anchor = write_archive(tmp_path / "trace", ping_records())
    assert _error(["report", "/proc/pevpm-report", "--recorded", anchor.parent, *MACHINE],
                  capfd) == ("pevpm: error: /proc/pevpm-report: cannot create the folder: "
                             "No such file or directory")


def test_report_and_trace_refuse_an_empty_folder_name(tmp_path, capfd, monkeypatch):
    anchor = write_archive(tmp_path / "trace", ping_records())
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    assert _error(["report", "", "--recorded", anchor.parent, *MACHINE], capfd) == (
        "pevpm: error: report folder: no folder name given")
    assert _error(["trace", "-o", "", "--", "true"], capfd) == (
        "pevpm: error: argument -o/--output: no folder name given (see pevpm trace --help)")
    assert list(work.iterdir()) == []


@pytest.mark.parametrize("where, problem", [
    ("file/sub", "folder {tmp}/file is not a folder"),
    ("missing/sub", "folder {tmp}/missing does not exist"),
])
def test_trace_output_folder_is_checked_first(tmp_path, capfd, where, problem):
    (tmp_path / "file").write_text("keep me\n")
    assert _error(["trace", "-o", tmp_path / where, "--", "true"], capfd) == (
        f"pevpm: error: argument -o/--output: {problem.format(tmp=tmp_path)} "
        "(see pevpm trace --help)")
    assert (tmp_path / "file").read_text() == "keep me\n"


def test_extract_output_is_checked_first(tmp_path, capfd):
    anchor = write_archive(tmp_path / "trace", ping_records())
    assert _error(["extract", anchor.parent, "-o", tmp_path], capfd) == (
        "pevpm: error: argument -o/--output: is a folder; give a file name "
        "(see pevpm extract --help)")
