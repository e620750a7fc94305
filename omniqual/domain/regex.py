"""A spec field that holds a regular expression: refused at load unless it compiles."""

import re
from typing import Annotated

from pydantic import AfterValidator


def compiled_or_refused(pattern: str) -> str:
    try:
        re.compile(pattern)
    except re.error as exc:
        raise ValueError(f"not a regular expression: {exc}") from None
    return pattern


Regex = Annotated[str, AfterValidator(compiled_or_refused)]
