"""A folder of malformed files for the ingest hardening test, and two small builders.

:func:`write_malformed` writes about 150 hostile or broken files under ``SRC/``: truncated PDFs
and Office files, zip bombs (lite), wrong extensions, encrypted Office files and PDFs, binary
junk, empty files, sheets with huge dimensions, deeply nested HTML, XML and slides, entity
bombs, XXE and external-stream probes aimed at a host file, and symbolic links out of ``SRC``.
Every probe aimed at the host reads a canary file outside ``SRC`` (or ``/etc/passwd``): any of
:data:`HOST_MARKERS` in the room afterwards is host content that leaked.
"""

from __future__ import annotations

import email.message
import functools
import io
import os
import random
import struct
import zipfile
from collections.abc import Callable
from pathlib import Path

import docx
import openpyxl
from pdfs import pdf_bytes
from pptx import Presentation
from pypdf import PdfReader, PdfWriter

from dealroom.room._generate._formats import pdf_bytes as long_pdf_bytes

CANARY = "CANARY-4e1f-host-content"
HOST_MARKERS = (CANARY.encode(), b"root:x:0:0")
"""Bytes that only host files hold: none may reach the room."""
EXTENSIONS = ("pdf", "docx", "xlsx", "pptx", "eml", "msg", "html", "txt", "md", "csv")


def encrypted_pdf(path: Path, user: str, owner: str = "owner") -> Path:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes(["Secret terms"]))))
    writer.encrypt(user_password=user, owner_password=owner)
    with open(path, "wb") as fh:
        writer.write(fh)
    return path


def ole_with_encrypted_package(path: Path) -> Path:
    """The smallest compound file holding an ``EncryptedPackage`` stream, as Office writes."""
    end, free, nostream = 0xFFFFFFFE, 0xFFFFFFFF, 0xFFFFFFFF
    header = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(16)
    header += struct.pack(
        "<HHHHH6xIIIIIIIII", 0x3E, 3, 0xFFFE, 9, 6, 0, 1, 1, 0, 4096, end, 0, end, 0
    )
    header += struct.pack("<I", 0) + struct.pack("<I", free) * 108
    fat = struct.pack("<II", 0xFFFFFFFD, end) + struct.pack("<I", free) * 126

    def entry(name: str, kind: int, child: int) -> bytes:
        raw = (name + "\0").encode("utf-16-le")
        return (
            raw.ljust(64, b"\0")
            + struct.pack("<HBB", len(raw), kind, 1)
            + struct.pack("<III", nostream, nostream, child)
            + bytes(36)
            + struct.pack("<IQ", end, 0)
        )

    unused = bytes(64) + struct.pack("<HBB", 0, 0, 0) + struct.pack("<III", *[nostream] * 3)
    unused += bytes(36) + struct.pack("<IQ", 0, 0)
    directory = entry("Root Entry", 5, 1) + entry("EncryptedPackage", 2, nostream) + unused * 2
    path.write_bytes(header + fat + directory)
    return path


# --- valid files to break --------------------------------------------------------------------


def _saved(build: Callable[[io.BytesIO], None]) -> bytes:
    buf = io.BytesIO()
    build(buf)
    return buf.getvalue()


@functools.cache
def _docx() -> bytes:
    d = docx.Document()
    for n in range(40):
        d.add_paragraph(f"Section {n}. The supplier may terminate on a change of control.")
    return _saved(d.save)


@functools.cache
def _xlsx() -> bytes:
    book = openpyxl.Workbook()
    for n in range(200):
        book.active.append([f"Customer {n}", n * 1000, "renewal"])
    return _saved(book.save)


@functools.cache
def _pptx() -> bytes:
    deck = Presentation()
    for n in range(10):
        deck.slides.add_slide(deck.slide_layouts[5]).shapes.title.text = f"Slide {n}"
    return _saved(deck.save)


def _eml(body: str = "The escrow is $4.5 million.") -> bytes:
    msg = email.message.EmailMessage()
    msg["From"], msg["To"], msg["Subject"] = "cfo@target.example", "deal@buyer.example", "Escrow"
    msg.set_content(body)
    return msg.as_bytes()


def _replace_member(package: bytes, name: str, data: bytes | str) -> bytes:
    """``package`` with member ``name`` replaced by ``data`` (added if missing)."""
    src = zipfile.ZipFile(io.BytesIO(package))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            if info.filename != name:
                out.writestr(info, src.read(info))
        out.writestr(name, data)
    return buf.getvalue()


W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'


def _word_xml(body: str, doctype: str = "") -> str:
    return (f'<?xml version="1.0" encoding="UTF-8"?>{doctype}<w:document {W}><w:body>{body}'
            "</w:body></w:document>")


def _xxe(target: str) -> str:
    return f'<!DOCTYPE d [<!ENTITY x SYSTEM "file://{target}">]>'


LAUGHS = ("<!DOCTYPE d [<!ENTITY a \"lol\">" + "".join(
    f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">' for i in range(9)) + "]>")
"""A billion-laughs entity bomb: &j; expands to 10^9 copies of "lol"."""


class _Folder:
    """Writes entries under one folder of SRC and remembers their relative paths."""

    def __init__(self, src: Path, name: str) -> None:
        self.src, self.folder = src, src / name
        self.folder.mkdir(parents=True, exist_ok=True)
        self.entries: list[str] = []

    def put(self, name: str, data: bytes | str) -> None:
        path = self.folder / name
        path.write_bytes(data.encode() if isinstance(data, str) else data)
        self.entries.append(path.relative_to(self.src).as_posix())

    def link(self, name: str, target: str | Path) -> None:
        os.symlink(target, self.folder / name)
        self.entries.append((self.folder / name).relative_to(self.src).as_posix())


def write_malformed(src: Path, outside: Path) -> list[str]:
    """Write the malformed folder under ``src`` (host files under ``outside``); every entry.

    Returns the paths, relative to ``src``, of every file and link written.
    """
    rng = random.Random(148)
    outside.mkdir(parents=True, exist_ok=True)
    canary = outside / "canary.txt"
    canary.write_text(f"{CANARY}\n")
    (outside / "folder").mkdir(exist_ok=True)
    (outside / "folder" / "inside.md").write_text(CANARY)
    entries: list[str] = []
    for name, writer in _CATEGORIES.items():
        folder = _Folder(src, name)
        writer(folder, rng, canary)
        entries += folder.entries
    return entries


def _truncated(f: _Folder, rng: random.Random, canary: Path) -> None:
    sources = {"pdf": pdf_bytes(["Page one", "Page two", "Page three"]),
               "long.pdf": long_pdf_bytes(["Long page " * 300] * 5, "Long"),
               "docx": _docx(), "xlsx": _xlsx(), "pptx": _pptx(), "eml": _eml("x " * 2000)}
    for kind, data in sources.items():
        for share in (0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99):
            f.put(f"cut-{int(share * 100):02d}.{kind}", data[:max(1, int(len(data) * share))])
    f.put("no-eof.pdf", sources["pdf"].rsplit(b"%%EOF", 1)[0])
    f.put("no-xref.pdf", sources["pdf"].split(b"xref", 1)[0])


def _bombs(f: _Folder, rng: random.Random, canary: Path) -> None:
    zeros = bytes(16 << 20)
    f.put("zeros-part.docx", _replace_member(_docx(), "word/document.xml", zeros))
    f.put("zeros-sheet.xlsx", _replace_member(_xlsx(), "xl/worksheets/sheet1.xml", zeros))
    f.put("zeros-slide.pptx", _replace_member(_pptx(), "ppt/slides/slide1.xml", zeros))
    f.put("zeros-strings.xlsx", _replace_member(_xlsx(), "xl/sharedStrings.xml", zeros))
    f.put("laughs.docx", _replace_member(_docx(), "word/document.xml", _word_xml(
        "<w:p><w:r><w:t>&j;</w:t></w:r></w:p>", LAUGHS)))
    sheet = ('<?xml version="1.0"?>' + LAUGHS + '<worksheet xmlns="http://schemas.openxml'
             'formats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" '
             't="inlineStr"><is><t>&j;</t></is></c></row></sheetData></worksheet>')
    f.put("laughs.xlsx", _replace_member(_xlsx(), "xl/worksheets/sheet1.xml", sheet))
    f.put("laughs.html", f"{LAUGHS}<html><body><p>&j;</p></body></html>")
    nested = io.BytesIO()
    with zipfile.ZipFile(nested, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("inner.zip", _saved(lambda b: zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED)
                                       .writestr("zeros", zeros)))
    f.put("zip-in-zip.docx", nested.getvalue())
    f.put("attachment-bomb.eml", _eml_with_attachment(zeros))
    f.put("many-members.docx", _many_members())


def _eml_with_attachment(data: bytes) -> bytes:
    msg = email.message.EmailMessage()
    msg["From"], msg["Subject"] = "a@b.example", "Attached"
    msg.set_content("see attached")
    msg.add_attachment(data[: 4 << 20], maintype="application", subtype="zip", filename="z.zip")
    return msg.as_bytes()


@functools.cache
def _many_members() -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for n in range(5_000):
            z.writestr(f"m/{n}", b"")
    return buf.getvalue()


def _wrong_extensions(f: _Folder, rng: random.Random, canary: Path) -> None:
    png = b"\x89PNG\r\n\x1a\n" + rng.randbytes(2000)
    cases = {"image.pdf": png, "pdf.docx": pdf_bytes(["a pdf"]), "docx.xlsx": _docx(),
             "xlsx.docx": _xlsx(), "pptx.xlsx": _pptx(), "zip.pptx": _many_members()[:5000],
             "eml.pdf": _eml(), "text.pdf": "just some text\n" * 50, "jpeg.txt":
             b"\xff\xd8\xff\xe0" + rng.randbytes(3000),
             "html.eml": "<html><body><p>not mail</p></body></html>", "elf.md":
             b"\x7fELF\x02\x01\x01" + bytes(3000), "gzip.csv": b"\x1f\x8b\x08" + bytes(2000),
             "pdf.html": pdf_bytes(["x"]), "docx.pptx": _docx(), "xlsx.eml": _xlsx(),
             "png.msg": png}
    for name, data in cases.items():
        f.put(name, data)


def _encrypted(f: _Folder, rng: random.Random, canary: Path) -> None:
    from msoffcrypto.format.ooxml import OOXMLFile

    for ext, data in (("docx", _docx()), ("xlsx", _xlsx()), ("pptx", _pptx())):
        out = io.BytesIO()
        OOXMLFile(io.BytesIO(data)).encrypt("pw", out)
        f.put(f"office-encrypted.{ext}", out.getvalue())
        ole_with_encrypted_package(f.folder / f"ole-package.{ext}")
        f.entries.append(f"{f.folder.name}/ole-package.{ext}")
    encrypted_pdf(f.folder / "user-password.pdf", "secret")
    encrypted_pdf(f.folder / "owner-only.pdf", "")
    f.entries += [f"{f.folder.name}/user-password.pdf", f"{f.folder.name}/owner-only.pdf"]
    legacy = ole_with_encrypted_package(f.folder / "tmp").read_bytes().replace(
        "EncryptedPackage".encode("utf-16-le"), "WordDocument\0\0\0\0".encode("utf-16-le"))
    (f.folder / "tmp").unlink()
    f.put("legacy-doc.docx", legacy)


def _junk(f: _Folder, rng: random.Random, canary: Path) -> None:
    for ext in EXTENSIONS:
        f.put(f"random.{ext}", rng.randbytes(5000))
        f.put(f"control.{ext}", bytes(rng.choice(range(1, 32)) for _ in range(5000)))
    f.put("nul-lines.csv", b"a,b\n" + b"\x00,\x00\n" * 500)


def _empty(f: _Folder, rng: random.Random, canary: Path) -> None:
    for ext in EXTENSIONS:
        f.put(f"zero.{ext}", b"")
    f.put("spaces.txt", " \n\t\n" * 100)
    f.put("invisible.md", "\u200b\u00ad\ufeff\u2060" * 100)
    f.put("empty-body.eml", b"From: a@b.example\nSubject: nothing\n\n")
    f.put("scripts-only.html", "<html><script>alert(1)</script><style>p{}</style></html>")
    f.put("empty-sheet.xlsx", _saved(openpyxl.Workbook().save))
    f.put("empty-doc.docx", _saved(docx.Document().save))
    f.put("empty-deck.pptx", _saved(Presentation().save))


def _sheets(f: _Folder, rng: random.Random, canary: Path) -> None:
    for rows in (1, 2000):
        book = openpyxl.Workbook()
        book.active["A1"] = "near"
        for n in range(rows):
            book.active.cell(row=1_048_576 - n, column=16_384, value=f"far {n}")
        f.put(f"far-{rows}.xlsx", _saved(book.save))
    base = _xlsx()
    name = "xl/worksheets/sheet1.xml"
    xml = zipfile.ZipFile(io.BytesIO(base)).read(name).decode()
    dims = xml.split("<dimension ref=")[1].split("/>")[0]
    f.put("lying-dimension.xlsx", _replace_member(base, name, xml.replace(
        dims, '"A1:XFD1048576"')))
    for bad in ("0", "-5", "abc", "99999999999"):
        f.put(f"row-{bad}.xlsx", _replace_member(base, name, xml.replace(
            '<row r="1"', f'<row r="{bad}"', 1).replace('r="A1"', f'r="A{bad}"', 1)))
    f.put("cell-ref-junk.xlsx", _replace_member(base, name, xml.replace('r="A1"', 'r="%%"', 1)))
    wide = "".join(f'<c r="{_col(c)}1"><v>{c}</v></c>' for c in range(1, 16_385, 7))
    f.put("wide.xlsx", _replace_member(base, name, xml.replace(
        '<row r="1"', f'<row r="1">{wide}</row><row r="100000"', 1)))
    f.put("no-sheets.xlsx", _replace_member(base, "xl/workbook.xml", "<workbook/>"))


def _col(n: int) -> str:
    name = ""
    while n:
        n, rem = divmod(n - 1, 26)
        name = chr(65 + rem) + name
    return name


def _deep(f: _Folder, rng: random.Random, canary: Path) -> None:
    for depth in (1_000, 100_000):
        f.put(f"deep-{depth}.html", "<div>" * depth + "deep text" + "</div>" * depth)
        f.put(f"unclosed-{depth}.html", "<b><i>" * depth + "text")
        body = "<w:sdt><w:sdtContent>" * depth + "<w:p><w:r><w:t>deep</w:t></w:r></w:p>" + \
            "</w:sdtContent></w:sdt>" * depth
        f.put(f"deep-{depth}.docx", _replace_member(_docx(), "word/document.xml",
                                                    _word_xml(body)))
    f.put("deep-groups.pptx", _deep_groups(300))
    f.put("long-line.txt", "x" * (8 << 20))
    f.put("million-lines.md", "\n" * 1_000_000 + "end")
    f.put("many-pages.txt", "page\f" * 20_000)
    f.put("deep-mime.eml", _deep_mime(200))


def _deep_groups(depth: int) -> bytes:
    from pptx.util import Inches

    deck = Presentation()
    shapes = deck.slides.add_slide(deck.slide_layouts[6]).shapes
    for _ in range(depth):
        shapes = shapes.add_group_shape().shapes
    shapes.add_textbox(Inches(1), Inches(1), Inches(1), Inches(1)).text_frame.text = "deep"
    return _saved(deck.save)


def _deep_mime(depth: int) -> bytes:
    head = "From: a@b.example\nSubject: nested\nMIME-Version: 1.0\n"
    parts = [f'Content-Type: multipart/mixed; boundary="b{n}"\n\n--b{n}\n' for n in range(depth)]
    tail = "".join(f"\n--b{n}--\n" for n in reversed(range(depth)))
    return (head + "".join(parts) + "Content-Type: text/plain\n\ninner text" + tail).encode()


def _host_probes(f: _Folder, rng: random.Random, canary: Path) -> None:
    f.link("passwd.txt", "/etc/passwd")
    f.link("canary.md", canary)
    f.link("relative.md", os.path.relpath(canary, f.folder))
    f.link("etc", "/etc")
    f.link("outside-folder", canary.parent / "folder")
    f.link("broken.txt", canary.parent / "missing.txt")
    f.link("proc-self-environ.txt", "/proc/self/environ")
    for target in (canary, Path("/etc/passwd")):
        tag = "passwd" if target.name == "passwd" else "canary"
        f.put(f"xxe-{tag}.docx", _replace_member(_docx(), "word/document.xml", _word_xml(
            "<w:p><w:r><w:t>&x;</w:t></w:r></w:p>", _xxe(str(target)))))
        sheet = (f'<?xml version="1.0"?>{_xxe(str(target))}<worksheet xmlns="http://schemas.'
                 'openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" '
                 't="inlineStr"><is><t>&x;</t></is></c></row></sheetData></worksheet>')
        f.put(f"xxe-{tag}.xlsx", _replace_member(_xlsx(), "xl/worksheets/sheet1.xml", sheet))
        strings = (f'<?xml version="1.0"?>{_xxe(str(target))}<sst xmlns="http://schemas.'
                   'openxmlformats.org/spreadsheetml/2006/main"><si><t>&x;</t></si></sst>')
        f.put(f"xxe-strings-{tag}.xlsx", _replace_member(_xlsx(), "xl/sharedStrings.xml",
                                                         strings))
        slide = zipfile.ZipFile(io.BytesIO(_pptx())).read("ppt/slides/slide1.xml").decode()
        slide = slide.replace("?>", f"?>{_xxe(str(target))}", 1).replace(
            "Slide 0", "&x;")
        f.put(f"xxe-{tag}.pptx", _replace_member(_pptx(), "ppt/slides/slide1.xml", slide))
        f.put(f"xxe-{tag}.html", f"{_xxe(str(target))}<html><body><p>&x;</p>"
              f'<iframe src="file://{target}"></iframe><img src="file://{target}">'
              "</body></html>")
        f.put(f"external-stream-{tag}.pdf", _external_stream_pdf(target))
        f.put(f"external-body-{tag}.eml", (
            "From: a@b.example\nSubject: ext\nMIME-Version: 1.0\nContent-Type: "
            f'message/external-body; access-type=local-file; name="{target}"\n\n'
            "Content-Type: text/plain\n\n").encode())
        f.put(f"include-{tag}.md", f"<!-- #include file=\"{target}\" -->\n![x]({target})\n")
    f.put("xinclude.docx", _replace_member(_docx(), "word/document.xml", _word_xml(
        '<w:p><w:r><w:t><xi:include xmlns:xi="http://www.w3.org/2001/XInclude" '
        f'href="file://{canary}" parse="text"/></w:t></w:r></w:p>')))
    rels = zipfile.ZipFile(io.BytesIO(_docx())).read("_rels/.rels").decode().replace(
        'Target="word/document.xml"', f'Target="file://{canary}" TargetMode="External"')
    f.put("external-main-part.docx", _replace_member(_docx(), "_rels/.rels", rels))
    f.put("absolute-main-part.docx", _replace_member(_docx(), "_rels/.rels", rels.replace(
        f"file://{canary}", f"/../../../../{canary}")))


def _external_stream_pdf(target: Path) -> bytes:
    """A PDF whose page content is an external file (``/F``), which no reader should load."""
    data = pdf_bytes(["placeholder"])
    return data.replace(b"<< /Length ", b"<< /F (%s) /Length " % str(target).encode(), 1)


_CATEGORIES: dict[str, Callable[[_Folder, random.Random, Path], None]] = {
    "01 truncated": _truncated,
    "02 bombs": _bombs,
    "03 wrong extensions": _wrong_extensions,
    "04 encrypted": _encrypted,
    "05 junk": _junk,
    "06 empty": _empty,
    "07 sheets": _sheets,
    "08 deep": _deep,
    "09 host probes": _host_probes,
}
