"""A throw-away omniqual project for engine and CLI tests."""

from pathlib import Path

import pytest

from omniqual.checks import registry
from omniqual.domain.provenance import UNKNOWN
from omniqual.engine.targets.served_identity import ServedIdentity
from tests.fakes import checks

MINI = Path(__file__).resolve().parents[1] / "data" / "mini-project"


def make_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose gates are scripted checks against a given (never contacted) URL."""
    monkeypatch.setitem(registry.BUILTIN, "scripted", "tests.fakes.checks:ScriptedCheck")

    async def reachable(_url: str) -> None:
        """Unit tests open no sockets: the given URL is taken as reachable."""

    monkeypatch.setattr("omniqual.engine.targets.targets.check_reachable", reachable)
    monkeypatch.setattr("omniqual.engine.single_gate.check_reachable", reachable)

    async def identify(url: str) -> ServedIdentity:
        """The given URL serves the project's model ``m`` (and reports no versions)."""
        return ServedIdentity(url, ("m",), (), {}, UNKNOWN, UNKNOWN, UNKNOWN)

    monkeypatch.setattr("omniqual.engine.targets.served_identity.identify_deployment", identify)
    checks.CALLS.clear()
    root = tmp_path / "proj"
    (root / "matrices").mkdir(parents=True)
    (root / "gates").mkdir()
    (root / "runners").mkdir()
    (root / "matrices" / "axes.yaml").write_text((MINI / "matrices" / "axes.yaml").read_text())
    (root / "gates" / "good.yaml").write_text("id: good\nkind: scripted\nversion: 1\n")
    (root / "gates" / "bad.yaml").write_text(
        "id: bad\nkind: scripted\nversion: 1\nparams: {outcome: failed, reason: planted fault}\n"
    )
    (root / "runners" / "live.yaml").write_text(
        "id: live\ndescription: a given deployment\nkind: url\nurl: http://127.0.0.1:9\n"
        "row: {model: m, quantization: none, hardware: cpu}\n"
    )
    (root / "matrices" / "m.yaml").write_text(
        "name: m\ndefaults: {hardware: cpu, model: m}\nrows:\n"
        "  - key: {task: t2i, quantization: none}\n    recipe: live\n    requires: [good]\n"
        "  - key: {task: t2v, quantization: none}\n    recipe: live\n    requires: [good, bad]\n"
        "  - key: {task: t2v, quantization: fp8}\n    requires: [good]\n"
    )
    (root / "c.yaml").write_text("name: c\nmatrix: matrices/m.yaml\nevidence: runs\n")
    return root
