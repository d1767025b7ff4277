"""``write_trace``: the viewer's folder holds the page, its data pages and the documents."""

from __future__ import annotations

import json
import re
import threading
import urllib.request

import pytest

from dealroom.errors import ConfigError
from dealroom.report import _view as view_module
from dealroom.report import make_server, write_trace
from dealroom.room import Room
from dealroom.runs import RunFolder

PUT = re.compile(r'^DR\.put\(("[^"]+"),(.*)\);\n$', re.S)


def data(path):
    """The key and data of a page written as ``DR.put(key, data);``."""
    match = PUT.match(path.read_text(encoding="utf-8"))
    assert match, path
    return json.loads(match.group(1)), json.loads(match.group(2))


def test_the_viewer_holds_every_event_in_pages_and_the_texts_it_links(scripted_run, tmp_path,
                                                                      monkeypatch):
    monkeypatch.setattr(view_module, "ITEMS_PER_PAGE", 7)
    index = write_trace(scripted_run, tmp_path / "view")
    out = index.parent
    _, meta = data(out / "data" / "meta.js")
    events = RunFolder.open(scripted_run).events()
    pages = sorted((out / "data").glob("items-*.js"))
    assert len(pages) == meta["pages"] > 1
    items = [i for p in pages for i in data(p)[1]]
    assert len(items) == meta["items"]
    assert all(len(data(p)[1]) == 7 for p in pages[:-1])
    assert [i["seq"] for i in items if i["k"] != "budget"] == \
        [e["seq"] for e in events if e["type"] not in ("run_start", "sandbox")]
    subs = [i for i in items if i["k"] == "sub"]
    assert len(subs) == meta["behaviour"]["sub_calls"] > 0
    assert meta["scores"]["pass_rate"] == RunFolder.open(scripted_run).scores()["pass_rate"]
    with Room.open(RunFolder.open(scripted_run).room) as room:
        key, doc = data(out / "docs" / "D00001.js")
        assert key == "doc:D00001"
        assert doc["pages"][1] == room.text("D00001", 2)
        assert len(doc["pages"]) == room.doc("D00001").pages
    _, memo = data(out / "data" / "memo.js")
    assert memo["final"] == RunFolder.open(scripted_run).memo_path.read_text()
    assert [h["turn"] for h in memo["history"]] == \
        [t for t, _ in RunFolder.open(scripted_run).memo_history()]
    assert len(memo["by_turn"]) == meta["turns"]


def test_the_page_references_nothing_on_the_network(scripted_run, tmp_path):
    index = write_trace(scripted_run, tmp_path / "view")
    text = index.read_text()
    assert "http://" not in text and "https://" not in text
    assert '<script src="data/meta.js">' in text


def test_a_folder_holding_other_files_is_refused_and_a_viewer_is_rewritten(child_run, tmp_path):
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "notes.txt").write_text("keep")
    with pytest.raises(ConfigError, match="holds other files"):
        write_trace(child_run, tmp_path / "used")
    assert (tmp_path / "used" / "notes.txt").read_text() == "keep"
    write_trace(child_run, tmp_path / "again")
    assert write_trace(child_run, tmp_path / "again").is_file()
    with pytest.raises(ConfigError, match="not a run folder"):
        write_trace(tmp_path / "used", tmp_path / "x")


def test_serve_binds_loopback_only_and_serves_the_folder(child_run, tmp_path):
    index = write_trace(child_run, tmp_path / "view")
    server = make_server(index.parent, 0)
    assert server.server_address[0] == "127.0.0.1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = server.server_address[1]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/data/meta.js", timeout=10) as r:
            assert r.read().startswith(b'DR.put("meta",')
        with pytest.raises(ConfigError, match="give another --port"):
            make_server(index.parent, port)
    finally:
        server.shutdown()
        server.server_close()


def test_a_document_page_carries_its_printed_label_and_ocr_mark(tmp_path):
    """The viewer's document data says which pages were OCR'd and what each page prints."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).parents[1] / "room"))
    from scans import mixed_pdf

    from dealroom.room import IngestSettings, ingest, ocr_status

    if not ocr_status()[0]:
        pytest.skip(f"no OCR engine here: {ocr_status()[1]}")
    from pypdf import PdfReader, PdfWriter

    pdf = mixed_pdf(tmp_path / "src" / "merger.pdf", [("Cover page", False),
                                                     ("Termination Fee", True)])
    writer = PdfWriter(clone_from=PdfReader(pdf))
    writer.set_page_label(0, 1, "/D", prefix="A-")
    with open(pdf, "wb") as fh:
        writer.write(fh)
    ingest(tmp_path / "src", tmp_path / "room", IngestSettings(workers=1))
    run = tmp_path / "run"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"version": 1, "room": str(tmp_path / "room")}))
    assert view_module.write_docs(RunFolder.open(run), {"D00001"}, tmp_path / "docs") == \
        {"D00001"}
    _, doc = data(tmp_path / "docs" / "D00001.js")
    assert doc["labels"] == ["A-1", "A-2"] and list(doc["ocr"]) == ["2"]
    assert "Termination Fee" in doc["pages"][1]
    script = (Path(view_module.__file__).parent / "assets" / "viewer.js").read_text()
    assert "printed ${esc(label)}" in script and "text read by OCR" in script
