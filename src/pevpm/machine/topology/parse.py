"""A ``--topology`` value to its network: a generator spec (:mod:`.specs`), a
SimGrid platform file (a path ending ``.xml``, :mod:`.simgrid`) or pevpm's own
description (``.yaml``/``.yml``, :mod:`.ownfile`).

>>> parse_topology(" torus:4x4 ").nodes
16
>>> parse_topology("no-such.yaml")
Traceback (most recent call last):
pevpm.errors.PevpmError: no-such.yaml: no such topology file
"""

from __future__ import annotations

from pathlib import Path

from pevpm.errors import PevpmError
from pevpm.machine.topology.network import Network
from pevpm.machine.topology.specs import parse_spec


def parse_topology(text: str) -> Network:
    """The network a ``--topology`` value names (see module doc)."""
    text = text.strip()
    suffix = text.lower()
    if not suffix.endswith((".xml", ".yaml", ".yml")):
        return parse_spec(text)
    if not Path(text).is_file():
        raise PevpmError("no such topology file", text)
    if suffix.endswith(".xml"):
        from pevpm.machine.topology.simgrid import read_platform
        return read_platform(text)
    from pevpm.machine.topology.ownfile import read_description
    return read_description(text)
