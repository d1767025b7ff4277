"""The index's token and line tables equal what the tokenizer and the normaliser give."""

import random
import re

from dealroom.room._tables import (
    char_classes,
    char_codes,
    line_units,
    normalize_line,
    token_bounds,
)

TOKEN = re.compile(r"\w+|[^\w\s]")
ASCII = list("ab c  .,;_9\t\r\x0b\x0c\n\x00\x7f") + ["  ", " \t ", "word", "(4.2)"]
UNICODE = ASCII + ["\u00a0", "\u200b", "\u00ad", "\u2028", "\u3000", "é", "日本", "١٢", "😀"]


def texts(alphabet, n=3000, seed=4):
    rng = random.Random(seed)
    for _ in range(n):
        yield "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 90)))


def test_token_bounds_equal_the_regex():
    for text in texts(UNICODE):
        starts, ends = token_bounds(char_classes(char_codes(text)))
        found = list(TOKEN.finditer(text))
        assert starts.tolist() == [m.start() for m in found]
        assert ends.tolist() == [m.end() for m in found]


def test_lines_are_normalised_as_normalize_line_does():
    for alphabet in (ASCII, UNICODE):
        for text in texts(alphabet):
            codes = char_codes(text)
            starts, _ = token_bounds(char_classes(codes))
            lo, hi, toks, norms = line_units(text, codes, starts)
            lines = [text[a:b] for a, b in zip(lo.tolist(), hi.tolist(), strict=True)]
            assert norms == [normalize_line(line) for line in lines], repr(text)
            assert toks.tolist() == [len(TOKEN.findall(line)) for line in lines]
            assert all(toks > 0) and not any("\n" in x or "\f" in x for x in lines)
