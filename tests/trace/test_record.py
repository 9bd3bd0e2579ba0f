"""pevpm trace on real programs (C and mpi4py) under mpiexec -n 2: every call is in the OTF2."""

import json
import subprocess
import sys
from collections import Counter

import numpy as np
import otf2
import pytest
from conftest import MPICC, MPIEXEC, compiled, trace_command

from pevpm.cli import main
from pevpm.trace.events import Collective, Recv, Send
from pevpm.trace.otf2.read import read_archive
from pevpm.trace.raw import read_raw

pytestmark = [pytest.mark.mpi,
              pytest.mark.skipif(not (MPIEXEC and MPICC), reason="needs mpiexec and mpicc")]

#: MPI calls each rank of calls.c makes (MPI_Test and MPI_Waitsome loop until done: at
#: least once and at least once, 1 to 2 times, counted apart).
C_CALLS = {
    "MPI_Init": 1, "MPI_Sendrecv": 2, "MPI_Irecv": 4, "MPI_Isend": 4, "MPI_Waitall": 1,
    "MPI_Waitany": 1, "MPI_Wait": 2, "MPI_Send": 1, "MPI_Probe": 1, "MPI_Recv": 1,
    "MPI_Barrier": 2, "MPI_Bcast": 1, "MPI_Reduce": 1, "MPI_Allreduce": 1, "MPI_Alltoall": 1,
    "MPI_Allgather": 1, "MPI_Comm_dup": 1, "MPI_Comm_split": 1, "MPI_Cart_create": 1,
    "MPI_Finalize": 1,
}


def otf2_counts(anchor):
    """Per location group: Counter of entered regions and of MPI record types."""
    regions, records = {}, {}
    with otf2.reader.open(str(anchor)) as trace:
        for location, event in trace.events:
            rank = location.group.name
            kind = type(event).__name__
            if kind == "Enter":
                regions.setdefault(rank, Counter())[event.region.name] += 1
            elif kind.startswith("Mpi"):
                records.setdefault(rank, Counter())[kind] += 1
    return regions, records


def test_c_program_output_reaches_the_terminal(c_trace):
    _, done = c_trace
    assert "calls done on 2 ranks" in done.stdout
    assert "pevpm trace: 2 ranks," in done.stderr


def test_every_call_of_the_c_program_is_in_the_otf2_archive(c_trace):
    directory, _ = c_trace
    regions, records = otf2_counts(directory / "traces.otf2")
    for rank in ("MPI Rank 0", "MPI Rank 1"):
        tests = regions[rank].pop("MPI_Test")
        assert tests >= 1 and regions[rank].pop("MPI_Waitsome") in (1, 2)
        assert dict(regions[rank]) == C_CALLS
        assert records[rank] == Counter({
            "MpiSend": 3, "MpiRecv": 3, "MpiIsend": 4, "MpiIsendComplete": 4,
            "MpiIrecvRequest": 4, "MpiIrecv": 4, "MpiRequestTest": tests - 1,
            "MpiCollectiveBegin": 10, "MpiCollectiveEnd": 10})
    # the archive holds exactly the raw records the tracer wrote (less completions)
    raw = read_raw(directory / "raw")
    for r in raw:
        complete = r.op_code("COMPLETE")
        calls = sum(regions[f"MPI Rank {r.rank}"].values())
        waitsome = int((r.records["op"] == r.op_code("WAITSOME")).sum())
        tested = int((r.records["op"] == r.op_code("TEST")).sum())
        assert int((r.records["op"] != complete).sum()) == calls + waitsome + tested


def test_a_c_programs_sleep_is_recorded_in_the_gap_before_the_next_call(c_trace):
    trace = read_archive(c_trace[0] / "traces.otf2")
    for calls in trace.ranks:
        barrier = next(c for c in calls if c.name == "MPI_Barrier")
        assert 0.02 <= barrier.slept < 0.02 + 0.05     # usleep(20000), and a late wake-up
        assert sum(c.slept for c in calls) == barrier.slept     # nothing slept elsewhere


def test_peers_tags_sizes_and_communicators(c_trace):
    directory, _ = c_trace
    trace = read_archive(directory)
    rank1 = [c for c in trace.ranks[1] if c.name != "MPI_Test"]
    by_name = {}
    for call in rank1:
        by_name.setdefault(call.name, []).append(call)
    assert by_name["MPI_Sendrecv"][0].events == (Send(0, 1, 512), Recv(0, 1, 512))
    assert by_name["MPI_Sendrecv"][1].events == (Send(0, 7, 256), Recv(0, 7, 256))  # on cart
    assert by_name["MPI_Recv"][0].events == (Recv(0, 6, 128),)
    waitall = by_name["MPI_Waitall"][0].events
    assert {type(e).__name__ for e in waitall} == {"Recv", "SendDone"}
    assert next(e for e in waitall if isinstance(e, Recv)).size == 64
    assert by_name["MPI_Bcast"][0].events == (Collective("BCAST", (0, 1), 0, 0, 128),)
    assert by_name["MPI_Alltoall"][0].events == (Collective("ALLTOALL", (0, 1), None, 16, 16),)
    # Comm_split by rank % 2 leaves each rank alone in its communicator
    assert by_name["MPI_Barrier"][1].events == (Collective("BARRIER", (1,), None, 0, 0),)
    assert [c.name for c in rank1[-4:-1]] == ["MPI_Cart_create", "MPI_Sendrecv", "MPI_Barrier"]
    # times are on one clock and every call ends after it starts
    for calls in trace.ranks:
        starts = np.array([c.start for c in calls])
        assert (np.diff(starts) >= 0).all()
        assert all(c.end >= c.start for c in calls)


def test_clock_offset_is_recorded_and_small_on_one_machine(c_trace):
    directory, _ = c_trace
    raw = read_raw(directory / "raw")
    assert raw[0].offset == 0.0
    assert abs(raw[1].offset) < 0.05


def test_mpi4py_program_is_traced_unmodified(py_trace):
    directory, done = py_trace
    assert "ring done on 2 ranks, got 1" in done.stdout
    trace = read_archive(directory)
    for rank in range(2):
        names = Counter(c.name for c in trace.ranks[rank])
        for name in ("MPI_Send", "MPI_Recv", "MPI_Irecv", "MPI_Isend", "MPI_Waitall",
                     "MPI_Alltoall", "MPI_Bcast", "MPI_Comm_split"):
            assert names[name] >= 1, (rank, name, names)
        sends = [e for c in trace.ranks[rank] for e in c.events
                 if isinstance(e, Send) and e.tag == 11]
        assert sends == [Send(1 - rank, 11, 800)]
        # the pickled sendrecv receives with a matched probe: MPI_Mprobe + MPI_Mrecv
        mrecv = [c.events for c in trace.ranks[rank] if c.name == "MPI_Mrecv"]
        assert mrecv == [(Recv(1 - rank, 0, 5),)]
        alltoall = [e for c in trace.ranks[rank] for e in c.events
                    if isinstance(e, Collective) and e.op == "ALLTOALL"]
        assert alltoall == [Collective("ALLTOALL", (0, 1), None, 64, 64)]


def test_replay_of_a_traced_program_reports_traced_and_predicted(py_trace, capsys):
    directory, _ = py_trace
    assert main(["replay", str(directory), "--machine", "constant:latency=1e-5", "--runs", "2",
                 "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["numprocs"] == 2 and out["traced"] > 0 and out["mean"] > 0
    assert len(out["traced_ranks"]) == 2
    assert out["error"] == pytest.approx(out["mean"] / out["traced"] - 1)
    assert main(["replay", str(directory), "--machine", "constant:latency=1e-5", "--runs", "2",
                 "--speed", "2"]) == 0
    text = capsys.readouterr().out
    assert "traced" in text and "at speed x2" in text and "predicted critical path" in text


def test_trace_refuses_a_directory_that_holds_a_trace(py_trace, capsys):
    directory, _ = py_trace
    assert main(["trace", "-o", str(directory), "--", "true"]) == 2
    assert "already holds a trace" in capsys.readouterr().err


def test_a_failing_program_is_one_error(tmp_path, cache_home):
    done = subprocess.run([sys.executable, "-m", "pevpm", "trace", "-o", str(tmp_path), "--",
                           sys.executable, "-c", "raise SystemExit(3)"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "pevpm: error: pevpm trace: the traced command exited with status 3")
    assert list(tmp_path.iterdir()) == []       # it recorded nothing: no empty raw folder


def test_a_program_without_mpi_leaves_no_trace_and_says_so(tmp_path, cache_home, capsys):
    assert main(["trace", "-o", str(tmp_path), "--", MPIEXEC, "-n", "2", "true"]) == 2
    assert capsys.readouterr().err.strip() == (
        f"pevpm: error: {tmp_path.resolve() / 'raw'}: rank 0 left no trace files "
        "(did it call MPI_Finalize?)")


def test_replay_options_are_checked_before_reading(py_trace, capsys):
    directory, _ = py_trace
    assert main(["replay", str(directory), "--speed", "0"]) == 2
    assert capsys.readouterr().err.strip() == (
        "pevpm: error: --speed: the speed ratio must be a finite number > 0, got 0.0")


def test_calls_not_recorded_are_counted_and_named(tmp_path, cache_home):
    done = trace_command(tmp_path / "trace", str(compiled(tmp_path, "unrecorded")))
    assert done.returncode == 0, done.stderr
    assert ("pevpm trace: note: not recorded: MPI_Send_init (2 calls), MPI_Recv_init "
            "(2 calls), MPI_Startall (6 calls), MPI_Ibarrier (2 calls), MPI_Exscan (2 calls); "
            "their time counts as computation") in done.stderr
    trace = read_archive(tmp_path / "trace")
    assert [c.name for c in trace.ranks[0]] == [
        "MPI_Init", "MPI_Barrier", "MPI_Waitall", "MPI_Waitall", "MPI_Waitall", "MPI_Wait",
        "MPI_Barrier", "MPI_Finalize"]
