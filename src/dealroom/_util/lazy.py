"""Packages whose public names load on first use, so importing one submodule stays cheap.

Importing ``dealroom.room._store`` runs ``dealroom/room/__init__.py`` first; if that imported
every public name eagerly, the sandboxed worker (which needs the room's store and nothing
else) would also load the generator, ingestion and validation — about a second per REPL start.
A package declares ``_EXPORTS`` (public name → defining module) and gets its ``__getattr__``
and ``__dir__`` here (PEP 562); ``from dealroom.room import Room`` works as before.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, exports: dict[str, str]) -> tuple[Callable[[str], Any],
                                                                  Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``; ``exports`` maps each public name to
    ``module`` (same name there) or ``module:name``."""
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        target = exports.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, _, attr = target.partition(":")
        value = getattr(importlib.import_module(module), attr or name)
        namespace[name] = value  # later lookups skip this function
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__
