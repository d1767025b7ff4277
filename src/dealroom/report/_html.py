"""The HTML shell of the report and the viewer: styles and scripts inlined from ``assets/``."""

from __future__ import annotations

import html
from functools import cache
from importlib import resources

VIEWER_BODY = """<header><h1 id="title"></h1><div class="banner" id="banner" hidden></div>
<div class="facts" id="facts"></div>
<div class="facts models" id="models" hidden></div>
<div class="asks" id="asks" hidden></div></header>
<nav><button data-tab="timeline" class="on">Timeline</button><button data-tab="memo">Memo</button>
<button data-tab="scores">Scores</button><button data-tab="coverage">Coverage</button>
<button data-tab="usage">Usage</button></nav>
<main>
<section id="timeline"><div id="timeline-body"></div>
<p id="more"><span id="loaded"></span> <button id="load-all">load all</button></p></section>
<section id="memo" hidden></section>
<section id="scores" hidden></section>
<section id="coverage" hidden></section>
<section id="usage" hidden></section>
</main>
<aside id="panel" hidden><button id="panel-close">close</button><div id="panel-body"></div></aside>
"""


@cache
def asset(name: str) -> str:
    """A file of ``dealroom/report/assets``."""
    return (resources.files("dealroom.report") / "assets" / name).read_text(encoding="utf-8")


def page(title: str, kind: str, *, body: str = "", scripts: tuple[str, ...] | list[str] = ()
         ) -> str:
    """A whole page: ``kind`` ``viewer`` (the trace viewer; ``scripts`` are its data files,
    loaded before it), ``report`` or ``runs`` (the list of ``dealroom view DIR``; ``body``
    as given)."""
    loads = "".join(f'<script src="{html.escape(s)}"></script>' for s in scripts)
    main = VIEWER_BODY if kind == "viewer" else body
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<link rel="icon" href="data:,">'
            f"<title>{html.escape(title)}</title><style>{asset('style.css')}</style>"
            f"<script>{asset('common.js')}</script></head>\n<body>{main}{loads}"
            f"<script>{asset(kind + '.js')}</script></body></html>\n")
