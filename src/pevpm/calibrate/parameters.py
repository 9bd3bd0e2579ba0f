"""A calibration file: measured region times as model parameters.

``pevpm calibrate`` writes one, ``pevpm predict --calibration FILE`` reads
it.  Each region ``NAME`` becomes two parameters, ``t_NAME`` (its centre,
seconds per call) and ``t_NAME_sd`` (its spread), ready for a model's
``Serial time = gamma(t_NAME, t_NAME_sd)``.  The file holds them under each
choice of *computation noise* (:data:`NOISE_MODES`):

* ``robust`` (the default): the median and 1.4826 x the median absolute
  deviation, which a few calls slowed by other jobs cannot drag off;
* ``calibrated``: the mean and sd of the calls left after MPIBench's
  outlier rule, the spread as measured, other users' jobs included;
* ``none``: the robust centre and no spread at all.

The spread matters at scale: at every synchronisation the slowest rank's
draw sets the pace, so a per-call spread grows into a run time that rises
with the rank count (docs/calibration.md, "Noise at scale").  The file also
keeps the full summary of every region and the machine's load around the
measurement.

>>> times = [1e-3, 3e-3] * 50 + [40e-3]          # the last call was descheduled
>>> cal = Calibration.from_region_times({"update": times}, source="demo")
>>> cal.regions["update"].outliers
1
>>> cal.defines()                                 # robust: the median and 1.4826 x MAD
['-D', 't_update=0.003', '-D', 't_update_sd=0.0029652']
>>> cal.defines("calibrated")
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

#: The choices of computation noise, the default first.
NOISE_MODES = ("robust", "calibrated", "none")
DEFAULT_NOISE = NOISE_MODES[0]

#: What each choice takes from a region's summary, for notes.
NOISE_MEANING = {
    "robust": "median and 1.4826 x MAD of each region's calls",
    "calibrated": "mean and sd of each region's calls after the outlier rule, as measured",
    "none": "median of each region's calls, no spread",
}


def centre_and_spread(summary: RobustSummary, noise: str) -> tuple[float, float]:
    """A region's ``(t, t_sd)`` under computation noise ``noise``.

    >>> s = robust_summary([1.0, 1.0, 1.0, 1.2, 4.0])
    >>> [tuple(round(v, 3) for v in centre_and_spread(s, mode)) for mode in NOISE_MODES]
    [(1.0, 0.0), (1.64, 1.183), (1.0, 0.0)]
    """
    if noise == "robust":
        return summary.median, summary.robust_sd
    if noise == "calibrated":
        return summary.body_mean, summary.body_sd
    if noise == "none":
        return summary.median, 0.0
    raise PevpmError(f"computation noise must be one of {', '.join(NOISE_MODES)}, "
                     f"got {noise!r}")


@dataclass(frozen=True)
class Calibration:
    """Region summaries, the parameters derived from them, and where they were taken."""

    regions: dict[str, RobustSummary]
    parameters: dict[str, float]
    source: str
    host: str = field(default_factory=platform.node)
    states: tuple[MachineState, ...] = ()
    disturbed: str | None = None
    noise: dict[str, dict[str, float]] = field(default_factory=dict)

    @classmethod
    def from_region_times(cls, times: dict[str, list[float]], source: str,
                          prefix: str = "t_", states: tuple[MachineState, ...] = (),
                          disturbed: str | None = None) -> Calibration:
        """Summarise each region's times and name its parameters ``PREFIX + name``."""
        if not prefix.isidentifier():
            raise PevpmError(f"parameter prefix {prefix!r} is not the start of a name")
        regions = {name: robust_summary(values) for name, values in sorted(times.items())}
        noise: dict[str, dict[str, float]] = {}
        for mode in NOISE_MODES:
            noise[mode] = {}
            for name, summary in regions.items():
                centre, spread = centre_and_spread(summary, mode)
                noise[mode][f"{prefix}{name}"] = centre
                noise[mode][f"{prefix}{name}_sd"] = spread
        return cls(regions, noise[DEFAULT_NOISE], source, states=states, disturbed=disturbed,
                   noise=noise)

    def defines(self, noise: str = DEFAULT_NOISE) -> list[str]:
        """The parameters under computation noise ``noise`` as ``pevpm predict`` options."""
        chosen = self.noise.get(noise, self.parameters) if self.noise else self.parameters
        return [item for name, value in chosen.items()
                for item in ("-D", f"{name}={value:.6g}")]

    def to_dict(self) -> dict:
        """The file's content: format tag, source, host, parameters (the default noise)
        and those of every noise choice, regions, load."""
        return {"format": FORMAT, "source": self.source, "host": self.host,
                "parameters": self.parameters, "default_noise": DEFAULT_NOISE,
                "noise": self.noise,
                "regions": {name: s.to_dict() for name, s in self.regions.items()},
                "machine_states": [state.to_dict() for state in self.states],
                "disturbed": self.disturbed}

    def save(self, path: str | Path) -> None:
        """Write the calibration file (JSON) to ``path``."""
        try:
            Path(path).write_text(json.dumps(self.to_dict(), indent=2) + "\n")
        except OSError as exc:
            raise PevpmError(f"cannot write the calibration: {exc.strerror}", str(path)) from None


def load_parameters(path: str | Path, noise: str | None = None) -> dict[str, float]:
    """The parameters of a calibration file under computation noise ``noise``
    (default: the file's own default), checked: finite numbers, valid names.
    A file written before the noise choices holds ``calibrated`` only.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "c.json")
    >>> Calibration.from_region_times({"io": [0.5, 0.7, 0.5]}, source="demo").save(path)
    >>> load_parameters(path), load_parameters(path, "calibrated")["t_io"]
    ({'t_io': 0.5, 't_io_sd': 0.0}, 0.5666666666666667)
    """
    return load_calibration(path, noise)[0]


def load_calibration(path: str | Path, noise: str | None = None) -> tuple[dict[str, float], str]:
    """:func:`load_parameters` and the noise they are for (the file's default when
    ``noise`` is None: ``calibrated`` for a file written before the choices).

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "c.json")
    >>> Calibration.from_region_times({"io": [0.5, 0.7, 0.5]}, source="demo").save(path)
    >>> load_calibration(path)[1], load_calibration(path, "none")
    ('robust', ({'t_io': 0.5, 't_io_sd': 0.0}, 'none'))
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
    if noise is not None:
        parameters = _noise_parameters(data, noise, str(path))
    else:
        noise = str(data.get("default_noise", "calibrated"))
    if not isinstance(parameters, dict):
        raise PevpmError("calibration file has no parameters", str(path))
    for name, value in parameters.items():
        if not (isinstance(name, str) and name.isidentifier()):
            raise PevpmError(f"parameter name {name!r} is not a name", str(path))
        parameters[name] = checked_number(value, str(path), f"parameter {name}")
    return dict(parameters), noise


def _noise_parameters(data: dict, noise: str, where: str):
    """The parameters a calibration file holds for computation noise ``noise``."""
    if noise not in NOISE_MODES:
        raise PevpmError(f"computation noise must be one of {', '.join(NOISE_MODES)}, "
                         f"got {noise!r}", "--compute-noise")
    table = data.get("noise")
    if table is None:               # written before the choices: the calibrated figures
        if noise == "calibrated":
            return data.get("parameters")
        raise PevpmError(f"this calibration file holds the calibrated noise only (written "
                         f"before the choices); calibrate again for '{noise}'", where)
    if not isinstance(table, dict) or not isinstance(table.get(noise), dict):
        raise PevpmError(f"calibration file has no parameters for noise '{noise}'", where)
    return table[noise]
