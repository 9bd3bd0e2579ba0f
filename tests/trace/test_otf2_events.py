"""Events read through the OTF2 library's callbacks give the same trace as the
``otf2`` package's own iterator (which :mod:`pevpm.trace.otf2.callbacks` falls back to)."""

import otf2
import pytest
from otf2.enums import Paradigm, Type
from test_scorep_archive import write_scorep_like

from pevpm.errors import PevpmError
from pevpm.trace.events import CPU_ATTRIBUTE
from pevpm.trace.otf2 import callbacks as otf2_events
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
    package_iterator(monkeypatch)
    slow = read_archive(directory)
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
    package_iterator(monkeypatch)
    assert fast == read_archive(tmp_path)


def test_a_scorep_archive_reads_alike(tmp_path, monkeypatch):
    write_scorep_like(tmp_path)
    fast = read_archive(tmp_path)
    package_iterator(monkeypatch)
    assert fast == read_archive(tmp_path)


def test_an_error_in_a_callback_stops_the_read_with_that_error(c_trace, monkeypatch):
    def broken(*args):
        raise PevpmError("no such region", "test")
    monkeypatch.setattr(otf2_events.otf2_events.Leave, "_construct", broken)
    with pytest.raises(PevpmError, match="no such region"):
        read_archive(c_trace[0])
