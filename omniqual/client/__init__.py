"""Client layer: the only package that talks HTTP to a vLLM-Omni target (httpx; and
``http1_pool``, a lean HTTP/1.1 pool for ``omniqual bench``'s issue path).

Import from here: `OmniClient`, its request/response shapes, result values and typed errors.
"""

from omniqual.client.client import NO_JSON, ClientTimeouts, OmniClient
from omniqual.client.errors import (
    ClientError,
    TargetProtocolError,
    TargetTimeout,
    TargetUnreachable,
)
from omniqual.client.form_encoding import FilePart, encode_multipart
from omniqual.client.raw import ApiError, RawResponse
from omniqual.client.results import (
    ChatImagesResult,
    DisconnectOutcome,
    HealthResult,
    ImagesResult,
    MediaResult,
    VideoPollResult,
)
from omniqual.client.schemas import (
    TERMINAL_VIDEO_STATUSES,
    AudioGenerateRequest,
    ChatCompletionResponse,
    ChatDiffusionRequest,
    ErrorInfo,
    ImageEditRequest,
    ImageGenerationRequest,
    ImageGenerationResponse,
    ModelCard,
    ModelList,
    VideoCreateRequest,
    VideoDeleted,
    VideoJob,
    VideoJobError,
    VideoList,
    parse_error_info,
)
from omniqual.client.server_metrics import ServerMetrics, metrics_from_doc, server_metrics

__all__ = [
    "NO_JSON",
    "TERMINAL_VIDEO_STATUSES",
    "ApiError",
    "AudioGenerateRequest",
    "ChatCompletionResponse",
    "ChatDiffusionRequest",
    "ChatImagesResult",
    "ClientError",
    "ClientTimeouts",
    "DisconnectOutcome",
    "ErrorInfo",
    "FilePart",
    "HealthResult",
    "ImageEditRequest",
    "ImageGenerationRequest",
    "ImageGenerationResponse",
    "ImagesResult",
    "MediaResult",
    "ModelCard",
    "ModelList",
    "OmniClient",
    "RawResponse",
    "ServerMetrics",
    "TargetProtocolError",
    "TargetTimeout",
    "TargetUnreachable",
    "VideoCreateRequest",
    "VideoDeleted",
    "VideoJob",
    "VideoJobError",
    "VideoList",
    "VideoPollResult",
    "encode_multipart",
    "metrics_from_doc",
    "parse_error_info",
    "server_metrics",
]
