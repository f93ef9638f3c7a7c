"""The threat model in words: who the attacker is, what they know, what they want, what is published.

Made from the one-line description every audit carries (:meth:`ThreatModel.describe`, resolved
against the data when the audit ran) and, when given, the declared :class:`ThreatModel` (its
preset's story from :data:`ppdm.attacks.core.threat.PRESETS`).
"""

from __future__ import annotations

import re

from ppdm.attacks.core.threat import PRESETS, ThreatModel

_PUBLISH = {
    "labels": "only the predicted class of each leaf",
    "error-rates": "each leaf's predicted class, number of training rows and number of misclassified rows",
    "class-counts": "each leaf's number of training rows of every class",
}

#: What a boosted model publishes at ``class-counts``: its later rounds' leaves hold values, not counts.
_BOOSTED_PUBLISH = (
    "each round's leaf values (with covers or row counts where the library stores them); the first round's give each "
    "leaf's number of training rows of every class"
)


def publish_words(level: str, boosted: bool = False) -> str:
    """What a model publishing at ``level`` reveals, in words (a boosted model's own words at ``class-counts``)."""
    if boosted and level == "class-counts":
        return _BOOSTED_PUBLISH
    return _PUBLISH.get(level, level)


_CLAUSES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^attacker knows no column$"), "The attacker knows none of the table's columns, only the published model."),
    (re.compile(r"^attacker knows (.+)$"), "The attacker knows, for every person in the training data, their {0}."),
    (re.compile(r"^class known$"), "They also know each person's class (the value the model predicts)."),
    (re.compile(r"^class unknown$"), "They do not know each person's class (the value the model predicts)."),
    (re.compile(r"^wants '(.+)'$"), "They want to learn each person's {0!r}, the sensitive column."),
    (re.compile(r"^model publishes (.+)$"), "The published model reveals {publish}."),
    (re.compile(r"^sensitive distribution published$"), "How often each sensitive value occurs in the table is known to them (it is in census tables)."),
    (re.compile(r"^([\d,]+) individuals fully known$"), "They already hold the full records of {0} people, who are not counted as targets."),
]


def threat_sentences(description: str, threat: ThreatModel | None = None, boosted: bool = False) -> dict[str, object]:
    """``{"line": the one-line description, "preset": its name, "story": the preset's story,
    "sentences": [...]}`` for a description such as ``"threat model 'census': attacker knows
    age, sex; class unknown; wants 'marital-status'; model publishes error-rates"``
    (``boosted``: the model's trees are boosting rounds, :func:`publish_words`)."""
    head, _, body = description.partition(": ")
    preset_match = re.search(r"'([^']+)'", head)
    preset = preset_match.group(1) if preset_match else (threat.preset if threat is not None else None)
    sentences = [_sentence(clause, boosted) for clause in body.split("; ") if clause]
    return {
        "line": description,
        "preset": preset,
        "story": PRESETS.get(preset or "", None),
        "sentences": sentences,
    }


def _sentence(clause: str, boosted: bool = False) -> str:
    for pattern, text in _CLAUSES:
        m = pattern.match(clause)
        if m:
            publish = publish_words(m.group(1), boosted) if "publish" in text else ""
            return text.format(*m.groups(), publish=publish)
    return clause[0].upper() + clause[1:] + "."
