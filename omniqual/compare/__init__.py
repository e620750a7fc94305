"""Comparison of decoded media: image, video and audio metrics, tolerances, visuals.

Pure functions over numpy arrays; no HTTP and no torch.
"""

from omniqual.compare.audio import AudioComparison, compare_audio
from omniqual.compare.frontier import (
    FrontierResult,
    Recommendation,
    SweepPoint,
    pareto,
    recommend,
)
from omniqual.compare.image import ImageComparison, compare_image_bytes, compare_images
from omniqual.compare.media import (
    DecodedAudio,
    DecodedVideo,
    MediaDecodeError,
    decode_audio,
    decode_image,
    decode_video,
)
from omniqual.compare.tolerance import (
    AudioTolerance,
    Comparison,
    ImageTolerance,
    ParityTolerance,
    VideoTolerance,
    judge,
)
from omniqual.compare.video import VideoComparison, compare_videos
from omniqual.compare.visual import difference_png, spectrogram_difference_png, thumbnail_png

__all__ = [
    "AudioComparison",
    "AudioTolerance",
    "Comparison",
    "DecodedAudio",
    "DecodedVideo",
    "FrontierResult",
    "ImageComparison",
    "ImageTolerance",
    "MediaDecodeError",
    "ParityTolerance",
    "Recommendation",
    "SweepPoint",
    "VideoComparison",
    "VideoTolerance",
    "compare_audio",
    "compare_image_bytes",
    "compare_images",
    "compare_videos",
    "decode_audio",
    "decode_image",
    "decode_video",
    "difference_png",
    "judge",
    "pareto",
    "recommend",
    "spectrogram_difference_png",
    "thumbnail_png",
]
