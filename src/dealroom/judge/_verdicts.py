"""Parsing a judge model's reply into verdicts, repairing what can be repaired.

Accepted shapes: ``{"results": [{"id", "verdict", "reasoning"}, ...]}``, a bare list of such
objects, ``{"C-001": {"verdict", "reasoning"}, ...}``, ``{"C-001": "pass", ...}``, and for a
single criterion ``{"verdict", "reasoning"}``. Repairs: code fences, prose around the JSON,
smart quotes, trailing commas, Python literals and single quotes; a reply cut off mid-way
(``finish_reason: length``) yields the complete objects (and ``"<id>": {...}`` entries) it
holds. Whatever is still missing is
reported so the caller can ask again.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

from dealroom.judge._scores import FAIL, PASS

_PASS_WORDS = {"pass", "passed", "passes", "yes", "true", "met", "satisfied", "meets"}
_FAIL_WORDS = {
    "fail",
    "failed",
    "fails",
    "no",
    "false",
    "not met",
    "unmet",
    "unsatisfied",
    "does not meet",
}
_OBJECT = re.compile(r"\{[^{}]*\}", re.S)
_KEYED = re.compile(r'"([^"\\{}]+)"\s*:\s*(\{[^{}]*\})', re.S)

Verdicts = dict[str, tuple[str, str]]


def parse_verdicts(text: str, ids: list[str]) -> tuple[Verdicts, str | None]:
    """Verdicts found in ``text`` for ``ids``, and what went wrong (None when all were found)."""
    if not text.strip():
        return {}, "the reply was empty"
    data = _load_json(text)
    found: Verdicts = {}
    if data is not None:
        found = _collect(data, ids)
    if len(found) < len(ids):
        for chunk in _OBJECT.findall(text):  # a cut-off reply: take the whole objects it has
            obj = _load_json(chunk)
            if isinstance(obj, dict):
                for key, value in _collect(obj, ids).items():
                    found.setdefault(key, value)
        for key, chunk in _KEYED.findall(text):  # ... and the whole "<id>": {...} entries
            obj = _load_json(chunk)
            if isinstance(obj, dict):
                for item_id, value in _one(key, obj, set(ids)).items():
                    found.setdefault(item_id, value)
    missing = [i for i in ids if i not in found]
    if not missing:
        return found, None
    if data is None and not found:
        return found, "no JSON object in the reply"
    return found, f"no valid verdict for {', '.join(missing)}"


def normalize_verdict(value: object) -> str | None:
    """``pass`` / ``fail`` from the many ways a model says it; None if it is neither."""
    if isinstance(value, bool):
        return PASS if value else FAIL
    word = " ".join(str(value).strip().lower().strip(".!\"'").split())
    if word in _PASS_WORDS:
        return PASS
    if word in _FAIL_WORDS:
        return FAIL
    return None


def _load_json(text: str) -> Any:
    """The first JSON value in ``text`` after light repairs, or None."""
    text = re.sub(r"```(?:json)?", "", text)
    text = text.replace("“", '"').replace("”", '"').replace("‘", "'").replace("’", "'")
    starts = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    if not starts:
        return None
    body = text[min(starts) :]
    for candidate in (body, re.sub(r",\s*([}\]])", r"\1", body)):
        try:
            return json.JSONDecoder().raw_decode(candidate)[0]
        except json.JSONDecodeError:
            pass
        end = max(candidate.rfind("}"), candidate.rfind("]"))
        try:
            return ast.literal_eval(_pythonic(candidate[: end + 1]))
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            pass
    return None


def _pythonic(text: str) -> str:
    return re.sub(
        r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", re.sub(r"\bnull\b", "None", text))
    )


def _collect(data: Any, ids: list[str]) -> Verdicts:
    """Verdicts for ``ids`` from any of the accepted shapes."""
    wanted = set(ids)
    if isinstance(data, dict):
        for key in ("results", "verdicts", "criteria", "criteria_results"):
            if isinstance(data.get(key), list):
                return _collect(data[key], ids)
        if "verdict" in data:
            item_id = str(data.get("id", ids[0] if len(ids) == 1 else ""))
            return _one(item_id, data, wanted)
        found: Verdicts = {}
        for key, value in data.items():
            item = value if isinstance(value, dict) else {"verdict": value}
            found.update(_one(str(key), item, wanted))
        return found
    if isinstance(data, list):
        items = [x for x in data if isinstance(x, dict)]
        if items and all("id" not in x for x in items) and len(items) == len(ids):
            items = [{**x, "id": i} for x, i in zip(items, ids, strict=True)]
        found = {}
        for item in items:
            found.update(_one(str(item.get("id", "")), item, wanted))
        return found
    return {}


def _one(item_id: str, item: dict[str, Any], wanted: set[str]) -> Verdicts:
    verdict = normalize_verdict(item.get("verdict", ""))
    if item_id not in wanted or verdict is None:
        return {}
    reasoning = item.get("reasoning") or item.get("reason") or item.get("explanation") or ""
    return {item_id: (verdict, str(reasoning).strip())}
