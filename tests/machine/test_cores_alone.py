"""``cores`` alone in a machine spec puts the ranks on one node of that many cores (issue 29)."""

import pytest

from pevpm.machine.presets import parse_machine
from pevpm.model.builder import ModelBuilder
from pevpm.vm.strategies.montecarlo import predict


def _one_second():
    b = ModelBuilder()
    b.serial(1.0)
    return b.build()


@pytest.mark.parametrize("spec, kwargs, seconds", [
    ("constant:latency=0,cores=2", {}, 2.0),            # 4 ranks share 2 cores
    ("constant:latency=0,cores=2", {"nodes": 1}, 2.0),
    ("constant:latency=0,cores=2", {"ppn": 2}, 1.0),    # nodes of 2 ranks: one core each
    ("constant:latency=0,cores=2,nodes=2", {}, 1.0),
    ("constant:latency=0", {}, 1.0),                     # no cores: no limit
])
def test_cores_are_honoured_without_nodes(spec, kwargs, seconds):
    p = predict(_one_second(), 4, parse_machine(spec, **kwargs), runs=2, workers=1)
    assert p.mean == pytest.approx(seconds)
