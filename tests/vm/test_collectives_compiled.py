"""The engines' compact collective code says what the AST expansion says, and
ranks share its instructions (a 1,024-rank alltoall fits in memory)."""

import numpy as np
import pytest

from pevpm.machine.comm_models import Hockney
from pevpm.machine.machine import Machine
from pevpm.model.ast import Message
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel import engine, fastengine
from pevpm.vm.kernel import program as vm
from pevpm.vm.kernel.collectives import ALGORITHMS, CollectiveConfig, _script, expand, expand_code
from pevpm.vm.kernel.collectives.compiled import compile_script
from pevpm.vm.kernel.collectives.selection import CODE_WRITERS
from pevpm.vm.kernel.engine import simulate

OP_OF = {"barrier": "MPI_Barrier", "bcast": "MPI_Bcast", "scatter": "MPI_Scatter",
         "gather": "MPI_Gather", "allgather": "MPI_Allgather", "alltoall": "MPI_Alltoall",
         "reduce": "MPI_Reduce", "allreduce": "MPI_Allreduce",
         "reduce_scatter": "MPI_Reduce_scatter", "scan": "MPI_Scan"}
CASES = [(family, name) for family, algorithms in ALGORITHMS.items() for name in algorithms]


def _operands(ins):
    """(op name, size, peer, tag, recv size) of a compiled instruction."""
    kind = ins.op
    if kind in (vm.SEND, vm.RECV):
        return ins.call, ins.size.value, ins.peer.value, ins.tag.value, None
    if kind == vm.SENDRECV:
        assert ins.send_tag.value == ins.recv_tag.value
        return "MPI_Sendrecv", ins.size.value, (ins.dst.value, ins.src.value), \
            ins.send_tag.value, ins.recv_size.value
    if kind == vm.WAIT:
        assert ins.requests is None     # every request started since the last Waitall
        return ins.call, None, None, None, None
    assert kind == vm.SERIAL
    return "Serial", ins.time.value, None, None, None


def _expected(stmt, rank):
    if not isinstance(stmt, Message):
        return "Serial", stmt.time.evaluate({}), None, None, None
    v = lambda e: e.evaluate({})
    if stmt.op == "MPI_Waitall":
        return stmt.op, None, None, None, None
    if stmt.op == "MPI_Sendrecv":
        return stmt.op, v(stmt.size), (v(stmt.dst), v(stmt.src)), v(stmt.tag), v(stmt.recv_size)
    peer = stmt.dst if stmt.op in ("MPI_Send", "MPI_Isend") else stmt.src
    return stmt.op, v(stmt.size), v(peer), v(stmt.tag), None


@pytest.mark.parametrize("family,algorithm", CASES)
@pytest.mark.parametrize("n,root", [(8, 0), (8, 5), (6, 2)])
def test_compact_code_says_what_the_statements_say(family, algorithm, n, root):
    if (family, algorithm) == ("allgather", "recursive-doubling") and n & (n - 1):
        pytest.skip("power-of-two counts only")
    cfg = CollectiveConfig.parse([f"{family}={algorithm}"])
    size = 1000
    op = OP_OF[family]
    for rank in range(n):
        statements = expand(op, size, root, rank, n, cfg)
        code = expand_code(op, size, root, rank, n, cfg, "m.c:7")
        assert [_operands(ins) for ins in code] == [_expected(s, rank) for s in statements]
        assert {ins.where for ins in code} <= {
            f"m.c:7: {name}" for name in ("MPI_Isend", "MPI_Irecv", "MPI_Send", "MPI_Recv",
                                          "MPI_Sendrecv", "MPI_Waitall", "Serial")}


@pytest.mark.parametrize("throttle, waitalls", [(0, 1), (32, 2), (16, 4)])
def test_ranks_share_the_instructions_of_an_alltoall(throttle, waitalls):
    n = 64
    cfg = CollectiveConfig.parse([f"alltoall=scattered,alltoall-throttle={throttle}"])
    codes = [expand_code("MPI_Alltoall", 4096, 0, r, n, cfg, "a.c:1") for r in range(n)]
    assert sum(map(len, codes)) == n * (2 * (n - 1) + waitalls)
    # one Irecv and one Isend per peer, one Waitall: shared by every rank
    assert len({id(ins) for code in codes for ins in code}) == 2 * n + 1


def _alltoall(algorithm):
    b = ModelBuilder()
    with b.loop(3):
        b.serial("1e-5 * procnum")
        b.collective("MPI_Alltoall", 2048)
    return b.build(), Machine(Hockney(latency=2e-5, bandwidth=1e8),
                              collectives=CollectiveConfig.parse([f"alltoall={algorithm}"]))


@pytest.mark.parametrize("algorithm", ["linear", "scattered", "pairwise", "bruck"])
def test_both_engines_agree_on_unnamed_collective_requests(algorithm):
    model, machine = _alltoall(algorithm)
    ref = simulate(model, 16, machine, rng=np.random.default_rng(3), trace=True)
    fast = fastengine._run_core(vm.compile_model(model), model, 16, machine, None,
                                np.random.default_rng(3), None, engine.Limits(), True)
    assert fast.makespan == ref.makespan
    assert [r.finish for r in fast.ranks] == [r.finish for r in ref.ranks]
    assert fast.messages_simulated == ref.messages_simulated
    assert ref.messages_simulated == 3 * (16 * 4 if algorithm == "bruck" else 16 * 15)
    assert [c.completion.tolist() for c in fast.collectives] == \
        [c.completion.tolist() for c in ref.collectives]
    assert [(m.src, m.dst, m.tag, m.size, m.send_start, m.recv_end) for m in fast.messages] == \
        [(m.src, m.dst, m.tag, m.size, m.send_start, m.recv_end) for m in ref.messages]


@pytest.mark.parametrize("op,spec", [
    ("MPI_Alltoall", "alltoall=linear"), ("MPI_Alltoall", "alltoall=scattered"),
    ("MPI_Alltoall", "alltoall=scattered,alltoall-throttle=0"),
    ("MPI_Alltoall", "alltoall=scattered,alltoall-throttle=1"),
    ("MPI_Alltoall", "alltoall=scattered,alltoall-throttle=2"),
    ("MPI_Alltoall", "alltoall=scattered,alltoall-throttle=7"),
    ("MPI_Allgather", "allgather=ring")])
@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 33, 64, 100])
def test_code_written_directly_is_the_compiled_script(op, spec, n):
    """The code writers give, instruction for instruction (the very same
    shared tuples), what compiling the algorithm's script gives."""
    cfg = CollectiveConfig.parse(spec)
    family, name = spec.split(",")[0].split("=")
    assert cfg.algorithm(op, 1024, n) == name and name in CODE_WRITERS[family]
    for size in (0, 1024):
        for root in (0, n // 2):
            for rank in range(n):
                direct = expand_code(op, size, root, rank, n, cfg, "d.c:2")
                script = compile_script(_script(op, size, root, rank, n, cfg).finish(),
                                        "d.c:2")
                assert len(direct) == len(script)
                assert all(a is b for a, b in zip(direct, script))


def test_scattered_alltoall_code_at_1024_ranks_throttles_32_partners():
    code = expand_code("MPI_Alltoall", 1024, 0, 1000, 1024, None, "t.c:9")
    waits = [pc for pc, ins in enumerate(code) if ins.op == vm.WAIT]
    assert len(code) == 2 * 1023 + 32 and len(waits) == 32
    assert waits[:2] == [62, 127]           # distances 1..31, then 32..63
    assert [code[pc].peer.value for pc in (0, 31, 63)] == [1001, 999, 8]   # from, to, from
