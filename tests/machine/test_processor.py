import pytest

from pevpm.errors import ModelError
from pevpm.machine.processor import ProcessorModel
from pevpm.model.ast import Defaults, Processor


def test_factor_is_basis_over_speed_with_overrides():
    procs = ProcessorModel("p", speed=500.0, speeds={2: 2000.0}, names={1: "q"})
    ids, factors = procs.for_ranks(3, {"p": Processor("p", 1000.0), "q": Processor("q", 250.0)})
    assert ids == ["p", "q", "p"]
    assert factors == [2.0, 0.5, 0.5]


def test_no_speed_runs_times_as_written():
    assert ProcessorModel().for_ranks(2, {}) == (["default", "default"], [1.0, 1.0])


def test_from_defaults():
    procs = ProcessorModel.from_defaults(Defaults(processor="p", speed=100.0, speeds={1: 50.0}))
    assert procs.for_ranks(2, {"p": Processor("p", 100.0)}) == (["p", "p"], [1.0, 2.0])


def test_errors():
    with pytest.raises(ModelError, match="no timing basis is known for 'x'"):
        ProcessorModel("x", speed=100.0).for_ranks(1, {})
    with pytest.raises(ModelError, match="speed of rank 0 must be > 0"):
        ProcessorModel("x", speed=0.0, timing_basis=1.0).for_ranks(1, {})
