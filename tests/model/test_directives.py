"""The directive parser: every directive, both block layouts, units, names."""

from pathlib import Path

import pytest

from pevpm.errors import DirectiveError
from pevpm.model.ast import Call, Condition, Loop, Message, Runon, Serial
from pevpm.model.directives import parse_directives
from pevpm.model.expr import Expr
from pevpm.model.source import scan

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def parse(text, language="c", **kw):
    return parse_directives(text, "t.c", language, **kw)


def test_scan_classifies_lines_and_keeps_columns():
    lines = scan("int x;\n  // PEVPM Serial time = 1\n//PEVPM &  a = 2\n// PEVPM {\n", "c")
    assert [(d.kind, d.text, d.line, d.col) for d in lines] == [
        ("head", "Serial time = 1", 2, 12), ("cont", "  a = 2", 3, 10), ("open", "{", 4, 10)]


def test_comment_markers_per_language():
    c = parse("// PEVPM Serial time = 2\n")
    f = parse("! PEVPM Serial time = 2\n", "fortran")
    py = parse("# PEVPM Serial time = 2\n", "python")
    assert c.body == f.body == py.body == (Serial(Expr.of(2)),)


def test_c_comments_inside_directives_are_ignored():
    model = parse("// PEVPM Loop iterations = 3\n// PEVPM {\n"
                  "// PEVPM /* The model for the loop body goes here */\n// PEVPM }\n")
    assert model.body == (Loop(Expr.of(3), ()),)


def test_message_attributes():
    model = parse("""
// PEVPM Message type = MPI_Isend
// PEVPM &       size = 8*sizeof(double)
// PEVPM &       from = procnum
// PEVPM &       to = (procnum + 1) % numprocs
// PEVPM &       tag = 7
// PEVPM &       req/stat = r1
// PEVPM Message type = MPI_Waitall
// PEVPM &       req = r1, r2
// PEVPM Message type = MPI_Recv
// PEVPM &       size = 64
// PEVPM &       from = MPI_ANY_SOURCE
// PEVPM &       to = procnum
""")
    isend, waitall, recv = model.body
    assert isend == Message("MPI_Isend", Expr.of("8*sizeof(double)"), Expr.of("procnum"),
                            Expr.of("(procnum+1)%numprocs"), Expr.of(7), request="r1")
    assert waitall == Message("MPI_Waitall", requests=("r1", "r2"))
    assert recv.src == Expr.of("MPI_ANY_SOURCE") and recv.size == Expr.of(64)


def test_collectives_take_root_from_root_or_the_rooted_end():
    model = parse("""
// PEVPM Message type = MPI_Bcast
// PEVPM &       size = 1024
// PEVPM &       from = 2
// PEVPM &       to = 0..numprocs-1
// PEVPM Message type = MPI_Reduce
// PEVPM &       size = 8
// PEVPM &       to = 1
// PEVPM Message type = MPI_Alltoall
// PEVPM &       size = 16
// PEVPM Message type = MPI_Gather
// PEVPM &       size = 4
// PEVPM &       root = numprocs - 1
""")
    bcast, reduce_, alltoall, gather = model.body
    assert bcast == Message("MPI_Bcast", Expr.of(1024), root=Expr.of(2))
    assert reduce_.root == Expr.of(1)
    assert alltoall.root is None and alltoall.size == Expr.of(16)
    assert gather.root == Expr.of("numprocs - 1")


def test_loop_with_index_scopes_the_name():
    model = parse("// PEVPM Loop iterations = numprocs - 1\n// PEVPM &    index = w\n"
                  "// PEVPM {\n// PEVPM Serial time = w * 0.5\n// PEVPM }\n")
    assert model.body == (Loop(Expr.of("numprocs - 1"), (Serial(Expr.of("w * 0.5")),), "w"),)
    with pytest.raises(DirectiveError, match="unknown name 'w'"):
        parse("// PEVPM Loop iterations = 2\n// PEVPM &    index = w\n// PEVPM {\n"
              "// PEVPM }\n// PEVPM Serial time = w\n")


def test_sibling_and_differently_named_nested_loops_keep_their_indices():
    inner = "// PEVPM Loop iterations = 2\n// PEVPM &    index = {}\n// PEVPM {{\n// PEVPM }}\n"
    model = parse("// PEVPM Loop iterations = 3\n// PEVPM &    index = i\n// PEVPM {\n"
                  + inner.format("j") + "// PEVPM Serial time = i\n// PEVPM }\n"
                  + inner.format("i"))
    outer, sibling = model.body
    assert (outer.index, outer.body[0].index, sibling.index) == ("i", "j", "i")


ARMS_FIRST = """
// PEVPM Condition c1 = 3
// PEVPM &         c2 = 1
// PEVPM {
// PEVPM Serial time = 1
// PEVPM }
// PEVPM {
// PEVPM Serial time = 2
// PEVPM }
"""

INTERLEAVED = """
// PEVPM Condition c1 = 3
// PEVPM {
// PEVPM Serial time = 1
// PEVPM }
// PEVPM & c2 = 1
// PEVPM {
// PEVPM Serial time = 2
// PEVPM }
"""


def test_both_block_layouts_give_the_same_condition():
    first, interleaved = parse(ARMS_FIRST), parse(INTERLEAVED)
    assert first == interleaved
    (cond,) = first.body
    assert isinstance(cond, Condition)
    assert [(b.name, str(b.guard), b.body) for b in cond.branches] == [
        ("c1", "3", (Serial(Expr.of(1)),)), ("c2", "1", (Serial(Expr.of(2)),))]


def test_runon_rank_lists_become_predicates():
    model = parse("// PEVPM Runon c1 = 1,2,3,8..10\n// PEVPM &      c2 = 0\n"
                  "// PEVPM &      c3 = procnum > numprocs / 2\n"
                  "// PEVPM {\n// PEVPM }\n// PEVPM {\n// PEVPM }\n// PEVPM {\n// PEVPM }\n")
    (runon,) = model.body
    assert isinstance(runon, Runon)
    c1, c2, c3 = (b.guard for b in runon.branches)
    assert [r for r in range(12) if c1.evaluate({"procnum": r})] == [1, 2, 3, 8, 9, 10]
    assert str(c2) == "procnum == 0"
    assert [r for r in range(6) if c3.evaluate({"procnum": r, "numprocs": 6})] == [4, 5]


def test_serial_on_and_time_units():
    model = parse("// PEVPM Default time unit = ms\n"
                  "// PEVPM Serial on perseus time = 3.24/numprocs\n"
                  "// PEVPM Serial on orion time = 5 us\n// PEVPM Serial time = 2 s\n")
    perseus, orion, plain = model.body
    assert perseus.on == "perseus" and perseus.time.evaluate({"numprocs": 2}) == \
        pytest.approx(1.62e-3)
    assert orion.time.evaluate({}) == pytest.approx(5e-6)
    assert plain.time.evaluate({}) == 2


def test_machine_declarations_and_parameters():
    model = parse("""
// PEVPM Processor description = perseus
// PEVPM &         timing basis = 500
// PEVPM Network description = fastether
// PEVPM &       link l0 = node0 switch profiles/perseus.db
// PEVPM Default processor = perseus
// PEVPM &       numprocs = 16
// PEVPM &       speed = 450
// PEVPM &       speed_3 = 1000
// PEVPM &       network = fastether
// PEVPM Parameter iterations = 1000
// PEVPM &         t = 2 * 1.5
""")
    assert model.processors["perseus"].timing_basis == 500.0
    (link,) = model.networks["fastether"].links
    assert (link.name, link.src, link.dst, link.profile) == ("l0", "node0", "switch",
                                                           "profiles/perseus.db")
    d = model.defaults
    assert (d.processor, d.numprocs, d.speed, dict(d.speeds), d.network) == (
        "perseus", 16, 450.0, {3: 1000.0}, "fastether")
    assert model.parameters == {"iterations": 1000, "t": 3.0}


def test_subroutines_and_calls():
    model = parse("// PEVPM Call name = halo\n// PEVPM Subroutine name = halo\n// PEVPM {\n"
                  "// PEVPM Serial time = 1\n// PEVPM }\n")
    assert model.body == (Call("halo"),)
    assert model.subroutines == {"halo": (Serial(Expr.of(1)),)}


def test_constants_come_from_the_program_and_parameters_anywhere():
    model = parse("int xsize = 256;\n#define ROWS (xsize / 4)\n"
                  "// PEVPM Serial time = ROWS * xsize * parameter t_point\n")
    assert model.constants == {"xsize": 256, "ROWS": 64}
    assert model.body[0].time.evaluate({**model.constants, "t_point": 1e-9}) == \
        pytest.approx(64 * 256e-9)


def test_program_values_of_procnum_and_numprocs_are_not_constants():
    model = parse("int numprocs = 4, procnum = 0, n = 2;\n// PEVPM Serial time = n / numprocs\n")
    assert model.constants == {"n": 2}


def test_expression_places_point_into_the_source():
    model = parse("\n// PEVPM Serial time = 1 / parameter t\n")
    assert model.body[0].time.where == "t.c:2:24"
    assert model.body[0].loc.line == 2 and model.body[0].loc.col == 10


@pytest.mark.parametrize("name", ["jacobi/jacobi.c", "bag_of_tasks/bag_of_tasks.c",
                                  "fft2d/fft2d.c"])
def test_example_models_parse(name):
    path = EXAMPLES / name
    model = parse_directives(path.read_text(), str(path))
    assert isinstance(model.body[0], (Loop, Runon))
    assert model.parameters


def test_jacobi_structure_matches_figure_86():
    path = EXAMPLES / "jacobi" / "jacobi.c"
    model = parse_directives(path.read_text(), str(path))
    (loop,) = model.body
    assert str(loop.count) == "parameter iterations"
    runon, *serials = loop.body
    assert [s.on for s in serials] == ["perseus", "orion", "sc"]
    even, odd = runon.branches
    ops = [[m.op for m in _messages(b.body)] for b in (even, odd)]
    assert ops == [["MPI_Send", "MPI_Send", "MPI_Recv", "MPI_Recv"],
                   ["MPI_Recv", "MPI_Recv", "MPI_Send", "MPI_Send"]]
    assert all(str(m.size) == "xsize * sizeof(float)" for m in _messages(loop.body))
    assert model.constants["xsize"] == 256


def _messages(body):
    from pevpm.model.ast import walk

    return [s for s in walk(body) if isinstance(s, Message)]


def test_appendix_a_layout_verbatim():
    model = parse("""
// PEVPM Condition c1 = 1
// PEVPM {
// PEVPM  /* The model for condition1 must be inserted here */
// PEVPM }
// PEVPM & c2 = 3
// PEVPM {
// PEVPM  /* The model for condition 2 must be inserted here */
// PEVPM }
""")
    (cond,) = model.body
    assert [(b.name, str(b.guard), b.body) for b in cond.branches] == [
        ("c1", "1", ()), ("c2", "3", ())]


def test_section_3_4_4_runon_example():
    model = parse("""
// PEVPM Runon c1 = procnum < (numprocs / 2)
// PEVPM &      c2 = procnum > (numprocs / 2)
// PEVPM {
// PEVPM }
// PEVPM {
// PEVPM }
""")
    c1, c2 = (b.guard for b in model.body[0].branches)
    env = {"numprocs": 5}
    assert [r for r in range(5) if c1.evaluate({**env, "procnum": r})] == [0, 1]
    assert [r for r in range(5) if c2.evaluate({**env, "procnum": r})] == [3, 4]
