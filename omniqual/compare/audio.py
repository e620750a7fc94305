"""Audio metrics: SNR, STFT log-spectral distance, and sample rate/length/channel agreement."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from omniqual.compare.measure import finite_measurements
from omniqual.compare.media import DecodedAudio
from omniqual.domain.evidence import Measurement

# STFT for the log-spectral distance: a periodic Hann window of 1024 samples, hop 256 (75 %
# overlap), frames taken without padding; a signal shorter than one window is one frame of its
# own length. The same samples count at every rate, so the figure does not depend on the rate.
STFT_WINDOW = 1024
STFT_HOP = 256
# Power floor (relative to full scale², i.e. −100 dB) so silence in both is 0 dB apart, not NaN.
POWER_FLOOR = 1e-10


@dataclass(frozen=True)
class AudioComparison:
    """Reference vs candidate audio; metrics cover the common samples when rate and channel
    count agree, and every None has its reason in ``absent``.

    ``snr_db`` is 10·log10(Σ reference² / Σ (candidate − reference)²) over all channels,
    ``math.inf`` when the samples are equal. ``log_spectral_distance_db`` is, per channel and
    STFT frame, the RMS over frequency bins of 10·log10(P_ref / P_cand) (powers floored at
    1e-10), averaged over frames and channels; the window and hop used are recorded.
    """

    rate_match: bool
    length_match: bool
    channels_match: bool
    reference_rate: int
    candidate_rate: int
    reference_length: int
    candidate_length: int
    reference_channels: int
    candidate_channels: int
    snr_db: float | None
    log_spectral_distance_db: float | None
    max_abs_error: float | None
    exact_samples: bool
    stft_window: int | None = None
    stft_hop: int | None = None
    absent: Mapping[str, str] = field(default_factory=dict)

    def mismatches(self) -> tuple[str, ...]:
        """One sentence per disagreement in sample rate, length or channel count."""
        found: list[str] = []
        if not self.rate_match:
            found.append(
                f"candidate returned {self.candidate_rate} Hz, reference {self.reference_rate} Hz"
            )
        if not self.channels_match:
            found.append(
                f"candidate returned {self.candidate_channels} channel(s), "
                f"reference {self.reference_channels}"
            )
        if not self.length_match:
            found.append(
                f"candidate returned {self.candidate_length} samples per channel, "
                f"reference {self.reference_length}"
            )
        return tuple(found)

    def to_measurements(self, prefix: str = "audio_") -> tuple[Measurement, ...]:
        """The present metrics; an infinite SNR is left out and recorded by ``exact_samples``."""
        return finite_measurements(
            [
                (f"{prefix}snr", self.snr_db, "dB"),
                (f"{prefix}log_spectral_distance", self.log_spectral_distance_db, "dB"),
                (f"{prefix}max_abs_error", self.max_abs_error, "full-scale"),
                (f"{prefix}exact_samples", float(self.exact_samples), "bool"),
                (f"{prefix}reference_length", float(self.reference_length), "samples"),
                (f"{prefix}candidate_length", float(self.candidate_length), "samples"),
            ]
        )


def snr_db(reference: npt.NDArray[np.floating], candidate: npt.NDArray[np.floating]) -> float:
    """Reference as signal, difference as noise; inf when equal. The reference is not silent."""
    signal = float(np.sum(np.square(reference, dtype=np.float64)))
    noise = float(np.sum(np.square(candidate.astype(np.float64) - reference)))
    if noise == 0.0:
        return math.inf
    return 10.0 * math.log10(signal / noise)


def power_spectrogram(channel: npt.NDArray[np.floating]) -> npt.NDArray[np.float64]:
    """|STFT|² of one channel: frames × (window/2 + 1) bins, window and hop as documented above."""
    samples = np.asarray(channel, dtype=np.float64)
    window = min(STFT_WINDOW, samples.shape[0])
    frames = np.lib.stride_tricks.sliding_window_view(samples, window)[::STFT_HOP]
    # Periodic Hann: the standard STFT analysis window.
    taper = 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(window) / window)
    spectrum = np.fft.rfft(frames * taper, axis=-1)
    return np.asarray(np.square(np.abs(spectrum)), dtype=np.float64)


def log_spectral_distance_db(
    reference: npt.NDArray[np.floating], candidate: npt.NDArray[np.floating]
) -> float:
    """Mean over channels and frames of the RMS (over bins) of 10·log10(P_ref/P_cand), in dB."""
    per_channel: list[float] = []
    for index in range(reference.shape[1]):
        ref_power = power_spectrogram(reference[:, index]) + POWER_FLOOR
        cand_power = power_spectrogram(candidate[:, index]) + POWER_FLOOR
        log_ratio = 10.0 * np.log10(ref_power / cand_power)
        per_channel.append(float(np.mean(np.sqrt(np.mean(np.square(log_ratio), axis=-1)))))
    return float(np.mean(per_channel))


def compare_audio(reference: DecodedAudio, candidate: DecodedAudio) -> AudioComparison:
    """All audio metrics of ``candidate`` against ``reference``."""
    rate_match = reference.sample_rate == candidate.sample_rate
    channels_match = reference.channels == candidate.channels
    common = min(reference.length, candidate.length)
    absent: dict[str, str] = {}
    snr: float | None = None
    lsd: float | None = None
    max_abs: float | None = None
    window: int | None = None
    if not rate_match:
        reason = (
            f"sample rates differ: candidate {candidate.sample_rate} Hz, "
            f"reference {reference.sample_rate} Hz"
        )
        absent.update(snr=reason, log_spectral_distance=reason, max_abs_error=reason)
    elif not channels_match:
        reason = (
            f"channel counts differ: candidate {candidate.channels}, reference {reference.channels}"
        )
        absent.update(snr=reason, log_spectral_distance=reason, max_abs_error=reason)
    elif common == 0:
        reason = "no samples to compare"
        absent.update(snr=reason, log_spectral_distance=reason, max_abs_error=reason)
    else:
        ref = reference.samples[:common].astype(np.float64)
        cand = candidate.samples[:common].astype(np.float64)
        max_abs = float(np.max(np.abs(ref - cand)))
        if not np.any(ref):
            absent["snr"] = "the reference is silent: SNR has no signal to measure against"
        else:
            snr = snr_db(ref, cand)
        window = min(STFT_WINDOW, common)
        lsd = log_spectral_distance_db(ref, cand)
    return AudioComparison(
        rate_match=rate_match,
        length_match=reference.length == candidate.length,
        channels_match=channels_match,
        reference_rate=reference.sample_rate,
        candidate_rate=candidate.sample_rate,
        reference_length=reference.length,
        candidate_length=candidate.length,
        reference_channels=reference.channels,
        candidate_channels=candidate.channels,
        snr_db=snr,
        log_spectral_distance_db=lsd,
        max_abs_error=max_abs,
        exact_samples=(
            rate_match
            and channels_match
            and reference.length == candidate.length
            and bool(np.array_equal(reference.samples, candidate.samples))
        ),
        stft_window=window,
        stft_hop=None if window is None else STFT_HOP,
        absent=absent,
    )
