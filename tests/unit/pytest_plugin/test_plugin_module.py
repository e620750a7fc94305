"""The pytest plugin's module: registered as a ``pytest11`` entry point, cheap to import (pytest
loads it in every session of every repository that installs omniqual), and its track markers
spell the domain's tracks."""

import subprocess
import sys
from importlib.metadata import entry_points

from omniqual import pytest_plugin
from omniqual.domain.gate import Track


def test_the_entry_point_names_the_plugin_module() -> None:
    (entry,) = [e for e in entry_points(group="pytest11") if e.name == "omniqual"]
    assert entry.value == "omniqual.pytest_plugin"


def test_its_tracks_are_the_domain_tracks() -> None:
    assert tuple(t.value for t in Track) == pytest_plugin.TRACKS


def test_importing_it_loads_nothing_of_omniqual_but_itself() -> None:
    code = (
        "import sys, omniqual.pytest_plugin\n"
        "print(sorted(m for m in sys.modules if m.startswith(('omniqual.', 'pydantic'))))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['omniqual.pytest_plugin']"
