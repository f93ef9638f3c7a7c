"""The estimate and the proof in one headline.

An audit with ``exact=True`` has two results on the same people: the maximum-entropy estimate
(paper 000 §3–4: the attacker's most neutral belief, with an accuracy and a confidence per person)
and the exact audit (the worst case over every dataset consistent with what is published: who is
certain, proved, and who is left undecided when its time budget runs out). Every proved person is
one the estimate should hold certain, since the estimate satisfies the same rows; the estimate may
be certain of more (a belief, not a proof). Shown side by side as two verdicts, the exact audit's
accuracy (read from the middle of each proved interval) looks like a second, contradicting
attacker. Here they are counted on the same people, so the report can say: proved ⊂ estimated
certain, how many are undecided, and which card answers which question.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ppdm.report import words
from ppdm.report.persons import Persons, persons_from_report


def reconcile(attacks: list[dict[str, Any]]) -> dict[str, Any] | None:
    """``{"estimate", "exact", "people", "proved", "estimated_certain", "both", "proved_only",
    "estimate_only", "undecided"}`` for the first estimate and the exact audit of the same
    sensitive column over the same rows; ``None`` without both."""
    exact = next((a for a in attacks if a["attack"] == "exact"), None)
    estimate = next((a for a in attacks if a["attack"] != "exact" and exact is not None and a["sensitive"] == exact["sensitive"]), None)
    if exact is None or estimate is None:
        return None
    est, proof = persons_from_report(estimate), persons_from_report(exact)
    if est.n != proof.n or not np.array_equal(np.sort(est.row), np.sort(proof.row)):
        return None
    proved = _by_row(proof, proof.certain_right())
    certain = _by_row(est, est.certain_right())
    undecided = exact["summary"].get("exact", {}).get("undecided_records")
    return {
        "estimate": estimate["name"],
        "exact": exact["name"],
        "people": int(est.target.sum()),
        "proved": int(proved.sum()),
        "estimated_certain": int(certain.sum()),
        "both": int((proved & certain).sum()),
        "proved_only": int((proved & ~certain).sum()),
        "estimate_only": int((certain & ~proved).sum()),
        "undecided": None if undecided is None else int(undecided),
    }


def _by_row(persons: Persons, mask: np.ndarray) -> np.ndarray:
    """``mask`` in the order of the persons' rows (two results list their people in group order)."""
    return mask[np.argsort(persons.row, kind="stable")]


def headline(r: dict[str, Any]) -> tuple[str, list[str]]:
    """The reconciled headline and its lines (see the module docstring)."""
    head = (
        f"{r['proved']:,} of {words.people(r['people'])} are proved: in every dataset consistent with the published model, "
        "their sensitive value is the one the attacker names."
    )
    lines = []
    if r["estimate_only"]:
        lines.append(
            f"The estimate is certain of {r['estimated_certain']:,}: the {r['both']:,} proved and {r['estimate_only']:,} more, "
            "whom the model makes near-certain in its most neutral reading but does not prove."
        )
    else:
        lines.append(f"The estimate is certain of the same {words.people(r['both'])}: every certainty it finds is proved.")
    if r["proved_only"]:
        lines.append(
            f"{r['proved_only']:,} proved {'person is' if r['proved_only'] == 1 else 'people are'} not held certain by the estimate "
            "(its solver stops short of certainty): for them, believe the proof."
        )
    if r["undecided"]:
        lines.append(
            f"{words.people(r['undecided'])} are undecided: the proof's time budget ran out before settling them; none of them is counted "
            "as proved, and some may be."
        )
    elif r["undecided"] == 0:
        lines.append("Nobody is undecided: the proof settled every person.")
    lines.append(
        "Which to read: the estimate's card for how often an attacker guesses right and how confident they are; "
        "the proof's for who is certain whatever the data behind the model."
    )
    return head, lines


def exact_verdict(verdict: dict[str, Any], r: dict[str, Any]) -> dict[str, Any]:
    """The exact audit's card, saying what it proves rather than an accuracy: its accuracy and
    confidence are read from the middle of each proved interval, which no attacker holds."""
    target = [line for line in verdict["lines"] if line.startswith("Target")]
    undecided = f"; {r['undecided']:,} undecided" if r["undecided"] else ""
    lines = [
        f"The proof names {words.people(r['proved'])}'s value{undecided}. It proves, it does not guess: for the attacker's accuracy "
        f"and confidence read the estimate's card ({r['estimate']}).",
        *target,
    ]
    return {**verdict, "headline": f"{words.people(r['proved'])} proved, in every dataset consistent with the published model.", "lines": lines}
