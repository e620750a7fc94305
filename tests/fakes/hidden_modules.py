"""A pytest plugin (``-p tests.fakes.hidden_modules``) that makes installed modules look absent.

``OMNIQUAL_TEST_HIDDEN_MODULES`` names them, comma-separated. Each is set to None in
``sys.modules``: importing it then raises ModuleNotFoundError and ``importlib.util.find_spec``
answers None, as on a host where it was never installed, while nothing is uninstalled. A
dotted name hides only that module; its parent packages still import.
"""

from __future__ import annotations

import os
import sys

HIDDEN_MODULES_VARIABLE = "OMNIQUAL_TEST_HIDDEN_MODULES"

for _name in filter(None, os.environ.get(HIDDEN_MODULES_VARIABLE, "").split(",")):
    sys.modules[_name.strip()] = None  # type: ignore[assignment]
