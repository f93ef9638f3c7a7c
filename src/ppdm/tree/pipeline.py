"""A scikit-learn ``Pipeline`` read back onto the table's own columns, where that is exact.

A published pipeline is its preprocessing and its trees; the audit reads splits over the
training table's values (what the attacker knows), so each step before the model is undone
where the trees' splits can be stated on the original columns without changing where any row
goes:

* ``OneHotEncoder``: a split on the dummy ``column_value`` is ``column == value`` against the
  rest (:mod:`ppdm.tree.sklearn` traces the dummy's name); with ``min_frequency`` or
  ``max_categories``, the dummy ``column_infrequent_sklearn`` is ``column in {the encoder's
  infrequent categories}``: the model is imported over the table with those categories merged
  into one value (:func:`merged_table`), then each split on it reads the categories it stands
  for (:func:`ungroup`);
* ``OrdinalEncoder``: a split ``code <= t`` is the set of categories with a code up to ``t``,
  in the encoder's own category order (:attr:`PipelineSteps.ordinal`); a one-hot encoded column
  of numbers (a code) is read as categories too (:meth:`PipelineSteps.categories`);
* ``"passthrough"`` (and a ``ColumnTransformer``'s ``remainder="passthrough"``): nothing to undo;
* a monotone scaler of numeric columns (``StandardScaler``, ``MinMaxScaler``, ``MaxAbsScaler``,
  ``RobustScaler``: :data:`SCALERS`), alone as the first step or inside a ``ColumnTransformer``:
  a split ``scaled(x) <= t`` is ``x <= t₀`` for one threshold ``t₀`` on the original values,
  because the scaler never changes the order of two values (:func:`unscale`).

The model is imported against the table with the scaled columns as the pipeline gives them to
the trees (so the importers' own float32 handling and count checks apply unchanged), then each
threshold on a scaled column is moved back: to the largest original value of the table whose
scaled value goes left (every row of the table goes where the pipeline sent it, by
construction, and this is checked), clipped with the scaler's own inverse of the threshold for
values the table does not hold. Any other step (an imputer, a polynomial expansion, a scaler
after an encoder, a ``FunctionTransformer`` with a function) is refused with one line naming it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from ppdm.errors import DataError, ModelImportError
from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree, encode_categories
from ppdm.tree.splits import ThresholdSplit

__all__ = ["ENCODERS", "INFREQUENT", "SCALERS", "PipelineSteps", "merged_table", "read_steps", "scaled_table", "ungroup", "unscale"]

#: Encoders whose splits are read back as category predicates.
ENCODERS = ("OneHotEncoder", "OrdinalEncoder")

#: The value an encoder's infrequent categories are merged into while the model is imported
#: (scikit-learn names their one input ``<column>_infrequent_sklearn``).
INFREQUENT = "infrequent_sklearn"

#: Scalers that map each numeric column by an increasing affine function (order kept).
SCALERS = ("StandardScaler", "MinMaxScaler", "MaxAbsScaler", "RobustScaler")

_SUPPORTED = "OneHotEncoder, OrdinalEncoder, passthrough, or StandardScaler, MinMaxScaler, MaxAbsScaler, RobustScaler of numeric columns"


@dataclass
class PipelineSteps:
    """What the steps before a pipeline's model do, in terms :func:`read_steps` can undo:
    ``ordinal``: each ordinal-encoded column's categories in code order; ``scalers``: each scaler
    and the original columns it scales (in its input order)."""

    ordinal: dict[str, list[Any]] = field(default_factory=dict)
    scalers: list[tuple[str, Any, list[str]]] = field(default_factory=list)
    onehot: dict[str, list[Any]] = field(default_factory=dict)
    #: Per one-hot column, the infrequent categories its encoder gives one input (:data:`INFREQUENT`).
    infrequent: dict[str, list[Any]] = field(default_factory=dict)

    def categories(self, data: pd.DataFrame) -> dict[str, list[Any]]:
        """The categories the importers read codes and dummies against: each ordinal encoder's, and
        a one-hot encoder's for a column of numbers (a code such as ``Family`` 1–4 one-hot
        encoded: the table alone would read it as a number, and its dummies ``Family_1`` as
        nothing)."""
        numeric = {c: self.merged(c) for c in self.onehot if c in data.columns and pd.api.types.is_numeric_dtype(data[c])}
        return {**numeric, **self.ordinal}

    def merged(self, column: str) -> list[Any]:
        """A one-hot column's categories as its encoder's inputs name them: the infrequent ones
        merged into :data:`INFREQUENT`, in the place of the first of them."""
        grouped = set(self.infrequent.get(column, ()))
        out: list[Any] = []
        for c in self.onehot[column]:
            value = INFREQUENT if c in grouped else c
            if value not in out:
                out.append(value)
        return out

    def check_values(self, data: pd.DataFrame) -> None:
        """Refuse a training table holding a value its encoders never saw: they were fitted on the
        training rows, so such a row is not one of them (the trees would route it as an unknown
        category and the audit read it as a value of its own)."""
        for column, categories in {**self.onehot, **self.ordinal}.items():
            if column not in data.columns:
                continue
            values = data[column]
            unseen = (encode_categories(values, categories) < 0) & values.notna().to_numpy()
            if unseen.any():
                row = int(np.flatnonzero(unseen)[0])
                shown = ", ".join(map(repr, categories[:6])) + (", ..." if len(categories) > 6 else "")
                raise DataError(
                    f"column {column!r}, row {row}: {values.iloc[row]!r} is not one of the categories the pipeline's encoder "
                    f"was fitted on ({shown}): pass the table the model was trained on"
                )

    @property
    def scaled(self) -> list[str]:
        return [c for _, _, columns in self.scalers for c in columns]


def read_steps(steps: Sequence[tuple[str, Any]]) -> PipelineSteps:
    """Read the steps before the model (``pipeline.steps[:-1]``); refuse, naming it, any step that
    cannot be undone exactly (see the module docstring)."""
    out = PipelineSteps()
    for position, (name, step) in enumerate(steps):
        _read_step(name, step, out, first=position == 0)
    return out


def _is_identity(step: Any) -> bool:
    """A ``FunctionTransformer`` without a function: how a fitted ``ColumnTransformer`` stores
    ``remainder="passthrough"`` (scikit-learn 1.4 and later). It leaves the values as they are."""
    return type(step).__name__ == "FunctionTransformer" and getattr(step, "func", None) is None and getattr(step, "inverse_func", None) is None


def _read_step(name: str, step: Any, out: PipelineSteps, first: bool) -> None:
    if step in ("passthrough", None) or _is_identity(step):
        return
    kind = type(step).__name__
    if kind == "ColumnTransformer":
        for inner, transformer, columns in step.transformers_:
            if transformer in ("passthrough", "drop"):
                continue
            _read_step(f"{name}/{inner}", transformer, out, first=first)
            if type(transformer).__name__ == "OrdinalEncoder":
                _ordinal_orders(transformer, columns, out.ordinal)
            if type(transformer).__name__ == "OneHotEncoder":
                _ordinal_orders(transformer, columns, out.onehot)
                _infrequent(transformer, columns, out.infrequent)
        return
    if kind in SCALERS:
        if not first:
            raise ModelImportError(
                f"pipeline step {name!r} ({kind}) scales the output of an earlier step: ppdm reads a scaler back onto the "
                "table's columns only when it scales them directly (the first step, or inside a ColumnTransformer)"
            )
        columns = [str(c) for c in getattr(step, "feature_names_in_", [])]
        if not columns:
            raise ModelImportError(f"pipeline step {name!r} ({kind}) does not name its columns: fit the pipeline on a DataFrame")
        out.scalers.append((name, step, columns))
        return
    if kind not in ENCODERS:
        raise ModelImportError(
            f"pipeline step {name!r} ({kind}) changes the values the trees compare in a way ppdm cannot read back onto the "
            f"table's columns: the steps before the model may be {_SUPPORTED} (a ColumnTransformer of them)"
        )
    if kind in ENCODERS:
        if kind == "OrdinalEncoder":
            _refuse_infrequent(name, step)
        target = out.ordinal if kind == "OrdinalEncoder" else out.onehot
        _ordinal_orders(step, list(getattr(step, "feature_names_in_", [])), target)
        if kind == "OneHotEncoder":
            _infrequent(step, list(getattr(step, "feature_names_in_", [])), out.infrequent)


def _infrequent(encoder: Any, columns: Any, out: dict[str, list[Any]]) -> None:
    """The infrequent categories a one-hot encoder gives one input, per column that has them."""
    names = list(columns) if not isinstance(columns, str) else [columns]
    for column, values in zip(names, getattr(encoder, "infrequent_categories_", None) or []):
        if values is not None and len(values):
            out[str(column)] = [v.item() if isinstance(v, np.generic) else v for v in values]


def _refuse_infrequent(name: str, encoder: Any) -> None:
    """Refuse an ordinal encoder that groups infrequent categories (``min_frequency``,
    ``max_categories``): its one code for several values is not read back."""
    grouped: dict[str, list[Any]] = {}
    _infrequent(encoder, list(getattr(encoder, "feature_names_in_", [])), grouped)
    if grouped:
        column, values = next(iter(grouped.items()))
        raise ModelImportError(
            f"pipeline step {name!r} ({type(encoder).__name__}) groups the infrequent categories of column {str(column)!r} "
            f"({', '.join(map(repr, values[:4]))}{', ...' if len(values) > 4 else ''}) into one code, which ppdm does not read back; "
            "fit it without min_frequency and max_categories (a OneHotEncoder's grouping is read back)"
        )


def _ordinal_orders(encoder: Any, columns: Any, ordinal: dict[str, list[Any]]) -> None:
    names = list(columns) if not isinstance(columns, str) else [columns]
    for column, categories in zip(names, encoder.categories_):
        ordinal[str(column)] = [c.item() if isinstance(c, np.generic) else c for c in categories]


def merged_table(data: pd.DataFrame, steps: PipelineSteps) -> pd.DataFrame:
    """``data`` with each one-hot column's infrequent categories merged into :data:`INFREQUENT`,
    the one value their one input stands for (``data`` itself when no encoder merges any)."""
    columns = [c for c in steps.infrequent if c in data.columns]
    if not columns:
        return data
    out = data.copy()
    for column in columns:
        values = out[column].astype(object)
        out[column] = values.where(~values.isin(steps.infrequent[column]), INFREQUENT)
    return out


def scaled_table(data: pd.DataFrame, steps: PipelineSteps) -> pd.DataFrame:
    """``data`` with each scaled column replaced by what its scaler gives the trees."""
    out = data.copy()
    for name, scaler, columns in steps.scalers:
        missing = [c for c in columns if c not in data.columns]
        if missing:
            raise ModelImportError(f"pipeline step {name!r} scales column {missing[0]!r}, which is not in the data")
        bad = [c for c in columns if not pd.api.types.is_numeric_dtype(data[c]) or pd.api.types.is_bool_dtype(data[c])]
        if bad:
            raise ModelImportError(f"pipeline step {name!r} scales column {bad[0]!r}, which holds no numbers in the data")
        values = np.asarray(scaler.transform(data[columns].astype(float)), dtype=float)
        for j, c in enumerate(columns):
            out[c] = values[:, j]
    return out


def unscale(model: Tree | Forest, data: pd.DataFrame, scaled: pd.DataFrame, steps: PipelineSteps) -> Tree | Forest:
    """``model``, imported over ``scaled`` (:func:`scaled_table`), with every threshold on a scaled
    column moved back onto ``data``'s values (see the module docstring); a
    :class:`ModelImportError` names the column if a row of ``data`` would go elsewhere than the
    pipeline sent it (a scaler that is not increasing)."""
    if not steps.scalers:
        return model
    inverse = {c: (scaler, columns) for _, scaler, columns in steps.scalers for c in columns}
    pairs = {c: _value_pairs(data[c], scaled[c]) for c in inverse}
    before = _leaves(model, scaled)
    for tree in model.trees:
        for node in tree.nodes:
            split = node.split
            if isinstance(split, ThresholdSplit) and split.attribute in inverse:
                scaler, columns = inverse[split.attribute]
                original, image = pairs[split.attribute]
                t0 = _threshold(split.threshold, original, image, _inverse(scaler, columns, split.attribute, split.threshold))
                node.split = replace(split, threshold=t0)
    _check_same_routes(model, data, before, list(inverse))
    return model


def ungroup(model: Tree | Forest, data: pd.DataFrame, merged: pd.DataFrame, steps: PipelineSteps) -> Tree | Forest:
    """``model``, imported over ``merged`` (:func:`merged_table`), with :data:`INFREQUENT` read as
    the infrequent categories it stands for in every domain and split; every row of ``data``
    reaches the leaves its merged row did (checked)."""
    grouped = {c: v for c, v in steps.infrequent.items() if c in model.attributes and model.attributes[c].is_categorical}
    if not grouped:
        return model
    before = _leaves(model, merged)
    out = model.recoded({c: {INFREQUENT: tuple(values)} for c, values in grouped.items()})
    after = _leaves(out, data)
    rows, at = np.nonzero(after != before)
    if len(rows):
        raise ModelImportError(f"row {int(rows[0])} goes elsewhere in tree {int(at[0])} once the infrequent categories are read back")
    return out


def _value_pairs(original: pd.Series, image: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """The column's distinct finite values, sorted, and what the scaler makes of each."""
    x = original.to_numpy(dtype=float)
    y = image.to_numpy(dtype=float)
    keep = np.isfinite(x)
    values, first = np.unique(x[keep], return_index=True)
    return values, y[keep][first]


def _inverse(scaler: Any, columns: list[str], column: str, threshold: float) -> float:
    """The original value the scaler maps onto ``threshold`` (its own inverse, column by column)."""
    if not np.isfinite(threshold) or abs(threshold) >= np.finfo(float).max / 4:
        return threshold
    row = np.zeros((1, len(columns)))
    j = columns.index(column)
    row[0, j] = threshold
    with np.errstate(all="ignore"):
        value = float(np.asarray(scaler.inverse_transform(row), dtype=float)[0, j])
    return value if np.isfinite(value) else threshold


def _threshold(t: float, original: np.ndarray, image: np.ndarray, estimate: float) -> float:
    """The threshold on the original values: every value of the table whose image is ``<= t``
    (and none other) is ``<= `` it; between the last such value and the next, the scaler's
    inverse ``estimate`` of ``t`` (clipped into that gap), or the midpoint of the two values, or
    the last value itself, when the estimate is that but for rounding (float32 in the trees; a tree splits
    at the midpoint of two values its node holds, and an increasing affine scaler keeps midpoints)."""
    if not len(original):
        return estimate
    k = int(np.searchsorted(image, t, side="right"))  # images are non-decreasing: the first k go left
    if k == 0:
        return float(min(estimate, np.nextafter(original[0], -np.inf)))
    if k == len(original):
        return float(max(estimate, original[-1]))
    below, above = float(original[k - 1]), float(np.nextafter(original[k], -np.inf))
    gap = float(original[k]) - below
    rise = float(image[k]) - float(image[k - 1])
    if rise > 0:  # the trees compare float32 copies: a few of their steps at t, back on the table's scale
        tolerance = 4.0 * float(np.spacing(np.float32(abs(t)))) * gap / rise + 1e-9 * gap
        middle = (below + float(original[k])) / 2.0  # where the tree's own midpoint falls, before the rounding
        for readable in (middle, below):  # below: a midpoint of values on either side of it, which goes left
            if abs(estimate - readable) <= tolerance:
                return readable
    return float(min(max(estimate, below), above))


def _leaves(model: Tree | Forest, table: pd.DataFrame) -> np.ndarray:
    """The leaf each row of ``table`` reaches in each tree (rows × trees)."""
    out = model.apply(table)
    return out[:, None] if out.ndim == 1 else out


def _check_same_routes(model: Tree | Forest, data: pd.DataFrame, before: np.ndarray, columns: list[str]) -> None:
    """Every row of ``data`` reaches, in every tree, the leaf its scaled row reached (``before``):
    the translated model is the pipeline's, on the table."""
    after = _leaves(model, data)
    rows, trees = np.nonzero(after != before)
    if len(rows):
        tree = model.trees[int(trees[0])]
        used = [c for c in columns if c in tree.split_attributes]
        raise ModelImportError(
            f"column {(used or columns)[0]!r}: row {int(rows[0])} goes elsewhere once the scaler's thresholds are read back "
            f"(tree {int(trees[0])}); the scaler does not keep the order of the values"
        )
