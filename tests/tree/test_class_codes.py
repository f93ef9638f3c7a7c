"""Class counts that differ at a tree's root, where every row arrives, say the class codes: a
model file (XGBoost's, LightGBM's) names no class, the import reads code k as the k-th class in
sorted order, and a model fitted with 1 = '<=50K' was told to pass its rows "in the order the
model was fitted on", which no order could mend."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier
from small_nursery import FEATURES, small_nursery

from ppdm.errors import ModelImportError
from ppdm.tree import forest_from_sklearn
from ppdm.tree.forest_check import verify_counts


def test_other_class_counts_at_the_root_name_the_class_codes() -> None:
    frame = small_nursery(5, rows=300)
    frame = frame.assign(label=np.where(frame["class"] == "not_recom", "no", "yes"))
    est = RandomForestClassifier(n_estimators=2, max_depth=3, bootstrap=False, random_state=0).fit(pd.get_dummies(frame[FEATURES]), frame["label"])
    forest = forest_from_sklearn(est, frame[FEATURES], y=frame["label"])
    codes = pd.Index(forest.classes).get_indexer(frame["label"])
    assert verify_counts(forest, frame, codes) == 2
    with pytest.raises(ModelImportError, match=r"tree 0: the model records 300 training row\(s\) at its root, as the data hold, but other class counts: "
                       r"the import reads the model's class codes 0 as 'no', 1 as 'yes' \(the classes in sorted order\): if it was fitted on other codes"):
        verify_counts(forest, frame, 1 - codes)
