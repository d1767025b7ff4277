"""The filler library: pools of pre-rendered paragraphs with their token counts.

Long documents are assembled from whole paragraphs drawn from per-topic pools, so Python does a
few operations per paragraph rather than per word. Each pool is built once per room (and per
worker process) from the sentence banks with seeded slot values, and every paragraph's token
count is computed once, here. Token counts add up exactly because pieces are always joined by
whitespace and the ``ZZA``/``ZZB`` placeholders are swapped for one-word names.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from random import Random

from dealroom.room._generate._doctypes import FAMILIES
from dealroom.room._generate._grammar import GRAMMARS
from dealroom.room._generate._model import RoomContext
from dealroom.room._generate._names import AUDITORS, LAW_FIRMS
from dealroom.room._generate._profiles import PROFILES
from dealroom.room._tokens import count_tokens

GROUPS_PER_TOPIC = 24
GRAMMAR_GROUPS = 120
_SLOT = re.compile(r"\{(\w+)\}")


@dataclass
class Pool:
    """The paragraphs of one topic, in groups: a group uses each sentence at most once, in order."""

    heading: str
    heading_tokens: int
    groups: list[list[tuple[str, int]]]
    """Each group is a list of (paragraph, tokens); a section draws one group."""


class Library:
    """Paragraph pools for every family, built deterministically from the room's key."""

    def __init__(self, ctx: RoomContext) -> None:
        self.ctx = ctx
        profile = PROFILES[ctx.profile]
        rng = Random(f"pool:{ctx.key}:{ctx.profile}")
        values = dict(profile.vocab)
        values["regulator"] = profile.regulators
        values["auditor"] = (ctx.auditor, *AUDITORS)
        values["law_firm"] = (ctx.law_firm, *LAW_FIRMS)
        self._values = values
        self.families: dict[str, list[Pool]] = {}
        for name, topics in FAMILIES.items():
            self.families[name] = [self._pool(heading, body, rng) for heading, body in topics]
        self.grammars: dict[str, list[Pool]] = {
            name: [self._grammar_pool(heading, make, rng) for heading in headings]
            for name, (make, headings) in GRAMMARS.items()
        }
        self._token_cache: dict[str, int] = {}

    def _fill(self, sentence: str, rng: Random) -> str:
        fy = self.ctx.fiscal_year

        def slot(match: re.Match[str]) -> str:
            key = match.group(1)
            if key == "n":
                return str(rng.randint(2, 9))
            if key == "days":
                return str(rng.choice((10, 15, 30, 45, 60, 90)))
            if key == "amount":
                return f"{rng.randrange(50, 5000) * 1000:,}"
            if key == "pct":
                return rng.choice(("3%", "4.5%", "5%", "6%", "7.5%"))
            if key == "uptime":
                return rng.choice(("99.5%", "99.9%", "99.95%"))
            if key == "year":
                return str(rng.randint(fy - 6, fy))
            if key == "future":
                return str(rng.randint(fy + 1, fy + 8))
            return rng.choice(self._values[key])

        text = _SLOT.sub(slot, sentence)
        return text[0].upper() + text[1:]

    def _pool(self, heading: str, body: str, rng: Random) -> Pool:
        sentences = body.splitlines()
        groups = []
        for _ in range(GROUPS_PER_TOPIC):
            order = [x for x in sentences if rng.random() < 0.8] or sentences[:1]
            group = []
            while order:
                k = rng.randint(1, 3)
                text = " ".join(self._fill(x, rng) for x in order[:k])
                group.append((text, count_tokens(text)))
                del order[:k]
            groups.append(group)
        return Pool(heading, count_tokens(heading), groups)

    def _grammar_pool(self, heading: str, make: Callable[[Random], str], rng: Random) -> Pool:
        groups = []
        for _ in range(GRAMMAR_GROUPS):
            group = []
            for _ in range(rng.randint(2, 4)):
                text = " ".join(self._fill(make(rng), rng) for _ in range(rng.randint(1, 3)))
                group.append((text, count_tokens(text)))
            groups.append(group)
        return Pool(heading, count_tokens(heading), groups)

    def topics(self, families: tuple[str, ...]) -> list[Pool]:
        """Every topic pool of the given families, in a fixed order."""
        return [pool for name in families for pool in self.families[name]]

    def tokens(self, text: str) -> int:
        """``count_tokens`` with a cache, for short strings that recur (headings, labels)."""
        n = self._token_cache.get(text)
        if n is None:
            n = count_tokens(text)
            if len(self._token_cache) < 50_000:
                self._token_cache[text] = n
        return n
