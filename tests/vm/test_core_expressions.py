"""Operands that change during a run evaluated in C by the compiled core (issue 25).

A loop index or a receive status makes an operand vary, so it is not folded
per rank; :mod:`pevpm.vm.kernel.cexpr` writes it as postfix operations the core
evaluates on C numbers, random draws with such arguments included.  The
runs must equal the reference engine's to the bit with the generator left
in the same state, and the closures must not be called where C can answer
(they are wrapped here to count their calls); where C cannot promise the
closure's value (integers past 64 bits, a division by zero) the closure
answers, with the same result or error.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pevpm.errors import ModelError
from pevpm.machine.comm_models import Hockney
from pevpm.machine.machine import Machine
from pevpm.machine.presets import parse_machine
from pevpm.model.builder import ModelBuilder
from pevpm.model.expr import ANY_SOURCE, Expr
from pevpm.vm.kernel import cexpr, engine, fastengine
from pevpm.vm.kernel import program as vm

pytestmark = pytest.mark.skipif(not fastengine.AVAILABLE, reason="compiled core not built")

HOCKNEY = Machine(Hockney(latency=5e-6, bandwidth=1e9), eager_limit=1024)


def _loop_model(serial: str, iterations: int = 9):
    """A ring whose shift, message size, computation and branches follow the
    loop index."""
    b = ModelBuilder(constants={"n": 64}, parameters={"t": 2e-4, "sd": 3e-5})
    with b.loop(iterations, index="i"):
        b.sendrecv("n * (i % 4 + 1)", dest="(procnum + 1 + i % 2) % numprocs",
                   source="(procnum + numprocs - 1 - i % 2) % numprocs", tag="i % 3")
        b.serial(serial)
        with b.loop("i % 3 + 1", index="j"):
            b.serial("max(1e-6 * (i - j), 2e-6) + (i > 4 && j != 1 ? 1e-5 : 0)")
        b.collective("MPI_Allreduce", "8 * (i % 2 + 1)")
        with b.runon() as arms:         # guards on the loop index: evaluated in C
            with arms.case("i % 3 == 0 && procnum % 2 == 0"):
                b.serial("1e-5 * (i + 1)")
            with arms.case("i > 5"), b.repeat("k >= i % 2", max="i + 1", index="k"):
                b.serial(2e-6)
    return b.build()


def _counted(program: vm.Program):
    """``program`` with every operand the core may evaluate in C wrapped to
    count the calls of its closure, and the counter."""
    calls = [0]

    def wrap(fn):
        if getattr(fn, "c_code", None) is None:
            return fn

        def counting(env):
            calls[0] += 1
            return fn(env)
        counting.c_code = fn.c_code
        return counting
    def operands(ins):
        if ins.op == vm.RUNON:          # its guards
            return ins._replace(arms=tuple((wrap(guard), pc) for guard, pc in ins.arms))
        return type(ins)(*(wrap(v) if callable(v) and i > 0 else v for i, v in enumerate(ins)))
    code = tuple(operands(ins) for ins in program.code)
    return vm.Program(code, program.names, program.invariant, program.statuses), calls


def _same(model, n, machine, seed=3):
    ref_rng, core_rng = np.random.default_rng(seed), np.random.default_rng(seed)
    ref = engine.simulate(model, n, machine, rng=ref_rng)
    program, calls = _counted(vm.compile_model(model))
    core = fastengine.simulate(model, n, machine, rng=core_rng, program=program)
    assert core.engine_note is None
    assert (core.makespan, core.ranks, core.critical_path, core.messages_simulated) == (
        ref.makespan, ref.ranks, ref.critical_path, ref.messages_simulated)
    assert core_rng.bit_generator.state == ref_rng.bit_generator.state
    return core, calls[0]


@pytest.mark.parametrize("serial", [
    "gamma(parameter t * (1 + i % 3), parameter sd)",
    "uniform(parameter t, parameter t * (i + 2))",
    "exponential(parameter t / (i + 1))",
    "gamma(parameter t, parameter sd * (i % 2))",          # sd 0 on even i: the mean
    "1e-4 * (i / 2) + 1e-5 * (i % 2 ? -1 : 1) + 2e-5",     # C division of integers
])
@pytest.mark.parametrize("machine", [HOCKNEY, parse_machine("default")], ids=["hockney", "profile"])
def test_loop_index_operands_run_in_c_with_the_reference_results(serial, machine):
    run, closure_calls = _same(_loop_model(serial), 5, machine)
    assert run.messages_simulated > 0
    assert closure_calls == 0


def test_a_bound_run_draws_at_quantiles_through_the_closures():
    model = _loop_model("gamma(parameter t * (1 + i % 3), parameter sd)")
    machine = parse_machine("default")
    ref = engine.simulate(model, 4, machine, bound="max")
    core = fastengine.simulate(model, 4, machine, bound="max")
    assert core.engine_note is None and core.makespan == ref.makespan


def test_integers_past_64_bits_fall_back_to_the_closure():
    # 2**62 * (i + 1) overflows C's integers from i = 1: the closure answers
    run, closure_calls = _same(_loop_model("1e-6 + 0 * (4611686018427387904 * (i + 1))"),
                               3, HOCKNEY)
    assert closure_calls >= 3 * 8


def test_a_division_by_zero_is_the_closures_error():
    b = ModelBuilder()
    with b.loop(3, index="i"):
        b.serial("1e-3 / (1 - i)")
    model = b.build()
    with pytest.raises(ModelError, match="division by zero"):
        engine.simulate(model, 2, HOCKNEY)
    with pytest.raises(ModelError, match="division by zero"):
        fastengine.simulate(model, 2, HOCKNEY)


def test_receive_statuses_are_read_in_c_and_bound_only_when_read():
    b = ModelBuilder()
    with b.runon() as ranks:
        with ranks.case("procnum == 0"), b.loop("numprocs - 1", index="k"):
            b.message("MPI_Recv", 8, source="MPI_ANY_SOURCE", request="s")
            b.send(8, dest="s.MPI_SOURCE", tag="s.MPI_TAG + k")
        with ranks.case("procnum > 0"):
            b.send(8, dest=0, tag="procnum")
            b.message("MPI_Recv", 8, source=0, tag="procnum + (procnum - 1)", request="u")
    model = b.build()
    assert vm.compile_model(model).statuses == {"s.MPI_SOURCE", "s.MPI_TAG"}
    run, closure_calls = _same(model, 4, HOCKNEY)
    assert closure_calls == 0


def test_a_status_nobody_reads_is_not_bound():
    b = ModelBuilder()
    b.irecv(8, source="(procnum + 1) % numprocs", request="halo")
    b.send(8, dest="(procnum + numprocs - 1) % numprocs")
    b.wait("halo")
    model = b.build()
    assert vm.compile_model(model).statuses == frozenset()
    _same(model, 3, HOCKNEY)


@pytest.mark.parametrize("text, ops", [
    ("i * 2 - 1", (("name", "i"), ("num", 2), ("bin", "*"), ("num", 1), ("bin", "-"))),
    ("-i", (("name", "i"), ("neg",))),
    ("!i", (("name", "i"), ("not",))),
    ("min(i, 3)", (("name", "i"), ("num", 3), ("min",))),
    ("i ? 1 : 2.5", (("name", "i"), ("num", 1), ("num", 2.5), ("pick",))),
    ("i == MPI_ANY_SOURCE", (("name", "i"), ("num", ANY_SOURCE), ("bin", "=="))),
    ("uniform(0, i)", (("num", 0), ("name", "i"), ("draw", "uniform"))),
    ("log2(i)", None),
    ("1 + uniform(0, i)", None),
    ("i + 99999999999999999999", None),
])
def test_postfix(text, ops):
    assert cexpr.postfix(Expr.parse(text)) == ops


_LEAVES = st.one_of(st.sampled_from(["i", "j", "x"]),
                    st.integers(-2**40, 2**40).map(str),
                    st.sampled_from(["0", "3", "7", "0.5", "-2.25", "1e300", "9007199254740993"]))


def _grow(children):
    return st.one_of(
        st.tuples(children, st.sampled_from(cexpr.BINARY), children).map(
            lambda t: f"({t[0]} {t[1]} {t[2]})"),
        children.map(lambda a: f"(-{a})"), children.map(lambda a: f"(!{a})"),
        st.tuples(children, children, children).map(lambda t: f"({t[0]} ? {t[1]} : {t[2]})"),
        st.tuples(st.sampled_from(cexpr.PAIRS), children, children).map(
            lambda t: f"{t[0]}({t[1]}, {t[2]})"))


@settings(max_examples=400, deadline=None)
@given(text=st.recursive(_LEAVES, _grow, max_leaves=8),
       i=st.integers(-2**62, 2**62) | st.integers(-9, 9),
       j=st.integers(-9, 9), x=st.floats(allow_nan=False, width=64) | st.floats(-9, 9))
def test_c_evaluation_gives_the_closures_value_and_type(text, i, j, x):
    from pevpm.vm.kernel import fastcore
    e = Expr.parse(text)
    ops = cexpr.postfix(e)
    env = {"i": i, "j": j, "x": x}
    try:
        expected = vm._finite(vm._compile(e.tree, e, "t"), e, "t")(env)
    except ModelError:
        expected = None
    got = fastcore.evaluate_postfix(ops, env) if ops is not None else None
    if got is not None:
        assert (type(got), got) == (type(expected), expected)
