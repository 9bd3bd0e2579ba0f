"""The compiled core's compact records (issue 25, fourth round): a Serial's
``on`` compared as numbers, operands past 32 bits left to their closures, the
loop stack in C, and the cycle collector restored after a run; ninth round:
a rank's collective call sites kept by pc, message steps shared across places."""

import gc

import numpy as np
import pytest

from pevpm.errors import EventLimitError
from pevpm.machine.collectives import CollectiveConfig
from pevpm.machine.comm_models import Constant, Hockney
from pevpm.machine.machine import Machine
from pevpm.machine.processor import ProcessorModel
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel import engine, fastengine
from pevpm.vm.kernel import program as vm

pytestmark = pytest.mark.skipif(not fastengine.AVAILABLE, reason="compiled core not built")


def both(model, numprocs, machine):
    """The core's run (checked to stay on the core) and the reference's, same seed."""
    core = fastengine.simulate(model, numprocs, machine, rng=np.random.default_rng(1))
    assert core.engine_note is None
    reference = engine.simulate(model, numprocs, machine, rng=np.random.default_rng(1))
    return core, reference


def test_serial_on_a_processor_runs_only_on_its_ranks_in_the_core():
    b = ModelBuilder()
    b.processor("slow", 100.0)
    b.processor("fast", 100.0)
    with b.loop(3):
        b.serial(3.0, on="slow")
        b.serial(1.0, on="fast")
        b.serial(0.5)
    procs = ProcessorModel("slow", names={1: "fast", 3: "fast"})
    core, reference = both(b.build(), 4, Machine(Constant(0.0), processors=procs))
    assert [r.finish for r in core.ranks] == [10.5, 4.5, 10.5, 4.5]
    assert [r.finish for r in core.ranks] == [r.finish for r in reference.ranks]


def test_a_message_size_past_32_bits_is_sent_whole():
    b = ModelBuilder()
    size = 3 * 2**31 + 5                       # a constant the C record cannot hold
    with b.on_ranks("procnum == 0"):
        b.send(size, dest=1)
    with b.on_ranks("procnum == 1"):
        b.recv(size, source=0)
    core, reference = both(b.build(), 2, Machine(Hockney(1e-5, 1e9)))
    assert core.makespan == reference.makespan == pytest.approx(1e-5 + size / 1e9)


def test_nested_loops_bind_their_indices_each_iteration():
    b = ModelBuilder()
    with b.loop(4, index="i"):
        with b.loop("i + 1", index="j"):
            b.serial("0.001 * (i * 10 + j)")
        b.collective("MPI_Allreduce", 8)
    core, reference = both(b.build(), 2, Machine(Constant(1e-6)))
    assert core.makespan == reference.makespan
    # sum over i < 4, j <= i of (10 i + j) ms: 0 + 21 + 63 + 126 = 210 ms, plus 4 allreduces
    assert core.ranks[0].compute == pytest.approx(0.210)


@pytest.mark.parametrize("enabled", [True, False])
def test_a_run_leaves_the_cycle_collector_as_it_found_it(enabled):
    b = ModelBuilder()
    b.serial(1.0)
    was = gc.isenabled()
    try:
        (gc.enable if enabled else gc.disable)()
        fastengine.simulate(b.build(), 2, Machine(Constant(0.0)))
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def collective_sites_model():
    """Two Allreduce places (one whose size follows the iteration), a Bcast
    whose root follows it and a Barrier, under gamma-timed work."""
    b = ModelBuilder(parameters={"t": 1e-3, "sd": 2e-4})
    with b.loop(6, index="i"):
        b.serial("gamma(parameter t, parameter sd)")
        b.collective("MPI_Allreduce", "8 * (1 + i % 2)")
        b.collective("MPI_Bcast", 64, root="i % 3")
        b.serial("gamma(parameter t, parameter sd)")
        b.collective("MPI_Allreduce", 8)
        b.collective("MPI_Barrier", 0)
    return b.build()


@pytest.mark.parametrize("hardware", [False, True])
def test_collective_call_sites_give_the_references_records(hardware):
    """A rank's collective places (the calls' counters per place, a size or
    root that changes at one place, the message steps that two places share
    in the core, a hardware Barrier timed whole) end as the reference's:
    each call's per-rank completions, to the bit."""
    machine = Machine(Hockney(2e-5, 1e9), collectives=CollectiveConfig(hardware=hardware))
    core, reference = both(collective_sites_model(), 8, machine)
    assert core.makespan == reference.makespan
    assert [r.finish for r in core.ranks] == [r.finish for r in reference.ranks]
    calls = [(c.op, c.where, c.occurrence) for c in core.collectives]
    assert calls == [(c.op, c.where, c.occurrence) for c in reference.collectives]
    assert len(calls) == 4 * 6 and sorted({o for _, _, o in calls}) == list(range(6))
    for mine, theirs in zip(core.collectives, reference.collectives):
        assert mine.completion.tolist() == theirs.completion.tolist()


@pytest.mark.parametrize("limit", [65534, 65535, 65536, 65537, 131073])
def test_the_event_limit_past_a_signal_check_stops_where_the_reference_does(limit):
    """The core checks its limits only at the events due (the next signal
    check or the one past the limit): around a check the limit still falls
    on the reference's event, with its words."""
    b = ModelBuilder()
    with b.loop(50_000, index="i"):
        b.serial(1e-6)
        b.serial(2e-6)
    model, machine = b.build(), Machine(Constant(1e-5))
    limits = engine.Limits(max_events=limit)

    def stopped(run):
        with pytest.raises(EventLimitError) as stop:
            run()
        return stop.value.message

    assert stopped(lambda: fastengine._run_core(
        vm.compile_model(model), model, 1, machine, None, np.random.default_rng(0), None,
        limits, False)) == stopped(lambda: engine.simulate(model, 1, machine, limits=limits))
