"""docs/tutorial.md works as written: every ``sh`` block runs, in order, on small sizes.

The blocks run with bash in a scratch folder (``examples`` linked in), with
``pevpm``, ``python`` and ``mpiexec`` from this interpreter's environment.
:data:`SMALLER` shrinks problem sizes, process counts and Monte Carlo runs;
each of its patterns must occur in the page, so the test notices when the page
changes under it.
"""

from __future__ import annotations

import re

import pytest
from guide_pages import MPIEXEC, ROOT, run_blocks, scratch_folder

from pevpm.model.loader import load_model
from pevpm.model.printer import to_directives

TUTORIAL = ROOT / "docs" / "tutorial.md"

#: (pattern in the page, what the test runs instead)
SMALLER = [
    ("--nx 512 --ny 512 --iterations 200", "--nx 64 --ny 64 --iterations 5"),
    ("calibrate.py --nx 512", "calibrate.py --nx 64 --rows 8,16,32 --repeats 2 --batch 0.005"),
    ("-n 1..1024", "-n 1..8"),
    ("-D nx=8192 -D ny=8192 -D iterations=10", "-D nx=256 -D ny=256 -D iterations=2"),
    ("--runs 20", "--runs 2"),
    ("--runs 10", "--runs 2"),
    ("--runs 5", "--runs 2"),
]


def test_every_size_the_test_shrinks_is_in_the_page():
    text = TUTORIAL.read_text()
    assert [p for p, _ in SMALLER if p not in text] == []


def test_the_two_models_of_the_program_are_the_same():
    directives = load_model(ROOT / "examples" / "tutorial" / "cg.py")
    builder = load_model(ROOT / "examples" / "tutorial" / "model.py")
    assert to_directives(directives) == to_directives(builder)


@pytest.fixture
def workspace(tmp_path):
    return scratch_folder(tmp_path)


@pytest.mark.slow
@pytest.mark.mpi
@pytest.mark.skipif(not MPIEXEC.exists(), reason="mpiexec not found next to the interpreter")
def test_the_tutorial_runs_step_by_step(workspace):
    folder, env = workspace
    text = run_blocks(TUTORIAL, SMALLER, folder, env)
    assert "cg: 1 ranks, 64 x 64, 5 iterations" in text
    assert "cg: 2 ranks, 64 x 64, 5 iterations" in text
    assert "examples/tutorial/cg.py: no problems found" in text
    assert re.search(r"-D t_matvec_call=\S+ -D t_matvec_cell=\S+", text)
    assert "speedup and efficiency relative to 1 rank" in text
    assert re.search(r"^\s+8\s+\d", text, flags=re.MULTILINE)          # the scaling table reached 8
    assert "serial fraction s = " in text
    assert (folder / "cg-2.trace.json").stat().st_size > 0
    assert (folder / "model-directives.txt").read_text().startswith("# PEVPM")
