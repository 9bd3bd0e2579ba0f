"""Ranks sharing a node's cores: exact makespans on deterministic machines,
the same from both engines."""

import pytest

from pevpm.errors import PevpmError
from pevpm.machine.comm_models import Constant
from pevpm.machine.machine import Machine
from pevpm.machine.topology import Topology
from pevpm.model.builder import ModelBuilder
from pevpm.model.directives import parse_directives
from pevpm.model.printer import to_directives
from pevpm.vm.kernel import engine, fastengine

ENGINES = [engine.simulate] + ([fastengine.simulate] if fastengine.AVAILABLE else [])


def node(ranks: int, cores: int | None, wait: str = "poll", latency: float = 0.0) -> Machine:
    return Machine(Constant(latency), Topology(procs_per_node=ranks, cores=cores, wait=wait))


def finishes(model, numprocs, machine, simulate):
    return [r.finish for r in simulate(model, numprocs, machine).ranks]


def one_serial(seconds=1.0, sleep=False):
    b = ModelBuilder()
    b.serial(seconds, sleep=sleep)
    return b.build()


@pytest.mark.parametrize("simulate", ENGINES)
@pytest.mark.parametrize("cores, makespan", [(1, 4.0), (2, 2.0), (3, 4 / 3), (4, 1.0),
                                             (None, 1.0)])
def test_four_ranks_of_one_second_share_the_cores(simulate, cores, makespan):
    run = simulate(one_serial(), 4, node(4, cores))
    assert run.makespan == pytest.approx(makespan, rel=1e-12)
    assert [r.compute for r in run.ranks] == [run.makespan] * 4


@pytest.mark.parametrize("simulate", ENGINES)
def test_nodes_with_enough_cores_are_not_stretched(simulate):
    # 4 ranks on 2 nodes of 2 cores: nothing shares
    machine = Machine(Constant(0.0), Topology(procs_per_node=2, cores=2))
    assert simulate(one_serial(), 4, machine).makespan == 1.0


@pytest.mark.parametrize("simulate", ENGINES)
def test_a_sleep_takes_no_core_and_is_not_stretched(simulate):
    assert simulate(one_serial(sleep=True), 4, node(4, 1)).makespan == 1.0
    b = ModelBuilder()
    with b.runon() as ranks:
        with ranks.case("procnum < 2"):
            b.serial(1.0, sleep=True)
        with ranks.case("procnum >= 2"):
            b.serial(1.0)
    # the two sleepers leave the two cores to the two computing ranks
    assert finishes(b.build(), 4, node(4, 2), simulate) == [1.0, 1.0, 1.0, 1.0]


@pytest.mark.parametrize("simulate", ENGINES)
def test_the_share_is_recomputed_when_ranks_end(simulate):
    b = ModelBuilder()
    b.serial("procnum < 2 ? 1 : 2")
    # all four share 2 cores until t = 2 (ranks 0, 1 end), then ranks 2, 3 have a core each
    assert finishes(b.build(), 4, node(4, 2), simulate) == [2.0, 2.0, 3.0, 3.0]


def handshake_then_compute():
    """Rank 3 wakes rank 0, which computes 1 s while ranks 1, 2 wait for it."""
    b = ModelBuilder()
    with b.runon() as ranks:
        with ranks.case("procnum == 0"):
            b.recv(8, source=3)
            b.serial(1.0)
            with b.loop(3, index="k"):
                b.send(8, dest="k + 1")
        with ranks.case("procnum == 3"):
            b.send(8, dest=0)
            b.recv(8, source=0)
        with ranks.case("procnum == 1 || procnum == 2"):
            b.recv(8, source=0)
    return b.build()


@pytest.mark.parametrize("simulate", ENGINES)
@pytest.mark.parametrize("wait, makespan", [("poll", 2.0), ("sleep", 1.0)])
def test_blocked_ranks_take_a_core_only_when_the_library_polls(simulate, wait, makespan):
    # polling: ranks 0-3 all want a core (R = 4 on 2 cores), so 1 s of work takes 2 s;
    # sleeping: only ranks 0 and 3 do
    run = simulate(handshake_then_compute(), 4, node(4, 2, wait))
    assert run.makespan == makespan
    assert run.ranks[0].compute == makespan


@pytest.mark.parametrize("simulate", ENGINES)
def test_processor_speed_scales_the_work_before_sharing(simulate):
    from pevpm.machine.processor import ProcessorModel
    machine = Machine(Constant(0.0), Topology(procs_per_node=2, cores=1),
                      processors=ProcessorModel(speed=500.0, timing_basis=1000.0))
    # 1 s at the basis is 2 s at half speed; two ranks on one core: 4 s
    assert simulate(one_serial(), 2, machine).makespan == 4.0
    # a sleep ignores both
    assert simulate(one_serial(sleep=True), 2, machine).makespan == 1.0


def test_bad_cores_and_wait_styles_are_refused():
    with pytest.raises(ValueError, match="cores must be >= 1"):
        Topology(cores=0)
    with pytest.raises(ValueError, match="wait must be one of"):
        Topology(wait="spin")


def test_serial_kind_sleep_in_directives():
    model = parse_directives("// PEVPM Serial time = 5 ms\n// PEVPM & kind = sleep\n"
                             "// PEVPM Serial time = 1\n// PEVPM & kind = compute\n", "m.c")
    assert [s.sleep for s in model.body] == [True, False]
    assert parse_directives(to_directives(model), "m.c").body == model.body
    with pytest.raises(PevpmError, match="Serial kind must be one of compute, sleep, got 'nap'"):
        parse_directives("// PEVPM Serial time = 1\n// PEVPM & kind = nap\n", "m.c")


@pytest.mark.parametrize("simulate", ENGINES)
def test_a_rank_costed_before_a_peer_is_known_to_end_is_costed_with_it(simulate):
    # the documented approximation (docs/cpu-sharing.md): exact sharing gives [3, 2]
    b = ModelBuilder()
    b.serial("procnum == 0 ? 2 : 1")
    assert finishes(b.build(), 2, node(2, 1), simulate) == [4.0, 2.0]
