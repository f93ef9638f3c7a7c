"""The defense search's candidates that no audit measured, in words a reader can act on.

An ε-differentially private candidate (:mod:`ppdm.learn.dp_tree`, :mod:`ppdm.learn.dp_forest`)
publishes counts with noise added, so they contradict the training table: the maximum-entropy
estimate and the proof read counts as exact, and the attack that reads a leaf's classes applies
only when the sensitive column is the class (:mod:`ppdm.defend.audits`). The search then records
"no audit applies"; the report and ``ppdm defend`` say once why, and what to do instead, rather
than repeating the bare status for every ε and depth.
"""

from __future__ import annotations

from collections.abc import Iterable

#: Why an ε-DP candidate has no audit (the search's status holds "no audit applies").
NOISY = (
    "not audited, so not plotted: {which}. An ε-differentially private model publishes counts with noise added, so its "
    "counts contradict the training table; ppdm's estimate and proof read counts as exact, and the attack that reads a "
    "leaf's classes as published applies only when the sensitive column is the class. No audit here measures these "
    "candidates: their protection is the ε guarantee itself (the smaller ε, the more noise and the less accuracy). "
    "Choose one on its ε and its accuracy, or audit it with the class as the sensitive column."
)


def is_noisy(status: str) -> bool:
    """The search could not audit the candidate because its counts are noisy."""
    return "no audit applies" in status


def noisy_sentence(labels: Iterable[str]) -> str:
    """One sentence for every ε-DP candidate left unaudited (see the module docstring)."""
    text = NOISY.format(which="; ".join(labels))
    return text[0].upper() + text[1:]
