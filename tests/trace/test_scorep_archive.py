"""A Score-P-shaped OTF2 archive, written here with the otf2 writer, reads and replays.

Score-P's shape: one process location group per rank with a "Master thread"
location, an MPI ``COMM_LOCATIONS`` group giving the rank order, a
``MPI_COMM_WORLD`` communicator over it, user regions (``main``) around the
MPI calls, time stamps in its own resolution with a global offset.  Here the
locations are defined in reverse rank order, so the rank order must come
from the ``COMM_LOCATIONS`` group.
"""

import otf2
import pytest
from otf2.enums import CollectiveOp, GroupType, LocationGroupType, Paradigm, RegionRole

from pevpm.errors import PevpmError
from pevpm.machine.presets import parse_machine
from pevpm.model.builder import ModelBuilder
from pevpm.trace.events import Call, Collective, Posted, Recv, Send, SendDone
from pevpm.trace.otf2.read import read_archive
from pevpm.trace.replay.replay import replay
from pevpm.vm.strategies.montecarlo import predict

BASE = 5_000_000     # microseconds: the archive's first time stamp


def write_scorep_like(directory):
    with otf2.writer.open(str(directory), archive_name="scorep",
                          timer_resolution=1_000_000) as trace:
        d = trace.definitions
        node = d.system_tree_node("node")
        groups = {r: d.location_group(f"MPI Rank {r}", location_group_type=LocationGroupType.PROCESS,
                                      system_tree_parent=node) for r in (1, 0)}
        locations = {r: d.location("Master thread", group=groups[r]) for r in (1, 0)}
        d.group("", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI,
                members=[locations[0], locations[1]])
        world_group = d.group("MPI_COMM_WORLD", group_type=GroupType.COMM_GROUP,
                              paradigm=Paradigm.MPI, members=[0, 1])
        world = d.comm("MPI_COMM_WORLD", group=world_group)
        main = d.region("main", paradigm=Paradigm.COMPILER)

        def mpi(name):
            return d.region(name, paradigm=Paradigm.MPI, region_role=RegionRole.POINT2POINT)

        w0 = trace.event_writer_from_location(locations[0])
        w1 = trace.event_writer_from_location(locations[1])
        for w in (w0, w1):
            w.enter(BASE, main)
            w.enter(BASE, mpi("MPI_Init"))
            w.leave(BASE + 1000, mpi("MPI_Init"))
        # rank 0: Comm_rank (no data), Isend to 1, Wait, Allreduce
        w0.enter(BASE + 1100, mpi("MPI_Comm_rank"))
        w0.leave(BASE + 1200, mpi("MPI_Comm_rank"))
        w0.enter(BASE + 3000, mpi("MPI_Isend"))
        w0.mpi_isend(BASE + 3000, 1, world, 9, 800, 1)
        w0.leave(BASE + 3010, mpi("MPI_Isend"))
        w0.enter(BASE + 3020, mpi("MPI_Wait"))
        w0.mpi_isend_complete(BASE + 3500, 1)
        w0.leave(BASE + 3500, mpi("MPI_Wait"))
        # rank 1: Irecv, Wait
        w1.enter(BASE + 1500, mpi("MPI_Irecv"))
        w1.mpi_irecv_request(BASE + 1500, 4)
        w1.leave(BASE + 1510, mpi("MPI_Irecv"))
        w1.enter(BASE + 1600, mpi("MPI_Wait"))
        w1.mpi_irecv(BASE + 3400, 0, world, 9, 800, 4)
        w1.leave(BASE + 3400, mpi("MPI_Wait"))
        for w, start in ((w0, 4000), (w1, 4400)):
            w.enter(BASE + start, mpi("MPI_Allreduce"))
            w.mpi_collective_begin(BASE + start)
            w.mpi_collective_end(BASE + 4500, CollectiveOp.ALLREDUCE, world,
                                 otf2.Undefined.UINT32, 8, 8)
            w.leave(BASE + 4500, mpi("MPI_Allreduce"))
        for w, start in ((w0, 6000), (w1, 5000)):
            w.enter(BASE + start, mpi("MPI_Finalize"))
            w.leave(BASE + 7000, mpi("MPI_Finalize"))
            w.leave(BASE + 7000, main)
    return directory / "scorep.otf2"


def test_scorep_archive_reads_into_calls_per_rank(tmp_path):
    trace = read_archive(write_scorep_like(tmp_path))
    assert trace.numprocs == 2
    assert [c.name for c in trace.ranks[0]] == ["MPI_Init", "MPI_Comm_rank", "MPI_Isend",
                                                "MPI_Wait", "MPI_Allreduce", "MPI_Finalize"]
    assert trace.ranks[0][2] == Call("MPI_Isend", pytest.approx(0.003), pytest.approx(0.00301),
                                     (Send(dest=1, tag=9, size=800, request=1),))
    assert trace.ranks[0][3].events == (SendDone(1),)
    assert [c.events for c in trace.ranks[1][1:3]] == [(Posted(4),), (Recv(0, 9, 800, 4),)]
    assert trace.ranks[1][3].events == (Collective("ALLREDUCE", (0, 1), None, 8, 8),)
    assert trace.elapsed == pytest.approx(0.005)    # Init ends at 1 ms, Finalize starts at 6 ms


def test_scorep_archive_replays_like_the_same_model_written_by_hand(tmp_path):
    machine = parse_machine("constant:latency=0.0005")
    replayed = replay(read_archive(write_scorep_like(tmp_path)), machine, runs=2, seed=3)

    b = ModelBuilder()
    with b.runon() as arms:
        with arms.case("procnum == 0"):
            b.serial(0.002)                      # 1 ms .. 3 ms, MPI_Comm_rank included
            b.isend(800, dest=1, request="q1", tag=9)
            b.serial(0.00001)
            b.wait("q1")
            b.serial(0.0005)
            b.collective("MPI_Allreduce", 8)
            b.serial(0.0015)
        with arms.case("procnum == 1"):
            b.serial(0.0005)
            b.irecv(800, source=0, request="q4", tag=9)
            b.serial(0.00009)
            b.wait("q4")
            b.serial(0.001)
            b.collective("MPI_Allreduce", 8)
            b.serial(0.0005)
    by_hand = predict(b.build(), 2, machine, runs=2, seed=3, workers=1, bounds=False)
    assert replayed.prediction.mean == pytest.approx(by_hand.mean, rel=1e-12)
    assert replayed.prediction.mean > 0.005     # 5 ms of computation plus messages


def test_not_an_archive_is_one_error(tmp_path):
    (tmp_path / "x.otf2").write_text("not otf2")
    with pytest.raises(PevpmError, match="not an OTF2 anchor file"):
        read_archive(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(PevpmError, match="no OTF2 archive"):
        read_archive(tmp_path / "empty")
    with pytest.raises(PevpmError, match="no such trace"):
        read_archive(tmp_path / "missing")
