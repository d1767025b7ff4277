"""Seeded names: companies whose first word is unique in the room, people, firms and places.

A counterparty's first word doubles as its defined term inside documents (``"Halvorsen"``), so
every counterparty of a room starts with a different single word made only of letters.
"""

from __future__ import annotations

from random import Random

_STEMS = (
    "Hal", "Bri", "Kes", "Nor", "Ash", "Cal", "Dun", "Eld", "Fal", "Gar", "Hart", "Ivor", "Jas",
    "Kel", "Lang", "Mar", "Nes", "Orm", "Pem", "Quin", "Rad", "Sel", "Tam", "Ul", "Val", "Wes",
    "Yar", "Zel", "Bram", "Cor", "Dal", "Ever", "Fen", "Glen", "Hol", "Ing", "Kin", "Lor",
    "Mel", "Ost", "Pax", "Red", "Sten", "Tor", "Ver", "Win", "Ald", "Bel", "Cres", "Dra",
)
_ENDINGS = (
    "vorsen", "wick", "mont", "field", "ridge", "haven", "stone", "worth", "ford", "dale",
    "brook", "crest", "gate", "more", "ton", "wood", "ley", "bury", "holm", "by", "mere",
    "shaw", "vale", "wyn", "ara", "ion", "ex", "ora", "ant", "ium",
)
_SUFFIXES = ("LLC", "Inc.", "Corp.", "Ltd.", "LP", "Group, Inc.", "Partners LLC", "Co.")
FIRST = (
    "James", "Maria", "Robert", "Linda", "Michael", "Priya", "David", "Elena", "Thomas",
    "Grace", "Daniel", "Aisha", "Andrew", "Sofia", "Kevin", "Hannah", "Brian", "Mei", "Jonathan",
    "Olivia", "Samuel", "Fatima", "Peter", "Laura", "Marcus", "Ingrid", "Victor", "Chloe",
    "Rahul", "Naomi", "Gregory", "Yuki", "Patrick", "Amara", "Steven", "Claire", "Henry", "Rosa",
)
LAST = (
    "Whitfield", "Okafor", "Lindqvist", "Moreno", "Castellano", "Brennan", "Nakamura", "Osei",
    "Kowalski", "Hargreaves", "Delacroix", "Pemberton", "Ashworth", "Vasquez", "Iverson",
    "Rutherford", "Chandra", "Fitzgerald", "Albrecht", "Sorensen", "Mbeki", "Thornton",
    "Goldberg", "Haddad", "McAllister", "Novak", "Ferreira", "Lundgren", "Abernathy", "Quinlan",
    "Halloran", "Szabo", "Whitaker", "Dunmore", "Carrington", "Valdez", "Ostrowski", "Bellamy",
)
LAW_FIRMS = ("Whitcombe & Rowe LLP", "Hartley Benning LLP", "Ostrander Kline & Vogel LLP",
             "Marsh Calloway LLP", "Pennington Drake LLP")
AUDITORS = ("Brightline & Co. LLP", "Carver Ellison LLP", "Northway Audit Partners LLP")
INSURERS = ("Granite Mutual Insurance Company", "Keystone Specialty Insurance Co.",
            "Atlas Indemnity Company", "Meridian Casualty Company")
CONSULTANTS = ("TerraSure Environmental, Inc.", "Halcyon Geosciences LLC",
               "Bluewater Environmental Consulting")
FORENSICS = ("Sentinel Forensics LLC", "Ironclad Incident Response, Inc.")
STREETS = ("Market Street", "Commerce Drive", "Industrial Parkway", "Harbor Road",
           "Main Street", "Lakeview Avenue", "Canal Street", "Ridge Road", "Mill Lane")
CITIES = ("Columbus", "Toledo", "Harrisburg", "Raleigh", "Minneapolis", "Denver", "Austin",
          "Hartford", "Madison", "Richmond", "Albany", "Lansing")
CODENAMES = ("Harbor", "Granite", "Juniper", "Falcon", "Cobalt", "Meridian", "Summit",
             "Evergreen", "Lantern", "Keystone", "Bluebird", "Sequoia", "Aurora", "Beacon")


class NameBook:
    """Hands out room-unique counterparty names and people, from one seeded generator."""

    def __init__(self, rng: Random, sectors: tuple[str, ...]) -> None:
        words = [s + e for s in _STEMS for e in _ENDINGS]
        rng.shuffle(words)
        self._words = words
        self._rng = rng
        self._sectors = sectors
        self._people = [f"{f} {x}" for f in FIRST for x in LAST]
        rng.shuffle(self._people)

    def word(self) -> str:
        """A fresh single-word name stem, never handed out before in this room."""
        if not self._words:
            raise RuntimeError("name stems exhausted")
        return self._words.pop()

    def company(self) -> tuple[str, str]:
        """A fresh counterparty: (full legal name, one-word defined term)."""
        head = self.word()
        name = f"{head} {self._rng.choice(self._sectors)} {self._rng.choice(_SUFFIXES)}"
        return name, head

    def person(self) -> str:
        """A fresh person's name."""
        return self._people.pop()


def money(value: float) -> str:
    """``USD 1,234,500`` style, cents only when present."""
    return f"USD {value:,.2f}" if value != int(value) else f"USD {int(value):,}"


def dollars(value: float) -> str:
    """``$1,234,500`` style, cents only when present."""
    return f"${value:,.2f}" if value != int(value) else f"${int(value):,}"


MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")


def long_date(iso: str) -> str:
    """``2024-06-30`` → ``June 30, 2024``."""
    y, m, d = iso.split("-")
    return f"{MONTHS[int(m) - 1]} {int(d)}, {y}"
