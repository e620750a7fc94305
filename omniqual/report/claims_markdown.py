"""Read the support claims of a hand-written feature-table document (GitHub-flavoured Markdown
tables of ✅ / ❌ / ❓ cells) without guessing.

A table is a header row, an alignment row and body rows, under the nearest heading. A header whose
first cell reads "Model" makes a model table, an empty first cell the pairwise compatibility
table; other tables are kept as "other" so the audit can name them. Cells are read through
emphasis, links, footnote marks, HTML tags and emoji variation selectors; a symbol the vocabulary
lacks, a row of the wrong width or a table without its header is a problem stated with its line,
never a cell read one way or the other. Fenced code is skipped.
"""

import re
import unicodedata
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from omniqual.domain.feature_tables import label_key


class Claim(StrEnum):
    SUPPORTED = "✅"
    UNSUPPORTED = "❌"
    UNVERIFIED = "❓"


_SHORTCODES = {":white_check_mark:": "✅", ":x:": "❌", ":question:": "❓"}
_HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
_ALIGN = re.compile(r"^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$")
_IMAGE_OR_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)|!?\[([^\]]*)\]\[[^\]]*\]")
_FOOTNOTE = re.compile(r"\[\^[^\]]*\]|<sup>.*?</sup>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]+>")
_INVISIBLE = dict.fromkeys(map(ord, "\ufe0f\ufe0e\u200d\u200b"))

TableKind = Literal["models", "pairs", "other"]


@dataclass(frozen=True, slots=True)
class ClaimCell:
    column: str
    claim: Claim | None
    """None: the cell is blank."""
    text: str
    """The cell as read (qualifiers such as "(TP=2 only)" stay in it)."""
    qualified: bool = False
    """The claim carries a qualifier: text beside its symbol or a footnote mark (a bare ✅
    claims the feature without a bound)."""


@dataclass(frozen=True, slots=True)
class ClaimRow:
    name: str
    line: int
    cells: tuple[ClaimCell, ...]


@dataclass(frozen=True, slots=True)
class ClaimTable:
    heading: str
    line: int
    kind: TableKind
    columns: tuple[str, ...]
    rows: tuple[ClaimRow, ...]

    @property
    def name(self) -> str:
        return f"table under {self.heading!r}" if self.heading else "table before any heading"


@dataclass(frozen=True, slots=True)
class ParseProblem:
    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass(frozen=True, slots=True)
class ParsedClaims:
    tables: tuple[ClaimTable, ...]
    problems: tuple[ParseProblem, ...]


def plain(cell: str) -> str:
    """A cell's text as read: links and images by their text, no emphasis, code marks, footnote
    marks, HTML tags or variation selectors, single spaces."""
    text = unicodedata.normalize("NFC", cell).translate(_INVISIBLE)
    text = _FOOTNOTE.sub("", text)
    text = _IMAGE_OR_LINK.sub(lambda m: m.group(1) or m.group(2) or "", text)
    text = _TAG.sub("", text)
    for mark in ("**", "__", "`"):
        text = text.replace(mark, "")
    for code, symbol in _SHORTCODES.items():
        text = text.replace(code, symbol)
    return " ".join(text.replace("\\|", "|").split())


def split_cells(line: str) -> list[str]:
    """The cells of one table line: pipes split unless escaped or inside a code span."""
    text = line.strip()
    cells: list[str] = []
    current: list[str] = []
    in_code = False
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text):
            current.append(text[i : i + 2])
            i += 2
            continue
        if ch == "`":
            in_code = not in_code
        if ch == "|" and not in_code:
            cells.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    cells.append("".join(current))
    if text.startswith("|"):
        cells = cells[1:]
    if text.endswith("|") and not text.endswith("\\|") and cells:
        cells = cells[:-1]
    return [c.strip() for c in cells]


def read_claim(text: str) -> Claim | str | None:
    """The claim a cell makes, None for a blank cell, or the text when it makes no known one."""
    if not text:
        return None
    found = [c for c in Claim if c.value in text]
    if len(found) == 1 and text.startswith(found[0].value):
        return found[0]
    return text


def _kind(first: str) -> TableKind:
    if not first:
        return "pairs"
    return "models" if label_key(first) in ("model", "models") else "other"


def _table(
    heading: str, block: list[tuple[int, str]], problems: list[ParseProblem]
) -> ClaimTable | None:
    start = block[0][0]
    where = f"table under {heading!r}" if heading else "table before any heading"
    if len(block) < 2 or not _ALIGN.match(block[1][1]):
        problems.append(ParseProblem(start, f"{where}: no header and alignment row; not read"))
        return None
    columns = [plain(c) for c in split_cells(block[0][1])]
    kind = _kind(columns[0])
    rows: list[ClaimRow] = []
    for number, line in block[2:]:
        raw = split_cells(line)
        name = plain(raw[0]) if raw else ""
        if len(raw) != len(columns):
            problems.append(ParseProblem(number, f"{where}: row {name!r} has {len(raw)} cells, "
                                         f"the header {len(columns)}; row not read"))  # fmt: skip
            continue
        cells: list[ClaimCell] = []
        for column, cell in zip(columns[1:], raw[1:], strict=True):
            text = plain(cell)
            claim = read_claim(text)
            if claim is not None and not isinstance(claim, Claim):
                if kind != "other":
                    problems.append(ParseProblem(number, f"{where}: row {name!r}, column "
                                                 f"{column!r}: {text!r} is not one of ✅ ❌ ❓; "
                                                 "cell not read"))  # fmt: skip
                continue
            qualified = claim is not None and (text != claim.value or bool(_FOOTNOTE.search(cell)))
            cells.append(ClaimCell(column, claim, text, qualified))
        rows.append(ClaimRow(name, number, tuple(cells)))
    return ClaimTable(heading, start, kind, tuple(columns), tuple(rows))


def _is_table_line(line: str) -> bool:
    stripped = line.strip()
    return "|" in stripped and not stripped.startswith((">", "#"))


def _starts_table(lines: list[str], i: int) -> bool:
    """A line opening with a pipe, or a piped line over an alignment row (a GitHub table may
    leave out its outer pipes); other prose with a pipe in it is no table."""
    if not _is_table_line(lines[i]):
        return False
    if lines[i].strip().startswith("|"):
        return True
    return i + 1 < len(lines) and "|" in lines[i + 1] and bool(_ALIGN.match(lines[i + 1]))


def parse_claims(text: str) -> ParsedClaims:
    lines = text.splitlines()
    tables: list[ClaimTable] = []
    problems: list[ParseProblem] = []
    heading = ""
    fenced = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if _FENCE.match(line):
            fenced = not fenced
        elif not fenced and (match := _HEADING.match(line)):
            heading = plain(match.group(2))
        elif not fenced and _starts_table(lines, i):
            block = []
            while i < len(lines) and _is_table_line(lines[i]) and not _FENCE.match(lines[i]):
                block.append((i + 1, lines[i]))
                i += 1
            table = _table(heading, block, problems)
            if table is not None:
                tables.append(table)
            continue
        i += 1
    return ParsedClaims(tuple(tables), tuple(problems))
