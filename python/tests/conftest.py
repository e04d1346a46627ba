import os
import pathlib

import matplotlib

matplotlib.use("Agg")  # no display on CI

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def root():
    return ROOT


@pytest.fixture
def overcommit():
    """The anonymous-overcommit example: 1.5x RAM of anon memory written twice."""
    return str(ROOT / "scenarios" / "examples" / "anon-overcommit.toml")


@pytest.fixture(scope="session")
def overcommit_runs():
    """The example run at its own 1 GiB and on 768 MiB (cached: each takes a second or two)."""
    import vmlab

    path = str(ROOT / "scenarios" / "examples" / "anon-overcommit.toml")
    return vmlab.run(path), vmlab.run(path, sets=["machine.memory=768MiB"])


# A small scenario given as text: 256 MiB of anon memory on a 192 MiB machine.
SMALL = """\
name = "small-overcommit"
profile = "linux-6.8"
interval = "0.5s"

[machine]
memory = "192MiB"
cpus = 2

[[disk]]
name = "sda"
model = "ssd"

[swap]
size = "512MiB"
disk = "sda"

[[process]]
name = "hog"
program = '''
mmap heap anon 256MiB
touch heap write
touch heap read
'''
"""


@pytest.fixture
def small():
    return SMALL
