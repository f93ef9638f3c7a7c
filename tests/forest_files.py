"""Model files the CLI tests of forests share (imported through pytest's ``pythonpath``)."""

from __future__ import annotations

NURSERY_FEATURES = ["parents", "has_nurs", "form", "children", "housing", "finance", "social", "health"]


def nursery_forest_files(root, rows: int, trees: int, depth: int):  # type: ignore[no-untyped-def]
    """Write ``rows`` Nursery rows as ``root/train.csv`` and a bootstrap scikit-learn random forest
    of them as ``root/forest.json``; return the table as the CLI reads it and the one-hot inputs."""
    import pandas as pd
    from sklearn.ensemble import RandomForestClassifier

    from ppdm.data.datasets import load_nursery
    from ppdm.tree import forest_from_sklearn, save_forest

    frame, _ = load_nursery()
    frame = frame.sample(rows, random_state=0).reset_index(drop=True)
    frame["class"] = frame["class"].cat.remove_unused_categories()
    frame.to_csv(root / "train.csv", index=False)
    frame = pd.read_csv(root / "train.csv")  # the table exactly as the CLI reads it
    X, y = frame[NURSERY_FEATURES], frame["class"]
    D = pd.get_dummies(X).astype(float)
    rf = RandomForestClassifier(trees, max_depth=depth, random_state=0, n_jobs=1).fit(D, y)
    save_forest(forest_from_sklearn(rf, X, y=y), root / "forest.json")
    return frame, D
