"""Replay: a trace becomes per-rank statements; simulated on a constant machine."""

import pytest

from pevpm.errors import PevpmError
from pevpm.machine.presets import parse_machine
from pevpm.model.ast import Message, Serial
from pevpm.trace.events import (
    COLLECTIVE_SIZES,
    Call,
    Collective,
    Posted,
    Recv,
    Send,
    SendDone,
    Trace,
    per_peer_size,
    totals,
)
from pevpm.trace.replay.replay import rank_statements, replay, trace_model


def shape(statements):
    """(kind, value) per statement: Serial seconds or the Message's op and fields."""
    out = []
    for s in statements:
        if isinstance(s, Serial):
            out.append(("Serial", round(s.time.evaluate({}), 9)))
        else:
            assert isinstance(s, Message)
            names = {"size": "size", "src": "source", "dst": "dest", "tag": "tag", "root": "root"}
            fields = {name: getattr(s, k).evaluate({"procnum": -1}) for k, name in names.items()
                      if getattr(s, k) is not None}
            out.append((s.op, fields, s.request, tuple(s.requests)))
    return out


def two_ranks():
    """Rank 0 computes 2 s, sends, joins an Allreduce; rank 1 receives it (later Init)."""
    allreduce = Collective("ALLREDUCE", (0, 1), None, 8, 8)
    return Trace((
        (Call("MPI_Init", 0, 1), Call("MPI_Send", 3, 4, (Send(1, 0, 8),)),
         Call("MPI_Allreduce", 4, 4.5, (allreduce,)), Call("MPI_Finalize", 6, 7)),
        (Call("MPI_Init", 0, 1.5), Call("MPI_Recv", 2, 4.5, (Recv(0, 0, 8),)),
         Call("MPI_Allreduce", 4.6, 4.7, (allreduce,)), Call("MPI_Finalize", 5, 7)),
    ))


def test_gaps_become_serial_statements_scaled_by_speed():
    t = two_ranks()
    assert shape(rank_statements(t, 0, speed=2.0)) == [
        ("Serial", 1.0),
        ("MPI_Send", {"size": 8, "source": -1, "dest": 1, "tag": 0}, None, ()),
        ("MPI_Allreduce", {"size": 8}, None, ()),
        ("Serial", 0.75),
    ]
    # rank 1 left MPI_Init 0.5 s after rank 0: that lead is not scaled
    assert shape(rank_statements(t, 1, speed=2.0))[:2] == [("Serial", 0.5), ("Serial", 0.25)]


def test_replay_on_a_constant_machine_is_exact():
    # by hand: rank 0 sends at 2.0, it arrives at 2.25 (latency 0.25); rank 1 reaches
    # the Allreduce at 2.35, which ends at 2.6; rank 0 computes 1.5 more -> 4.1
    # (without delays: rank 0 left the Allreduce before rank 1 entered it)
    r = replay(two_ranks(), parse_machine("constant:latency=0.25"), runs=3, seed=1,
               delays=False)
    assert r.traced == 5.0
    assert r.prediction.mean == pytest.approx(4.1)
    assert list(r.prediction.finish_mean) == pytest.approx([4.1, 2.9])
    assert r.error == pytest.approx(4.1 / 5 - 1)
    assert [(s.rank, s.elapsed, s.compute) for s in r.ranks] == [(0, 5, 3.5),
                                                                 (1, 3.5, pytest.approx(0.9))]
    assert r.to_dict()["mean"] == pytest.approx(4.1)


def test_polls_are_waiting_and_vanish():
    t = Trace(((Call("MPI_Init", 0, 1), Call("MPI_Irecv", 2, 2.1, (Posted(7),)),
                Call("MPI_Test", 3, 3.1), Call("MPI_Iprobe", 3.2, 3.3),
                Call("MPI_Test", 3.4, 3.5, (Recv(1, 5, 64, 7),)),
                Call("MPI_Finalize", 4, 5)),))
    assert shape(rank_statements(t, 0)) == [
        ("Serial", 1.0),
        ("MPI_Irecv", {"size": 64, "source": 1, "dest": -1, "tag": 5}, "q7", ()),
        ("Serial", 0.9),                    # 2.1 .. 3.0: computation before the first poll
        ("MPI_Wait", {"size": 0}, "q7", ()),
        ("Serial", 0.5),
    ]


def test_nonblocking_sends_and_waitall_keep_their_requests():
    t = Trace(((Call("MPI_Init", 0, 0), Call("MPI_Isend", 0, 0, (Send(1, 3, 16, 1),)),
                Call("MPI_Irecv", 0, 0, (Posted(2),)),
                Call("MPI_Waitall", 0, 0, (SendDone(1), Recv(1, 3, 16, 2))),
                Call("MPI_Finalize", 0, 0)),))
    assert [s[0] for s in shape(rank_statements(t, 0))] == ["MPI_Isend", "MPI_Irecv",
                                                            "MPI_Waitall"]
    assert shape(rank_statements(t, 0))[2][3] == ("q1", "q2")


def test_sendrecv_with_two_tags_becomes_two_nonblocking_calls():
    t = Trace(((Call("MPI_Init", 0, 0),
                Call("MPI_Sendrecv", 0, 0, (Send(1, 1, 8), Recv(1, 2, 4))),
                Call("MPI_Sendrecv", 0, 0, (Send(1, 3, 8), Recv(1, 3, 4))),
                Call("MPI_Finalize", 0, 0)),))
    ops = shape(rank_statements(t, 0))
    assert [s[0] for s in ops] == ["MPI_Irecv", "MPI_Isend", "MPI_Waitall", "MPI_Sendrecv"]
    assert ops[0][1]["tag"] == 2 and ops[1][1]["tag"] == 1
    assert ops[3][1] == {"size": 8, "source": 1, "dest": 1, "tag": 3}


def test_collective_on_a_subcommunicator_is_an_exchange_among_its_members():
    coll = Collective("ALLREDUCE", (0, 2), None, 16, 16)
    calls = (Call("MPI_Init", 0, 0), Call("MPI_Allreduce", 1, 2, (coll,)),
             Call("MPI_Finalize", 3, 3))
    t = Trace((calls, (Call("MPI_Init", 0, 0), Call("MPI_Finalize", 3, 3)), calls))
    exchange = ("MPI_Sendrecv", {"size": 16, "source": 2, "dest": 2, "tag": 1073741823},
                None, ())
    assert [s for s in shape(rank_statements(t, 0)) if s[0] != "Serial"] == [exchange]
    assert [s for s in shape(rank_statements(t, 1)) if s[0] != "Serial"] == []


def test_collective_of_one_rank_is_computation():
    calls = (Call("MPI_Init", 0, 0), Call("MPI_Barrier", 1, 2, (Collective("BARRIER", (0,),
                                                                             None, 0, 0),)),
             Call("MPI_Finalize", 3, 3))
    assert shape(rank_statements(Trace((calls,)), 0)) == [("Serial", 3.0)]


def test_bad_speed_is_an_error():
    with pytest.raises(PevpmError, match="speed ratio must be positive"):
        trace_model(two_ranks(), speed=0)


@pytest.mark.parametrize("op", sorted(set(COLLECTIVE_SIZES) - {"BARRIER", "CREATE_HANDLE"}))
@pytest.mark.parametrize("is_root", [True, False])
def test_collective_totals_read_back_as_bytes_per_peer(op, is_root):
    sent, received = totals(op, 24, 4, is_root)
    assert per_peer_size(op, sent, received, 4, is_root) == 24
