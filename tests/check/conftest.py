"""The checker's audit case: the shared small Nursery table and its depth-3 tree, audited."""

import pytest
from small_nursery import FEATURES, small_nursery, small_tree

import ppdm


@pytest.fixture(scope="session")
def report_audit():
    """``(tree, table, threat, result)``: the maximum-entropy audit of the small Nursery tree."""
    frame = small_nursery(0)
    tree = small_tree(frame)
    tree.class_attribute = "class"
    threat = ppdm.ThreatModel(sensitive="class", known=FEATURES)
    done = ppdm.audit(tree, frame, threat, progress=False)
    return tree, frame, threat, done.estimate
