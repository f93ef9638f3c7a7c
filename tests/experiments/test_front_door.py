"""The experiments audit through the one front door (issue 40): none imports an attack function
that ``ppdm.audit`` runs as one of its steps; each that audits a model calls ``ppdm.audit``.
Not audits, so left as they are: paper 002's k-anonymity of a learner's tree
(``model_anonymity``), paper 001's randomized response, and the worked Example 1 of paper 000 on
the problem's own rows (``experiments/maxent_tree.py``)."""

from __future__ import annotations

import ast
from pathlib import Path

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"

#: The attack functions ``ppdm.audit`` runs as its steps (the estimate, the proof, the leaf attacks, the rule sets).
STEPS = {
    "maxent_attack", "forest_maxent_attack", "pooled_forest_attack", "possible_attack", "exact_attack",
    "rules_attack", "homogeneity_attack", "uniqueness_attack", "background_knowledge_attack", "reconstruction_attack",
}  # fmt: skip

#: The experiments that measure something other than an audit.
NOT_AUDITS = {"kanonymity", "randomized_response"}


def _imported(tree: ast.Module) -> set[str]:
    return {alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names}


def _calls_audit(tree: ast.Module) -> bool:
    """Whether the script calls ``ppdm.audit(...)`` or ``audit(...)`` imported from ``ppdm``."""
    from_ppdm = any(isinstance(n, ast.ImportFrom) and n.module == "ppdm" and any(a.name == "audit" for a in n.names) for n in ast.walk(tree))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr == "audit" and isinstance(f.value, ast.Name) and f.value.id == "ppdm":
                return True
            if from_ppdm and isinstance(f, ast.Name) and f.id == "audit":
                return True
    return False


def test_every_experiment_audits_through_ppdm_audit() -> None:
    scripts = sorted(EXPERIMENTS.glob("*.py"))
    assert len(scripts) >= 12
    for script in scripts:
        tree = ast.parse(script.read_text(encoding="utf-8"))
        direct = _imported(tree) & STEPS
        assert not direct, f"{script.name} imports {sorted(direct)}: audit through ppdm.audit"
        audits = _calls_audit(tree)
        assert audits != (script.stem in NOT_AUDITS), f"{script.name}: {'calls' if audits else 'does not call'} ppdm.audit"
