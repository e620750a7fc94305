"""Parity evidence in the run report: per result of a parity gate, a summary (the reference row,
the tolerance and why, the fast-path signals, latency and memory deltas) and a gallery of
reference | candidate | amplified difference per output (the worst frame for video, the
spectrogram difference for audio).

Pictures are named by sha256 only. ``embedded_images`` reads the ones it finds in the evidence
directories, rehashes them (a tampered file is never shown) and makes data URIs for the
self-contained HTML page; Markdown links the artifact files instead."""

import base64
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pydantic import JsonValue

from omniqual.domain.result import GateResult
from omniqual.report.blocks import Block, Gallery, GalleryRow, KeyValues, Picture, Section
from omniqual.report.evidence_blocks import RowLabels, row_label
from omniqual.report.redact import safe_text

PARITY_KINDS = frozenset({"candidate_parity", "reference_parity"})
OFFICIAL_KINDS = frozenset({"reference_parity"})
"""Gates whose reference is the official implementation: no serving figures on its side."""
MIB = 1024 * 1024
_VISUAL = (("reference_thumb", "Reference"), ("candidate_thumb", "Candidate"),
           ("difference", "Difference (amplified)"))  # fmt: skip
_AUDIO = (("spectrogram_difference", "Spectrogram difference (candidate - reference, dB)"),)


def _text(value: JsonValue) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.6g}"
    return safe_text(str(value))


def _figures(pair: Mapping[str, JsonValue]) -> tuple[tuple[str, str], ...]:
    metrics = pair.get("metrics")
    found = [(str(k), _text(v)) for k, v in metrics.items()] if isinstance(metrics, dict) else []
    if pair.get("frame") is not None:
        found.append(("frame shown (worst)", _text(pair.get("frame"))))
    found.append(("identical", _text(pair.get("identical"))))
    failures = pair.get("failures")
    if isinstance(failures, list) and failures:
        found.append(("outside tolerance", "; ".join(_text(f) for f in failures)))
    return tuple(found)


def _gallery(result: GateResult, pairs: Sequence[JsonValue], labels: RowLabels) -> Gallery:
    audio = any(isinstance(p, dict) and p.get("kind") == "audio" for p in pairs)
    columns = _AUDIO if audio else _VISUAL
    rows: list[GalleryRow] = []
    for pair in pairs:
        if not isinstance(pair, dict):
            continue
        files = pair.get("files")
        files = files if isinstance(files, dict) else {}
        pictures = tuple(
            Picture(caption, str(files[role]) if role in files else None,
                    f"{result.run_id}/artifacts/{files[role]}" if role in files else None)
            for role, caption in columns
        )  # fmt: skip
        rows.append(GalleryRow(_text(pair.get("label")), pictures, _figures(pair)))
    title = f"Parity outputs: {row_label(labels, result.row)} ({result.outcome.value})"
    return Gallery(title, tuple(caption for _, caption in columns), tuple(rows))


def _figure(values: Mapping[str, float], name: str, unit: str, scale: float = 1.0) -> str:
    value = values.get(name)
    return "absent" if value is None else f"{value / scale:.4g} {unit}"


def _summary(result: GateResult, parity: Mapping[str, JsonValue], labels: RowLabels) -> KeyValues:
    values = {m.name: m.value for m in result.measurements}
    samples = {m.name: m.samples for m in result.measurements}
    items: list[tuple[str, str]] = [
        ("candidate row", row_label(labels, result.row)),
        ("reference", row_label(labels, str(parity.get("reference_row", "")))),
        ("reference recipe", _text(parity.get("reference_recipe"))),
        ("outcome", "; ".join([result.outcome.value, *map(safe_text, result.reasons)])),
        ("tolerance", f"{_text(parity.get('tolerance'))}: "
                      f"{_text(parity.get('tolerance_rationale'))}"),
    ]  # fmt: skip
    if result.gate_kind in OFFICIAL_KINDS:
        return KeyValues(f"Reference parity: {row_label(labels, result.row)}", tuple(items))
    signals = parity.get("signals")
    for signal in signals if isinstance(signals, list) else []:
        if isinstance(signal, dict):
            active = signal.get("active")
            state = "active" if active is True else "inactive" if active is False else "absent"
            items.append((f"signal {_text(signal.get('feature'))} ({_text(signal.get('source'))})",
                          f"{state}: {_text(signal.get('detail'))}"))  # fmt: skip
    for side in ("reference", "candidate"):
        n = samples.get(f"{side}_latency_median")
        items.append((f"{side} latency (median, min–max, n)",
                      f"{_figure(values, f'{side}_latency_median', 's')}, "
                      f"{_figure(values, f'{side}_latency_min', 's')} – "
                      f"{_figure(values, f'{side}_latency_max', 's')}, n={_text(n)}"))  # fmt: skip
    items.append(("latency delta (median)", _figure(values, "latency_delta_median", "s")))
    for side in ("reference", "candidate"):
        peak = _figure(values, f"{side}_peak_pss", "MiB", MIB)
        items.append((f"{side} peak PSS", peak))
    items.append(("peak PSS delta", _figure(values, "peak_pss_delta", "MiB", MIB)))
    gpus = sorted(m.name for m in result.measurements if m.name.endswith("_tree_peak_delta"))
    items += [(name, _figure(values, name, "MiB", MIB)) for name in gpus]
    notes = parity.get("notes")
    items += [("note", _text(n)) for n in (notes if isinstance(notes, list) else [])]
    return KeyValues(f"Parity: {row_label(labels, result.row)}", tuple(items))


def parity_blocks(results: Iterable[GateResult], labels: RowLabels) -> tuple[Block, ...]:
    """Summary and gallery per parity result that recorded its pairs."""
    blocks: list[Block] = []
    for result in results:
        parity = result.effective.get("parity")
        if result.gate_kind not in PARITY_KINDS or not isinstance(parity, dict):
            continue
        blocks.append(_summary(result, parity, labels))
        pairs = parity.get("pairs")
        if isinstance(pairs, list) and pairs:
            blocks.append(_gallery(result, pairs, labels))
    return tuple(blocks)


def embedded_images(sections: Iterable[Section], artifact_dirs: Sequence[Path]) -> dict[str, str]:
    """sha256 -> ``data:image/png;base64,…`` for every gallery picture found intact."""
    wanted = {
        picture.sha256
        for section in sections
        for block in section.blocks
        if isinstance(block, Gallery)
        for row in block.rows
        for picture in row.pictures
        if picture.sha256 is not None
    }
    found: dict[str, str] = {}
    for digest in sorted(wanted):
        for directory in artifact_dirs:
            path = directory / digest
            try:
                data = path.read_bytes()
            except OSError:
                continue
            if hashlib.sha256(data).hexdigest() == digest and data[:8] == b"\x89PNG\r\n\x1a\n":
                found[digest] = "data:image/png;base64," + base64.b64encode(data).decode("ascii")
                break
    return found
