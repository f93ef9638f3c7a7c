"""A small Nursery table and a depth-3 ID3 tree on it: the fast case the display and progress tests share."""

from __future__ import annotations

import pandas as pd

from ppdm.data.datasets import load_dataset

FEATURES = ["parents", "has_nurs", "form", "children"]


def small_nursery(seed: int, rows: int = 400) -> pd.DataFrame:
    """``rows`` bundled Nursery records (``seed`` draws them): the four features and the class."""
    frame, _ = load_dataset("nursery")
    return frame.sample(rows, random_state=seed).reset_index(drop=True)[[*FEATURES, "class"]]


def small_tree(frame: pd.DataFrame):
    """A depth-3 ID3 tree predicting the class from the four features."""
    from ppdm.learn.estimators import ID3Classifier

    return ID3Classifier(max_depth=3).fit(frame[FEATURES], frame["class"]).tree_
