"""Machines from profiles: the shipped default, named baseline models, clear errors."""

import numpy as np
import pytest

from pevpm.errors import PevpmError, ProfileError
from pevpm.machine.presets import parse_machine
from pevpm.machine.profile_model import MPICH_EAGER_LIMIT, machine_from_profile
from pevpm.machine.transfer import Transfer
from pevpm.profile.store import default_profile_path


def test_default_spec_is_the_shipped_profile_with_mpich_collectives():
    machine = parse_machine("default", ppn=2)
    assert machine.topology.procs_per_node == 2
    assert machine.eager_limit == MPICH_EAGER_LIMIT
    assert machine.comm.model == "full"
    assert machine.collectives.algorithm("MPI_Alltoall", 1024, 4)


def test_baseline_models_are_deterministic_and_ordered():
    t = Transfer("MPI_Send", 1024, 0, 1, intra_node=True, contention=1)
    rng = np.random.default_rng(0)
    low = parse_machine("default:model=min2x1").comm.transfer_time(t, rng)
    mean = parse_machine("default:model=mean2x1").comm.transfer_time(t, rng)
    assert 0 < low < mean
    assert parse_machine("default:model=mean2x1").comm.transfer_time(t, rng) == mean


def test_unknown_model_and_foreign_file_are_clear_errors(tmp_path):
    with pytest.raises(PevpmError, match="unknown communication model 'bogus'"):
        parse_machine("default:model=bogus")
    with pytest.raises(PevpmError, match="unknown key 'modle'"):
        parse_machine("default:modle=full")
    foreign = tmp_path / "notes.db"
    foreign.write_text("not a database")
    with pytest.raises(ProfileError):
        machine_from_profile(str(foreign))


def test_collective_overrides_reach_the_machine():
    machine = machine_from_profile(str(default_profile_path()), collectives="alltoall=pairwise")
    assert machine.collectives.algorithm("MPI_Alltoall", 65536, 8) == "pairwise"


def test_profile_machine_contention_switch():
    assert machine_from_profile(default_profile_path(), ppn=1).node_contention is True
    assert parse_machine("default:contention=off", ppn=1).node_contention is False
