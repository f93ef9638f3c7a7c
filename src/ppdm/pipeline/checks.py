"""The audit's inputs checked before anything is computed, each refusal one line naming the column, row or option: the options' flags, the target, the steps asked for, the model's columns, the sensitive column, infinite numbers, the training table's size."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ppdm.attacks.core.target import Target
from ppdm.attacks.core.threat import ThreatModel
from ppdm.data.missing import POLICIES
from ppdm.data.roles import check_varies, plain_value
from ppdm.errors import ArgumentTypeError, DataError, PpdmError, advising, check_flags, shown
from ppdm.pipeline.findings import Model
from ppdm.pipeline.options import AuditOptions
from ppdm.tree.model import check_in_domain, encode_categories


def options_of(options: Any) -> AuditOptions:
    """``options=`` as given, or the defaults; anything else refused naming it."""
    if options is None:
        return AuditOptions()
    if not isinstance(options, AuditOptions):
        raise ArgumentTypeError(f"options must be an AuditOptions (ppdm.pipeline.options), got {type(options).__name__}")
    return options


def check_options(how: AuditOptions, class_known: bool | None, sample: bool, target: Target | str | None) -> None:
    """Refuse flags that are not ``True``/``False``, a target of another type and budgets that are not seconds."""
    check_flags(exact=how.exact, estimate=how.estimate, labels=how.labels, internal=how.internal, baselines=how.baselines, sample=sample)
    if class_known is not None:
        check_flags(class_known=class_known)
    check_target(target)


def check_target(target: Any) -> None:
    """Refuse a ``target=`` that is neither a :class:`Target`, its text nor ``None``."""
    if target is not None and not isinstance(target, (Target, str)):
        raise ArgumentTypeError(
            f"target must be a Target or its text (such as 'certain=0,confident=5%@0.9'), got {shown(target, 60)} ({type(target).__name__})"
        )


def check_steps(how: AuditOptions) -> None:
    """Refuse an attribute audit's steps that cannot run together (before any file is read)."""
    if not how.estimate and not how.exact:
        raise PpdmError("estimate=False leaves nothing to do: ask for exact=True for the exact audit alone")
    if how.exact_time_limit is not None and not how.exact:
        raise PpdmError("exact_time_limit needs exact=True")
    if how.exact and how.split_choices:
        raise PpdmError("the exact audit does not use the split choices (internal=True): run them separately")
    if how.missing not in POLICIES:
        raise PpdmError(f"unknown missing-value policy {how.missing!r} (choose one of: {', '.join(POLICIES)})")


def check_split_columns(table: Any, model: Model) -> None:
    """Refuse a table without a column the model splits on, naming it, before the attacker is
    resolved (a later constraint named the sensitive column instead)."""
    missing = [c for c in model.split_attributes if c not in set(table.columns)]
    if missing:
        raise DataError(f"the {type(model).__name__.lower()} splits on column(s) missing from the data: {', '.join(map(repr, missing))}")
    if model.class_attribute not in set(table.columns):
        raise advising(
            DataError(f"the data has no column {model.class_attribute!r}, the class the model's leaves count (pass class_attribute= if it is called otherwise)"),
            "pass class_attribute=", "class_attribute", "give its name",
        )


def check_sensitive_varies(table: pd.DataFrame, threat: ThreatModel) -> None:
    """Refuse a sensitive column that holds one value: everyone would be "certain" from the data
    alone, which no audit of the model should report."""
    check_varies(table, str(threat.sensitive), "sensitive", "there is nothing to infer, with or without the model")


#: A known column "determines" the secret when its values' groups of at least two records hold
#: this share of the table's records or more, each group a single sensitive value (an identifier,
#: one record per value, determines everything in the table and nothing in the population; a
#: column missing for most people says nothing of them).
DETERMINING_SHARE = 0.9


def determining_columns(table: pd.DataFrame, threat: ThreatModel) -> str | None:
    """The sentence every output states when a known column alone gives the sensitive value in
    the table (``education`` gives ``education-num``): whoever knows it knows the secret with or
    without the model, a fact of the data the model's audit should not be read as disclosing
    (habit 3); ``None`` when no known column does."""
    sensitive = str(threat.sensitive)
    if sensitive not in table.columns or len(table) < 2:
        return None
    found = []
    for column in (c for c in threat.known or () if c != sensitive and c in table.columns):
        pairs = table[[column, sensitive]].dropna()
        values = pairs.groupby(column, observed=True, sort=False)[sensitive].agg(["nunique", "size"])
        shared = values["size"] >= 2
        if values["nunique"].max() <= 1 and values.loc[shared, "size"].sum() >= DETERMINING_SHARE * len(table):  # missing values count against it
            found.append(f"{column!r} ({len(values):,} values)")
    if not found:
        return None
    return (
        f"in the table each value of the known column(s) {', '.join(found)} goes with one value of {sensitive!r}: whoever "
        "knows it knows the secret with or without the model (the model-free attacker, reference=, measures it)"
    )


def check_finite(table: pd.DataFrame, model: Model) -> None:
    """Refuse an infinite number in a column the model splits on: it would silently go to one
    side of every threshold, and the counts it upsets would be all an error could name."""
    for column in model.split_attributes:
        if column not in table.columns or not pd.api.types.is_numeric_dtype(table[column]) or pd.api.types.is_bool_dtype(table[column]):
            continue
        values = table[column].to_numpy(dtype=float, na_value=np.nan)
        infinite = np.isinf(values)
        if infinite.any():
            at = int(np.argmax(infinite))
            raise DataError(
                f"column {column!r} holds {float(values[at])!r} (row {plain_value(table.index[at])!r}), not a finite number: the model splits on it "
                f"({int(infinite.sum()):,} such value(s))"
            )


def check_domains(table: pd.DataFrame, model: Model) -> None:
    """Refuse a value of a categorical column the model splits on that is not in its domain,
    naming the column, the value and the row of the table as given (the counted groups the
    audit routes later have rows of their own)."""
    attributes = getattr(model, "attributes", {}) or {}
    for column in model.split_attributes:
        attribute = attributes.get(column)
        if attribute is None or not attribute.is_categorical or column not in table.columns:
            continue
        check_in_domain(table[column], encode_categories(table[column], attribute.categories), column, type(model).__name__.lower())


def check_training_size(model: Model, table: pd.DataFrame, weights: np.ndarray | None, dropped: int, sample: bool) -> str | None:
    """Refuse a table that cannot be the model's training data, unless ``sample`` declares it;
    with ``sample``, the sentence every output states (``None`` when the sizes agree)."""
    expected = model.n_training_records
    rows = float(weights.sum()) if weights is not None else float(len(table))
    if expected is None or abs(rows + dropped - expected) <= 1e-6 * max(expected, 1.0):
        return None
    left_out = f" (and {dropped:,} left out for missing values)" if dropped else ""
    if not sample:
        raise advising(
            DataError(
                f"the table has {rows:,.0f} record{'' if rows == 1 else 's'}{left_out} but the model was trained on {expected:,.0f}: audit the rows the "
                "model was fitted on, or declare the table a sample (sample=True)"
            ),
            "sample=True", "sample",
        )
    return f"audited a sample: {rows:,.0f} record{'' if rows == 1 else 's'}{left_out}; the model was trained on {expected:,.0f}"

