"""A report over several sources keeps them apart: one series per (policy, source, setting),
recovery continuations never counted as samples, statistics per turn budget T, and the
coverage analysis the same as ``eval analyze``'s."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from dealroom.cli import app
from dealroom.errors import DealroomWarning
from dealroom.eval import analyze, spearman, table
from dealroom.report import REPORT_JSON, build_report


def test_sources_settings_and_kinds_stay_apart(mixed_sources, tmp_path):
    visible, hidden, recovery = mixed_sources
    index = build_report(mixed_sources, tmp_path / "rep")
    report = json.loads((tmp_path / "rep" / REPORT_JSON).read_text())
    kinds = {(s["label"], s["setting"], s["kind"]) for s in report["source_info"]}
    assert kinds == {("vis", "visible", "episode"), ("hid", "truncation", "episode"),
                     ("rec", None, "continuation")}
    continuations = [e for e in report["episodes"] if e["kind"] == "continuation"]
    recorded = json.loads((recovery / "recover.json").read_text())["episodes"]
    assert len(continuations) == len(recorded) == 4
    assert all(e["source"] == "rec" for e in continuations)
    # the headline: per source, setting and T, sampled episodes only
    rows = {(r["source"], r["setting"], r["max_turns"]): r["episodes"]
            for r in report["headline"]}
    assert rows == {("vis", "visible", 4): 6, ("vis", "visible", 16): 6,
                    ("hid", "truncation", 4): 6, ("hid", "truncation", 16): 6}
    early = next(r for r in report["headline"] if r["max_turns"] == 4 and r["source"] == "hid")
    assert early["cost_per_room"] is None, "a run's cost is not known as of turn 4"
    # Pass@(K,T): one series per (policy, source, setting), K never past the samples
    curves = report["plots"]["passk_curves"]
    assert set(curves["policies"]) == {"scripted / oracle / d1 · vis · visible",
                                       "scripted / oracle / d1 · hid · truncation"}
    assert set(curves["policies"]["scripted / oracle / d1 · vis · visible"]) == {"4", "16"}
    assert set(curves["policies"]["scripted / oracle / d1 · hid · truncation"]) == {"4", "16"}
    for turns in curves["policies"].values():
        assert all([p[0] for p in points] == [1, 2, 3] for points in turns.values())
    assert {c["source"] for c in report["passk"]} == {"vis", "hid"}
    # T = 4, visible: one of two rooms passes 1 sample in 3; the band spans the rooms
    first = curves["policies"]["scripted / oracle / d1 · vis · visible"]["4"][0]
    assert first == [1, pytest.approx(1 / 6), pytest.approx(0.0), pytest.approx(1 / 3)]
    # no plot counts a continuation, and each says which runs stand behind it
    for key, data in report["plots"].items():
        if "note" in data:
            continue
        assert data["behind"] and all(b["kind"] == "episode" and b["source"] != "rec"
                                      for b in data["behind"]), key
        assert sum(b["runs"] for b in data["behind"]) == data["n"], key
        assert data["setting"] and "tau" in data, key
    assert report["plots"]["passk_curves"]["tau"] == 0.5
    # the recovery folder shows its own figures
    own = json.loads((recovery / "report.json").read_text())
    assert report["recoveries"]["rec"]["by_policy"] == own["by_policy"]
    page = index.read_text()
    assert "<h2>Recovery</h2>" in page and "<h4>by policy</h4>" in page
    at_k = own["by_policy"][0]["pass_at_k"]  # a mapping in a row: one cell, k by k
    assert "<td>" + ", ".join(f"{k}: {v:.3f}" for k, v in at_k.items()) + "</td>" in page
    assert page.count("· recovery continuations ·") == 1
    assert "Runs behind it: vis (visible): 12 episodes; hid (truncation): 6 episodes" in page
    figures = re.findall(r'<figure class="plot" id="plot-(\w+)">(.*?)</figure>', page, re.S)
    assert len(figures) >= 7
    for name, svg in figures:  # each plot states n and the setting in its own text, and tau
        # where a success threshold is used (Pass@k), never "tau not used"
        found = re.search(r"n = \d+ runs · setting (truncation|visible)(, visible)?"
                          r"( · tau [\d.]+)?", svg)
        assert found and (bool(found[3]) == name.startswith("passk")), name
        assert "not used" not in svg, name


def test_a_recovery_folder_alone_gives_its_own_figures_not_pass_at_k(recovery_folder,
                                                                     tmp_path):
    index = build_report([recovery_folder], tmp_path / "rep")
    report = json.loads((tmp_path / "rep" / REPORT_JSON).read_text())
    assert report["headline"] == [] and report["passk"] == []
    assert all("note" in data for data in report["plots"].values())
    own = json.loads((recovery_folder / "report.json").read_text())
    assert report["recoveries"] == {"rec": own}
    page = index.read_text()
    assert "<h4>paired</h4>" in page or not own["paired"]
    assert page.count('class="trace"') == 4 and "Episodes per room" not in page


def test_statistics_are_split_by_turn_budget(mixed_sources, tmp_path):
    build_report(mixed_sources[:1], tmp_path / "rep")
    plots = json.loads((tmp_path / "rep" / REPORT_JSON).read_text())["plots"]
    name = "scripted / oracle / rlm / d1 · vis · visible"
    pearson = plots["delegation"]["pearson"]
    assert set(pearson) == {f"{name} · T=4", f"{name} · T=16"}
    assert pearson[f"{name} · T=16"] > 0.99  # docs // 2 sub-calls at T = 16
    assert pearson[f"{name} · T=4"] == pytest.approx(0.0)  # the same calls in both rooms
    assert set(plots["by_type"]["rates"]) == {"4", "16"}
    fact = plots["by_type"]["rates"]["16"][name][plots["by_type"]["types"].index("fact")]
    assert fact[0] == pytest.approx(0.75)  # rooms' means 0.7 and 0.8, their interval
    assert fact[1] == pytest.approx(0.7) and fact[2] == pytest.approx(0.8)
    assert set(plots["root_share"]["shares"]) == {f"{name} · T=4", f"{name} · T=16"}
    assert set(plots["by_turn"]["series"]) == {f"{name} · T=4", f"{name} · T=16"}
    report = json.loads((tmp_path / "rep" / REPORT_JSON).read_text())
    with pytest.warns(DealroomWarning, match="degenerate intervals"):  # two rooms
        table_rows = {r["max_turns"]: r for r in table(mixed_sources[0])}
    for row in report["headline"]:  # the same interval as `eval table`, per T
        ref = table_rows[row["max_turns"]]
        assert (row["pass_rate"], row["ci_low"], row["ci_high"]) == \
            (ref["pass_rate"], ref["ci_low"], ref["ci_high"])
    analysis = analyze(mixed_sources[0])["delegation"]
    assert analysis["by_max_turns"]["16"] == pytest.approx(pearson[f"{name} · T=16"])
    assert analysis["by_root_max_turns"]["scripted"]["4"] == pytest.approx(0.0)


def test_analyze_and_report_agree_on_coverage(sweep_builder, tmp_path):
    sweep = sweep_builder("sweep")
    points = [(0.0, 0.1), (0.0, 0.3), (0.001, 0.2), (0.01, 0.5), (0.1, 0.4), (0.5, 0.9)]
    for seed, (coverage, rate) in enumerate(points):
        sweep.episode("r1", "a", seed=seed, pass_rate=rate,
                      metrics={"coverage": {"coverage": coverage}})
    sweep.episode("r1", "a", seed=9, pass_rate=0.7, metrics={})  # coverage not measured
    sweep.write()
    build_report([sweep.path], tmp_path / "rep")
    stats = json.loads((tmp_path / "rep" / REPORT_JSON).read_text())["plots"]["pass_coverage"]
    mine = analyze(sweep.path)["coverage_pass"]
    assert stats["stats"]["sweep"] == mine
    assert (mine["n"], mine["zero_coverage"], mine["n_log"], mine["unmeasured"]) == (6, 2, 4, 1)
    assert mine["spearman"] == pytest.approx(spearman(*zip(*points, strict=True)))
    assert "zero coverage included" in mine["included"]
    shown = CliRunner().invoke(app, ["eval", "analyze", str(sweep.path)])
    assert f"Spearman {mine['spearman']:.2f} (n = 6)" in shown.output
    assert "2 runs with zero coverage, 1 unmeasured" in shown.output
