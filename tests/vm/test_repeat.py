"""Repeat-until loops: directives, printing, both engines, the pass cap, and
the bag-of-tasks example whose worker is written with one."""

import importlib.util
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from pevpm.errors import DirectiveError, ModelError
from pevpm.machine.comm_models import Constant
from pevpm.machine.machine import Machine
from pevpm.machine.presets import parse_machine
from pevpm.model.ast import Branch, Loop, Repeat, Runon
from pevpm.model.builder import ModelBuilder
from pevpm.model.directives import parse_directives
from pevpm.model.expr import Expr
from pevpm.model.printer import to_directives
from pevpm.vm.kernel import engine, fastengine

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MACHINE = Machine(Constant(0.25))

WORKER = """
int STOP = 9;
// PEVPM Runon c1 = procnum == 0
// PEVPM {
// PEVPM Loop iterations = 3
// PEVPM {
// PEVPM Message type = MPI_Send
// PEVPM &       size = 8
// PEVPM &       from = 0
// PEVPM &       to = 1
// PEVPM &       tag = 1
// PEVPM }
// PEVPM Message type = MPI_Send
// PEVPM &       size = 8
// PEVPM &       from = 0
// PEVPM &       to = 1
// PEVPM &       tag = STOP
// PEVPM }
// PEVPM &     c2 = procnum == 1
// PEVPM {
// PEVPM Repeat until = job.MPI_TAG == STOP
// PEVPM &      max = LIMIT
// PEVPM &      index = n
// PEVPM {
// PEVPM Message type = MPI_Recv
// PEVPM &       size = 8
// PEVPM &       from = 0
// PEVPM &       to = 1
// PEVPM &       tag = MPI_ANY_TAG
// PEVPM &       req/stat = job
// PEVPM Serial time = 1 + n
// PEVPM }
// PEVPM }
"""


def worker(limit: int = 10):
    return parse_directives(f"int LIMIT = {limit};\n" + WORKER, "worker.c")


@pytest.mark.parametrize("simulate", [engine.simulate, fastengine.simulate])
def test_repeat_runs_until_the_tag_says_stop(simulate):
    run = simulate(worker(), 2, MACHINE, rng=np.random.default_rng(0))
    # four receives (0.25 s each, the sender never waits); passes take 1, 2, 3, 4 s
    assert run.messages_simulated == 4
    assert run.ranks[1].compute == 1 + 2 + 3 + 4
    assert run.makespan == 0.25 + 1 + 2 + 3 + 4


@pytest.mark.parametrize("simulate", [engine.simulate, fastengine.simulate])
def test_the_cap_stops_a_runaway_repeat_with_its_place(simulate):
    with pytest.raises(ModelError, match=r"worker.c:22:10: .*Repeat ran 3 passes on rank 1 and "
                       r"'job.MPI_TAG == STOP' still does not hold \(its cap, max = LIMIT\)"):
        simulate(worker(limit=3), 2, MACHINE, rng=np.random.default_rng(0))


def test_an_index_only_condition_counts_passes():
    b = ModelBuilder()
    with b.repeat("i == 4", index="i"):
        b.serial(0.5)
    for simulate in (engine.simulate, fastengine.simulate):
        assert simulate(b.build(), 3, MACHINE).makespan == 2.5


def test_repeat_prints_as_directives_and_parses_back():
    model = worker()
    text = to_directives(model)
    assert "Repeat until = job.MPI_TAG == STOP" in text
    again = parse_directives(text, "again.c")
    assert again.body == model.body


@pytest.mark.parametrize(("line", "message"), [
    ("// PEVPM Repeat max = 3\n// PEVPM {\n// PEVPM }", "Repeat needs a 'until' attribute"),
    ("// PEVPM Repeat until = 1\n// PEVPM &      max = 0\n// PEVPM {\n// PEVPM }",
     "Repeat max 0 is not a whole number >= 1"),
    ("// PEVPM Repeat until = doen == 1\n// PEVPM {\n// PEVPM }",
     "Repeat until uses unknown name 'doen'"),
    ("// PEVPM Repeat until = 1\n// PEVPM Serial time = 1", "Repeat needs a block"),
])
def test_bad_repeats_are_directive_errors(line, message):
    with pytest.raises(DirectiveError, match=message):
        parse_directives(line, "bad.c")


def _bag_model():
    spec = importlib.util.spec_from_file_location("bag", EXAMPLES / "bag_of_tasks" / "model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.model().build()


def _as_counted_loop(stmt):
    """The worker's Repeat as the example wrote it before: ``jobs + 1`` passes,
    each doing nothing once DIE has arrived."""
    if isinstance(stmt, Repeat):
        guard = Branch("c1", Expr.parse("order.MPI_TAG != DIE"), stmt.body)
        return Loop(stmt.cap, (Runon((guard,)),))
    if isinstance(stmt, Runon):
        return replace(stmt, branches=tuple(
            replace(b, body=tuple(map(_as_counted_loop, b.body))) for b in stmt.branches))
    return stmt


def test_bag_of_tasks_predictions_match_the_counted_loop_it_replaced():
    model = _bag_model()
    old = replace(model, body=tuple(map(_as_counted_loop, model.body)))
    assert old != model
    machine = parse_machine("default")
    params = {"jobs": 30, "poll": 1e-4, "max_compute": 0.002}
    for n in (1, 2, 3, 6):
        runs = [simulate(m, n, machine, params=params, rng=np.random.default_rng(n)).makespan
                for m in (model, old) for simulate in (engine.simulate, fastengine.simulate)]
        assert len(set(runs)) == 1, (n, runs)
