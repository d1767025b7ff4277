"""The ``oracle`` sub-agent: a simulator that answers sub-calls from the room's answer key.

It is not a model and never pretends to be one (its client has ``simulator = True``, which
runs record in ``config.json`` ``simulators``; summaries and reports mark it). It stands for a
perfect reader, an upper bound on what a sub-agent can find, so that what the root contributes
(what it delegates, how it writes the memo) can be measured apart from reading::

    sub-call ──> record of the slices sent (context["docs"]: id, pages, chars)
                   │  answer_key/findings.json, read on the host, never in the sandbox
                   ▼
    one line per planted finding with evidence on a page that was sent, in the format the
    scripted root asks for, or NONE:

    ISSUE: <what> [D00042 p.3] | SEVERITY: high | AMOUNT: $1,819,000 | DOC: D00042 | PAGE: 3

A finding whose evidence was all sent is reported whole (its summary, amount and every page
it rests on); one sent only in part is reported from the facts on the pages sent. Text passed
as free ``text`` is not read: only document slices sent by reference count, as recorded.
Spec knobs (``oracle:recall=0.7,noise=0.1,seed=3``): each finding is kept with probability
``recall`` (drawn once per finding and seed), and for each line, with probability ``noise``, a
look-alike wrong line is added (another finding's issue with a wrong amount and severity,
cited to a page it is not on). Draws are keyed by the seed and the call's record, so answers do
not depend on the order of concurrent calls.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, fields
from pathlib import Path
from random import Random
from typing import Any

from dealroom.errors import ConfigError, DealroomError, ModelError
from dealroom.models._result import ChatResult
from dealroom.models._spec import ModelSpec, Prices
from dealroom.models._wire import estimate_usage
from dealroom.room import count_tokens
from dealroom.types import Usage

ORACLE = "oracle"
MODEL_ID = "oracle-simulator"
CONTEXT_WINDOW = 32_768
"""Tokens of slice the root may send one call (as a typical sub-agent's window)."""
SEVERITIES = ("high", "medium", "low")
_AMOUNT = re.compile(r"(?:USD|\$)\s?(\d[\d,]*(?:\.\d+)?)(\s*million)?", re.I)


@dataclass(frozen=True)
class OracleSettings:
    """The ``oracle:KEY=VALUE,...`` knobs, validated when built."""

    recall: float = 1.0
    """Probability that a finding in the pages sent is reported (drawn once per finding)."""
    noise: float = 0.0
    """Per reported line (and per call with none), probability of one look-alike wrong line."""
    seed: int = 0
    """Keys every draw; samples of one policy differ by seed."""

    def __post_init__(self) -> None:
        for name in ("recall", "noise"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ConfigError(f"oracle {name} must be between 0 and 1, got "
                                  f"{getattr(self, name)!r}")

    @classmethod
    def parse(cls, text: str, options: dict[str, str]) -> OracleSettings:
        known = {f.name: f.type for f in fields(cls)}
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise ConfigError(f"{text!r}: the oracle has no option {', '.join(unknown)} "
                              f"(its options: {', '.join(known)})")
        try:
            values: dict[str, Any] = {k: int(v) if k == "seed" else float(v)
                                      for k, v in options.items()}
        except ValueError:
            raise ConfigError(f"{text!r}: recall and noise are numbers, seed an integer "
                              "(e.g. oracle:recall=0.7,noise=0.1,seed=3)") from None
        return cls(**values)


SPEC_KNOBS = ("price_input", "price_output", "context_window")
"""Knobs of the oracle's spec beside its answers' (``oracle:recall=0.6,price_input=0.1,
price_output=0.4``): what its calls cost and how large a slice it takes, so that it can stand
for a named model of a given price (``--sub fast=oracle:recall=0.6,price_input=0.1``)."""


def oracle_spec(text: str, options: dict[str, str]) -> ModelSpec:
    """The spec of ``oracle`` / ``oracle:recall=...``; bad knobs are a ConfigError now."""
    own = {k: options[k] for k in SPEC_KNOBS if k in options}
    settings = OracleSettings.parse(text, {k: v for k, v in options.items() if k not in own})
    try:
        prices = Prices(input=float(own.get("price_input", 0)),
                        output=float(own.get("price_output", 0)))
        window = int(own.get("context_window", CONTEXT_WINDOW))
    except (ValueError, TypeError):
        raise ConfigError(f"{text!r}: price_input and price_output are USD per 1M tokens, "
                          "context_window an integer") from None
    if window < 1024:
        raise ConfigError(f"{text!r}: context_window must be at least 1024, got {window}")
    return ModelSpec(name=text, kind=ORACLE, model=MODEL_ID, context_window=window,
                     concurrency=1024, priced=True, prices=prices,
                     options={f.name: getattr(settings, f.name) for f in fields(settings)})


def create(spec: ModelSpec) -> OracleModel:
    """The ``oracle`` provider (registered in ``dealroom.providers``)."""
    return OracleModel(spec)


class OracleModel:
    """A :class:`~dealroom.models.ModelClient` that answers sub-calls from the answer key.

    ``takes_context``: the RLM harness passes each sub-call's ``context`` (the room and the
    record of the slices sent); ``check_room`` is called before a run starts, so a room without
    an answer key stops it with a ConfigError before anything is written.
    """

    simulator = True
    takes_context = True
    schema_via = "response_format"
    """A call made with a schema is answered as JSON in :data:`FINDINGS_SCHEMA`'s shape."""

    def __init__(self, spec: ModelSpec) -> None:
        self.spec = spec
        self.name = spec.name
        self.model = spec.model or MODEL_ID
        self.context_window = spec.context_window
        self.prices = spec.prices
        self.settings = OracleSettings(**spec.options)
        self._keys: dict[str, list[dict[str, Any]]] = {}

    def check_room(self, room: Path) -> None:
        """Refuse a room the oracle cannot answer in (no answer key)."""
        self._findings(str(room))

    def _findings(self, room: str) -> list[dict[str, Any]]:
        if room not in self._keys:
            from dealroom.room import load_answer_key

            try:
                self._keys[room] = load_answer_key(Path(room))["findings"]
            except DealroomError as exc:
                raise ConfigError(f"the oracle sub-agent cannot run on {room}: {exc}") from None
        return self._keys[room]

    async def chat(self, messages: list[dict[str, Any]], *, max_tokens: int | None = None,
                   temperature: float | None = None, stop: list[str] | None = None,
                   context: dict[str, Any] | None = None,
                   response_format: dict[str, Any] | None = None, **_: Any) -> ChatResult:
        """The lines for the findings in the slices ``context`` records; with a
        ``response_format``, the same findings as JSON (:func:`structured`)."""
        if not context or "room" not in context:
            raise ModelError("the oracle answers only the sub-calls of a run, which pass the "
                             "record of the slices sent (dealroom run, dealroom eval sweep); it "
                             "cannot be a child agent (rlm()) or a REPL's sub-agent",
                             model=self.name)
        sent = _sent_text(messages) if context.get("truncated") else ""
        rows = answer_rows(self._findings(str(context["room"])), context, sent, self.settings)
        text = structured(rows) if response_format else "\n".join(
            _format(*row) for row in rows) or "NONE"
        tokens = context.get("tokens")  # the input as the harness counted it, when it did
        if not isinstance(tokens, int):
            tokens = estimate_usage(messages, "", self.prices).input_tokens
        out = count_tokens(text)
        usage = Usage(input_tokens=tokens, output_tokens=out, calls=1,
                      cost_usd=self.prices.cost(tokens, 0, out))
        return ChatResult(text=text, usage=usage, model=self.model, finish_reason="stop",
                          latency_s=0.0)

    async def aclose(self) -> None:
        """Nothing to release."""


# -- the answer ---------------------------------------------------------------------------------


def answer(findings: list[dict[str, Any]], context: dict[str, Any], sent_text: str,
           settings: OracleSettings) -> str:
    """The reply to one sub-call: a line per finding with evidence in the slices sent (kept
    with probability ``recall``), look-alike wrong lines at rate ``noise``; ``NONE`` if none.

    >>> key = [{"id": "F-001", "title": "Lease default", "summary": "The lease is in default.",
    ...         "severity": "high", "amounts": [{"value": 250000}],
    ...         "evidence": [{"doc": "D00001", "page": 2, "fact": "in default"}]}]
    >>> print(answer(key, {"docs": [{"id": "D00001", "pages": [1, 3]}]}, "",
    ...              OracleSettings()).replace(" | ", "\\n"))
    ISSUE: The lease is in default. [D00001 p.2]
    SEVERITY: high
    AMOUNT: $250,000
    DOC: D00001
    PAGE: 2
    >>> answer(key, {"docs": [{"id": "D00001", "pages": [3, 4]}]}, "", OracleSettings())
    'NONE'
    """
    return "\n".join(_format(*row) for row in answer_rows(findings, context, sent_text,
                                                          settings)) or "NONE"


Row = tuple[str, str, str, str, int]
"""One line's (what, severity, amount, document, page)."""


def answer_rows(findings: list[dict[str, Any]], context: dict[str, Any], sent_text: str,
                settings: OracleSettings) -> list[Row]:
    """The findings :func:`answer` reports, one row each."""
    ranges = _ranges(context)
    if not ranges:
        return []
    cut = bool(context.get("truncated"))
    lines = []
    for finding in findings:
        evidence = finding.get("evidence") or []
        seen = [e for e in evidence if _was_sent(e, ranges, cut, sent_text)]
        if seen and _draw(settings.seed, "recall", finding.get("id")) < settings.recall:
            lines.append(_line(finding, seen, whole=len(seen) == len(evidence)))
    rng = Random(_key(settings.seed, "noise", json.dumps(context.get("docs"), sort_keys=True),
                      context.get("prompt", "")))
    wrong = [_look_alike(rng.choice(findings), ranges, rng)
             for _ in range(max(1, len(lines))) if findings and rng.random() < settings.noise]
    return lines + wrong


def structured(rows: list[Row]) -> str:
    """``rows`` as JSON in :data:`FINDINGS_SCHEMA`'s shape (``none`` amounts are null)."""
    return json.dumps({"findings": [
        {"issue": " ".join(what.replace("|", "/").split()), "severity": severity,
         "amount": None if amount == "none" else amount, "document": doc, "page": page}
        for what, severity, amount, doc, page in rows]})


def _ranges(context: dict[str, Any]) -> dict[str, list[tuple[int, int]]]:
    """Document id → the (first, last) page ranges the call sent."""
    out: dict[str, list[tuple[int, int]]] = {}
    for ref in context.get("docs") or []:
        first, last = (ref.get("pages") or [None, None])[:2]
        if isinstance(first, int) and isinstance(last, int) and first <= last:
            out.setdefault(str(ref.get("id")), []).append((first, last))
    return out


def _was_sent(evidence: dict[str, Any], ranges: dict[str, list[tuple[int, int]]], cut: bool,
              sent_text: str) -> bool:
    """The evidence's page was sent; on the last page of a slice cut to fit, its fact too."""
    page = evidence.get("page")
    for first, last in ranges.get(str(evidence.get("doc")), []):
        if isinstance(page, int) and first <= page <= last:
            if cut and page == last:
                return _norm(str(evidence.get("fact", ""))) in sent_text
            return True
    return False


def _line(finding: dict[str, Any], seen: list[dict[str, Any]], *, whole: bool) -> Row:
    cites = " ".join(dict.fromkeys(f"[{e['doc']} p.{e['page']}]" for e in seen))
    if whole:
        what = str(finding.get("summary") or finding.get("title", ""))
        amounts = [a.get("value") for a in finding.get("amounts") or []]
        amount = _usd(amounts[0]) if amounts else "none"
    else:
        facts = "; ".join(dict.fromkeys(str(e.get("fact", "")) for e in seen))
        what = f"{finding.get('title', '')}: {facts}"
        amount = next((_usd(v) for v in map(_amount_in, (e.get("fact", "") for e in seen))
                       if v is not None), "none")
    main = seen[0]
    return (f"{what} {cites}", str(finding.get("severity", "medium")), amount,
            str(main["doc"]), int(main["page"]))


def _look_alike(finding: dict[str, Any], ranges: dict[str, list[tuple[int, int]]],
                rng: Random) -> Row:
    """Another finding's issue, stated as live, with a wrong amount and severity, cited to a
    page that was sent but does not hold it."""
    amounts = [a.get("value") for a in finding.get("amounts") or [] if a.get("value")]
    base = float(amounts[0]) if amounts else float(rng.randrange(50_000, 5_000_000, 1_000))
    wrong = round(base * rng.choice((0.4, 0.6, 1.5, 2.5)), -3)
    severity = rng.choice([s for s in SEVERITIES if s != finding.get("severity")])
    doc = rng.choice(sorted(ranges))
    first, last = rng.choice(ranges[doc])
    page = rng.randint(first, last)
    what = (f"{finding.get('title', 'An issue')}: outstanding, with an exposure of "
            f"{_usd(wrong)} [{doc} p.{page}]")
    return what, severity, _usd(wrong), doc, page


def _format(what: str, severity: str, amount: str, doc: str, page: int) -> str:
    what = " ".join(what.replace("|", "/").split())
    return f"ISSUE: {what} | SEVERITY: {severity} | AMOUNT: {amount} | DOC: {doc} | PAGE: {page}"


def _amount_in(fact: str) -> float | None:
    match = _AMOUNT.search(fact)
    if not match:
        return None
    value = float(match.group(1).replace(",", ""))
    return value * 1e6 if match.group(2) else value


def _usd(amount: float | str) -> str:
    value = float(amount)
    return f"${value:,.2f}" if round(value, 2) != int(value) else f"${int(value):,}"


def _sent_text(messages: list[dict[str, Any]]) -> str:
    return _norm(" ".join(str(m.get("content", "")) for m in messages if m.get("role") == "user"))


def _norm(text: str) -> str:
    return " ".join(text.split()).lower()


def _key(seed: int, *parts: object) -> int:
    digest = hashlib.sha256(json.dumps([seed, *parts], default=str).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _draw(seed: int, *parts: object) -> float:
    """A uniform draw in [0, 1) fixed by the seed and ``parts``."""
    return _key(seed, *parts) / 2**64
