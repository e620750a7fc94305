"""omniqual as a pytest plugin (entry point ``pytest11``): a model's repository runs its matrix
inside the pytest CI it already has.

``pytest --omniqual-matrix matrices/x.yaml --omniqual-target URL|RECIPE [--omniqual-row SEL]``
collects one test item per gate × row (the gates each selected row needs), marked ``omniqual``
and ``omniqual_<track>`` (``-m omniqual_accuracy``). Each item runs the gate through the same
single-gate path as ``omniqual gate run``, journalled under ``--omniqual-evidence``. Outcomes:
passed → passed; failed → failed; invalid → failed with its reason; skipped → failed with its
reason (every item is a gate its row requires, and ``gate run`` exits 2 for a skipped one: a
missing contract or spec, never a pass); errored (a harness or infrastructure fault) → error.

Without ``--omniqual-matrix`` the plugin does nothing beyond registering its options and
markers; this module imports nothing but pytest, so loading it costs nothing.
"""

import pytest

TRACKS = ("function", "accuracy", "performance", "reliability")
"""The readiness tracks (omniqual.domain.gate.Track), spelled here to keep this import cheap."""


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("omniqual", "omniqual: qualify vLLM-Omni deployments gate by gate")
    group.addoption(
        "--omniqual-matrix",
        default=None,
        metavar="MATRIX",
        help="Collect gate × row items from this matrix definition.",
    )
    group.addoption(
        "--omniqual-target",
        default=None,
        metavar="URL|RECIPE",
        help="The deployment: a URL, or a launch-recipe id (its rows only).",
    )
    group.addoption(
        "--omniqual-row",
        default="",
        metavar="SELECTOR",
        help="Row selector, e.g. 'model=sd3-tiny,api_mode=images-generations'.",
    )
    group.addoption("--omniqual-evidence", default=".omniqual/runs", metavar="DIR",
                    help="Run root the results are journalled under.")  # fmt: skip


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "omniqual: a gate × row item collected by omniqual")
    for track in TRACKS:
        config.addinivalue_line(
            "markers", f"omniqual_{track}: an omniqual gate of the {track} track"
        )
    matrix, target = config.getoption("omniqual_matrix"), config.getoption("omniqual_target")
    if matrix and not target:
        raise pytest.UsageError("--omniqual-matrix needs --omniqual-target URL|RECIPE")
    if target and not matrix:
        raise pytest.UsageError("--omniqual-target needs --omniqual-matrix MATRIX")


@pytest.hookimpl(tryfirst=True)  # before -m/-k deselection sees the list
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    if not config.getoption("omniqual_matrix"):
        return
    from omniqual.pytest_plugin.items import collect_matrix

    items.extend(collect_matrix(session))
