"""The report's data: one JSON-ready dict made from attack results, the model, the threat model
and a defense search's frontier. The HTML (:mod:`ppdm.report.html`) is drawn from this dict
alone, and the dict is written next to it, so every figure and table can be checked by reading it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ppdm.attacks.core.result import AttackResult
from ppdm.attacks.core.target import Target, default_target, parse_target, target_from_dict
from ppdm.errors import ReportError
from ppdm.files import finite_number
from ppdm.metrics.baseline import at_least
from ppdm.report.advice import advice
from ppdm.report.audited import audited_facts, boosted
from ppdm.report.exposure import exposure_table, leaf_sets, leaf_sources, text_sources
from ppdm.report.model_view import model_view
from ppdm.report.persons import Persons, leaf_pairs_of, persons_of
from ppdm.report.reconcile import exact_verdict, reconcile
from ppdm.report.record import frontier_target, report_release
from ppdm.report.threat_words import threat_sentences
from ppdm.report.verdict import key_of, verdict
from ppdm.rules.ruleset import RuleSet
from ppdm.tree.leaf_pairs import LeafPairs

if TYPE_CHECKING:
    from ppdm.attacks.core.threat import ThreatModel
    from ppdm.attacks.membership.audit import MembershipResult
    from ppdm.tree.forest import Forest
    from ppdm.tree.model import Tree

FrontierPoint = tuple[float, float, str] | dict[str, Any]

FORMAT = "ppdm-report"


def build_report(
    results: Iterable[AttackResult | dict[str, Any]],
    model: Tree | Forest | RuleSet | None = None,
    threat: ThreatModel | None = None,
    frontier: Sequence[FrontierPoint] | dict[str, Any] | None = None,
    *,
    title: str | None = None,
    target: Target | str | None = None,
    risk_name: str = "share of people at confidence ≥ 0.9",
    membership: MembershipResult | None = None,
    record: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The report of one or more attacks on ``model`` (see the module docstring).

    ``results``: :class:`AttackResult` objects or their JSON form (:meth:`AttackResult.to_dict`,
    as ``ppdm audit --out`` writes it). ``frontier``: a defense search's candidates, each
    ``(accuracy, risk, label)`` or a dict with those keys and optionally ``"chosen": true``; or a
    dict ``{"risk": name, "points": [...]}``. ``membership``: a membership audit
    (:class:`~ppdm.attacks.membership.audit.MembershipResult`), shown in its own section
    (:func:`ppdm.report.membership.membership_section`); ``results`` may then be empty.
    ``target``: what the verdicts judge against (a :class:`~ppdm.attacks.core.target.Target` or its
    text); by default the target the audit was run with (stored in its JSON), else the one the
    defense search of ``frontier`` used, else :data:`~ppdm.attacks.core.target.DEFAULT_TARGET`
    (:func:`report_target`). ``record``: the release record of the audit
    (:func:`ppdm.report.record.release_record`), shown in the release section; without it the
    section shows the decision drawn from the verdicts (:func:`ppdm.report.record.report_release`).
    """
    from ppdm.report.membership import membership_advice, membership_section

    resolved, given = report_target(target, list(results), frontier, membership_only=membership is not None and not results)
    dicts = [d for r in results for d in _with_exact(_as_dict(r, resolved))]
    if not dicts and membership is None:
        raise ReportError("a report needs at least one attack result")
    if dicts and isinstance(model, RuleSet):
        raise ReportError("a rule set's report here is its membership audit's: the audit of a sensitive value by rules is `ppdm audit-rules`")
    if model is not None and not isinstance(model, RuleSet):
        for r in dicts:
            check_same_model(r, model)
    view = model_view(_as_audited(model, threat, dicts) if dicts else model) if _is_trees(model) else None
    attacks = [_attack(r, view, threat, resolved) for r in dicts]
    front = frontier_of(frontier, risk_name)
    member = membership_section(membership, model, resolved) if membership is not None else None
    together = reconcile(attacks)
    if together is not None:
        for a in attacks:
            if a["attack"] == "exact":
                a["verdict"] = exact_verdict(a["verdict"], together)
    return {
        "format": FORMAT,
        "version": 1,
        "ppdm": _version(),
        "title": title or (_title(attacks) if attacks else MEMBERSHIP_TITLE),
        "target": resolved.to_dict(given),
        "audited": audited_facts(view, attacks, member, resolved.describe()),
        "model": view,
        "reconciled": together,
        "attacks": attacks,
        "membership": member,
        "frontier": front,
        "advice": advice(attacks, view, front, resolved) + (membership_advice(member) if member else []),
        "release": report_release(attacks, member, resolved, frontier, record),
    }


def report_target(
    target: Target | str | None, results: Sequence[AttackResult | dict[str, Any]], frontier: Any, membership_only: bool = False,
) -> tuple[Target, bool]:
    """The target a report judges against, and whether someone chose it (not the default): the
    one given; else the one an audit was run with by choice (its JSON's ``target``, ``given``);
    else the one the defense search of ``frontier`` used; else an audit's default one; else
    :func:`~ppdm.attacks.core.target.default_target`. Audits run against different chosen targets,
    or against another than the search's, are refused: the report would judge them against one
    target the other was not run with (give ``target`` to choose)."""
    if target is not None:
        return (parse_target(target) if isinstance(target, str) else target), True
    stored = [r.get("target") for r in results if isinstance(r, dict) and r.get("target") is not None]
    chosen = {target_from_dict(s, "the audit's target").to_text() for s in stored if isinstance(s, dict) and s.get("given", True)}
    searched = frontier_target(frontier)
    if len(chosen) > 1:
        raise ReportError(f"the audits were run against different targets ({' and '.join(sorted(chosen))}): give the target to judge them against")
    if chosen and searched is not None and searched.to_text() not in chosen:
        raise ReportError(
            f"the audit was run against {next(iter(chosen))!r} but the defense search against {searched.to_text()!r}: "
            "give the target to judge against (--target)"
        )
    if chosen:
        return parse_target(next(iter(chosen))), True
    if searched is not None:
        return searched, True
    if stored:
        return target_from_dict(stored[0], "the audit's target"), False
    return default_target(membership_only), False


#: A membership report's title.
MEMBERSHIP_TITLE = "Who was in the training set: what the published model discloses about membership"


def _version() -> str:
    """ppdm's version as installed (read from the package's metadata, not from ``ppdm``, which
    re-exports the front door that imports this module)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ppdm")
    except PackageNotFoundError:
        return "unknown"


def _as_dict(result: AttackResult | dict[str, Any], target: Target) -> dict[str, Any]:
    if isinstance(result, AttackResult):
        from ppdm.metrics.baseline import DEFAULT_THRESHOLDS

        return result.to_dict(tuple(sorted({*DEFAULT_THRESHOLDS, *target.confidences})))
    if not isinstance(result, dict) or result.get("format") != "ppdm-attack-result":
        raise ReportError("not an attack result: expected the JSON that ppdm audit --out or ppdm attack --out writes")
    return result


def _with_exact(result: dict[str, Any]) -> list[dict[str, Any]]:
    """A saved audit (``ppdm audit --exact --out``, :meth:`ppdm.Audit.save`) holds the exact
    audit's result under ``"exact"``, beside the estimate's: both are reported, as right after the
    audit (the report drew the estimate alone, without the proof's card and headline)."""
    exact = result.get("exact")
    if not isinstance(exact, dict):
        return [result]
    return [{k: v for k, v in result.items() if k != "exact"}, exact]


def _is_trees(model: Any) -> bool:
    """Whether ``model`` is a ppdm tree or forest (not a rule set, nor a classifier read by its probabilities only)."""
    from ppdm.tree.forest import is_model

    return is_model(model)


def check_same_model(result: dict[str, Any], model: Tree | Forest) -> None:
    """Refuse a model that is not the one the result audited: every (tree, leaf) the result's
    groups reach must be a leaf of the model (a report would otherwise show one model's leaves
    under another's title)."""
    pairs = leaf_pairs_of(result)
    if pairs is None:
        return
    trees = model.trees
    if len(pairs.tree) and int(pairs.tree.max()) >= len(trees):
        raise ReportError(f"the result reaches tree {int(pairs.tree.max())}, but the model has {len(trees)} tree(s): it audited another model")
    for t, tree in enumerate(trees):
        leaves = np.zeros(tree.n_nodes + 1, dtype=bool)
        leaves[[n.id for n in tree.leaves()]] = True
        mine = pairs.leaf[pairs.tree == t]
        wrong = mine[(mine >= tree.n_nodes) | ~leaves[np.minimum(mine, tree.n_nodes)]]
        if len(wrong):
            where = f"leaf {int(wrong[0])} of tree {t}" if len(trees) > 1 else f"leaf {int(wrong[0])}"
            raise ReportError(f"the result names {where}, which is not a leaf of the model: it audited another model")


def _as_audited(model: Tree | Forest, threat: ThreatModel | None, results: list[dict[str, Any]]) -> Tree | Forest:
    """The model at the level the audit assumed published (the threat model's ``publish``, else
    what the first result's threat line says), when that is less than the file holds."""
    from ppdm.tree.disclosure import Disclosure
    from ppdm.tree.model import Tree

    level = threat.publish.value if threat is not None and threat.publish is not None else None
    if level is None:
        found = re.search(r"model publishes ([a-z-]+)", str(results[0]["summary"].get("threat_model", "")))
        level = found.group(1) if found else None
    if not isinstance(model, Tree) or level not in {d.value for d in Disclosure} or Disclosure(level) >= model.disclosure:
        return model
    return model.published(level)


def _attack(result: dict[str, Any], view: dict[str, Any] | None, threat: ThreatModel | None, target: Target) -> dict[str, Any]:
    names = result["summary"].get("value_names") or {}
    summary = _named(result["summary"], names)
    values = [names.get(str(v), str(v)) for v in result["values"]]
    persons = persons_of(result)
    summary = with_confidences(summary, persons, target.confidences)
    provenance = [g["provenance"] for g in result["groups"]]
    pairs = leaf_pairs_of(result)
    forest = pairs is not None and (view["kind"] == "forest" if view is not None else pairs.n_trees > 1)
    sources = text_sources(provenance) if pairs is None else leaf_sources(pairs, forest)
    description = summary.get("threat_model") or (threat.describe() if threat is not None else "")
    return {
        "name": f"{summary['attack']} attack on {summary['sensitive']!r}",
        "attack": summary["attack"],
        "sensitive": summary["sensitive"],
        "values": values,
        "quasi_identifiers": result["quasi_identifiers"],
        "threat": {**threat_sentences(description, threat, boosted(view)), "spec": threat.to_dict() if threat is not None else None},
        "summary": summary,
        "verdict": verdict(summary, target),
        "exposure": exposure_table(persons, sources, values, view),
        "leaf_sets": leaf_sets(persons, sources) if not forest else [],
        "groups": {
            "qi": [[g["qi"].get(q) for q in result["quasi_identifiers"]] for g in result["groups"]],
            "posterior": shown_posterior(persons.posterior).tolist(),
            "provenance": provenance,
            "leaf_pairs": None if pairs is None else _pairs_json(pairs, forest),
        },
        "people": _people(persons),
    }


#: The confidences the report's tables and figures count people at: a posterior rounded for the
#: page keeps its full value where rounding would move it across one of them.
COUNTED_AT = (1.0, 0.9, 0.8, 0.5)


def shown_posterior(posterior: np.ndarray, decimals: int = 6) -> np.ndarray:
    """The posterior rounded for the page, except where rounding would change whom it counts
    (0.9999996 is not certain: the page must not show it as 1, or its tables would count a
    proved person the verdict does not)."""
    shown = np.round(posterior, decimals)
    for t in COUNTED_AT:
        moved = at_least(shown, t) != at_least(posterior, t)
        shown[moved] = posterior[moved]
    return shown


def _named(summary: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """The summary with the sensitive values named as the data holds them (``value_names``,
    :mod:`ppdm.attacks.core.value_names`): the prior alone's guess and distribution."""
    base = summary.get("baseline")
    if not names or not isinstance(base, dict):
        return summary
    renamed = dict(base, majority_guess=names.get(str(base.get("majority_guess")), base.get("majority_guess")))
    if isinstance(base.get("prior"), dict):
        renamed["prior"] = {names.get(str(k), str(k)): v for k, v in base["prior"].items()}
    return {**summary, "baseline": renamed}


def with_confidences(summary: dict[str, Any], persons: Persons, levels: Sequence[float]) -> dict[str, Any]:
    """``summary`` with the people held at each confidence of ``levels`` (and those the prior alone
    holds there) counted from the per-person view when the audit's JSON did not count them (a
    target's ``confident`` level other than the summary's). Unchanged without the truth."""
    held = summary.get("confidence_in_true_value")
    missing = [at for at in levels if held is not None and key_of(at) not in held]
    confidence, prior = persons.confidence(), persons.prior_confidence()
    if not missing or confidence is None:
        return summary
    from ppdm.metrics.baseline import at_least

    out = {k: dict(v) if isinstance(v, dict) else v for k, v in summary.items()}
    for at in missing:
        attack = at_least(confidence, at) & persons.target
        alone = at_least(prior, at) & persons.target if prior is not None else np.zeros_like(attack)
        out["confidence_in_true_value"][key_of(at)] = int(attack.sum())
        out.setdefault("prior_alone", {})[key_of(at)] = int(alone.sum())
        out.setdefault("beyond_prior", {})[key_of(at)] = int((attack & ~alone).sum())
    return out


def _pairs_json(pairs: LeafPairs, forest: bool) -> dict[str, Any]:
    """The groups' (tree, leaf) pairs as columns: group ``g``'s are ``tree[offsets[g]:offsets[g+1]]``
    and ``leaf[...]``; ``tree`` is ``None`` for a single tree (its leaves are named "leaf 7")."""
    return {"offsets": pairs.offsets.tolist(), "tree": pairs.tree.tolist() if forest else None, "leaf": pairs.leaf.tolist()}


def _people(persons: Persons) -> dict[str, Any]:
    """Columns of the per-person table (row ids, groups, true values, whether a target)."""
    return {
        "row": persons.row.tolist(),
        "group": persons.group.tolist(),
        "truth": None if persons.truth is None else persons.truth.tolist(),
        "target": None if persons.target.all() else persons.target.astype(int).tolist(),
        "prior": None if persons.prior is None else persons.prior.tolist(),
    }


def frontier_of(frontier: Sequence[FrontierPoint] | dict[str, Any] | None, risk_name: str) -> dict[str, Any] | None:
    """The frontier as ``{"risk": name, "points": [{"accuracy", "risk", "label", "chosen"}]}``."""
    if frontier is None:
        return None
    if isinstance(frontier, dict):
        risk_name, frontier = str(frontier.get("risk", risk_name)), frontier.get("points", [])
    if not isinstance(frontier, (list, tuple)):
        raise ReportError(f"frontier points: expected a list of (accuracy, risk, label), got {type(frontier).__name__}")
    points, not_audited = [], []
    accuracy_on, held_out = None, None
    for i, p in enumerate(frontier):
        if isinstance(p, dict):
            accuracy_on = accuracy_on or p.get("accuracy_on")
            held_out = held_out or p.get("held_out")
            accuracy, risk, label, chosen = p.get("accuracy"), p.get("risk"), p.get("label", f"candidate {i}"), bool(p.get("chosen"))
            if accuracy is None and risk is None and p.get("status", "audited") != "audited":
                # a candidate the defense search could not audit (failed, or past its time budget):
                # listed apart, never plotted and never dropped silently
                not_audited.append({"label": str(label), "status": str(p["status"])})
                continue
            risk_name = str(p.get("risk_measure", risk_name))
        elif isinstance(p, (tuple, list)) and len(p) in (3, 4):
            accuracy, risk, label = p[0], p[1], p[2]
            chosen = bool(p[3]) if len(p) == 4 else False
        else:
            raise ReportError(f"frontier point {i}: expected (accuracy, risk, label) or a dict with those keys")
        if not all(finite_number(v) for v in (accuracy, risk)):
            raise ReportError(f"frontier point {i}: accuracy and risk must be numbers")
        acc, rk = float(accuracy), float(risk)
        if not 0 <= acc <= 1 or rk < 0:
            raise ReportError(f"frontier point {i}: accuracy {acc:g} must be from 0 to 1 and risk {rk:g} at least 0")
        points.append({"accuracy": acc, "risk": rk, "label": str(label), "chosen": chosen})
    return {"risk": risk_name, "points": points, "not_audited": not_audited, "accuracy": accuracy_label(accuracy_on), "held_out": held_out_words(held_out)}


def held_out_words(split: Any) -> str | None:
    """Which rows the search held out for accuracy, in a sentence (``None`` without a split)."""
    if not isinstance(split, dict) or not split.get("rows"):
        return None
    how = f"stratified by {split.get('by')!r}" if split.get("stratified") else "not stratified"
    again = "; the input model was fitted again on them" if split.get("refitted") else ""
    return (
        f"Accuracy held out: {split['rows']:,} of {split.get('of', 0):,} rows ({100 * float(split.get('share', 0)):g} %, {how}, seed "
        f"{split.get('seed')}); every candidate was fitted and audited on the other {split.get('training_rows', 0):,}{again}."
    )


def accuracy_label(accuracy_on: object) -> str:
    """What a frontier's accuracy is, in words: on the training rows it says so (it flatters a
    model that memorises them); on rows the search held out, or the test rows given, too."""
    return {"training": "training accuracy", "test": "test accuracy", "held-out": "held-out accuracy"}.get(str(accuracy_on), "accuracy")


def _title(attacks: list[dict[str, Any]]) -> str:
    sensitive = ", ".join(dict.fromkeys(repr(a["sensitive"]) for a in attacks))
    return f"What the published model discloses about {sensitive}"
