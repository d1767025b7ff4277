"""Screenshots of ``inspect view`` showing runs exported by ``dealroom export inspect``.

    python benchmarks/shot_inspect_view.py [--out docs/images/inspect-view.png]
                                           [--list-out docs/images/inspect-view-list.png]

Generates a 20-document room, runs the scripted root with the oracle sub-agent on it, judges
it, runs a sweep on the same room (two roots x 2 samples at T = 3), exports the run and the
sweep's episodes as inspect_ai logs, serves them with ``inspect view`` on 127.0.0.1 and
photographs, in headless Chromium (tests/support/browser.py), the list of logs (``--list-out``)
and the run's messages (``--out``: the root's first reply, its cell as a ``python`` tool call
and the cell's output). Needs the inspect extra and Chromium.
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

from dealroom.eval import run_sweep  # noqa: E402
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


def _wait_for_rows(browser: Browser, n: int, seconds: float = 180) -> None:
    """Until the list shows every row's details (inspect view fills them in when the page is
    idle, so look now and then rather than all the time)."""
    deadline = time.monotonic() + seconds
    while browser.evaluate("(document.body.innerText.match(/room=\"g20\"/g) || []).length") < n:
        if time.monotonic() > deadline:
            raise TimeoutError(f"inspect view listed fewer than {n} logs in {seconds} s")
        time.sleep(2.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images" / "inspect-view.png")
    parser.add_argument("--list-out", type=Path,
                        default=ROOT / "docs" / "images" / "inspect-view-list.png")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        room, run = Path(tmp) / "g20", Path(tmp) / "runs" / "scripted-oracle"
        generate_room(room, docs=20, seed=1, secret="tests")
        run_agent(room, run, root="scripted", sub="oracle")
        judge_run(run)
        (Path(tmp) / "spec.toml").write_text(
            f'rooms = ["{room}"]\nroots = ["scripted", "scripted:coverage=0.3"]\n'
            'subs = ["oracle"]\nmax_turns = [3]\nsamples = 2\n')
        run_sweep(Path(tmp) / "spec.toml", Path(tmp) / "sweep", workers=1)
        log, *_ = export_inspect([run, Path(tmp) / "sweep"], Path(tmp) / "logs")
        port = _port()
        server = subprocess.Popen(["inspect", "view", "--log-dir", str(log.parent),
                                   "--host", "127.0.0.1", "--port", str(port)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            _wait(port, server)
            with Browser(width=1400, height=1000, timeout=60) as browser:
                browser.open(f"http://127.0.0.1:{port}/")
                _wait_for_rows(browser, 5)
                time.sleep(1.0)  # the list's layout settles
                browser.screenshot(args.list_out)
                browser.evaluate(f"location.hash = '#/tasks/{log.name}'")
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
    print(f"wrote {args.list_out}\nwrote {args.out}")


if __name__ == "__main__":
    main()
