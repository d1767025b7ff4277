"""The live status line of a run: counters per event, coverage per wave or root turn."""

import io

from rich.console import Console

from dealroom.cli.display_live import RunDisplay


class CountingProbe:
    def __init__(self):
        self.asked = 0

    def coverage(self):
        self.asked += 1
        return 0.25


def test_the_line_shows_the_run_and_coverage_is_asked_per_wave_not_per_sub_call():
    out = io.StringIO()
    probe = CountingProbe()
    with RunDisplay(Console(file=out, force_terminal=True, width=160), max_turns=5) as display:
        display({"type": "model_call", "role": "root", "turn": 2,
                 "usage": {"input_tokens": 1200}}, probe)
        for _ in range(300):
            display({"type": "model_call", "role": "sub", "usage": {"output_tokens": 10}}, probe)
        display({"type": "wave", "ok": 299, "failed": 1}, probe)
        display.refresh()
    shown = out.getvalue()
    assert "turn 2/5" in shown and "sub-calls 299 ok / 1 failed" in shown
    assert "3.0k out" in shown and "coverage 25.0%" in shown
    assert probe.asked == 2  # the root turn and the wave
