"""pevpm: predict how a message-passing program performs before running it at scale.

The names a program needs are importable from the package itself; each is
loaded on first use, so ``import pevpm`` (and ``pevpm --help``) stays light:

>>> from pevpm import ModelBuilder, parse_machine, predict
>>> b = ModelBuilder()
>>> b.serial("1.0 / numprocs")
>>> b.collective("MPI_Barrier")
>>> p = predict(b.build(), 4, parse_machine("constant:latency=1e-6"), runs=3)
>>> round(p.mean, 6)
0.250002

``load_model(path)`` reads annotated source or a Python model file;
``Profile.open(path)`` opens a machine profile.  Everything else lives in
the subpackages (docs/architecture.md).
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

#: Public name -> the module that defines it (imported when the name is first used).
PUBLIC: dict[str, str] = {
    "ModelBuilder": "pevpm.model.builder",
    "load_model": "pevpm.model.loader",
    "parse_machine": "pevpm.machine.presets",
    "predict": "pevpm.vm.strategies.montecarlo",
    "Prediction": "pevpm.vm.strategies.prediction",
    "Profile": "pevpm.profile.store",
}

__all__ = ["ModelBuilder", "Prediction", "Profile", "__version__", "load_model",
           "parse_machine", "predict"]


def __getattr__(name: str):
    """Load a public name from its module on first use (PEP 562)."""
    if name not in PUBLIC:
        raise AttributeError(f"module 'pevpm' has no attribute {name!r}")
    value = getattr(importlib.import_module(PUBLIC[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *PUBLIC})
