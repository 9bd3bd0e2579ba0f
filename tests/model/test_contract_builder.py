"""The Python builder produces the AST the directive language describes."""

import pytest

from pevpm.errors import ModelError
from pevpm.model.ast import Branch, Loop, Message, Runon, Serial, walk
from pevpm.model.builder import ModelBuilder
from pevpm.model.expr import Expr


def test_builder_nests_blocks_in_program_order():
    b = ModelBuilder(parameters={"iterations": 3})
    with b.loop("parameter iterations", index="i"):
        with b.on_ranks("procnum == 0"):
            b.isend(8, dest=1, request="r")
            b.wait("r")
        b.serial(0.5)
    model = b.build()
    (loop,) = model.body
    assert loop == Loop(Expr.of("parameter iterations"), (
        Runon((Branch("c1", Expr.of("procnum == 0"), (
            Message("MPI_Isend", Expr.of(8), Expr.of("procnum"), Expr.of(1), request="r"),
            Message("MPI_Wait", request="r"),
        )),)),
        Serial(Expr.of(0.5)),
    ), index="i")
    assert model.parameters == {"iterations": 3}
    assert [type(s).__name__ for s in walk(model.body)] == [
        "Loop", "Runon", "Message", "Message", "Serial"]


@pytest.mark.parametrize("make, message", [
    (lambda b: b.message("MPI_Sned", 4, dest=1), ("unknown MPI operation 'MPI_Sned' "
                                                 "(did you mean 'MPI_Send'?)")),
    (lambda b: b.message("MPI_Isend", 4, dest=1), "MPI_Isend needs a request id"),
    (lambda b: b.message("MPI_Recv", 4), "MPI_Recv needs a source"),
])
def test_invalid_messages_are_refused(make, message):
    with pytest.raises(ModelError, match=message.replace("(", r"\(").replace(")", r"\)")
                       .replace("?", r"\?")):
        make(ModelBuilder())


def test_condition_arms_are_named_in_order():
    b = ModelBuilder()
    with b.condition() as arms:
        with arms.case(3):
            b.serial(1)
        with arms.case(1):
            b.serial(2)
    (cond,) = b.build().body
    assert [br.name for br in cond.branches] == ["c1", "c2"]
    assert [br.guard.evaluate({}) for br in cond.branches] == [3, 1]
