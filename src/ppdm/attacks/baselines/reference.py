"""The honest baselines of an audit: what a model-free attacker gets, and what the same attack
gets on people outside the training set.

* **Imputation from a reference sample** (Jayaraman & Evans, *Are Attribute Inference Attacks
  Just Imputation?*, CCS 2022). An attacker without the model but with a sample of the same
  population (people who are not targets) fits a classifier from the known columns to the
  sensitive one and applies it to the targets. :func:`imputation_attack` fits two, a
  regularised logistic regression and a gradient-boosted classifier, scores both on a held-out
  third of the reference, keeps the better and refits it on the whole reference: the strongest model-free
  attacker ppdm reports. What the model adds is the audit's accuracy minus this one's, on the
  same people.
* **A control** (Giomi et al., *A Unified Framework for Quantifying Privacy Risk in Synthetic
  Data*, PETS 2023, anonymeter's control). The audit's own guess rule (each known-value pattern's
  posterior) is applied to people who were *not* in the training set: :func:`control_summary`.
  Its accuracy on them is what the attack gets from statistics alone; the membership share of
  the risk is ``(r_members − r_control) / (1 − r_control)``, with Wilson intervals on both rates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from ppdm.attacks.core.result import AttackResult
from ppdm.data.qigroups import QIGroups
from ppdm.data.roles import check_columns
from ppdm.errors import DataError
from ppdm.metrics.baseline import wilson_interval
from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree, encode_categories

__all__ = ["control_summary", "imputation_attack", "model_outputs"]

#: The share of the reference sample held out to choose the better model is one in ``FOLDS``.
FOLDS = 3


def value_codes(column: pd.Series, values: Sequence[Any], audited: pd.Series | None = None, audited_codes: np.ndarray | None = None) -> np.ndarray:
    """Each entry's index in ``values`` (−1: none). By name; for a numeric column that the audit
    read in intervals (``values`` such as ``Education <= 1.5``: a tree's cells), by the interval
    of the audited records' values (``audited``, with their cells ``audited_codes``): a value
    within the span of one interval's audited values is in it, one below the lowest interval's
    (or above the highest's) in that one, and one in a gap between two spans is in neither
    (where the threshold sits in the gap is not known here)."""
    codes = encode_categories(column, values)
    numeric = pd.api.types.is_numeric_dtype
    if (codes >= 0).all() or audited is None or audited_codes is None or len(audited) != len(audited_codes):
        return codes
    if not (numeric(column) and numeric(audited)) or isinstance(column.dtype, pd.CategoricalDtype):
        return codes
    k, raw = len(values), audited.to_numpy(dtype=float)
    lo, hi = np.full(k, np.inf), np.full(k, -np.inf)
    np.minimum.at(lo, audited_codes, raw)
    np.maximum.at(hi, audited_codes, raw)
    seen = np.flatnonzero(np.isfinite(lo))
    seen = seen[np.argsort(lo[seen])]
    if not seen.size or (hi[seen][:-1] >= lo[seen][1:]).any() or not (np.diff(seen) > 0).all():
        return codes  # the spans overlap or run against the values' order: not intervals
    v = column.to_numpy(dtype=float)
    at = np.searchsorted(lo[seen], v, side="right") - 1
    inside = (at >= 0) & (v <= hi[seen][np.maximum(at, 0)])
    by_span = np.where(inside, seen[np.maximum(at, 0)], -1)
    by_span[(v < lo[seen[0]]) & (seen[0] == 0)] = 0  # below the lowest interval, unbounded below
    by_span[(v > hi[seen[-1]]) & (seen[-1] == k - 1)] = k - 1  # above the highest, unbounded above
    by_span[np.isnan(v)] = -1
    return np.where(codes >= 0, codes, by_span)


def _codes(column: pd.Series, values: Sequence[Any], what: str, audited: pd.Series | None = None, audited_codes: np.ndarray | None = None) -> np.ndarray:
    codes = value_codes(column, values, audited, audited_codes)
    bad = codes < 0
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"{what}: column {column.name!r} holds {column.iloc[first]!r} (row {first}), not one of the audit's values "
            f"of it ({', '.join(map(str, list(values)[:6]))}{', ...' if len(values) > 6 else ''})"
        )
    return codes


def _encoder(frame: pd.DataFrame, known: Sequence[str]) -> Any:
    from sklearn.compose import make_column_transformer
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    numeric = [c for c in known if pd.api.types.is_numeric_dtype(frame[c]) and not isinstance(frame[c].dtype, pd.CategoricalDtype)]
    other = [c for c in known if c not in numeric]
    parts: list[tuple[Any, list[str]]] = []
    if other:
        parts.append((OneHotEncoder(handle_unknown="ignore", sparse_output=False), other))
    if numeric:
        parts.append((StandardScaler(), numeric))
    return make_column_transformer(*parts)


def _candidates(frame: pd.DataFrame, known: Sequence[str], random_state: int) -> dict[str, Any]:
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    return {
        "logistic regression": make_pipeline(_encoder(frame, known), LogisticRegression(C=1.0, max_iter=2000)),
        "gradient boosting": make_pipeline(_encoder(frame, known), HistGradientBoostingClassifier(random_state=random_state)),  # scikit-learn's defaults: no weaker than what anyone fits first
    }


#: The column names the model's outputs take as an attacker's features.
OUTPUT_PREFIX = "__ppdm_output"


def model_outputs(model: Tree | Forest, frame: pd.DataFrame, kind: str, what: str) -> pd.DataFrame:
    """The model's answer about each row of ``frame``, as features: ``kind="label"`` the
    predicted class (one column), ``"score"`` the class probabilities (one column per class,
    rounded to the float32 a published score carries). ``frame`` must hold every input of the
    model (``what`` names it in the error)."""
    missing = [c for c in model.split_attributes if c not in frame.columns]
    if missing:
        raise DataError(
            f"{what}: the attacker sees the model's {kind} for each person, which the model computes from its inputs: "
            f"column {missing[0]!r} is missing"
        )
    if kind == "label":
        return pd.DataFrame({f"{OUTPUT_PREFIX}_label": pd.Categorical(model.predict(frame).astype(str))}, index=frame.index)
    proba = np.asarray(model.predict_proba(frame), dtype=np.float32)
    return pd.DataFrame({f"{OUTPUT_PREFIX}_score_{k}": proba[:, k] for k in range(proba.shape[1] - (proba.shape[1] == 2))}, index=frame.index)


def imputation_attack(
    result: AttackResult, data: pd.DataFrame, reference: pd.DataFrame, random_state: int = 0,
    outputs: tuple[pd.DataFrame, pd.DataFrame] | None = None,
) -> AttackResult:
    """The model-free attacker on ``result``'s people: a classifier from the known columns to the
    sensitive one, fitted on ``reference`` (people of the same population, not targets), the
    better of two on a held-out third of it (module docstring). ``data``: the audited table
    (its rows are ``result``'s records). ``outputs``: the model's answers about ``data``'s and
    ``reference``'s people (:func:`model_outputs`) when the attacker sees them: extra features,
    IBM ART's black-box attribute inference. Returns an :class:`AttackResult` over the same
    records and values, grouped by the known columns (and the outputs)."""
    return fit_imputation(result, data, reference, outputs, random_state)[0]


def fit_imputation(
    result: AttackResult, data: pd.DataFrame, reference: pd.DataFrame, outputs: tuple[pd.DataFrame, pd.DataFrame] | None = None,
    random_state: int = 0, also: list[AttackResult] | None = None,
) -> tuple[AttackResult, Callable[[pd.DataFrame], np.ndarray]]:
    """:func:`imputation_attack`'s result, and the fitted attacker as a function from a frame with
    its features (the known columns, then the outputs' columns when given) to its posterior over
    ``result.values`` (rows × values), to apply to other people (the control). ``also``: a list
    that receives the other candidate's result too (fitted on the whole reference, named
    ``"imputation by <model>"``), for a portfolio that measures each."""
    known = list(result.groups.quasi_identifiers)
    sensitive = result.sensitive
    if not known and outputs is None:
        raise DataError("the reference baseline needs known columns: with none, the model-free attacker is the prior")
    check_columns(reference, [*known, sensitive], "the reference sample")
    audited = data[sensitive] if sensitive in data.columns else None  # the audited values, for a numeric column read in intervals
    if outputs is not None:
        data = pd.concat([data[known].reset_index(drop=True), outputs[0].reset_index(drop=True)], axis=1)
        reference = pd.concat([reference.reset_index(drop=True), outputs[1].reset_index(drop=True)], axis=1)
        known = [*known, *outputs[0].columns]
    return _fit(result, data, reference, known, sensitive, random_state, also, audited)


def _fit(
    result: AttackResult, data: pd.DataFrame, reference: pd.DataFrame, known: list[str], sensitive: str, random_state: int,
    also: list[AttackResult] | None = None, audited: pd.Series | None = None,
) -> tuple[AttackResult, Callable[[pd.DataFrame], np.ndarray]]:
    from sklearn.model_selection import train_test_split

    if reference[sensitive].isna().any():
        raise DataError(f"the reference sample: column {sensitive!r} has a missing value (row {int(np.argmax(reference[sensitive].isna().to_numpy()))})")
    y = value_codes(reference[sensitive], result.values, audited, result.true_codes)
    outside = y < 0  # people whose value nobody audited holds: they cannot teach a guess among the audit's values
    left_out = {"rows": int(outside.sum()), "values": sorted(map(str, set(reference[sensitive][outside].tolist())))[:6]}
    reference, y = reference[~outside], y[~outside]
    if len(reference) < 2 * FOLDS:
        raise DataError(f"the reference sample has {len(reference)} usable rows: at least {2 * FOLDS} are needed to fit and check a model-free attacker")
    X = reference[known]
    if len(np.unique(y)) < 2:
        raise DataError(f"the reference sample holds one value of {sensitive!r}: no model-free attacker can be fitted on it")
    fit_X, check_X, fit_y, check_y = train_test_split(X, y, test_size=1 / FOLDS, random_state=random_state)
    # one thread each: the attackers are small, and a thread pool contended by other work on a
    # shared machine made one gradient-boosting fit 45x slower (252 s against 5.7 s on 2 cores)
    with threadpool_limits(limits=1):
        scores = {
            name: float((model.fit(fit_X, fit_y).predict(check_X) == check_y).mean())
            for name, model in _candidates(X, known, random_state).items()
        }
        best = max(scores, key=lambda k: scores[k])
        fitted = {name: model.fit(X, y) for name, model in _candidates(X, known, random_state).items() if name == best or also is not None}
    model = fitted[best]
    groups = QIGroups.from_frame(data, known)
    if also is not None:
        for name, other in fitted.items():
            if name != best:
                also.append(_imputed(result, groups, _posterior(other, data.iloc[groups.first_rows()], known, len(result.values)), name, f"imputation by {name}"))

    def posterior_of(frame: pd.DataFrame) -> np.ndarray:
        return _posterior(model, frame, known, len(result.values))

    out = _imputed(result, groups, posterior_of(data.iloc[groups.first_rows()]), best, "imputation")
    out.details = {"model": best, "held_out_accuracy": scores, "reference_rows": len(reference)}
    if left_out["rows"]:
        out.details["reference_rows_left_out"] = left_out
    return out, posterior_of


def _posterior(model: Any, frame: pd.DataFrame, known: list[str], n_values: int) -> np.ndarray:
    """A fitted attacker's posterior over the audit's values (rows × values)."""
    out = np.zeros((len(frame), n_values))
    with threadpool_limits(limits=1):
        out[:, model.classes_] = model.predict_proba(frame[known])
    return out


def _imputed(result: AttackResult, groups: QIGroups, posterior: np.ndarray, model: str, name: str) -> AttackResult:
    """The result of an attacker fitted on the reference, over ``result``'s people and values."""
    return AttackResult(
        attack=name,
        sensitive=result.sensitive,
        values=result.values,
        groups=groups,
        posterior=posterior,
        provenance=[f"{model} fitted on the reference sample"] * groups.n_groups,
        targets=result.targets,
        exposed=np.zeros(groups.n_records, dtype=bool),
        true_codes=result.true_codes,
        row_ids=result.row_ids,
    )


def _rate(hits: np.ndarray) -> dict[str, Any]:
    n, k = len(hits), int(hits.sum())
    lo, hi = wilson_interval(k, n) if n else (0.0, 1.0)
    return {"accuracy": k / n if n else float("nan"), "ci95": [lo, hi], "people": n}


def _share(members: float, control: float) -> float:
    """``(r_members − r_control) / (1 − r_control)``: the part of the risk beyond what the attack gets on non-members."""
    return (members - control) / (1 - control) if control < 1 else 0.0


def control_summary(result: AttackResult, holdout: pd.DataFrame, unseen: np.ndarray | None = None, audited: pd.Series | None = None) -> dict[str, Any]:
    """The attack's guess rule applied to ``holdout`` (people not in the training set, with their
    true sensitive values): each person takes the posterior of the audited people sharing their
    known values (weighted by how many there are); when nobody shares them, ``unseen`` (the
    holdout rows × values posterior of the attacker's own rule, e.g. the model-free attacker the
    reported one holds) or else the audited people's distribution of the sensitive value.
    Members' and non-members' accuracy, with 95 % Wilson intervals, and the membership share of
    the risk (module docstring). ``audited``: the audited records' sensitive values, which place
    a numeric column's values in the audit's intervals (:func:`value_codes`)."""
    known = list(result.groups.quasi_identifiers)
    check_columns(holdout, [*known, result.sensitive], "the holdout")
    if result.true_codes is None:
        raise DataError("the control compares accuracies: the audited table must hold the sensitive column")
    truth = _codes(holdout[result.sensitive], result.values, "the holdout", audited, result.true_codes)
    members = result.predicted()[result.targets] == result.true_codes[result.targets]
    table = result.groups.table
    weights = result.groups.counts.astype(float)
    marginal = np.bincount(result.true_codes, minlength=len(result.values)) / len(result.true_codes)
    if known:
        keys = pd.MultiIndex.from_frame(table[known].astype(object))
        pooled = pd.DataFrame(result.posterior * weights[:, None]).groupby(keys.to_numpy()).sum()
        totals = pooled.sum(axis=1).to_numpy()[:, None]
        pooled = pooled.div(np.where(totals > 0, totals, 1.0)[:, 0], axis=0)
        index = pd.Index(pooled.index).get_indexer(pd.MultiIndex.from_frame(holdout[known].astype(object)).to_numpy())
        fallback = marginal[None, :] if unseen is None else unseen
        posterior = np.where(index[:, None] >= 0, pooled.to_numpy()[np.maximum(index, 0)], fallback)
    else:
        index = np.full(len(holdout), -1)
        posterior = np.tile(marginal, (len(holdout), 1))
    guesses = np.argmax(posterior + 1e-12 * marginal, axis=1)  # ties to the more frequent value
    nonmembers = guesses == truth
    r_m, r_c = _rate(members), _rate(nonmembers)
    return {
        "members": r_m,
        "non_members": r_c,
        "membership_share": _share(r_m["accuracy"], r_c["accuracy"]),
        "membership_share_ci95": [_share(r_m["ci95"][0], r_c["ci95"][1]), _share(r_m["ci95"][1], r_c["ci95"][0])],
        "unseen_patterns": int((index < 0).sum()),
    }
