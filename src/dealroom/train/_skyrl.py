"""A skyrl-gym environment that runs one dealroom episode turn by turn in the real harness.

SkyRL's generator owns the policy and pushes actions; the harness pulls replies from a model.
The adapter joins them with a bridge client: the harness runs in its own thread, and each time
it calls the root model, the messages it sends become the environment's observation and the
next ``step(action)`` is that call's reply::

    SkyRL                     DealroomEnv                       harness thread
    init(prompt) ───────────▶ start run_agent(root=bridge) ───▶ bridge.chat(system, task)
                 ◀─────────── [system, task]  ◀───────────────── (waits for a reply)
    step(action) ───────────▶ reply ────────────────────────────▶ REPL runs the code ...
                 ◀─────────── [user: "Turn 2 of T. Output ..."]  ◀ bridge.chat(...)
    step(action) ───────────▶ ... the episode ends: judge ─────▶ reward (the reward spec's)
                 ◀─────────── {observations: [], reward, done: True}

Every episode is an ordinary run folder under ``extras["out"]``. Register it with
:func:`~dealroom.train.register_skyrl_env` (id ``dealroom``); ``extras``: ``room``
(required), ``out`` (required: a folder for the run folders), ``sub`` (default ``oracle``),
``max_turns`` (default 30), ``judge`` (default ``reference``), ``settings`` (further harness
settings), ``reward`` (GRPO's reward spec, :mod:`dealroom.train._reward`: ``"pass"`` by
default, ``"total"``, ``"pass+evidence"``, a table, or ``"module:function"``; each term is in
the last step's metadata as ``reward_terms``).
"""

from __future__ import annotations

import asyncio
import queue
import threading
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dealroom.errors import ConfigError, MissingDependency
from dealroom.train._reward import PASS, RewardError, check_reward_setting, reward_of

if TYPE_CHECKING:
    from dealroom.models import ChatResult

_END = object()


class _Bridge:
    """The root model the harness calls: each call is answered by the env's next action."""

    name = model = "skyrl-policy"

    def __init__(self) -> None:
        from dealroom.models import Prices
        from dealroom.types import Usage

        self.prices = Prices()
        self.context_window = 1 << 20
        self.asked: queue.Queue[Any] = queue.Queue()
        self.answers: queue.Queue[Any] = queue.Queue()
        self._usage = Usage

    async def chat(self, messages: list[dict[str, Any]], **_: Any) -> ChatResult:
        from dealroom.models import ChatResult

        self.asked.put([dict(m) for m in messages])
        reply = await asyncio.to_thread(self.answers.get)
        if reply is _END:
            raise ConfigError("the SkyRL environment was closed mid-episode")
        return ChatResult(text=reply, usage=self._usage(calls=1), model=self.model,
                          finish_reason="stop", latency_s=0.0)

    async def aclose(self) -> None:
        return None


def _base() -> type:
    try:
        from skyrl_gym.envs.base_text_env import BaseTextEnv
    except ImportError:
        raise MissingDependency("skyrl-gym", extra="skyrl", feature="the SkyRL adapter") from None
    return BaseTextEnv


class DealroomEnv(_base()):  # type: ignore[misc]
    """One dealroom episode as a multi-turn skyrl-gym text environment."""

    def __init__(self, env_config: Any = None, extras: dict[str, Any] | None = None) -> None:
        super().__init__()
        extras = dict(extras or {})
        for key in ("room", "out"):
            if not extras.get(key):
                raise ConfigError(f"the dealroom environment needs extras[{key!r}]")
        self.room = Path(extras["room"])
        self.run_dir = Path(extras["out"]) / f"episode-{uuid.uuid4().hex[:12]}"
        self.sub = extras.get("sub", "oracle")
        self.max_turns = int(extras.get("max_turns", 30))
        self.judge = extras.get("judge", "reference")
        self.settings = dict(extras.get("settings") or {})
        try:
            self.reward = reward_of(check_reward_setting(extras.get("reward", PASS)))
        except ConfigError as exc:
            raise ConfigError(f"extras['reward']: {exc}") from None
        self.bridge = _Bridge()
        self.thread: threading.Thread | None = None
        self.failure: BaseException | None = None
        self.seen = 0

    def _episode(self) -> None:
        from dealroom.harness import run_agent

        try:
            run_agent(self.room, self.run_dir, root=self.bridge, sub=self.sub,
                      max_turns=self.max_turns, **self.settings)
        except BaseException as exc:  # noqa: BLE001 - reported to SkyRL's thread by _next
            self.failure = exc
        finally:
            self.bridge.asked.put(_END)

    def _next(self) -> list[dict[str, Any]] | None:
        """The messages of the harness's next root call, or None when the episode ended."""
        asked = self.bridge.asked.get()
        if asked is _END:
            if self.failure is not None:
                raise self.failure
            return None
        return asked

    def init(self, prompt: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """Start the episode; the root's first messages (system prompt, task) are the prompt
        (``prompt`` itself is not used: the room is the task)."""
        self.thread = threading.Thread(target=self._episode, daemon=True,
                                       name="dealroom-skyrl-episode")
        self.thread.start()
        messages = self._next()
        if messages is None:
            raise ConfigError(f"the episode in {self.run_dir} ended before its first turn")
        self.seen = len(messages)
        return messages, {"run": str(self.run_dir)}

    def step(self, action: str) -> dict[str, Any]:
        """Send the root's reply; the next observation, or the judged reward at the end."""
        self.turns += 1
        self.bridge.answers.put(action)
        messages = self._next()
        if messages is not None:
            new = [m for m in messages[self.seen:] if m.get("role") != "assistant"]
            self.seen = len(messages)
            return {"observations": new, "reward": 0.0, "done": False,
                    "metadata": {"run": str(self.run_dir)}}
        return self._finish()

    def _finish(self) -> dict[str, Any]:
        from dealroom.judge import judge_run

        if self.thread is not None:
            self.thread.join()
        scores = judge_run(self.run_dir, self.judge)
        metadata: dict[str, Any] = {
            "run": str(self.run_dir), "judge_errors": scores.n_errors,
            "pass_rate": scores.pass_rate if scores.n_criteria else 0.0,
            "reward_kind": scores.headline_kind if self.reward.kind == PASS else self.reward.kind}
        try:
            reward, metadata["reward_terms"] = self.reward(scores, self.run_dir)
        except RewardError as exc:  # a user function's failure: no reward, and why
            reward, metadata["reward_error"] = 0.0, str(exc)
        if scores.n_errors or "reward_error" in metadata:  # never a silent 0: SkyRL sees why
            metadata["reward_unscored"] = True
        return {"observations": [], "reward": reward, "done": True, "metadata": metadata}

    def close(self) -> None:
        """End a running episode (its root call fails, the run folder records it)."""
        if self.thread is not None and self.thread.is_alive():
            self.bridge.answers.put(_END)
            self.thread.join(timeout=60)
