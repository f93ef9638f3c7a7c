#!/usr/bin/env python
"""Reproduce paper 003 (Wakabayashi et al., ICISSP 2024), §3.2 and §4.2, with ppdm.

Tables 5 and 6: scikit-learn trees of depth 3–7 trained on 80 % of Nursery, Loan (Bank Personal
Loan Modelling) and Adult, averaged over repetitions; the published tree (class counts per leaf)
is audited with ``ppdm.audit`` (its leaf attacks, ``AuditOptions(leaf=LeafOptions(...))``):

* Table 5: leaves holding a single training record (uniqueness attack);
* Table 6: N_ℓ leaves whose counts show one class, and the N_u training records they hold
  (homogeneity attack).

Table 7 and Figure 7: at depth 7, the pruning defenses of §4.1 (``ppdm.defend``: Method 1
``remove_small_leaves``, Method 2 ``collapse_small_children``) for s ∈ {5, 10, 20, 30, 40, 50}:
single-record leaves (U), N_u and N_ℓ, and test accuracy of the pruned ppdm tree.

Run from the repository root::

    PYTHONPATH=src python experiments/attacks_pruning.py            # 10 repetitions
    PYTHONPATH=src python experiments/attacks_pruning.py --repeats 1 --depths 3 7

Two encodings of the categorical attributes for scikit-learn (``--encodings``, both by default):

* ``onehot``: ``pd.get_dummies(X_train)``;
* ``ordinal``: one integer column per attribute, the codes following the values' natural order
  (Nursery's ordered scales as listed in ``nursery.names``; Loan's integer values), else
  alphabetical (Adult, as ``LabelEncoder`` / ``OrdinalEncoder`` would). With it Nursery's
  Tables 6 and 7 come out exactly as in the paper.

Writes ``results.json``, ``tables.md`` (our numbers next to the paper's) and ``figure7.png``
into ``--out`` (default ``docs/attacks_pruning``). See ``docs/attacks_pruning.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import sklearn
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

REPO = Path(__file__).resolve().parents[1]
try:  # run with ppdm installed or PYTHONPATH=src; else fall back to the checkout's src/
    import ppdm  # noqa: F401
except ImportError:  # pragma: no cover
    sys.path.insert(0, str(REPO / "src"))

from ppdm import AuditOptions, audit  # noqa: E402
from ppdm.attacks import homogeneous_leaves, single_record_leaves  # noqa: E402
from ppdm.attacks.core.result import AttackResult  # noqa: E402
from ppdm.data.datasets import load_adult, load_bank_loan, load_nursery  # noqa: E402
from ppdm.defend import collapse_small_children, remove_small_leaves  # noqa: E402
from ppdm.pipeline.options import LeafOptions  # noqa: E402
from ppdm.tree import Tree, tree_from_sklearn  # noqa: E402

DEFAULT_LOAN = REPO.parent / "shared" / "datasets" / "bank_loan" / "Bank_Personal_Loan_Modelling.csv"
DEFAULT_OUT = REPO / "docs" / "attacks_pruning"
DATASETS = ("nursery", "loan", "adult")
TITLES = {"nursery": "Nursery", "loan": "Loan", "adult": "Adult"}
S_GRID = (5, 10, 20, 30, 40, 50)
METHODS = {"method1": remove_small_leaves, "method2": collapse_small_children}
METHOD_TITLES = {"method1": "Method 1 (remove leaves with n ≤ s)", "method2": "Method 2 (parent of a child with n ≤ s becomes a leaf)"}

# --------------------------------------------------------------------------------------------
# The paper's numbers (transcribed from the text of paper 003, Tables 5–7)
# --------------------------------------------------------------------------------------------

PAPER_TABLE5 = {  # single-record leaves, by depth
    "nursery": {3: 0, 4: 0, 5: 0, 6: 0, 7: 0},
    "loan": {3: 0, 4: 0, 5: 0, 6: 3.7, 7: 6},
    "adult": {3: 0, 4: 0.5, 5: 1.8, 6: 5.1, 7: 11},
}
PAPER_TABLE6 = {  # (N_ℓ, N_u), by depth
    "nursery": {3: (1, 3448), 4: (1, 3448), 5: (3, 5057), 6: (11.2, 6822), 7: (24, 7863)},
    "loan": {3: (3.8, 3653), 4: (4.8, 3303), 5: (7.9, 3729), 6: (16.7, 3746), 7: (27, 3837)},
    "adult": {3: (0.3, 0.7), 4: (2.4, 210), 5: (7.3, 830), 6: (19, 1623), 7: (34.4, 1918)},
}
# Table 7 rows: s -> (U, H N_u, H N_ℓ, ACC); "original" is the unpruned depth-7 tree
PAPER_TABLE7 = {
    "method1": {
        "nursery": {
            "original": (0, 7863.9, 24, 0.9370), 5: (0, 7863, 24, 0.9370), 10: (0, 7863, 24, 0.9370),
            20: (0, 7863, 24, 0.9370), 30: (0, 7861, 23.9, 0.9363), 40: (0, 7777, 21.7, 0.9333),
            50: (0, 7696, 19.8, 0.9324),
        },
        "loan": {
            "original": (6, 3837, 27, 0.9809), 5: (0, 3803.5, 11, 0.9815), 10: (0, 3784.5, 8.5, 0.9599),
            20: (0, 3752.3, 6.1, 0.9469), 30: (0, 3743.7, 5.8, 0.9294), 40: (0, 3711.8, 4.9, 0.9294),
            50: (0, 3684.5, 4.3, 0.9277),
        },
        "adult": {
            "original": (11, 1918.9, 34.4, 0.8545), 5: (0, 1881.5, 14.7, 0.8120), 10: (0, 1854.3, 11.4, 0.8072),
            20: (0, 1811.5, 8.6, 0.7954), 30: (0, 1750, 6.1, 0.7926), 40: (0, 1735.9, 5.7, 0.7921),
            50: (0, 1693.7, 4.8, 0.7900),
        },
    },
    "method2": {
        "nursery": {
            "original": (0, 7863.9, 24, 0.9370), 5: (0, 7863.9, 24, 0.9370), 10: (0, 7860.2, 23.9, 0.9370),
            20: (0, 7654, 19.6, 0.9373), 30: (0, 7601.5, 18.5, 0.9363), 40: (0, 7571.1, 17.7, 0.9355),
            50: (0, 7528.5, 17.3, 0.9348),
        },
        "loan": {
            "original": (6.7, 3838.3, 27, 0.9810), 5: (0, 3763.9, 7.8, 0.9813), 10: (0, 3648.2, 5.5, 0.9820),
            20: (0, 3555.5, 3.9, 0.9809), 30: (0, 3169.5, 3.1, 0.9792), 40: (0, 3159.1, 2.9, 0.9791),
            50: (0, 3108, 2.7, 0.9774),
        },
        "adult": {
            "original": (11, 1918.9, 34.4, 0.8544), 5: (0, 1269.1, 10, 0.8548), 10: (0, 673.1, 3.5, 0.8542),
            20: (0, 673.1, 3.5, 0.8535), 30: (0, 652, 2.6, 0.8535), 40: (0, 676.1, 2.2, 0.8530),
            50: (0, 551.7, 1.2, 0.8527),
        },
    },
}
PAPER_DATASETS = {  # records, features (§3.2)
    "nursery": (12960, 8),
    "loan": (5000, 12),
    "adult": (48842, 14),
}
TABLE7_FIELDS = ("U", "N_u", "N_l", "accuracy")
ENCODINGS = ("onehot", "ordinal")
ENCODING_TITLES = {"onehot": "one-hot", "ordinal": "ordinal"}
# The natural order of Nursery's values (nursery.names; also their order of first appearance in
# nursery.data, which enumerates the Cartesian product). ppdm's loader sorts them alphabetically.
NURSERY_ORDER = {
    "parents": ("usual", "pretentious", "great_pret"),
    "has_nurs": ("proper", "less_proper", "improper", "critical", "very_crit"),
    "form": ("complete", "completed", "incomplete", "foster"),
    "children": ("1", "2", "3", "more"),
    "housing": ("convenient", "less_conv", "critical"),
    "finance": ("convenient", "inconv"),
    "social": ("nonprob", "slightly_prob", "problematic"),
    "health": ("recommended", "priority", "not_recom"),
}

# --------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------


def load(name: str, loan_path: Path, adult_missing: str) -> tuple[pd.DataFrame, pd.Series, dict[str, Any]] | None:
    """``(X, y, info)`` for one dataset (X = the quasi-identifier columns); None if unavailable.

    ``info["ordinal_order"]`` gives, per categorical column, the value order of its ordinal codes.
    """
    note = ""
    if name == "nursery":
        frame, roles = load_nursery()
    elif name == "loan":
        if not loan_path.is_file():
            return None
        frame, roles = load_bank_loan(loan_path)
    elif name == "adult":
        # The paper's 48,842 records are adult.data + adult.test.
        if adult_missing == "drop":
            parts = [load_adult(split, drop_missing=True) for split in ("train", "test")]
            note = "adult.data + adult.test, rows with a missing value dropped"
        else:
            parts = [load_adult(split, drop_missing=False) for split in ("train", "test")]
            note = "adult.data + adult.test, missing values kept as the category '?'"
        frame = pd.concat([p[0] for p in parts], ignore_index=True)
        roles = parts[0][1]
    else:  # pragma: no cover
        raise ValueError(name)
    X = frame[list(roles.quasi_identifiers)].copy()
    y = frame[roles.class_attribute]
    if name == "adult" and adult_missing == "category":
        # As in the raw file (and as pandas would read it without na_values): "?" is one more
        # value, with its own one-hot column. ppdm routes it exactly like scikit-learn does; a
        # NaN would give all-zero dummies in scikit-learn but the split's default branch in
        # ppdm, and the two can disagree (see docs/attacks_pruning.md).
        for column in X.columns:
            if isinstance(X[column].dtype, pd.CategoricalDtype) and X[column].isna().any():
                column_values = X[column].cat.add_categories("?").fillna("?")
                X[column] = column_values.cat.reorder_categories(sorted(column_values.cat.categories))
    categorical = [c for c in X.columns if isinstance(X[c].dtype, pd.CategoricalDtype)]
    if name == "nursery":
        order = {c: list(NURSERY_ORDER[c]) for c in categorical}
        assert all(sorted(order[c]) == sorted(X[c].cat.categories) for c in categorical)
    else:  # Loan: integer categories in numeric order; Adult: alphabetical ("?" first)
        order = {c: [_plain(v) for v in X[c].cat.categories] for c in categorical}
    info = {
        "records": len(X),
        "features": X.shape[1],
        "feature_names": list(X.columns),
        "class_attribute": roles.class_attribute,
        "classes": [str(c) for c in pd.unique(y.dropna())],
        "paper_records": PAPER_DATASETS[name][0],
        "paper_features": PAPER_DATASETS[name][1],
        "ordinal_order": order,
    }
    if note:
        info["note"] = note
    return X, y, info


def _plain(value: Any) -> Any:
    return value.item() if isinstance(value, np.generic) else value


def encode(X_train: pd.DataFrame, X_test: pd.DataFrame, encoding: str, order: dict[str, list]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The scikit-learn inputs for the training and test rows."""
    if encoding == "onehot":
        D_train = pd.get_dummies(X_train)
        return D_train, pd.get_dummies(X_test).reindex(columns=D_train.columns, fill_value=False)

    def codes(X: pd.DataFrame) -> pd.DataFrame:
        out = X.copy()
        for column, values in order.items():
            out[column] = pd.Categorical(X[column], categories=values).codes.astype(np.int64)
        return out

    return codes(X_train), codes(X_test)


# --------------------------------------------------------------------------------------------
# One repetition
# --------------------------------------------------------------------------------------------


def tree_metrics(tree: Tree, X_test: pd.DataFrame, y_test: np.ndarray) -> dict[str, float]:
    """U, N_u, N_ℓ and accuracy of a (possibly pruned) ppdm tree."""
    leaves, users = homogeneous_leaves(tree)
    return {
        "U": float(len(single_record_leaves(tree))),
        "N_u": float(users),
        "N_l": float(len(leaves)),
        "accuracy": float(np.mean(tree.predict(X_test) == y_test)),
        "leaves": float(tree.n_leaves),
    }


def leaf_attack(tree: Tree, table: pd.DataFrame, attack: str) -> AttackResult:
    """Paper 003's leaf attack ``attack`` (§3.1 homogeneity, §2.2.1 uniqueness) on ``table``, the
    attacker knowing every record's values of the tree's attributes, through ``ppdm.audit``."""
    done = audit(tree, table, options=AuditOptions(leaf=LeafOptions(attack)), progress=False)  # type: ignore[arg-type]
    assert done.estimate is not None
    return done.estimate


def run_repetition(
    X: pd.DataFrame,
    y: pd.Series,
    seed: int,
    depths: list[int],
    prune_depth: int,
    s_grid: tuple[int, ...],
    encoding: str = "onehot",
    order: dict[str, list] | None = None,
) -> dict[str, Any]:
    """Train the trees of one 80/20 split and measure them (original trees and pruned ones)."""
    class_attribute = str(y.name)
    order = order or {}
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=seed)
    D_train, D_test = encode(X_train, X_test, encoding, order)
    sk_kwargs = {"ordinal_categories": order} if encoding == "ordinal" else {}
    y_test_values = y_test.to_numpy()
    train_frame = X_train.assign(**{class_attribute: y_train})
    out: dict[str, Any] = {"seed": seed, "depths": {}, "pruning": {}}
    for depth in sorted(set(depths) | {prune_depth}):
        est = DecisionTreeClassifier(max_depth=depth, random_state=seed).fit(D_train, y_train)
        tree = tree_from_sklearn(est, X_train, class_attribute=class_attribute, **sk_kwargs)
        metrics = tree_metrics(tree, X_test, y_test_values)
        sk_pred = est.predict(D_test)
        pp_pred = tree.predict(X_test)
        metrics["sklearn_accuracy"] = float(np.mean(sk_pred == y_test_values))
        metrics["sklearn_mismatches"] = float(np.sum(sk_pred != pp_pred))
        metrics["sklearn_leaf_mismatches_train"] = float(np.sum(est.apply(D_train) != tree.apply(X_train)))
        # Person-level attacks on the training table (the attacker knows every record's QIs).
        hom = leaf_attack(tree, train_frame, "homogeneity")
        uni = leaf_attack(tree, train_frame, "uniqueness")
        metrics["homogeneity_exposed"] = float(hom.exposed.sum())
        metrics["uniqueness_exposed"] = float(uni.exposed.sum())
        metrics["unique_qi_records"] = float(uni.details["unique_qi_records"])
        if metrics["homogeneity_exposed"] != metrics["N_u"]:
            raise AssertionError(f"homogeneity_attack exposed {metrics['homogeneity_exposed']} != N_u {metrics['N_u']}")
        if depth in depths:
            out["depths"][depth] = metrics
        if depth != prune_depth:
            continue
        # Table 7: both pruning methods on the same depth-7 tree.
        leaf_test = tree.apply(X_test)
        correct = tree.predict(X_test) == y_test_values
        sizes = {leaf.id: float(leaf.counts.sum()) for leaf in tree.leaves()}  # type: ignore[union-attr]
        pruning: dict[str, dict[str, dict[str, float]]] = {}
        for method, prune in METHODS.items():
            rows = {"original": dict(metrics)}
            for s in s_grid:
                pruned = prune(tree, s)
                row = tree_metrics(pruned, X_test, y_test_values)
                row["published_records"] = float(pruned.root.counts.sum())  # type: ignore[union-attr]
                if method == "method1":
                    # Records whose leaf was removed are the only ones whose prediction can
                    # change (every other test record reaches the same leaf, same label).
                    small = [i for i, n in sizes.items() if n <= s]
                    affected = np.isin(leaf_test, small)
                    changed = pruned.predict(X_test) != tree.predict(X_test)
                    if (changed & ~affected).any():
                        raise AssertionError("Method 1 changed the prediction of a record whose leaf was kept")
                    row["test_share_in_removed_leaves"] = float(affected.mean())
                    row["accuracy_if_removed_counted_wrong"] = float(np.mean(correct & ~affected))
                rows[str(s)] = row
            pruning[method] = rows
        out["pruning"] = pruning
    return out


# --------------------------------------------------------------------------------------------
# Aggregation and output
# --------------------------------------------------------------------------------------------


def _mean_std(values: list[float]) -> dict[str, float]:
    a = np.asarray(values, dtype=float)
    return {"mean": float(a.mean()), "std": float(a.std(ddof=1)) if len(a) > 1 else 0.0}


def aggregate(runs: list[dict[str, Any]], depths: list[int]) -> dict[str, Any]:
    by_depth = {
        str(d): {k: _mean_std([r["depths"][d][k] for r in runs]) for k in runs[0]["depths"][d]} for d in depths
    }
    pruning: dict[str, Any] = {}
    for method, rows in runs[0]["pruning"].items():
        pruning[method] = {
            s: {k: _mean_std([r["pruning"][method][s][k] for r in runs]) for k in row} for s, row in rows.items()
        }
    return {"depths": by_depth, "pruning": pruning}


def _fmt(value: float | None, digits: int) -> str:
    if value is None:
        return "–"
    return f"{value:.{digits}f}"


def _ours(values: list[float], digits: int) -> str:
    """``ours₁ / ours₂``: one number per encoding."""
    return " / ".join(_fmt(v, digits) for v in values)


def _cell(values: list[float], paper: float | None, digits: int) -> str:
    """``ours₁ / ours₂ (paper)``."""
    return f"{_ours(values, digits)} ({_fmt(paper, digits)})"


def write_tables(path: Path, results: dict[str, Any]) -> None:
    settings = results["settings"]
    encodings = settings["encodings"]
    first = results["aggregate"][encodings[0]]
    names = [n for n in DATASETS if n in first]
    agg = results["aggregate"]
    per_dataset = ", ".join(f"{TITLES[n]} {results['runtime_seconds'][n]:.1f} s" for n in names)
    enc_text = " / ".join(ENCODING_TITLES[e] for e in encodings)
    lines = [
        "# Paper 003, Tables 5–7: our reproduction next to the paper",
        "",
        "Generated by `experiments/attacks_pruning.py`; do not edit by hand. Write-up: "
        "[../attacks_pruning.md](../attacks_pruning.md).",
        "",
        f"Command: `{settings['command']}`  ",
        f"Repetitions: {settings['repeats']} (seeds {settings['seeds'][0]}–{settings['seeds'][-1]}): "
        "80/20 `train_test_split(X, y, test_size=0.2, random_state=seed)`, "
        "`DecisionTreeClassifier(max_depth=d, random_state=seed)`, imported with `tree_from_sklearn`.  ",
        f"Runtime: **{results['runtime_seconds']['total']:.1f} s** wall clock for everything "
        f"({per_dataset}) on {settings['cpu_count']} CPU(s); Python {settings['python']}, "
        f"scikit-learn {settings['sklearn']}, pandas {settings['pandas']}, numpy {settings['numpy']}.",
        "",
        f"Every cell is **{enc_text} (paper)**: our means over the repetitions for each encoding of the "
        "categorical attributes, then the paper's number. *one-hot* = `pd.get_dummies(X_train)`; "
        "*ordinal* = one integer code per value, in the values' natural order (Nursery's scales as "
        "listed in `nursery.names`, Loan's integers), else alphabetical (Adult). "
        "Accuracies are on the 20 % test split.",
        "",
        "## Datasets",
        "",
        "| dataset | records (paper) | features (paper) | classes | note |",
        "|---|---|---|---|---|",
    ]
    for name in DATASETS:
        info = results["datasets"].get(name)
        if info is None:
            continue
        if not info.get("available", True):
            lines.append(f"| {TITLES[name]} | not available | | | {info.get('note', '')} |")
            continue
        lines.append(
            f"| {TITLES[name]} | {info['records']:,} ({info['paper_records']:,}) | {info['features']} "
            f"({info['paper_features']}) | {len(info['classes'])} | {info.get('note', '')} |"
        )
    depths = [int(d) for d in settings["depths"]]

    def ours(name: str, *keys: str) -> list[float]:
        out = []
        for e in encodings:
            node: Any = agg[e][name]
            for k in keys:
                node = node[k]
            out.append(node["mean"])
        return out

    # Table 5
    lines += [
        "",
        "## Table 5: leaves holding a single record (uniqueness attack)",
        "",
        "| depth | " + " | ".join(TITLES[n] for n in names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for d in depths:
        cells = [_cell(ours(n, "depths", str(d), "U"), PAPER_TABLE5[n].get(d), 1) for n in names]
        lines.append(f"| {d} | " + " | ".join(cells) + " |")

    # Table 6
    lines += [
        "",
        "## Table 6: homogeneous leaves N_ℓ and the training records they hold N_u (homogeneity attack)",
        "",
        "| depth | " + " | ".join(f"{TITLES[n]} N_ℓ | {TITLES[n]} N_u" for n in names) + " |",
        "|---|" + "---|---|" * len(names),
    ]
    for d in depths:
        cells = []
        for n in names:
            paper = PAPER_TABLE6[n].get(d, (None, None))
            cells += [_cell(ours(n, "depths", str(d), "N_l"), paper[0], 1), _cell(ours(n, "depths", str(d), "N_u"), paper[1], 1)]
        lines.append(f"| {d} | " + " | ".join(cells) + " |")

    # Extra per-depth facts
    lines += [
        "",
        "### Per depth, ours only: accuracy, size, ppdm vs scikit-learn, person-level attacks",
        "",
        "Cells are " + enc_text + ". `mismatches` = test records where the ppdm tree's prediction "
        "differs from scikit-learn's plus training records that the two route to different leaves, "
        "summed over the repetitions. `homogeneity exposed` = records `homogeneity_attack` exposes "
        "(equal to N_u, since the attacker knows every attribute the tree tests). `unique QI` = training "
        "records whose QI combination is unique; `uniqueness exposed` = those of them that land in a "
        "homogeneous leaf (`uniqueness_attack`, a person-level reading of §2.2.1; Table 5 counts leaves).",
        "",
        "| dataset | depth | accuracy | leaves | mismatches | homogeneity exposed | unique QI | uniqueness exposed |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for n in names:
        for d in depths:
            key = str(d)
            mism = [
                sum(r["depths"][key]["sklearn_mismatches"] + r["depths"][key]["sklearn_leaf_mismatches_train"] for r in results["runs"][e][n])
                for e in encodings
            ]
            lines.append(
                f"| {TITLES[n]} | {d} | {_ours(ours(n, 'depths', key, 'accuracy'), 4)} | "
                f"{_ours(ours(n, 'depths', key, 'leaves'), 1)} | {_ours(mism, 0)} | "
                f"{_ours(ours(n, 'depths', key, 'homogeneity_exposed'), 1)} | "
                f"{_ours(ours(n, 'depths', key, 'unique_qi_records'), 1)} | "
                f"{_ours(ours(n, 'depths', key, 'uniqueness_exposed'), 1)} |"
            )

    # Table 7
    prune_depth = settings["prune_depth"]
    lines += [
        "",
        f"## Table 7: pruning at depth {prune_depth}",
        "",
        "U = single-record leaves, H N_u = training records in homogeneous leaves, H N_ℓ = homogeneous "
        "leaves, ACC = test accuracy of the pruned ppdm tree, `leaves` = leaves of the pruned tree. "
        "For Method 1, `removed share` = share of test records whose leaf was removed (the only "
        "records whose prediction can change: every other one reaches the same leaf, same label) and "
        "`ACC if wrong` = the accuracy if every one of them were misclassified, a lower bound for "
        "any way of predicting them.",
    ]
    for method in METHODS:
        lines += ["", f"### {METHOD_TITLES[method]}", ""]
        for n in names:
            paper = PAPER_TABLE7[method][n]
            extra = method == "method1"
            head = "| s | U | H N_u | H N_ℓ | ACC | leaves |" + (" removed share | ACC if wrong |" if extra else "")
            lines += [f"**{TITLES[n]}**", "", head, "|---" * (head.count("|") - 1) + "|"]
            for s in ["original"] + [str(v) for v in settings["s_grid"]]:
                p = paper.get("original" if s == "original" else int(s), (None,) * 4)
                cells = [
                    _cell(ours(n, "pruning", method, s, "U"), p[0], 1),
                    _cell(ours(n, "pruning", method, s, "N_u"), p[1], 1),
                    _cell(ours(n, "pruning", method, s, "N_l"), p[2], 1),
                    _cell(ours(n, "pruning", method, s, "accuracy"), p[3], 4),
                    _ours(ours(n, "pruning", method, s, "leaves"), 1),
                ]
                if extra:
                    if s == "original":
                        cells += ["", ""]
                    else:
                        cells += [
                            _ours(ours(n, "pruning", method, s, "test_share_in_removed_leaves"), 4),
                            _ours(ours(n, "pruning", method, s, "accuracy_if_removed_counted_wrong"), 4),
                        ]
                lines.append(f"| {s} | " + " | ".join(cells) + " |")
            lines.append("")
    lines += ["## Figure 7", "", "![accuracy vs s](figure7.png)", ""]
    path.write_text("\n".join(lines), encoding="utf-8")


def write_figure(path: Path, results: dict[str, Any]) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install 'ppdm[report]'): figure7.png not written", file=sys.stderr)
        return False
    settings = results["settings"]
    encodings = settings["encodings"]
    s_grid = [int(s) for s in settings["s_grid"]]
    xs = [0] + s_grid
    fig, axes = plt.subplots(
        len(encodings), len(DATASETS), figsize=(13, 0.6 + 3.7 * len(encodings)), squeeze=False, sharey="col"
    )
    colors = {"method1": "tab:red", "method2": "tab:blue"}
    for row, encoding in zip(axes, encodings):
        for ax, name in zip(row, DATASETS):
            ax.set_title(f"{TITLES[name]}, {ENCODING_TITLES[encoding]} encoding")
            ax.set_xticks(xs, ["orig."] + [str(s) for s in s_grid])
            ax.grid(alpha=0.3)
            agg = results["aggregate"][encoding].get(name)
            for method in METHODS:
                label = method.replace("method", "Method ")
                paper = PAPER_TABLE7[method][name]
                if all(s in paper for s in s_grid):
                    ax.plot(
                        xs, [paper["original"][3]] + [paper[s][3] for s in s_grid], ls="--", marker="o", mfc="none",
                        color=colors[method], alpha=0.55, label=f"{label}, paper",
                    )  # fmt: skip
                if agg is None:
                    continue
                rows = agg["pruning"][method]
                ax.plot(
                    xs, [rows["original"]["accuracy"]["mean"]] + [rows[str(s)]["accuracy"]["mean"] for s in s_grid],
                    ls="-", marker="s", ms=4, color=colors[method], label=f"{label}, ppdm",
                )  # fmt: skip
            if agg is None:
                ax.text(0.5, 0.5, "dataset not available", transform=ax.transAxes, ha="center", va="center")
        row[0].set_ylabel("test accuracy")
    for ax in axes[-1]:
        ax.set_xlabel("pruning threshold s")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=9, frameon=False)
    fig.suptitle(
        f"Paper 003, Figure 7: test accuracy vs pruning threshold s (depth {settings['prune_depth']}, "
        f"mean over {settings['repeats']} split(s); dashed = paper's Table 7)"
    )
    fig.tight_layout(rect=(0, 0.05, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# --------------------------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=10, help="repetitions (seeds 0..repeats-1); default 10")
    parser.add_argument("--depths", type=int, nargs="+", default=[3, 4, 5, 6, 7], help="tree depths for Tables 5–6")
    parser.add_argument("--prune-depth", type=int, default=7, help="tree depth for Table 7 / Figure 7; default 7")
    parser.add_argument("--s", type=int, nargs="+", default=list(S_GRID), dest="s_grid", help="pruning thresholds")
    parser.add_argument("--loan", type=Path, default=DEFAULT_LOAN, help="Bank_Personal_Loan_Modelling.csv (skipped if absent)")
    parser.add_argument(
        "--encodings", nargs="+", choices=ENCODINGS, default=list(ENCODINGS),
        help="how scikit-learn sees categorical attributes; default both (one-hot first)",
    )  # fmt: skip
    parser.add_argument(
        "--adult-missing", choices=("category", "drop"), default="category",
        help="Adult's missing values: 'category' keeps all 48,842 records with '?' as a value (default), "
        "'drop' drops the rows with a missing value (45,222 records)",
    )  # fmt: skip
    parser.add_argument("--datasets", nargs="+", choices=DATASETS, default=list(DATASETS))
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory; default docs/attacks_pruning")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error("--repeats must be at least 1")
    args.encodings = list(dict.fromkeys(args.encodings))
    return args


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse_args(argv)
    start = time.perf_counter()
    seeds = list(range(args.repeats))
    depths = sorted(set(args.depths))
    s_grid = tuple(sorted(set(args.s_grid)))
    shown = sys.argv[1:] if argv is None else list(argv)
    results: dict[str, Any] = {
        "paper": "003: Wakabayashi, Wang, Nojima, Waseda, Security Evaluation of Decision Tree Meets Data Anonymization (ICISSP 2024)",
        "settings": {
            "command": "PYTHONPATH=src python experiments/attacks_pruning.py" + ("" if not shown else " " + shlex.join(shown)),
            "repeats": args.repeats,
            "seeds": seeds,
            "depths": depths,
            "prune_depth": args.prune_depth,
            "s_grid": list(s_grid),
            "encodings": args.encodings,
            "test_size": 0.2,
            "adult_missing": args.adult_missing,
            "python": platform.python_version(),
            "numpy": np.__version__,
            "pandas": pd.__version__,
            "sklearn": sklearn.__version__,
            "cpu_count": os.cpu_count(),
        },
        "datasets": {},
        "aggregate": {e: {} for e in args.encodings},
        "runtime_seconds": {},
        "paper_values": {
            "table5": PAPER_TABLE5,
            "table6": {n: {d: {"N_l": v[0], "N_u": v[1]} for d, v in rows.items()} for n, rows in PAPER_TABLE6.items()},
            "table7": {
                m: {n: {str(s): dict(zip(TABLE7_FIELDS, v)) for s, v in rows.items()} for n, rows in per.items()}
                for m, per in PAPER_TABLE7.items()
            },
        },
        "runs": {e: {} for e in args.encodings},
    }
    for name in args.datasets:
        t0 = time.perf_counter()
        loaded = load(name, args.loan, args.adult_missing)
        if loaded is None:
            print(f"[{name}] skipped: {args.loan} not found (pass --loan PATH)", flush=True)
            results["datasets"][name] = {"available": False, "note": f"{args.loan} not found"}
            continue
        X, y, info = loaded
        info["available"] = True
        results["datasets"][name] = info
        print(f"[{name}] {info['records']:,} records, {info['features']} features, {len(info['classes'])} classes", flush=True)
        for encoding in args.encodings:
            runs = [
                run_repetition(X, y, seed, depths, args.prune_depth, s_grid, encoding, info["ordinal_order"])
                for seed in seeds
            ]
            agg = aggregate(runs, depths)
            results["aggregate"][encoding][name] = agg
            results["runs"][encoding][name] = [
                {"seed": r["seed"], "depths": {str(d): m for d, m in r["depths"].items()}, "pruning": r["pruning"]}
                for r in runs
            ]
            top = str(max(depths))
            m1, m2 = agg["pruning"]["method1"], agg["pruning"]["method2"]
            s0 = str(s_grid[0])
            print(
                f"[{name}]   {ENCODING_TITLES[encoding]:8s} depth {top}: U {agg['depths'][top]['U']['mean']:.1f}, "
                f"N_l {agg['depths'][top]['N_l']['mean']:.1f}, N_u {agg['depths'][top]['N_u']['mean']:.1f}; "
                f"ACC original {m1['original']['accuracy']['mean']:.4f}, s={s0}: Method 1 "
                f"{m1[s0]['accuracy']['mean']:.4f}, Method 2 {m2[s0]['accuracy']['mean']:.4f} "
                f"({len(seeds)} repetitions, {time.perf_counter() - t0:.1f} s)",
                flush=True,
            )
        results["runtime_seconds"][name] = time.perf_counter() - t0
    results["runtime_seconds"]["total"] = time.perf_counter() - start
    if not any(results["aggregate"][e] for e in args.encodings):
        raise SystemExit("no dataset available")
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(dump_json(results), encoding="utf-8")
    write_tables(out / "tables.md", results)
    wrote_figure = write_figure(out / "figure7.png", results)
    written = ["results.json", "tables.md"] + (["figure7.png"] if wrote_figure else [])
    print(f"wrote {', '.join(str(out / f) for f in written)}; {results['runtime_seconds']['total']:.1f} s", flush=True)
    return results


def dump_json(results: dict[str, Any]) -> str:
    """``results`` as JSON: indented, except one line per repetition under ``runs``."""
    rest = {k: v for k, v in results.items() if k != "runs"}
    body = json.dumps(rest, indent=1, default=_json_default)
    body = re.sub(r'\{\n\s*"mean": ([^,\n]+),\n\s*"std": ([^,\n]+)\n\s*\}', r'{"mean": \1, "std": \2}', body)
    parts = []
    for encoding, per_dataset in results["runs"].items():
        datasets = []
        for name, runs in per_dataset.items():
            lines = ",\n".join("    " + json.dumps(r, separators=(",", ":"), default=_json_default) for r in runs)
            datasets.append(f'   "{name}": [\n{lines}\n   ]')
        parts.append(f'  "{encoding}": {{\n' + ",\n".join(datasets) + "\n  }")
    return body[:-2] + ',\n "runs": {\n' + ",\n".join(parts) + "\n }\n}\n"


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(type(value))


if __name__ == "__main__":
    main()
