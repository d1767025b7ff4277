"""A screenshot of ``inspect view`` showing a run exported by ``dealroom export inspect``.

    python benchmarks/shot_inspect_view.py [--out docs/images/inspect-view.png]

Generates a 20-document room, runs the scripted root with the oracle sub-agent on it, judges
it, exports it as an inspect_ai log, serves the logs with ``inspect view`` on 127.0.0.1 and
photographs the sample's messages (the root's first reply: its cell as a ``python`` tool call
and the cell's output) in headless Chromium (tests/support/browser.py). Needs the inspect
extra and Chromium.
"""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from support.browser import Browser  # noqa: E402

from dealroom.harness import run_agent  # noqa: E402
from dealroom.judge import judge_run  # noqa: E402
from dealroom.report import export_inspect  # noqa: E402
from dealroom.room import generate_room  # noqa: E402

SCROLL_TO_FIRST_REPLY = """(() => {
  const card = [...document.querySelectorAll('div')].find(
    e => e.innerText.trim().startsWith('ASSISTANT'));
  card.scrollIntoView({block: 'start'});
  let box = card.parentElement;  // below the sticky tabs: its scrolling box back a little
  while (box && box.scrollHeight <= box.clientHeight) box = box.parentElement;
  if (box) box.scrollTop -= 60;
})()"""


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(port: int, proc: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline or proc.poll() is not None:
                raise
            time.sleep(0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images" / "inspect-view.png")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        room, run = Path(tmp) / "g20", Path(tmp) / "runs" / "scripted-oracle"
        generate_room(room, docs=20, seed=1, secret="tests")
        run_agent(room, run, root="scripted", sub="oracle")
        judge_run(run)
        [log] = export_inspect([run], Path(tmp) / "logs")
        port = _port()
        server = subprocess.Popen(["inspect", "view", "--log-dir", str(log.parent),
                                   "--host", "127.0.0.1", "--port", str(port)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait(port, server)
            with Browser(width=1400, height=1000, timeout=60) as browser:
                browser.open(f"http://127.0.0.1:{port}/")
                browser.wait_for("document.body.innerText.includes('rubric')", timeout=60)
                browser.evaluate("[...document.querySelectorAll('button, a')].find("
                                 "e => e.innerText.trim().toUpperCase() === 'MESSAGES').click()")
                browser.wait_for("document.body.innerText.includes('ASSISTANT')", timeout=60)
                browser.evaluate(SCROLL_TO_FIRST_REPLY)
                time.sleep(1.0)  # the scroll's layout settles
                browser.screenshot(args.out)
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
