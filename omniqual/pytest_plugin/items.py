"""The plugin's collector and items: one :class:`GateItem` per gate × row of the matrix.

The matrix file is one collector (its spec errors are a collection error listing every
problem). An item runs in ``setup`` (so a harness fault is a pytest *error*, not a failure),
through :mod:`omniqual.pytest_plugin.batch` (one launch and one run for every pending item of a
recipe target; one run per item for a URL), and ``runtest`` maps the recorded outcome.
"""

from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import pytest

from omniqual.domain.axes import RowKey, Selector
from omniqual.domain.gate import Track
from omniqual.domain.outcomes import GateOutcome
from omniqual.domain.result import GateResult
from omniqual.engine.matrix_service import load_project_matrix
from omniqual.engine.run.plan import wanted_gates
from omniqual.pytest_plugin.batch import is_url, message, run_items
from omniqual.specs.recipes import RecipeNotFound, load_recipes
from omniqual.specs.source import SpecError


class OmniqualProblem(Exception):
    """A user mistake, an unreachable target or a harness fault: shown as its message only."""


class _Reports:
    """pytest renders an exception raised in setup as a traceback; an omniqual problem (a
    harness fault, an unreachable target, a spec mistake) is shown as its message only."""

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(
        self, item: pytest.Item, call: pytest.CallInfo[None]
    ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if call.excinfo is not None and isinstance(call.excinfo.value, OmniqualProblem):
            report.longrepr = str(call.excinfo.value)
        return report


def collect_matrix(session: pytest.Session) -> list[pytest.Item]:
    """Every gate × row item of ``--omniqual-matrix`` for ``--omniqual-target``; collection
    errors are reported the way pytest reports any collector's."""
    if not session.config.pluginmanager.has_plugin("omniqual-reports"):
        session.config.pluginmanager.register(_Reports(), "omniqual-reports")
    path = Path(str(session.config.getoption("omniqual_matrix"))).resolve()
    collector = MatrixFile.from_parent(session, path=path)
    return [item for item in session.genitems(collector) if isinstance(item, GateItem)]


class MatrixFile(pytest.File):
    def collect(self) -> Iterator["GateItem"]:
        config = self.config
        target = str(config.getoption("omniqual_target"))
        try:
            loaded = load_project_matrix(self.path)
            selector = Selector.parse(str(config.getoption("omniqual_row")))
            if not is_url(target):
                load_recipes(loaded.project.runners)[target]  # RecipeNotFound names close ids
        except (SpecError, ValueError, RecipeNotFound, OSError) as exc:
            raise OmniqualProblem(message(exc)) from None
        for axis in selector.axes():
            if loaded.matrix.catalog.axis(axis) is None:
                raise OmniqualProblem(f"unknown axis {axis!r} in --omniqual-row")
        for row in loaded.matrix.rows:
            if not selector.matches(row.key):
                continue
            if not is_url(target) and row.spec.recipe != target:
                continue  # a launched recipe realizes only the rows that name it
            for gate_id in dict.fromkeys(wanted_gates(row.spec)):
                gate = loaded.gates[gate_id]
                if not gate.selector.matches(row.key):
                    continue
                yield GateItem.from_parent(
                    self, name=f"{gate_id}[{row.key}]", gate_id=gate_id, row=row.key,
                    track=gate.spec.track, line=row.line, target=target,
                )  # fmt: skip

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> str:  # type: ignore[override]
        if isinstance(excinfo.value, OmniqualProblem):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))


class GateItem(pytest.Item):
    def __init__(
        self,
        *,
        gate_id: str,
        row: RowKey,
        track: Track | None,
        line: int | None,
        target: str,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.gate_id = gate_id
        self.row = row
        self.line = line
        self.target = target
        self.result: GateResult | None = None
        self.problem: str | None = None  # why no result could be recorded
        self.add_marker("omniqual")
        if track is not None:
            self.add_marker(f"omniqual_{track.value}")

    def setup(self) -> None:
        config = self.config
        if not is_url(self.target):
            _stop_servers_on_sigterm(config)
        if self.result is None and self.problem is None:
            pending = [i for i in self.session.items if isinstance(i, GateItem)]
            run_items(self, pending)
        if self.problem is not None:
            raise OmniqualProblem(self.problem)
        assert self.result is not None  # run_items set one of the two
        evidence = Path(str(config.getoption("omniqual_evidence"))) / self.result.run_id
        for name, value in (("evidence", str(evidence)), ("result_id", self.result.result_id),
                            ("outcome", self.result.outcome.value)):  # fmt: skip
            self.user_properties.append((name, value))  # --junitxml writes them as properties
        if self.result.outcome is GateOutcome.ERRORED:
            error = self.result.error
            detail = f"{error.type}: {error.message}" if error else _reasons(self.result)
            raise OmniqualProblem(f"errored (harness or infrastructure fault): {detail}")

    def runtest(self) -> None:
        result = self.result
        assert result is not None  # setup recorded it or raised
        if result.outcome is GateOutcome.SKIPPED:
            # Every item is a gate its row requires; `gate run` exits 2 for a skipped one, so
            # a pytest skip here would let a CI run go green with the row untested.
            pytest.fail("required gate skipped, so its row stays `not tested` (a missing "
                        f"contract or spec): {_reasons(result)}", pytrace=False)  # fmt: skip
        if result.outcome is GateOutcome.INVALID:
            pytest.fail(f"invalid: {_reasons(result)}", pytrace=False)
        if result.outcome is GateOutcome.FAILED:
            pytest.fail(_reasons(result), pytrace=False)

    def repr_failure(  # type: ignore[override]
        self, excinfo: pytest.ExceptionInfo[BaseException]
    ) -> str:
        if isinstance(excinfo.value, OmniqualProblem):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int | None, str]:
        line = self.line - 1 if self.line is not None else None
        return self.path, line, f"omniqual {self.gate_id} on {self.row}"


_SIGNALS_KEY = pytest.StashKey[bool]()


def _stop_servers_on_sigterm(config: pytest.Config) -> None:
    """Servers are launched from worker threads; only the main thread (pytest's, here) can make
    SIGTERM stop them, as ``gate run`` does. Undone when the session ends."""
    from omniqual.deploy.reaper import install_signal_handlers, uninstall_signal_handlers

    if config.stash.get(_SIGNALS_KEY, False):
        return
    install_signal_handlers()
    config.stash[_SIGNALS_KEY] = True
    config.add_cleanup(uninstall_signal_handlers)


def _reasons(result: GateResult) -> str:
    return "; ".join(result.reasons) or f"gate {result.outcome.value} (no reason recorded)"
