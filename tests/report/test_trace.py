"""Chrome/Perfetto trace export of a hand-made traced run."""

import json

import pytest

from pevpm.errors import PevpmError
from pevpm.report.trace import trace_document, write_trace
from pevpm.vm.kernel.result import MessageRecord, RankTimes, RunResult, Slice

# Rank 0 computes 1 ms then sends 1 ms; rank 1 waits 1 ms then receives 1 ms;
# rank 2 only computes.  One message 0 -> 1.
RUN = RunResult(
    2e-3,
    [RankTimes(1e-3, 1e-3, 0, 2e-3), RankTimes(0, 1e-3, 1e-3, 2e-3),
     RankTimes(5e-4, 0, 0, 5e-4)],
    {"compute": 1e-3, "communication": 1e-3, "waiting": 0.0},
    slices=[Slice(0, "compute", 0, 1e-3, "Serial", "m.py:2:1"),
            Slice(0, "communication", 1e-3, 2e-3, "MPI_Send", "m.py:3:1"),
            Slice(1, "waiting", 0, 1e-3, "MPI_Recv", "m.py:5:1"),
            Slice(1, "communication", 1e-3, 2e-3, "MPI_Recv", "m.py:5:1"),
            Slice(2, "compute", 0, 5e-4, "Serial")],
    messages=[MessageRecord(0, 1, 7, 1024, 1e-3, 2e-3)],
)


def events_of(doc, ph):
    return [e for e in doc["traceEvents"] if e["ph"] == ph]


def test_document_is_valid_json_with_one_named_track_per_rank(tmp_path):
    path = write_trace(RUN, tmp_path / "run.json", title="jacobi")
    doc = json.loads(path.read_text())
    assert doc["displayTimeUnit"] == "ms"
    names = {e["tid"]: e["args"]["name"] for e in events_of(doc, "M")
             if e["name"] == "thread_name"}
    assert names == {0: "rank 0", 1: "rank 1", 2: "rank 2"}
    (process,) = [e for e in events_of(doc, "M") if e["name"] == "process_name"]
    assert process["args"]["name"] == "jacobi"
    for e in doc["traceEvents"]:
        assert {"ph", "pid", "name"} <= set(e)


def test_slices_are_complete_events_in_microseconds():
    slices = events_of(trace_document(RUN), "X")
    assert len(slices) == 5
    send = next(e for e in slices if e["name"] == "MPI_Send")
    assert (send["tid"], send["cat"]) == (0, "communication")
    assert send["ts"] == pytest.approx(1000.0) and send["dur"] == pytest.approx(1000.0)
    assert send["args"] == {"kind": "communication", "where": "m.py:3:1"}
    assert {e["cat"] for e in slices} == {"compute", "communication", "waiting"}
    assert send["cname"] == "thread_state_iowait"


def test_message_is_a_flow_bound_to_send_and_receive_slices():
    doc = trace_document(RUN)
    (start,) = events_of(doc, "s")
    (end,) = events_of(doc, "f")
    assert start["id"] == end["id"]
    assert (start["tid"], end["tid"]) == (0, 1)
    # bound to the slices holding the send start and the receive completion:
    # same track, same category, timestamp at the slice's start
    assert (start["cat"], start["ts"]) == ("communication", pytest.approx(1000.0))
    assert (end["cat"], end["ts"], end["bp"]) == ("communication", pytest.approx(1000.0), "e")
    assert end["args"] == {"src": 0, "dst": 1, "tag": 7, "size": 1024}


def test_flow_without_a_matching_slice_keeps_raw_times():
    run = RunResult(1.0, RUN.ranks, {}, slices=[],
                    messages=[MessageRecord(2, 0, 0, 8, 0.25, 0.5)])
    doc = trace_document(run)
    (start,) = events_of(doc, "s")
    (end,) = events_of(doc, "f")
    assert (start["ts"], end["ts"]) == (250000.0, 500000.0)


def test_untraced_run_is_refused():
    run = RunResult(1.0, RUN.ranks, {})
    with pytest.raises(PevpmError, match="not traced"):
        trace_document(run)


def test_unwritable_path_is_a_user_error(tmp_path):
    with pytest.raises(PevpmError, match="cannot write trace"):
        write_trace(RUN, tmp_path / "missing" / "run.json")
