"""The one plug-in hook: named objects in an entry-point group, loaded lazily.

Providers (``dealroom.providers``), harnesses (``dealroom.harnesses``) and judges
(``dealroom.judges``) are each a :class:`Registry`. Built-ins are
:class:`importlib.metadata.EntryPoint` objects of the same group, loaded the same way as
third-party ones, and a plug-in cannot take over a built-in name. Nothing is imported until
an entry is loaded.
"""

from __future__ import annotations

import importlib.metadata
from typing import Any

from dealroom.errors import ConfigError


class Registry:
    """The ``kind`` plug-ins of entry-point ``group``; ``builtins``: name → ``module:attr``."""

    def __init__(self, group: str, builtins: dict[str, str], kind: str) -> None:
        self.group = group
        self.builtins = builtins
        self.kind = kind

    def entries(self) -> dict[str, importlib.metadata.EntryPoint]:
        found = {ep.name: ep for ep in importlib.metadata.entry_points(group=self.group)}
        for name, value in self.builtins.items():
            found[name] = importlib.metadata.EntryPoint(name, value, self.group)
        return found

    def names(self) -> list[str]:
        """Every registered name, built-in and installed."""
        return sorted(self.entries())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.entries()

    def load(self, name: str, unknown: str = "") -> Any:
        """The object registered as ``name``; a ConfigError lists the known names (after
        ``unknown``, a hint for the user) or says the plug-in could not be imported."""
        entry = self.entries().get(name)
        if entry is None:
            hint = f"; {unknown}" if unknown else ""
            raise ConfigError(
                f"unknown {self.kind} {name!r}: choose one of {', '.join(self.names())}{hint}"
            )
        try:
            return entry.load()
        except ImportError as exc:
            raise ConfigError(
                f"{self.kind} {name!r} ({entry.value}) could not be imported: {exc}; "
                "reinstall the package that provides it"
            ) from None
