"""A calibration file: measured region times as model parameters.

``pevpm calibrate`` writes one, ``pevpm predict --calibration FILE`` reads
it.  Each region ``NAME`` becomes two parameters, ``t_NAME`` (the mean
seconds per call after MPIBench's outlier rule removed descheduled calls)
and ``t_NAME_sd`` (their standard deviation), ready for a model's
``Serial time = gamma(t_NAME, t_NAME_sd)``.  The file keeps the robust
summary of every region and the machine's load around the measurement.

>>> times = [1e-3, 3e-3] * 50 + [40e-3]          # the last call was descheduled
>>> cal = Calibration.from_region_times({"update": times}, source="demo")
>>> cal.regions["update"].outliers
1
>>> cal.defines()
['-D', 't_update=0.002', '-D', 't_update_sd=0.001']
"""

from __future__ import annotations

import json
import platform
from dataclasses import dataclass, field
from pathlib import Path

from pevpm.calibrate.robust import RobustSummary, robust_summary
from pevpm.errors import PevpmError
from pevpm.files import read_json
from pevpm.host import MachineState
from pevpm.values import checked_number

FORMAT = "pevpm-parameters/1"


@dataclass(frozen=True)
class Calibration:
    """Region summaries, the parameters derived from them, and where they were taken."""

    regions: dict[str, RobustSummary]
    parameters: dict[str, float]
    source: str
    host: str = field(default_factory=platform.node)
    states: tuple[MachineState, ...] = ()
    disturbed: str | None = None

    @classmethod
    def from_region_times(cls, times: dict[str, list[float]], source: str,
                          prefix: str = "t_", states: tuple[MachineState, ...] = (),
                          disturbed: str | None = None) -> Calibration:
        """Summarise each region's times and name its parameters ``PREFIX + name``."""
        if not prefix.isidentifier():
            raise PevpmError(f"parameter prefix {prefix!r} is not the start of a name")
        regions = {name: robust_summary(values) for name, values in sorted(times.items())}
        parameters: dict[str, float] = {}
        for name, summary in regions.items():
            parameters[f"{prefix}{name}"] = summary.body_mean
            parameters[f"{prefix}{name}_sd"] = summary.body_sd
        return cls(regions, parameters, source, states=states, disturbed=disturbed)

    def defines(self) -> list[str]:
        """The parameters as ``pevpm predict`` options."""
        return [item for name, value in self.parameters.items()
                for item in ("-D", f"{name}={value:.6g}")]

    def to_dict(self) -> dict:
        """The file's content: format tag, source, host, parameters, regions, load."""
        return {"format": FORMAT, "source": self.source, "host": self.host,
                "parameters": self.parameters,
                "regions": {name: s.to_dict() for name, s in self.regions.items()},
                "machine_states": [state.to_dict() for state in self.states],
                "disturbed": self.disturbed}

    def save(self, path: str | Path) -> None:
        """Write the calibration file (JSON) to ``path``."""
        try:
            Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n")
        except OSError as exc:
            raise PevpmError(f"cannot write the calibration: {exc.strerror}", str(path)) from None


def load_parameters(path: str | Path) -> dict[str, float]:
    """The parameters of a calibration file, checked: finite numbers, valid names.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "c.json")
    >>> Calibration.from_region_times({"io": [0.5, 0.5]}, source="demo").save(path)
    >>> load_parameters(path)
    {'t_io': 0.5, 't_io_sd': 0.0}
    """
    try:
        data = read_json(path, "calibration")
    except PevpmError as exc:
        if exc.message.startswith("not a JSON file"):
            raise PevpmError("not a calibration file (not JSON)", str(path)) from None
        raise
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise PevpmError(f"not a calibration file written by pevpm calibrate "
                         f"(expected format {FORMAT})", str(path))
    parameters = data.get("parameters")
    if not isinstance(parameters, dict):
        raise PevpmError("calibration file has no parameters", str(path))
    for name, value in parameters.items():
        if not (isinstance(name, str) and name.isidentifier()):
            raise PevpmError(f"parameter name {name!r} is not a name", str(path))
        parameters[name] = checked_number(value, str(path), f"parameter {name}")
    return dict(parameters)
