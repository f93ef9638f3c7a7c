"""What to do next, derived from the numbers: which leaves to prune, what to stop publishing,
when to run the defense search (the defenses of paper 000 §6 and paper 003 §4: pruning, and
publishing less than the class counts).
"""

from __future__ import annotations

from typing import Any

from ppdm.attacks.core.target import Target, default_target
from ppdm.report import words
from ppdm.report.verdict import pct

_LESS = {"class-counts": "error-rates", "error-rates": "labels"}


def advice(
    attacks: list[dict[str, Any]],
    model: dict[str, Any] | None,
    frontier: dict[str, Any] | None,
    target: Target | None = None,
) -> list[str]:
    """Plain-words steps, most effective first, from each attack's verdict and per-leaf table."""
    target = target if target is not None else default_target()
    failing = [a for a in attacks if a["verdict"]["level"] == "fails"]
    out: list[str] = []
    for attack in failing:
        out.extend(_leaves_to_prune(attack))
    if failing and model is not None:
        less = _LESS.get(model["disclosure"])
        if less:
            out.append(
                f"Publish less: the model publishes {model['disclosure']}; publishing {less} instead takes away what the "
                f"attacker solves with. Check it before publishing: ppdm audit ... --publish {less}."
            )
        else:
            out.append("The model already publishes only labels: prune it, or retrain with a depth or minimum-leaf limit.")
    if failing:
        out.append(_defend(frontier, target))
    elif attacks and any(a["verdict"]["level"] == "unknown" for a in attacks):
        out.append(
            f"Whether the model meets the target ({target.describe()}) cannot be said from this audit: see the verdict for "
            "what it did not measure or read, and audit again with what it needs (the measure, the whole model, or a larger "
            "time limit) before publishing."
        )
    elif attacks:
        insider = any((a["threat"].get("spec") or {}).get("preset") == "insider" or "'insider'" in str(a["threat"].get("line", "")) for a in attacks)
        more = (
            "The insider (every other column known) is the strongest attacker of this question; whether someone was in "
            "the training set at all is another one: ppdm audit --membership (docs/membership.md)."
            if insider
            else "Audit again if the attacker may know more (for example ppdm audit ... --preset insider) before publishing."
        )
        out.append(f"Under this threat model the model meets the target ({target.describe()}). {more}")
    out.extend(_little_beyond_prior(attacks))
    return out


def _leaves_to_prune(attack: dict[str, Any]) -> list[str]:
    """The fewest leaves that cause 80 % of the proved people (or of those at high confidence),
    each person counted once, under the set of leaves they can reach (the attack's ``leaf_sets``,
    :func:`ppdm.report.exposure.leaf_sets`): the shares are of the verdict's count."""
    rows = [r for r in attack["exposure"] if r.get("leaf") is not None]
    if not rows:
        return []
    key = "certain_right" if any(r["certain_right"] for r in rows) else "beyond" if any(r.get("beyond") for r in rows) else None
    if key is None:
        return []
    what = "proved people" if key == "certain_right" else "people held at high confidence only because of the model"
    if any(r.get("tree") is not None for r in rows):
        return [_forest_leaves(attack, rows, key, what)]
    sets = [s for s in attack.get("leaf_sets", []) if s.get(key) and s.get("leaves")]
    summary = attack["summary"]
    total = summary.get("certain_right", summary.get("exposed_records")) if key == "certain_right" else summary.get("beyond_prior", {}).get(">=0.9")
    total = total if total is not None else sum(s[key] for s in sets)
    if not sets or not total:
        return []
    leaves, covered = _covering_leaves(sets, key, 0.8 * total)
    together = sorted({leaf for s in sets if any(leaf in leaves for _, leaf in s["leaves"]) for _, leaf in s["leaves"]})
    if len(together) <= 8:  # name the leaves these people reach together, when few, and count who reaches any
        leaves = together
        covered = sum(s[key] for s in sets if any(leaf in leaves for _, leaf in s["leaves"]))
    names = ", ".join(map(str, leaves))
    share = pct(covered / total)
    once = "each person counted once, under the leaves their known values can lead to"
    if covered < 0.5 * total:
        return [
            f"{attack['name']}: the {what} ({int(total):,}) are spread over {len(sets):,} sets of leaves; the {len(leaves)} leaves "
            f"reached by most of them ({names}) cause only {share} ({int(covered):,}; {once}). Pruning leaf by leaf will not do: retrain with a depth or "
            "minimum-leaf limit, or let ppdm defend search pruning levels."
        ]
    subject, them = (f"leaf {names} causes", "it into its parent") if len(leaves) == 1 else (f"leaves {names} cause", "them into their parents")
    return [
        f"{attack['name']}: {subject} {share} of the {what} ({int(covered):,} of {int(total):,}; {once}). "
        f"Prune {them} (ppdm prune, or ppdm defend to choose how far), or merge the splits above them."
    ]


def _covering_leaves(sets: list[dict[str, Any]], key: str, enough: float, most: int = 8) -> tuple[list[int], float]:
    """At most ``most`` leaves, chosen greedily, that the most people (``key``) can land in: each
    set of leaves counts once, when one of its leaves is chosen; stops at ``enough`` people."""
    chosen: list[int] = []
    open_sets = list(sets)
    covered = 0.0
    while covered < enough and len(chosen) < most and open_sets:
        gain: dict[int, float] = {}
        for s in open_sets:
            for _, leaf in s["leaves"]:
                gain[leaf] = gain.get(leaf, 0.0) + s[key]
        best = max(sorted(gain), key=lambda leaf: gain[leaf])
        chosen.append(best)
        covered += gain[best]
        open_sets = [s for s in open_sets if all(leaf != best for _, leaf in s["leaves"])]
    return sorted(chosen), covered


def _forest_leaves(attack: dict[str, Any], rows: list[dict[str, Any]], key: str, what: str) -> str:
    """A forest: everyone is counted under a leaf of every tree, so the leaves' counts do not add
    up to people; name the leaves most of them reach, and the remedies that act on every tree."""
    summary = attack["summary"]
    people = summary.get("certain_right", summary.get("exposed_records")) if key == "certain_right" else summary.get("beyond_prior", {}).get(">=0.9")
    top = sorted(rows, key=lambda r: -r[key])[:3]
    names = ", ".join(f"{r['source']} ({int(r[key]):,})" for r in top if r[key] > 0)
    trees = len({r["tree"] for r in rows})
    count = f" ({int(people):,})" if people is not None else ""
    return (
        f"{attack['name']}: the {what}{count} reach a leaf in each of the forest's {words.trees(trees)}, and the trees disclose "
        f"together; the leaves most of them reach: {names}. Pruning the leaves of one tree does not touch the other trees' counts: "
        "retrain with fewer or shallower trees or a minimum-leaf limit, publish less, or let ppdm defend search."
    )


def _defend(frontier: dict[str, Any] | None, target: Target) -> str:
    if frontier is None or not frontier.get("points"):
        return (
            f"Run the defense search to find the most accurate model meeting the target ({target.describe()}): "
            f"ppdm defend --model MODEL --data DATA ... --target '{target.to_text()}'. It prunes, retrains with limits, trains k-anonymous trees and "
            "publishes less, and audits every candidate under the same threat model."
        )
    chosen = [p for p in frontier["points"] if p.get("chosen")]
    if not chosen:
        return "The defense search found no candidate meeting the target: loosen the target, or publish less than a tree."
    best, name = chosen[0], frontier.get("risk", "risk")
    risk = pct(best["risk"], 1) if "share" in name else f"{best['risk']:.3g}"
    return (
        f"The defense search chose {best['label']!r}: {frontier.get('accuracy', 'accuracy')} {pct(best['accuracy'], 1)}, {name} {risk}. "
        "Publish it after auditing it again under this threat model."
    )


def _little_beyond_prior(attacks: list[dict[str, Any]]) -> list[str]:
    """An attacker's accuracy hardly above the prior's. Not the exact audit's: its accuracy is read
    from the middle of each proved interval, which no attacker holds (its card says to read the
    estimate's), so a proof of nobody would read as "the model tells almost nothing"."""
    out = []
    for attack in attacks:
        if attack.get("attack") == "exact":
            continue
        lift = attack["summary"].get("lift", {}).get("difference")
        if lift is not None and abs(lift) < 0.01 and attack["verdict"]["level"] != "fails":
            out.append(f"{attack['name']}: the model tells the attacker almost nothing beyond the prior (accuracy lift {lift:+.3f}).")
    return out
