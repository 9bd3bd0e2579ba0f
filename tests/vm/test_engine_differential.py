"""The compiled core and the reference engine agree run for run (Hypothesis).

Random models (exchanges in three styles, wildcard gathers and tags, waits by
name out of posting order, MPI_PROC_NULL peers, loops whose index sets the
size, random serial times, sleeps, Condition branches, collectives) on random machines (Hockney with shared bandwidth, LogGP, a
per-size distribution called from the core, the shipped measured profile;
nodes with fewer cores than ranks, busy-polling or sleeping waits) must give
the same makespan, per-rank times, critical path, message records and
collective completions for the same seed; where the reference stops with an
error, the core stops too (and the adapter then reruns the reference).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from pevpm.errors import EventLimitError, PevpmError
from pevpm.machine.comm_models import Constant, Hockney, LogGP, PerSizeDistribution
from pevpm.machine.machine import Machine
from pevpm.machine.presets import parse_machine
from pevpm.machine.topology import Topology
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel import engine, fastengine
from pevpm.vm.kernel import program as vm

pytestmark = pytest.mark.skipif(not fastengine.AVAILABLE, reason="compiled core not built")

PEER = "procnum % 2 == 0 ? procnum + 1 : procnum - 1"
BLOCKS = ("nonblocking", "sendrecv", "ordered", "gather", "ring", "loop", "condition",
          "random_serial", "sleep", "allreduce", "alltoall", "bcast", "barrier", "self",
          "any_tag", "waits_by_name", "proc_null")
COMMS = {
    "hockney": Hockney(2e-5, 1e8, share_bandwidth=True, intra_latency=5e-6),
    "loggp": LogGP(L=5e-6, o=1e-6, g=2e-6, G=1e-9),
    "constant": Constant(1e-5, local=1e-6),
    "per-size": PerSizeDistribution({0: stats.uniform(1e-5, 1e-5),
                                     65536: stats.uniform(5e-4, 1e-4)}, local=2e-6),
}


def add_block(b, kind, size, i):
    pairs_only = "procnum < numprocs - numprocs % 2"
    if kind == "nonblocking":
        with b.on_ranks(pairs_only):
            b.irecv(size, source=PEER, request="r", tag=i)
            b.isend(size, dest=PEER, request="s", tag=i)
            b.waitall()
    elif kind == "sendrecv":
        with b.on_ranks(pairs_only):
            b.sendrecv(size, dest=PEER, source=PEER)
    elif kind == "ordered":
        with b.on_ranks(pairs_only), b.runon() as parity:
            with parity.case("procnum % 2 == 0"):
                b.send(size, dest=PEER)
                b.recv(size, source=PEER)
            with parity.case("procnum % 2 == 1"):
                b.recv(size, source=PEER)
                b.send(size, dest=PEER)
    elif kind == "gather":
        with b.runon() as ranks:
            with ranks.case("procnum == 0"), b.loop("numprocs - 1"):
                b.message("MPI_Recv", size, source="MPI_ANY_SOURCE", request="st")
                b.serial("1e-6 * st.MPI_SOURCE")
            with ranks.case("procnum != 0"):
                b.serial("1e-5 * (numprocs - procnum)")
                b.send(size, dest=0)
    elif kind == "ring":
        b.isend(size, dest="(procnum + 1) % numprocs", request="out")
        b.recv(size, source="(procnum + numprocs - 1) % numprocs")
        b.wait("out")
    elif kind == "loop":
        with b.loop(3, index=f"k{i}"):
            b.sendrecv(f"{size} + 8 * k{i}", dest="(procnum + 1) % numprocs",
                       source="(procnum + numprocs - 1) % numprocs")
    elif kind == "condition":
        with b.condition() as branch:
            with branch.case(0.3):
                b.serial("uniform(0, 1e-4)")
            with branch.case(0.7):
                b.serial(2e-5)
    elif kind == "self":
        b.isend(size, dest="procnum", request="me")
        b.sendrecv(size, dest="procnum", source="procnum")
        b.recv(size, source="procnum")
        b.wait("me")
    elif kind == "any_tag":
        with b.on_ranks(pairs_only), b.runon() as parity:
            with parity.case("procnum % 2 == 0"):
                b.send(size, dest=PEER, tag=3)
                b.send(size, dest=PEER, tag=4)
                b.send(size, dest=PEER, tag=3)
            with parity.case("procnum % 2 == 1"):
                b.irecv(size, source=PEER, request="t4", tag=4)
                b.irecv(size, source="MPI_ANY_SOURCE", request="any", tag="MPI_ANY_TAG")
                b.recv(size, source=PEER, tag="MPI_ANY_TAG")
                b.waitall(["any", "t4"])
    elif kind == "waits_by_name":
        with b.on_ranks(pairs_only):
            for name in ("a", "b"):
                b.isend(size, dest=PEER, request=name, tag=i)
            for name in ("c", "d"):
                b.irecv(size, source=PEER, request=name, tag=i)
            b.wait("b")
            b.wait("c")
            b.serial("procnum * 1e-6")
            b.waitall(["d", "a"])
    elif kind == "proc_null":
        b.isend(size, dest="MPI_PROC_NULL", request="n")
        b.recv(size, source="MPI_PROC_NULL")
        b.wait("n")
    elif kind == "random_serial":
        b.serial("gamma(1e-4, 3e-5) + exponential(1e-5)")
    elif kind == "sleep":
        b.serial("uniform(0, 1e-4)", sleep=True)
        b.serial("procnum * 1e-5")
    elif kind == "allreduce":
        b.collective("MPI_Allreduce", size)
    elif kind == "alltoall":
        b.collective("MPI_Alltoall", size)
    elif kind == "bcast":
        b.collective("MPI_Bcast", size, root="numprocs - 1")
    else:
        b.collective("MPI_Barrier")


def outcome(run):
    return (run.makespan, run.ranks, run.critical_path, run.messages_simulated, run.messages,
            [(c.op, c.where, c.occurrence, list(c.completion)) for c in run.collectives])


def check_same(model, numprocs, machine, seed):
    try:
        reference = engine.simulate(model, numprocs, machine, rng=np.random.default_rng(seed),
                                    trace=True)
    except PevpmError:
        with pytest.raises(fastengine.fastcore.Unsupported):
            fastengine._run_core(vm.compile_model(model), model, numprocs, machine, None,
                                 np.random.default_rng(seed), None, engine.Limits(), True)
        return
    core = fastengine._run_core(vm.compile_model(model), model, numprocs, machine, None,
                                np.random.default_rng(seed), None, engine.Limits(), True)
    assert outcome(core) == outcome(reference)
    adapted = fastengine.simulate(model, numprocs, machine, rng=np.random.default_rng(seed),
                                  records=True)
    assert outcome(adapted) == outcome(reference)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks=st.lists(st.tuples(st.sampled_from(BLOCKS), st.integers(0, 70_000)),
                       min_size=1, max_size=5),
       numprocs=st.integers(1, 9), comm=st.sampled_from(sorted(COMMS)),
       eager=st.sampled_from([0, 1024]), ppn=st.integers(1, 3), seed=st.integers(0, 2**32),
       cores=st.sampled_from([None, 1, 2]), wait=st.sampled_from(["poll", "sleep"]))
def test_the_core_and_the_reference_agree(blocks, numprocs, comm, eager, ppn, seed, cores,
                                          wait):
    b = ModelBuilder()
    for i, (kind, size) in enumerate(blocks):
        add_block(b, kind, size, i)
    machine = Machine(COMMS[comm], Topology(procs_per_node=ppn, cores=cores, wait=wait),
                      eager_limit=eager)
    check_same(b.build(), numprocs, machine, seed)


@settings(max_examples=15, deadline=None)
@given(blocks=st.lists(st.tuples(st.sampled_from(BLOCKS), st.sampled_from([0, 1024, 16384])),
                       min_size=1, max_size=4),
       numprocs=st.integers(2, 8), ppn=st.sampled_from([None, 1, 2, 3, 8]),
       seed=st.integers(0, 2**32))
def test_the_core_and_the_reference_agree_on_the_measured_profile(blocks, numprocs, ppn, seed):
    """On the shipped 2-core profile: runs within its cores, across nodes and
    oversubscribed (ppn 3 and 8) choose their blocks alike in both engines."""
    b = ModelBuilder()
    for i, (kind, size) in enumerate(blocks):
        add_block(b, kind, size, i)
    check_same(b.build(), numprocs, parse_machine("default", ppn=ppn), seed)


def test_a_deadlock_is_reported_by_the_reference_engine():
    b = ModelBuilder()
    b.recv(8, source="(procnum + 1) % numprocs")
    with pytest.raises(PevpmError, match="deadlock: rank 0 blocked in MPI_Recv from 1 at model: statement 1"):
        fastengine.simulate(b.build(), 3, Machine(Constant(1e-5)))


def test_a_model_with_mpi_test_runs_on_the_reference_engine():
    b = ModelBuilder()
    b.message("MPI_Test", request="x")
    program = vm.compile_model(b.build())
    assert fastengine.why_reference(program) == "the compiled core does not run MPI_Test"
    assert fastengine.why_reference(vm.compile_model(ModelBuilder().build())) is None


def test_the_core_agrees_when_its_hash_tables_grow_and_drop_idle_queues():
    """The core's queue and bucket tables start with 1,024 slots: a tag per
    iteration leaves 1,500 idle buckets behind (dropped when the table fills
    up), and a 33-rank alltoall has 1,056 queues and buckets open at once (the
    tables double)."""
    b = ModelBuilder()
    with b.loop(1500, index="k"):
        b.sendrecv(8, dest="(procnum + 1) % numprocs",
                   source="(procnum + numprocs - 1) % numprocs", tag="k")
    many_tags = b.build()
    check_same(many_tags, 3, Machine(COMMS["loggp"]), 5)
    run = fastengine.simulate(many_tags, 3, Machine(COMMS["loggp"]), records=True)
    assert sorted({m.tag for m in run.messages}) == list(range(1500))
    b = ModelBuilder()
    b.collective("MPI_Alltoall", 1024)      # 1 KiB blocks: every pair at once
    all_pairs = b.build()
    check_same(all_pairs, 33, Machine(COMMS["hockney"], eager_limit=1024), 6)
    assert fastengine.simulate(all_pairs, 33, Machine(COMMS["hockney"])).messages_simulated \
        == 33 * 32


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks=st.lists(st.tuples(st.sampled_from(BLOCKS), st.integers(0, 70_000)),
                       min_size=1, max_size=4),
       numprocs=st.integers(1, 6), limit=st.integers(1, 400), seed=st.integers(0, 2**32))
def test_the_core_stops_at_the_event_limit_where_the_reference_does(blocks, numprocs, limit,
                                                                     seed):
    """The core words the event limit's error itself (no rerun): the same
    rank, place and loop iterations as the reference engine, or both finish."""
    b = ModelBuilder()
    with b.loop(3):
        for i, (kind, size) in enumerate(blocks):
            add_block(b, kind, size, i)
    model, machine = b.build(), Machine(Constant(1e-5), eager_limit=1024)
    limits = engine.Limits(max_events=limit)
    try:
        reference = engine.simulate(model, numprocs, machine, rng=np.random.default_rng(seed),
                                    limits=limits)
    except EventLimitError as exc:
        with pytest.raises(EventLimitError) as core_error:
            fastengine._run_core(vm.compile_model(model), model, numprocs, machine, None,
                                 np.random.default_rng(seed), None, limits, False)
        assert core_error.value.message == exc.message
        return
    except PevpmError:
        return                      # deadlocks etc.: the reference engine's to report
    core = fastengine._run_core(vm.compile_model(model), model, numprocs, machine, None,
                                np.random.default_rng(seed), None, limits, False)
    assert core.makespan == reference.makespan


def test_the_core_names_a_repeat_loop_at_the_event_limit():
    """A limit met inside ``Repeat until`` names the loop's place and pass,
    exactly as the reference engine does."""
    b = ModelBuilder()
    with b.repeat("0", max=10**6, index="k"):
        b.serial(1e-6)
    model, machine = b.build(), Machine(Constant(1e-5))
    limits = engine.Limits(max_events=500)
    with pytest.raises(EventLimitError) as reference:
        engine.simulate(model, 2, machine, limits=limits)
    with pytest.raises(EventLimitError) as core:
        fastengine._run_core(vm.compile_model(model), model, 2, machine, None,
                             np.random.default_rng(0), None, limits, False)
    assert core.value.message == reference.value.message
    assert "of the loop at" in core.value.message and "(k = " in core.value.message
