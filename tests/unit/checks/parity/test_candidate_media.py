"""One parity output pair per modality, on synthetic media: video pictures show the worst frame,
audio gets a spectrogram difference, and judging uses the declared tolerance."""

import numpy as np

from omniqual.checks.parity.candidate_media import VisualOptions, pair_outputs
from omniqual.compare import ParityTolerance
from tests.fakes.memory_sink import MemorySink
from tests.unit.compare.synthetic_media import mp4_bytes, wav_bytes

OPTIONS = VisualOptions(thumbnail_side=32, gain=8.0)
TOLERANCE = ParityTolerance.model_validate({
    "rationale": "test bounds",
    "video": {"min_psnr_db": 30.0},
    "audio": {"min_snr_db": 30.0},
})  # fmt: skip


def test_video_pair_draws_the_worst_frame_and_fails_below_its_psnr() -> None:
    rng = np.random.default_rng(3)
    frames = np.full((5, 32, 32, 3), 128, dtype=np.uint8)
    damaged = frames.copy()
    damaged[3] = rng.integers(0, 256, size=(32, 32, 3), dtype=np.uint8)
    sink = MemorySink()
    pair = pair_outputs("video", "videos-sync/32x32/p0-s1", 0, mp4_bytes(frames, 8),
                        mp4_bytes(damaged, 8), TOLERANCE, sink, OPTIONS)  # fmt: skip
    assert pair.frame == 3
    assert {"reference_thumb", "candidate_thumb", "difference"} <= set(pair.files)
    assert any("psnr below the minimum 30 dB in 1 of 5 frames (worst: frame 3" in f
               for f in pair.failures), pair.failures  # fmt: skip
    assert not pair.identical


def test_audio_pair_draws_a_spectrogram_difference_and_passes_when_equal() -> None:
    t = np.arange(8000) / 8000.0
    tone = (0.3 * np.sin(2 * np.pi * 440 * t)).reshape(-1, 1)
    clip = wav_bytes(tone, 8000)
    sink = MemorySink()
    pair = pair_outputs("audio", "audio-generate/1.0/p0-s1", 0, clip, clip, TOLERANCE, sink,
                        OPTIONS)  # fmt: skip
    assert pair.failures == ()
    assert pair.identical
    assert set(pair.files) == {"reference", "candidate", "spectrogram_difference"}
    assert sink.blobs["audio-generate/1.0/p0-s1 spectrogram difference"][:4] == b"\x89PNG"


def test_undecodable_candidate_output_is_a_failure_not_a_crash() -> None:
    t = np.arange(800) / 8000.0
    clip = wav_bytes(np.sin(2 * np.pi * 440 * t).reshape(-1, 1) * 0.2, 8000)
    pair = pair_outputs("audio", "a/1/p0-s1", 0, clip, b"not audio", TOLERANCE, MemorySink(),
                        OPTIONS)  # fmt: skip
    assert pair.comparison is None
    assert pair.failures and "undecodable output" in pair.failures[0]
