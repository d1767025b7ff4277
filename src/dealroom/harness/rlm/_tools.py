"""The user's own functions in the REPL: sandboxed tools and host tools.

    --tools FILE.py        the module runs inside the sandbox (no network, the room read-only,
                           as any cell); its public functions are REPL names
    --host-tools FILE.py   the module runs on the host (keys, network, licence servers); the
                           REPL gets one stub per public function that sends a ``host_tool``
                           request: arguments and result as JSON, a time-out per call, a cap
                           per run, the run's budget checked first, each call recorded (a
                           ``host_tool`` event) and answered from the records on resume

A module's public functions are its top-level ``def``s whose names do not start with ``_``;
the root's system prompt lists each with its signature and the first line of its docstring
(read from the source, so the host never runs a sandboxed tool's code). The files are copied
into the run folder (``tools/``): a resumed run loads the sandboxed tools from that copy.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dealroom.errors import ConfigError

if TYPE_CHECKING:
    from dealroom.harness.rlm._engine import Episode

MAX_SOURCE = 1 << 20
"""Bytes a tools file may hold."""
MAX_RESULT = 1 << 20
"""Characters of JSON a host tool's result may take."""
REPL_NAMES = frozenset({"room", "llm", "llm_batch", "rlm", "rlm_batch", "memo", "budget",
                        "history", "submit", "SubcallError", "SubcallFailed", "MemoTooLarge",
                        "ToolError", "Path", "answers"})
"""Names the REPL already holds: a tool may not take them."""


@dataclass(frozen=True)
class ToolInfo:
    """What the root is told of one tool."""

    name: str
    signature: str
    summary: str

    def line(self) -> str:
        return f"{self.name}{self.signature}" + (f"  {self.summary}" if self.summary else "")


@dataclass(frozen=True)
class ToolFile:
    """One tools file: its name, source and public functions."""

    name: str
    source: str
    tools: tuple[ToolInfo, ...]


def read_tool_file(path: Path | str) -> ToolFile:
    """A tools file read and described (not run); a file that cannot be is a ConfigError."""
    path = Path(path)
    try:
        if path.suffix != ".py" or not path.is_file():
            raise ConfigError(f"tools file {path}: not a .py file")
        if path.stat().st_size > MAX_SOURCE:
            raise ConfigError(f"tools file {path}: larger than {MAX_SOURCE:,} bytes")
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source, filename=str(path))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"tools file {path}: cannot be read ({exc})") from None
    except SyntaxError as exc:
        raise ConfigError(f"tools file {path}: syntax error line {exc.lineno}: {exc.msg}") \
            from None
    tools = tuple(_describe(node) for node in tree.body
                  if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                  and not node.name.startswith("_"))
    if not tools:
        raise ConfigError(f"tools file {path}: no public function (a top-level def whose name "
                          "does not start with _)")
    return ToolFile(path.name, source, tools)


def _describe(node: ast.FunctionDef | ast.AsyncFunctionDef) -> ToolInfo:
    returns = f" -> {ast.unparse(node.returns)}" if node.returns is not None else ""
    doc = (ast.get_docstring(node) or "").strip().splitlines()
    return ToolInfo(node.name, f"({ast.unparse(node.args)}){returns}", doc[0] if doc else "")


def check_names(files: list[ToolFile]) -> None:
    """Tool names are unique and take no REPL name (a ConfigError says which)."""
    seen: dict[str, str] = {}
    for file in files:
        for tool in file.tools:
            if tool.name in REPL_NAMES:
                raise ConfigError(f"tools file {file.name}: {tool.name!r} is a REPL name "
                                  f"already; rename it")
            if tool.name in seen:
                raise ConfigError(f"tool {tool.name!r} is defined in {seen[tool.name]} and "
                                  f"{file.name}; rename one")
            seen[tool.name] = file.name


def tools_prompt(sandboxed: list[ToolFile], host: list[ToolFile]) -> str:
    """The lines the root's system prompt gets for the user's tools ('' when none)."""
    lines = [t.line() for f in sandboxed for t in f.tools]
    remote = [t.line() for f in host for t in f.tools]
    if not lines and not remote:
        return ""
    text = "\nYour team's own functions are in the REPL too:\n"
    if lines:
        text += "".join(f"  {line}\n" for line in lines)
    if remote:
        text += ("Run outside the sandbox (JSON arguments and results; a failure raises "
                 "ToolError):\n" + "".join(f"  {line}\n" for line in remote))
    return text


def load_module(name: str, source: str, filename: str) -> Any:
    """Run ``source`` as a module named ``name`` (registered in ``sys.modules``, so classes
    and dataclasses in it work) and return it."""
    import types

    module = types.ModuleType(name)
    module.__file__ = filename
    sys.modules[name] = module
    exec(compile(source, filename, "exec"), module.__dict__)  # noqa: S102 - the user's tools
    return module


def public_functions(module: Any, names: list[str]) -> dict[str, Callable[..., Any]]:
    """The module's functions listed in ``names`` (its public top-level defs)."""
    found = {n: getattr(module, n, None) for n in names}
    return {n: f for n, f in found.items() if callable(f)}


@dataclass
class HostTools:
    """The host tools of a run: loaded on the host, called for the REPL (see the module
    docstring); ``calls`` counts the calls made live in this process."""

    files: list[ToolFile]
    functions: dict[str, Callable[..., Any]]
    timeout: float
    max_calls: int
    calls: int = 0

    @classmethod
    def load(cls, paths: list[str], timeout: float, max_calls: int) -> HostTools:
        files = [read_tool_file(p) for p in paths]
        functions: dict[str, Callable[..., Any]] = {}
        for path, file in zip(paths, files, strict=True):
            spec = importlib.util.spec_from_file_location(
                f"dealroom_host_tools_{Path(path).stem}", path)
            if spec is None or spec.loader is None:
                raise ConfigError(f"host tools file {path}: cannot be imported")
            module = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(module)
            except Exception as exc:  # noqa: BLE001 - the user's module, reported as such
                raise ConfigError(f"host tools file {path} failed to import: "
                                  f"{type(exc).__name__}: {exc}") from None
            functions.update(public_functions(module, [t.name for t in file.tools]))
        return cls(files, functions, timeout, max_calls)

    async def call(self, name: str, args: list[Any], kwargs: dict[str, Any]) -> Any:
        """``name(*args, **kwargs)``, awaited or in a thread, within :attr:`timeout`."""
        function = self.functions.get(name)
        if function is None:
            raise ToolFailed(f"no host tool {name!r}; there are: {', '.join(self.functions)}")
        if self.calls >= self.max_calls:
            raise ToolFailed(f"host tool calls are capped at {self.max_calls} per run "
                             "(--max-host-tool-calls)")
        self.calls += 1
        import asyncio  # the host's side only: the REPL, which imports this module, never waits

        work = (function(*args, **kwargs) if asyncio.iscoroutinefunction(function)
                else asyncio.to_thread(function, *args, **kwargs))
        try:
            value = await asyncio.wait_for(work, self.timeout)
        except TimeoutError:
            raise ToolFailed(f"{name} took longer than {self.timeout:g} s "
                             "(--host-tool-timeout)") from None
        except Exception as exc:  # noqa: BLE001 - the tool's failure is this call's error
            raise ToolFailed(f"{name} raised {type(exc).__name__}: {exc}") from None
        return _as_json(name, value)


class ToolFailed(Exception):
    """A host tool call that failed; its message is what the REPL's ToolError says."""


def _as_json(name: str, value: Any) -> Any:
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ToolFailed(f"{name} returned a value that is not JSON ({exc})") from None
    if len(text) > MAX_RESULT:
        raise ToolFailed(f"{name} returned {len(text):,} characters of JSON, more than "
                         f"{MAX_RESULT:,}")
    return json.loads(text)


@dataclass
class ToolBox:
    """A run's tools: the sandboxed files (sent to each REPL) and the host tools."""

    sandboxed: list[ToolFile] = field(default_factory=list)
    host: HostTools | None = None

    @property
    def prompt(self) -> str:
        return tools_prompt(self.sandboxed, self.host.files if self.host else [])

    def repl_options(self) -> dict[str, Any]:
        """What the worker needs to build the tools' REPL names (see :func:`repl_tools`)."""
        return {"tools": [{"name": f.name, "source": f.source,
                           "functions": [t.name for t in f.tools]} for f in self.sandboxed],
                "host_tools": [t.name for f in (self.host.files if self.host else [])
                               for t in f.tools]}

    def keep(self, run_dir: Path) -> None:
        """Copy the tools files into ``run_dir/tools/{sandbox,host}/`` (once)."""
        from dealroom._util.files import write_text_atomic

        for kind, files in (("sandbox", self.sandboxed),
                            ("host", self.host.files if self.host else [])):
            for file in files:
                copy = run_dir / "tools" / kind / file.name
                if not copy.is_file():
                    write_text_atomic(copy, file.source)

    async def answer(self, episode: Episode, payload: dict[str, Any], turn: int) -> dict[str, Any]:
        """A ``host_tool`` request of ``episode``'s REPL: from the records when it was made
        before, else called and recorded."""
        call_id = episode.host_call_id(turn)
        replay = episode.ctx.replay
        if (recorded := replay.host_tools.get(call_id)) is not None:
            return recorded
        name = str(payload.get("name"))
        args = payload.get("args") or []
        kwargs = payload.get("kwargs") or {}
        started = time.perf_counter()
        try:
            if self.host is None:
                raise ToolFailed("this run has no host tools (--host-tools)")
            if exhausted := episode.tracker.exhausted():
                raise ToolFailed(f"budget exhausted: {exhausted}")
            answer = {"ok": True, "result": await self.host.call(name, args, kwargs)}
        except ToolFailed as exc:
            answer = {"ok": False, "error": str(exc)}
        result = answer.get("result")
        episode.ctx.emit("host_tool", episode.agent, episode.depth + 1, turn=turn,
                         call_id=call_id, name=name,
                         arguments={"args": args, "kwargs": kwargs}, result=result,
                         result_chars=len(json.dumps(result, ensure_ascii=False)),
                         seconds=round(time.perf_counter() - started, 4),
                         error=answer.get("error"))
        replay.host_tools[call_id] = answer
        return answer


def open_toolbox(settings: Any, run_dir: Path | None = None) -> ToolBox:
    """The run's :class:`ToolBox` from its settings (``tools``, ``host_tools``, ...), every
    file read and checked (a ConfigError before anything starts). With ``run_dir`` (a resumed
    run) the sandboxed tools are read from the copies kept there (:meth:`ToolBox.keep`); host
    tools are imported from where they are, beside the modules they use."""
    def where(path: str) -> Path:
        kept = run_dir / "tools" / "sandbox" / Path(path).name if run_dir else None
        return kept if kept is not None and kept.is_file() else Path(path)

    sandboxed = [read_tool_file(where(p)) for p in settings.tools]
    host = (HostTools.load(list(settings.host_tools), settings.host_tool_timeout,
                           settings.max_host_tool_calls) if settings.host_tools else None)
    check_names(sandboxed + (host.files if host else []))
    return ToolBox(sandboxed, host)


class ToolError(RuntimeError):
    """Raised in the REPL by a host tool whose call failed (its reason is the message)."""


def repl_tools(request: Callable[[str, dict], Any], options: dict[str, Any]) -> dict[str, Any]:
    """Inside the worker: the sandboxed tools' functions and a stub per host tool."""
    names: dict[str, Any] = {}
    for file in options.get("tools") or []:
        stem = "dealroom_tools_" + Path(file["name"]).stem
        try:
            module = load_module(stem, file["source"], f"tools/{file['name']}")
        except Exception as exc:  # noqa: BLE001 - reported as the tools file's failure
            raise RuntimeError(f"tools file {file['name']} failed to load in the sandbox: "
                               f"{type(exc).__name__}: {exc}") from None
        names.update(public_functions(module, file["functions"]))
    for name in options.get("host_tools") or []:
        names[name] = _stub(request, name)
    return names


def _stub(request: Callable[[str, dict], Any], name: str) -> Callable[..., Any]:
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            payload = json.loads(json.dumps({"name": name, "args": list(args),
                                             "kwargs": kwargs}, allow_nan=False))
        except (TypeError, ValueError) as exc:
            raise ToolError(f"{name}: arguments must be JSON ({exc})") from None
        answer = request("host_tool", payload)
        if not answer.get("ok"):
            raise ToolError(answer.get("error") or f"{name} failed")
        return answer.get("result")

    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"Host tool {name}: runs outside the sandbox (JSON in and out)."
    return call
