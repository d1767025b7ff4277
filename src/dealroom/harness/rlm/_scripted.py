"""The ``scripted`` root: a fixed review strategy that writes real code cells.

It plays the root the way a strong model does — outline the room, plan by category, delegate
every document in bounded slices in parallel waves, collect findings into variables, write the
memo section by section as waves return, then submit — by sending code cells into the same REPL
an LLM root uses. It needs no model of its own, so it is the offline default root and a
baseline. Its replies depend only on how many turns it has had and on whether the last output
said the waves are done, so a run with it is deterministic when the sub-agent is.
"""

from __future__ import annotations

import re
from typing import Any

from dealroom.models import ScriptedModel

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
    "AMOUNT: <amount or none> | DOC: <document id> | PAGE: <page>. If there is none, "
    "reply NONE."
)
SLICE_TOKENS = max(256, int(llm.context_tokens * 0.9))
units = []  # (category, (doc, first page, last page), tokens): every page of every document
for d in sorted(room.docs, key=lambda d: (d.folder, d.id)):
    per_page = max(1, d.tokens // max(1, d.pages))
    step = max(1, SLICE_TOKENS // per_page)
    for first in range(1, d.pages + 1, step):
        last = min(d.pages, first + step - 1)
        units.append((d.category, (d.id, first, last), per_page * (last - first + 1)))
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
findings, failed, wave_no = [], [], 0
memo.section("Executive Summary", "Review in progress.")
print(f"{len(room.docs)} documents -> {len(units)} slices -> {len(calls)} sub-agent calls of "
      f"<= {SLICE_TOKENS} tokens -> {len(waves)} waves of <= {WAVE}")
```'''

WAVE_CELL = '''\
```python
if wave_no < len(waves):
    wave = waves[wave_no]
    results = llm_batch([{"prompt": READ_PROMPT, "docs": refs} for _, refs, _ in wave])
    new = 0
    for (category, refs, _), result in zip(wave, results):
        if isinstance(result, SubcallError):
            failed.extend((ref, result.error) for ref in refs)
            continue
        for item in parse_findings(result, refs):
            findings.append((category, item))
            memo.finding(section_for(category, item), **item)
            new += 1
    wave_no += 1
    print(f"wave {wave_no}/{len(waves)}: {len(wave)} calls, {new} findings, "
          f"{sum(isinstance(r, SubcallError) for r in results)} failed")
if wave_no >= len(waves):
    print("WAVES_DONE")
```'''

PARSER = '''\
```python
import re
ECHO = re.compile(r"^(===|---|\\||#)|^D\\d{5}( page \\d+)?\\W*$")

def parse_findings(reply, refs):
    \"\"\"Turn a sub-agent's reply into memo findings citing the document and page read.\"\"\"
    ranges = {doc: (first, last) for doc, first, last in refs}
    items = []
    for line in reply.splitlines():
        line = line.strip().lstrip("-*0123456789. ")
        if len(line.split()) < 4 or line.upper().startswith("NONE") or ECHO.match(line):
            continue  # page markers and headers echoed back are not findings
        fields = dict(
            (k.strip().upper(), v.strip())
            for k, _, v in (part.partition(":") for part in line.split("|")) if v.strip()
        )
        what = fields.get("ISSUE") or line
        named = re.search(r"D\\d{5}", fields.get("DOC", "") + " " + what)
        doc = named.group() if named and named.group() in ranges else refs[0][0]
        first, last = ranges[doc]
        page = re.search(r"\\d+", fields.get("PAGE", ""))
        page = int(page.group()) if page and first <= int(page.group()) <= last else first
        amount = fields.get("AMOUNT", "")
        items.append(dict(
            title=" ".join(what.split()[:8]).rstrip(",.;:"),
            text=what[:500],
            cites=[(doc, page)],
            severity=(fields.get("SEVERITY", "").lower().split() or [None])[0],
            amount=None if amount.lower() in ("", "none", "n/a") else amount[:80],
        ))
    return items[:4 * len(refs)]
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
        + f", in {sent} bounded reading tasks sent to sub-agents in {wave_no} parallel waves. "
        f"{len(missed)} documents were not fully reviewed (their reading tasks failed or were "
        f"never sent): they are listed under Documents Not Reviewed, and nothing in this memo "
        f"rests on the pages not read. {len(findings)} findings in {len(cats)} categories are "
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
    lines = [f"- {doc} {titles.get(doc, '')}: pp.{a}-{b} not read "
             f"({' '.join(why.get((doc, a, b), 'never sent: the turns ran out').split())[:120]})"
             for doc, a, b in unread[:50]]
    if len(unread) > 50:
        lines.append(f"- ... and {len(unread) - 50} more slices")
    memo.section("Documents Not Reviewed", "\\n".join(lines))
memo.move_to_end("Recommended Next Steps")
submit()
```'''


def scripted_policy(messages: list[dict[str, Any]]) -> str:
    """The next cell of the scripted review, from the conversation so far."""
    turn = sum(1 for m in messages if m["role"] == "assistant")
    steps = [OUTLINE, PARSER, PLAN]
    if turn < len(steps):
        return steps[turn]
    last = messages[-1]["content"] if messages else ""
    if "WAVES_DONE" in last or _turns_left(last) <= 1:
        return FINISH
    return WAVE_CELL


def _turns_left(observation: str) -> int:
    """Turns left after this one, read from the harness's "Turn k of T" line (large if unknown)."""
    match = re.match(r"Turn (\d+) of (\d+)", observation)
    return int(match.group(2)) - int(match.group(1)) if match else 1_000


def scripted_root() -> ScriptedModel:
    """A ScriptedModel playing :func:`scripted_policy` for as many turns as the budget allows."""
    return ScriptedModel([scripted_policy], name="scripted", model="scripted", cycle=True)
