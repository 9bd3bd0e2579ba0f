"""Machines named by --machine specs."""

import pytest

from pevpm.errors import PevpmError, ProfileError
from pevpm.machine.comm_models import Constant, Hockney, LogGP
from pevpm.machine.presets import PERSEUS_BANDWIDTH, parse_machine


def test_constant_with_units():
    m = parse_machine("constant:latency=50us,local=2us")
    assert m.comm == Constant(latency=50e-6, local=2e-6)
    assert m.topology.procs_per_node == 1 and m.processors is None and m.eager_limit == 0


def test_hockney_with_bandwidth_units_and_machine_keys():
    m = parse_machine("hockney:latency=0.1ms,bandwidth=8Mbit/s,share=1,ppn=4,"
                      "placement=cyclic,eager=16KiB,backplane=3")
    assert m.comm == Hockney(latency=1e-4, bandwidth=1e6, share_bandwidth=True)
    assert (m.topology.procs_per_node, m.topology.placement) == (4, "cyclic")
    assert m.topology.backplane_capacity == 3
    assert m.eager_limit == 16384


def test_loggp_plain_numbers():
    assert parse_machine("loggp:L=5e-6,o=1e-6,g=2e-6,G=1e-9").comm == \
        LogGP(L=5e-6, o=1e-6, g=2e-6, G=1e-9)


def test_perseus_is_fast_ethernet_and_overridable():
    m = parse_machine("perseus", ppn=2)
    assert m.comm == Hockney(latency=160e-6, bandwidth=PERSEUS_BANDWIDTH)
    assert PERSEUS_BANDWIDTH == pytest.approx(91e6 / 8)
    assert m.topology.procs_per_node == 2
    assert m.processors.name == "perseus"
    assert parse_machine("perseus:latency=100us", processor="orion").comm.latency == 1e-4
    assert parse_machine("perseus", processor="orion").processors.name == "orion"


@pytest.mark.parametrize("spec, message", [
    ("hockny", "did you mean 'hockney'"),
    ("hockney:latency=1ms", "needs bandwidth"),
    ("constant:latncy=1", "did you mean 'latency'"),
    ("constant:latency", "key=value"),
    ("constant:latency=fast", "not a number"),
    ("constant:latency=5parsecs", "known unit"),
    ("constant:latency=-1us", "must not be negative"),
    ("constant:latency=1us,placement=spiral", "placement"),
])
def test_bad_specs_name_the_spec(spec, message):
    with pytest.raises(PevpmError, match=message) as info:
        parse_machine(spec)
    assert info.value.where == f"--machine {spec}"


def test_an_existing_file_goes_to_the_profile_model(tmp_path):
    profile = tmp_path / "cluster.db"
    profile.write_bytes(b"")
    try:
        import pevpm.machine.profile_model  # noqa: F401
    except ModuleNotFoundError:
        with pytest.raises(ProfileError, match="profile-driven"):
            parse_machine(str(profile))
    else:
        with pytest.raises(ProfileError):
            parse_machine(str(profile))  # an empty file is no profile


def test_contention_switch_gives_the_restricted_machine():
    assert parse_machine("hockney:latency=1us,bandwidth=1MB/s").node_contention is True
    assert parse_machine("hockney:latency=1us,bandwidth=1MB/s,contention=off").node_contention \
        is False
    with pytest.raises(PevpmError, match="contention='maybe' must be on or off"):
        parse_machine("constant:latency=1us,contention=maybe")


def test_a_wrong_sharing_on_a_profile_machine_names_the_spec_as_typed():
    """Checked before the profile is read, and named as the user wrote it, not
    by the built-in profile's resolved path."""
    with pytest.raises(PevpmError) as caught:
        parse_machine("default:sharing=bogus")
    assert str(caught.value) == ("--machine default:sharing=bogus: sharing must be one of "
                                 "reserve, max-min, simgrid, got 'bogus'")
