"""A small real room, ingested from text files, for harness tests."""

import pytest

from dealroom.room import ingest

FILES = {
    "01 Corporate/1.1 Charter/Certificate of Incorporation.md":
        "Certificate of Incorporation of Falcon Bank Inc.\n\nAuthorised shares: 10,000,000.",
    "03 Material Contracts/3.2 Customer Agreements/Acme MSA.md":
        "Master Services Agreement between Falcon Bank Inc. and Acme Corp.\n\f"
        "Section 14.2 Change of Control. Acme may terminate this Agreement upon a change of "
        "control of the Company without Acme's prior written consent.\n\f"
        "Schedule 4. Termination fee payable to Acme: $2,500,000.",
    "05 Litigation/5.1 Pending/Demand letter.md":
        "Demand letter from Borealis LLP claiming damages of $1,200,000 for breach of the "
        "Services Agreement dated 2023-04-01.",
    "07 Regulatory/7.3 Permits/Permit register.md":
        "Permit register. Environmental permit EP-220 expired on 2024-01-31; renewal pending.",
}


@pytest.fixture(scope="session")
def small_room(tmp_path_factory):
    src = tmp_path_factory.mktemp("src")
    for rel, text in FILES.items():
        path = src / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    room = tmp_path_factory.mktemp("rooms") / "falcon"
    ingest(src, room)
    return room
