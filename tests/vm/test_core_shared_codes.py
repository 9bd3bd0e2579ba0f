"""Ranks share one C code when their folded codes differ only in peers at the
same distance (issue 25, eleventh round): the core keeps those peers relative
to the rank (modulo the ranks), so a halo's interior ranks or a ring's every
rank run one instruction array; edge ranks (MPI_PROC_NULL peers, other arms)
and a rank whose code differs keep their own.  Every run is checked against
the reference engine to the bit."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pevpm.machine.comm_models import Hockney
from pevpm.machine.machine import Machine
from pevpm.machine.topology import Topology
from pevpm.machine.transfer import for_placement
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel import engine, fastengine
from pevpm.vm.kernel import program as vm

pytestmark = pytest.mark.skipif(not fastengine.AVAILABLE, reason="compiled core not built")

MACHINE = Machine(Hockney(2e-5, 1e8, share_bandwidth=True, intra_latency=5e-6),
                  Topology(procs_per_node=2))
NEXT = "(procnum + 1) % numprocs"
PREVIOUS = "(procnum + numprocs - 1) % numprocs"


def codes_shared(model, numprocs, machine=MACHINE):
    """How many C codes the core starts the ranks with."""
    from pevpm.vm.kernel import fastcore
    program = vm.compile_model(model)
    rng = np.random.default_rng(0)
    setup = engine.RankSetup.of(program, model, numprocs, machine, None, rng)
    placement = machine.topology.place(numprocs)
    core = fastcore.Core(setup.codes, setup.envs, setup.proc_ids, setup.factors, machine,
                         for_placement(machine.comm, placement.node_of), rng, placement,
                         None, None, False, None, program.statuses)
    return core.codes_shared


def same_as_reference(model, numprocs, machine=MACHINE):
    """The core's run equals the reference's (times, records, collectives)."""
    core = fastengine.simulate(model, numprocs, machine, rng=np.random.default_rng(3),
                               records=True)
    assert core.engine_note is None
    reference = engine.simulate(model, numprocs, machine, rng=np.random.default_rng(3),
                                trace=True)
    for run in (core, reference):
        assert run.messages_simulated > 0
    assert (core.makespan, core.ranks, core.critical_path, core.messages_simulated,
            core.messages) == (reference.makespan, reference.ranks, reference.critical_path,
                               reference.messages_simulated, reference.messages)
    return core


def ring(iterations=3):
    b = ModelBuilder()
    with b.loop(iterations):
        b.sendrecv("64 * (procnum % 3 + 1)", dest=NEXT, source=PREVIOUS, recv_size=256)
        b.serial("gamma(1e-4, 2e-5)")
    return b.build()


@pytest.mark.parametrize("numprocs", [2, 5, 16])
def test_a_ring_runs_one_code_for_every_rank_but_the_first(numprocs):
    b = ModelBuilder()
    with b.loop(3):
        b.sendrecv(64, dest=NEXT, source=PREVIOUS)
        b.serial("gamma(1e-4, 2e-5)")
    same_as_reference(b.build(), numprocs)
    assert codes_shared(b.build(), numprocs) == 2      # rank 0 (the reference) and the rest


def test_sizes_that_differ_by_rank_keep_the_codes_apart():
    assert codes_shared(ring(), 16) == 4                # rank 0, then sizes 128, 192, 64
    same_as_reference(ring(), 16)


def halo(b, size):
    up = "procnum + 1 < numprocs ? procnum + 1 : MPI_PROC_NULL"
    down = "procnum > 0 ? procnum - 1 : MPI_PROC_NULL"
    b.irecv(size, source=down, request="d", tag=1)
    b.irecv(size, source=up, request="u", tag=2)
    b.isend(size, dest=up, request="su", tag=1)
    b.isend(size, dest=down, request="sd", tag=2)
    b.waitall()


def test_edge_ranks_with_proc_null_peers_keep_their_own_codes():
    b = ModelBuilder()
    with b.loop(4):
        halo(b, 2048)
        b.serial("uniform(1e-5, 3e-5)")
    model = b.build()
    same_as_reference(model, 9)
    assert codes_shared(model, 9) == 3          # rank 0, the interior, the last rank


def test_a_rank_whose_code_differs_runs_its_own():
    b = ModelBuilder()
    with b.loop(3):
        halo(b, 512)
        with b.on_ranks("procnum == 3"):
            b.serial(2e-4)
        with b.on_ranks("procnum == 4"):
            b.send(8, dest="procnum - 4", tag=9)
        with b.on_ranks("procnum == 0"):
            b.recv(8, source=4, tag=9)
    model = b.build()
    same_as_reference(model, 8)
    assert codes_shared(model, 8) == 5          # ranks 0, 3, 4, 7 and the other interior ones


def test_a_peer_every_rank_names_alike_stays_one_shared_code():
    b = ModelBuilder()
    with b.runon() as ranks:
        with ranks.case("procnum < numprocs - 1"):
            b.send(16, dest="numprocs - 1")
        with ranks.case("procnum == numprocs - 1"):
            with b.loop("numprocs - 1"):
                b.recv(16, source="MPI_ANY_SOURCE")
    model = b.build()
    same_as_reference(model, 6)
    assert codes_shared(model, 6) == 2          # one folded tuple for ranks 0-4, run as is


#: The engine benchmark's Jacobi halo (benchmarks/engine_jacobi.py): per parity,
#: its steps as (call, peer, the ranks that make it; None: every rank).
JACOBI = {"procnum % 2 == 0": [("send", "procnum - 1", "procnum != 0"),
                               ("send", "procnum + 1", None),
                               ("recv", "procnum + 1", None),
                               ("recv", "procnum - 1", "procnum != 0")],
          "procnum % 2 != 0": [("recv", "procnum + 1", "procnum != numprocs - 1"),
                               ("recv", "procnum - 1", None),
                               ("send", "procnum - 1", None),
                               ("send", "procnum + 1", "procnum != numprocs - 1")]}


def test_the_jacobi_benchmark_runs_four_codes_at_any_size():
    b = ModelBuilder()
    with b.loop(3):
        with b.runon() as parity:
            for case, steps in JACOBI.items():
                with parity.case(case):
                    for call, peer, ranks in steps:
                        with b.on_ranks(ranks or "1"):
                            if call == "send":
                                b.send(1024, dest=peer)
                            else:
                                b.recv(1024, source=peer)
        b.serial("3.0 / numprocs")
    model = b.build()
    same_as_reference(model, 12)
    assert [codes_shared(model, n) for n in (4, 12, 256)] == [4, 4, 4]


@st.composite
def shifted_exchanges(draw):
    """Ranks exchanging with peers at random distances, one odd rank out."""
    numprocs = draw(st.integers(2, 11))
    shifts = draw(st.lists(st.integers(1, 12), min_size=1, max_size=4))
    odd = draw(st.integers(0, numprocs - 1))
    b = ModelBuilder()
    with b.loop(draw(st.integers(1, 3))):
        for k, shift in enumerate(shifts):
            b.irecv(f"8 * {k + 1}", source=f"(procnum + numprocs * 12 - {shift}) % numprocs",
                    request=f"r{k}", tag=k)
            b.isend(f"8 * {k + 1}", dest=f"(procnum + {shift}) % numprocs", request=f"s{k}",
                    tag=k)
        b.waitall()
        with b.on_ranks(f"procnum == {odd}"):
            b.serial("exponential(1e-5)")
        b.sendrecv(32, dest=NEXT, source=PREVIOUS, tag=99)
    return b.build(), numprocs


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(shifted_exchanges())
def test_shifted_exchanges_agree_with_the_reference(case):
    model, numprocs = case
    same_as_reference(model, numprocs)
    assert codes_shared(model, numprocs) <= 3


def test_a_runs_rank_codes_are_kept_for_the_next_run_with_the_same_values():
    b = ModelBuilder(parameters={"t": 1.0})
    b.sendrecv(8, dest=NEXT, source=PREVIOUS)
    b.serial("parameter t * procnum")
    program = vm.compile_model(b.build())

    def envs(numprocs, t=1.0):
        return [{"procnum": r, "numprocs": numprocs, "t": t} for r in range(numprocs)]
    codes = program.specialize_ranks(envs(4))
    assert program.specialize_ranks(envs(4)) is codes
    assert [code[1].time(None) for code in codes] == [0.0, 1.0, 2.0, 3.0]
    assert program.specialize_ranks(envs(4, t=2.0)) is not codes
    assert [code[1].time(None) for code in program.specialize_ranks(envs(4, t=2.0))] == [
        0.0, 2.0, 4.0, 6.0]
    assert len(program.specialize_ranks(envs(5))) == 5
    assert program.specialize_ranks(envs(4)) == codes       # folded again, equal
