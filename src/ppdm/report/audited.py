"""What was audited, stated before any verdict: the model and how much of it the audit read, the
rows, the attacker, and the target the verdict judges against.

A verdict means nothing without its scope: "target met" on one of a hundred boosting rounds, or on
a sample of the training rows, is a lower bound, and the reader must see that first. Everything
here is read from the report's own data (the model's view, each attack's summary, which carries
what the audit read, ``scope`` (:class:`~ppdm.attacks.core.scope.Scope`, stated once for the printout,
the JSON and the release record too), ``sample``, ``reference``), so a report made from a saved
audit says the same.
"""

from __future__ import annotations

from typing import Any

from ppdm.attacks.core.scope import DROPPED_BOUND, summary_scope
from ppdm.report import words
from ppdm.report.threat_words import publish_words

#: A library's model family in words (the model's ``algorithm``, by prefix).
FAMILIES = {
    "sklearn-random-forest": "scikit-learn random forest",
    "sklearn-extra-trees": "scikit-learn extra trees",
    "sklearn-gradient-boosting": "scikit-learn gradient boosting",
    "sklearn-hist-gradient-boosting": "scikit-learn histogram gradient boosting",
    "sklearn": "scikit-learn decision tree",
    "xgboost": "XGBoost boosted trees",
    "lightgbm": "LightGBM boosted trees",
}

_COMBINE = {
    "vote": "the trees vote",
    "mean-proba": "the trees' class frequencies are averaged",
    "additive": "the trees' leaf values are added",
    "mean": "the trees' leaf values are averaged",
}


def audited_facts(
    view: dict[str, Any] | None, attacks: list[dict[str, Any]], membership: dict[str, Any] | None, target: str,
) -> list[dict[str, str]]:
    """The first card's lines, each ``{"label", "text"}``: model, trees or rounds, rows, threat
    model, target (membership: the candidates instead of the rows and attacker)."""
    published = (membership or {}).get("published")
    facts = [{"label": "model", "text": published if view is None and published else model_words(view)}]
    summary = attacks[0]["summary"] if attacks else (membership or {}).get("summary", {})
    trees = trees_words(view, summary) if summary.get("white_box", True) else str(summary.get("trees_used", ""))
    if trees:
        facts.append({"label": _trees_label(summary), "text": trees})
    if attacks:
        facts.append({"label": "rows", "text": rows_words(view, summary)})
        facts.extend(threat_facts(attacks[0], view))
    if membership is not None:
        s = membership["summary"]
        among = f"{s['published_members']:,} of them" if s.get("complete", True) else f"some of the {s['published_members']:,}"
        counted = f", {among} training records by the model's counts" if s.get("white_box", True) else " (the model publishes no training count)"
        facts.append({"label": "candidates", "text": f"{words.people(s['candidates'])}{counted}"})
        facts.append({"label": "question", "text": f"was each candidate in the training set? ({s.get('threat', 'the attacker holds each candidate’s record')})"})
        if s.get("trees_used") and attacks:  # alone, the membership audit's scope is the trees line above
            facts.append({"label": "counts read" if published else "trees read", "text": str(s["trees_used"])})
    own = (membership or {}).get("target", {})  # a membership audit alone: its own target, in words as everywhere else
    facts.append({"label": "target", "text": target if attacks else own.get("describe", own.get("text", target))})
    return facts


def _trees_label(summary: dict[str, Any]) -> str:
    scope = summary_scope(summary)
    if scope is None:
        return "trees"
    return "rounds" if scope.per_round is not None else f"{scope.unit}s"


def model_words(view: dict[str, Any] | None) -> str:
    """``XGBoost boosted trees predicting 'loan': 20 trees, the trees' leaf values are added
    (logistic link); publishing leaf values (…)``; a tree's size; "not given" without the model."""
    if view is None:
        return "not given to the report: leaves are named, not shown"
    algorithm = str(view.get("algorithm") or view["kind"])
    family = next((words for prefix, words in FAMILIES.items() if algorithm.startswith(prefix)), algorithm)
    trees = view["trees"]
    if view["kind"] == "tree":
        t = trees[0]
        size = f"{t['nodes']:,} nodes, {t['leaves']:,} leaves, depth {t['depth']}"
    else:
        how = _COMBINE.get(str(view.get("combine")), str(view.get("combine")))
        link = f" ({view['link']} link)" if view.get("link") and view.get("combine") == "additive" else ""
        size = f"{words.trees(len(trees))}, {sum(t['leaves'] for t in trees):,} leaves; {how}{link}"
    return f"{family} predicting {view['class_attribute']!r}: {size}; publishing {_published(view)}"


def boosted(view: dict[str, Any] | None) -> bool:
    """Whether the model ``view`` describes adds its trees' leaf values (boosting rounds)."""
    return view is not None and view.get("combine") == "additive"


def _published(view: dict[str, Any]) -> str:
    """What the model publishes: its disclosure level, or for boosted trees their leaf values, of
    which the first round's give class counts (later rounds' leaves hold values, not counts)."""
    if boosted(view) and view["disclosure"] == "class-counts":
        return "leaf values (with covers or row counts where the library stores them; the first round's give class-counts)"
    return str(view["disclosure"])


def trees_words(view: dict[str, Any] | None, summary: dict[str, Any]) -> str:
    """How many trees (boosting rounds) the audit read of how many, and why it left any out: the
    summary's :class:`~ppdm.attacks.core.scope.Scope` in words (a summary without one: the model's trees)."""
    scope = summary_scope(summary)
    if scope is not None:
        return scope.sentence()
    if view is not None and view["kind"] == "forest":
        return f"all {words.trees(len(view['trees']))} read."
    return ""


def rows_words(view: dict[str, Any] | None, summary: dict[str, Any]) -> str:
    """The rows audited, of how many the model was trained on; those left out and why."""
    records = summary.get("records", 0)
    trained = (view or {}).get("training_rows")
    scope = summary_scope(summary)
    dropped = scope.dropped_rows if scope is not None else 0
    text = f"{records:,} rows audited"
    if trained is not None:
        text += f", of the {trained:,.0f} the model was trained on"
    else:
        text += " (the model does not publish how many rows it was trained on)"
    if dropped:
        text += f"; {dropped:,} more left out for missing values{DROPPED_BOUND}"
    targets = summary.get("targets", records)
    if targets != records:
        text += f"; {records - targets:,} of them known individuals, not targets"
    if summary.get("sample"):
        text += f". {summary['sample']}"
    return text


def threat_facts(attack: dict[str, Any], view: dict[str, Any] | None = None) -> list[dict[str, str]]:
    """The attacker: what they know, what they want, what they see, the model-free attacker
    (``view``: the model's, whose boosting rounds publish leaf values)."""
    spec = attack["threat"].get("spec") or {}
    line = str(attack["threat"]["line"])
    known = ", ".join(attack["quasi_identifiers"]) or "no column"
    preset = attack["threat"].get("preset")
    out = [{"label": "attacker", "text": f"{preset + ' preset: ' if preset else ''}knows, of every person audited: {known}"}]
    values = ", ".join(attack["values"])
    out.append({"label": "sensitive", "text": f"{attack['sensitive']!r} (values {values})"})
    publish = spec.get("publish") or _clause(line, "model publishes ")
    sees = publish_words(str(publish), boosted(view)) if publish else "the published model"
    outputs = spec.get("outputs") or _clause(line, "sees each person's predicted ")
    if outputs:
        sees += f"; and each person's predicted {outputs}"
    out.append({"label": "published", "text": sees})
    alone = attack["summary"].get("data_alone")
    if alone:
        out.append({"label": "the data alone", "text": alone[0].upper() + alone[1:]})
    reference = attack["summary"].get("reference")
    if reference:
        out.append({"label": "reference", "text": f"a model-free attacker ({reference.get('model', 'imputation')}) fitted on a reference sample of the population, measured beside the model's"})
    return out


def _clause(line: str, head: str) -> str | None:
    for clause in line.partition(": ")[2].split("; "):
        if clause.startswith(head):
            return clause[len(head) :]
    return None
