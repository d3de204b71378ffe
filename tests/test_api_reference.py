"""docs/api.md is the reference of what ``import dynid`` exports, generated from the docstrings
(docs/api_reference.py): it must be current, and every export must be documented."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import dynid

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _generator():
    spec = importlib.util.spec_from_file_location("api_reference", DOCS / "api_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_api_reference_page_is_current():
    assert (DOCS / "api.md").read_text() == _generator().page(), \
        "docs/api.md is not current: run python docs/api_reference.py"


def test_every_export_has_a_docstring_on_the_page():
    text = (DOCS / "api.md").read_text()
    assert "(no docstring)" not in text
    for name in dynid.__all__:
        assert f"`dynid.{name}" in text, name
