"""Making many frozen pydantic records from values compile computed itself, without validation.

Validating a value pydantic has already seen copies every string into the new record (1.1 kB per
evidence reference instead of 0.36 kB), and ``model_construct`` spends most of its time in a
per-field Python loop that handles aliases and defaults these records never use. A constructor
from :func:`constructor` sets exactly what ``model_construct`` sets when every field is given;
it is checked against ``model_construct`` once, and is ``model_construct`` itself should pydantic
ever set anything else.
"""

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)
_set = object.__setattr__


def constructor(cls: type[M], probe: dict[str, Any]) -> Callable[..., M]:
    """``make(**values)`` (every field of ``cls``, in field order) → an unvalidated ``cls``;
    ``probe`` holds sample values for the one-time check against ``model_construct``."""
    fields = set(cls.model_fields)

    def make(**values: Any) -> M:
        record = cls.__new__(cls)
        _set(record, "__dict__", values)
        _set(record, "__pydantic_fields_set__", fields)  # shared: the records are frozen
        _set(record, "__pydantic_extra__", None)
        _set(record, "__pydantic_private__", None)
        return record

    reference = functools.partial(cls.model_construct, fields)
    if (
        set(probe) != fields
        or cls.__pydantic_post_init__
        or cls.model_config.get("extra") == "allow"
    ):
        return reference  # pragma: no cover - a model these records do not use
    ours, theirs = make(**probe), reference(**probe)
    attributes = ("__dict__", "__pydantic_fields_set__", "__pydantic_extra__",
                  "__pydantic_private__")  # fmt: skip
    if any(getattr(ours, a) != getattr(theirs, a) for a in attributes) or ours != theirs:
        return reference  # pragma: no cover - another pydantic
    return make
