"""A client that opens its model on the first call, so nothing starts until it is needed."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from dealroom.models._client import ModelClient, check
from dealroom.models._registry import open_model
from dealroom.models._result import ChatResult
from dealroom.models._spec import ModelSpec, resolve_model_spec


class LazyModel:
    """A :class:`ModelClient` for ``spec`` whose provider is opened (and preflighted) on the
    first :meth:`chat`. ``name``, ``model``, ``context_window`` and ``prices`` come from the
    spec, so work that only needs them (sizing slices, budgets) starts nothing: ``dealroom
    repl`` without the ``local`` extra runs cells that never call ``llm``."""

    def __init__(self, spec: ModelSpec, *, concurrency: int | None = None) -> None:
        self.spec = spec.with_concurrency(concurrency)
        self.name = spec.name
        self.model = spec.model
        self.context_window = spec.context_window
        self.prices = spec.prices
        self._client: ModelClient | None = None
        self._lock = asyncio.Lock()

    @property
    def opened(self) -> bool:
        return self._client is not None

    async def _open(self) -> ModelClient:
        async with self._lock:
            if self._client is None:
                client = await asyncio.to_thread(open_model, self.spec)
                try:
                    await check(client)
                except BaseException:
                    await client.aclose()
                    raise
                self._client = client
            return self._client

    async def chat(self, messages: list[dict[str, Any]], **options: Any) -> ChatResult:
        client = self._client or await self._open()
        return await client.chat(messages, **options)

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()


def lazy_model(spec: str | ModelSpec, *, models_file: Path | None = None, role: str = "sub",
               concurrency: int | None = None) -> LazyModel:
    """A :class:`LazyModel`; the spec string is resolved now, so a bad one fails at once."""
    resolved = spec if isinstance(spec, ModelSpec) else resolve_model_spec(
        spec, models_file=models_file, role=role)
    return LazyModel(resolved, concurrency=concurrency)
