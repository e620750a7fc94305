"""Generic report content: sections made of tables, key/value lists and bullet lists.

View builders decide what goes into a section; templates only walk these blocks, so the
Markdown and HTML renderings of one report always show the same facts.
"""

from dataclasses import dataclass
from typing import Literal

NO_EVIDENCE = "no evidence recorded"
"""What a section says when the records hold nothing for it (it is never silently omitted)."""


@dataclass(frozen=True, slots=True)
class Table:
    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    kind: Literal["table"] = "table"
    links: tuple[str, ...] = ()
    """Empty, or one evidence link per row (relative to the report; "" where a row has none):
    rendered as a trailing "Evidence" column so every figure in the row reaches its record."""
    note: str = ""
    """Said under the table (e.g. how many rows were trimmed to fit a PR comment, and where the
    full table is)."""

    def __post_init__(self) -> None:
        for row in self.rows:
            if len(row) != len(self.headers):
                raise ValueError(f"table {self.title!r}: row {row!r} does not match the headers")
        if self.links and len(self.links) != len(self.rows):
            raise ValueError(f"table {self.title!r}: {len(self.links)} links for "
                             f"{len(self.rows)} rows")  # fmt: skip


@dataclass(frozen=True, slots=True)
class KeyValues:
    title: str
    items: tuple[tuple[str, str], ...]
    kind: Literal["keyvalues"] = "keyvalues"
    links: tuple[str, ...] = ()
    """Empty, or one link per item ("" where an item has none): the value links its evidence."""


@dataclass(frozen=True, slots=True)
class Bullets:
    title: str
    items: tuple[str, ...]
    kind: Literal["bullets"] = "bullets"


@dataclass(frozen=True, slots=True)
class Picture:
    """An image artifact shown by reference: HTML embeds it, Markdown links it."""

    caption: str
    sha256: str | None
    """None when the evidence holds no such picture (e.g. no difference of unequal shapes)."""
    link: str | None = None
    """Where the artifact lives relative to the evidence root (``<run>/artifacts/<sha256>``)."""


@dataclass(frozen=True, slots=True)
class GalleryRow:
    label: str
    pictures: tuple[Picture, ...]
    figures: tuple[tuple[str, str], ...]
    """(metric, value) pairs printed beside the pictures."""


@dataclass(frozen=True, slots=True)
class Gallery:
    """Side-by-side pictures per case (reference | candidate | amplified difference)."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[GalleryRow, ...]
    kind: Literal["gallery"] = "gallery"


@dataclass(frozen=True, slots=True)
class Plot:
    """A chart drawn by the report itself: inline SVG in the HTML page, its caption alone in
    Markdown (which carries no payloads).

    ``svg`` is matplotlib's output, never a record's text: record strings inside it (point
    names) were XML-escaped by matplotlib's writer, and the HTML template embeds it unescaped.
    """

    title: str
    svg: str
    caption: str
    kind: Literal["plot"] = "plot"


@dataclass(frozen=True, slots=True)
class Code:
    """A command or config shown verbatim (a shell line, a curl, a YAML file): a fenced block in
    Markdown, ``<pre>`` in HTML. Its text was built from redacted record values."""

    title: str
    text: str
    language: str = "shell"
    kind: Literal["code"] = "code"
    link: str = ""
    """Where the whole text lives (an artifact file, relative to the report); "" for none."""
    note: str = ""
    """Said under the text (e.g. that it was cut, and where the whole is)."""
    folded: bool = False
    """HTML folds it into ``<details>`` too (Markdown folds every code block)."""
    preview_lines: int = 0
    """Markdown shows only this many first lines (0: all) and says so: a PR comment stays short;
    HTML shows the whole text."""


Block = Table | KeyValues | Bullets | Gallery | Plot | Code


@dataclass(frozen=True, slots=True)
class Section:
    """One numbered section of a run evidence report."""

    number: int
    title: str
    blocks: tuple[Block, ...] = ()
    includes_matrix: bool = False
    """The scoped matrix is drawn here (the run report carries its matrix view once)."""
    empty_note: str = NO_EVIDENCE
    """Shown instead of content when the section has no blocks and no matrix: it says what is
    missing and names the gate (or check kind) that would fill the section."""

    @property
    def empty(self) -> bool:
        return not self.blocks and not self.includes_matrix


def non_empty(*blocks: Block | None) -> tuple[Block, ...]:
    """The blocks that hold something; an empty table would look like evidence that is absent."""
    kept: list[Block] = []
    for block in blocks:
        if block is None:
            continue
        if isinstance(block, Table) and not block.rows:
            continue
        if isinstance(block, KeyValues) and not block.items:
            continue
        if isinstance(block, Bullets) and not block.items:
            continue
        if isinstance(block, Gallery) and not block.rows:
            continue
        kept.append(block)
    return tuple(kept)
