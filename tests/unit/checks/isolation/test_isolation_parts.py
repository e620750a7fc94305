"""The isolation gate's pure parts: the request set follows each shipped contract (knobs it does
not list are recorded, not sent), the meeting proof by execution mode and on served answers only
(refusals fail a gate whose rounds never met), and answers that are not outputs (a clear 4xx is
allowed, a 5xx is not)."""

from __future__ import annotations

from pathlib import Path

from omniqual.checks.isolation.exchange import Served
from omniqual.checks.isolation.judge import Rule, judge_case
from omniqual.checks.isolation.matching import batching
from omniqual.checks.isolation.params import IsolationParams
from omniqual.checks.isolation.plan import IsoRequest, build_request_set, differing, render
from omniqual.checks.isolation.proof import judge_meeting, unmet_findings
from omniqual.domain.outcomes import GateOutcome
from omniqual.specs.contracts import load_contract

CONTRACTS = Path(__file__).resolve().parents[4] / "gates" / "contracts"
PARAMS = IsolationParams()


def _set(model: str, api_mode: str) -> dict[str, IsoRequest]:
    requests = build_request_set(load_contract(CONTRACTS / f"{model}.yaml"), api_mode,
                                 PARAMS.requests, PARAMS.prompts)  # fmt: skip
    return {r.label: r for r in requests}


def test_images_vary_every_listed_knob_and_never_render_a_prompt() -> None:
    found = _set("sd3-tiny", "images-generations")
    a, c, d = found["A"], found["C"], found["D"]
    assert d.values["size"] == "32x32" and d.values["n"] == 2 and d.expected.count == 2
    assert d.values["prompt"] == PARAMS.prompts[2]
    assert differing(a, c) == ["steps"] and render(c, ["steps"]) == "steps=4"
    assert "true_cfg" in d.not_varied  # SD3's contract has no true CFG scale
    assert all(PARAMS.prompts[2] not in v for _, v in d.settings)


def test_audio_and_video_take_their_own_knobs() -> None:
    audio = _set("stable-audio-tiny", "audio-generate")["D"]
    assert audio.values["audio_length"] == 0.25 and audio.values["input"] == PARAMS.prompts[2]
    assert {"size", "n", "frames"} <= set(audio.not_varied)
    video = _set("wan-t2v-tiny", "videos-async")["D"]
    assert video.values["num_frames"] == 9 and video.expected.frames == 9
    edit = _set("qwen-image-edit-tiny", "images-edits")
    assert edit["A"].input_png != edit["B"].input_png and edit["A"].wire().files


def test_batching_rows_by_execution_mode() -> None:
    assert batching("request-batch/2+50ms") and batching("step/2")
    assert not batching("serial/1") and not batching("step/1") and not batching(None)


def _served(label: str, start: float, end: float, status: int = 200, error: str = "") -> Served:
    outputs = (b"x",) if status == 200 else ()
    return Served(label, "images-generations", status, outputs, start, end, error=error)


def test_meeting_needs_the_server_not_the_client() -> None:
    solo = {"A": 1.0, "B": 1.0}
    one_at_a_time = [_served("A", 0.0, 1.0), _served("B", 0.1, 2.0)]
    unmet = judge_meeting(one_at_a_time, solo, 1, batch_row=False, span_fraction=0.75)
    assert not unmet.met and unmet.overlapping_pairs == 1
    assert judge_meeting(one_at_a_time, solo, 2, batch_row=False, span_fraction=0.75).met
    together = [_served("A", 0.0, 1.05), _served("B", 0.02, 1.06)]
    assert judge_meeting(together, {"A": 1.0, "B": 1.0}, None, batch_row=True,
                         span_fraction=0.5).finished_together  # fmt: skip


def test_a_clear_4xx_is_allowed_and_a_5xx_fails() -> None:
    found = _set("sd3-tiny", "images-generations")
    requests = {k: v for k, v in found.items() if k in "AB"}
    solos = {"A": _served("A", 0, 1), "B": _served("B", 0, 1)}
    rule = Rule("image", True, PARAMS.tolerance, 3.0, 20.0)
    clear = _served("A", 0, 1, 400, "batch cannot mix num_inference_steps")
    assert judge_case(requests["A"], clear, solos, requests, rule).outcome is GateOutcome.PASSED
    bare = _served("A", 0, 1, 400)
    assert judge_case(requests["A"], bare, solos, requests, rule).outcome is GateOutcome.FAILED
    crash = judge_case(requests["A"], _served("A", 0, 1, 500, "boom"), solos, requests, rule)
    assert crash.outcome is GateOutcome.FAILED and "alone: HTTP 200" in crash.reason


def test_refused_answers_prove_no_meeting() -> None:
    # One request served, three refused at once: the round is as fast as one request, which
    # against four summed solo times looks parallel unless only served answers count.
    solo = {"A": 1.0, "B": 1.0, "C": 1.0, "D": 1.0}
    refused = [_served("A", 0.0, 1.0), *(_served(x, 0.01, 0.02, 429, "Too Many Requests")
                                         for x in "BCD")]  # fmt: skip
    meeting = judge_meeting(refused, solo, 1, batch_row=False, span_fraction=0.75)
    assert not meeting.met and meeting.refused == 3 and "HTTP 429" in meeting.how
    # Two served at once beside a refusal still meet, on the timing of the two alone.
    two = [_served("A", 0.0, 1.1), _served("B", 0.0, 1.1), _served("C", 0.01, 0.02, 429, "busy")]
    meeting = judge_meeting(two, solo, None, batch_row=False, span_fraction=0.75)
    assert meeting.met and meeting.parallel and meeting.solo_sum_s == 2.0
    # Two answered one after the other do not, however fast: they were not served at once.
    apart = [_served("A", 0.0, 0.5), _served("B", 0.6, 1.1), _served("C", 0.0, 0.01, 429, "x")]
    assert not judge_meeting(apart, solo, None, batch_row=False, span_fraction=0.75).met


def test_a_gauge_of_two_proves_nothing_without_two_served_answers() -> None:
    one_served = [_served("A", 0.0, 1.0), _served("B", 0.0, 0.01, 429, "busy")]
    assert not judge_meeting(one_served, {"A": 1.0, "B": 1.0}, 2, batch_row=False,
                             span_fraction=0.75).met  # fmt: skip


def test_unmet_rounds_fail_when_refused_and_are_invalid_when_merely_unproven() -> None:
    solo = {"A": 1.0, "B": 1.0}
    met = judge_meeting([_served("A", 0.0, 1.0), _served("B", 0.0, 1.0)], solo, 2,
                        batch_row=False, span_fraction=0.75)  # fmt: skip
    refused = judge_meeting([_served("A", 0.0, 1.0), _served("B", 0.1, 0.2, 429, "busy")], solo,
                            1, batch_row=False, span_fraction=0.75)  # fmt: skip
    serial = judge_meeting([_served("A", 0.0, 1.0), _served("B", 0.1, 2.0)], solo, 1,
                           batch_row=False, span_fraction=0.75)  # fmt: skip
    failed, invalid = unmet_findings([("burst", refused), ("staggered", refused)],
                                     ["burst", "staggered"])  # fmt: skip
    assert not invalid and len(failed) == 1
    assert failed[0].startswith("the server never served two requests at once: 2 request(s)")
    assert "(first: HTTP 429: busy)" in failed[0]
    failed, invalid = unmet_findings([("burst", met), ("staggered", refused)],
                                     ["burst", "staggered"])  # fmt: skip
    assert not invalid and failed[0].startswith("the staggered rounds never served two requests")
    failed, invalid = unmet_findings([("burst", serial)], ["burst"])
    assert not failed and invalid[0].startswith("requests never met in the server")
    assert unmet_findings([("burst", met), ("staggered", met)], ["burst", "staggered"]) == ([], [])
