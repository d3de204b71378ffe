"""HTML assembly: escaped text, tables, notes, figures and one inline stylesheet."""

from __future__ import annotations

import html as _html
import math

STYLE = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;color:#1d2330;background:#f6f7f9}
header{background:#1d3557;color:#fff;padding:18px 32px}
header h1{margin:0;font-size:24px} header p{margin:4px 0 0;opacity:.85}
nav{padding:8px 32px;background:#e9edf3;font-size:14px} nav a{margin-right:14px;color:#1d3557}
main{padding:8px 32px 40px;max-width:1200px}
section{background:#fff;border:1px solid #dde2ea;border-radius:6px;padding:14px 20px;margin:16px 0}
h2{font-size:19px;margin:4px 0 10px;color:#1d3557}
table{border-collapse:collapse;font-size:13px;margin:8px 0}
th,td{border:1px solid #d5dbe4;padding:3px 8px;text-align:right}
th{background:#eef1f6} td.l,th.l{text-align:left}
.note{background:#fff6db;border-left:4px solid #e0a800;padding:8px 12px;margin:8px 0}
.missing{background:#fdecec;border-left:4px solid #c0392b;padding:8px 12px}
.fig{max-width:100%;height:auto;display:block;margin:8px 0}
.kv td:first-child{text-align:left;font-weight:600}
.small{font-size:12px;color:#555}
.trust{background:#e8f4ea;border-left:4px solid #2e7d32;padding:8px 12px;margin:8px 0;font-weight:600}
.scroll{max-height:520px;overflow:auto;display:inline-block}
"""


def esc(text) -> str:
    return _html.escape(str(text), quote=True)


def fmt(x, spec: str = ".4g") -> str:
    if x is None:
        return "-"
    if isinstance(x, (int, float)) and not math.isfinite(float(x)):
        return "-"
    return format(x, spec) if isinstance(x, (int, float)) else str(x)


def table(header: list[str], rows: list[list], left: int = 1, cls: str = "") -> str:
    """A table; the first ``left`` columns are left-aligned text, cells are escaped."""
    head = "".join(f'<th class="l">{esc(h)}</th>' if k < left else f"<th>{esc(h)}</th>" for k, h in enumerate(header))
    body = []
    for row in rows:
        cells = "".join(f'<td class="l">{esc(c)}</td>' if k < left else f"<td>{esc(c)}</td>" for k, c in enumerate(row))
        body.append(f"<tr>{cells}</tr>")
    klass = f' class="{cls}"' if cls else ""
    return f"<table{klass}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def note(text: str) -> str:
    return f'<p class="note">{esc(text)}</p>'


def figure(data_uri: str, alt: str) -> str:
    return f'<img class="fig" src="{data_uri}" alt="{esc(alt)}">'


def paragraph(text: str, cls: str = "") -> str:
    klass = f' class="{cls}"' if cls else ""
    return f"<p{klass}>{esc(text)}</p>"


def page(title: str, subtitle: str, sections: list) -> str:
    """The whole document: header, a table of contents, the sections (id, title, body html)."""
    nav = "".join(f'<a href="#{esc(s.id)}">{esc(s.title)}</a>' for s in sections)
    body = "".join(f'<section id="{esc(s.id)}" data-section="{esc(s.id)}"><h2>{esc(s.title)}</h2>{s.body}</section>'
                   for s in sections)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{esc(title)}</title>"
            f"<style>{STYLE}</style></head><body><header><h1>{esc(title)}</h1><p>{esc(subtitle)}</p></header>"
            f"<nav>{nav}</nav><main>{body}</main></body></html>\n")
