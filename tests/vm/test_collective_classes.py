"""Collective expansions by class of ranks (issue 25, twelfth round).

The compiled core expands one rank of each class
(:func:`pevpm.vm.kernel.collectives.rank_classes`) and gives the whole class
that code with its peers relative.  Here: every rank's own expansion is its
class representative's with the peers moved as the class says (all ranks,
many counts and roots); the core's runs equal the reference engine's to the
bit at powers of two and other counts; and a 4,096-rank Allreduce expands
at most three ranks in Python."""

from dataclasses import replace

import numpy as np
import pytest

from pevpm.machine.collectives import CollectiveConfig
from pevpm.machine.comm_models import Hockney
from pevpm.machine.machine import Machine
from pevpm.machine.topology import Topology
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel import collectives, engine, fastengine
from pevpm.vm.kernel import program as vm
from pevpm.vm.kernel.collectives.classes import real, virtual

MACHINE = Machine(Hockney(2e-5, 1e8, share_bandwidth=True, intra_latency=5e-6),
                  Topology(procs_per_node=2))

#: (op, size, configuration) of every rule, and one without classes.
CALLS = [
    ("MPI_Allreduce", 8, "library=mpich"),
    ("MPI_Allreduce", 8, "library=mpich, reduce-cost=1e-9"),
    ("MPI_Allreduce", 8, "library=mpich-1.2"),
    ("MPI_Bcast", 1024, "library=mpich"),
    ("MPI_Bcast", 1024, "library=mpich, acks=yes, child-order=smallest-first"),
    ("MPI_Reduce", 64, "library=mpich"),
    ("MPI_Barrier", 0, "library=mpich"),
    ("MPI_Barrier", 0, "library=mpich-1.2"),
    ("MPI_Allgather", 4096, "library=mpich, allgather=ring"),
]
PEERS = {vm.SEND: ("peer",), vm.RECV: ("peer",), vm.SENDRECV: ("dst", "src")}


def _value(field):
    return getattr(field, "value", field)


def _moved(rank_peer, rank, rep_peer, rep, numprocs, xor_extra, exchange):
    """Whether ``rank``'s peer is ``rep``'s moved as the class says."""
    if exchange and xor_extra is not None:
        mask = virtual(rep, xor_extra) ^ virtual(rep_peer, xor_extra)
        return rank_peer == real(virtual(rank, xor_extra) ^ mask, xor_extra)
    return (rank_peer - rank) % numprocs == (rep_peer - rep) % numprocs


@pytest.mark.parametrize("op,size,spec", CALLS)
def test_every_rank_runs_its_class_code_with_peers_moved(op, size, spec):
    config = CollectiveConfig.parse(spec)
    for numprocs in [*range(2, 41), 64, 96, 100]:
        for root in sorted({0, 1 % numprocs, numprocs - 1}):
            classes = collectives.rank_classes(op, size, root, numprocs, config)
            assert classes is not None and len(classes.of) == numprocs
            assert len(classes.reps) <= 2 * numprocs.bit_length() ** 2
            for rank in range(numprocs):
                rep = classes.reps[classes.of[rank]]
                own = collectives.expand_code(op, size, root, rank, numprocs, config, "w")
                its = collectives.expand_code(op, size, root, rep, numprocs, config, "w")
                assert len(own) == len(its), (numprocs, root, rank)
                for a, b in zip(own, its):
                    assert type(a) is type(b) and a.op == b.op
                    peers = PEERS.get(a.op, ())
                    for name in a._fields:
                        x, y = _value(getattr(a, name)), _value(getattr(b, name))
                        if name in peers:
                            assert _moved(x, rank, y, rep, numprocs, classes.xor_extra,
                                          a.op == vm.SENDRECV), (numprocs, root, rank, name)
                        elif name != "stmt":
                            assert x == y, (numprocs, root, rank, name)


def test_recursive_doubling_classes():
    classes = collectives.rank_classes("MPI_Allreduce", 8, None, 16)
    assert classes.reps == (0,) and classes.xor_extra == 0
    classes = collectives.rank_classes("MPI_Allreduce", 8, None, 12)
    assert classes.reps == (0, 1, 8) and classes.xor_extra == 4
    assert classes.of.tolist() == [0, 1] * 4 + [2] * 4


def test_algorithms_without_classes_expand_each_rank():
    assert collectives.rank_classes("MPI_Bcast", 8, 0, 8,
                                    CollectiveConfig.parse("bcast=linear")) is None
    assert collectives.rank_classes("MPI_Alltoall", 8, 0, 8) is None
    assert collectives.rank_classes("MPI_Scatterv", (1, 2, 3), 0, 3) is None
    assert collectives.rank_classes("MPI_Allreduce", 8, 0, 1) is None


def _model(op, size, root=0, repeats=2):
    b = ModelBuilder()
    with b.loop(repeats):
        b.serial("0.001 * (procnum % 3)")
        b.collective(op, size, root=root if op in ("MPI_Bcast", "MPI_Reduce") else None)
    return b.build()


def same_as_reference(model, numprocs, machine):
    core = fastengine.simulate(model, numprocs, machine, rng=np.random.default_rng(3),
                               records=True)
    assert core.engine_note is None
    reference = engine.simulate(model, numprocs, machine, rng=np.random.default_rng(3),
                                trace=True)
    assert core.messages_simulated > 0
    assert (core.makespan, core.ranks, core.critical_path, core.messages_simulated,
            core.messages) == (reference.makespan, reference.ranks, reference.critical_path,
                               reference.messages_simulated, reference.messages)


@pytest.mark.skipif(not fastengine.AVAILABLE, reason="compiled core not built")
@pytest.mark.parametrize("numprocs", [16, 13, 6])
@pytest.mark.parametrize("op,size,root,spec", [
    ("MPI_Allreduce", 8, 0, "library=mpich, reduce-cost=1e-9"),
    ("MPI_Allreduce", 8, 0, "library=mpich-1.2"),
    ("MPI_Bcast", 1024, 3, "library=mpich"),
    ("MPI_Bcast", 1024, 5, "library=mpich, acks=yes"),
    ("MPI_Reduce", 64, 2, "library=mpich"),
    ("MPI_Alltoall", 64, 0, "library=mpich"),
    ("MPI_Barrier", 0, 0, "library=mpich"),
    ("MPI_Allgather", 64, 0, "library=mpich, allgather=ring"),
])
def test_the_core_runs_class_expansions_as_the_reference(op, size, root, spec, numprocs):
    machine = replace(MACHINE, collectives=CollectiveConfig.parse(spec))
    same_as_reference(_model(op, size, root), numprocs, machine)


@pytest.mark.skipif(not fastengine.AVAILABLE, reason="compiled core not built")
@pytest.mark.parametrize("numprocs,classes", [(4096, 1), (4096 + 1000, 3)])
def test_a_large_allreduce_expands_one_rank_per_class(numprocs, classes):
    size = 8 + numprocs                         # a call no earlier test expanded
    before = engine._expansion.cache_info().misses
    run = fastengine.simulate(_model("MPI_Allreduce", size, repeats=1), numprocs, MACHINE,
                              rng=np.random.default_rng(0))
    assert run.engine_note is None
    assert engine._expansion.cache_info().misses - before == classes


def test_a_program_that_folds_nothing_gives_every_rank_one_code():
    b = ModelBuilder()
    b.collective("MPI_Allreduce", 8)
    program = vm.compile_model(b.build())
    codes = program.specialize_ranks([{"procnum": r, "numprocs": 9000} for r in range(9000)])
    assert len(codes) == 9000 and all(code is codes[0] for code in codes)
    assert codes[0] == program.code
