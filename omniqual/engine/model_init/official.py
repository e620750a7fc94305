"""The official pipeline's ``__call__`` defaults, read from diffusers when it is importable.

diffusers is not a dependency of omniqual (the embedded venv has it; a GPU host may not), so it
is imported lazily and its absence is a fact to report, not an error. Only the signature is read:
what ``check_inputs`` enforces depends on the checkpoint and stays a TODO for the contributor.
"""

import importlib
import importlib.metadata
import inspect
from dataclasses import dataclass
from typing import Any

API_TO_PIPELINE: dict[str, str] = {
    "n": "num_images_per_prompt",
    "num_outputs_per_prompt": "num_images_per_prompt",
}
"""Request fields whose pipeline argument has another name."""


@dataclass(frozen=True, slots=True)
class OfficialSignature:
    class_name: str
    package: str
    """``diffusers==X`` of the installed release the defaults were read from."""
    defaults: dict[str, Any]
    """Every parameter with a default (``None`` kept: "derived elsewhere")."""

    @property
    def label(self) -> str:
        return f"{self.package} {self.class_name}.__call__"

    def default(self, api_field: str) -> tuple[bool, Any]:
        """(whether the pipeline takes the field, its default)."""
        name = API_TO_PIPELINE.get(api_field, api_field)
        if name not in self.defaults:
            return False, None
        return True, self.defaults[name]

    def size_default(self) -> str | None:
        """``WIDTHxHEIGHT`` when the signature fixes both sides (SD3 derives them: None)."""
        width, height = self.defaults.get("width"), self.defaults.get("height")
        if isinstance(width, int) and isinstance(height, int):
            return f"{width}x{height}"
        return None


@dataclass(frozen=True, slots=True)
class OfficialUnavailable:
    class_name: str
    reason: str


def read_official(class_name: str) -> OfficialSignature | OfficialUnavailable:
    """``diffusers.<class_name>.__call__``'s defaults, or why they could not be read."""
    try:
        diffusers = importlib.import_module("diffusers")
    except Exception as exc:  # an import of a heavy optional package can fail any way it likes
        return OfficialUnavailable(class_name, f"diffusers is not importable ({exc})")
    try:
        pipeline = getattr(diffusers, class_name)
    except Exception as exc:  # diffusers resolves names lazily and may raise on import
        return OfficialUnavailable(class_name, f"diffusers has no {class_name} ({exc})")
    if not isinstance(pipeline, type) or not callable(pipeline):
        return OfficialUnavailable(class_name, f"diffusers.{class_name} is not a pipeline class")
    defaults = {
        name: _plain(param.default)
        for name, param in inspect.signature(pipeline.__call__).parameters.items()
        if name != "self" and param.default is not inspect.Parameter.empty
    }
    version = getattr(diffusers, "__version__", None)
    if not isinstance(version, str):
        try:
            version = importlib.metadata.version("diffusers")
        except importlib.metadata.PackageNotFoundError:
            version = "unknown"
    return OfficialSignature(class_name, f"diffusers=={version}", defaults)


def _plain(value: Any) -> Any:
    """Defaults as YAML can hold them; anything else by its repr."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return repr(value)
