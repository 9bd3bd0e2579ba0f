"""One message alone on SimGrid's 64-node dragonfly costs its route's latency
plus its bytes at the link's bandwidth, in both engines.

The pairs are Jacobi neighbours of benchmarks/topology_vs_smpi.py's
``2,1;2,1;4,1;4`` dragonfly (1 us, 10 Gbit/s per cable): on one router
(2 links), across routers of a chassis (3), SimGrid's chassis-0 detour
(19 -> 20 and back: green, then black from chassis 0, 4 links) and a group
crossing (31 -> 32 and back: 5 links).  SMPI 3.32 gave each of these alone
0.022-0.023 us more (docs/topology.md, "The dragonfly Jacobi's +3.7%").
"""

from dataclasses import replace

import numpy as np
import pytest

from pevpm.machine.presets import parse_machine
from pevpm.model.builder import ModelBuilder
from pevpm.vm.kernel import engine, fastengine

PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="dragonfly" prefix="node-" suffix="" radical="0-63" speed="1Gf" bw="10Gbps"
           lat="1us" sharing_policy="SPLITDUPLEX" topology="DRAGONFLY"
           topo_parameters="2,1;2,1;4,1;4"/>
</platform>
"""
SIZE = 8192


def one_message():
    """Rank 0 sends ``SIZE`` bytes to rank 1 (eager: the receive ends last)."""
    b = ModelBuilder()
    with b.runon() as ranks:
        with ranks.case("procnum == 0"):
            b.send(SIZE, dest=1)
        with ranks.case("procnum == 1"):
            b.recv(SIZE, source=0)
    return b.build()


@pytest.mark.parametrize("simulate", [engine.simulate, fastengine.simulate],
                         ids=["reference", "fast"])
@pytest.mark.parametrize(("src", "dst", "links"), [
    (4, 5, 2), (4, 3, 3), (3, 4, 3), (19, 20, 4), (20, 19, 4), (31, 32, 5), (32, 31, 5),
])
def test_a_lone_message_costs_its_routes_latency_and_its_bytes(tmp_path, simulate, src, dst,
                                                                links):
    platform = tmp_path / "dragonfly.xml"
    platform.write_text(PLATFORM)
    hosts = tmp_path / "hosts"
    hosts.write_text(f"node-{src}\nnode-{dst}\n")
    machine = parse_machine("constant:latency=0,eager=65536", topology=str(platform),
                            placement=str(hosts))
    machine = replace(machine, flow_start="match", flow_sharing="simgrid")
    assert len(machine.topology.network.node_route(src, dst)) == links
    run = simulate(one_message(), 2, machine, rng=np.random.default_rng(0))
    assert run.makespan == pytest.approx(links * 1e-6 + SIZE / 1.25e9, rel=1e-12)
