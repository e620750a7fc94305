"""The package's shape: layers import downward only, files stay small, no junk-drawer modules."""

import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "omniqual"


def test_import_layers_hold() -> None:
    lint_imports = Path(sys.executable).parent / "lint-imports"
    done = subprocess.run(
        [str(lint_imports), "--no-cache"],
        cwd=PACKAGE.parent,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "broken" in done.stdout and "0 broken" in done.stdout


def test_files_stay_under_400_lines() -> None:
    too_long = {
        str(path.relative_to(PACKAGE)): n
        for path in PACKAGE.rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > 400
    }
    assert too_long == {}


def test_no_junk_drawer_modules() -> None:
    names = {path.stem for path in PACKAGE.rglob("*.py")}
    assert not names & {"utils", "helpers", "common", "misc"}


def test_every_module_has_a_docstring() -> None:
    import ast

    missing = [
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.stat().st_size and ast.get_docstring(ast.parse(path.read_text("utf-8"))) is None
    ]
    assert missing == []
