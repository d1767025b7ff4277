"""The dealroom error tree, rendered once by the CLI's top-level handler.

    DealroomError
    ├── ConfigError            bad flags, settings or files a user gave (no traceback)
    │   ├── MissingDependency  an optional package is not installed; says the exact pip install
    │   └── InputError         a flag value or a file's content is malformed (a wrong type, out
    │                          of range, nested too deep, an unsafe name); the CLI exits 2
    ├── RoomError              a data room is missing, malformed or fails validation
    ├── ModelError             a model endpoint failed after retries (carries the model name)
    ├── SandboxError           the REPL worker could not be started or talked to
    └── BudgetExceeded         a turn, token, cost or time budget ran out (carries what was spent)

    DealroomWarning (a UserWarning)  a result stands but may mislead; the CLI prints one line
"""

from __future__ import annotations

from typing import Any


class DealroomError(Exception):
    """Base of every error dealroom raises on purpose."""


class DealroomWarning(UserWarning):
    """A result that stands but may mislead (a setting unlike the sweep's, an interval over too
    few rooms); raised with :func:`warnings.warn`, printed by the CLI as one yellow line."""


class ConfigError(DealroomError):
    """A user-supplied setting, flag or file is invalid; the message says what to do instead."""


class InputError(ConfigError):
    """A flag value or a file's content is malformed: a wrong type, a value out of range, JSON
    or TOML nested too deep, an unsafe name or path. The CLI exits 2, as for a usage error."""


class MissingDependency(ConfigError):
    """An optional dependency is missing."""

    def __init__(self, package: str, extra: str | None = None, feature: str = "") -> None:
        install = f'pip install "dealroom[{extra}]"' if extra else f"pip install {package}"
        what = f" for {feature}" if feature else ""
        super().__init__(f"{package} is needed{what} but is not installed: run `{install}`")
        self.package = package
        self.extra = extra


class RoomError(DealroomError):
    """A data room is missing, malformed, or fails validation."""


class ModelError(DealroomError):
    """A model call failed for good (after retries)."""

    def __init__(self, message: str, model: str = "", status: int | None = None) -> None:
        super().__init__(f"{model}: {message}" if model else message)
        self.model = model
        self.status = status


class SandboxError(DealroomError):
    """The sandboxed REPL worker could not be started or stopped responding."""


class BudgetExceeded(DealroomError):
    """A budget ran out; ``partial`` holds whatever result exists so far."""

    def __init__(self, resource: str, spent: float, budget: float, partial: Any = None) -> None:
        super().__init__(f"{resource} budget exhausted: spent {spent:g} of {budget:g}")
        self.resource = resource
        self.spent = spent
        self.budget = budget
        self.partial = partial
