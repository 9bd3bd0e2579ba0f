"""pevpm replay --perfetto: the recorded run and a predicted one in one Chrome trace."""

import json

import pytest

from pevpm.cli import main
from pevpm.machine.comm_models import Constant
from pevpm.machine.machine import Machine
from pevpm.report.side_by_side import (
    PREDICTED_PID,
    RECORDED_PID,
    recorded_slices,
    side_by_side_document,
)
from pevpm.trace.events import Call, Recv, Send, Trace
from pevpm.trace.replay.fast import table_of
from pevpm.trace.replay.replay import trace_model
from pevpm.vm.kernel import engine


def ping() -> Trace:
    """Rank 0 computes 1 ms and sends 8 bytes; rank 1 receives them."""
    zero = (Call("MPI_Init", 0.0, 0.01), Call("MPI_Send", 0.011, 0.0112, (Send(1, 0, 8),)),
            Call("MPI_Finalize", 0.012, 0.013))
    one = (Call("MPI_Init", 0.0, 0.01), Call("MPI_Recv", 0.0101, 0.0113, (Recv(0, 0, 8),)),
           Call("MPI_Finalize", 0.0115, 0.013))
    return Trace((zero, one))


def test_recorded_calls_and_gaps_become_slices_from_zero():
    kinds = [(s.rank, s.kind, s.label) for s in recorded_slices(ping())]
    assert kinds == [(0, "compute", "computation"), (0, "communication", "MPI_Send"),
                     (0, "compute", "computation"), (1, "compute", "computation"),
                     (1, "communication", "MPI_Recv"), (1, "compute", "computation")]
    send = recorded_slices(ping())[1]
    assert (send.start, send.end) == pytest.approx((0.001, 0.0012))


def test_both_runs_are_process_groups_of_one_document():
    trace = ping()
    run = engine.simulate(trace_model(trace), 2, Machine(Constant(1e-4)), trace=True)
    doc = side_by_side_document(trace, run, "ping")
    names = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"]
             if e["name"] == "process_name"}
    assert names == {RECORDED_PID: "recorded: ping", PREDICTED_PID: "predicted: ping"}
    recorded = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["pid"] == RECORDED_PID]
    predicted = [e for e in doc["traceEvents"] if e["ph"] == "X" and e["pid"] == PREDICTED_PID]
    assert len(recorded) == 6 and predicted
    assert {e["name"] for e in predicted} >= {"MPI_Send", "MPI_Recv"}
    assert doc["otherData"]["recorded_seconds"] == pytest.approx(0.002)


def test_replay_writes_the_side_by_side_file(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr("pevpm.trace.otf2.read.read_archive", lambda path: ping())
    monkeypatch.setattr("pevpm.trace.otf2.read.read_table", lambda path: table_of(ping()))
    archive = tmp_path / "archive"
    archive.mkdir()
    out = tmp_path / "both.json"        # beside the archive: never inside an input
    assert main(["replay", str(archive), "--machine", "constant:latency=1e-4", "--runs", "2",
                 "--perfetto", str(out)]) == 0
    assert "side by side" in capsys.readouterr().err
    pids = {e["pid"] for e in json.loads(out.read_text())["traceEvents"]}
    assert pids == {RECORDED_PID, PREDICTED_PID}
