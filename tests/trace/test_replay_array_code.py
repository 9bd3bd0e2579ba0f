"""The compiled core reads a replay's instruction arrays directly
(``pevpm.vm.kernel.arrays.ArrayCode``): records are made only when asked for,
and the runs are the reference's.

Covers what the array code itself decides: the records it makes on demand,
the arrays it refuses, operands that do not fit the core's C slots (read
from the record), a two-tag ``MPI_Sendrecv`` whose request names must not
read as "no request", request numbers the core forgets once waited (posted
again; a second wait leaves the core with a note), the run beside a recording (``--perfetto``, ``report
--recorded``) replayed in arrays, and a replay's start-up without scipy.
"""

import subprocess
import sys

import numpy as np
import pytest
import test_replay_equivalence as synthetic
from test_replay_fast import MACHINES, assert_same_replay, without_polls

from pevpm.cli.recorded import replay_run
from pevpm.machine.presets import parse_machine
from pevpm.trace.events import Call, Posted, Recv, Send, SendDone, Trace
from pevpm.trace.replay import fast
from pevpm.trace.replay.replay import replay_machine, trace_model
from pevpm.vm.kernel import arrays, engine, fastengine
from pevpm.vm.kernel import program as vm
from pevpm.vm.kernel.arrays import INSTRUCTION, ArrayCode, ArrayProgram
from pevpm.vm.kernel.instructions import Collective, Exchange, Message, Serial, Wait
from pevpm.vm.strategies.montecarlo import run_generator


def code_of(*rows: dict) -> np.ndarray:
    code = np.zeros(len(rows), dtype=INSTRUCTION)
    code["request"], code["call"] = -1, -1
    for k, row in enumerate(rows):
        for field, value in row.items():
            code[field][k] = value
    return code


def test_records_are_made_when_read():
    names = ["MPI_Isend", "MPI_Waitall", "MPI_Bcast", "MPI_Sendrecv"]
    code = ArrayCode(code_of(
        {"op": vm.SERIAL, "seconds": 0.25, "flag": 1},
        {"op": vm.SEND, "name": 0, "size": 8, "peer": 1, "tag": 3, "request": 7, "call": 4},
        {"op": vm.WAIT, "name": 1, "first": 1, "count": 2, "call": 5},
        {"op": vm.COLLECTIVE, "name": 2, "size": 16, "peer": 1, "call": 6},
        {"op": vm.SENDRECV, "name": 3, "size": 8, "peer": 1, "tag": 2, "recv_size": 4,
         "src": 0, "recv_tag": 5, "call": 9},
    ), np.array([9, 7, -2]), names, "t: rank 0")
    assert len(code) == 5
    serial, send, wait, bcast, exchange = code
    assert type(serial) is Serial and serial.time(None) == 0.25 and serial.stmt.sleep
    assert type(send) is Message and (send.call, send.blocking, send.request) == (
        "MPI_Isend", False, 7)
    assert (send.size(None), send.peer(None), send.tag(None)) == (8, 1, 3)
    assert send.where == "t: rank 0 call 4 (MPI_Isend)"
    assert wait == Wait(vm.WAIT, "MPI_Waitall", (7, -2), "t: rank 0 call 5 (MPI_Waitall)")
    assert type(bcast) is Collective and (bcast.size(None), bcast.root(None)) == (16, 1)
    assert type(exchange) is Exchange and [f(None) for f in exchange[1:7]] == [8, 1, 4, 0, 2, 5]
    assert code[-1] == exchange
    with pytest.raises(IndexError):
        code[5]


@pytest.mark.parametrize(("row", "what"), [
    ({"op": vm.TEST}, "an opcode other than"),
    ({"op": vm.RECV, "name": 2}, "a call name past the 1 names"),
    ({"op": vm.WAIT, "first": 1, "count": 1}, "a Wait on requests past the 1 listed"),
])
def test_arrays_the_core_cannot_read_are_refused(row, what):
    with pytest.raises(ValueError, match=f"t: rank 0: instruction 1 has {what}"):
        ArrayCode(code_of({"op": vm.SERIAL}, row), np.array([5]), ["MPI_Recv"], "t: rank 0")


def test_a_two_tag_sendrecv_alone_replays_alike():
    """Its Irecv and Isend are named by negative numbers that never read as -1
    (no request), even with no other request in the trace."""
    def rank(peer: int, out_tag: int, in_tag: int) -> tuple:
        return (Call("MPI_Init", 0, 0.1),
                Call("MPI_Sendrecv", 0.2, 0.3, (Send(peer, out_tag, 8), Recv(peer, in_tag, 8))),
                Call("MPI_Finalize", 0.4, 0.5))
    trace = Trace((rank(1, 5, 6), rank(0, 6, 5)))
    converted = fast.convert(fast.table_of(trace))
    assert -1 not in converted.requests.tolist()
    for delays in (True, False):
        assert_same_replay(trace, fast.table_of(trace), MACHINES["hockney"], delays=delays)


def test_operands_past_the_c_slots_are_read_from_their_records():
    """A size past 2 GiB does not fit the core's int slot: it runs from the record."""
    big = 2**31 + 8
    trace = Trace((
        (Call("MPI_Init", 0, 0.1), Call("MPI_Send", 0.2, 0.9, (Send(1, 4, big),)),
         Call("MPI_Irecv", 1.0, 1.1, (Posted(3),)),
         Call("MPI_Wait", 1.2, 1.4, (Recv(1, 2, 16, request=3),)), Call("MPI_Finalize", 1.5, 1.6)),
        (Call("MPI_Init", 0, 0.1), Call("MPI_Recv", 0.2, 1.0, (Recv(0, 4, big),)),
         Call("MPI_Send", 1.1, 1.2, (Send(0, 2, 16),)), Call("MPI_Finalize", 1.5, 1.6)),
    ))
    assert_same_replay(trace, fast.table_of(trace), MACHINES["hockney"])


def numbered_program(waits: int) -> ArrayProgram:
    """Rank 0 posts request 7 (an Isend to rank 1) and waits on it ``waits`` times,
    then posts request 7 again and waits; rank 1 receives both."""
    send = {"op": vm.SEND, "name": 0, "size": 8, "peer": 1, "tag": 3, "request": 7}
    wait = {"op": vm.WAIT, "name": 1, "first": 0, "count": 1}
    recv = {"op": vm.RECV, "name": 2, "size": 8, "peer": 0, "tag": 3, "flag": 1}
    codes = [code_of(send, *[wait] * waits, {"op": vm.SERIAL, "seconds": 0.5}, send, wait),
             code_of(recv, recv)]
    return ArrayProgram(codes, np.array([7]), ["MPI_Isend", "MPI_Wait", "MPI_Recv"], "t")


def test_a_request_number_is_posted_again_after_its_wait():
    """The core forgets a numbered request once waited; the number is free again."""
    machine = parse_machine("hockney:latency=1ms,bandwidth=1MB/s")
    program = numbered_program(1)
    run = arrays.simulate(program, machine, rng=run_generator(0, 0), records=True)
    reference = engine.simulate(
        arrays._EMPTY_MODEL, 2, machine, rng=run_generator(0, 0), program=program.with_records())
    assert run.engine_note is None
    assert run.ranks == reference.ranks and run.messages_simulated == 2


def test_a_request_waited_twice_leaves_the_core_with_a_note():
    """An array code waits on each request once (a trace's completions): a second
    wait on one is the reference engine's, and the note says so."""
    machine = parse_machine("hockney:latency=1ms,bandwidth=1MB/s")
    program = numbered_program(2)
    run = arrays.simulate(program, machine, rng=run_generator(0, 0))
    reference = engine.simulate(
        arrays._EMPTY_MODEL, 2, machine, rng=run_generator(0, 0), program=program.with_records())
    assert run.engine_note == ("the compiled core does not handle a wait on a request never "
                               "posted or waited on already (an array code's)")
    assert run.ranks == reference.ranks


@pytest.mark.parametrize("delays", [True, False])
def test_the_run_beside_a_recording_is_replayed_in_arrays(delays, monkeypatch, capsys):
    trace = without_polls(monkeypatch, 1, 3)
    machine = parse_machine("default")
    run = replay_run(trace, machine, source="t", delays=delays)
    reference = fastengine.simulate(trace_model(trace, 1.0, "t", delays), 3,
                                    replay_machine(machine, delays), rng=run_generator(0, 0),
                                    trace=True)
    assert capsys.readouterr().err == ""
    assert run.engine_note == reference.engine_note
    assert run.ranks == reference.ranks and run.critical_path == reference.critical_path
    assert [(s.rank, s.kind, s.start, s.end, s.label) for s in run.slices] == [
        (s.rank, s.kind, s.start, s.end, s.label) for s in reference.slices]
    assert any(s.where and " call " in s.where for s in run.slices)     # the array places


def test_a_recording_the_arrays_cannot_take_says_so(capsys):
    trace = synthetic.synthetic_trace(0, 2, steps=60)       # polls
    assert fast.check(fast.table_of(trace)).why == "it polls (MPI_Test)"
    run = replay_run(trace, parse_machine("default"), source="t")
    assert run.slices
    assert capsys.readouterr().err == (
        "pevpm: note: the run beside the recording is replayed through model statements, "
        "not in arrays (at most about 330,000 calls): it polls (MPI_Test)\n")


def test_a_replay_on_a_profile_does_not_import_scipy():
    """scipy takes seconds to import; drawing a profile's messages never needs it."""
    script = (
        "import sys, numpy as np\n"
        "from pevpm.machine.presets import parse_machine\n"
        "from pevpm.trace.replay.replay import replay_table\n"
        "from pevpm.trace.table import CallTable\n"
        "import pevpm.cli.replay, pevpm.trace.otf2.read\n"
        f"sys.path[:0] = {sys.path!r}\n"
        "import test_replay_equivalence as s\n"
        "s.STEPS = tuple(x for x in s.STEPS if x != 'polled')\n"
        "from pevpm.trace.replay.fast import table_of\n"
        "r = replay_table(table_of(s.synthetic_trace(0, 2)), parse_machine('default'),"
        " runs=2, delays=False)\n"
        "print(r.prediction.runs, 'scipy' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True).stdout
    assert out == "2 False\n"


def test_an_array_program_runs_where_a_rank_waits_on_integer_requests():
    """Waits on listed integer requests, blocking and not, in the core."""
    trace = without_polls_two_ranks()
    table = fast.table_of(trace)
    converted = fast.convert(table)
    program = ArrayProgram(converted.codes, converted.requests, converted.names, "t")
    ops = np.concatenate([c["op"] for c in converted.codes])
    assert (ops == vm.WAIT).any() and (np.concatenate(
        [c["request"] for c in converted.codes]) >= 0).any()
    assert_same_replay(trace, table, MACHINES["hockney"])
    assert program.numprocs == 2


def without_polls_two_ranks() -> Trace:
    """Two ranks that post Irecvs and Isends and wait on both together."""
    def rank(peer: int) -> tuple:
        calls = [Call("MPI_Init", 0, 0.1)]
        t = 0.2
        for k in range(3):
            calls += [Call("MPI_Irecv", t, t + 0.01, (Posted(10 + k),)),
                      Call("MPI_Isend", t + 0.02, t + 0.03, (Send(peer, k, 64, request=20 + k),)),
                      Call("MPI_Waitall", t + 0.04, t + 0.09,
                           (SendDone(20 + k), Recv(peer, k, 64, request=10 + k)))]
            t += 0.1
        return tuple(calls) + (Call("MPI_Finalize", t, t + 0.1),)
    return Trace((rank(1), rank(0)))


def test_a_replay_keeps_freed_memory_on_glibc():
    """``pevpm replay`` asks glibc's malloc to keep freed blocks (fewer page faults)."""
    from pevpm.cli.replay import keep_freed_memory

    assert keep_freed_memory() is True
