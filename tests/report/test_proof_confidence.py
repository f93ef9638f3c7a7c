"""The exact audit proves who is certain; its posterior (the midpoint of each value's proved
counts) is no attacker's belief, so it measures no confidence: a target's ``confident`` measure
on a proof alone cannot be checked and the record does not release (an exact-only audit once
printed "release" for ``confident=2%@0.5`` where the estimate found 4.5 %)."""

from __future__ import annotations

from small_nursery import FEATURES, small_nursery, small_tree

import ppdm
from ppdm.pipeline.options import AuditOptions


def test_a_proof_alone_does_not_check_a_confidence_measure() -> None:
    frame = small_nursery(2)
    audit = ppdm.audit(small_tree(frame), frame, ppdm.ThreatModel(known=tuple(FEATURES[:2])), exact=True,
                       options=AuditOptions(estimate=False), target="certain=1000,confident=99%@0.5", progress=False)  # fmt: skip
    assert audit.estimate is None and audit.proved is not None
    line = next(line for line in str(audit).splitlines() if "Target" in line)
    assert "cannot be checked: confident not measured by this audit (the exact audit proves who is certain" in line
    record = audit.release_record()
    assert record["decision"] == "do not release" and "confident not measured" in record["reasons"][0]
