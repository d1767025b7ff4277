"""Titles that are titles (issue 39, item 3): each line is tested whole, before it is cut;
legends, stamps, signature lines and fragments are skipped; none title-like: the file name."""

from __future__ import annotations

from pathlib import Path

import pytest

from dealroom.room import IngestSettings, ingest, load_manifest
from dealroom.room._titles import MAX_TITLE, text_title

PARAGRAPH = ("20. Miscellaneous. The parties acknowledge that this instrument has been reviewed "
             "by counsel for each of them and shall not be construed against either of them")
LEGEND = ("CERTAIN CONFIDENTIAL INFORMATION CONTAINED IN THIS DOCUMENT, MARKED BY [***], HAS "
          "BEEN\nOMITTED BECAUSE IT IS BOTH (I) NOT MATERIAL AND (II) WOULD LIKELY CAUSE "
          "COMPETITIVE HARM\nTO THE COMPANY IF PUBLICLY DISCLOSED\n")

SHAPES = {
    "a long paragraph line is not a title cut short": (PARAGRAPH, ""),
    "a long line before the title": (f"{PARAGRAPH}\n\nCERTIFICATE OF INCORPORATION",
                                     "CERTIFICATE OF INCORPORATION"),
    "a sentence inside a short line": ("Miscellaneous. The parties agree hereto", ""),
    "a long title-case line": (" ".join(["Amended"] * 30), ""),
    "a logo mark": ("[ABOUT LOGO]\nDISTRIBUTOR AGREEMENT", "DISTRIBUTOR AGREEMENT"),
    "an execution stamp": ("EXECUTION COPY\n\nSTRATEGIC ALLIANCE AGREEMENT",
                           "STRATEGIC ALLIANCE AGREEMENT"),
    "a redaction stamp and legend": ("REDACTED COPY\nCONFIDENTIAL TREATMENT REQUESTED\n"
                                     "Co-Branding Agreement", "Co-Branding Agreement"),
    "signature lines only": ("By Client: /s/ John Smith\nBy Agency: /s/ Jane Doe\n"
                             "Name: Jane Doe", ""),
    "a wrapped confidentiality legend": (f"{LEGEND}\nJOINT VENTURE AGREEMENT",
                                         "JOINT VENTURE AGREEMENT"),
    "a filing source line": ("Source: ACME INC, 10-K, 3/1/2019\nLICENSE AGREEMENT",
                             "LICENSE AGREEMENT"),
    "an EDGAR file line": ("EX-10.27 2 dex1027.htm SUPPLY AGREEMENT\nSUPPLY AGREEMENT",
                           "SUPPLY AGREEMENT"),
    "a fragment in lower case": ("and the Distributor shall deliver\nHosting Agreement",
                                 "Hosting Agreement"),
    "a fragment ending mid-phrase": ("AGREEMENT BETWEEN THE PARTIES AND\nMaster Lease",
                                     "Master Lease"),
    "an exhibit label": ("EXHIBIT 10.2\n\nMASTER SUPPLY AGREEMENT\n\nThis Agreement is made.",
                         "MASTER SUPPLY AGREEMENT"),
    "an abbreviation is no sentence": ("Acme Corp. Supply Agreement",
                                       "Acme Corp. Supply Agreement"),
    "a company's abbreviation ends no sentence": (
        "AMENDED AND RESTATED BYLAWS OF HARBOR LOGISTICS HOLDINGS, INC.\n\nSection 2.1 Annual "
        "Meetings. The annual meeting of stockholders shall be held on such date and at such "
        "time as the Board of Directors shall designate.",
        "AMENDED AND RESTATED BYLAWS OF HARBOR LOGISTICS HOLDINGS, INC."),
    "a confidentiality agreement is a title": ("MUTUAL CONFIDENTIALITY AGREEMENT",
                                               "MUTUAL CONFIDENTIALITY AGREEMENT"),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_titles_of_these_shapes(shape):
    page, title = SHAPES[shape]
    assert text_title(page) == title
    assert len(text_title(page)) <= MAX_TITLE


def test_a_document_with_no_title_like_line_is_named_by_its_file(tmp_path: Path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "permit-2019.txt").write_text(f"EXECUTION COPY\n[ABOUT LOGO]\n\n{PARAGRAPH}.\n")
    (src / "amendment.txt").write_text(f"By Client: /s/ John Smith\n\n{PARAGRAPH}.\n")
    (src / "lease.txt").write_text(f"REDACTED COPY\n\nMASTER LEASE\n\n{PARAGRAPH}.\n")
    ingest(src, tmp_path / "room", IngestSettings(workers=1, build_index=False))
    titles = {d.path.split("/")[-1]: d.title for d in load_manifest(tmp_path / "room").documents}
    assert titles == {"permit-2019.txt": "permit-2019", "amendment.txt": "amendment",
                      "lease.txt": "MASTER LEASE"}
