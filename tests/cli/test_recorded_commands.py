"""pevpm predict --recorded and pevpm report --recorded: a recorded run beside a predicted one."""

import json
import shutil
from collections import Counter

import pytest

from pevpm.cli import main
from pevpm.profile.builtin import resolve_profile
from pevpm.report.side_by_side import PREDICTED_PID, RECORDED_PID
from pevpm.trace.otf2.read import read_archive

#: Receives from the next rank on every rank: deadlocks at any count but 1.
DEADLOCK_MODEL = '''from pevpm.model.builder import ModelBuilder


def model():
    b = ModelBuilder()
    b.recv(8, source="(procnum + 1) % numprocs")
    return b
'''

CONSTANT = "constant:latency=1e-4"


def events(path, pid):
    return [e for e in json.loads(path.read_text())["traceEvents"]
            if e["ph"] == "X" and e["pid"] == pid]


def error_line(capsys) -> str:
    """The last line on stderr (the OTF2 library may print its own lines before it)."""
    return capsys.readouterr().err.strip().splitlines()[-1]


# --- pevpm predict --recorded ----------------------------------------------------------

def test_predict_writes_the_model_beside_the_recording(tmp_path, ping_archive, ping_model,
                                                       capsys):
    out = tmp_path / "both.json"
    assert main(["predict", str(ping_model), "--recorded", str(ping_archive), "--trace",
                 str(out), "--machine", CONSTANT, "--runs", "2", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [p["numprocs"] for p in printed["predictions"]] == [2]   # the trace's count
    assert printed["predictions"][0]["mean"] == pytest.approx(2.2e-3)
    recorded = Counter(e["name"] for e in events(out, RECORDED_PID))
    assert recorded == {"computation": 6, "MPI_Barrier": 2, "MPI_Send": 1, "MPI_Recv": 1}
    predicted = {(e["tid"], e["name"], round(e["ts"]), round(e["dur"]))
                 for e in events(out, PREDICTED_PID)}
    assert predicted == {(0, "Serial", 0, 2000), (0, "MPI_Send", 2000, 100),
                         (1, "MPI_Recv", 0, 2000), (1, "MPI_Recv", 2000, 100),
                         (0, "MPI_Barrier", 2100, 100), (1, "MPI_Barrier", 2100, 100)}


def test_predict_accepts_the_traced_count_only(tmp_path, ping_archive, ping_model, capsys):
    out = str(tmp_path / "both.json")
    common = ["predict", str(ping_model), "--recorded", str(ping_archive), "--trace", out,
              "--machine", CONSTANT, "--runs", "2"]
    assert main([*common, "-n", "2"]) == 0
    capsys.readouterr()
    assert main([*common, "-n", "4"]) == 2
    assert error_line(capsys) == "pevpm: error: -n: the recorded trace has 2 ranks, not 4"
    assert main([*common, "-n", "2,4"]) == 2
    assert error_line(capsys) == "pevpm: error: -n: the recorded trace has 2 ranks, not 2, 4"


def test_predict_recorded_needs_trace(ping_archive, ping_model, capsys):
    assert main(["predict", str(ping_model), "--recorded", str(ping_archive)]) == 2
    assert error_line(capsys) == ("pevpm: error: --recorded needs --trace FILE (the "
                                  "side-by-side Perfetto file)")


def test_a_model_that_does_not_run_at_the_traced_count_is_one_error(tmp_path, ping_archive,
                                                                    capsys):
    model = tmp_path / "dead.py"
    model.write_text(DEADLOCK_MODEL)
    assert main(["predict", str(model), "--recorded", str(ping_archive), "--trace",
                 str(tmp_path / "x.json"), "--machine", CONSTANT]) == 2
    line = error_line(capsys)
    assert line.startswith(f"pevpm: error: {model}: the model does not run at the recorded "
                           "trace's 2 ranks: deadlock: rank 0 blocked in MPI_Recv from 1")
    assert not (tmp_path / "x.json").exists()


def broken_traces(tmp_path, ping_archive):
    """(trace path, expected end of the error line) for each way a trace can be bad.  The
    cause OTF2 gives for the cut definitions changes with what the process read before
    (seen: INVALID_DATA, or a duplicate ClockProperties record): only the start of the
    line is expected."""
    empty = tmp_path / "empty"
    empty.mkdir()
    corrupt = tmp_path / "corrupt"
    shutil.copytree(ping_archive, corrupt)
    with open(corrupt / "traces.def", "r+b") as f:
        f.truncate(50)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "traces.otf2").write_text('{"traceEvents": []}')
    return [(tmp_path / "missing", "missing: no such trace"),
            (empty, "empty: no OTF2 archive (*.otf2) in this directory"),
            (corrupt, "corrupt/traces.otf2: not a readable OTF2 archive ("),
            (foreign, "foreign/traces.otf2: not an OTF2 anchor file")]


def test_predict_bad_traces_are_one_line_errors(tmp_path, ping_archive, ping_model, capsys):
    for trace, message in broken_traces(tmp_path, ping_archive):
        assert main(["predict", str(ping_model), "--recorded", str(trace), "--trace",
                     str(tmp_path / "x.json"), "--machine", CONSTANT]) == 2
        line = error_line(capsys)
        assert line.startswith("pevpm: error: ") and message in line, line


# --- pevpm report --recorded -----------------------------------------------------------

def test_report_of_a_replayed_trace_into_a_new_folder(tmp_path, ping_archive, capsys):
    report = tmp_path / "report"
    assert main(["report", str(report), "--recorded", str(ping_archive)]) == 0
    assert capsys.readouterr().out.strip() == f"report: {report}/index.html"
    results = json.loads((report / "results.json").read_text())
    section = results["recorded"]
    assert section["machine"] == "default" and section["predicted_by"].startswith(
        "the replay of the trace")
    assert section["numprocs"] == 2 and len(section["ranks"]) == 2
    assert section["perfetto"] == "recorded-vs-predicted.json"
    pids = {e["pid"] for e in json.loads((report / section["perfetto"]).read_text())[
        "traceEvents"]}
    assert pids == {RECORDED_PID, PREDICTED_PID}
    page = (report / "index.html").read_text(encoding="utf-8")
    assert "Recorded vs predicted" in page and "replay of the trace" in page


def test_report_predicts_what_replay_predicts(tmp_path, ping_archive, capsys):
    assert main(["replay", str(ping_archive), "--machine", CONSTANT, "--json"]) == 0
    replayed = json.loads(capsys.readouterr().out)
    report = tmp_path / "report"
    assert main(["report", str(report), "--recorded", str(ping_archive), "--machine",
                 CONSTANT]) == 0
    section = json.loads((report / "results.json").read_text())["recorded"]
    assert section["predicted_seconds"] == replayed["mean"]
    assert section["recorded_seconds"] == replayed["traced"]


def test_report_adds_the_section_to_the_demos_report_and_keeps_it(tmp_path, ping_archive,
                                                                  ping_model):
    from pevpm.report.html import write_report

    report = tmp_path / "report"
    demo = {"title": "demo", "scaling": {"jacobi": [{"n": 4, "mean": 0.6, "sd": 0.01}]}}
    write_report(demo, str(report))
    shutil.copyfile(resolve_profile("default"), report / "machine.db")
    assert main(["report", str(report), "--recorded", str(ping_archive), "--model",
                 str(ping_model), "-D", "unused=1"]) == 0
    results = json.loads((report / "results.json").read_text())
    assert results["scaling"] == demo["scaling"]
    assert results["recorded"]["machine"] == str(report / "machine.db")   # the demo's
    assert results["recorded"]["predicted_by"] == f"the model {ping_model} (unused=1)"
    (report / "index.html").unlink()
    assert main(["report", str(report)]) == 0          # rebuilt from results.json: kept
    page = (report / "index.html").read_text(encoding="utf-8")
    assert "Recorded vs predicted" in page and "predicted beyond what this machine runs" in page


def test_report_compares_a_demo_example_with_the_calibrated_parameters(tmp_path,
                                                                       ping_archive):
    report = tmp_path / "report"
    report.mkdir()
    (report / "calibration.json").write_text(json.dumps(
        {"jacobi": {"program_iteration": {"median": 1e-4}}}))
    assert main(["report", str(report), "--recorded", str(ping_archive), "--model", "jacobi",
                 "--machine", CONSTANT, "-D", "iterations=3"]) == 0
    section = json.loads((report / "results.json").read_text())["recorded"]
    assert section["predicted_by"] == ("the model examples/jacobi/model.py (N=256, "
                                       "iterations=3, t_fixed=0, t_iter=0.0001, t_sd=0)")


def test_report_section_of_a_trace_part(tmp_path, ping_archive):
    report = tmp_path / "report"
    assert main(["report", str(report), "--recorded", str(ping_archive), "--section",
                 "MPI_Barrier:MPI_Finalize", "--machine", CONSTANT]) == 0
    section = json.loads((report / "results.json").read_text())["recorded"]
    assert section["trace"] == f"{ping_archive} (from MPI_Barrier to MPI_Finalize)"
    assert section["recorded_seconds"] == pytest.approx(0.8e-3)   # 4.2 ms .. 5.0 ms


def test_report_without_recorded_refuses_its_options(tmp_path, capsys):
    assert main(["report", str(tmp_path), "--model", "jacobi", "--machine", "default"]) == 2
    assert error_line(capsys) == "pevpm: error: only with --recorded TRACE: --machine, --model"


def test_report_bad_traces_and_models_are_one_line_errors(tmp_path, ping_archive, capsys):
    report = tmp_path / "report"
    for trace, message in broken_traces(tmp_path, ping_archive):
        assert main(["report", str(report), "--recorded", str(trace)]) == 2
        line = error_line(capsys)
        assert line.startswith("pevpm: error: ") and message in line, line
    dead = tmp_path / "dead.py"
    dead.write_text(DEADLOCK_MODEL)
    assert main(["report", str(report), "--recorded", str(ping_archive), "--model",
                 str(dead)]) == 2
    assert "the model does not run at the recorded trace's 2 ranks: deadlock" in error_line(
        capsys)
    assert main(["report", str(report), "--recorded", str(ping_archive), "--model",
                 "nosuch"]) == 2
    assert error_line(capsys) == ("pevpm: error: nosuch: no such model file (nor one of the "
                                  "demo's examples: jacobi, fft2d, bag_of_tasks)")
    assert not report.exists()


# --- a real run: pevpm trace of an mpi4py program on 2 ranks -------------------------------

@pytest.mark.mpi
def test_report_of_a_real_trace_shows_every_call_side_by_side(tmp_path, ring_trace):
    # 50 ms of latency: longer than any traced gap between a rank's Isend and its
    # neighbour's Waitall, so the predicted Waitall always waits (a call that takes
    # no simulated time draws no slice; at 50 us a loaded trace's gap made it flaky)
    report = tmp_path / "report"
    assert main(["report", str(report), "--recorded", str(ring_trace), "--machine",
                 "hockney:latency=50ms,bandwidth=100MB/s"]) == 0
    trace = read_archive(ring_trace)
    both = report / "recorded-vs-predicted.json"
    recorded = [e for e in events(both, RECORDED_PID) if e["name"] != "computation"]
    expected = [(rank, c.name, (c.end - c.start) * 1e6) for rank, calls in enumerate(trace.ranks)
                for c in calls if not c.is_init and c.name != "MPI_Finalize"]
    shown = sorted((e["tid"], e["name"], e["dur"]) for e in recorded)
    assert [s[:2] for s in shown] == [e[:2] for e in sorted(expected)]
    assert [s[2] for s in shown] == pytest.approx([e[2] for e in sorted(expected)])
    assert {name for _, name, _ in expected} >= {"MPI_Send", "MPI_Recv", "MPI_Waitall",
                                                 "MPI_Alltoall", "MPI_Bcast", "MPI_Barrier"}
    predicted = {e["name"] for e in events(both, PREDICTED_PID)}
    assert predicted >= {"MPI_Send", "MPI_Recv", "MPI_Waitall", "MPI_Alltoall", "MPI_Bcast"}
    section = json.loads((report / "results.json").read_text())["recorded"]
    assert section["recorded_seconds"] == pytest.approx(trace.elapsed)
    for row in section["ranks"]:
        assert row["recorded_mpi"] + row["recorded_compute"] == pytest.approx(
            trace.finish(row["rank"]) - trace.begin(row["rank"]))


@pytest.mark.mpi
def test_predict_a_model_beside_a_real_trace(tmp_path, ring_trace, capsys):
    model = tmp_path / "ring_model.py"
    model.write_text('''from pevpm.model.builder import ModelBuilder


def model():
    b = ModelBuilder()
    b.sendrecv(800, dest="(procnum + 1) % numprocs", source="(procnum + numprocs - 1) % numprocs")
    b.collective("MPI_Alltoall", 32)
    b.collective("MPI_Bcast", 200, root=0)
    return b
''')
    out = tmp_path / "both.json"
    assert main(["predict", str(model), "--recorded", str(ring_trace), "--trace", str(out),
                 "--machine", CONSTANT, "--runs", "2"]) == 0
    assert "side by side" in capsys.readouterr().err
    doc = json.loads(out.read_text())
    assert {e["tid"] for e in doc["traceEvents"] if e["ph"] == "X"} == {0, 1}
    predicted = Counter(e["name"] for e in events(out, PREDICTED_PID))
    assert predicted["MPI_Sendrecv"] == 2 and predicted["MPI_Alltoall"] >= 2
    assert predicted["MPI_Bcast"] >= 2
    assert Counter(e["name"] for e in events(out, RECORDED_PID))["MPI_Alltoall"] == 2
