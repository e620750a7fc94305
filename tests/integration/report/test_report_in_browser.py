"""The HTML reports in headless Chromium: they render, planted scripts stay inert, nothing loads,
and the first screen (state counts, findings) is in view without scrolling.

Reports are rendered through ``omniqual.report`` from the golden fixtures, with a ``<script>``
and an ``<img onerror>`` planted in a model name, a prompt, a case value, reasons and a note.
Two control pages (the same report with the payload or a fetch inserted raw) prove that the
probe sees a script that ran and that the request log sees a fetch, so neither check passes by
being blind.
"""

from __future__ import annotations

import dataclasses
import io
import shutil
from pathlib import Path
from typing import Any

import pytest
from devtools_page import PageVisit, visit
from PIL import Image

from omniqual.domain.result import GateResult
from omniqual.report import RunEvidence, render_matrix, render_run_report
from tests.golden import report_fixtures as fx

pytestmark = pytest.mark.integration

MARK = "__omniqualPwned"
# What the page reports back: the title, whether any planted code ran, whether any planted
# element exists as an element (not as text), and the visible text.
PROBE = f"""({{
  title: document.title,
  ran: window.{MARK} ?? null,
  planted: [...document.querySelectorAll("script, [onerror]")]
    .filter(e => e.outerHTML.includes("{MARK}")).length,
  text: document.body.innerText,
}})"""
CANARY = "http://omniqual-canary.invalid/pixel.png"


def payload(field: str) -> str:
    return (
        f'<script>window.{MARK}="{field}";document.title="PWNED"</script>'
        f"<img src=x onerror=\"window.{MARK}='{field}'\">"
    )


def _plant_in_result(result: GateResult) -> GateResult:
    update: dict[str, Any] = {}
    if result.requested.get("prompt"):
        update["requested"] = {**result.requested, "prompt": payload("prompt")}
    if result.reasons:
        update["reasons"] = (payload("result-reason"), *result.reasons)
    if result.cases:
        first = result.cases[0].model_copy(
            update={"sent": payload("case-sent"), "note": payload("case-note")}
        )
        update["cases"] = (first, *result.cases[1:])
    return result.model_copy(update=update)


def planted_evidence(monkeypatch: pytest.MonkeyPatch) -> RunEvidence:
    """The golden run evidence with the payload in user-controlled text fields."""
    model = "flux-dev" + payload("model")
    monkeypatch.setitem(fx.BASE, "model", model)
    monkeypatch.setattr(fx, "PROVENANCE", fx.PROVENANCE.model_copy(update={"model": model}))
    evidence = fx.run_evidence()
    rows = list(evidence.matrix.rows)
    rows[-1] = rows[-1].model_copy(
        update={"reasons": (payload("row-reason"), *rows[-1].reasons), "note": payload("note")}
    )
    matrix = evidence.matrix.model_copy(update={"rows": tuple(rows)})
    runs = tuple(
        run.model_copy(update={"results": tuple(_plant_in_result(r) for r in run.results)})
        for run in evidence.runs
    )
    return dataclasses.replace(evidence, matrix=matrix, runs=runs)


def _load(browser: str, html: str, tmp_path: Path, name: str) -> PageVisit:
    page = tmp_path / f"{name}.html"
    page.write_text(html, encoding="utf-8")
    return visit(browser, page, PROBE, tmp_path / f"{name}-profile")


def _keep_screenshot(shot: bytes, tmp_path: Path, artifact_dir: Path, name: str) -> Image.Image:
    path = tmp_path / f"{name}.png"
    path.write_bytes(shot)
    shutil.copyfile(path, artifact_dir / f"{name}.png")
    return Image.open(io.BytesIO(shot))


def _assert_inert_and_offline(seen: PageVisit) -> None:
    assert seen.probe["ran"] is None, f"planted code ran (field {seen.probe['ran']})"
    assert seen.probe["planted"] == 0, "a planted element exists in the DOM, not as text"
    assert "PWNED" not in seen.probe["title"]
    assert seen.requests == (), f"the page made requests: {seen.requests}"


def _assert_drawn(image: Image.Image) -> None:
    assert image.width >= 1280 and image.height >= 400
    colours = image.convert("RGB").getcolors(maxcolors=1 << 16)
    assert colours is None or len(colours) > 10, "the screenshot is (nearly) blank"


def test_run_report_renders_with_planted_scripts_inert_and_no_requests(
    browser: str, tmp_path: Path, artifact_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    evidence = planted_evidence(monkeypatch)
    seen = _load(browser, render_run_report(evidence, "html"), tmp_path, "run-report")

    _assert_inert_and_offline(seen)
    assert evidence.title in seen.probe["title"]
    text = seen.probe["text"]
    assert evidence.title in text and "fp8-online-dit" in text
    # The payload is on the page as visible text: the test exercised the escaping.
    assert payload("model") in text
    assert payload("result-reason") in text
    _assert_drawn(_keep_screenshot(seen.screenshot, tmp_path, artifact_dir, "run-report"))


def test_matrix_report_renders_with_planted_scripts_inert_and_no_requests(
    browser: str, tmp_path: Path, artifact_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    matrix = planted_evidence(monkeypatch).matrix
    seen = _load(browser, render_matrix(matrix, "html"), tmp_path, "matrix-report")

    _assert_inert_and_offline(seen)
    text = seen.probe["text"]
    assert matrix.title in text and "fp8-online-dit" in text
    assert payload("model") in text
    assert payload("row-reason") in text
    _assert_drawn(_keep_screenshot(seen.screenshot, tmp_path, artifact_dir, "matrix-report"))


def test_probe_sees_a_planted_script_that_was_not_escaped(browser: str, tmp_path: Path) -> None:
    html = render_matrix(fx.matrix(), "html").replace("</body>", payload("raw") + "</body>", 1)
    seen = _load(browser, html, tmp_path, "control-script")

    assert seen.probe["ran"] == "raw"
    assert seen.probe["planted"] >= 1
    assert seen.probe["title"] == "PWNED"


def test_request_log_sees_a_fetch_from_the_page_or_a_frame(browser: str, tmp_path: Path) -> None:
    frame = "https://omniqual-frame.invalid/"
    extra = f'<img src="{CANARY}"><iframe src="{frame}"></iframe>'
    html = render_matrix(fx.matrix(), "html").replace("</body>", extra + "</body>", 1)
    seen = _load(browser, html, tmp_path, "control-fetch")

    assert CANARY in seen.requests
    assert frame in seen.requests
    assert seen.probe["ran"] is None


# Where the first screen's parts sit once laid out, at the top of the page (not scrolled).
FOLD_PROBE = """(() => {
  const top = (sel) => {
    const e = document.querySelector(sel);
    return e ? e.getBoundingClientRect().top : null;
  };
  return {states: top("#states"), counts: top("table.states"), coverage: top("table.coverage"),
          findings: top("#findings"), firstFinding: top("ul.findings li"),
          section1: top("#section-1"), height: window.innerHeight};
})()"""
WIDTH, FOLD = 1400, 900


@pytest.mark.parametrize("report", ["run", "matrix"])
def test_states_and_findings_are_above_the_fold(
    browser: str, tmp_path: Path, artifact_dir: Path, report: str
) -> None:
    """In a 1400×900 window the state counts and the findings heading need no scrolling."""
    html = (render_run_report(fx.run_evidence(), "html") if report == "run"
            else render_matrix(fx.matrix(), "html"))  # fmt: skip
    page = tmp_path / f"{report}-first-screen.html"
    page.write_text(html, encoding="utf-8")
    seen = visit(browser, page, FOLD_PROBE, tmp_path / f"{report}-fold-profile", WIDTH, FOLD)
    _keep_screenshot(seen.screenshot, tmp_path, artifact_dir, f"{report}-first-screen")

    box = seen.probe
    assert box["height"] == FOLD
    assert box["states"] is not None and box["findings"] is not None, box
    assert 0 <= box["states"] < box["counts"] < FOLD, box
    assert box["counts"] < box["coverage"] < box["findings"] < FOLD, box
    assert box["firstFinding"] is not None and box["findings"] < box["firstFinding"], box
    if report == "run":  # the checklist's sections come after, below the fold here
        assert box["section1"] > box["findings"], box
