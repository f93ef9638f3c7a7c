"""``AuditOptions.baselines`` (habits 2 and 3): by default an attribute's estimate is measured
against the simpler attackers and the strongest is reported; ``baselines=False`` reports the
method's estimate as it computed it (what the paper reproductions under ``experiments/`` compare
with the papers' figures), the same posteriors as the estimate's own function."""

from __future__ import annotations

import numpy as np
import pytest

import ppdm
from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.maxent import maxent_attack
from ppdm.errors import PpdmError
from ppdm.pipeline.options import AuditOptions

from oracles import sklearn_tree


@pytest.fixture(scope="module")
def nursery_tree(nursery):
    frame, roles = nursery
    table = frame.sample(2_000, random_state=1).reset_index(drop=True)
    features = [c for c in table.columns if c != roles.class_attribute]
    return table, features, sklearn_tree(table, features, roles.class_attribute, 4)


def test_the_estimate_alone_is_the_estimates_own(nursery_tree) -> None:
    table, features, tree = nursery_tree
    threat = ThreatModel(known=tuple(features[:4]))
    alone = ppdm.audit(tree, table, threat, options=AuditOptions(baselines=False), progress=False)
    direct = maxent_attack(tree, table, threat=threat)
    assert alone.estimate is not None
    np.testing.assert_array_equal(alone.estimate.posterior, direct.posterior)
    assert "portfolio" not in alone.estimate.details and "reported_attacker" not in alone.estimate.details
    reported = ppdm.audit(tree, table, threat, progress=False)  # the default: the strongest attacker measured
    assert reported.estimate is not None and alone.estimate.attack in reported.estimate.details["portfolio"]
    assert reported.summary()["attacker_accuracy"] >= alone.summary()["attacker_accuracy"]


def test_a_reference_needs_the_baselines(nursery_tree) -> None:
    table, features, tree = nursery_tree
    with pytest.raises(PpdmError, match="baselines=True"):
        ppdm.audit(tree, table, ThreatModel(known=tuple(features[:4])), reference=table, options=AuditOptions(baselines=False), progress=False)


def test_baselines_is_a_flag() -> None:
    with pytest.raises(PpdmError, match="baselines"):
        AuditOptions(baselines="no")  # type: ignore[arg-type]
