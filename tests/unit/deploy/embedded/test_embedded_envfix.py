"""The environment fixes edit exactly the intended snippet, once, and are safe to repeat."""

from __future__ import annotations

from pathlib import Path

import pytest

from omniqual.deploy.embedded import envfix
from omniqual.deploy.embedded.envfix import (
    TORCHAUDIO_EXTENSION_PATCH,
    TORCHVISION_FAKE_NMS_PATCHES,
    EnvFixError,
    EnvFixStatus,
    apply_text_patch,
    apply_text_patches,
)

TORCHVISION_SAMPLE = """import torchvision.extension  # noqa: F401


@register_meta("roi_align")
def meta_roi_align(input):
    return input


@torch.library.register_fake("torchvision::nms")
def meta_nms(dets, scores, iou_threshold):
    return dets


@torch.library.register_fake("torchvision::qnms")
def meta_qnms(dets, scores, iou_threshold):
    return dets
"""

TORCHAUDIO_SAMPLE = """if os.name == "nt":
    _init_dll_path()

_IS_TORCHAUDIO_EXT_AVAILABLE = _load_lib("_torchaudio")
_IS_ALIGN_AVAILABLE = False
"""


def test_torchvision_patch_guards_exactly_the_two_fake_registrations() -> None:
    result = apply_text_patches(TORCHVISION_SAMPLE, TORCHVISION_FAKE_NMS_PATCHES)
    assert result.status is EnvFixStatus.APPLIED
    guard = " if torchvision.extension._has_ops() else (lambda fn: fn))"
    assert result.text.count(guard) == 2
    assert '@(torch.library.register_fake("torchvision::nms")' + guard in result.text
    assert '@(torch.library.register_fake("torchvision::qnms")' + guard in result.text
    # Nothing else moved: dropping the added text gives back the original lines.
    original_lines = TORCHVISION_SAMPLE.splitlines()
    patched_lines = result.text.splitlines()
    assert len(patched_lines) == len(original_lines)
    changed = [
        i for i, (a, b) in enumerate(zip(original_lines, patched_lines, strict=True)) if a != b
    ]
    assert [original_lines[i] for i in changed] == [
        '@torch.library.register_fake("torchvision::nms")',
        '@torch.library.register_fake("torchvision::qnms")',
    ]
    compile(result.text, "patched.py", "exec")


def test_torchaudio_patch_catches_only_oserror_around_the_load() -> None:
    result = apply_text_patch(TORCHAUDIO_SAMPLE, TORCHAUDIO_EXTENSION_PATCH)
    assert result.status is EnvFixStatus.APPLIED
    assert (
        "try:  # omniqual-envfix: the CUDA build's extension cannot load next to CPU torch\n"
        '    _IS_TORCHAUDIO_EXT_AVAILABLE = _load_lib("_torchaudio")\n'
        "except OSError:  # omniqual-envfix\n"
        "    _IS_TORCHAUDIO_EXT_AVAILABLE = False\n"
        "_IS_ALIGN_AVAILABLE = False\n"
    ) in result.text
    namespace: dict[str, object] = {"os": type("os", (), {"name": "posix"})}

    def failing_load(name: str) -> bool:
        raise OSError(f"Could not load this library: {name}")

    namespace["_load_lib"] = failing_load
    exec(compile(result.text, "patched.py", "exec"), namespace)
    assert namespace["_IS_TORCHAUDIO_EXT_AVAILABLE"] is False


@pytest.mark.parametrize(
    ("sample", "patches"),
    [
        (TORCHVISION_SAMPLE, TORCHVISION_FAKE_NMS_PATCHES),
        (TORCHAUDIO_SAMPLE, (TORCHAUDIO_EXTENSION_PATCH,)),
    ],
)
def test_patches_are_idempotent(sample: str, patches: tuple[envfix.TextPatch, ...]) -> None:
    once = apply_text_patches(sample, patches)
    twice = apply_text_patches(once.text, patches)
    assert twice.status is EnvFixStatus.ALREADY_APPLIED
    assert twice.text == once.text


def test_absent_snippet_is_not_needed_and_ambiguous_snippet_refuses() -> None:
    assert apply_text_patch("x = 1\n", TORCHAUDIO_EXTENSION_PATCH).status is EnvFixStatus.NOT_NEEDED
    doubled = TORCHAUDIO_SAMPLE + TORCHAUDIO_SAMPLE
    with pytest.raises(EnvFixError, match="2 times"):
        apply_text_patch(doubled, TORCHAUDIO_EXTENSION_PATCH)


def _fake_package(root: Path, name: str, relative: str, text: str) -> Path:
    package = root / name
    target = package / relative
    target.parent.mkdir(parents=True)
    (package / "__init__.py").write_text("raise RuntimeError('must not be imported')\n")
    target.write_text(text)
    return target


def test_installed_file_is_found_without_import_and_patched_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = _fake_package(
        tmp_path, "fake_torchaudio_pkg", "_extension/__init__.py", TORCHAUDIO_SAMPLE
    )
    target.chmod(0o640)
    monkeypatch.syspath_prepend(str(tmp_path))
    first = envfix.patch_installed_file(
        "t", "fake_torchaudio_pkg", "_extension/__init__.py", (TORCHAUDIO_EXTENSION_PATCH,)
    )
    assert first.status is EnvFixStatus.APPLIED
    assert "except OSError:" in target.read_text()
    assert target.stat().st_mode & 0o777 == 0o640
    second = envfix.patch_installed_file(
        "t", "fake_torchaudio_pkg", "_extension/__init__.py", (TORCHAUDIO_EXTENSION_PATCH,)
    )
    assert second.status is EnvFixStatus.ALREADY_APPLIED
    assert sorted(p.name for p in target.parent.iterdir()) == ["__init__.py"]


def test_missing_package_is_not_needed() -> None:
    fix = envfix.patch_installed_file(
        "t", "no_such_package_for_envfix", "x.py", (TORCHAUDIO_EXTENSION_PATCH,)
    )
    assert fix.status is EnvFixStatus.NOT_NEEDED
    assert "not installed" in fix.detail


def test_torchcodec_absent_is_not_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(envfix, "_distribution_installed", lambda name: False)
    fix = envfix.remove_torchcodec()
    assert (fix.name, fix.status) == ("remove-torchcodec", EnvFixStatus.NOT_NEEDED)


def test_main_reports_failure_with_exit_code_one(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken() -> list[envfix.EnvFix]:
        raise EnvFixError("boom")

    monkeypatch.setattr(envfix, "apply_environment_fixes", broken)
    assert envfix.main([]) == 1
    monkeypatch.setattr(envfix, "apply_environment_fixes", lambda: [])
    assert envfix.main([]) == 0
