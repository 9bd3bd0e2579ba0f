"""docs/own-program.md works as written: a C program built with the region library,
calibrated, predicted, and taken to many ranks, on small sizes (issue 29)."""

from __future__ import annotations

import json
import re

import pytest
from guide_pages import MPIEXEC, ROOT, run_blocks, scratch_folder

from pevpm.model.loader import load_model

GUIDE = ROOT / "docs" / "own-program.md"

#: (pattern in the page, what the test runs instead)
SMALLER = [
    ("--points 200000 --iterations 2000", "--points 2000 --iterations 20"),
    ("-D iterations=2000", "-D iterations=20"),
    ("-D iterations=300", "-D iterations=20"),
    ("for i in 1 2 3 4 5 6 7;", "for i in 1;"),
    ("--repeats 3", "--repeats 1 --busy-retries 0"),
    ("-n 1,32,1024", "-n 1,8"),
    ("--ppn 32", "--ppn 4"),
    ("--runs 20", "--runs 2"),
    ("--runs 5", "--runs 2"),
]


def test_the_directives_in_heat_c_are_the_hand_model():
    directives = load_model(ROOT / "examples" / "heat" / "heat.c")
    builder = load_model(ROOT / "examples" / "heat" / "model.py")
    assert directives.body == builder.body and directives.parameters == builder.parameters


def test_the_readme_names_the_install_step_and_the_guide():
    readme = (ROOT / "README.md").read_text()
    assert "make install" in readme.split("## The pipeline")[0]
    assert "docs/own-program.md" in readme


def test_every_size_the_test_shrinks_is_in_the_page():
    text = GUIDE.read_text()
    assert [p for p, _ in SMALLER if p not in text] == []


@pytest.mark.slow
@pytest.mark.mpi
@pytest.mark.skipif(not MPIEXEC.with_name("mpicc").exists(), reason="needs the wheel's mpicc")
def test_the_guide_runs_step_by_step(tmp_path):
    folder, env = scratch_folder(tmp_path)
    text = run_blocks(GUIDE, SMALLER, folder, env)
    assert "heat: 1 ranks, 2000 points each, 20 iterations" in text
    assert "heat: 2 ranks, 2000 points each, 20 iterations" in text
    for n in (1, 2):
        regions = json.loads((folder / f"heat-{n}.json").read_text())["regions"]
        assert regions["update"]["calls"] == regions["change"]["calls"] == n * 20
    assert len(re.findall(r"^\s+2\s+\d", text, flags=re.MULTILINE)) == 2   # two 2-rank rows
    trace_regions = json.loads((folder / "heat-trace.json").read_text())["regions"]
    assert trace_regions["Sendrecv_tag1_to_Allreduce"]["calls"] == 2 * 20
    # the report's noise view: a row per noise, a column per count, and the page
    assert re.search(r"^noise\s+1\s+8\s+efficiency at 8", text, flags=re.MULTILINE)
    assert [line.split()[0] for line in text.splitlines()
            if re.match(r"^(none|robust|calibrated)\s+\d", line)] == ["none", "robust",
                                                                      "calibrated"]
    report = folder / "heat-report"
    page = (report / "index.html").read_text(encoding="utf-8")
    assert "Computation noise at scale" in page and (report / "noise-0.png").is_file()
