"""A room at a glance: documents, folders, categories, tokens, findings and criteria by type."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dealroom.errors import RoomError
from dealroom.room._manifest import ANSWER_KEY, TASK, load_manifest, load_task
from dealroom.room._task_schema import Criterion, RoomTask

TYPE_ORDER = ("fact", "conclusion", "citation", "severity", "recommendation", "timeline",
              "monetary", "formatting")


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise RoomError(f"cannot read {path}: {exc}") from exc
    except RecursionError:
        raise RoomError(f"cannot read {path}: it is nested too deep") from None


def inspect_room(path: Path | str) -> dict[str, Any]:
    """Counts that describe the room at ``path``; raises :class:`RoomError` if it is not one.

    Keys: ``name``, ``docs``, ``folders``, ``categories``, ``tokens``, ``pages``, ``bytes``,
    ``tokenizer``, ``formats``, ``docs_by_category``, ``criteria``, ``criteria_by_type``,
    ``negative_criteria``, ``findings`` (``None`` without an answer key), ``findings_by_kind``,
    ``cured_findings``, ``multi_doc_findings``, ``missing_documents``, ``meta``,
    ``generation`` (a generated room's seed, profile and requested counts from
    ``answer_key/generation.json``, without its secret; ``None`` otherwise) and ``outline``
    (see :func:`outline`).
    """
    root = Path(path)
    manifest = load_manifest(root)
    totals = manifest.totals()
    criteria: list[Criterion] = []
    if (root / TASK).is_file():
        criteria = RoomTask.model_validate(load_task(root)).criteria
    types: Counter[str] = Counter(c.type or "untyped" for c in criteria)
    by_type = {t: types[t] for t in TYPE_ORDER if types[t]}
    by_type.update({t: n for t, n in sorted(types.items()) if t not in by_type})
    info: dict[str, Any] = {
        "name": manifest.name,
        **totals,
        "tokenizer": manifest.tokenizer,
        "formats": dict(sorted(Counter(d.format for d in manifest.documents).items())),
        "docs_by_category": dict(sorted(Counter(d.category for d in manifest.documents).items())),
        "criteria": len(criteria),
        "criteria_by_type": by_type,
        "negative_criteria": sum(bool(c.expect and c.expect.negative) for c in criteria),
        "findings": None,
        "findings_by_kind": {},
        "cured_findings": 0,
        "multi_doc_findings": 0,
        "missing_documents": 0,
        "meta": manifest.meta,
        "generation": None,
        "outline": outline(manifest.documents),
    }
    generation = root / ANSWER_KEY / "generation.json"
    if generation.is_file():
        info["generation"] = {k: v for k, v in _json(generation).items()
                              if k not in ("secret", "regenerate")}
    key = root / ANSWER_KEY / "findings.json"
    if key.is_file():
        findings = [f for f in _json(key).get("findings", []) if isinstance(f, dict)]
        info["findings"] = len(findings)
        info["findings_by_kind"] = dict(sorted(Counter(str(f.get("kind")) for f in findings)
                                               .items()))
        info["cured_findings"] = sum(bool(f.get("cured")) for f in findings)
        info["multi_doc_findings"] = sum(bool(f.get("multi_doc")) for f in findings)
        info["missing_documents"] = sum(len(f.get("missing") or []) for f in findings)
    return info


def outline(documents: Sequence[Any]) -> list[dict[str, Any]]:
    """The room's folders by category, in path order: per category its ``category`` name,
    ``docs``, ``tokens``, ``pages``, ``bytes`` and ``folders``, each a folder (``folder``, its
    path under the category; ``""`` for the category's own files) with the same sums."""
    sums: dict[str, dict[str, dict[str, int]]] = {}
    for doc in documents:
        inside = doc.category and doc.folder.startswith(doc.category)
        under = doc.folder[len(doc.category):].lstrip("/") if inside else doc.folder
        for key in ("", f"/{under}"):  # the category's total, then its folder's
            row = sums.setdefault(doc.category, {}).setdefault(key, dict.fromkeys(_SUMS, 0))
            for name in _SUMS:
                row[name] += 1 if name == "docs" else getattr(doc, name)
    return [{"category": category, **folders[""],
             "folders": [{"folder": key[1:], **row} for key, row in sorted(folders.items())
                         if key]}
            for category, folders in sorted(sums.items())]


_SUMS = ("docs", "tokens", "pages", "bytes")
