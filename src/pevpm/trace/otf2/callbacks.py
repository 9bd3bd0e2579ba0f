"""An OTF2 archive's events through the OTF2 library's callbacks, without the layers.

The ``otf2`` package's own iterator (``Reader.events``) passes every record
through several Python wrappers and asks the library for each record's
attribute list, whether it has one or not: about 8 us a record, most of the
time ``pevpm replay`` spent on a long trace.  :func:`events` registers one plain
callback per record type pevpm reads (region Enter and Leave and the MPI
point-to-point, request and collective-end records), builds the same
``otf2.events`` objects from the record's fields (the attributes only of a
record that has some) and yields them as ``Reader.events`` does, as
``(location, event)`` in the archive's time order -- several times faster.
Where the installed ``otf2`` package lacks a piece it uses, it falls back to
``Reader.events``.

    with otf2.reader.open("run/traces.otf2") as reader:
        for location, event in events(reader):
            ...
"""

from __future__ import annotations

import ctypes
import importlib
from collections.abc import Iterator

from otf2 import attribute_value
from otf2 import events as otf2_events
from otf2.enums import Type

#: The record types read (the others add nothing to a trace's calls).
RECORDS = ("Enter", "Leave", "MpiSend", "MpiIsend", "MpiIsendComplete", "MpiIrecvRequest",
           "MpiRecv", "MpiIrecv", "MpiCollectiveEnd")

#: Records the library hands over per read (then they are yielded).
BATCH = 65536

#: The attribute value field of each numeric type (others: ``attribute_value.parse``).
NUMERIC_FIELDS = {int(getattr(Type, name).value): field for name, field in (
    ("UINT8", "uint8"), ("UINT16", "uint16"), ("UINT32", "uint32"), ("UINT64", "uint64"),
    ("INT8", "int8"), ("INT16", "int16"), ("INT32", "int32"), ("INT64", "int64"),
    ("FLOAT", "float32"), ("DOUBLE", "float64"))}


def events(reader) -> Iterator[tuple[object, object]]:
    """``(location, event)`` of every :data:`RECORDS` record of ``reader`` (an open
    ``otf2.reader.Reader``), in time order, as its ``events`` gives them."""
    try:
        callbacks = _Callbacks(reader)
    except (AttributeError, ImportError):     # another otf2 package: its own iterator
        yield from ((location, event) for location, event in reader.events
                    if type(event).__name__ in RECORDS)
        return
    yield from callbacks.read()


class _Callbacks:
    """The C callbacks of one read and the records they collected."""

    def __init__(self, reader):
        self.lib = importlib.import_module("_otf2.Config").conf.lib
        self.types = importlib.import_module("_otf2.GlobalEvtReaderCallbacks")
        self.api = importlib.import_module("_otf2")
        self.reader, self.defs = reader, reader.definitions
        self.buffer: list[tuple] = []
        self.failure: BaseException | None = None
        self.locations: dict[int, object] = {}
        self.attribute_reader()
        # each (name, C function pointer) made before anything is registered
        self.pointers = [(name, getattr(self.types, f"_GlobalEvtReaderCallback_FP_{name}")(
            self.callback(getattr(otf2_events, name)))) for name in RECORDS]

    def callback(self, kind):
        """The C callback building a ``kind`` event from a record's fields."""
        construct, defs, count = kind._construct, self.defs, self.count
        append, location_of, attributes_of = self.buffer.append, self.location, self.attributes

        def record(location, time, _user, attributes, *fields):
            try:
                event = construct(defs, time, *fields)
                event.attributes = (attributes_of(attributes)
                                    if attributes and count(attributes) else None)
                append((location_of(location), event))
                return 0
            except BaseException as exc:  # noqa: BLE001 - raised again after the read
                self.failure = exc
                return 1                    # OTF2_CALLBACK_ERROR: the read stops
        return record

    def attribute_reader(self) -> None:
        """The library's attribute list functions, their argument types set once
        (as the ``_otf2`` wrappers set them on every call)."""
        api = importlib.import_module("_otf2.AttributeList")
        errors = importlib.import_module("_otf2.ErrorCodes")
        values = importlib.import_module("_otf2.AttributeValue")
        refs = importlib.import_module("_otf2.GeneralDefinitions")
        listing = ctypes.POINTER(api.AttributeList)
        self.count = self.lib.OTF2_AttributeList_GetNumberOfElements
        self.count.argtypes, self.count.restype = [listing], ctypes.c_uint32
        get = self.lib.OTF2_AttributeList_GetAttributeByIndex
        get.argtypes = [listing, ctypes.c_uint32, ctypes.POINTER(refs.AttributeRef),
                        ctypes.POINTER(refs.Type), ctypes.POINTER(values.AttributeValue)]
        get.restype, get.errcheck = errors.ErrorCode, errors.HandleErrorCode
        self.get_attribute = get
        self.slots = (refs.AttributeRef(), refs.Type(), values.AttributeValue())

    def attributes(self, listing) -> dict:
        """A record's attributes, as ``otf2`` gives them: ``{Attribute: value}``."""
        ref, kind, value = self.slots
        found = {}
        for index in range(self.count(listing)):
            self.get_attribute(listing, index, ctypes.byref(ref), ctypes.byref(kind),
                               ctypes.byref(value))
            field = NUMERIC_FIELDS.get(kind.value)
            found[self.defs.attributes[ref.value]] = (
                getattr(value, field) if field else attribute_value.parse(self.defs, value, kind))
        return found

    def location(self, ref: int):
        found = self.locations.get(ref)
        if found is None:
            found = self.locations[ref] = self.defs.locations[ref]
        return found

    def read(self) -> Iterator[tuple[object, object]]:
        handle = self.reader._get_global_evt_reader_handle(None)
        table = self.api.GlobalEvtReaderCallbacks_New()
        pointer_to_table = ctypes.POINTER(self.types.GlobalEvtReaderCallbacks)
        try:
            for name, pointer in self.pointers:
                register = getattr(self.lib, f"OTF2_GlobalEvtReaderCallbacks_Set{name}Callback")
                register.argtypes = [pointer_to_table, type(pointer)]
                register(table, pointer)
            self.api.GlobalEvtReader_SetCallbacks(handle, table, None)
        finally:
            self.api.GlobalEvtReaderCallbacks_Delete(table)
        while True:
            try:
                read = self.api.GlobalEvtReader_ReadEvents(handle, BATCH)
            except Exception:
                if self.failure is not None:
                    raise self.failure from None
                raise
            batch, self.buffer[:] = list(self.buffer), []
            yield from batch
            if read < BATCH:
                return
