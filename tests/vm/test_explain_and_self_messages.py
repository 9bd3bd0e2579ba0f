"""``predict --explain`` (text, JSON, HTML report) and messages a rank sends itself."""

import json
from pathlib import Path

import numpy as np
import pytest

from pevpm.cli import main
from pevpm.machine.comm_models import Constant
from pevpm.machine.machine import Machine
from pevpm.machine.presets import parse_machine
from pevpm.machine.transfer import LOCAL_COPY_RATE
from pevpm.model.builder import ModelBuilder
from pevpm.report.html import write_report
from pevpm.vm.kernel import engine, fastengine

RING = '''\
from pevpm.model.builder import ModelBuilder


def model():
    b = ModelBuilder()
    with b.loop(50):
        b.sendrecv(8192, dest="(procnum + 1) % numprocs", source="(procnum + 1) % numprocs")
    return b
'''


def to_myself(size):
    b = ModelBuilder()
    with b.loop(4):
        b.isend(size, dest="procnum", request="s")
        b.recv(size, source="procnum")
        b.wait("s")
        b.sendrecv(size, dest="procnum", source="procnum")
    return b.build()


@pytest.mark.parametrize("machine", [parse_machine("default", ppn=2),
                                     Machine(Constant(1e-3, local=1e-3))])
def test_a_message_to_oneself_costs_a_local_copy_whatever_the_network(machine):
    for simulate in (engine.simulate, fastengine.simulate):
        run = simulate(to_myself(65536), 1, machine, rng=np.random.default_rng(0))
        # 8 copies of 64 KiB, no local completion charged, no network draw
        assert run.makespan == pytest.approx(8 * 65536 / LOCAL_COPY_RATE)
        assert run.ranks[0].communication == pytest.approx(run.makespan)


def test_explain_prints_the_block_behind_each_kind_of_message(tmp_path, capsys):
    path = tmp_path / "ring.py"
    path.write_text(RING)
    code = main(["predict", str(path), "-n", "1,2", "--runs", "2", "--machine", "default",
                 "--ppn", "2", "--explain"])
    out, err = capsys.readouterr()
    assert code == 0
    lines = out.splitlines()
    row = next(line for line in lines if "MPI_Sendrecv" in line).split()
    assert row == ["transfer", "MPI_Sendrecv", "duplex", "sendrecv", "1x2", "8192", "1", "100"]
    assert "1 rank: profile blocks used by one run" in out
    assert "(no message drew a time from the profile)" in out     # 1 rank: copies only
    # all ranks on one node: the note about inter-node messages does not apply
    assert "only intra-node" not in err


def test_explain_in_json_feeds_the_report_table(tmp_path, capsys):
    path = tmp_path / "ring.py"
    path.write_text(RING)
    assert main(["predict", str(path), "-n", "2", "--runs", "2", "--machine", "default",
                 "--ppn", "1", "--explain", "--json"]) == 0
    out, err = capsys.readouterr()
    [prediction] = json.loads(out)["predictions"]
    # a rank may post its next message while its last is still on the wire: 2 one way
    assert prediction["explain"] == [{"kind": "transfer", "op": "MPI_Sendrecv",
                                      "exchange": "duplex", "block": "sendrecv 1x2",
                                      "sizes": "8192", "contention": "1..2", "messages": 100}]
    assert "isend: only intra-node (1xp) placements measured" in err   # 2 nodes now
    page = Path(write_report({"explain": {"ring, 2 ranks": prediction["explain"]}},
                             str(tmp_path / "report"))).read_text(encoding="utf-8")
    assert "<h3>ring, 2 ranks</h3>" in page
    assert ("<td class='l'>transfer</td><td class='l'>MPI_Sendrecv</td><td class='l'>duplex"
            "</td><td class='l'>sendrecv 1x2</td>") in page


def test_explain_without_a_profile_names_the_busiest_links(tmp_path, capsys):
    """No profile blocks to name, but the links: 50 exchanges of 8 KiB, each
    message 1 us in transit (5e-5 s run), meet no contention (an exchange
    counts once), so nothing waited; the backplane carried both directions."""
    path = tmp_path / "ring.py"
    path.write_text(RING)
    code = main(["predict", str(path), "-n", "2", "--runs", "1", "--machine",
                 "constant:latency=1us", "--explain"])
    out, _ = capsys.readouterr()
    assert code == 0
    table = out[out.index("2 ranks: no profile blocks"):].splitlines()
    assert table[:5] == [
        "2 ranks: no profile blocks (the communication model is Constant)",
        "2 ranks: busiest links of one run",
        "  network: single switch (2 nodes, 7 links; routing: up, backplane, down); block "
        "placement: 2 ranks on 2 nodes, 1 per node",
        "  link                  use  messages        bytes      waited  slowed most",
        "  backplane            200%       100       819200    0.000 ms  -"]
    assert table[5].split() == ["down", "0", "100%", "50", "409600", "0.000", "ms", "-"]


def test_explain_names_the_link_that_held_messages_back(tmp_path, capsys):
    """Four ranks on one node each send 8 KiB at once to one rank on another,
    which receives them in rank order: each message drawn meets the ones
    before it on the links (contention 2, 3, 4; Hockney divides the bandwidth
    by it), and the waiting is charged to the busiest link and the sends' place."""
    path = tmp_path / "gather.py"
    path.write_text('''\
from pevpm.model.builder import ModelBuilder


def model():
    b = ModelBuilder()
    with b.runon() as ranks:
        with ranks.case("procnum < 4"):
            b.send(8192, dest=4)
        with ranks.case("procnum == 4"):
            with b.loop(4, index="k"):
                b.recv(8192, source="k")
    return b
''')
    assert main(["predict", str(path), "-n", "5", "--runs", "1", "--machine",
                 "hockney:latency=10us,bandwidth=100MB/s,share=1", "--ppn", "4", "--explain",
                 "--json"]) == 0
    out, _ = capsys.readouterr()
    [prediction] = json.loads(out)["predictions"]
    assert prediction["network"].endswith("block placement: 5 ranks on 2 nodes, up to 4 per node")
    # up 0, the backplane and down 1 are equally loaded: the first on the route
    first = prediction["links"][0]
    assert (first["link"], first["messages"], first["bytes"]) == ("up 0", 4, 32768)
    assert first["slowed"].endswith("gather.py:8:13")
    # at contention c a message waited (1 - 1/c) of 10 us + c x 81.92 us
    assert first["waited"] == pytest.approx(sum((1 - 1 / c) * (10e-6 + c * 81.92e-6)
                                                for c in (2, 3, 4)))
    assert [link["waited"] for link in prediction["links"][1:]] == [0.0, 0.0]
    page = Path(write_report({"links": {"gather, 5 ranks": {
        "network": prediction["network"], "rows": prediction["links"]}}},
        str(tmp_path / "report"))).read_text(encoding="utf-8")
    assert "<h2>Busiest network links</h2>" in page and "<h3>gather, 5 ranks</h3>" in page
    assert "<tr><td class='l'>up 0</td><td class='l'>" in page
