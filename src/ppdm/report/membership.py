"""The report's membership section, as data: what a membership audit (issue 27,
:mod:`ppdm.attacks.membership.audit`) found, ready for the page (:mod:`ppdm.report.membership_html`).

* the counts: proved members, proved non-members, undecided, against the population;
* with the truth: the ROC curve sampled on a log grid of false-positive rates (Carlini et al.,
  *Membership Inference Attacks From First Principles*, IEEE S&P 2022, §III: read on log-log
  axes), AUC and TPR at 0.1 % and 1 % FPR; without it, the share of candidates at each
  P(member);
* the riskiest leaves: the published cells whose count alone proves members (it counts every
  candidate reaching the cell), then those that most raise membership (the members the estimate
  places there beyond the member share);
* the verdict against a membership target (default: nobody proved a member, TPR at 1 % FPR at
  most 2 %), next to the baseline, the attacker without the model (everyone scored at the member
  share: TPR = FPR, AUC 0.5).

Like every part of the report, the page is drawn from this dict alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ppdm.attacks.core.target import MiaTpr, Target, default_target
from ppdm.errors import ReportError
from ppdm.maxent.constraints.rule_membership_rows import ANTECEDENT_CELL
from ppdm.metrics.membership import interpolated_tpr, roc_points
from ppdm.report import words
from ppdm.report.model_view import anchor
from ppdm.report.plots import THRESHOLDS, share_at_least
from ppdm.report.verdict import pct, target_line
from ppdm.rules.ruleset import RuleSet

if TYPE_CHECKING:
    from ppdm.attacks.membership.audit import MembershipResult
    from ppdm.tree.forest import Forest
    from ppdm.tree.model import Tree

#: Points per decade of the ROC curve kept for the figure (false-positive rates log-spaced over
#: the decades shown, every decade among them).
ROC_POINTS = 100

#: The lowest false-positive rate an ROC axis shows (Carlini et al. 2022 plot from 10⁻⁵).
FLOOR = 1e-5

#: Leaves listed in the riskiest-leaves table.
TOP_LEAVES = 15


def membership_section(
    result: MembershipResult, model: Tree | Forest | RuleSet | None = None, target: Target | None = None, top: int = TOP_LEAVES
) -> dict[str, Any]:
    """The section's data (see the module docstring). ``target``: what the verdict judges
    against, its membership measures (default: :data:`~ppdm.attacks.core.target.MEMBERSHIP_TARGET`;
    a target without one judges nothing here)."""
    from ppdm.attacks.membership.audit import MembershipResult

    if not isinstance(result, MembershipResult):
        raise ReportError(f"a membership section is made from a membership audit (MembershipResult), got {type(result).__name__}")
    target = membership_target(target)
    summary = {k: _plain(v) for k, v in membership_summary(result, target).items()}
    p = result.probability
    return {
        "summary": summary,
        "target": target.to_dict(),
        "verdict": membership_verdict(summary, target),
        "roc": _roc(result),
        "attacks": summary.get("attacks") or [],
        "p_member": {"t": THRESHOLDS.tolist(), "share": np.round(share_at_least(p), 6).tolist()},
        "leaves": riskiest_leaves(result, model, top),
        "published": f"a rule set of {len(model.rules):,} rules (paper 004)" if isinstance(model, RuleSet) else None,
        "proved_member_rows": [_plain(r) for r in result.row_ids[result.state == 1]],
    }


def _roc(result: Any) -> dict[str, Any] | None:
    """The strongest attack's ROC curve over the candidates the rates are measured on (``None`` without the truth)."""
    if result.truth is None:
        return None
    m = result.judged()
    truth = result.truth[m]
    return roc_curve(truth, result.strongest_score()[m]) if 0 < truth.sum() < len(truth) else None


def roc_curve(truth: np.ndarray, score: np.ndarray, points: int = ROC_POINTS) -> dict[str, Any]:
    """The ROC curve as :func:`ppdm.metrics.membership.tpr_at_fpr` reads it (ties broken at
    random: interpolated between thresholds): at ``points`` log-spaced false-positive rates per
    decade from the axis' floor to 1 (and at 0)."""
    fpr, tpr = roc_points(truth, score)
    n_members, n_non = int(truth.sum()), int((~truth.astype(bool)).sum())
    floor = axis_floor(n_members, n_non)
    decades = int(round(-np.log10(floor)))
    grid = np.r_[0.0, np.logspace(-decades, 0.0, decades * points + 1)]
    reached = interpolated_tpr(fpr, tpr, grid)
    return {"fpr": grid.tolist(), "tpr": np.round(reached, 6).tolist(), "floor": floor, "members": n_members, "non_members": n_non}


def axis_floor(n_members: int, n_non_members: int) -> float:
    """The ROC axes' lowest rate: the decade of one candidate in the larger class (a rate below it
    cannot be measured), from :data:`FLOOR` to 0.1 % (so that 0.1 % and 1 % FPR are on the axis)."""
    resolution = 1.0 / max(n_members, n_non_members, 1)
    return float(min(max(10.0 ** np.floor(np.log10(resolution)), FLOOR), 1e-3))


def riskiest_leaves(result: MembershipResult, model: Tree | Forest | RuleSet | None, top: int) -> list[dict[str, Any]]:
    """The ``top`` riskiest published cells (:meth:`MembershipResult.leaves`, every cell): first
    those whose count alone proves every candidate reaching them a member (at least as many
    records counted as candidates reach it), most candidates first; then those that most raise
    membership, by the members the estimate places there beyond the member share
    (Σ (P(member) − share) over the candidates reaching the cell), or on a pool holding some of
    the training records only by the published count per candidate reaching the cell (``per_candidate``). Each with its leaf's name, the
    class the cell counts, its lift over the member share and the anchor of its line in the model."""
    frame = result.leaves(result.rows.n_rows)
    share = float(result.summary()["baseline_member_share"])
    reach = frame["candidates"].to_numpy(float)
    mean = frame["mean_P(member)"].to_numpy(float)
    sample = _sample_pool(result)
    frame = frame.assign(proves=(reach > 0) & (frame["count_min"].to_numpy(float) >= reach - 1e-9), excess=reach * (mean - share))
    frame = frame.assign(proved_alone=np.where(frame["proves"], reach, 0.0), per_candidate=frame["count"].to_numpy(float) / np.maximum(reach, 1.0))
    order = ["proved_alone", "per_candidate" if sample else "excess"]
    frame = frame[reach > 0].sort_values(order, ascending=False, kind="stable").head(top)
    forest = len(result.rows.modes) > 1
    rules = model if isinstance(model, RuleSet) else None
    trees = list(model.trees) if model is not None and not isinstance(model, RuleSet) and hasattr(model, "trees") else None
    rows = []
    for r in frame.to_dict("records"):
        t, leaf, cell, mean_p = int(r["tree"]), int(r["leaf"]), int(r["class"]), float(r["mean_P(member)"])
        if rules is not None:
            source = f"rule {leaf}: {rules.rules[leaf].describe(rules.sensitive)}"
            words = "its antecedent's records" if cell == ANTECEDENT_CELL else "the rule's records"
        else:
            source = f"tree {t} leaf {leaf}" if forest else f"leaf {leaf}"
            words = _cell_words(cell, trees[t].classes if trees is not None else None)
        rows.append({
            "tree": t if forest and rules is None else None,
            "leaf": leaf,
            "source": source,
            "anchor": anchor(leaf, t if forest else None) if trees is not None else None,
            "cell": words,
            "count": f"{r['count']:g}" if sample else _count_words(float(r["count_min"]), float(r["count_max"])),
            "per_candidate": round(float(r["per_candidate"]), 4) if sample else None,
            "candidates": int(r["candidates"]),
            "proves_members": bool(r["proves"]),
            "proved_members": int(r["proved_members"]),
            "mean_p_member": round(mean_p, 6),
            "beyond_share": round(float(r["excess"]), 3),
            "lift": round(mean_p / share, 4) if share > 0 and not sample else None,
        })
    return rows


def _sample_pool(result: MembershipResult) -> bool:
    """Whether the pool holds some of the training records only, with counts published: its
    maximum-entropy P(member) is flat wherever no upper bound binds, so cells are ranked by their
    count per candidate reaching them (the count ratio's evidence), not by a lift over the share."""
    return not result.rows.complete and result.rows.count is not None


def _cell_words(cell: int, classes: Any) -> str:
    if cell == -1:
        return "every class"
    if cell == -2:
        return "outside the label's class"
    return str(classes[cell]) if classes is not None and 0 <= cell < len(classes) else f"class {cell}"


def _count_words(lo: float, hi: float) -> str:
    return f"{lo:g}" if lo == hi else f"{lo:g}–{hi:g}"


def membership_target(target: Target | None) -> Target:
    """The membership measures of ``target`` (:data:`~ppdm.attacks.core.target.MEMBERSHIP_TARGET`
    when it has none, or without a target)."""
    kept = tuple(m for m in target.measures if m.needs_membership) if target is not None else ()
    return Target(kept) if kept else default_target(membership=True)


def membership_summary(result: MembershipResult, target: Target) -> dict[str, Any]:
    """The membership audit's summary, with the TPR at every false-positive rate the target names
    (``tpr@0.5%``) when the truth is known (:func:`ppdm.metrics.membership.tpr_at_fpr`)."""
    summary = dict(result.summary())
    if result.truth is not None and 0 < result.truth.sum() < len(result.truth):
        for m in target.measures:
            if isinstance(m, MiaTpr) and f"tpr@{100 * m.fpr:g}%" not in summary:
                summary[f"tpr@{100 * m.fpr:g}%"] = float(result.tpr_at(m.fpr))  # the strongest attack's (ppdm.attacks.membership.audit)
    return summary


def membership_verdict(summary: dict[str, Any], target: Target | None = None) -> dict[str, Any]:
    """``level`` ("fails", "meets" or "unknown"), a ``headline`` and the ``lines`` under it: the
    proved members, whether a proof was ever wrong, the rates at low FPR, each beside the baseline."""
    proved, candidates = summary["proved_members"], summary["candidates"]
    share = summary["baseline_member_share"]
    truth = summary.get("auc") is not None or "wrong_proved_members" in summary
    who = "person proved a member" if proved == 1 else "people proved members"
    if truth:
        wrong = summary.get("wrong_proved_members", 0)
        never = f"never wrong: {'none' if wrong == 0 else f'{wrong:,}'} of them outside the training set"
    else:
        never = "never wrong: each proof holds in every training set consistent with the published counts"
    alone = f"without the model an attacker has only the member share, {pct(share)}, and proves nobody"
    if proved:
        headline = f"{proved:,} {who} of {words.candidates(candidates)} ({never}); {alone}."
    else:
        headline = f"None of the {words.candidates(candidates)} is proved a member; {alone}."
    known = summary.get("known_non_members")
    given = f" ({known:,} of them known to the attacker as non-members)" if known else ""
    lines = [
        f"Proved members: {proved:,}; proved non-members: {summary['proved_non_members']:,}{given}; undecided: {summary['undecided']:,}."
    ]
    tpr = summary.get("tpr@1%")
    if tpr is not None and summary.get("strongest"):
        by = summary.get("reached_by", {})
        if len({by.get(k) for k in ("auc", "tpr@1%", "tpr@0.1%")}) > 1:  # the highest rates are not all one attack's
            who = f"Of {len(summary.get('attacks', []))} attacks, the strongest at each rate finds {pct(tpr)} of the members at 1 % FPR ({by['tpr@1%']}) and "
            at = f"{pct(summary['tpr@0.1%'])} at 0.1 % FPR ({by['tpr@0.1%']}; AUC {summary['auc']:.3f}, {by['auc']}); "
        else:
            who = f"The strongest of {len(summary.get('attacks', []))} attacks ({summary['strongest']}) finds {pct(tpr)} of the members at 1 % FPR and "
            at = f"{pct(summary['tpr@0.1%'])} at 0.1 % FPR (AUC {summary['auc']:.3f}); "
        lines.append(who + at + "without the model TPR equals FPR (1 % and 0.1 %) and the AUC is 0.500.")
    elif tpr is not None:
        lines.append(
            f"Scoring by P(member), the attacker finds {pct(tpr)} of the members at 1 % FPR and {pct(summary['tpr@0.1%'])} at "
            f"0.1 % FPR (AUC {summary['auc']:.3f}); without the model TPR equals FPR (1 % and 0.1 %) and the AUC is 0.500."
        )
    if not summary.get("proof_settled", True):
        lines.append("The proof's time budget ran out: some undecided candidates may be decidable.")
    level, said = target_line(summary, membership_target(target))
    if level == "unknown" and tpr is None:
        said = said.removesuffix(".") + " (the TPR needs the truth: the population's member column)."
    lines.append(said)
    return {"level": level, "headline": headline, "lines": lines}


def membership_advice(section: dict[str, Any]) -> list[str]:
    """What to do next about membership: the leaves whose counts prove members, and the search."""
    if section["verdict"]["level"] != "fails":
        return []
    out = []
    proving = [r for r in section["leaves"] if r["proves_members"]]
    if proving:
        names = ", ".join(f"{r['source']} ({r['candidates']:,})" for r in proving[:5])
        out.append(
            f"Membership: the counts of {names} prove members (each counts every candidate reaching its cell). Publish "
            "less than class counts (labels only publish no count), or prune and retrain with a minimum-leaf limit so that "
            "every cell is reached by more candidates than it counts."
        )
    out.append(
        f"Search a model meeting the membership target ({section['target']['describe']}): ppdm defend --model MODEL --data DATA "
        "--membership --population CANDIDATES.csv --target 'members_proved=0,mia_tpr@1%<=0.02'."
    )
    return out


def _plain(v: Any) -> Any:
    """JSON-ready: numpy scalars as Python numbers, NaN as None."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and v != v:
        return None
    return v
