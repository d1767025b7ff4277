"""The ``scripted`` root: a fixed review strategy that writes real code cells.

It plays the root the way a strong model does — outline the room, plan by category, delegate
every document in bounded slices in parallel waves, collect findings into variables, write the
memo section by section as waves return, then submit — by sending code cells into the same REPL
an LLM root uses. It needs no model of its own, so it is the offline default root and a
baseline. Its replies depend only on how many turns it has had and on whether the last output
said the waves are done, so a run with it is deterministic when the sub-agent is.

A sub-agent's reply becomes findings only through its lines in the finding format (``ISSUE:
<what> | SEVERITY: ... | DOC: ... | PAGE: ...``); a reply with none (prose, boilerplate) is
counted in ``non_findings`` and written nowhere. A finding without a page in the slice cites
the page holding the text it quotes, else the document alone.

Variants (``scripted:KEY=VALUE,...``, see :class:`ScriptedVariant`) are other real policies
over the same cells: ``coverage=0.3,seed=S`` delegates a seeded random share of each category's
documents, ``waves=1`` sends one call per turn, ``memo=end`` writes the memo only after the last
wave. Each adds a cell to a turn of the plain policy; seeds give distinct samples.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, fields
from typing import Any

from dealroom.errors import ConfigError
from dealroom.models import FINDINGS_SCHEMA, ScriptedModel

OUTLINE = '''\
```python
print(room.tree())
print(budget)
```'''

PLAN = '''\
```python
import math
READ_PROMPT = (
    "List every due-diligence issue in these excerpts (change of control, assignment, "
    "exclusivity, indemnity, litigation, tax, permits, IP, data security, environment, "
    "severance, debt covenants, related parties, inconsistent figures, missing documents). "
    "One line per issue: ISSUE: <what, with parties and dates> | SEVERITY: high/medium/low | "
    "AMOUNT: <amount or none> | DOC: <document id> | PAGE: <page>. Each document's text is "
    "headed '=== <document id> | <title> | <path> ===' and each of its pages "
    "'--- <document id> page <n> ---': give the id and page of the document the issue is in. "
    "If there is none, reply NONE."
)
FINDINGS = {findings}  # the schema of a reply's findings, where the sub-agent takes one
READ_JSON = (
    "List every due-diligence issue in these excerpts (change of control, assignment, "
    "exclusivity, indemnity, litigation, tax, permits, IP, data security, environment, "
    "severance, debt covenants, related parties, inconsistent figures, missing documents) "
    "as findings: issue (what, with parties and dates), severity (high/medium/low), amount "
    "(or null), document (its id) and page. Each document's text is headed '=== <document "
    "id> | <title> | <path> ===' and each of its pages '--- <document id> page <n> ---'. "
    "If there is none, give no findings."
)
# findings come as fields, not lines of prose, where the sub takes a schema and the parser
# reads fields (one replayed from a run older than typed findings reads prose only)
TYPED = llm.schema_via == "response_format" and globals().get("PARSES_FIELDS", False)
SLICE_TOKENS = max(256, int(llm.context_tokens * 0.9))
units = []  # (category, (doc, first page, last page), tokens): every page of every document
for d in sorted(room.docs, key=lambda d: (d.folder, d.id)):
    first, size = 1, 0
    for page, tokens in enumerate(room.page_tokens(d.id), start=1):
        tokens += 12  # the page's marker
        if size and size + tokens > SLICE_TOKENS:
            units.append((d.category, (d.id, first, page - 1), size))
            first, size = page, 0
        size += tokens
    units.append((d.category, (d.id, first, max(first, d.pages)), size))
calls = []  # (category, [refs], tokens): small documents of a category share one call
for category, ref, tokens in units:
    if calls and calls[-1][0] == category and calls[-1][2] + tokens <= SLICE_TOKENS:
        calls[-1][1].append(ref)
        calls[-1][2] += tokens
    else:
        calls.append([category, [ref], tokens])
turns_for_waves = max(1, (budget.turns_left or 30) - 3)
WAVE = max(16, math.ceil(len(calls) / turns_for_waves))
waves = [calls[i:i + WAVE] for i in range(0, len(calls), WAVE)]
findings, failed, wave_no, later = [], [], 0, []
memo.section("Executive Summary", "Review in progress.")
print(f"{len(room.docs)} documents -> {len(units)} slices -> {len(calls)} sub-agent calls of "
      f"<= {SLICE_TOKENS} tokens -> {len(waves)} waves of <= {WAVE}")
```'''

WAVE_CELL = '''\
```python
if wave_no < len(waves):
    wave = waves[wave_no]
    results = llm_batch([{"prompt": READ_JSON, "docs": refs, "schema": FINDINGS} if TYPED
                         else {"prompt": READ_PROMPT, "docs": refs} for _, refs, _ in wave])
    new = 0
    for (category, refs, _), result in zip(wave, results):
        if isinstance(result, SubcallError):
            failed.extend((ref, result.error) for ref in refs)
            continue
        later.extend([category, [ref], 0] for ref in result.unsent)  # not sent: a later wave
        for item in parse_findings(result, refs):
            findings.append((category, item))
            memo.finding(section_for(category, item), **item)
            new += 1
    wave_no += 1
    print(f"wave {wave_no}/{len(waves)}: {len(wave)} calls, {new} findings, "
          f"{sum(isinstance(r, SubcallError) for r in results)} failed, "
          f"{non_findings} replies without findings so far")
if wave_no >= len(waves) and later:  # what the host could not fit goes in one more wave
    calls += later
    waves += [later[i:i + WAVE] for i in range(0, len(later), WAVE)]
    print(f"{len(later)} slices the host did not send go in a later wave")
    later = []
if wave_no >= len(waves):
    print("WAVES_DONE")
```'''

PARSER = '''\
```python
import re
ECHO = re.compile(r"^(===|---|\\||#)|^D\\d{5}( page \\d+)?\\W*$")
FINDING = re.compile(r"^[\\s\\-*\\d.]*\\**ISSUE\\**\\s*:\\s*\\**\\s*"
                     r"(?!none\\b)[^|\\s]+(?:[ \\t]+[^|\\s]+){2}", re.I)  # as measure's
non_findings = 0  # replies holding no line in the finding format (and not NONE)
PARSES_FIELDS = True  # parse_findings reads schema-typed replies too

def parse_findings(reply, refs):
    \"\"\"Turn a sub-agent's reply into memo findings citing the document and page read: a
    schema-typed reply's fields, else only lines in the finding format (ISSUE: <what> | ...);
    a reply with none that is not NONE is counted in non_findings, and nothing of it is
    written.\"\"\"
    global non_findings
    ranges = {doc: (first, last) for doc, first, last in refs}
    if isinstance(reply, dict):  # {"findings": [{issue, severity, amount, document, page}]}
        return [finding(f["issue"], f["severity"], f["amount"] or "", f["document"],
                        str(f["page"] or ""), ranges)
                for f in reply["findings"]][:4 * len(refs)]
    items = []
    for line in reply.splitlines():
        line = line.strip()
        if not FINDING.match(line) or ECHO.match(line):
            continue  # prose, boilerplate, page markers and headers echoed back
        line = line.lstrip("-*0123456789. ")
        fields = dict(
            (k.strip(" *").upper(), v.strip(" *"))
            for k, _, v in (part.partition(":") for part in line.split("|")) if v.strip(" *")
        )
        items.append(finding(fields.get("ISSUE", ""), fields.get("SEVERITY", ""),
                             fields.get("AMOUNT", ""), fields.get("DOC", ""),
                             fields.get("PAGE", ""), ranges))
    if not items and not re.match(r"\\W*NONE\\b", reply.strip(), re.I):
        non_findings += 1
    return items[:4 * len(refs)]

def finding(what, severity, amount, named, page, ranges):
    \"\"\"A memo finding: the document the answer names (``named``, else in ``what``), the
    page it cites in the slice (else the one holding the text it quotes), severity, amount.\"\"\"
    doc = named_doc(named + " " + what, ranges)
    cites = []
    if doc is not None:  # a finding the answer does not place is left unattributed
        first, last = ranges[doc]
        page = re.search(r"\\d+", page)
        page = int(page.group()) if page and first <= int(page.group()) <= last \\
            else quoted_page(doc, first, last, what)
        cites = [(doc, page) if page else doc]  # the document alone: no page it is on
    return dict(
        title=" ".join(what.split()[:8]).rstrip(",.;:"),
        text=what[:500],
        cites=cites,
        severity=(severity.lower().split() or [None])[0],
        amount=None if amount.lower() in ("", "none", "n/a") else amount[:80],
    )

def words_of(text):
    return re.findall(r"\\w+", text.lower())

def quoted_page(doc, first, last, what):
    \"\"\"The page of pages first..last of doc that holds the text the answer quotes (a
    quotation in it, else eight of its words in a row), or None.\"\"\"
    quotes = re.findall(r"[\\"\\u201c]([^\\"\\u201d]{12,})[\\"\\u201d]", what)
    probes = [" ".join(words_of(q)) for q in sorted(quotes, key=len, reverse=True)]
    said = words_of(what)
    probes += [" ".join(said[i:i + 8]) for i in range(len(said) - 7)] or [" ".join(said)]
    pages = {n: " " + " ".join(words_of(room.text(doc, n))) + " "
             for n in range(first, last + 1)}
    for probe in probes:
        for n, text in pages.items():
            if len(probe.split()) >= 3 and f" {probe} " in text:
                return n
    return None

TITLES = {d.id: d.title for d in room.docs}

def named_doc(text, ranges):
    """The document of the slice the answer names (its id, else its title), or None; a
    one-document slice is that document."""
    if len(ranges) == 1:
        return next(iter(ranges))
    ids = [d for d in re.findall(r"D\\d{5}", text) if d in ranges]
    if ids:
        return ids[0]
    low = text.lower()
    titled = [d for d in ranges if len(TITLES.get(d, "")) > 3 and TITLES[d].lower() in low]
    return max(titled, key=lambda d: len(TITLES[d])) if titled else None
RESOLVED = re.compile(r"waive|cured|resolved|settled|renewed|amended|released", re.I)
MISSING = re.compile(r"missing|not (been )?provided|not in the (data )?room|referenced but", re.I)

def section_for(category, item):
    """Where a finding goes in the memo the instructions ask for."""
    if MISSING.search(item["text"]):
        return "Missing Documents"
    if RESOLVED.search(item["text"]):
        return "Resolved Items"
    return f"Key Findings: {category}"
print("parser ready")
```'''

FINISH = '''\
```python
cats = sorted({c for c, _ in findings})
high = sum(1 for _, f in findings if f["severity"] == "high")
why = {ref: error for ref, error in failed}
sent = sum(len(w) for w in waves[:wave_no])  # waves cut `calls` in order
unread = [ref for i, (_, refs, _) in enumerate(calls) for ref in refs
          if i >= sent or ref in why]
missed = sorted({doc for doc, _, _ in unread})
part = [doc for doc in missed if any(
    ref[0] == doc and ref not in why for _, refs, _ in calls[:sent] for ref in refs)]
if not unread:
    memo.section("Executive Summary", (
        f"We reviewed all {len(room.docs)} documents of the data room in {len(calls)} bounded "
        f"reading tasks sent to sub-agents in {len(waves)} parallel waves. {len(findings)} "
        f"findings in {len(cats)} categories are set out below, {high} rated high severity, "
        f"each with the document and page it rests on. 0 slices could not be read."
    ))
else:
    memo.section("Executive Summary", (
        f"We reviewed {len(room.docs) - len(missed)} of the {len(room.docs)} documents of the "
        f"data room in full" + (f" and {len(part)} in part" if part else "")
        + f", from {sent} bounded reading tasks whose answers were read, in {wave_no} parallel "
        f"waves of sub-agents. "
        f"{len(missed)} documents were not fully reviewed (their reading tasks failed, or the "
        f"turns ran out before their answers were read): they are listed under Documents Not "
        f"Reviewed, and nothing in this memo rests on the pages not read. "
        f"{len(findings)} findings in {len(cats)} categories are "
        f"set out below, {high} rated high severity, each with the document and page it rests on."
    ))
for title in ("Resolved Items", "Missing Documents"):
    if title not in memo.sections:
        memo.section(title, "None identified in the documents reviewed.")
    memo.move_to_end(title)
memo.section("Recommended Next Steps", "\\n".join([
    "1. Confirm each high-severity finding against the cited document before signing.",
    "2. Obtain required counterparty consents and waivers ahead of closing.",
    "3. Quantify the listed exposures in the purchase price, escrow or specific indemnities.",
    "4. Request any document referenced in the room but not provided.",
] + (["5. Review the documents listed under Documents Not Reviewed."] if unread else [])))
if unread:
    titles = {d.id: d.title for d in room.docs}
    late = "the turns ran out before its answer was used"  # sent or not: never called unsent
    lines = [f"- {doc} {titles.get(doc, '')}: pp.{a}-{b} not read "
             f"({' '.join(why.get((doc, a, b), late).split())[:120]})"
             for doc, a, b in unread[:50]]
    if len(unread) > 50:
        lines.append(f"- ... and {len(unread) - 50} more slices")
    memo.section("Documents Not Reviewed", "\\n".join(lines))
memo.move_to_end("Recommended Next Steps")
submit()
```'''


DEFER = '''\
```python
class DeferredMemo:
    """Holds every memo write until flush(): the memo is written after the last wave."""
    def __init__(self, memo):
        self._memo, self._writes = memo, []
    def __getattr__(self, name):
        attr = getattr(self._memo, name)
        return (lambda *a, **k: self._writes.append((name, a, k))) if callable(attr) else attr
    def flush(self):
        for name, a, k in self._writes:
            getattr(self._memo, name)(*a, **k)
        return self._memo
memo = DeferredMemo(memo)
print("memo writes held until the last wave")
```'''

FLUSH = '''\
```python
memo = memo.flush()
```'''

RESHAPE = '''\
```python
import random
sample_rng = random.Random({seed})
by_category = {{}}
for d in sorted(room.docs, key=lambda d: d.id):
    by_category.setdefault(d.category, []).append(d.id)
chosen = set()
for category in sorted(by_category):
    ids = by_category[category]
    chosen.update(sample_rng.sample(ids, max(1, round(len(ids) * {coverage}))))
sent = [[c, [r for r in refs if r[0] in chosen], t] for c, refs, t in calls]
sent = [c for c in sent if c[1]]
WAVE = {width}
waves = [sent[i:i + WAVE] for i in range(0, len(sent), WAVE)]
print(f"delegating {{len(chosen)}} of {{len(room.docs)}} documents ({coverage:.0%} of each "
      f"category) in {{len(sent)}} calls -> {{len(waves)}} waves of <= {{WAVE}}")
```'''


ROUTE = '''\
```python
READ_MODEL = {read!r}
_read_batch = llm_batch
def llm_batch(calls):
    """The reading waves go to READ_MODEL (a call naming its model keeps it)."""
    return _read_batch([{{**c, "model": c.get("model", READ_MODEL)}} if isinstance(c, dict)
                        else {{"prompt": c, "model": READ_MODEL}} for c in calls])
TYPED = llm.models.get(READ_MODEL, {{}}).get("schema_via") == "response_format"
print(f"reading with {{READ_MODEL}}")
```'''

CHECK = '''\
```python
CATEGORY = {{d.id: d.category for d in room.docs}}
cited = sorted({{c for _, f in findings for c in f["cites"] if isinstance(c, tuple)}})
CHECK_TYPED = llm.models.get({check!r}, {{}}).get("schema_via") == "response_format"
results = llm_batch([{{"prompt": READ_JSON, "docs": [(doc, page, page)], "model": {check!r},
                      "schema": FINDINGS}} if CHECK_TYPED else
                     {{"prompt": READ_PROMPT, "docs": [(doc, page, page)], "model": {check!r}}}
                     for doc, page in cited])
checked = [(c, f) for c, f in findings if not any(isinstance(x, tuple) for x in f["cites"])]
for (doc, page), result in zip(cited, results):
    if isinstance(result, SubcallError):  # unchecked: the readers' findings on it stay
        checked += [(c, f) for c, f in findings if (doc, page) in f["cites"]]
        continue
    checked += [(CATEGORY[doc], item) for item in parse_findings(result, [(doc, page, page)])]
findings = checked
memo._writes = [w for w in memo._writes if w[0] != "finding"]
for category, item in findings:
    memo.finding(section_for(category, item), **item)
print(f"CHECKED {{len(cited)}} cited pages with {check!r}: {{len(findings)}} findings")
```'''


@dataclass(frozen=True)
class ScriptedVariant:
    """The options of ``scripted:KEY=VALUE,...``; the defaults are the plain policy."""

    coverage: float = 1.0
    """Share of each category's documents delegated (at least one each), drawn with ``seed``."""
    seed: int = 0
    """Seeds the draw of documents: samples of one policy differ by seed."""
    waves: int | None = None
    """Most sub-calls per wave (1: one call per turn, no parallel waves); None: as planned."""
    memo: str = "incremental"
    """``incremental``: write findings as waves return; ``end``: only after the last wave."""
    read: str = ""
    """The named sub-agent model the reading waves go to (``llm(..., model=read)``); "": the
    default. Slices are sized by ``llm.context_tokens`` (the default's): name the read model
    first (``--sub fast=... --sub strong=...``)."""
    check: str = ""
    """A named sub-agent model that checks the findings after the last wave: each cited page
    is read again by it, and its findings replace the readers' (the memo is written then)."""

    def __post_init__(self) -> None:
        if not 0.0 < self.coverage <= 1.0:
            raise ConfigError(f"scripted coverage must be in (0, 1], got {self.coverage!r}")
        if self.waves is not None and self.waves < 1:
            raise ConfigError(f"scripted waves must be a positive number of calls per wave, "
                              f"got {self.waves!r} (leave it out for waves as planned)")
        if self.memo not in ("incremental", "end"):
            raise ConfigError(f"scripted memo must be incremental or end, got {self.memo!r}")
        for key in ("read", "check"):
            if not re.fullmatch(r"[A-Za-z0-9_-]*", getattr(self, key)):
                raise ConfigError(f"scripted {key} must be a sub-agent model's name, got "
                                  f"{getattr(self, key)!r}")

    @classmethod
    def parse(cls, options: dict[str, str]) -> ScriptedVariant:
        known: dict[str, Any] = {f.name: type(f.default) for f in fields(cls)} | {"waves": int}
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise ConfigError(f"the scripted root has no option {', '.join(unknown)} (its "
                              f"options: {', '.join(known)}; e.g. scripted:coverage=0.3,seed=2)")
        try:
            values: dict[str, Any] = {k: known[k](v) for k, v in options.items()}
        except ValueError:
            raise ConfigError(f"bad scripted option in {options}: coverage is a number, seed "
                              "and waves integers, memo incremental or end, read and check "
                              "model names") from None
        return cls(**values)

    def steps(self) -> list[str]:
        """The opening cells: outline, parser (and deferred memo), plan (and reshaped waves)."""
        parser = PARSER + "\n" + DEFER if self.memo == "end" or self.check else PARSER
        plan = PLAN.replace("{findings}", repr(FINDINGS_SCHEMA))
        plan += ("\n" + ROUTE.format(read=self.read)) if self.read else ""
        if self.coverage < 1.0 or self.waves:
            plan += "\n" + RESHAPE.format(seed=self.seed, coverage=self.coverage,
                                         width=self.waves or "WAVE")
        return [OUTLINE, parser, plan]

    def finish(self) -> str:
        return FLUSH + "\n" + FINISH if self.memo == "end" or self.check else FINISH


def scripted_policy(messages: list[dict[str, Any]],
                    variant: ScriptedVariant | None = None) -> str:
    """The next cell of the scripted review (of ``variant``), from the conversation so far."""
    variant = variant or ScriptedVariant()
    turn = sum(1 for m in messages if m["role"] == "assistant")
    steps = variant.steps()
    if turn < len(steps):
        return steps[turn]
    last = messages[-1]["content"] if messages else ""
    if variant.check and "WAVES_DONE" in last and _turns_left(last) > 1:
        return CHECK.format(check=variant.check)
    if "WAVES_DONE" in last or "CHECKED" in last or _turns_left(last) <= 1:
        return variant.finish()
    return WAVE_CELL


def _turns_left(observation: str) -> int:
    """Turns left after this one, read from the harness's "Turn k of T" line (large if unknown)."""
    match = re.match(r"Turn (\d+) of (\d+)", observation)
    return int(match.group(2)) - int(match.group(1)) if match else 1_000


def scripted_root(**options: str) -> ScriptedModel:
    """A ScriptedModel playing :func:`scripted_policy` for as many turns as the budget allows;
    ``options`` choose a :class:`ScriptedVariant` (its name records them:
    ``scripted:coverage=0.3,seed=2``)."""
    variant = ScriptedVariant.parse(options)
    name = "scripted" + (":" + ",".join(f"{k}={v}" for k, v in options.items()) if options
                         else "")
    policy = functools.partial(scripted_policy, variant=variant)
    return ScriptedModel([policy], name=name, model="scripted", cycle=True)
