"""Old module paths that moved when the packages were layered, still importable.

pevpm 0.1's modules lived where they were first written (profiles and
statistics inside ``pevpm.machine``, command modules inside each package).
They now live in layers (see docs/architecture.md); :data:`MOVED` maps
each old path to its new one, and :func:`install` lets ``import`` of an old
path return the new module with a :class:`DeprecationWarning`, so scripts
written against 0.1 keep working.

>>> import warnings
>>> with warnings.catch_warnings(record=True) as caught:
...     warnings.simplefilter("always")
...     from pevpm.machine.distributions import PearsonV
>>> PearsonV.__module__, caught[0].category.__name__
('pevpm.stats.distributions', 'DeprecationWarning')
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings

#: Old module path -> where that module lives now.
MOVED: dict[str, str] = {
    "pevpm.machine.distributions": "pevpm.stats.distributions",
    "pevpm.machine.fitting": "pevpm.stats.fitting",
    "pevpm.machine.histogram": "pevpm.stats.histogram",
    "pevpm.machine.outliers": "pevpm.stats.outliers",
    "pevpm.machine.trends": "pevpm.stats.trends",
    "pevpm.machine.profile": "pevpm.profile.store",
    "pevpm.machine.profile_fits": "pevpm.profile.fits",
    "pevpm.machine.synthetic": "pevpm.profile.synthetic",
    "pevpm.machine.scoreboard": "pevpm.vm.scoreboard",
    "pevpm.machine.comm_model": "pevpm.machine.transfer",
    "pevpm.vm.collectives.options": "pevpm.machine.collectives",
    "pevpm.vm.collectives.signature": "pevpm.validate.signature",
    "pevpm.vm.collectives.arguments": "pevpm.cli.arguments",
    "pevpm.validate.demo": "pevpm.cli.demo",
    "pevpm.vm.commands": "pevpm.cli.predict",
    "pevpm.model.commands": "pevpm.cli.model",
    "pevpm.bench.commands": "pevpm.cli.bench",
    "pevpm.machine.commands": "pevpm.cli.machine",
    "pevpm.analytic.commands": "pevpm.cli.analytic",
    "pevpm.validate.commands": "pevpm.cli.validate",
    "pevpm.report.commands": "pevpm.cli.report",
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old path in :data:`MOVED` and loads it as the new module."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in MOVED:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec):
        new = MOVED[spec.name]
        warnings.warn(f"{spec.name} moved to {new}; import it from there",
                      DeprecationWarning, stacklevel=3)
        return importlib.import_module(new)

    def exec_module(self, module) -> None:
        """The new module is already executed."""


def install() -> None:
    """Make the old paths importable (idempotent; ``import pevpm`` calls it)."""
    if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
        sys.meta_path.append(_MovedModules())
