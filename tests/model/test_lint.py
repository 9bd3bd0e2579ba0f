"""pevpm check: the checks and balances on annotated sources."""

from pathlib import Path

import pytest

from pevpm.model.lint import lint_file, lint_source

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples").glob("*/*.c"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_examples_are_clean(path):
    assert lint_file(path) == []


def messages(text, language="c"):
    return [str(f) for f in lint_source(text, "p.c", language)]


def test_mpi_call_without_message_directive():
    src = """
// PEVPM Message type = MPI_Send
// PEVPM &       size = 4
// PEVPM &       to = 1
MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &s);  /* not annotated */
// PEVPM Message type = MPI_Send
// PEVPM &       size = 4
// PEVPM &       to = 1
MPI_Isend(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &r);  /* wrong type */
MPI_Comm_rank(MPI_COMM_WORLD, &rank);                   /* not an operation */
"""
    assert messages(src) == [
        "p.c:6:1: MPI_Recv call has no Message directive before it",
        "p.c:10:1: MPI_Isend call has no Message directive before it"]


def test_mpi4py_and_fortran_calls_are_recognised():
    py = "# PEVPM Serial time = 1\ncomm.Send(buf, dest=1)\nreq = comm.irecv(source=0)\n"
    assert messages(py, "python") == [
        "p.c:2:6: MPI_Send call has no Message directive before it",
        "p.c:3:12: MPI_Irecv call has no Message directive before it"]
    f90 = "! PEVPM Serial time = 1\ncall MPI_BARRIER(MPI_COMM_WORLD, ierr)\n"
    assert messages(f90, "fortran") == [
        "p.c:2:6: MPI_Barrier call has no Message directive before it"]


def test_conditional_with_more_branches_than_arms():
    src = """
// PEVPM Runon c1 = 0
// PEVPM &      c2 = 1
// PEVPM {
// PEVPM }
// PEVPM {
// PEVPM }
if (procnum == 0) { a(); }
else if (procnum == 1) for (i = 0; i < 3; i++) if (x) b(); else c();
else { d(); }
// PEVPM Condition c1 = 1
// PEVPM {
// PEVPM }
if (x) y();
"""
    assert messages(src) == [
        "p.c:2:10: Runon has 2 arm(s) but the conditional at line 8 has 3 branches"]


def test_switch_labels_count_as_branches():
    src = """
// PEVPM Condition c1 = 1
// PEVPM &         c2 = 1
// PEVPM {
// PEVPM }
// PEVPM {
// PEVPM }
switch (kind) {
case 0: a(); break;
case 1: { switch (x) { case 5: case 6: break; } } break;
default: b();
}
"""
    assert messages(src) == [
        "p.c:2:10: Condition has 2 arm(s) but the conditional at line 8 has 3 branches"]


def test_python_and_fortran_conditionals():
    py = ("# PEVPM Condition c1 = 1\n# PEVPM {\n# PEVPM }\n"
          "if x:\n    if y:\n        pass\n    else:\n        pass\nelif z:\n    pass\n")
    assert messages(py, "python") == [
        "p.c:1:9: Condition has 1 arm(s) but the conditional at line 4 has 2 branches"]
    f90 = ("! PEVPM Runon c1 = 0\n! PEVPM {\n! PEVPM }\n"
           "if (rank == 0) then\n  if (a) then\n  else\n  end if\nelse\nend if\n")
    assert messages(f90, "fortran") == [
        "p.c:1:9: Runon has 1 arm(s) but the conditional at line 4 has 2 branches"]


def test_serial_segments_cover_declared_processors():
    src = """
// PEVPM Processor description = perseus
// PEVPM &         timing basis = 500
// PEVPM Processor description = orion
// PEVPM &         timing basis = 450
// PEVPM Serial on perseus time = 1
// PEVPM Serial on orion time = 2
// PEVPM Message type = MPI_Barrier
// PEVPM Serial on perseus time = 1
// PEVPM Serial on orin time = 2
// PEVPM Serial time = 3
"""
    assert messages(src) == [
        "p.c:9:10: Serial segment has no time for processor 'orion'",
        ("p.c:10:10: Serial on 'orin': no Processor directive declares it "
         "(did you mean 'orion'?)")]


def test_python_model_file_is_checked_as_a_model_not_as_code(tmp_path):
    path = tmp_path / "model.py"
    path.write_text("from pevpm.model.builder import ModelBuilder\n"
                    "def model():\n"
                    "    b = ModelBuilder()\n"
                    "    b.processor('perseus', 500)\n"
                    "    b.processor('orion', 450)\n"
                    "    b.serial(1.0, on='perseus')\n"
                    "    b.send(8, dest=1)\n"
                    "    return b\n")
    assert [str(f) for f in lint_file(path)] == [
        f"{path}:6:5: Serial segment has no time for processor 'orion'"]
