"""The regeneration attack: nothing the sandbox sees rebuilds the rubric or the answer key."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dealroom.cli import app
from dealroom.room import agent_files, ensure_index, generate_room
from dealroom.room._generate import PROFILES

ARGS = {"docs": 6, "seed": 1, "profile": "bank", "tokens": 6000, "workers": 1}
HIDDEN_FILES = ("task.json", "answer_key/findings.json", "answer_key/gold_memo.md")


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def hidden_shas(room: Path) -> dict[str, str]:
    return {name: sha(room / name) for name in HIDDEN_FILES}


@pytest.fixture(scope="module")
def room(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("secret") / "room"
    generate_room(out, **ARGS)  # no secret given: a fresh one is drawn
    return out


def sandbox_view(room: Path, dest: Path) -> Path:
    """What the sandboxed REPL can read: the room's agent files (its index left out)."""
    ensure_index(room)
    for file in agent_files(room):
        if not file.path.startswith(".index/"):
            (dest / file.path).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(file.real, dest / file.path)
    return dest


def regenerate_from(view: Path, scratch: Path) -> list[dict[str, str]]:
    """The attack: rebuild the room from room.json's meta, else search seeds and profiles."""
    manifest = json.loads((view / "room.json").read_text())
    meta, docs = manifest["meta"], manifest["documents"]
    seeds = [meta["seed"]] if "seed" in meta else range(2)
    profiles = [meta["profile"]] if "profile" in meta else sorted(PROFILES)
    tokens = meta.get("tokens_requested", sum(d["tokens"] for d in docs))
    found = []
    for seed in seeds:
        for profile in profiles:
            for secret in (None, str(seed)):
                out = scratch / f"{seed}-{profile}-{secret}"
                generate_room(out, docs=len(docs), seed=seed, profile=profile, tokens=tokens,
                              workers=1, secret=secret)
                found.append(hidden_shas(out))
    return found


def test_the_sandbox_view_holds_nothing_that_identifies_the_generation(room, tmp_path):
    view = sandbox_view(room, tmp_path / "view")
    meta = json.loads((view / "room.json").read_text())["meta"]
    assert not {"seed", "profile", "docs_requested", "tokens_requested", "secret"} & set(meta)
    generation = json.loads((room / "answer_key" / "generation.json").read_text())
    visible = b"".join(p.read_bytes() for p in view.rglob("*") if p.is_file())
    assert generation["secret"].encode() not in visible
    assert sorted(p.name for p in view.iterdir()) == ["documents", "room.json"]


def test_the_regeneration_attack_fails(room, tmp_path):
    found = regenerate_from(sandbox_view(room, tmp_path / "view"), tmp_path / "scratch")
    assert len(found) == 2 * 2 * len(PROFILES)
    hidden = hidden_shas(room)
    for attempt in found:
        assert not set(attempt.values()) & set(hidden.values())


def test_the_user_with_the_arguments_and_the_secret_regenerates_the_same_bytes(room, tmp_path):
    generation = json.loads((room / "answer_key" / "generation.json").read_text())
    assert {k: generation[k] for k in ("docs", "seed", "profile", "tokens")} == {
        k: v for k, v in ARGS.items() if k != "workers"}
    again = generate_room(tmp_path / "again", **ARGS, secret=generation["secret"])
    assert hidden_shas(tmp_path / "again") == hidden_shas(room)
    assert [d.sha256 for d in again.documents] == [
        d["sha256"] for d in json.loads((room / "room.json").read_text())["documents"]]
    assert (tmp_path / "again" / "room.json").read_bytes() == (room / "room.json").read_bytes()
    cmd = generation["regenerate"].replace("OUT", str(tmp_path / "cli")).split()[2:]
    result = CliRunner().invoke(app, ["generate", *cmd, "--workers", "1", "--json"])
    assert result.exit_code == 0, result.output
    assert hidden_shas(tmp_path / "cli") == hidden_shas(room)
    env = CliRunner(env={"DEALROOM_ROOM_SECRET": generation["secret"]})
    args = [a for a in cmd[1:] if a not in ("--secret", generation["secret"])]
    result = env.invoke(app, ["generate", str(tmp_path / "env"), *args, "--workers", "1",
                              "--json"])
    assert result.exit_code == 0, result.output
    assert sha(tmp_path / "env" / "task.json") == sha(room / "task.json")


def test_another_secret_gives_another_room(tmp_path):
    a = generate_room(tmp_path / "a", **ARGS, secret="one")
    b = generate_room(tmp_path / "b", **ARGS, secret="two")
    assert [d.sha256 for d in a.documents] != [d.sha256 for d in b.documents]
    assert sha(tmp_path / "a" / "task.json") != sha(tmp_path / "b" / "task.json")


ATTACK_CELL = """
import hashlib, json, os
from dealroom.room import generate_room
m = json.load(open(os.path.join(room.path, "room.json")))
meta, docs = m["meta"], m["documents"]
shas = []
for seed in ([meta["seed"]] if "seed" in meta else range(2)):
    for profile in ([meta["profile"]] if "profile" in meta else ["bank", "software"]):
        out = f"regen-{seed}-{profile}"
        generate_room(out, docs=len(docs), seed=seed, profile=profile, workers=1,
                      tokens=meta.get("tokens_requested", sum(d["tokens"] for d in docs)))
        shas.append(hashlib.sha256(open(out + "/task.json", "rb").read()).hexdigest())
print("SHAS", json.dumps(shas))
for hidden in ("task.json", "answer_key/generation.json"):
    try:
        data = open(os.path.join(room.path, hidden), "rb").read()
        print("READ", hidden, hashlib.sha256(data).hexdigest())
    except OSError:
        pass
"""


def test_a_hostile_cell_cannot_rebuild_the_rubric(room, tmp_path):
    done = subprocess.run([sys.executable, "-m", "dealroom", "repl", str(room), "-c", ATTACK_CELL],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          env={**os.environ, "DEALROOM_ROOM_SECRET": "never-reaches-the-cell"})
    assert done.returncode == 0, done.stderr
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("SHAS ")]
    shas = json.loads(line.removeprefix("SHAS "))
    assert sha(room / "task.json") not in shas
    assert len(shas) == 4  # no seed or profile to read: two of each tried
    assert sha(room / "task.json") not in done.stdout  # the hidden files read as empty or not
    assert sha(room / "answer_key" / "generation.json") not in done.stdout
