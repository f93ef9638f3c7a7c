"""The model's answer about each person, as a restriction on the leaves the person can reach.

An attacker who sees the deployed model's output about a target (``ThreatModel.outputs``; the
setting of Fredrikson et al., CCS 2015, and of IBM ART's attribute inference attacks) learns which
completions of the target's unknown columns are possible: only those whose leaves give that
output. A single tree's output is a function of the leaf (its label, or its class frequencies as
the score); a forest's of the joint leaf (the trees' votes, mean frequencies, or summed leaf
values through the link). So in the attacker's table (a group of known values × the leaves or
joint leaves it can reach) the output is one more known column of each person, and every
(group, leaf) pair whose leaf answers otherwise is dropped: a constraint on each person's
reachable leaves that both solvers then read.

Scores are compared as the 32-bit floats a published score carries: two leaves whose scores agree
to float32 are indistinguishable to the attacker, and the same leaves always give the same bits
(one function computes the records' answers and the pairs'), so the truth stays feasible.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import scipy.sparse as sp

from ppdm.errors import DataError
from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree

__all__ = ["OUTPUT_KEY", "answering", "leaf_answers", "record_answers", "same_answer", "unique_codes"]

#: The grouping column that holds each person's answer while the attacker's table is built.
OUTPUT_KEY = "__ppdm_output__"


def leaf_answers(model: Tree | Forest, leaves: np.ndarray, kind: str) -> np.ndarray:
    """The answer given at each row of ``leaves`` (rows × trees; a tree's leaf node ids in one
    column), as integer keys (rows × width) that are equal exactly when the answers are:
    ``kind="label"`` the predicted class index, ``"score"`` the float32 bits of each class score."""
    leaves = np.asarray(leaves, dtype=np.intp).reshape(len(leaves), -1)
    if kind == "label":
        return _labels(model, leaves)[:, None].astype(np.int64)
    scores = _scores(model, leaves).astype(np.float32)
    return np.ascontiguousarray(scores).view(np.int32).astype(np.int64)


def record_answers(model: Tree | Forest, data: pd.DataFrame, kind: str) -> np.ndarray:
    """Each record's answer key (:func:`leaf_answers`) from its own values; ``data`` must hold
    every input of the model."""
    missing = [c for c in model.split_attributes if c not in data.columns]
    if missing:
        raise DataError(
            f"the attacker sees the model's {kind} for each person, which the model computes from its inputs: "
            f"column {missing[0]!r} is missing from the data"
        )
    leaves = model.apply(data)
    return leaf_answers(model, leaves, kind)


def same_answer(pair_keys: np.ndarray, person_keys: np.ndarray) -> np.ndarray:
    """Per pair, whether its leaves' answer (``pair_keys``) is the person's (``person_keys``,
    aligned with the pairs)."""
    return np.asarray((pair_keys == person_keys).all(axis=1))


def answering(reach: sp.csr_matrix, column_keys: np.ndarray, row_keys: np.ndarray) -> sp.csr_matrix:
    """``reach`` (groups × leaves, 0/1) without the pairs whose leaf answers otherwise than the
    group: ``column_keys`` per column, ``row_keys`` per row (:func:`leaf_answers`)."""
    coo = reach.tocoo()
    keep = same_answer(column_keys[coo.col], row_keys[coo.row])
    kept = sp.csr_matrix((coo.data[keep], (coo.row[keep], coo.col[keep])), shape=reach.shape)
    kept.sort_indices()
    return kept


def unique_codes(keys: np.ndarray) -> np.ndarray:
    """Each row's index among the distinct rows of ``keys``: the answer as a grouping column."""
    return np.unique(keys, axis=0, return_inverse=True)[1].ravel()


def _labels(model: Tree | Forest, leaves: np.ndarray) -> np.ndarray:
    if isinstance(model, Tree):
        return model.leaf_labels()[leaves[:, 0]]
    return model.labels_of_leaves(leaves)


def _scores(model: Tree | Forest, leaves: np.ndarray) -> np.ndarray:
    if isinstance(model, Tree):
        return model.leaf_distributions()[leaves[:, 0]]
    return model.proba_of_leaves(leaves)
