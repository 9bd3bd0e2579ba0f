"""The network with the ranks placed on it in the HTML report (issue 27):
``pevpm predict --explain --json`` on a ``--topology`` network gives each
rank's node, and ``pevpm report DIR --links`` draws it beside the busiest links."""

import json
from pathlib import Path

import pytest

from pevpm.cli import main
from pevpm.errors import PevpmError
from pevpm.report.html import write_report

EXCHANGE = '''\
from pevpm.model.builder import ModelBuilder


def model():
    b = ModelBuilder()
    with b.loop(5):
        b.irecv(65536, source="(procnum + numprocs - 1) % numprocs", request="r")
        b.isend(65536, dest="(procnum + 1) % numprocs", request="s")
        b.waitall()
    return b
'''


def test_the_report_draws_the_network_with_the_placement(tmp_path, capsys):
    model = tmp_path / "exchange.py"
    model.write_text(EXCHANGE)
    assert main(["predict", str(model), "-n", "6", "--runs", "1", "--machine",
                 "constant:latency=1us", "--topology", "torus:4x2,bw=1GB/s,lat=1us",
                 "--placement", "cyclic", "--ppn", "2", "--explain", "--json"]) == 0
    out, _ = capsys.readouterr()
    (tmp_path / "ring.json").write_text(out)
    [prediction] = json.loads(out)["predictions"]
    assert prediction["placement"] == {"topology": "torus:4x2,bw=1GB/s,lat=1us",
                                       "how": "cyclic", "node_of": [0, 1, 2, 0, 1, 2]}
    report = tmp_path / "report"
    assert main(["report", str(report), "--links", str(tmp_path / "ring.json")]) == 0
    out, _ = capsys.readouterr()
    assert f"links: {model}, 6 ranks" in out
    page = (report / "index.html").read_text(encoding="utf-8")
    assert '<img src="network-0.png"' in page
    assert ("cyclic placement: 6 ranks on 3 nodes, 2 per node. Dots: nodes, shaded by how "
            "many ranks run on them") in page
    assert (report / "network-0.png").read_bytes().startswith(b"\x89PNG")
    assert main(["report", str(report)]) == 0          # redrawn from results.json alone
    assert (report / "network-0.png").is_file()


def test_without_a_placement_the_links_have_no_picture(tmp_path):
    links = {"one switch": {"network": "switch", "rows": []}}
    page = Path(write_report({"links": links}, str(tmp_path))).read_text(encoding="utf-8")
    assert "<h3>one switch</h3>" in page and "network-0.png" not in page


def test_a_rank_off_the_network_is_refused(tmp_path):
    links = {"x": {"network": "torus", "rows": [],
                   "placement": {"topology": "torus:2x2", "how": "block", "node_of": [0, 4]}}}
    with pytest.raises(PevpmError, match="a rank on node 4, but the network has 4 nodes"):
        write_report({"links": links}, str(tmp_path))


def test_predictions_without_links_are_refused(tmp_path, capsys):
    path = tmp_path / "plain.json"
    path.write_text(json.dumps({"model": "m", "predictions": [{"numprocs": 2}]}))
    assert main(["report", str(tmp_path / "r"), "--links", str(path)]) == 2
    _, err = capsys.readouterr()
    assert "no busiest links in these predictions" in err
