"""Model text at the boundary: terminal control sequences out, everything else kept as data.

A reply can carry ANSI/VT escape sequences (colours, cursor moves, screen clears), OSC
sequences (window titles, hyperlinks, clipboard writes) and bare C0/C1 control characters.
They mean nothing in a memo and can rewrite a terminal, so :func:`strip_controls` removes
them from every reply before anyone sees it. Printable text, newlines and tabs are untouched;
instructions written in the text stay text (it is data to whoever reads it).
"""

from __future__ import annotations

import re

_SEQUENCES = re.compile(
    r"""
    (?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]            # CSI: colours, cursor, erase (ESC [ or 8-bit)
  | (?:\x1b\]|\x9d).*?(?:\x07|\x1b\\|\x9c|$)    # OSC: titles, hyperlinks, clipboard, to ST/BEL
  | (?:\x1b[PX^_]|[\x90\x98\x9e\x9f]).*?(?:\x1b\\|\x9c|$)  # DCS, SOS, PM, APC strings
  | \x1b[ -/]*[0-~]?                            # any other escape (charset, keypad, reset)
    """,
    re.S | re.X,
)
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def strip_controls(text: str) -> tuple[str, int]:
    """``text`` without terminal control sequences, and how many characters were removed.

    Carriage returns become newlines (``\\r\\n`` one newline), so no line can be overwritten.

    >>> strip_controls("\\x1b[31mred\\x1b[0m \\x1b]0;owned\\x07ok\\r\\n")
    ('red ok\\n', 20)
    """
    if "\r" not in text and _CONTROLS.search(text) is None:
        return text, 0
    cleaned = _SEQUENCES.sub("", text.replace("\r\n", "\n"))
    cleaned = _CONTROLS.sub("", cleaned.replace("\r", "\n"))
    return cleaned, len(text) - len(cleaned)


def visible_controls(text: str) -> str:
    """``text`` with every control character but newline and tab shown as an escape, for a
    terminal that must never receive a raw one.

    >>> visible_controls("a\\x1b[2Jb\\tc")
    'a\\\\x1b[2Jb\\tc'
    """
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text.replace("\r", "\\r"))
