"""The output checker (issue 46): a TRE's risk-appetite policy, structural checks on any
classifier, and one recommendation per model (:func:`check_model`, ``ppdm check``).

Modules, one check each: :mod:`~ppdm.check.policy` (the policy file, its schema and presets),
:mod:`~ppdm.check.model` (reading any classifier), :mod:`~ppdm.check.scores` (a model known by
its predicted probabilities only), :mod:`~ppdm.check.findings` (a rule's answer
and its strength), :mod:`~ppdm.check.classes` (equivalence classes, zeros, small groups),
:mod:`~ppdm.check.dof` (residual degrees of freedom), :mod:`~ppdm.check.hyperparameters`,
:mod:`~ppdm.check.gap` (generalisation gap, the majority class), :mod:`~ppdm.check.audit_evidence`
(the audits' attribute and membership evidence), :mod:`~ppdm.check.blackbox_membership` and
:mod:`~ppdm.check.blackbox_attribute` (the black-box attacks on any classifier's outputs),
:mod:`~ppdm.check.recommend`,
:mod:`~ppdm.check.run` and :mod:`~ppdm.check.bundle` (the release folder).
"""

from ppdm.check.findings import Finding
from ppdm.check.policy import PRESETS, Policy, PolicyError, load_policy, read_policy
from ppdm.check.recommend import Recommendation
from ppdm.check.run import CheckResult, check_model

__all__ = ["PRESETS", "CheckResult", "Finding", "Policy", "PolicyError", "Recommendation", "check_model", "load_policy", "read_policy"]
