"""A minimal PDF writer for the room tests (text pages, and image-only "scanned" pages)."""


def pdf_bytes(pages: list[str | None]) -> bytes:
    """A minimal PDF: one line of Helvetica text per page; ``None`` makes an image-only page."""
    n = len(pages)
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>"
        % (b" ".join(b"%d 0 R" % (5 + 2 * i) for i in range(n)), n),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
        b"<< /Type /XObject /Subtype /Image /Width 1 /Height 1 /ColorSpace /DeviceGray"
        b" /BitsPerComponent 8 /Length 1 >>\nstream\n\xff\nendstream",
    ]
    for i, text in enumerate(pages):
        if text is None:
            content, res = b"q 200 0 0 200 50 50 cm /Im0 Do Q", b"/XObject << /Im0 4 0 R >>"
        else:
            escaped = text.encode("latin-1").replace(b"(", rb"\(").replace(b")", rb"\)")
            content, res = b"BT /F1 12 Tf 72 720 Td (%s) Tj ET" % escaped, b""
        objs.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font"
            b" << /F1 3 0 R >> %s >> /Contents %d 0 R >>" % (res, 6 + 2 * i)
        )
        objs.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content))
    return _assemble(objs)


def unicode_pdf_bytes(pages: list[list[str]]) -> bytes:
    """A PDF whose text layer holds any Unicode text, one ``Tj`` per line, as filed PDFs do.

    Each distinct character gets a one-byte code in a simple font; a ``ToUnicode`` CMap maps
    the codes back (so U+00A0, U+200B, U+00AD and U+037E reach the extractor as they are).
    """
    chars = sorted({c for page in pages for line in page for c in line})
    if len(chars) > 250:
        raise ValueError("at most 250 distinct characters")
    code = {c: i + 1 for i, c in enumerate(chars)}
    cmap = "\n".join(f"<{code[c]:02X}> <{ord(c):04X}>" for c in chars)
    tounicode = (
        "/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /U def "
        "1 begincodespacerange <00> <FF> endcodespacerange "
        f"{len(chars)} beginbfchar\n{cmap}\nendbfchar endcmap CMapName currentdict /CMap "
        "defineresource pop end end"
    ).encode()
    n = len(pages)
    objs = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>"
        % (b" ".join(b"%d 0 R" % (5 + 2 * i) for i in range(n)), n),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 4 0 R >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(tounicode), tounicode),
    ]
    for i, lines in enumerate(pages):
        shown = b"".join(
            b"<%s> Tj T* " % "".join(f"{code[c]:02X}" for c in line).encode() for line in lines
        )
        content = b"BT /F1 12 Tf 14 TL 72 720 Td " + shown + b"ET"
        objs.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font"
            b" << /F1 3 0 R >> >> /Contents %d 0 R >>" % (6 + 2 * i)
        )
        objs.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(content), content))
    return _assemble(objs)


def _assemble(objs: list[bytes]) -> bytes:
    """The file: header, numbered objects, cross-reference table, trailer."""
    out, offsets = b"%PDF-1.4\n", []
    for number, body in enumerate(objs, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, xref)
    return out
