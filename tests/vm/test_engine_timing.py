"""Exact makespans of deterministic models, derived by hand."""

import itertools
import math

import pytest
from engine_models import figure5_model, jacobi_model, ring_model

from pevpm.machine.comm_models import Constant, Hockney, LogGP
from pevpm.machine.machine import Machine
from pevpm.machine.processor import ProcessorModel
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel.engine import simulate


def exchange_model(size: int):
    b = ModelBuilder()
    peer = "1 - procnum"
    b.isend(size, dest=peer, request="s")
    b.irecv(size, source=peer, request="r")
    b.waitall(["s", "r"])
    return b.build()


def assert_accounted(run):
    """Every second of every rank is compute, communication or waiting, and
    the critical path covers the makespan."""
    for rank in run.ranks:
        assert rank.total == pytest.approx(rank.finish, abs=1e-12)
    assert sum(run.critical_path.values()) == pytest.approx(run.makespan, abs=1e-12)


@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_ring_makespan_is_rounds_times_ranks_times_hop(n):
    L, S, rounds = 0.25, 0.5, 3
    run = simulate(ring_model(rounds, S), n, Machine(Constant(L)))
    # The token makes rounds * n hops, each costing S (compute) then L (transfer).
    assert run.makespan == rounds * n * (S + L)
    assert run.critical_path == {"compute": rounds * n * S, "communication": rounds * n * L,
                                 "waiting": 0.0}
    assert [r.compute for r in run.ranks] == [rounds * S] * n
    assert run.messages_simulated == rounds * n
    assert_accounted(run)


@pytest.mark.parametrize("size", [1, 1000, 65536])
def test_loggp_isend_irecv_exchange_takes_the_textbook_time(size):
    L, o, g, G = 5e-6, 1.5e-6, 2e-6, 4e-10
    run = simulate(exchange_model(size), 2, Machine(LogGP(L=L, o=o, g=g, G=G)))
    textbook = o + (size - 1) * G + L + o
    assert run.makespan == pytest.approx(textbook, rel=0, abs=1e-15)
    # each rank spends max(o, g) returning from its Isend, the rest in transfer
    assert run.ranks[0].communication == pytest.approx(textbook, abs=1e-15)
    assert_accounted(run)


def test_hockney_time_is_latency_plus_size_over_bandwidth():
    b = ModelBuilder()
    with b.on_ranks("procnum == 0"):
        b.send(10_000, dest=1)
    with b.on_ranks("procnum == 1"):
        b.recv(10_000, source=0)
    run = simulate(b.build(), 2, Machine(Hockney(latency=1e-5, bandwidth=1e9)))
    assert run.makespan == pytest.approx(1e-5 + 1e-5, abs=1e-18)
    assert run.ranks[0].finish == run.ranks[1].finish


def test_figure5_cycle_completes_with_isend():
    run = simulate(figure5_model(nonblocking=True), 3, Machine(Constant(0.5, local=0.125)))
    # Isend returns after 0.125; every message arrives at 0.5; every Wait is then done.
    assert [r.finish for r in run.ranks] == [0.5, 0.5, 0.5]
    assert run.messages_simulated == 3


def test_jacobi_makespan_on_four_ranks():
    """Hand derivation (latency L, serial s = t/4; rendezvous sends).
    Iteration from common start A (ranks 1-3) and A - L (rank 0):
      r1<-r2 at A+L; r1<-r0 at A+L; r3<-r2 at A+2L; r0<-r1 at A+2L;
      r2<-r3 at A+3L; r2<-r1 at A+3L.  Ranks 1-3 end at A+3L, rank 0 at A+2L,
    then compute s: every iteration adds 3L + s, so the makespan is 100 (3L + s)."""
    L, t = 0.125, 3.0
    run = simulate(jacobi_model(100, t), 4, Machine(Constant(L)))
    assert run.makespan == pytest.approx(100 * (3 * L + t / 4), abs=1e-12)
    assert run.ranks[0].finish == pytest.approx(100 * (3 * L + t / 4) - L, abs=1e-12)
    assert run.messages_simulated == 100 * 6
    assert run.critical_path["compute"] == pytest.approx(100 * t / 4, abs=1e-12)
    assert_accounted(run)


def test_jacobi_on_two_ranks_costs_two_latencies_per_iteration():
    L, t = 0.25, 1.0
    run = simulate(jacobi_model(100, t), 2, Machine(Constant(L)))
    assert run.makespan == pytest.approx(100 * (2 * L + t / 2), abs=1e-12)


def test_heterogeneous_speeds_scale_serial_time():
    b = ModelBuilder()
    b.processor("cpu", timing_basis=1000.0)
    b.serial(2.0)
    procs = ProcessorModel("cpu", speed=1000.0, speeds={1: 500.0, 2: 4000.0})
    run = simulate(b.build(), 3, Machine(Constant(0.0), processors=procs))
    assert [r.finish for r in run.ranks] == [2.0, 4.0, 0.5]
    assert [r.compute for r in run.ranks] == [2.0, 4.0, 0.5]


def test_serial_on_applies_only_to_ranks_with_that_processor():
    b = ModelBuilder()
    b.processor("slow", 100.0)
    b.processor("fast", 100.0)
    b.serial(3.0, on="slow")
    b.serial(1.0, on="fast")
    procs = ProcessorModel("slow", names={1: "fast"})
    run = simulate(b.build(), 2, Machine(Constant(0.0), processors=procs))
    assert [r.finish for r in run.ranks] == [3.0, 1.0]


def test_default_directive_speeds_apply_without_machine_processors():
    b = ModelBuilder()
    b.processor("p3", 500.0)
    b.defaults(processor="p3", speed=500.0, speeds={1: 1000.0})
    b.serial(1.0)
    run = simulate(b.build(), 2, Machine(Constant(0.0)))
    assert [r.finish for r in run.ranks] == [1.0, 0.5]


def eager_model():
    b = ModelBuilder()
    with b.on_ranks("procnum == 0"):
        b.send(100, dest=1)
        b.serial(1.0)
    with b.on_ranks("procnum == 1"):
        b.serial(5.0)
        b.recv(100, source=0)
    return b.build()


def test_rendezvous_send_waits_for_the_late_receive():
    run = simulate(eager_model(), 2, Machine(Constant(0.5, local=0.125)))
    # the send completes with the receive, posted at 5 (the message was there at 0.5)
    assert run.ranks[0].finish == 6.0
    assert run.ranks[0].waiting == 5.0 - 0.5 and run.ranks[0].communication == 0.5
    assert run.ranks[1].finish == 5.0


def test_eager_send_returns_after_local_completion():
    run = simulate(eager_model(), 2, Machine(Constant(0.5, local=0.125), eager_limit=100))
    assert run.ranks[0].finish == 1.125
    assert run.ranks[1].finish == 5.0
    over_limit = simulate(eager_model(), 2, Machine(Constant(0.5, local=0.125), eager_limit=99))
    assert over_limit.ranks[0].finish == 6.0


def test_synchronous_send_is_never_eager():
    b = ModelBuilder()
    with b.on_ranks("procnum == 0"):
        b.message("MPI_Ssend", 100, dest=1)
    with b.on_ranks("procnum == 1"):
        b.serial(5.0)
        b.recv(100, source=0)
    run = simulate(b.build(), 2, Machine(Constant(0.5), eager_limit=1000))
    assert run.ranks[0].finish == 5.0


def test_sendrecv_shift_around_a_ring():
    b = ModelBuilder()
    b.sendrecv(64, dest="(procnum + 1) % numprocs", source="(procnum + numprocs - 1) % numprocs")
    run = simulate(b.build(), 4, Machine(Constant(0.75)))
    assert [r.finish for r in run.ranks] == [0.75] * 4


def test_proc_null_completes_at_once():
    b = ModelBuilder()
    b.send(8, dest="MPI_PROC_NULL")
    b.recv(8, source="MPI_PROC_NULL")
    b.sendrecv(8, dest="MPI_PROC_NULL", source="MPI_PROC_NULL")
    run = simulate(b.build(), 2, Machine(Constant(1.0)))
    assert run.makespan == 0.0 and run.messages_simulated == 0


def test_loop_index_is_visible_in_expressions():
    b = ModelBuilder()
    with b.loop(4, index="i"):
        b.serial("0.5 * (i + 1)")
    run = simulate(b.build(), 1, Machine(Constant(0.0)))
    assert run.makespan == 0.5 * (1 + 2 + 3 + 4)


def test_params_override_model_parameters():
    b = ModelBuilder(parameters={"work": 1.0}, constants={"k": 3})
    b.serial("parameter work * k")
    machine = Machine(Constant(0.0))
    assert simulate(b.build(), 1, machine).makespan == 3.0
    assert simulate(b.build(), 1, machine, params={"work": 2.0}).makespan == 6.0


def test_trace_records_slices_and_messages():
    run = simulate(eager_model(), 2, Machine(Constant(0.5)), trace=True)
    assert [(m.src, m.dst, m.send_start, m.recv_end) for m in run.messages] == [(0, 1, 0.0, 5.0)]
    for rank in (0, 1):
        mine = [s for s in run.slices if s.rank == rank]
        assert math.fsum(s.end - s.start for s in mine) == run.ranks[rank].finish
        assert all(a.end <= b.start for a, b in itertools.pairwise(mine))
    assert simulate(eager_model(), 2, Machine(Constant(0.5))).slices is None
