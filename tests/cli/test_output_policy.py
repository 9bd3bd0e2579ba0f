"""One output policy for every command that writes (issue 30, item 1): never
write over an input, never replace a file pevpm did not write without
``--force``, and never leave a half-written file in place of a whole one."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys

import pytest

from pevpm.cli import main
from pevpm.profile.store import default_profile_path

CONSTANT = "constant:latency=1e-4"
MODEL = "// PEVPM Serial time = 0.001\n"


def digest(path) -> str:
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def archive_digests(folder) -> dict:
    return {p: digest(p) for p in sorted(folder.rglob("*")) if p.is_file()}


def one_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return err.strip().splitlines()[-1]


@pytest.fixture
def profile(tmp_path):
    path = tmp_path / "machine.db"
    shutil.copy(default_profile_path(), path)
    return path


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "m.c"
    path.write_text(MODEL)
    return path


# --- an output that is an input ------------------------------------------------------

def test_export_csv_onto_its_own_profile_is_refused(profile, capsys):
    before = digest(profile)
    assert main(["profile", "export-csv", str(profile), "-o", str(profile)]) == 2
    assert "is an input of this command" in one_error(capsys)
    assert digest(profile) == before


def test_predict_trace_onto_the_model_is_refused(model, capsys):
    assert main(["predict", str(model), "-n", "1", "--runs", "1", "--machine", CONSTANT,
                 "--trace", str(model)]) == 2
    assert "--trace" in one_error(capsys)
    assert model.read_text() == MODEL


def test_predict_trace_onto_the_machine_profile_is_refused(model, profile, capsys):
    before = digest(profile)
    assert main(["predict", str(model), "-n", "1", "--runs", "1", "--machine", str(profile),
                 "--trace", str(profile), "--force"]) == 2
    assert "is an input of this command" in one_error(capsys)
    assert digest(profile) == before


def test_predict_trace_through_a_link_to_the_model_is_refused(model, tmp_path, capsys):
    link = tmp_path / "link.json"
    os.link(model, link)
    assert main(["predict", str(model), "-n", "1", "--runs", "1", "--machine", CONSTANT,
                 "--trace", str(link), "--force"]) == 2
    assert "is an input of this command" in one_error(capsys)
    assert model.read_text() == MODEL


def test_extract_into_its_trace_archive_is_refused(ping_archive, capsys):
    before = archive_digests(ping_archive)
    anchor = next(ping_archive.glob("*.otf2"))
    assert main(["extract", str(ping_archive), "-o", str(anchor)]) == 2
    assert "inside an input of this command" in one_error(capsys)
    assert archive_digests(ping_archive) == before


def test_replay_perfetto_into_its_trace_archive_is_refused(ping_archive, capsys):
    before = archive_digests(ping_archive)
    anchor = next(ping_archive.glob("*.otf2"))
    assert main(["replay", str(anchor), "--machine", CONSTANT, "--perfetto",
                 str(anchor), "--force"]) == 2
    assert "is an input of this command" in one_error(capsys)
    events = next(anchor.with_suffix("").rglob("*.evt"))
    assert main(["replay", str(anchor), "--machine", CONSTANT, "--perfetto",
                 str(events), "--force"]) == 2
    assert "inside an input of this command" in one_error(capsys)
    assert archive_digests(ping_archive) == before


def test_predict_recorded_trace_into_the_archive_is_refused(ping_archive, ping_model, capsys):
    before = archive_digests(ping_archive)
    out = ping_archive / "both.json"
    assert main(["predict", str(ping_model), "--recorded", str(ping_archive), "--trace",
                 str(out), "--machine", CONSTANT, "--runs", "1"]) == 2
    assert "inside an input of this command" in one_error(capsys)
    assert archive_digests(ping_archive) == before and not out.exists()


def test_calibrate_onto_its_program_is_refused(tmp_path, capsys):
    program = tmp_path / "prog.py"
    program.write_text("print('PEVPM-REGION step 0.001')\n")
    assert main(["calibrate", "-o", str(program), "--force", "--busy-retries", "0", "--",
                 sys.executable, str(program)]) == 2
    assert "is an input of this command" in one_error(capsys)
    assert program.read_text() == "print('PEVPM-REGION step 0.001')\n"


# --- an existing file pevpm did not write ---------------------------------------------

def test_calibrate_does_not_replace_a_file_of_another_kind(tmp_path, capsys):
    notes = tmp_path / "notes.json"
    notes.write_text('{"mine": 1}\n')
    assert main(["calibrate", "-o", str(notes), "--busy-retries", "0", "--",
                 sys.executable, "-c", "print('PEVPM-REGION step 0.001')"]) == 2
    assert "pass --force to replace it" in one_error(capsys)
    assert notes.read_text() == '{"mine": 1}\n'


@pytest.mark.parametrize("option", ["--trace", "--trace-force"])
def test_predict_trace_replaces_its_own_trace_and_others_only_with_force(model, tmp_path,
                                                                        capsys, option):
    out = tmp_path / "t.json"
    common = ["predict", str(model), "-n", "1", "--runs", "1", "--machine", CONSTANT,
              "--trace", str(out)]
    out.write_text("my notes\n")
    if option == "--trace":
        assert main(common) == 2
        assert "not a Perfetto trace pevpm wrote" in one_error(capsys)
        assert out.read_text() == "my notes\n"
    else:
        assert main([*common, "--force"]) == 0
        assert "traceEvents" in json.loads(out.read_text())
        assert main(common) == 0            # its own trace: replaced without --force


def test_export_csv_does_not_replace_another_file(profile, tmp_path, capsys):
    out = tmp_path / "table.csv"
    out.write_text("a,b\n1,2\n")
    assert main(["profile", "export-csv", str(profile), "-o", str(out)]) == 2
    assert "pass --force" in one_error(capsys)
    assert out.read_text() == "a,b\n1,2\n"
    assert main(["profile", "export-csv", str(profile), "-o", str(out), "--force"]) == 0
    assert out.read_text().startswith("test,variant,nxp,")
    assert main(["profile", "export-csv", str(profile), "-o", str(out)]) == 0


def test_a_fifo_is_never_an_output(profile, tmp_path, capsys):
    fifo = tmp_path / "out.csv"
    os.mkfifo(fifo)
    assert main(["profile", "export-csv", str(profile), "-o", str(fifo), "--force"]) == 2
    assert "not a regular file" in one_error(capsys)


# --- a failure leaves the old file whole ----------------------------------------------

def test_a_failed_export_leaves_the_old_csv_whole(profile, tmp_path, capsys, monkeypatch):
    out = tmp_path / "table.csv"
    assert main(["profile", "export-csv", str(profile), "-o", str(out)]) == 0
    before = out.read_text()
    from pevpm.bench import results
    from pevpm.errors import PevpmError

    def half(profile, stream, **kwargs):
        stream.write("test,variant,nxp,half")
        raise PevpmError("damaged profile")

    monkeypatch.setattr(results, "write_csv", half)
    assert main(["profile", "export-csv", str(profile), "-o", str(out)]) == 2
    assert out.read_text() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["machine.db", "table.csv"]
