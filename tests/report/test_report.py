"""``build_report``: report.json's numbers, the plots drawn or noted, the page, the traces."""

from __future__ import annotations

import json
import math

import pytest

from dealroom.errors import ConfigError
from dealroom.eval import passk, table
from dealroom.report import REPORT_JSON, build_report
from dealroom.report._plots import PLOTS

METRICS = {"usage": {"total": {"input_tokens": 1000, "output_tokens": 100, "cost_usd": 0.5},
                     "by_role": {"root": {"input_tokens": 100, "output_tokens": 50}},
                     "split": {"root": {"input_tokens": 100, "output_tokens": 50},
                               "sub.fast": {"input_tokens": 600, "output_tokens": 20,
                                            "cost_usd": 0.1},
                               "children": {"input_tokens": 300, "output_tokens": 30,
                                            "cost_usd": 0.4}}},
           "behaviour": {"sub_calls": 4, "turns": 3}, "coverage": {"coverage": 0.25},
           "wall_s": 2.0}


def built_sweep(sweep_builder, *, costs=True):
    """Two roots x two rooms x depth 1 and 2 x two samples, judged by turn, with costs."""
    sweep = sweep_builder("sweep", max_turns=[8], samples=2)
    for room in ("r1", "r2"):
        for root, base in (("a", 0.8), ("b", 0.3)):
            for depth in (1, 2):
                for seed in (0, 1):
                    rate = base - 0.1 * seed - 0.2 * (depth - 1)
                    metrics = json.loads(json.dumps(METRICS))
                    metrics["usage"]["total"]["cost_usd"] = (0.1 + rate) if costs else 0.0
                    sweep.episode(room, root, depth=depth, seed=seed, pass_rate=rate,
                                  all_pass=rate > 0.6, by_type={"fact": rate, "citation": 0.5},
                                  by_turn=[rate / 2, rate], metrics=metrics)
    return sweep.write()


def test_the_headline_and_plots_hold_the_numbers_of_eval(sweep_builder, tmp_path):
    sweep = built_sweep(sweep_builder)
    build_report([sweep], tmp_path / "rep", title="Two roots")
    report = json.loads((tmp_path / "rep" / REPORT_JSON).read_text())
    assert report["title"] == "Two roots"
    expected = {(r["root"], r["depth"]): r for r in table(sweep, by=("root", "sub", "depth"))}
    assert len(report["headline"]) == 4
    for row in report["headline"]:
        ref = expected[(row["root"], row["depth"])]
        assert math.isclose(row["pass_rate"], ref["pass_rate"])
        assert (row["ci_low"], row["ci_high"]) == (ref["ci_low"], ref["ci_high"])
        assert (row["episodes"], row["rooms"], row["harness"]) == (4, 2, "rlm")
        assert row["root_share"] == pytest.approx(150 / 1100)
        assert (row["sub_calls"], row["turns"], row["wall_s"]) == (4, 3, 2.0)
    plots = report["plots"]
    assert [{**c, "source": "sweep"} for c in passk(sweep) if c["k"] == 1] == \
        [c for c in report["passk"] if c["k"] == 1]
    assert set(plots["passk_curves"]["policies"]) == {
        f"{p} · sweep · visible" for p in ("a / oracle / d1", "a / oracle / d2",
                                           "b / oracle / d1", "b / oracle / d2")}
    assert plots["depth"]["pairs"][0][:2] == pytest.approx([0.75, 0.55])
    assert plots["grid"]["roots"] == ["a", "b"]
    where = plots["where"]
    assert where["parts"] == ["root", "sub.fast", "children"] and where["n"] == 16
    assert where["policies"]["a / oracle / rlm / d1"] == {
        "root": [150, 0.0], "sub.fast": [620, 0.1], "children": [330, 0.4]}
    line = plots["by_turn"]["series"]["a / oracle / rlm / d1 · sweep · visible · T=8"]
    assert [p[:2] for p in line] == [[1, pytest.approx(0.375)], [2, pytest.approx(0.75)]]
    assert line[0][2:] == [pytest.approx(0.375)] * 2  # both rooms agree: a zero-width interval
    assert plots["by_type"]["types"] == ["citation", "fact"]
    assert "note" in plots["delegation"]  # rooms of one size (no room folders here)
    html = (tmp_path / "rep" / "index.html").read_text()
    drawn = [key for key, (data, _, _) in PLOTS.items() if "note" not in plots[data]]
    assert drawn and all(f'id="plot-{key}"' in html for key in drawn)
    assert plots["delegation"]["note"] in html
    assert html.count('class="trace"') == len(report["episodes"]) == 16
    assert "http://" not in html and "https://" not in html


def test_a_plot_without_data_is_a_note_and_failed_episodes_are_counted(sweep_builder, tmp_path):
    sweep = sweep_builder("free")
    sweep.episode("r1", "a", pass_rate=0.5, metrics=METRICS | {"usage": {"total": {}}})
    sweep.episode("r1", "a", seed=1, status="failed")
    build_report([sweep.write()], tmp_path / "rep")
    report = json.loads((tmp_path / "rep" / REPORT_JSON).read_text())
    assert report["plots"]["pass_cost"] == {
        "note": "every episode cost nothing (offline or unpriced models): no cost axis"}
    assert "note" in report["plots"]["grid"] and "note" in report["plots"]["by_turn"]
    assert report["headline"][0]["failed"] == 1
    assert [e["trace"] is None for e in report["episodes"]] == [False, True]


def test_bad_output_folders_and_sources_are_refused(sweep_builder, tmp_path):
    sweep = built_sweep(sweep_builder)
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "x").write_text("keep")
    with pytest.raises(ConfigError, match="holds other files"):
        build_report([sweep], tmp_path / "used")
    with pytest.raises(ConfigError, match="at least one"):
        build_report([], tmp_path / "rep")
    with pytest.raises(ConfigError, match="holds no episodes"):
        build_report([f"{sweep}:root=nobody"], tmp_path / "rep")
    build_report([sweep], tmp_path / "rep")
    build_report([f"{sweep}:root=a"], tmp_path / "rep")  # a report's folder is rebuilt
    report = json.loads((tmp_path / "rep" / REPORT_JSON).read_text())
    assert {r["root"] for r in report["headline"]} == {"a"}


def test_the_same_runs_give_the_same_page(sweep_builder, tmp_path):
    sweep = built_sweep(sweep_builder)
    first = build_report([sweep], tmp_path / "one").read_bytes()
    assert build_report([sweep], tmp_path / "two").read_bytes() == first


def test_without_matplotlib_the_error_names_the_extra(sweep_builder, tmp_path, monkeypatch):
    import sys

    from dealroom.errors import MissingDependency

    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(MissingDependency, match=r'pip install "dealroom\[report\]"'):
        build_report([built_sweep(sweep_builder)], tmp_path / "rep")


def test_a_sweep_over_cuad_rooms_is_analysed_and_reported_apart(generated_room, tmp_path):
    """``rooms = ["cuad/*"]`` sweeps CUAD rooms like any room; the report puts rooms of real
    documents apart from generated ones, and ``eval analyze`` counts their episodes."""
    from dealroom.eval import analyze, run_sweep
    from dealroom.room import CuadSettings, import_cuad, write_cuad_sample

    cuad = write_cuad_sample(tmp_path / "CUAD_v1", contracts=4, seed=2)
    for name, seed in (("a", 1), ("b", 2)):
        import_cuad(cuad, tmp_path / "cuad" / name, CuadSettings(contracts=2, seed=seed,
                                                                 workers=1))
    spec = tmp_path / "spec.toml"
    spec.write_text(f'rooms = ["cuad/*", "{generated_room}"]\nroots = ["scripted"]\n'
                    'subs = ["oracle"]\nmax_turns = [3]\n')
    result = run_sweep(spec, tmp_path / "sweep", workers=1)
    assert (result.episodes, result.done) == (3, 3)
    assert analyze(tmp_path / "sweep")["real_documents"] == 2
    index = build_report([tmp_path / "sweep"], tmp_path / "rep")
    report = json.loads((tmp_path / "rep" / REPORT_JSON).read_text())
    assert {e["room"]: e["real"] for e in report["episodes"]} == {
        "a": True, "b": True, "g20": False}
    page = index.read_text()
    assert page.index("Generated rooms") < page.index("Real-document rooms")
    assert "a · real documents · 1 episodes" in page and "g20 · 1 episodes" in page


def _svg_text(svg: str) -> list[str]:
    import re

    return [t for t in re.findall(r">([^<>]+)</text>", svg)]


def test_plots_keep_points_on_the_axis_mark_zeros_and_say_no_placeholders(monkeypatch):
    """Jittered coverage points went past 100% and costs below 0; a bar of 0 drew nothing;
    "sub gap n/a pts" and "tau not used" stood in the plots; legends repeated what every
    series shares."""
    from matplotlib.axes import Axes

    from dealroom.report import _plots

    placed: list[float] = []
    scatter = Axes.scatter
    monkeypatch.setattr(Axes, "scatter", lambda self, xs, ys, **kw: (
        placed.extend(xs), scatter(self, xs, ys, **kw))[1])
    names = [f"{r} / oracle / rlm / d1 · sweep · visible · T=8" for r in ("a", "b")]
    series = {n: [[1.0, 0.5, None]] * 3 + [[0.0, 0.2, None]] * 2 for n in names}
    base = {"n": 10, "setting": "visible", "tau": "not used (criteria pass rates)",
            "series": series}
    _plots.pass_coverage({**base, "series": {n: [p for p in s if p[0] > 0]
                                             for n, s in series.items()},
                          "stats": {"sweep": {"spearman": 0.5, "n": 6, "zero_coverage": 0,
                                              "pearson_log": 0.4, "n_log": 6}}})
    assert placed and max(placed) <= 1.0, "no point past 100% coverage"
    placed.clear()
    cost = _plots.pass_cost({**base, "stats": {"sweep": {"spearman": 0.5, "pearson": 0.4,
                                                         "n": 10}}})
    assert min(placed) >= 0.0 and len(set(placed)) == 10, "points stay apart and at or over 0"
    text = _svg_text(cost)
    assert "a · " not in "".join(text)
    assert "a" in text and "all: oracle / rlm / d1 · sweep · visible · T=8" in text
    assert not any("tau" in t for t in text), text
    grid = _plots.grid({"n": 4, "setting": "visible", "tau": "x", "pass_rate": [[0.5]],
                        "subs": ["oracle"], "roots": ["a"], "source": "s", "max_turns": 8,
                        "depth": 1, "root_gap_points": None, "sub_gap_points": math.nan})
    assert not any("n/a" in t for t in _svg_text(grid))
    bars = _plots.by_type({"n": 4, "setting": "visible", "tau": "x", "types": ["fact", "risk"],
                           "rates": {"8": {names[0]: [[0.0, 0.0, 0.0], [0.5, 0.4, 0.6]]}}})
    assert 'id="zero-marks' in bars, "a 0 is drawn as a mark"
