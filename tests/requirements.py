"""What a test does when a piece it needs (a package, a tool, the browser, the embedded target) is
not installed here: the suite's one way to skip.

Outside CI it skips, and the reason names the install step that brings the piece. In CI it
fails instead: CI (``CI`` true, as hosted runners set it and as ``.ci/run`` runs) installs every
piece, so a missing one there is a broken install step, and a skip would leave the run green
with the test never run. A piece's ``OMNIQUAL_REQUIRE_*`` variable set to 1 requires it outside
CI too (``.ci/run`` sets the browser's and the embedded target's).

tests/unit/test_no_silent_skip.py holds every other skip in tests/ to this module.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Mapping
from types import ModuleType
from typing import NoReturn

import pytest

# CI providers set CI=true; some set CI=1.
CI_VALUES = frozenset({"true", "1", "yes"})


def _ci(env: Mapping[str, str]) -> bool:
    return env.get("CI", "").strip().lower() in CI_VALUES


def required_here(env: Mapping[str, str], require_variable: str | None = None) -> bool:
    """Whether a missing piece fails here: in CI, or where ``require_variable`` is 1."""
    return _ci(env) or (require_variable is not None and env.get(require_variable) == "1")


def require_or_skip(
    what: str,
    install_hint: str,
    *,
    require_variable: str | None = None,
    env: Mapping[str, str] | None = None,
) -> NoReturn:
    """``what`` is not installed here: fail where required (see :func:`required_here`), else
    skip; either way the reason names ``install_hint``, the step that installs it."""
    env = os.environ if env is None else env
    missing = f"{what} is not installed here"
    if required_here(env, require_variable):
        because = f"CI={env['CI']}" if _ci(env) else f"{require_variable}=1"
        pytest.fail(
            f"{missing}, and {because} requires every piece, so this test fails rather than "
            f"skips: {install_hint}",
            pytrace=False,
        )
    pytest.skip(f"{missing}: {install_hint}")


def require_module(
    name: str,
    install_hint: str,
    *,
    require_variable: str | None = None,
    env: Mapping[str, str] | None = None,
) -> ModuleType:
    """The imported module ``name``; its package absent: :func:`require_or_skip`."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        package = name.partition(".")[0]
        try:
            absent = importlib.util.find_spec(package) is None
        except ValueError:  # imported, but without a spec: present all the same
            absent = False
        if absent:
            what = f"the {package} package" + ("" if name == package else f" (for {name})")
            require_or_skip(what, install_hint, require_variable=require_variable, env=env)
        # The package is here and the module is not: a release that moved or renamed it, or an
        # install missing a dependency. No install step of ours brings it back, so this fails
        # outside CI too: a skip would hide the break until someone read the skip reasons.
        pytest.fail(
            f"{package} is installed, but {name} does not import ({exc}): a release that moved "
            f"it needs this test pointed at its new place; a broken install: {install_hint}",
            pytrace=False,
        )
