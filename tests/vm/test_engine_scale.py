"""The engine's shortcuts change no result: per-rank folding, receive buckets,
one compilation for many runs, collective expansions shared across runs."""

import numpy as np
import pytest
from engine_models import jacobi_model

from pevpm.errors import ModelError
from pevpm.machine.comm_models import Constant, Hockney
from pevpm.machine.machine import Machine
from pevpm.model.builder import ModelBuilder
from pevpm.model.expr import ANY_SOURCE, ANY_TAG
from pevpm.vm.kernel import program as vm
from pevpm.vm.kernel.engine import simulate
from pevpm.vm.kernel.matching import MatchingQueues, PostedRecv, PostedSend

MACHINE = Machine(Hockney(latency=1e-5, bandwidth=1e8))


def _env(rank, numprocs):
    return {"procnum": rank, "numprocs": numprocs, "xsize": 256, "t": 3.24}


def test_ranks_with_the_same_folded_values_share_one_code():
    b = ModelBuilder()
    with b.runon() as ranks:
        with ranks.case("procnum == 0"), b.loop("numprocs - 1"):
            b.recv(8, source="MPI_ANY_SOURCE")
        with ranks.case("procnum != 0"):
            b.send(8, dest=0)
    program = vm.compile_model(b.build())
    codes = [program.specialize({"procnum": r, "numprocs": 16}) for r in range(16)]
    assert len({id(c) for c in codes}) == 2
    assert [vm.OPCODE_NAMES[ins.op] for ins in codes[0]][:2] == ["JUMP", "LOOP"]
    jacobi = vm.compile_model(jacobi_model(3))
    assert jacobi.specialize(_env(5, 16)) is jacobi.specialize(_env(5, 16))


def test_folded_operands_are_the_values_the_expressions_give():
    b = ModelBuilder(parameters={"n": 4})
    b.send("n * 8 + procnum", dest="(procnum + 1) % numprocs", tag="procnum")
    code = vm.compile_model(b.build()).specialize({"procnum": 2, "numprocs": 3, "n": 4})
    assert (code[0].size(None), code[0].peer(None), code[0].tag(None)) == (34, 0, 2)


def test_loop_indices_and_statuses_are_not_folded_and_draws_fold_to_plans():
    b = ModelBuilder()
    with b.loop(2, index="i"):
        b.serial("0.1 * i + procnum")
        b.serial("uniform(0, procnum + 1)")
    b.message("MPI_Recv", 8, source="MPI_ANY_SOURCE", request="s")
    b.serial("s.MPI_SOURCE + 1")
    program = vm.compile_model(b.build())
    code = program.specialize({"procnum": 0, "numprocs": 2})
    assert [code[pc] is program.code[pc] for pc in range(len(code))] == [
        True, True, False, True, True, True]
    # the draw stays a draw, its arguments folded: a plan the compiled core draws in C
    assert code[2].time.draw == ("uniform", 0.0, 1.0)
    assert code[2].time is vm.drawn_fn(("uniform", 0.0, 1.0))


def test_a_folded_value_that_fails_fails_where_it_runs():
    b = ModelBuilder()
    with b.runon() as ranks, ranks.case("procnum == 1"):
        b.serial("1 / (procnum - 1)")
    with pytest.raises(ModelError, match="division by zero in '1 / \\(procnum - 1\\)'"):
        simulate(b.build(), 2, MACHINE)
    assert simulate(b.build(), 1, MACHINE).makespan == 0.0


def test_a_compiled_program_gives_the_runs_compiling_gives():
    model = jacobi_model(4, t=0.01)
    program = vm.compile_model(model)
    for seed in range(3):
        a = simulate(model, 6, MACHINE, rng=np.random.default_rng(seed), trace=True)
        b = simulate(model, 6, MACHINE, rng=np.random.default_rng(seed), trace=True,
                     program=program)
        assert (a.makespan, a.ranks, a.messages) == (b.makespan, b.ranks, b.messages)


def test_a_send_offers_itself_to_exact_and_wildcard_receives_only():
    q = MatchingQueues(3)
    recvs = [PostedRecv(0, src, tag, 0, 8, 0.0, seq)
             for seq, (src, tag) in enumerate([(1, 5), (ANY_SOURCE, 5), (1, ANY_TAG),
                                               (ANY_SOURCE, ANY_TAG), (2, 5), (1, 6)])]
    for r in recvs:
        q.post_recv(r)
    found = q.post_send(PostedSend(1, 0, 5, 0, 8, 0.0, 10))
    assert sorted(r.seq for r in found) == [0, 1, 2, 3]
    assert [r.seq for r in q.unmatched_receives(0)] == [0, 1, 2, 3, 4, 5]
    collective = PostedSend(1, 0, 5, 1, 8, 0.0, 11)       # another context matches none
    assert q.post_send(collective) == []


@pytest.mark.parametrize("wildcard_first", [True, False])
def test_the_receive_posted_first_wins_across_buckets(wildcard_first):
    """Rank 0 posts two receives from different buckets (any tag, tag 5) that
    both match rank 1's message, which arrives first: the receive posted first
    takes it, the other gets rank 2's."""
    b = ModelBuilder()
    with b.runon() as ranks:
        with ranks.case("procnum == 0"):
            specs = [("MPI_ANY_SOURCE", "MPI_ANY_TAG", "w"), ("MPI_ANY_SOURCE", 5, "s")]
            for source, tag, name in (specs if wildcard_first else specs[::-1]):
                b.irecv(8, source=source, tag=tag, request=name)
            b.waitall()
            b.serial("10 * w.MPI_SOURCE")
        with ranks.case("procnum == 1"):
            b.send(8, dest=0, tag=5)
        with ranks.case("procnum == 2"):
            b.serial(1.0)
            b.send(8, dest=0, tag=5)
    run = simulate(b.build(), 3, Machine(Constant(0.5)))
    assert run.makespan == 1.5 + (10 if wildcard_first else 20)


def test_collective_expansions_are_shared_across_runs():
    from pevpm.vm.kernel import engine
    b = ModelBuilder()
    b.collective("MPI_Allreduce", 64)
    engine._expansion.cache_clear()
    simulate(b.build(), 8, MACHINE)
    first = engine._expansion.cache_info()
    simulate(b.build(), 8, MACHINE)
    second = engine._expansion.cache_info()
    assert first.misses == 8 and second.misses == 8 and second.hits == first.hits + 8


@pytest.mark.parametrize("op", ["MPI_Allreduce", "MPI_Bcast", "MPI_Alltoall", "MPI_Allgather",
                                "MPI_Barrier", "MPI_Reduce"])
def test_an_expansion_placed_later_is_the_one_expanded_in_place(op):
    """Steps expanded once per shape and placed per call site are the tuples (and the
    repeated-step sharing) that expanding at the site gives (a message step's
    statement, which only words errors, is whichever such step the collectives'
    cache made first, in either way)."""
    from pevpm.vm.kernel import collectives, engine

    def fields(code):
        return [tuple(v for k, v in ins._asdict().items() if k != "stmt") for ins in code]

    for rank in range(5):
        got = engine._expansion(op, 64, 1, rank, 5, None, "t: rank 0 call 9")
        expected = collectives.expand_code(op, 64, 1, rank, 5, None,
                                           f"t: rank 0 call 9 ({op})")
        assert fields(got) == fields(expected)
        assert [type(ins) for ins in got] == [type(ins) for ins in expected]
        assert [id(a) == id(b) for a in got for b in got] == [
            id(a) == id(b) for a in expected for b in expected]
        again = engine._expansion(op, 64, 1, rank, 5, None, "t: rank 0 call 10")
        assert [ins.where.replace("call 10", "call 9") for ins in again
                if hasattr(ins, "where")] == [ins.where for ins in got if hasattr(ins, "where")]


def test_every_rank_at_one_place_shares_its_placed_steps():
    from pevpm.vm.kernel import engine
    steps = [engine._expansion("MPI_Alltoall", 8, 0, rank, 4, None, "m.c:3:1")
             for rank in range(4)]
    waits = {id(ins) for code in steps for ins in code if type(ins).__name__ == "Wait"}
    assert len(waits) == 1
