"""ChatResult: one model reply, as every provider returns it."""

from __future__ import annotations

from dataclasses import InitVar, dataclass, field
from typing import TYPE_CHECKING, Any

from dealroom._util.reasoning import join_reasoning, split_reasoning
from dealroom.runs import TokenRecord
from dealroom.types import Usage

if TYPE_CHECKING:
    from dealroom.models._hedge import HedgeRecord


@dataclass
class ChatResult:
    """One model reply."""

    text: str
    """The assistant message content, control sequences removed."""
    usage: Usage
    """Tokens and cost of this call (``calls == 1``)."""
    model: str
    """The model id the endpoint reports (falls back to the requested one)."""
    finish_reason: str
    """``stop``, ``length``, ... as reported; ``unknown`` when missing."""
    latency_s: float
    """Seconds of the successful HTTP attempt (queueing and retries excluded)."""
    usage_estimated: bool = False
    """True when the provider sent no usage and tokens were counted with ``count_tokens``."""
    attempts: int = 1
    """HTTP attempts made, retries and hedges included."""
    streamed: bool = False
    """The reply came as a stream of chunks."""
    structured: str | None = None
    """The ``response_format`` shape the endpoint accepted (``json_schema``, ``json_object``),
    or None when none was asked for or the endpoint refused every shape."""
    cut_bytes: int = 0
    """Bytes of reply text past the cap (16 bytes per token asked for) that were dropped."""
    stripped: int = 0
    """Control characters removed from the text (ANSI/OSC sequences and the like)."""
    hedge: HedgeRecord | None = None
    """When the call was re-sent as a straggler: after how long, which attempt won."""
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    """The response body as received (empty for streamed and scripted replies)."""
    tokens: TokenRecord | None = field(default=None, repr=False)
    """The exact prompt and completion token ids and logprobs, from providers that generate
    in-process (``hf:``); ``None`` from endpoints."""
    reasoning: str | None = None
    """The model's reasoning, apart from ``text`` (the answer); None when it had none."""
    served_model: str | None = None
    """The ``model`` the reply itself names (None when it names none)."""
    system_fingerprint: str | None = None
    """The reply's ``system_fingerprint`` (the backend configuration), when it has one."""
    usage_source: str = "usage"
    """Where ``usage`` came from: ``usage`` (the provider reported it), a server's own count
    (``tokenize``, ``llama.cpp``, ``extras``: see ``dealroom.models._probe``) or
    ``estimate`` (words-v1)."""
    reasoning_shape: str | None = None
    """How the reasoning came (``field``, ``inline``, ``closing``, ``open``, ``unclosed``; see
    ``dealroom._util.reasoning``); None without reasoning."""
    max_tokens: int | None = None
    """The reply cap the call was sent with (``max_tokens``); None when it carried none."""
    timeouts: dict[str, Any] | None = None
    """What the call waited for (``_timing.Waits.record``): ``{first_byte, deadline, from}``."""
    opened: InitVar[bool] = False
    """The model's chat template opens ``<think>`` in the prompt: a reply that never closes
    it is reasoning only (shape ``unclosed``)."""

    def __post_init__(self, opened: bool = False) -> None:
        """A reply whose reasoning is inline (``<think>…</think>``) is taken apart, whatever
        provider made it: ``text`` is then the answer alone."""
        if self.usage_estimated and self.usage_source == "usage":
            self.usage_source = "estimate"
        if self.reasoning is None:
            split = split_reasoning(self.text, opened)
            self.text, self.reasoning, self.reasoning_shape = (split.answer, split.reasoning,
                                                               split.shape)
        elif self.reasoning_shape is None:
            self.reasoning_shape = "field"

    @property
    def whole_text(self) -> str:
        """The reply as the model wrote it, reasoning included (see ``join_reasoning``)."""
        return join_reasoning(self.reasoning, self.text, self.reasoning_shape)

    def record(self) -> dict[str, Any]:
        """What a ``model_call`` event keeps of how the provider answered."""
        return {"attempts": self.attempts, "finish_reason": self.finish_reason,
                "usage_estimated": self.usage_estimated, "usage_source": self.usage_source,
                "streamed": self.streamed,
                "structured": self.structured, "cut_bytes": self.cut_bytes,
                "stripped": self.stripped, "hedge": self.hedge,
                "reasoning": self.reasoning_shape, "max_tokens": self.max_tokens,
                **({"timeouts": self.timeouts} if self.timeouts else {}),
                **{k: v for k, v in (("model", self.served_model),
                                     ("system_fingerprint", self.system_fingerprint)) if v}}
