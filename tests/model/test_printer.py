"""Printing models: directive text for the corner cases, and the show tree."""

import pytest

from pevpm.errors import ModelError
from pevpm.model.ast import Condition, Model
from pevpm.model.builder import ModelBuilder
from pevpm.model.directives import parse_directives
from pevpm.model.printer import format_tree, to_directives


def roundtrip(model, language="c"):
    return parse_directives(to_directives(model, language), "x", language)


def test_a_time_ending_in_a_unit_like_name_keeps_its_meaning():
    b = ModelBuilder(constants={"s": 2, "ms": 3})
    b.serial("1e-3 * s")
    b.serial("ms")
    model = b.build()
    assert "Serial time = 0.001 * s s" in to_directives(model)
    assert roundtrip(model) == model


def test_a_constant_runon_predicate_is_not_read_back_as_a_rank():
    b = ModelBuilder()
    with b.runon() as arms, arms.case(3):
        b.serial(1)
    model = b.build()
    assert "Runon c1 = (3)" in to_directives(model)
    assert roundtrip(model) == model


def test_condition_without_arms_cannot_be_written():
    with pytest.raises(ModelError, match="Condition without arms"):
        to_directives(Model((Condition(()),)))


def test_tree_shows_values_and_probabilities():
    b = ModelBuilder(constants={"n": 256}, parameters={"reps": 4})
    with b.loop("parameter reps", index="i"), b.condition() as arms:
        with arms.case(3):
            b.send("n * sizeof(float)", dest="(procnum + 1) % numprocs")
        with arms.case("1"):
            b.serial("2.5e-3")
    assert format_tree(b.build()).splitlines() == [
        "model <built in Python>",
        "constants: n = 256",
        "parameters: reps = 4",
        "main:",
        "  Loop parameter reps = 4 times (index i)",
        "    Condition",
        "      c1 weight 3 (p = 0.75)",
        ("        MPI_Send: size n * sizeof(float) = 1024, from procnum, "
         "to (procnum + 1) % numprocs"),
        "      c2 weight 1 (p = 0.25)",
        "        Serial: 0.0025 s",
    ]
