"""Figures of the docs checked against the commands printed beside them.

A figure in docs/ comes from the command shown with it (the brief). A test runs the command,
reads the figure it prints, and compares it with the doc's: ``doc_rows`` reads a Markdown table
of a doc (the rows after the header line that starts with ``header``), ``printed_rows`` the
rows of a table the command printed (rich's box characters), ``same_figures`` compares cells
at the doc's precision (the printed value rounded to the doc's digits)."""

from __future__ import annotations

import re
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def doc_text(name: str, flat: bool = False) -> str:
    """docs/``name``; ``flat``: every run of white space one blank (sentences across lines)."""
    text = (DOCS / name).read_text()
    return " ".join(text.split()) if flat else text


def doc_rows(name: str, header: str) -> list[list[str]]:
    """Cells of the Markdown table of docs/``name`` whose header line starts with ``header``."""
    lines = doc_text(name).splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(header)), None)
    assert start is not None, f"docs/{name}: no table starting with {header!r}"
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def printed_rows(output: str, first: str | None = None) -> list[list[str]]:
    """Cells of the body rows of the rich tables in ``output`` (rows with '│' separators), only
    those whose first cell is ``first`` when given."""
    rows = []
    for line in output.splitlines():
        if line.count("│") >= 2:
            cells = [c.strip() for c in line.strip().strip("│").split("│")]
            if first is None or cells[0] == first:
                rows.append(cells)
    return rows


def numbers(text: str) -> list[float]:
    return [float(x) for x in NUMBER.findall(text)]


def same_figures(documented: str, printed: str) -> bool:
    """Every number of the doc's cell equals the printed cell's, rounded to the doc's digits."""
    doc, out = NUMBER.findall(documented), numbers(printed)
    if len(doc) != len(out):
        return False
    for d, p in zip(doc, out):
        digits = len(d.split(".")[1]) if "." in d and "e" not in d else 0
        if round(p, digits) != float(d) and not (digits == 0 and round(p) == float(d)):
            return False
    return True


def assert_same_figures(documented, printed, where: str = "") -> None:
    """Cell lists (or single cells) of the doc and of a command's output agree (``same_figures``)."""
    documented = [documented] if isinstance(documented, str) else list(documented)
    printed = [printed] if isinstance(printed, str) else list(printed)
    assert len(documented) == len(printed), (where, documented, printed)
    bad = [(d, p) for d, p in zip(documented, printed) if not same_figures(d, p)]
    assert not bad, f"{where}: the doc says / the command prints: {bad}"
