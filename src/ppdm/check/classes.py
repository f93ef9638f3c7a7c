"""Equivalence classes of the training records, and the checks that read them.

Records a model cannot tell apart form an equivalence class. The disclosure-control reading of a
model (SACRO-ML's structural attack; ACRO's rules for tables) treats each class as a cell of a
published table: a class smaller than the TRE's minimum cell count (``min_group_size``) is a
small cell (k-anonymity); a class in which some label has frequency zero discloses that none of
its members holds that label (``zeros_disclosive``: class disclosure); and a label held by
between 1 and ``min_group_size - 1`` members of a class is a small group.

Two readings, the finer one deciding:

* **structure** (the tree models ppdm reads white-box): an attacker holding every input routes a
  record to one leaf per tree, so records share a class when they share their leaf in every tree:
  the leaves of a tree, the spans of a forest or boosted model
  (:func:`ppdm.attacks.leaf.anonymity.model_anonymity` with every input known, paper 002 §2). The
  label counts are the records' own; a class is disclosed (zeros) when a leaf its records reach
  publishes a zero count of a label in some tree (what the model file holds, read exactly);
* **outputs** (any classifier): records with equal predicted-probability vectors (SACRO-ML's
  equivalence classes for models other than a single tree), label frequencies the probabilities
  times the class size, zeros the probabilities close to 0.

Equal spans give equal outputs, so the structural classes refine the output ones: never fewer,
never larger. Both are counted on the training table exactly, so their evidence is ``proved``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.check.findings import Finding
from ppdm.check.model import Checked
from ppdm.tree.model import Tree

__all__ = ["Classes", "class_checks", "output_classes", "structural_classes"]

#: Probabilities within this of 0 are zeros (numpy's ``isclose`` default, as SACRO-ML reads them).
ZERO = 1e-8


@dataclass(frozen=True)
class Classes:
    """Per record its class (``of``), per class its size and its label counts (``counts``,
    classes × labels; estimated from the probabilities for output classes), and which classes
    hold a zero (``zeros``). ``kind``: ``"leaves"``, ``"spans"`` or ``"outputs"``."""

    kind: str
    of: np.ndarray
    sizes: np.ndarray
    counts: np.ndarray
    zeros: np.ndarray

    @property
    def k(self) -> int:
        return int(self.sizes.min()) if len(self.sizes) else 0

    def people_in(self, flagged: np.ndarray) -> int:
        """How many records are in the flagged classes."""
        return int(self.sizes[flagged].sum())

    def summary(self, threshold: int) -> dict[str, int | str]:
        small = self.sizes < threshold
        groups = self.small_groups(threshold)
        return {
            "kind": self.kind, "classes": len(self.sizes), "k": self.k, "classes_below": int(small.sum()),
            "people_below": self.people_in(small), "classes_with_zeros": int(self.zeros.sum()),
            "people_with_zeros": self.people_in(self.zeros), "classes_with_small_groups": int(groups.sum()),
            "people_in_small_groups": self.people_in(groups),
        }  # fmt: skip

    def small_groups(self, threshold: int) -> np.ndarray:
        """Per class, whether some label is held by between 0 and ``threshold`` of its members (exclusive)."""
        return np.asarray(((self.counts > ZERO) & (self.counts < threshold - ZERO)).any(axis=1))


def output_classes(proba: np.ndarray) -> Classes:
    """Records with equal predicted-probability vectors (exactly equal: the same inputs give the
    same floats, and a rounding would merge classes SACRO-ML keeps apart)."""
    unique, of, sizes = np.unique(np.asarray(proba, dtype=float), axis=0, return_inverse=True, return_counts=True)
    of = np.asarray(of).reshape(-1)
    zeros = np.isclose(unique, 0.0, atol=ZERO).any(axis=1)
    return Classes("outputs", of, sizes, unique * sizes[:, None], zeros)


def structural_classes(model: Checked, data: pd.DataFrame) -> Classes | None:
    """The leaves (a tree) or spans (a forest, a boosted model) of the training records, with
    every input known; ``None`` without ppdm's white-box reading of the model.

    With every input known a record reaches one leaf per tree, so its span (paper 002
    Definition 4) is its row of leaves: the records' leaves, one column per (tree, leaf), are
    grouped by :func:`ppdm.attacks.leaf.anonymity.span_ids`, the linking attack's own grouping (the
    same classes as :func:`~ppdm.attacks.leaf.anonymity.model_anonymity` with every input public,
    without routing the unknown branches)."""
    ppdm_model = model.ppdm_model
    if ppdm_model is None or getattr(ppdm_model, "is_regressor", False):
        return None
    from ppdm.attacks.leaf.anonymity import span_ids

    leaves = np.asarray(ppdm_model.apply(data)).reshape(len(data), -1)
    trees = ppdm_model.trees
    offsets = np.cumsum([0, *(t.n_nodes for t in trees)])[:-1]
    columns = (leaves + offsets[None, :]).ravel()
    rows = np.repeat(np.arange(len(data)), leaves.shape[1])
    reach = sp.csr_matrix((np.ones(len(columns), dtype=np.int8), (rows, columns)), shape=(len(data), int(sum(t.n_nodes for t in trees))))
    reach.sort_indices()
    _, of = np.unique(span_ids(reach), return_inverse=True)
    of = np.asarray(of).reshape(-1)
    sizes = np.bincount(of)
    truth = model.truth(data)
    k = len(model.classes())
    known = truth >= 0
    counts = np.bincount(of[known] * k + truth[known], minlength=len(sizes) * k).reshape(len(sizes), k).astype(float)
    zeros = np.zeros(len(sizes), dtype=bool)
    np.logical_or.at(zeros, of, _zero_leaves(trees, leaves))
    return Classes("leaves" if isinstance(ppdm_model, Tree) else "spans", of, sizes, counts, zeros)


def _zero_leaves(trees: list[Tree], leaves: np.ndarray) -> np.ndarray:
    """Per record, whether a leaf it lands in publishes a zero count of some label (in any tree)."""
    out = np.zeros(len(leaves), dtype=bool)
    for t, tree in enumerate(trees):
        zero = np.zeros(tree.n_nodes, dtype=np.bool_)
        for node in tree.leaves():
            if node.counts is not None and float(np.sum(node.counts)) > 0:
                zero[node.id] = bool((np.asarray(node.counts) <= ZERO).any())
        out |= zero[leaves[:, t]]
    return out


def class_checks(classes: Classes, outputs: Classes | None, threshold: int, zeros_disclosive: bool) -> list[Finding]:
    """The three findings the classes give: ``min_group_size``, ``class_disclosure``, ``small_groups``."""
    where = f"{len(classes.sizes):,} {classes.kind}"
    beside = ""
    if outputs is not None and outputs is not classes:
        s = outputs.summary(threshold)
        beside = f"; by equal outputs alone {s['classes']:,} classes, the smallest {s['k']:,}"
    small = classes.sizes < threshold
    out = [Finding(
        "min_group_size", "failed" if small.any() else "passed", float(classes.k), float(threshold), "proved",
        f"the smallest of {where} holds {classes.k:,} training records ({int(small.sum()):,} classes, "
        f"{classes.people_in(small):,} records below {threshold}){beside}", classes.people_in(small),
    )]
    zeros = classes.zeros
    if zeros_disclosive:
        out.append(Finding(
            "class_disclosure", "failed" if zeros.any() else "passed", float(classes.people_in(zeros)), 0.0, "proved",
            f"{int(zeros.sum()):,} of {where} give some label probability zero: their {classes.people_in(zeros):,} records are "
            "each known not to hold it", classes.people_in(zeros),
        ))
    else:
        out.append(Finding("class_disclosure", "passed", None, None, "proved", "zeros are not disclosive under this policy"))
    groups = classes.small_groups(threshold)
    out.append(Finding(
        "small_groups", "failed" if groups.any() else "passed", float(classes.people_in(groups)), 0.0, "proved",
        f"{int(groups.sum()):,} of {where} hold a label that fewer than {threshold} of their records have "
        f"({classes.people_in(groups):,} records)", classes.people_in(groups),
    ))
    return out
