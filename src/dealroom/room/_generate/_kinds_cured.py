"""Distractors: issues cured by a later document, and look-alike clauses that trigger nothing.

Each yields a *negative* criterion (the memo must not present the issue as live) and, for cured
issues, a fact criterion rewarding the memo that notices the cure. A negative criterion cites
only the document with the original trigger (a careless memo never cites the cure) and its
``terms`` name the counterparty and the claim such a memo would make; the gold memo's
resolved-items paragraph never uses those phrases.
"""

from __future__ import annotations

from collections.abc import Callable

from dealroom.room._generate import _kinds_contracts as kc
from dealroom.room._generate import _kinds_corporate as kp
from dealroom.room._generate import _kinds_more as km
from dealroom.room._generate._findings import COC, DocSpec, Finding, Kit, Point, usd
from dealroom.room._generate._model import Insert

_LIVE_CONSENT = ("consent is required", "consent required", "requires consent",
                 "requires the consent", "must obtain", "need to obtain", "needs to obtain",
                 "obtain consent", "obtain its consent", "seek consent", "may terminate",
                 "right to terminate remains")


def _negative(title: str, match: str, cite: tuple[str, ...], terms: tuple) -> Point:
    return Point("conclusion", title, match, cite=cite, terms=terms, negative=True)


def cured_coc(k: Kit) -> Finding:
    ctx, rng = k.ctx, k.rng
    cp, term = k.company()
    contract = k.contract("customer")
    start = k.day(600, 1500)
    waived = k.day(10, 60)
    days = rng.choice((30, 60, 90))
    docs = [
        DocSpec("contract", "customer_contract", "contracts.customer", f"{contract} - {cp}",
                start, cp, term,
                [Insert(f"Change of Control. If a Change of Control of {ctx.short} occurs without "
                        f"{term}'s prior written consent, {term} may terminate this Agreement on "
                        f"{days} days' written notice.",
                        (f"{term} may terminate this Agreement on {days} days' written notice",))]),
        DocSpec("consent", "consent_letter", "contracts.consents",
                f"Consent and Waiver - {cp} ({k.long(waived)})", waived, cp, term,
                [Insert(f"{cp} hereby irrevocably consents to any Change of Control of "
                        f"{ctx.target} arising from the proposed transaction with {ctx.buyer} "
                        "and waives its right to terminate the Agreement under its change of "
                        "control provision.",
                        (f"{cp} hereby irrevocably consents to any Change of Control",))]),
    ]
    points = [
        _negative(f"Does not present the {cp} change-of-control right as live",
                  f"PASS if the memo does not present {cp}'s change-of-control termination "
                  f"right as an open issue: {cp} consented and waived the right on "
                  f"{k.long(waived)}. FAIL if the memo says {cp}'s consent is still required or "
                  f"that {cp} may still terminate.", ("contract",),
                  ((term,), _LIVE_CONSENT)),
        Point("fact", f"{cp} waived its change-of-control right",
              f"PASS if the memo notes that {cp} consented to the change of control and waived "
              "its termination right. FAIL otherwise.", cite=("consent",),
              terms=((term,), ("waived", "waiver", "consented"))),
    ]
    memo = (f"{cp}: change-of-control provision waived. The {contract} {{contract}} gave {cp} a "
            f"termination right on a change of control of {ctx.target}, but {cp} consented to the "
            f"transaction with {ctx.buyer} and waived that right in its letter dated {waived} "
            "{consent}. Resolved; no action needed.")
    return Finding("cured_coc", f"{cp}: change-of-control right waived", "low",
                   f"{cp}'s change-of-control right was waived on {waived}.", docs, points, memo,
                   cured=True, dates=[("waived", waived)])


def cured_permit(k: Kit) -> Finding:
    ctx, rng = k.ctx, k.rng
    permit = rng.choice(k.profile.permits)
    number = k.unique(lambda: f"{rng.choice('ABCDEFGHKLMNPRSTW')}{rng.randint(10000, 99999)}")
    old_end = k.day(30, 200)
    renewed = k.after(old_end, -rng.randint(10, 60))
    new_end = k.after(old_end, 365 * rng.randint(3, 5))
    folder = "ehs.permits" if ctx.profile == "manufacturer" else "reg.permits"
    docs = [
        DocSpec("old", "permit", folder, f"{permit} - Permit No. {number}",
                k.after(old_end, -365 * 5),
                inserts=[Insert(f"Permit No.: {number}\nPermittee: {ctx.target}\nExpiration "
                                f"Date: {k.long(old_end)}",
                                (f"Expiration Date: {k.long(old_end)}",), where="front")]),
        DocSpec("renewal", "permit", folder, f"{permit} - Permit No. {number} (Renewal)",
                renewed,
                inserts=[Insert(f"Permit No.: {number} (renewed)\nPermittee: {ctx.target}\n"
                                f"Renewal Date: {k.long(renewed)}\nExpiration Date: "
                                f"{k.long(new_end)}", (f"Expiration Date: {k.long(new_end)}",),
                                where="front")]),
    ]
    points = [
        _negative(f"Does not treat Permit No. {number} as expired",
                  f"PASS if the memo does not describe {permit} No. {number} as expired or "
                  f"lapsed: it was renewed on {k.long(renewed)} and is valid until "
                  f"{k.long(new_end)}. FAIL otherwise.", ("old",),
                  ((number,), ("expired", "lapsed", "not valid", "invalid", "without a valid"))),
        Point("fact", f"Permit No. {number} renewed to {new_end}",
              f"PASS if the memo notes that Permit No. {number} was renewed and is valid until "
              f"{k.long(new_end)}. FAIL otherwise.", cite=("renewal",), dates=(new_end,),
              terms=((number,), ("renewed", "renewal"))),
    ]
    memo = (f"{permit}, Permit No. {number}: renewed. The original permit {{old}} ran to "
            f"{old_end}, but it was renewed on {renewed} and is valid until {new_end} "
            "{renewal}. Resolved; no action needed.")
    return Finding("cured_permit", f"Permit No. {number} renewed", "low",
                   f"Permit No. {number} was renewed before it ran out.", docs, points, memo,
                   cured=True, dates=[("valid until", new_end)])


def settled_litigation(k: Kit) -> Finding:
    ctx = k.ctx
    cp, term = k.company()
    claim = k.amount(500_000, 8_000_000, 10_000)
    paid = round(claim * k.rng.uniform(0.05, 0.25), -3)
    filed = k.day(500, 1000)
    settled = k.day(60, 300)
    docs = [
        DocSpec("complaint", "complaint", "lit.pending", f"Complaint - {cp} v. {ctx.target}",
                filed, cp, term,
                [Insert(f"Plaintiff {cp} demands judgment against Defendant {ctx.target} for "
                        f"damages of not less than USD {claim:,}.",
                        (f"damages of not less than USD {claim:,}",), where="front")]),
        DocSpec("settlement", "settlement", "lit.settlements",
                f"Settlement Agreement and Release - {cp}", settled, cp, term,
                [Insert(f"In full and final settlement of the action, {ctx.short} shall pay "
                        f"{term} USD {paid:,.0f}, and {term} shall file a stipulation of "
                        "dismissal with prejudice within ten days after payment.",
                        (f"{ctx.short} shall pay {term} USD {paid:,.0f}",
                         "dismissal with prejudice"))]),
    ]
    points = [
        _negative(f"Does not present the {cp} lawsuit as pending",
                  f"PASS if the memo does not present the {cp} lawsuit as pending or as an open "
                  f"exposure: it was settled for {usd(paid)} and dismissed with prejudice. "
                  "FAIL otherwise.", ("complaint",),
                  ((term,), ("pending", "ongoing", "unresolved", "remains open",
                             "open exposure"))),
        Point("fact", f"{cp} lawsuit settled",
              f"PASS if the memo notes that the {cp} lawsuit was settled for {usd(paid)} and "
              "dismissed. FAIL otherwise.", cite=("settlement",), amounts=(paid,),
              terms=((term,), ("settled", "settlement"), ("dismissed", "dismissal"))),
    ]
    memo = (f"{cp} v. {ctx.target}: settled. The claim {{complaint}} was settled for {usd(paid)} "
            f"and dismissed with prejudice under the settlement agreement dated {settled} "
            "{settlement}. Resolved; no action needed.")
    return Finding("settled_litigation", f"{cp} lawsuit settled", "low",
                   f"The {cp} lawsuit was settled for {usd(paid)}.", docs, points, memo,
                   cured=True, amounts=[("settlement paid", paid)])


def capped_indemnity(k: Kit) -> Finding:
    ctx = k.ctx
    cp, term = k.company()
    contract = k.contract("customer")
    start = k.day(700, 1600)
    cap = k.amount(500_000, 5_000_000, 50_000)
    docs = [
        DocSpec("contract", "customer_contract", "contracts.customer", f"{contract} - {cp}",
                start, cp, term,
                [Insert(f"Indemnification by {ctx.short}. {ctx.short}'s obligations to {term} "
                        "under this Section are not subject to any limitation or cap on "
                        "liability.",
                        (f"{ctx.short}'s obligations to {term} under this Section",))]),
        DocSpec("amendment", "amendment", "contracts.amendments",
                f"Amendment No. 1 to {contract} - {cp}", k.after(start, 300), cp, term,
                [Insert(f"Section 11.4 of the Agreement is deleted and replaced with the "
                        f"following: {ctx.short}'s aggregate liability to {term} under Section "
                        f"11 (Indemnification) shall not exceed USD {cap:,}.",
                        (f"shall not exceed USD {cap:,}",))]),
    ]
    points = [
        _negative(f"Does not call the {cp} indemnity uncapped",
                  f"PASS if the memo does not describe {ctx.target}'s indemnity to {cp} as "
                  f"uncapped or unlimited: Amendment No. 1 caps it at {usd(cap)}. FAIL "
                  "otherwise.", ("contract",),
                  ((term,), ("uncapped", "no cap", "not capped", "unlimited", "without limit"))),
        Point("monetary", f"Cap on the {cp} indemnity",
              f"PASS if the memo states that the indemnity to {cp} is capped at {usd(cap)} by "
              "Amendment No. 1. FAIL otherwise.", cite=("amendment",), amounts=(cap,),
              terms=((term,), ("cap", "capped", "limit"))),
    ]
    memo = (f"{cp}: indemnity now capped. The indemnity in the {contract} {{contract}} "
            f"originally sat outside the liability cap, but Amendment No. 1 {{amendment}} limits "
            f"{ctx.target}'s liability to {cp} to {usd(cap)}. Resolved; no action needed.")
    return Finding("capped_indemnity", f"{cp}: indemnity capped by amendment", "low",
                   f"Amendment No. 1 caps the {cp} indemnity at {usd(cap)}.", docs, points, memo,
                   cured=True, amounts=[("cap", cap)])


def lookalike_coc(k: Kit) -> Finding:
    ctx, rng = k.ctx, k.rng
    cp, term = k.company()
    role = rng.choice(("supplier", "licence"))
    contract = k.contract(role)
    days = rng.choice((30, 60, 90))
    docs = [DocSpec("contract", f"{role}_contract", f"contracts.{role}", f"{contract} - {cp}",
                    k.day(300, 1500), cp, term,
                    [Insert(f"Change of Control of {term}. If {term} undergoes a Change of "
                            f"Control, {ctx.short} may terminate this Agreement on {days} days' "
                            f"notice. For clarity, no change of control of {ctx.short} shall give "
                            f"{term} any right to terminate this Agreement or require {term}'s "
                            "consent.", (f"no change of control of {ctx.short} shall give {term} "
                                         "any right to terminate",))])]
    points = [_negative(
        f"Does not invent a {cp} change-of-control right",
        f"PASS if the memo does not claim that a change of control of {ctx.target} gives {cp} "
        f"a right to terminate or to consent: the {contract} gives that right to {ctx.target} "
        f"only, on a change of control of {cp}. FAIL otherwise.", ("contract",),
        ((term,), COC, ("may terminate", "right to terminate", "termination right",
                        "consent is required", "requires consent", "consent required")))]
    return Finding("lookalike_coc", f"{cp}: look-alike change-of-control clause", "low",
                   f"The {cp} clause is triggered only by {cp}'s own change of control.", docs,
                   points, "", cured=True)


Kind = Callable[[Kit], Finding]

LIVE: dict[str, Kind] = {
    "change_of_control": kc.change_of_control, "anti_assignment": kc.anti_assignment,
    "exclusivity": kc.exclusivity, "non_compete": kc.non_compete, "mfn": kc.mfn,
    "uncapped_indemnity": kc.uncapped_indemnity, "litigation": kp.litigation,
    "tax_audit": kp.tax_audit, "permit_expired": km.permit_expired,
    "ip_assignment_gap": kp.ip_assignment_gap, "data_breach": km.data_breach,
    "environmental": km.environmental, "golden_parachute": kp.golden_parachute,
    "debt_coc_default": kp.debt_coc_default, "related_party": km.related_party,
    "figure_contradiction": km.figure_contradiction, "missing_document": kc.missing_document,
}
"""Planted issues, by kind."""

DISTRACTORS: dict[str, Kind] = {
    "cured_coc": cured_coc, "cured_permit": cured_permit,
    "settled_litigation": settled_litigation, "capped_indemnity": capped_indemnity,
    "lookalike_coc": lookalike_coc,
}
"""Cured issues and look-alike clauses, by kind."""

STARTERS = ("change_of_control", "litigation", "cured_coc")
"""Planted first in every room that has room for them: together they cover every criterion
type and a negative criterion."""
