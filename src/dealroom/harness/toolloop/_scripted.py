"""The ``scripted`` tool-loop policy: what a typical tool-calling agent does, as a baseline.

List the folders, grep for red-flag terms, read the documents with the most hits a few pages at
a time, write a memo from what it saw, then stop calling tools. Offline and deterministic.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from dealroom.models import ScriptedModel

RED_FLAGS = (
    "change of control|assign|terminat|indemnif|litigation|claim|audit|assessment|permit|"
    "licen[cs]e|breach|incident|remediation|severance|covenant|related party|missing"
)
READS = 8
_HIT = re.compile(r"^(D\d{5}) p\.(\d+): (.*)$", re.M)


def _tool(name: str, **arguments: Any) -> str:
    return "```tool\n" + json.dumps({"name": name, "arguments": arguments}) + "\n```"


def _hits(messages: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    for m in messages:
        if m["role"] == "user" and "[grep]" in m["content"]:
            return _HIT.findall(m["content"])
    return []


def toolloop_policy(messages: list[dict[str, Any]]) -> str:
    """The next reply of the scripted tool-loop agent."""
    turn = sum(1 for m in messages if m["role"] == "assistant")
    if turn == 0:
        return _tool("list")
    if turn == 1:
        return _tool("grep", pattern=RED_FLAGS)
    hits = _hits(messages)
    ranked = [doc for doc, _ in Counter(h[0] for h in hits).most_common(READS)]
    if turn - 2 < len(ranked):
        return _tool("read", doc=ranked[turn - 2])
    if turn - 2 == len(ranked):
        lines = [f"- {snippet.strip()} [{doc} p.{page}]" for doc, page, snippet in hits[:60]]
        memo = "# Due Diligence Memo\n\n## Findings\n\n" + "\n".join(lines or ["- none found"])
        memo += "\n\n## Recommended Next Steps\n\n- Review the cited provisions in full.\n"
        return _tool("write", text=memo)
    return "The memo is written."


def scripted_toolloop() -> ScriptedModel:
    """A ScriptedModel playing :func:`toolloop_policy`."""
    return ScriptedModel([toolloop_policy], name="scripted", model="scripted", cycle=True)
