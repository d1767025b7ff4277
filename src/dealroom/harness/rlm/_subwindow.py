"""Sub-call slices sized in the sub-agent model's own tokens, and re-cut when refused.

Slices are planned from the room's words-v1 token tables (no text is read to size them).
The sub model counts differently (words-v1 is about 15% off BPE counts, more on number-heavy
legal text), so the words-v1 budget of a call is the sub's window less its answer, divided by
the sub's tokens per words-v1 token and a margin. That ratio is measured on the first large
call with the model's own count where it can be had (``POST /tokenize``, an ``hf:``
tokenizer) before the root starts, on a sample of every document, so that what the root is
told one call can carry (``llm.context_tokens``) is what the host admits; it is raised by every
reply's reported ``usage.prompt_tokens`` and every refusal's count. A call the endpoint still
refuses for length is re-cut smaller and sent again under the same ``call_id``
(:data:`MAX_RECUTS` times); what it could not carry is handed back as ``unsent``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from dealroom.models import PromptCounter

if TYPE_CHECKING:
    from dealroom.models import ModelClient

MARGIN = 0.08
"""Share of the sub's window held back for the count's remaining error."""
MAX_RECUTS = 3
"""Times a call refused for length is cut smaller and sent again."""
LEARN_SHARE = 0.25
"""A call teaches the ratio only when it fills at least this share of the window (a short
prompt is mostly chat template)."""
MIN_TOKENS = 64


class SubWindow:
    """How many words-v1 tokens of input fit one sub-call."""

    def __init__(self, sub: ModelClient) -> None:
        self.sub = sub
        self.counter = PromptCounter(sub)
        self.ratio = 1.0
        """Sub-model tokens per words-v1 token (never below 1: words-v1 may only be trusted
        as far as it counts high)."""
        self.calibrated = False

    def context_tokens(self, out: int) -> int:
        """Words-v1 tokens of a call's input (system, prompt, slices) that fit its window."""
        room = self.sub.context_window - out
        return max(MIN_TOKENS, int(room / (self.ratio * (1 + MARGIN))))

    def sample_tokens(self) -> int:
        """Words-v1 tokens of one calibration count: enough to teach the ratio."""
        return int(LEARN_SHARE * self.sub.context_window / self.ratio) + 1

    def learn(self, counted: int | None, planned: int) -> None:
        """Raise the ratio from a count of a call's prompt by the sub model."""
        if counted and planned >= LEARN_SHARE * self.sub.context_window / max(self.ratio, 1):
            self.ratio = max(self.ratio, counted / planned)

    async def calibrate(self, messages: list[dict[str, Any]], planned: int) -> None:
        """Measure the ratio once, on a large call, with the sub model's own count."""
        if self.calibrated or planned < LEARN_SHARE * self.sub.context_window / self.ratio:
            return
        self.calibrated = True
        exact = await self.counter.exact(messages)
        self.learn(exact, planned)

    def recut(self, planned: int, counted: int | None, out: int) -> int:
        """The input budget of the next attempt after a refusal of one of ``planned`` tokens
        (``counted`` by the endpoint, when it said): always smaller."""
        self.learn(counted, planned)
        if counted:
            fits = int(planned * (self.sub.context_window - out) / counted / (1 + MARGIN))
        else:
            fits = planned // 2
        return min(fits, planned * 3 // 4)
