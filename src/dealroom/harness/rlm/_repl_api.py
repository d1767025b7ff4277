"""The names the root sees in its REPL, built inside the sandboxed worker.

Everything that needs a model or the budget goes to the host through ``host.request(kind,
payload)`` (see :mod:`dealroom.harness.sandbox`); the host alone holds clients and keys.

    REPL name           request kind   host answer
    llm / llm_batch     "llm"          {"results": [{"ok", "text" | "error", "notes", "unsent",
                                        "value" (a call with schema=)}]}
    rlm                 "rlm"          {"ok", "text" | "error"}
    rlm_batch           "rlm_batch"    {"results": [{"ok", "text" | "error"}]}
    budget              "budget"       the agent's BudgetTracker.snapshot()
    history             "history"      {"turns": [{turn, code, output, reasoning, reply}]}
    room.search         "search"       {"pages": [[rowid, score, offset]]}: the dense half,
                                       embedded and ranked by the host's room (no torch here)
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from dealroom.harness.rlm._memo import MEMO_LIMIT, Memo, MemoTooLarge

if TYPE_CHECKING:
    from dealroom.room import Room


class SubcallError:
    """Stands in a batch's result list for a sub-call that failed; ``.error`` says why."""

    def __init__(self, error: str) -> None:
        self.error = error

    def __repr__(self) -> str:
        return f"SubcallError({self.error!r})"

    def __str__(self) -> str:
        return f"[sub-call failed: {self.error}]"

    def __bool__(self) -> bool:
        return False


class SubResult(str):
    """A sub-call's answer (a ``str``); ``.unsent`` lists the ``(id, from page, to page)``
    slices the host could not fit in the call (send them in a later one), ``.notes`` why."""

    unsent: list[tuple[Any, ...]]
    notes: list[str]

    def __new__(cls, text: str, unsent: Sequence[Sequence[Any]] = (),
                notes: Sequence[str] = ()) -> SubResult:
        result = super().__new__(cls, text)
        result.unsent = [tuple(u) for u in unsent]
        result.notes = list(notes)
        return result


class SubDict(dict):  # type: ignore[type-arg]
    """A schema-typed answer that is an object: a ``dict`` with ``.unsent`` and ``.notes``
    as :class:`SubResult` has."""

    unsent: list[tuple[Any, ...]]
    notes: list[str]


class SubList(list):  # type: ignore[type-arg]
    """A schema-typed answer that is an array: a ``list`` with ``.unsent`` and ``.notes``."""

    unsent: list[tuple[Any, ...]]
    notes: list[str]


def typed_result(value: Any, unsent: Sequence[Sequence[Any]] = (),
                 notes: Sequence[str] = ()) -> Any:
    """A schema-typed answer as the REPL gets it: an object or array with ``.unsent`` and
    ``.notes``, a string as a :class:`SubResult`, a number, boolean or None as it is."""
    if isinstance(value, str):
        return SubResult(value, unsent, notes)
    if not isinstance(value, dict | list):
        return value
    out: SubDict | SubList = SubDict(value) if isinstance(value, dict) else SubList(value)
    out.unsent = [tuple(u) for u in unsent]
    out.notes = list(notes)
    return out


class SubcallFailed(RuntimeError):
    """Raised by ``llm()`` (a single call) when the sub-call failed."""


class BudgetView:
    """``budget`` in the REPL: a live view of turns, tokens, cost and seconds used and left."""

    def __init__(self, request: Callable[[str, dict], dict]) -> None:
        self._request = request

    def snapshot(self) -> dict[str, Any]:
        return self._request("budget", {})

    def __getattr__(self, name: str) -> Any:
        snap = self.snapshot()
        if name in snap:
            return snap[name]
        raise AttributeError(f"budget has no {name!r}; it has {', '.join(snap)}")

    def __repr__(self) -> str:
        snap = self.snapshot()
        return "budget: " + ", ".join(f"{k}={v}" for k, v in snap.items())


class HistoryView:
    """``history`` in the REPL: every earlier turn in full, compacted ones included;
    ``history[i]`` has ``.turn .code .output .reasoning .reply``."""

    def __init__(self, request: Callable[[str, dict], dict]) -> None:
        self._request = request

    def _turns(self) -> list[SimpleNamespace]:
        return [SimpleNamespace(**t) for t in self._request("history", {})["turns"]]

    def __len__(self) -> int:
        return len(self._turns())

    def __getitem__(self, index: int | slice) -> Any:
        return self._turns()[index]

    def __iter__(self) -> Iterator[SimpleNamespace]:
        return iter(self._turns())

    def __repr__(self) -> str:
        turns = self._turns()
        return (f"history: {len(turns)} turns (history[i].turn .code .output .reasoning "
                ".reply)")


def _ref(doc: Any) -> Any:
    if hasattr(doc, "id") and not isinstance(doc, str | tuple | list | dict):
        return doc.id
    if isinstance(doc, tuple | list):
        return [_ref(doc[0]), *doc[1:]]
    return doc


def _call(prompt: Any, text: Any = None, docs: Any = None, schema: Any = None,
          model: Any = None) -> dict[str, Any]:
    if isinstance(prompt, dict):
        return _call(**prompt)
    if docs is not None and (isinstance(docs, str) or hasattr(docs, "id")):
        docs = [docs]
    call = {
        "prompt": str(prompt),
        "text": None if text is None else str(text),
        "docs": [_ref(d) for d in docs or []],
    }
    if schema is not None:
        call["schema"] = json_schema(schema)
    if model is not None:  # a named sub-agent model (llm.models); the host checks the name
        call["model"] = str(model)
    return call


def host_dense_search(request: Callable[[str, dict], dict]
                      ) -> Callable[[str, int, Any], list[tuple[int, float, int]]]:
    """``room.search``'s dense half, asked of the host (which holds the model and the
    embeddings): the worker loads no torch. A refusal is a :class:`RoomError` saying why."""
    from dealroom.errors import RoomError
    from dealroom.harness.sandbox import RemoteError

    def dense_search(query: str, n: int, ranges: Any) -> list[tuple[int, float, int]]:
        try:
            answer = request("search", {"query": query, "n": n,
                                        "ranges": [list(r) for r in ranges or []]})
        except RemoteError as exc:
            raise RoomError(str(exc)) from None
        return [(int(r), float(s), int(o)) for r, s, o in answer["pages"]]

    return dense_search


CHILD_KEYS = ("task", "docs", "budget", "sub")
"""The keys of one ``rlm_batch`` item."""


def _child_item(item: Any) -> dict[str, Any]:
    """One ``rlm_batch`` item as the host takes it: a task string, or a dict of CHILD_KEYS."""
    if isinstance(item, str):
        item = {"task": item}
    if not isinstance(item, dict) or "task" not in item:
        raise TypeError(f"rlm_batch items are task strings or dicts with 'task' (and 'docs', "
                        f"'budget', 'sub'), not {item!r:.80}")
    unknown = sorted(set(item) - set(CHILD_KEYS))
    if unknown:
        raise TypeError(f"rlm_batch item has unknown keys {unknown}: it takes "
                        f"{', '.join(CHILD_KEYS)}")
    docs = item.get("docs")
    if docs is not None and (isinstance(docs, str) or hasattr(docs, "id")):
        docs = [docs]
    budget = item.get("budget")
    if budget is not None and not isinstance(budget, dict):
        raise TypeError(f"an rlm_batch item's budget is a dict (max_turns, max_tokens, "
                        f"max_cost_usd, max_seconds), not {budget!r:.80}")
    sub = item.get("sub")
    return {"task": str(item["task"]), "docs": [_ref(d) for d in docs or []],
            "budget": budget or {}, "sub": None if sub is None else str(sub)}


def json_schema(schema: Any) -> Any:
    """``schema`` as a JSON Schema dict: a dict as given, a pydantic model class converted
    (``model_json_schema()``); anything else a TypeError that says what to give."""
    convert = getattr(schema, "model_json_schema", None)
    if isinstance(schema, type) and callable(convert):
        return convert()
    if isinstance(schema, dict):
        return schema
    raise TypeError(f"schema= takes a JSON Schema dict or a pydantic model class, not "
                    f"{type(schema).__name__}")


def build_namespace(request: Callable[[str, dict], dict], *, room: Room, depth: int,
                    max_depth: int, context_tokens: int, deliverables: dict[str, str],
                    title: str = "Due Diligence Memo",
                    memo_limit: int = MEMO_LIMIT,
                    models: dict[str, Any] | None = None) -> dict[str, Any]:
    """The REPL globals: ``room, llm, llm_batch, rlm, rlm_batch, memo, budget, history,
    submit, SubcallError``.

    ``llm.context_tokens`` is how many tokens of text one sub-call can carry (``llm.models``:
    name → each sub-agent model's window, prices, slice size and ``schema_via``: how a
    ``schema=`` is asked of it, ``response_format`` where the server constrains the reply,
    else ``prompt``; ``llm.schema_via`` is the default model's); a result's
    ``.unsent`` is what the host had to leave out; ``memo`` writes
    ``deliverables`` (name → file name). ``__state__`` (not for the model) returns what the
    host needs after each cell.
    """
    memo = Memo(title, deliverables, memo_limit,
                resolve=lambda doc, page: room.doc(doc).locate(page))
    flags: dict[str, Any] = {"submitted": False, "answer": None}

    def show_notes(result: dict[str, Any]) -> None:
        for note in result.get("notes") or []:
            print(f"[note] {note}", file=sys.stderr)

    def llm_batch(calls: Sequence[Any]) -> list[Any]:
        """Run sub-agent calls in parallel; results in order, SubcallError for failures."""
        payload = {"calls": [_call(c) for c in calls]}
        answer = request("llm", payload)
        out: list[Any] = []
        for r in answer["results"]:
            show_notes(r)
            if not r["ok"]:
                out.append(SubcallError(r["error"]))
            elif "value" in r:  # a call with schema=: the value that matched it
                out.append(typed_result(r["value"], r.get("unsent") or (),
                                        r.get("notes") or ()))
            else:
                out.append(SubResult(r["text"], r.get("unsent") or (), r.get("notes") or ()))
        return out

    def llm(prompt: str, text: str | None = None, docs: Any = None, schema: Any = None,
            model: str | None = None) -> Any:
        """One sub-agent call on a bounded slice (docs: ids or (id, first, last) tuples);
        with ``schema`` (a JSON Schema dict or a pydantic model class) the answer is the
        parsed value that matches it; ``model``: a name in ``llm.models`` (default: the
        agent's default)."""
        result = llm_batch([_call(prompt, text, docs, schema, model)])[0]
        if isinstance(result, SubcallError):
            raise SubcallFailed(result.error)
        return result

    llm.context_tokens = context_tokens  # type: ignore[attr-defined]
    llm.models = dict(models or {})  # type: ignore[attr-defined]
    default: dict[str, Any] = next((m for m in (models or {}).values() if m.get("default")),
                                   {})
    llm.schema_via = default.get("schema_via", "prompt")  # type: ignore[attr-defined]

    def rlm(task: str, docs: Any = None, budget: dict | None = None,
            sub: str | None = None) -> str:
        """A child agent with its own REPL over the same room; returns its answer. ``sub``:
        the name of its default sub-agent model (and its own model)."""
        if depth + 1 >= max_depth:
            raise RuntimeError(
                f"rlm() is not available at depth {depth} with max depth {max_depth}: "
                "use llm() or llm_batch(), or run with a larger --depth"
            )
        docs_list = [_ref(d) for d in (docs or [])]
        payload = {"task": str(task), "docs": docs_list, "budget": budget or {}}
        if sub is not None:
            payload["sub"] = str(sub)
        result = request("rlm", payload)
        if not result["ok"]:
            raise SubcallFailed(result["error"])
        return result["text"]

    def rlm_batch(children: Sequence[Any]) -> list[Any]:
        """Child agents side by side: items are tasks or dicts {task, docs, budget, sub};
        answers in order, a SubcallError for a child that failed."""
        if depth + 1 >= max_depth:
            raise RuntimeError(
                f"rlm_batch() is not available at depth {depth} with max depth {max_depth}: "
                "use llm_batch(), or run with a larger --depth")
        items = [_child_item(c) for c in children]
        answer = request("rlm_batch", {"children": items})
        return [r["text"] if r["ok"] else SubcallError(r["error"]) for r in answer["results"]]

    def submit(answer: str | None = None) -> None:
        """End the review; the memo (or, for a child agent, ``answer``) is delivered."""
        flags["submitted"] = True
        flags["answer"] = None if answer is None else str(answer)
        print("submitted")

    def state() -> dict[str, Any]:
        return {**memo.snapshot(), **flags}

    def reopen() -> None:  # dealroom ask: the run's submit() no longer ends the episode
        flags["submitted"] = False
        flags["answer"] = None

    return {
        "room": room,
        "llm": llm,
        "llm_batch": llm_batch,
        "rlm": rlm,
        "rlm_batch": rlm_batch,
        "memo": memo,
        "budget": BudgetView(request),
        "history": HistoryView(request),
        "submit": submit,
        "SubcallError": SubcallError,
        "SubcallFailed": SubcallFailed,
        "MemoTooLarge": MemoTooLarge,
        "Path": Path,
        "__state__": state,
        "__reopen__": reopen,
    }
