"""Delays inside traced calls: when a call's data was there, and what replay keeps of the rest."""

import json

import pytest

from pevpm.cli import main
from pevpm.machine.presets import parse_machine
from pevpm.model.ast import Serial
from pevpm.trace.events import Call, Collective, Posted, Recv, Send, Trace
from pevpm.trace.replay.delays import ready_times, usual_times
from pevpm.trace.replay.fast import table_of
from pevpm.trace.replay.replay import (
    rank_statements,
    rank_summaries,
    replay,
    replay_machine,
    trace_model,
)


def ping_trace(recv_ends):
    """Rank 0 sends 8 bytes at 10, 20, 30...; rank 1 waits from 9, 19, 29... and its
    receives end at ``recv_ends``; rank 1 finalizes 1 s after its last receive."""
    sender, receiver = [Call("MPI_Init", 0, 1)], [Call("MPI_Init", 0, 1)]
    for k, end in enumerate(recv_ends):
        t = 10.0 * (k + 1)
        sender.append(Call("MPI_Send", t, t + 0.01, (Send(1, 5, 8),)))
        receiver.append(Call("MPI_Recv", t - 1, end, (Recv(0, 5, 8),)))
    last = 10.0 * len(recv_ends)
    sender.append(Call("MPI_Finalize", last + 1, last + 1))
    receiver.append(Call("MPI_Finalize", recv_ends[-1] + 1, recv_ends[-1] + 1))
    return Trace((tuple(sender), tuple(receiver)))


def test_a_receive_is_ready_when_its_send_started():
    t = ping_trace([10.5, 20.5, 33.0])
    assert ready_times(t) == [{1: 9.0, 2: 19.0, 3: 29.0}, {1: 10.0, 2: 20.0, 3: 30.0}]


def test_nonblocking_receives_match_sends_in_posting_order():
    # rank 1 posts request 4 (tag 1) then request 5 (tag 1), completes 5 first
    t = Trace((
        (Call("MPI_Init", 0, 1), Call("MPI_Send", 2, 2, (Send(1, 1, 8),)),
         Call("MPI_Send", 3, 3, (Send(1, 1, 16),)), Call("MPI_Finalize", 9, 9)),
        (Call("MPI_Init", 0, 1), Call("MPI_Irecv", 1, 1, (Posted(4),)),
         Call("MPI_Irecv", 1, 1, (Posted(5),)),
         Call("MPI_Wait", 4, 5, (Recv(0, 1, 16, request=5),)),
         Call("MPI_Wait", 6, 7, (Recv(0, 1, 8, request=4),)), Call("MPI_Finalize", 9, 9)),
    ))
    assert ready_times(t)[1] == {3: 3, 4: 2}


def test_sizes_that_disagree_give_no_ready_time():
    t = Trace(((Call("MPI_Init", 0, 1), Call("MPI_Send", 2, 2, (Send(1, 0, 8),))),
               (Call("MPI_Init", 0, 1), Call("MPI_Recv", 1, 3, (Recv(0, 0, 9),)))))
    assert ready_times(t) == [{}, {}]


def test_a_collective_is_ready_when_the_members_it_waits_for_entered():
    def coll(op, root=None):
        return Collective(op, (0, 1, 2), root, 0, 0)

    def trace(collective):
        return Trace(tuple((Call("MPI_Init", 0, 1), Call("MPI_X", start, 5, (collective,)))
                           for start in (2, 4, 3)))

    assert ready_times(trace(coll("BARRIER"))) == [{1: 4}, {1: 4}, {1: 4}]
    assert ready_times(trace(coll("GATHER", root=0))) == [{1: 4}, {}, {}]
    assert ready_times(trace(coll("BCAST", root=2))) == [{1: 3}, {1: 3}, {}]
    assert ready_times(trace(coll("SCAN"))) == [{1: 2}, {1: 4}, {1: 4}]


def test_the_usual_time_is_the_fastest_of_a_kind():
    # a loaded host: most receives were delayed, even the median one
    samples = [("recv", 1e-6 * v) for v in (900, 2, 950, 1000, 1200, 1500, 2000)]
    assert usual_times(samples + [("barrier", 0.5)]) == {"recv": 2e-6, "barrier": 0.5}


def serials(statements):
    return [round(s.time.evaluate({}), 9) for s in statements if isinstance(s, Serial)]


def test_replay_keeps_what_a_call_took_beyond_its_usual_as_a_delay():
    # after their send started, receives took 0.5, 0.5, 3.0 s: the usual is 0.5,
    # so the third carries a delay of 2.5 s, placed right after it
    t = ping_trace([10.5, 20.5, 33.0])
    model = trace_model(t)
    rank1 = model.body[0].branches[1].body
    assert serials(rank1) == [8.0, 8.5, 8.5, 2.5, 1.0]
    assert serials(rank_statements(t, 1)) == [8.0, 8.5, 8.5, 1.0]   # extract: none
    assert [s.delay for s in rank_summaries(t)] == pytest.approx([0.0, 2.5])
    assert [s.delay for s in rank_summaries(t, delays=False)] == [0.0, 0.0]


def test_replayed_delays_add_to_the_simulated_run():
    # rank 1 waits for each message, so the 2.5 s delay ends its run 2.5 s later
    t = ping_trace([10.5, 20.5, 33.0])
    machine = parse_machine("constant:latency=0.5")
    with_delays = replay(t, machine, runs=2)
    without = replay(t, machine, runs=2, delays=False)
    assert (with_delays.prediction.finish_mean[1] - without.prediction.finish_mean[1]
            == pytest.approx(2.5))
    assert with_delays.to_dict()["delays"] and not without.to_dict()["delays"]
    assert with_delays.to_dict()["traced_ranks"][1]["delay"] == pytest.approx(2.5)


def test_polling_counts_from_the_first_poll():
    # rank 1 polls (Iprobe) from 9 and receives at 10.5..12: measured from 9 when the
    # data was there at 10 (its send's start), the receive ended 2 s after it
    sender = (Call("MPI_Init", 0, 1), *[Call("MPI_Send", t, t, (Send(1, 0, 8),))
                                        for t in (10, 20, 30)], Call("MPI_Finalize", 40, 40))
    receiver = [Call("MPI_Init", 0, 1)]
    for t, end in ((10, 12), (20, 20.5), (30, 30.5)):
        receiver += [Call("MPI_Iprobe", t - 1, t - 1), Call("MPI_Iprobe", t + 0.2, t + 0.2),
                     Call("MPI_Recv", t + 0.4, end, (Recv(0, 0, 8),))]
    receiver.append(Call("MPI_Finalize", 40, 40))
    t = Trace((sender, tuple(receiver)))
    assert rank_summaries(t)[1].delay == pytest.approx(1.5)


def as_archive(monkeypatch, trace) -> None:
    """``pevpm replay`` reads ``trace`` for any archive (as a table and as objects)."""
    monkeypatch.setattr("pevpm.trace.otf2.read.read_archive", lambda path: trace)
    monkeypatch.setattr("pevpm.trace.otf2.read.read_table", lambda path: table_of(trace))


def test_the_command_replays_delays_unless_told_not_to(monkeypatch, capsys):
    as_archive(monkeypatch, ping_trace([10.5, 20.5, 33.0]))
    args = ["replay", "run", "--machine", "constant:latency=0.5", "--runs", "2"]
    assert main(args) == 0
    text = capsys.readouterr().out
    assert "(delay)" in text and "delay: MPI time after the data was there" in text
    assert main([*args, "--no-delays", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["delays"] is False and out["traced_ranks"][1]["delay"] == 0.0


def test_the_command_warns_of_requests_left_at_the_end(monkeypatch, capsys):
    # rank 0 posts an Isend nobody receives and never waits for it
    lost = Trace(((Call("MPI_Init", 0, 1), Call("MPI_Isend", 2, 2, (Send(1, 7, 8, request=3),)),
                   Call("MPI_Finalize", 3, 3)),
                  (Call("MPI_Init", 0, 1), Call("MPI_Finalize", 3, 3))))
    as_archive(monkeypatch, lost)
    assert main(["replay", "run", "--machine", "constant:latency=0.5", "--runs", "2"]) == 0
    err = capsys.readouterr().err
    assert "pevpm replay: warning: " in err
    assert "rank 0: MPI_Isend to rank 1 tag 7 never matched (in 2 of 2 runs on 2 ranks)" in err


def test_with_delays_messages_take_their_quiet_time():
    # the profile's spread is the profiled host's noise; the traced delays stand for
    # the traced host's, so a replay with them draws nothing: every run is the same
    t = ping_trace([10.5, 20.5, 33.0])
    machine = parse_machine("default")
    assert replay_machine(machine).comm.model == "min2x1"     # the two-process minimum
    assert replay_machine(machine, delays=False) is machine
    assert replay(t, machine, runs=3).prediction.sd == 0
    assert replay(t, machine, runs=3, delays=False).prediction.sd > 0


def test_gaps_of_a_trace_that_shared_cores_are_not_shared_again():
    # two ranks traced on one core: their gaps hold the sharing already
    plain = ping_trace([10.5, 20.5, 33.0])
    shared = Trace(plain.ranks, cores=1)
    machine = parse_machine("constant:latency=0.5,cores=1", nodes=1)
    assert all(s.sleep for s in trace_model(shared).body[0].branches[1].body
               if isinstance(s, Serial))
    as_traced = replay(shared, machine, runs=1).prediction.finish_mean[1]
    assert as_traced == pytest.approx(replay(plain, parse_machine("constant:latency=0.5"),
                                             runs=1).prediction.finish_mean[1])
    assert replay(plain, machine, runs=1).prediction.finish_mean[1] > as_traced + 1


def test_a_send_is_delayed_only_past_its_receive_posting():
    # rank 0's three sends took 0.01, 0.01 and 2.01 s: the third waited 1 s for its
    # receive to be posted (held by the library), so 1 s of it is a delay
    sender = (Call("MPI_Init", 0, 1), Call("MPI_Send", 10, 10.01, (Send(1, 0, 8),)),
              Call("MPI_Send", 20, 20.01, (Send(1, 0, 8),)),
              Call("MPI_Send", 30, 32.01, (Send(1, 0, 8),)), Call("MPI_Finalize", 40, 40))
    receiver = (Call("MPI_Init", 0, 1), Call("MPI_Recv", 9, 10.5, (Recv(0, 0, 8),)),
                Call("MPI_Recv", 19, 20.5, (Recv(0, 0, 8),)),
                Call("MPI_Recv", 31, 31.5, (Recv(0, 0, 8),)), Call("MPI_Finalize", 40, 40))
    t = Trace((sender, receiver))
    assert ready_times(t)[0] == {1: 9, 2: 19, 3: 31}
    assert rank_summaries(t)[0].delay == pytest.approx(1.0)


def test_a_send_that_ended_before_its_receive_was_posted_took_no_time_after_it():
    # eager sends returned 7.5, 16.5 and 25 s before their receives were posted: each
    # took 0 s after it was ready (not minus that), so none is delayed
    sender = (Call("MPI_Init", 0, 1), Call("MPI_Send", 2, 2.5, (Send(1, 0, 8),)),
              Call("MPI_Send", 3, 3.5, (Send(1, 0, 8),)),
              Call("MPI_Send", 4, 5.0, (Send(1, 0, 8),)), Call("MPI_Finalize", 40, 40))
    receiver = (Call("MPI_Init", 0, 1), *[Call("MPI_Recv", t, t + 0.1, (Recv(0, 0, 8),))
                                          for t in (10, 20, 30)], Call("MPI_Finalize", 40, 40))
    assert [s.delay for s in rank_summaries(Trace((sender, receiver)))] == pytest.approx([0, 0])


def test_the_command_runs_once_with_delays_and_ten_times_without(monkeypatch, capsys):
    """With the traced delays every run is the same (quiet messages, traced
    gaps), so one is enough unless --runs says otherwise."""
    as_archive(monkeypatch, ping_trace([10.5, 20.5, 33.0]))
    args = ["replay", "run", "--machine", "constant:latency=0.5", "--json"]
    runs = []
    for extra in ([], ["--no-delays"], ["--runs", "4"]):
        assert main([*args, *extra]) == 0
        runs.append(json.loads(capsys.readouterr().out)["prediction"]["runs"])
    assert runs == [1, 10, 4]
