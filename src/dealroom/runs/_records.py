"""``metrics.json`` and ``scores.json``: typed, versioned records of a run folder.

Each is a TypedDict (plain JSON on disk, a plain dict in memory) read through its migration
table and validated (:class:`~dealroom._util.records.Record`): a key older files lack is
allowed, a key present has its type. Written through :func:`check_metrics_written` and
:func:`check_scores_written`: every key a writer of today writes is there, none other.
See docs/measurement.md and docs/judging.md, "Logged metrics".
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import with_config
from typing_extensions import TypedDict

from dealroom._util.records import Migration, Record, migrate
from dealroom.runs._events import RECORD_CONFIG

METRICS_VERSION = 1
"""Format version of ``metrics.json`` written now."""
SCORES_VERSION = 2
"""Format version of ``scores.json`` written now (files without ``version`` are 1; 2 adds
``headline`` and ``headline_kind``)."""

METRICS_MIGRATIONS: dict[int, Migration] = {}
"""Version N → the function that turns a ``metrics.json`` of version N into one of N + 1
(none yet: version 1 is current)."""


def headline_of(scores: dict[str, Any]) -> tuple[float | None, str]:
    """``(headline, headline_kind)`` of a ``scores.json``'s counts: the positive criteria's
    pass rate when some criteria are negative (and some positive), else the total.

    >>> headline_of({"n_criteria": 3, "n_positive": 1, "pass_rate": 0.67,
    ...              "pass_rate_positive": 0.0})
    (0.0, 'positive')
    """
    n_positive, n_criteria = scores.get("n_positive"), scores.get("n_criteria")
    if isinstance(n_positive, int) and isinstance(n_criteria, int) and \
            0 < n_positive < n_criteria:
        return scores.get("pass_rate_positive"), "positive"
    return scores.get("pass_rate"), "total"


def _scores_1_to_2(data: dict[str, Any]) -> dict[str, Any]:
    headline, kind = headline_of(data)
    if isinstance(headline, bool) or not isinstance(headline, int | float):
        headline = None  # a damaged rate is reported under its own key
    return {**data, "headline": headline, "headline_kind": kind}


SCORES_MIGRATIONS: dict[int, Migration] = {1: _scores_1_to_2}
"""Version N → the function that turns a ``scores.json`` of version N into one of N + 1
(1 → 2: ``headline`` and ``headline_kind`` from the counts)."""


@with_config(RECORD_CONFIG)
class UsageRecord(TypedDict, total=False):
    """``Usage.to_dict()``: tokens and cost of some model calls."""

    input_tokens: int
    """Prompt tokens, cached ones included."""
    cached_input_tokens: int
    """Prompt tokens served from the provider's cache."""
    output_tokens: int
    """Completion tokens."""
    cost_usd: float
    """Cost in US dollars (0 for calls without a price)."""
    calls: int
    """Model calls."""


@with_config(RECORD_CONFIG)
class RootShare(TypedDict, total=False):
    """The root's share of all agents' tokens (NaN without tokens)."""

    input: float
    """Root input tokens over all agents' (root, sub, child_root)."""
    output: float
    """Root output tokens over all agents'."""


@with_config(RECORD_CONFIG)
class UsageSummary(TypedDict, total=False):
    """``metrics.json`` ``usage``: tokens and cost, in total and broken down."""

    total: UsageRecord
    """Every model call of the run (all agents; the judge's are in ``scores.json``)."""
    by_role: dict[str, UsageRecord]
    """Usage per role: ``root``, ``sub``, ``child_root``."""
    by_model: dict[str, UsageRecord]
    """Usage per model spec."""
    by_depth: dict[str, UsageRecord]
    """Usage per depth (``"0"`` is the root)."""
    unpriced_calls: int
    """Calls with tokens but neither a recorded cost nor a price."""
    usage_estimated_calls: int
    """Calls whose usage neither the provider reported nor its server counted: words-v1
    estimates (budgets and cost rest on them)."""
    counts_source: dict[str, int]
    """Calls by where their usage came from: ``usage`` (reported), ``tokenize``,
    ``llama.cpp``, ``extras`` (the server's own count), ``estimate``."""
    root_share: RootShare
    """The root's share of the agents' input and output tokens."""
    by_sub: dict[str, UsageRecord]
    """Usage per sub-agent model name (``default`` for a run's one; ``fast``, ``strong``...
    for ``--sub NAME=MODEL``): its sub-calls and the child roots that ran on it, any depth."""
    by_child: dict[str, UsageRecord]
    """Usage per child agent id (``root/c3-1``), its whole subtree included (a parent's
    figures include its children's)."""
    split: dict[str, UsageRecord]
    """Where the tokens went, a partition of ``total``: ``root`` (its own calls),
    ``sub.NAME`` (the root's sub-calls to each model), ``children`` (every child subtree)."""
    root_cost_share: float | None
    """The root's own calls' dollars over the run's (None when nothing cost)."""


@with_config(RECORD_CONFIG)
class Behaviour(TypedDict, total=False):
    """``metrics.json`` ``behaviour``: what the agents did (docs/measurement.md)."""

    sub_calls: int
    """Sub-agent model calls (``role: sub``), any depth."""
    sub_calls_failed: int
    """Those with an ``error``."""
    children: int
    """Child RLMs started (``child_start``)."""
    waves: int
    """The root's waves of sub-calls."""
    max_wave: int
    """Most calls in one root wave."""
    docs_delegated: int
    """Distinct documents named in sub-call ``input.docs``."""
    turns: int
    """Root turns used."""
    memo_incremental: bool | None
    """The memo had sections before the last wave returned; null when no wave was sent."""
    memo_sections: int
    """Sections of the memo at its last ``memo`` event."""
    memo_chars: int
    """Characters of the memo at its last ``memo`` event."""
    docs_read: int | None
    """Distinct documents opened with the tool loop's ``read``; null when no tool was called."""
    room_docs: int | None
    """Documents in the room (``run_start``'s ``docs``): ``docs_read``/``room_docs`` is LAB's
    "Docs read: 31/60"."""
    non_findings: int | None
    """Sub-agent replies to a prompt asking for ``ISSUE:`` lines (the scripted root's finding
    format) that hold no such line and are not ``NONE``: answers that are not findings (the
    scripted root writes nothing of them); null when no sub-call asked for the format."""


@with_config(RECORD_CONFIG)
class CoverageGroup(TypedDict, total=False):
    """Coverage of one category or folder."""

    coverage: float
    """Covered tokens / the group's tokens."""
    tokens_covered: int
    """The group's tokens covered."""
    tokens_total: int
    """The group's tokens."""


@with_config(RECORD_CONFIG)
class CoverageSummary(TypedDict, total=False):
    """``metrics.json`` ``coverage``: how much of the room the agents' evidence covered."""

    coverage: float
    """Covered tokens / room tokens."""
    tokens_covered: int
    """Room tokens covered."""
    tokens_total: int
    """Room tokens."""
    documents_touched: int
    """Documents with any covered token."""
    documents_total: int
    """Documents in the room."""
    by_category: dict[str, CoverageGroup]
    """Per category: ``{coverage, tokens_covered, tokens_total}``."""
    by_folder: dict[str, CoverageGroup]
    """Per folder: ``{coverage, tokens_covered, tokens_total}``."""
    by_document: dict[str, float]
    """Document id → coverage (NaN for a document without tokens)."""
    evidence: dict[str, int]
    """``slices`` observed, raw ``texts`` observed, ``lines_matched``, ``unknown_docs``."""


@with_config(RECORD_CONFIG)
class Metrics(TypedDict, total=False):
    """The keys of ``metrics.json``: everything measured about one run, written when it ends
    (``dealroom.measure.run_metrics``)."""

    version: int
    """Format version of this file (:data:`METRICS_VERSION`); files without it are 1."""
    run: str
    """The run folder's name."""
    room: str
    """The room folder the run used."""
    harness: str
    """``rlm`` or ``toolloop``."""
    root_model: str | None
    """The root's model spec."""
    sub_model: str | None
    """The sub-agent's model spec ("" or null without one)."""
    simulators: list[str]
    """The run's models that are simulators (``config.json`` ``simulators``, e.g.
    ``oracle``): its sub-calls were answered from the answer key."""
    status: str
    """``run_end`` status: ``submitted``, ``finished`` (tool loop), ``budget_exhausted``,
    ``max_turns``, ``errors``, ``error``, ``degraded`` (more than 10% of the sub-calls
    failed); ``running`` without a ``run_end``, ``not_started`` without events."""
    wall_s: float
    """Seconds from the run's start to its last event."""
    events: int
    """Trajectory events read."""
    usage: UsageSummary
    """Tokens and cost, in total and by role, model and depth."""
    behaviour: Behaviour
    """What the agents did: sub-calls, waves, turns, the memo."""
    coverage: CoverageSummary | None
    """How much of the room the evidence covered; null when not measured."""


@with_config(RECORD_CONFIG)
class CriterionRecord(TypedDict, total=False):
    """One criterion's verdict (``criteria_results``)."""

    id: str
    """The criterion's id in the rubric (``C-001``)."""
    title: str
    """The criterion's title."""
    verdict: str
    """``pass``, ``fail`` or ``error`` (the judge could not score it)."""
    reasoning: str
    """Why, in the judge's words."""


@with_config(RECORD_CONFIG)
class TypeTally(TypedDict, total=False):
    """The criteria of one ``type`` (``pass_rate_by_type``)."""

    n: int
    """Criteria of the type."""
    passed: int
    """Those with verdict ``pass``."""
    errors: int
    """Those with verdict ``error``."""
    pass_rate: float | None
    """``passed / n``."""


@with_config(RECORD_CONFIG)
class EvidenceRecord(TypedDict, total=False):
    """Whether the memo cites where the answer key's evidence is (``evidence``;
    docs/judging.md, "Evidence")."""

    precision: float | None
    """``n_citations_correct / n_citations``; null when the memo cites nothing."""
    recall: float | None
    """``n_gold_cited / n_gold``."""
    f1: float | None
    """Harmonic mean of precision and recall; 0 when recall is 0."""
    n_findings: int
    """Gold findings: those of positive criteria that name documents (else the answer
    key's)."""
    n_findings_cited: int
    """Gold findings whose every gold citation the memo makes."""
    n_gold: int
    """Gold citations: a gold finding's document, at the pages its evidence is on."""
    n_gold_cited: int
    """Gold citations the memo makes (the document at one of those pages)."""
    n_citations: int
    """Distinct (document, page) pairs the memo cites (a citation without a page is one)."""
    n_citations_correct: int
    """Those on a page holding answer-key evidence or a page a criterion expects (a citation
    without a page: of a document the rubric or answer key names)."""


@with_config(RECORD_CONFIG)
class ScoresRecord(TypedDict, total=False):
    """The keys of ``scores.json``: its ``version``, Harvey LAB's, then dealroom's
    (docs/judging.md)."""

    version: int
    """Format version of this file (:data:`SCORES_VERSION`); files without it are 1."""
    score: float
    """LAB's all-pass score: 1.0 if every criterion passed, else 0.0."""
    max_score: float
    """1.0."""
    summary: str
    """One line, e.g. ``12/14 criteria passed (85.7%); positive criteria 11/13 (84.6%); 1
    judge error`` (the positive part when the rubric has negative criteria)."""
    all_pass: bool
    """Every criterion passed (false when any is an error)."""
    n_criteria: int
    """Criteria in the rubric (every one has a result)."""
    n_passed: int
    """Criteria with verdict ``pass``."""
    n_errors: int
    """Criteria the judge could not score (verdict ``error``)."""
    headline: float | None
    """The figure shown first, one a memo without findings cannot raise: ``pass_rate_positive``
    when the rubric has negative criteria, else ``pass_rate`` (docs/judging.md, "The
    headline"); null where that rate is."""
    headline_kind: Literal["positive", "total"]
    """What ``headline`` is: ``positive`` (``pass_rate_positive``) or ``total``
    (``pass_rate``)."""
    pass_rate: float | None
    """The total: ``n_passed / n_criteria`` (errors count as not passed); null without
    criteria. LAB-style; an empty memo passes every negative criterion here."""
    pass_rate_judged: float | None
    """``n_passed / (n_criteria - n_errors)``; null when none was scored."""
    n_positive: int
    """Criteria that are not negative (``negative: true`` on the criterion or its
    ``expect``)."""
    n_positive_passed: int
    """Positive criteria with verdict ``pass``."""
    pass_rate_positive: float | None
    """``n_positive_passed / n_positive``: the rate an empty memo scores 0 on; null without
    positive criteria."""
    pass_rate_by_type: dict[str, TypeTally]
    """Per criterion ``type`` (``fact``, ``conclusion``, ``citation``, ``severity``,
    ``recommendation``, ``timeline``, ``monetary``, ``formatting``, or ``untyped``): ``{n,
    passed, errors, pass_rate}``."""
    criteria_results: list[CriterionRecord]
    """``[{id, title, verdict, reasoning}]``, in rubric order."""
    judge: dict[str, Any]
    """``{name: "reference"}`` or ``{name: "llm", model, batch, retries, structured_output,
    models}``; ``structured_output`` counts the judge's calls by the reply shape the endpoint
    accepted: ``json_schema``, ``json_object`` (with a schema) or ``none`` (lenient parsing
    only); ``models``: ``{judge: ModelRecord}``, which endpoint and model judged (as
    ``config.json`` records a run's)."""
    usage: UsageRecord
    """The judge's tokens and cost (zero for the reference judge)."""
    run: str
    """The run folder's name (a run's scores)."""
    room: str
    """The room judged against (a run's scores)."""
    deliverables_missing: list[str]
    """Deliverables the run never wrote (judged as empty)."""
    agreement: dict[str, Any]
    """With a second judge: ``{with, n, excluded, agreement, kappa}``."""
    evidence: EvidenceRecord | None
    """Whether the memo cites the answer key's documents and pages (precision, recall, F1
    and their counts); null when the rubric and answer key name no document. Files written
    before it have none."""


SCORES_OPTIONAL = ("run", "room", "deliverables_missing", "agreement")
"""Keys of ``scores.json`` only some writes have (a run's, a compared one)."""

METRICS_RECORD: Record[Metrics] = Record(Metrics)
SCORES_RECORD: Record[ScoresRecord] = Record(ScoresRecord)


def read_metrics(data: Any, where: str) -> Metrics:
    """``metrics.json``'s data brought to :data:`METRICS_VERSION` and validated."""
    return METRICS_RECORD.read(_migrated(data, where, METRICS_VERSION, METRICS_MIGRATIONS),
                               where)


def read_scores(data: Any, where: str) -> ScoresRecord:
    """``scores.json``'s data brought to :data:`SCORES_VERSION` and validated."""
    return SCORES_RECORD.read(_migrated(data, where, SCORES_VERSION, SCORES_MIGRATIONS), where)


def check_metrics_written(metrics: Metrics) -> None:
    """Raise ValueError unless ``metrics`` is a whole ``metrics.json`` of today."""
    METRICS_RECORD.check_written(metrics, "metrics.json", Metrics.__annotations__)


def check_scores_written(scores: ScoresRecord) -> None:
    """Raise ValueError unless ``scores`` is a whole ``scores.json`` of today."""
    SCORES_RECORD.check_written(scores, "scores.json", [
        k for k in ScoresRecord.__annotations__ if k not in SCORES_OPTIONAL])


def _migrated(data: Any, where: str, current: int,
              migrations: dict[int, Migration]) -> Any:
    from dealroom.errors import ConfigError

    if not isinstance(data, dict):
        return data  # the reader names the kind
    try:
        return migrate(data, current, migrations)
    except ConfigError as exc:
        raise ConfigError(f"{where} has {exc}") from None
