"""Error messages name what the user wrote, never an internal sentinel (issue 30,
item 5): a collective rooted at MPI_PROC_NULL says MPI_PROC_NULL."""

from pevpm.cli import main


def test_a_root_of_mpi_proc_null_is_named(tmp_path, capsys):
    model = tmp_path / "m.c"
    model.write_text("// PEVPM Message type = MPI_Bcast\n// PEVPM & size = 8\n"
                     "// PEVPM & root = MPI_PROC_NULL\n")
    assert main(["predict", str(model), "-n", "2", "--runs", "2", "--machine",
                 "constant:latency=1e-6"]) == 2
    err = capsys.readouterr().err
    assert "root MPI_PROC_NULL is outside 0..1" in err and "1000003" not in err
