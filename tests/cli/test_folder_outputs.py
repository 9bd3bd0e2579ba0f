"""The output policy for folders (issue 30): ``pevpm demo -o DIR``, ``pevpm report
DIR``, ``pevpm trace -o DIR``, ``pevpm fit --plots DIR`` and ``pevpm profile plot -o
DIR`` never write a folder that is, lies inside or holds one of their inputs; never
write into a folder of other files without ``--force`` (and then replace only the
files they write, removing none); and write into a new folder beside it, so that
an interrupted or failed command leaves the old folder exactly as it was."""

from __future__ import annotations

import json
import shutil

import pytest

from pevpm.cli import main
from pevpm.errors import PevpmError
from pevpm.profile.builtin import resolve_profile

#: What says "a folder pevpm wrote" (pevpm.files.FOLDER_MARK).
FOLDER_MARK = ".pevpm-folder"
RESULTS = {"title": "demo", "scaling": {"jacobi": [{"n": 4, "mean": 0.6, "sd": 0.01}]}}


def tree(folder) -> dict:
    """Every file under ``folder``, by its relative path, with its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def leftovers(folder) -> list[str]:
    """Temporary folders :func:`pevpm.files.replacing_folder` left beside ``folder``."""
    return [p.name for p in folder.parent.iterdir() if p.name.startswith(f".{folder.name}.")]


def one_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    return err.strip().splitlines()[-1]


@pytest.fixture
def report(tmp_path):
    """A report folder as ``pevpm demo`` leaves it."""
    from pevpm.report.html import write_report

    folder = tmp_path / "report"
    write_report(RESULTS, str(folder))
    shutil.copyfile(resolve_profile("default"), folder / "machine.db")
    return folder


@pytest.fixture
def foreign(tmp_path):
    """A folder of the user's own files, one named like a file pevpm writes."""
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("my notes")
    (folder / "machine.db").write_bytes(resolve_profile("default").read_bytes())
    return folder


# --- pevpm demo -o DIR ----------------------------------------------------------------

def fake_demo(outdir, *, then=None, **kwargs):
    """What pevpm demo does first (a new machine.db, from scratch), then ``then``."""
    from pathlib import Path

    out = Path(outdir)
    (out / "machine.db").unlink(missing_ok=True)
    (out / "index.html").write_text("half a report")
    if then:
        raise then
    (out / "results.json").write_text(json.dumps(RESULTS))


def test_demo_does_not_write_into_a_folder_of_other_files(foreign, monkeypatch, capsys):
    from pevpm.cli import demo_pipeline

    monkeypatch.setattr(demo_pipeline, "run_demo", fake_demo)
    before = tree(foreign)
    assert main(["demo", "-o", str(foreign), "--profile", "default"]) == 2
    assert "is a folder of other files, not a report folder pevpm wrote; pass --force" \
        in one_error(capsys)
    assert tree(foreign) == before


def test_demo_with_force_replaces_its_files_and_keeps_the_others(foreign, monkeypatch):
    from pevpm.cli import demo_pipeline

    monkeypatch.setattr(demo_pipeline, "run_demo", fake_demo)
    assert main(["demo", "-o", str(foreign), "--profile", "default", "--force"]) == 0
    assert (foreign / "notes.txt").read_text() == "my notes"
    assert (foreign / "index.html").read_text() == "half a report"
    assert (foreign / FOLDER_MARK).read_text() == "report folder\n"
    assert leftovers(foreign) == []


def test_demo_refuses_the_folder_of_its_own_profile(report, capsys):
    before = tree(report)
    assert main(["demo", "-o", str(report), "--profile", str(report / "machine.db")]) == 2
    assert f"holds an input of this command ({report / 'machine.db'})" in one_error(capsys)
    assert tree(report) == before


@pytest.mark.parametrize("failure", [KeyboardInterrupt(), PevpmError("MPIBench failed")])
def test_an_interrupted_or_failed_demo_leaves_the_old_report_whole(report, monkeypatch,
                                                                   failure, capsys):
    from pevpm.cli import demo_pipeline

    monkeypatch.setattr(demo_pipeline, "run_demo", lambda outdir, **kw: fake_demo(outdir, then=failure))
    before = tree(report)
    assert main(["demo", "-o", str(report), "--profile", "default"]) in (2, 130)
    assert tree(report) == before
    assert leftovers(report) == []


# --- pevpm report DIR -----------------------------------------------------------------

def test_an_interrupted_redraw_leaves_the_old_report_whole(report, monkeypatch, capsys):
    from pevpm.report import html

    def half(results, outdir, tolerance=10.0):
        with open(f"{outdir}/index.html", "w") as page:
            page.write("<html>half")
        raise KeyboardInterrupt

    monkeypatch.setattr(html, "write_report", half)
    before = tree(report)
    assert main(["report", str(report)]) == 130
    assert tree(report) == before
    assert leftovers(report) == []


def test_a_redraw_keeps_the_figures_and_files_it_does_not_draw(report, capsys):
    (report / "isend.fits.png").write_bytes(b"\x89PNG fit")
    results = {**RESULTS, "figures": [{"title": "fit", "file": "isend.fits.png"}]}
    (report / "results.json").write_text(json.dumps(results))
    (report / "index.html").unlink()
    assert main(["report", str(report)]) == 0
    assert capsys.readouterr().out == f"report: {report}/index.html\n"
    assert (report / "isend.fits.png").read_bytes() == b"\x89PNG fit"
    assert "isend.fits.png" in (report / "index.html").read_text()
    assert (report / "machine.db").read_bytes() == resolve_profile("default").read_bytes()
    assert leftovers(report) == []


def test_report_recorded_refuses_a_folder_holding_its_model(report, ping_archive, ping_model,
                                                            capsys):
    model = report / "model.py"
    shutil.copyfile(ping_model, model)
    before = tree(report)
    assert main(["report", str(report), "--recorded", str(ping_archive), "--model",
                 str(model)]) == 2
    assert f"report folder {report}: holds an input of this command ({model})" \
        in one_error(capsys)
    assert tree(report) == before


def test_report_recorded_refuses_a_folder_inside_its_trace(ping_archive, capsys):
    inside = ping_archive / "report"
    assert main(["report", str(inside), "--recorded", str(ping_archive)]) == 2
    assert f"is inside an input of this command ({ping_archive})" in one_error(capsys)
    assert not inside.exists()


def test_report_recorded_into_a_folder_of_other_files_needs_force(foreign, ping_archive,
                                                                  capsys):
    before = tree(foreign)
    assert main(["report", str(foreign), "--recorded", str(ping_archive)]) == 2
    assert "not a report folder pevpm wrote; pass --force" in one_error(capsys)
    assert tree(foreign) == before
    assert main(["report", str(foreign), "--recorded", str(ping_archive), "--force"]) == 0
    assert (foreign / "notes.txt").read_text() == "my notes"
    assert (foreign / "machine.db").read_bytes() == before["machine.db"]
    assert (foreign / "recorded-vs-predicted.json").is_file()


def test_report_recorded_reads_the_reports_own_profile(report, ping_archive, capsys):
    assert main(["report", str(report), "--recorded", str(ping_archive), "--machine",
                 str(report / "machine.db")]) == 0
    section = json.loads((report / "results.json").read_text())["recorded"]
    assert section["machine"] == str(report / "machine.db")


# --- pevpm trace -o DIR ---------------------------------------------------------------

def test_trace_refuses_a_folder_holding_its_program(tmp_path, capsys):
    program = tmp_path / "prog.py"
    program.write_text("print('hello')\n")
    assert main(["trace", "-o", str(tmp_path), "--", "mpiexec", "-n", "1", "python",
                 str(program)]) == 2
    assert f"-o {tmp_path}: holds an input of this command ({program})" in one_error(capsys)


def test_trace_does_not_write_into_a_folder_of_other_files(foreign, capsys):
    before = tree(foreign)
    assert main(["trace", "-o", str(foreign), "--", "mpiexec", "-n", "1", "true"]) == 2
    assert "not a trace folder pevpm wrote; pass --force" in one_error(capsys)
    assert tree(foreign) == before


def fake_record(failure):
    def record(command, directory, keep_raw=False):
        raw = directory / "raw"
        raw.mkdir()
        (raw / "rank-0.txt").write_text("half")
        raise failure(f"the traced command exited with status 1; raw records are in {raw}",
                      "pevpm trace") if failure is PevpmError else failure
    return record


def test_an_interrupted_trace_leaves_no_folder_behind(tmp_path, monkeypatch, capsys):
    from pevpm.trace.record import record

    monkeypatch.setattr(record, "record", fake_record(KeyboardInterrupt()))
    out = tmp_path / "run"
    assert main(["trace", "-o", str(out), "--", "mpiexec", "-n", "1", "true"]) == 130
    assert not out.exists() and leftovers(out) == []


def test_a_failed_trace_keeps_its_raw_records_where_it_says(tmp_path, monkeypatch, capsys):
    from pevpm.trace.record import record

    monkeypatch.setattr(record, "record", fake_record(PevpmError))
    out = tmp_path / "run"
    assert main(["trace", "-o", str(out), "--", "mpiexec", "-n", "1", "true"]) == 2
    assert one_error(capsys).endswith(f"raw records are in {out}/raw")
    assert (out / "raw" / "rank-0.txt").read_text() == "half"
    assert leftovers(out) == []


# --- pevpm fit --plots DIR, pevpm profile plot -o DIR --------------------------------

@pytest.fixture
def profile(tmp_path):
    path = tmp_path / "machine.db"
    shutil.copyfile(resolve_profile("default"), path)
    return path


@pytest.mark.parametrize("command", [["fit", "{profile}", "--no-progress", "--plots"],
                                     ["profile", "plot", "{profile}", "-o"]])
def test_plots_refuse_the_folder_of_their_profile(profile, command, capsys):
    before = tree(profile.parent)
    argv = [word.replace("{profile}", str(profile)) for word in command]
    assert main([*argv, str(profile.parent)]) == 2
    assert f"holds an input of this command ({profile})" in one_error(capsys)
    assert tree(profile.parent) == before


@pytest.mark.parametrize("command", [["fit", "{profile}", "--no-progress", "--plots"],
                                     ["profile", "plot", "{profile}", "-o"]])
def test_plots_do_not_write_into_a_folder_of_other_files(foreign, command, capsys):
    before = tree(foreign)
    argv = [word.replace("{profile}", str(resolve_profile("default"))) for word in command]
    assert main([*argv, str(foreign)]) == 2
    assert "not a plot folder pevpm wrote; pass --force" in one_error(capsys)
    assert tree(foreign) == before


def test_interrupted_plots_leave_the_old_plots_whole(profile, tmp_path, monkeypatch, capsys):
    from pevpm.report import bench_plots

    plots = tmp_path / "plots"
    plots.mkdir()
    (plots / "old.png").write_bytes(b"\x89PNG old")

    def half(profile, directory, test=None):
        (directory / "old.png").write_bytes(b"\x89PNG half")
        raise KeyboardInterrupt

    monkeypatch.setattr(bench_plots, "plot_profile", half)
    assert main(["profile", "plot", str(profile), "-o", str(plots)]) == 130
    assert tree(plots) == {"old.png": b"\x89PNG old"}
    assert leftovers(plots) == []


def test_fit_plots_into_a_plot_folder_and_says_where(profile, tmp_path, monkeypatch, capsys):
    from pevpm.report import fit_plots

    def one_page(blocks, directory):
        (directory / "isend.fits.png").write_bytes(b"\x89PNG")
        return [directory / "isend.fits.png"]

    monkeypatch.setattr(fit_plots, "plot_block_fits", one_page)
    monkeypatch.setattr(fit_plots, "plot_trends", lambda groups, directory: [])
    plots = tmp_path / "plots"
    assert main(["fit", str(profile), "--tests", "barrier", "--no-progress", "--no-store",
                 "--plots", str(plots)]) == 0
    assert f"wrote 1 plots to {plots}" in capsys.readouterr().out
    assert sorted(tree(plots)) == [FOLDER_MARK, "isend.fits.png"]
