"""Minimal, deterministic file writers: text/Markdown, PDF, DOCX, XLSX and e-mail.

Each writer takes the text of every page and returns the file's bytes; the same input always
gives the same bytes (zip members carry a fixed 1980-01-01 timestamp, nothing reads the clock).

- PDF: one page per page of text, a real text layer drawn in the standard Helvetica font
  (WinAnsi encoding), lines wrapped at word boundaries; the page grows taller when needed.
- DOCX: one ``w:p`` per line, an explicit ``<w:br w:type="page"/>`` between pages.
- XLSX: one worksheet per page, inline strings, integers as numbers.
- EML: one RFC 5322 message, plain text, 7-bit, body wrapped at 76 columns.
"""

from __future__ import annotations

import io
import zipfile
from xml.sax.saxutils import escape

from dealroom.room._generate._sheets import Sheet

PAGE_BREAK = "\f"
_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def text_bytes(pages: list[str]) -> bytes:
    """Text and Markdown: pages separated by form feeds."""
    return PAGE_BREAK.join(page + "\n" for page in pages).encode("utf-8")


def wrap(line: str, width: int) -> list[str]:
    """Greedy word wrap that keeps every word intact (long words get a line of their own)."""
    if len(line) <= width:
        return [line]
    out: list[str] = []
    cur: list[str] = []
    size = 0
    for word in line.split(" "):
        if cur and size + 1 + len(word) > width:
            out.append(" ".join(cur))
            cur, size = [], 0
        size += len(word) + (1 if cur else 0)
        cur.append(word)
    if cur:
        out.append(" ".join(cur))
    return out


def _pdf_string(line: str) -> bytes:
    raw = line.encode("cp1252", "replace")
    return b"(" + raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)") + b")"


def _pdf_page(text: str) -> tuple[bytes, int]:
    lines: list[str] = []
    for para in text.split("\n"):
        lines.extend(wrap(para, 100))
    height = max(792, 11 * len(lines) + 120)
    ops = [b"BT /F1 9 Tf 11 TL 54 %d Td" % (height - 60)]
    for line in lines:
        ops.append(_pdf_string(line) + b" Tj T*" if line else b"T*")
    ops.append(b"ET")
    return b"\n".join(ops), height


def pdf_bytes(pages: list[str], title: str) -> bytes:
    """A PDF 1.4 file with one text page per entry of ``pages``."""
    n = len(pages)
    objects: list[bytes] = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % (5 + 2 * i) for i in range(n))
        + b"] /Count %d >>" % n,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
        b"<< /Title " + _pdf_string(title) + b" /Producer (dealroom generator) >>",
    ]
    for i, text in enumerate(pages):
        stream, height = _pdf_page(text)
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 %d] /Resources "
                       b"<< /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % (height, 6 + 2 * i))
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    out.write(b"".join(b"%010d 00000 n \n" % off for off in offsets))
    out.write(b"trailer\n<< /Size %d /Root 1 0 R /Info 4 0 R >>\nstartxref\n%d\n%%%%EOF\n"
              % (len(objects) + 1, xref))
    return out.getvalue()


def _zip(members: list[tuple[str, str]]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, text in members:
            info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 0
            info.external_attr = 0o644 << 16
            zf.writestr(info, text.encode("utf-8"))
    return buf.getvalue()


_XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
_CT = "http://schemas.openxmlformats.org/package/2006/content-types"
_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"


def _types(defaults: str, overrides: list[tuple[str, str]]) -> str:
    parts = "".join(f'<Override PartName="{p}" ContentType="{t}"/>' for p, t in overrides)
    return (f'{_XML}<Types xmlns="{_CT}"><Default Extension="rels" ContentType="application/'
            'vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" '
            f'ContentType="application/xml"/>{defaults}{parts}</Types>')


def _rels(targets: list[tuple[str, str]]) -> str:
    rows = "".join(f'<Relationship Id="rId{i}" Type="{_REL}/{kind}" Target="{target}"/>'
                   for i, (kind, target) in enumerate(targets, 1))
    return f'{_XML}<Relationships xmlns="{_PKG_REL}">{rows}</Relationships>'


def _run(text: str) -> str:
    return f'<w:p><w:r><w:t xml:space="preserve">{escape(text)}</w:t></w:r></w:p>'


def docx_bytes(pages: list[str]) -> bytes:
    """A minimal WordprocessingML package; pages end with explicit page breaks."""
    body = []
    for number, text in enumerate(pages):
        if number:
            body.append('<w:p><w:r><w:br w:type="page"/></w:r></w:p>')
        body.extend(_run(line) for line in text.split("\n"))
    document = (f'{_XML}<w:document xmlns:w="{_W}"><w:body>{"".join(body)}'
                '<w:sectPr><w:pgSz w:w="12240" w:h="15840"/></w:sectPr></w:body></w:document>')
    main = "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"
    return _zip([
        ("[Content_Types].xml", _types("", [("/word/document.xml", main)])),
        ("_rels/.rels", _rels([("officeDocument", "word/document.xml")])),
        ("word/document.xml", document),
    ])


def _column(index: int) -> str:
    name = ""
    index += 1
    while index:
        index, rem = divmod(index - 1, 26)
        name = chr(65 + rem) + name
    return name


def _xcell(ref: str, value: str) -> str:
    if value.isdigit() and len(value) < 15 and str(int(value)) == value:
        return f'<c r="{ref}"><v>{value}</v></c>'
    return f'<c r="{ref}" t="inlineStr"><is><t xml:space="preserve">{escape(value)}</t></is></c>'


def _worksheet(sheet: Sheet) -> str:
    rows = []
    for r, row in enumerate(sheet.rows, 1):
        cells = "".join(_xcell(f"{_column(c)}{r}", v) for c, v in enumerate(row) if v != "")
        rows.append(f'<row r="{r}">{cells}</row>')
    return f'{_XML}<worksheet xmlns="{_S}"><sheetData>{"".join(rows)}</sheetData></worksheet>'


_STYLES = (f'{_XML}<styleSheet xmlns="{_S}"><fonts count="1"><font><sz val="11"/>'
           '<name val="Calibri"/></font></fonts><fills count="1"><fill><patternFill '
           'patternType="none"/></fill></fills><borders count="1"><border/></borders>'
           '<cellStyleXfs count="1"><xf/></cellStyleXfs><cellXfs count="1"><xf/></cellXfs>'
           '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>'
           "</styleSheet>")


def xlsx_bytes(sheets: list[Sheet]) -> bytes:
    """A minimal SpreadsheetML package: one worksheet per sheet."""
    ml = "application/vnd.openxmlformats-officedocument.spreadsheetml"
    n = len(sheets)
    entries = "".join(f'<sheet name="{escape(s.title[:31])}" sheetId="{i}" r:id="rId{i}"/>'
                      for i, s in enumerate(sheets, 1))
    workbook = (f'{_XML}<workbook xmlns="{_S}" xmlns:r="{_REL}"><sheets>{entries}</sheets>'
                "</workbook>")
    overrides = [("/xl/workbook.xml", f"{ml}.sheet.main+xml"), ("/xl/styles.xml",
                                                                f"{ml}.styles+xml")]
    overrides += [(f"/xl/worksheets/sheet{i}.xml", f"{ml}.worksheet+xml") for i in range(1, n + 1)]
    members = [
        ("[Content_Types].xml", _types("", overrides)),
        ("_rels/.rels", _rels([("officeDocument", "xl/workbook.xml")])),
        ("xl/workbook.xml", workbook),
        ("xl/_rels/workbook.xml.rels", _rels([("worksheet", f"worksheets/sheet{i}.xml")
                                              for i in range(1, n + 1)] + [("styles",
                                                                            "styles.xml")])),
        ("xl/styles.xml", _STYLES),
    ]
    members += [(f"xl/worksheets/sheet{i}.xml", _worksheet(s)) for i, s in enumerate(sheets, 1)]
    return _zip(members)


def eml_bytes(headers: list[tuple[str, str]], body: str, message_id: str) -> bytes:
    """A plain-text e-mail message."""
    lines = [f"{k}: {v}" for k, v in headers]
    lines += [f"Message-ID: <{message_id}>", "MIME-Version: 1.0",
              'Content-Type: text/plain; charset="us-ascii"', "Content-Transfer-Encoding: 7bit",
              ""]
    for para in body.split("\n"):
        lines.extend(wrap(para, 76))
    return ("\n".join(lines) + "\n").encode("ascii", "replace")
