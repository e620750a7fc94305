"""Audio metrics against closed forms: SNR of signal plus noise of known power, log-spectral
distance of identical and of gain-scaled signals, and rate/length/channel disagreements."""

from __future__ import annotations

import math

import numpy as np
import pytest

from omniqual.compare import DecodedAudio, compare_audio
from omniqual.compare.audio import STFT_HOP, STFT_WINDOW

RATE = 16000


def sine(seconds: float = 1.0, frequency: float = 440.0, amplitude: float = 0.5) -> np.ndarray:
    t = np.arange(int(RATE * seconds)) / RATE
    return (amplitude * np.sin(2 * np.pi * frequency * t))[:, np.newaxis].astype(np.float32)


def audio(samples: np.ndarray, rate: int = RATE) -> DecodedAudio:
    return DecodedAudio(samples=np.asarray(samples, dtype=np.float32), sample_rate=rate)


@pytest.mark.parametrize("noise_db", [-10.0, -30.0, -50.0])
def test_snr_of_signal_plus_noise_of_known_power(rng: np.random.Generator, noise_db: float):
    signal = sine(amplitude=0.5).astype(np.float64)
    signal_power = float(np.mean(np.square(signal)))  # 0.125 for a 0.5-amplitude sine
    noise = rng.normal(size=signal.shape)
    noise *= math.sqrt(signal_power * 10 ** (noise_db / 10) / float(np.mean(np.square(noise))))

    result = compare_audio(audio(signal), audio(signal + noise))

    # float32 storage perturbs the powers by ~1e-7 relative; 1e-3 dB is far above that.
    assert result.snr_db == pytest.approx(-noise_db, abs=1e-3)


def test_identical_signals_have_zero_log_spectral_distance_and_infinite_snr() -> None:
    clip = np.hstack([sine(), sine(frequency=1000.0)])
    result = compare_audio(audio(clip), audio(clip.copy()))
    assert result.log_spectral_distance_db == 0.0
    assert result.snr_db == math.inf
    assert result.exact_samples is True
    assert (result.stft_window, result.stft_hop) == (STFT_WINDOW, STFT_HOP)
    names = {m.name for m in result.to_measurements()}
    assert "audio_snr" not in names and "audio_log_spectral_distance" in names


@pytest.mark.parametrize("gain", [0.5, 2.0, 0.1])
def test_log_spectral_distance_of_a_gain_is_20_log10_of_the_gain(
    rng: np.random.Generator, gain: float
) -> None:
    # Broadband noise keeps every bin far above the power floor, so each bin differs by
    # exactly 20·log10(gain) dB and so does the RMS over bins.
    clip = rng.uniform(-0.4, 0.4, size=(RATE, 1))
    result = compare_audio(audio(clip), audio(clip * gain))
    assert result.log_spectral_distance_db == pytest.approx(abs(20 * math.log10(gain)), rel=1e-4)
    assert result.snr_db == pytest.approx(-20 * math.log10(abs(gain - 1)), abs=1e-3)


def test_a_clip_shorter_than_one_window_is_one_frame_of_its_own_length(
    rng: np.random.Generator,
) -> None:
    clip = rng.uniform(-0.4, 0.4, size=(320, 1))
    result = compare_audio(audio(clip), audio(clip * 0.5))
    assert result.stft_window == 320
    assert result.log_spectral_distance_db == pytest.approx(20 * math.log10(2), rel=1e-4)


def test_silent_reference_has_no_snr_and_silence_matches_silence() -> None:
    silence = np.zeros((2000, 1), dtype=np.float32)
    result = compare_audio(audio(silence), audio(silence))
    assert result.snr_db is None
    assert "silent" in result.absent["snr"]
    assert result.log_spectral_distance_db == 0.0


def test_rate_length_and_channel_mismatches_are_named() -> None:
    clip = sine()
    rate = compare_audio(audio(clip), audio(clip, rate=24000))
    length = compare_audio(audio(clip), audio(clip[:8000]))
    channels = compare_audio(audio(clip), audio(np.hstack([clip, clip])))

    assert rate.rate_match is False and rate.snr_db is None
    assert rate.mismatches() == ("candidate returned 24000 Hz, reference 16000 Hz",)
    assert length.length_match is False
    assert length.mismatches() == ("candidate returned 8000 samples per channel, reference 16000",)
    # The common samples still compare: the first half is identical.
    assert length.snr_db == math.inf and length.exact_samples is False
    assert channels.channels_match is False
    assert channels.mismatches() == ("candidate returned 2 channel(s), reference 1",)
    assert channels.absent["snr"] == "channel counts differ: candidate 2, reference 1"
