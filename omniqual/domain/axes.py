"""Axes of the compatibility matrix, row keys and the selector syntax used on the CLI.

A row key has one canonical string form: ``axis=value`` pairs in catalogue order joined by ``;``.
A selector (``quantization=fp8,hardware=cpu``) names a subset of axes; ``|`` separates
alternatives (``task=t2i|t2v``) and ``*`` matches any value.
"""

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field, model_validator

from omniqual.domain.regex import Regex


class AxisValue(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="The value exactly as written in row keys.")
    description: str = ""
    served_as: tuple[str, ...] = Field(
        default=(),
        description="The names the server's log gives this value when it resolves it (the "
        "axis's `log_pattern`); empty: nothing in the log proves or disproves it.",
    )


class Axis(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    description: str = Field(min_length=1)
    values: tuple[AxisValue, ...] = ()
    open_ended: bool = Field(
        default=False, description="Values beyond the listed ones are allowed (the seeds say so)."
    )
    extension: bool = Field(
        default=False, description="Not one of the seed's 13 axes but part of the row identity."
    )
    default: str | None = Field(
        default=None,
        description="The value a row takes when its key does not name this axis. A row on the "
        "default is keyed without the axis, so an axis added with a default renames no row, no "
        "baseline file and no recorded result.",
    )
    log_pattern: Regex | None = Field(
        default=None,
        description="Where a launched server's log says what it resolved for this axis: a regex "
        "with a `name` group (a value's `served_as`) and an optional `part` group (the role or "
        "component it applies to). Every match must name the row's value, or the row's results "
        "from that server are not the row's (omniqual.domain.log_proof).",
    )

    @model_validator(mode="after")
    def _named_group(self) -> "Axis":
        if self.log_pattern is not None and "name" not in re.compile(self.log_pattern).groupindex:
            raise ValueError("log_pattern needs a (?P<name>...) group")
        if self.default is not None and not any(v.name == self.default for v in self.values):
            raise ValueError(f"default {self.default!r} is not one of the axis's values")
        return self

    def known(self, value: str) -> bool:
        return self.open_ended or any(v.name == value for v in self.values)


class ProvenanceField(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = Field(min_length=1)


class AxisCatalog(BaseModel):
    """``matrices/axes.yaml``: the ordered axes and the provenance every result carries."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = 1
    axes: tuple[Axis, ...]
    provenance: tuple[ProvenanceField, ...] = ()

    def names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.axes)

    def axis(self, name: str) -> Axis | None:
        return next((a for a in self.axes if a.name == name), None)

    def defaults(self) -> dict[str, str]:
        """Each axis that has a default, with it (a key that does not name the axis has it)."""
        return {a.name: a.default for a in self.axes if a.default is not None}

    def problems(self, values: Mapping[str, str]) -> list[tuple[str, str]]:
        """Every (axis, message) by which ``values`` fails to be a complete, known row key."""
        found: list[tuple[str, str]] = []
        for name in values:
            if self.axis(name) is None:
                found.append((name, f"unknown axis {name!r}"))
        for axis in self.axes:
            if axis.name not in values:
                if axis.default is not None:
                    continue
                found.append((axis.name, f"axis {axis.name!r} has no value"))
            elif not axis.known(value := values[axis.name]):
                known = ", ".join(v.name for v in axis.values)
                found.append(
                    (axis.name, f"unknown value {value!r} for axis {axis.name!r} ({known})")
                )
        return found

    def row_key(self, values: Mapping[str, str]) -> "RowKey":
        problems = self.problems(values)
        if problems:
            raise ValueError("; ".join(message for _, message in problems))
        full = {**self.defaults(), **values}
        named = tuple((a.name, full[a.name]) for a in self.axes if full[a.name] != a.default)
        implied = tuple((a.name, full[a.name]) for a in self.axes if full[a.name] == a.default)
        return RowKey(named, implied)


@dataclass(frozen=True, slots=True)
class RowKey:
    """An exact row of the matrix: every axis with one value, in catalogue order. An axis on
    its catalogue default is not part of the key's identity (its string form, equality, hash):
    it is kept in ``implied`` so that ``get`` still answers it."""

    items: tuple[tuple[str, str], ...]
    implied: tuple[tuple[str, str], ...] = field(default=(), compare=False)

    def __str__(self) -> str:
        return ";".join(f"{k}={v}" for k, v in self.items)

    def get(self, axis: str) -> str | None:
        return next((v for k, v in (*self.items, *self.implied) if k == axis), None)

    def as_dict(self) -> dict[str, str]:
        """The axes that make the key (those on their default left out)."""
        return dict(self.items)

    def all_values(self) -> dict[str, str]:
        """Every axis's value, the defaults the key leaves out included."""
        return {**dict(self.implied), **dict(self.items)}

    @classmethod
    def parse(cls, text: str, defaults: Mapping[str, str] | None = None) -> "RowKey":
        """Parse the canonical string form (does not validate against a catalogue); the axes of
        ``defaults`` (``AxisCatalog.defaults``) it does not name are implied at their default."""
        pairs = [part.split("=", 1) for part in text.split(";") if part]
        if any(len(p) != 2 for p in pairs):
            raise ValueError(f"not a row key: {text!r}")
        named = {k for k, _ in pairs}
        implied = tuple((k, v) for k, v in (defaults or {}).items() if k not in named)
        return cls(tuple((k, v) for k, v in pairs), implied)


@dataclass(frozen=True, slots=True)
class Selector:
    """A subset of axes with accepted values; the empty selector matches every row."""

    terms: tuple[tuple[str, frozenset[str]], ...]

    @classmethod
    def parse(cls, text: str) -> "Selector":
        terms: list[tuple[str, frozenset[str]]] = []
        for part in (p.strip() for p in text.split(",")):
            if not part:
                continue
            if "=" not in part:
                raise ValueError(f"selector term {part!r} is not axis=value")
            axis, _, alternatives = part.partition("=")
            values = frozenset(v.strip() for v in alternatives.split("|") if v.strip())
            if not axis.strip() or not values:
                raise ValueError(f"selector term {part!r} is not axis=value")
            terms.append((axis.strip(), values))
        return cls(tuple(terms))

    def axes(self) -> Iterable[str]:
        return (axis for axis, _ in self.terms)

    def matches(self, row: RowKey) -> bool:
        for axis, values in self.terms:
            value = row.get(axis)
            if value is None or ("*" not in values and value not in values):
                return False
        return True

    def __str__(self) -> str:
        return ",".join(f"{a}={'|'.join(sorted(v))}" for a, v in self.terms)
