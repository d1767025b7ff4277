"""The viewer's data: timeline items, budget lines, referenced documents, coverage tree,
scores with judge errors apart."""

from __future__ import annotations

from dealroom.report._trace import coverage_tree, referenced_docs, scores_view, trace_items
from dealroom.room import load_manifest
from dealroom.runs import RunFolder


def test_items_keep_the_tree_the_slices_and_a_budget_line_after_each_cell(child_run):
    items = trace_items(RunFolder.open(child_run).events(), 4)
    kinds = [(i["k"], i["a"]) for i in items]
    assert kinds == [("reply", "root"), ("sub", "root"), ("wave", "root"),
                     ("child_start", "root"), ("reply", "root/c1-0"), ("cell", "root/c1-0"),
                     ("budget", "root/c1-0"), ("child_end", "root"), ("cell", "root"),
                     ("budget", "root"), ("memo", "root"), ("run_end", "root")]
    sub = items[1]
    assert (sub["prompt"], sub["docs"][0]["pages"], sub["out"], sub["lat"]) == \
        ("List the issues.", [1, 3], "ISSUE: change of control", 0.25)
    root_cell, budget = items[8], items[9]
    assert root_cell["cut"] and not items[5]["cut"]
    assert (budget["turn"], budget["of"], budget["tokens"], budget["cost"]) == (1, 4, 450, 0.006)
    assert items[6]["of"] is None  # a child's turns are not counted against the root's T
    assert referenced_docs(items, "see [D00007 p.1] and D00009") == {"D00002", "D00007",
                                                                      "D00009"}


def test_the_coverage_tree_weights_each_share_by_tokens(generated_room):
    docs = load_manifest(generated_room).documents
    first = docs[0]
    tree = coverage_tree(docs, {first.id: 0.5})
    category = next(c for c in tree if c["name"] == first.category)
    folder = next(f for f in category["folders"] if f["name"] == first.folder)
    total = sum(d.tokens for d in docs if d.folder == first.folder)
    assert abs(folder["share"] - 0.5 * first.tokens / total) < 1e-9
    assert {d["id"] for c in tree for f in c["folders"] for d in f["docs"]} == \
        {d.id for d in docs}
    assert all(c["share"] == 0.0 for c in tree if c["name"] != first.category)


def test_scores_put_judge_errors_apart(child_run):
    view = scores_view(RunFolder.open(child_run).scores())
    assert [c["id"] for c in view["criteria"]] == ["C-001"]
    assert [c["id"] for c in view["errors"]] == ["C-002"]
    assert scores_view(None) is None
