"""The three OTF2 readers give the same trace: the C reader into arrays
(:mod:`pevpm.trace.otf2.columns`, ``read_archive``'s default), the reference
reader through the OTF2 library's Python callbacks (``reference=True``), and
the ``otf2`` package's own iterator (which :mod:`pevpm.trace.otf2.callbacks`
falls back to)."""

import otf2
import pytest
from otf2.enums import Paradigm, Type
from test_scorep_archive import write_scorep_like

from pevpm.cli import main
from pevpm.errors import PevpmError
from pevpm.trace.events import CPU_ATTRIBUTE
from pevpm.trace.otf2 import callbacks as otf2_events
from pevpm.trace.otf2 import columns
from pevpm.trace.otf2.read import read_archive


def package_iterator(monkeypatch):
    """Make :func:`otf2_events.events` fall back to ``Reader.events``."""
    def missing(reader):
        raise AttributeError("no such piece in this otf2 package")
    monkeypatch.setattr(otf2_events, "_Callbacks", missing)


@pytest.mark.parametrize("archive", ["c_trace", "py_trace"])
def test_callbacks_read_what_the_package_iterator_reads(archive, request, monkeypatch):
    directory = request.getfixturevalue(archive)[0]
    fast = read_archive(directory)
    assert fast == read_archive(directory, reference=True)
    package_iterator(monkeypatch)
    slow = read_archive(directory, reference=True)
    assert fast == slow
    assert fast.numprocs == 2 and all(len(calls) > 5 for calls in fast.ranks)
    assert any(call.events for call in fast.ranks[0])


def write_with_attributes(directory):
    """One rank: Init, a Comm_rank whose Enter has the CPU seconds (a double) and a
    string attribute, Finalize."""
    with otf2.writer.open(str(directory), timer_resolution=1_000_000) as trace:
        d = trace.definitions
        group = d.location_group("rank 0", system_tree_parent=d.system_tree_node("node"))
        writer = trace.event_writer_from_location(d.location("rank 0", group=group))
        cpu = d.attribute(CPU_ATTRIBUTE, "CPU seconds", Type.DOUBLE)
        note = d.attribute("note", "a string", Type.STRING)
        for start, name, attributes in ((0, "MPI_Init", None),
                                        (10, "MPI_Comm_rank", {cpu: 0.25, note: "gap"}),
                                        (20, "MPI_Finalize", {cpu: 0.5})):
            region = d.region(name, paradigm=Paradigm.MPI)
            writer.enter(start, region, attributes=attributes)
            writer.leave(start + 5, region)


def test_attributes_read_alike(tmp_path, monkeypatch):
    write_with_attributes(tmp_path)
    fast = read_archive(tmp_path)
    assert [call.cpu for call in fast.ranks[0]] == [None, 0.25, 0.5]
    assert fast == read_archive(tmp_path, reference=True)
    package_iterator(monkeypatch)
    assert fast == read_archive(tmp_path, reference=True)


def test_a_scorep_archive_reads_alike(tmp_path, monkeypatch):
    write_scorep_like(tmp_path)
    fast = read_archive(tmp_path)
    assert fast == read_archive(tmp_path, reference=True)
    package_iterator(monkeypatch)
    assert fast == read_archive(tmp_path, reference=True)


def test_an_error_in_a_callback_stops_the_read_with_that_error(c_trace, monkeypatch):
    def broken(*args):
        raise PevpmError("no such region", "test")
    monkeypatch.setattr(otf2_events.otf2_events.Leave, "_construct", broken)
    with pytest.raises(PevpmError, match="no such region"):
        read_archive(c_trace[0], reference=True)


def test_the_c_reader_leaves_what_the_reference_reports_to_it(tmp_path, monkeypatch):
    """A negative CPU time: the C reader gives the archive back (None) and
    ``read_archive`` reports it in the reference reader's words."""
    with otf2.writer.open(str(tmp_path), timer_resolution=1_000_000) as trace:
        d = trace.definitions
        group = d.location_group("rank 0", system_tree_parent=d.system_tree_node("node"))
        writer = trace.event_writer_from_location(d.location("rank 0", group=group))
        region = d.region("MPI_Init", paradigm=Paradigm.MPI)
        writer.enter(0, region, attributes={d.attribute(CPU_ATTRIBUTE, "", Type.DOUBLE): -1.0})
        writer.leave(5, region)
    with otf2.reader.open(str(tmp_path / "traces.otf2")) as reader:
        assert columns.read_columns(reader, list(reader.definitions.locations)) is None
    with pytest.raises(PevpmError, match="rank 0: an Enter's pevpm::cpu attribute is -1.0"):
        read_archive(tmp_path)


def test_without_the_c_reader_the_reference_reads(c_trace, monkeypatch):
    fast = read_archive(c_trace[0])
    monkeypatch.setattr(columns, "fastread", None)
    assert read_archive(c_trace[0]) == fast


def test_replay_says_when_the_c_reader_is_not_built(tmp_path, monkeypatch, capsys):
    write_with_attributes(tmp_path)
    monkeypatch.setattr(columns, "UNAVAILABLE", "the compiled OTF2 reader is not built (test)")
    monkeypatch.setattr(columns, "fastread", None)
    assert main(["replay", str(tmp_path), "--machine", "constant:latency=1us"]) == 0
    assert capsys.readouterr().err == (
        "pevpm replay: note: the compiled OTF2 reader is not built (test)\n"
        "pevpm replay: note: replayed through model statements, not in arrays (slower, at most "
        "about 330,000 calls): the compiled OTF2 reader does not read it\n")
