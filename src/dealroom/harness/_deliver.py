"""A run's deliverables, written under the file names the task gives, each in its format.

Agents write Markdown. ``.md`` and ``.markdown`` files hold it as it is, ``.txt`` files as
plain text, and ``.docx`` files as a Word document rendered from it
(:mod:`dealroom.harness._markdown`). Any other extension (``.pdf`` among them: dealroom has no
PDF writer) is refused when the run starts, before a model is opened or a folder made. Each
file is rewritten atomically when its text changes, so a killed run leaves the last version.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from pathlib import Path

from dealroom._util.redact import redact
from dealroom.errors import ConfigError, InputError
from dealroom.runs import RunFolder, deliverable_key, primary_deliverable

DELIVERABLE_FORMATS = ("md", "markdown", "txt", "docx")
"""File extensions a harness writes deliverables in."""


def _writers() -> dict[str, Callable[[str], str | bytes]]:
    from dealroom.harness._markdown import to_docx, to_text

    return {"md": str, "markdown": str, "txt": to_text, "docx": to_docx}


def deliverable_format(filename: str) -> str:
    """The format of a deliverable file: its extension, lower case (``docx``)."""
    return Path(filename).suffix.lower().lstrip(".")


def check_deliverables(deliverables: Mapping[str, str]) -> None:
    """Raise ConfigError unless every deliverable is a plain file name in a format of
    :data:`DELIVERABLE_FORMATS`."""
    from dealroom.room import file_name_problem

    for name, filename in deliverables.items():
        problem = file_name_problem(filename)
        if problem:
            raise InputError(f"deliverable {name!r} names {str(filename)[:80]!r}, {problem}: a "
                             "deliverable is a file name in the run's output/ folder, e.g. "
                             "memo.docx")
        fmt = deliverable_format(filename)
        if fmt not in DELIVERABLE_FORMATS:
            kinds = ", ".join(f".{f}" for f in DELIVERABLE_FORMATS)
            raise ConfigError(
                f"the task asks for the deliverable {filename!r}, which dealroom cannot write "
                f"(it writes {kinds}; there is no PDF writer): name it "
                f"{Path(filename).stem}.docx or .md in the task's deliverables"
            )


class Deliverables:
    """The deliverables of one run folder (:attr:`RunFolder.deliverables`), as they are written.

    :meth:`write` writes one deliverable from Markdown; :meth:`write_memo` writes the RLM
    memo to every deliverable (those given their own text apart); :meth:`finish` writes the
    deliverables never written as empty ones.
    """

    def __init__(self, folder: RunFolder) -> None:
        self.folder = folder
        self.files = folder.deliverables
        check_deliverables(self.files)
        self.main = primary_deliverable(self.files)
        self._texts: dict[str, str] = {}
        self._writers = _writers()
        self._lock = threading.Lock()
        self._finished = False

    def name(self, name: str | None) -> str:
        """The deliverable ``name`` refers to (a name, a file name, ``output/FILE``; None is
        the main one); a ConfigError names the deliverables when it is none of them."""
        if name is None:
            return self.main
        key = deliverable_key(self.files, name)
        if key is None:
            files = ", ".join(f"output/{f}" for f in self.files.values())
            raise ConfigError(f"{name!r} is not a deliverable of this task: its deliverables "
                              f"are {files}")
        return key

    def text(self, name: str | None = None) -> str | None:
        """The Markdown last written to a deliverable, or None."""
        return self._texts.get(self.name(name))

    def write(self, name: str | None, markdown: str) -> bool:
        """Write ``markdown`` to the deliverable ``name`` in its format; False when it already
        holds exactly that, or the run has finished. Known secrets are redacted before it is
        rendered (a ``.docx`` compresses its text, so the file's writer could not find them).
        Thread-safe: it is rendered outside the lock, so :meth:`finish` never waits for a
        rendering (a late one is dropped)."""
        key = self.name(name)
        if self._texts.get(key) == markdown:
            return False
        data = self._writers[deliverable_format(self.files[key])](redact(markdown))
        with self._lock:
            if self._finished:
                return False
            self.folder.write_deliverable(key, data)
            self._texts[key] = markdown
        return True

    def write_memo(self, markdown: str, own: Mapping[str, str] | None = None) -> None:
        """Write the memo to every deliverable, except those ``own`` (name → Markdown) gives
        their own text."""
        own = own or {}
        for key in self.files:
            self.write(key, own.get(key, markdown))

    def finish(self) -> None:
        """Write every deliverable that was never written (in this attempt or an earlier one)
        as an empty one, so a run always leaves its deliverables."""
        for key in self.files:
            if key not in self._texts and not self.folder.deliverable(key).exists():
                self.write(key, "")
        with self._lock:
            self._finished = True

    @property
    def paths(self) -> dict[str, Path]:
        """Deliverable name → its file."""
        return {key: self.folder.deliverable(key) for key in self.files}
