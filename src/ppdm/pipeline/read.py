"""The audit's inputs read: the table (a DataFrame, a CSV path, polars, Dask), the model (ppdm's, a model file, a fitted estimator), a published rule set, the threat model, the trees of a forest audited."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ppdm.attacks.core.threat import ThreatModel, load_threat, threat_from_dict
from ppdm.data.counting import is_dask
from ppdm.data.datasets import load_csv
from ppdm.data.roles import text_columns
from ppdm.errors import DataError, PpdmError, advising, shown
from ppdm.pipeline.findings import Model
from ppdm.rules.ruleset import RuleSet
from ppdm.tree.estimator import from_estimator
from ppdm.tree.forest import Forest, is_model, parse_trees
from ppdm.tree.model_files import load_model, model_kind


def as_table(data: Any) -> Any:
    if isinstance(data, (str, Path)):
        return load_csv(data)[0]
    if type(data).__module__.split(".")[0] == "polars":
        try:
            data = data.to_pandas()
        except Exception as exc:  # polars needs pyarrow to convert
            raise DataError(f"data is a polars DataFrame and converting it failed ({type(exc).__name__}): pass data.to_pandas()") from None
    if isinstance(data, pd.DataFrame):
        if not data.index.is_unique:
            repeated = data.index[data.index.duplicated()][0]
            raise DataError(
                f"data's index repeats the row id {shown(repeated)}: people() names each person by it; "
                "pass data.reset_index(drop=True) (row ids from 0) or give each row its own id"
            )
        return text_columns(data)
    if is_dask(data):
        return data
    raise DataError(f"data must be the training table (a pandas DataFrame or a CSV path), got {type(data).__name__}")


def as_model(model: Any, table: Any, class_attribute: str | None) -> Model:
    if is_model(model):
        return model
    frame = table._meta if is_dask(table) else table
    if isinstance(model, (str, Path)):
        if is_dask(table):
            check_lazy_model(model)
        return load_model(model, None if is_dask(table) else frame, class_attribute=class_attribute)
    return from_estimator(model, frame, class_attribute=class_attribute)


def check_lazy_model(model: str | Path) -> None:
    """Refuse, naming what to do, a model file that is read against the training table in memory
    (a fitted estimator's, XGBoost's, LightGBM's: their columns and categories come from it) when
    the table is a Dask one; ppdm's own JSON files name their columns and domains themselves."""
    kind = model_kind(model) if Path(model).is_file() else None
    if kind is not None and kind not in ("ppdm-tree", "ppdm-forest"):
        raise PpdmError(
            f"{model}: a {kind} model is read against the training table in memory, which a Dask table is not: audit it on a "
            "pandas table, or save its import as ppdm JSON (ppdm.tree.model_files.save_model(ppdm.load_model(MODEL, TABLE), PATH)) and audit that on Dask"
        )


def as_rules(model: Any) -> RuleSet | None:
    """``model`` as a published rule set when it is one (a :class:`RuleSet`, or a JSON file of
    format ``ppdm-rules``), else None."""
    if isinstance(model, RuleSet):
        return model
    if isinstance(model, (str, Path)) and Path(model).is_file():
        with open(model, "rb") as handle:
            head = handle.read(4096).decode("utf-8", "replace")
        if re.search(r'"format"\s*:\s*"ppdm-rules"', head):
            return RuleSet.load(model)
    return None


def as_threat(threat: ThreatModel | dict[str, Any] | str | Path | None) -> ThreatModel:
    if threat is None:
        return ThreatModel()
    if isinstance(threat, ThreatModel):
        return threat
    if isinstance(threat, dict):
        return threat_from_dict(threat)
    if isinstance(threat, (str, Path)):
        return load_threat(threat)
    raise PpdmError(f"threat must be a ThreatModel, a mapping of its keys or a YAML file, got {type(threat).__name__}")


def hashable(value: Any) -> bool:
    """An input the release record hashes: a file (its bytes), a pandas table (its CSV text) or a
    ppdm model in memory (its ppdm JSON; :func:`ppdm.report.record.input_hash`)."""
    if is_model(value):  # a regression tree has no ppdm JSON file to hash
        return not any(t.is_regressor for t in value.trees)
    return isinstance(value, (str, Path, pd.DataFrame))


def subset(model: Model, trees: str | Sequence[int] | range | slice) -> tuple[Model, str]:
    """The forest's trees ``trees`` names, and how the result says so."""
    if not isinstance(model, Forest):
        raise advising(PpdmError("trees= selects trees of a forest: this model is a single tree"), "trees=", None, "--trees")
    chosen = parse_trees(trees, model.n_trees)
    if model.combine == "additive" and chosen != list(range(len(chosen))):
        raise PpdmError(
            f"trees {trees!s}: a boosted model is read from its first round on (trees 0:K): each round's leaf values are fitted "
            "to the rounds before it, so a round is read only with every round before it"
        )
    shown = f"{chosen[0]}:{chosen[-1] + 1}" if chosen == list(range(chosen[0], chosen[-1] + 1)) else ",".join(map(str, chosen))
    text = f"trees {shown} of {model.n_trees} (a lower bound on what the whole forest discloses: the other trees publish more)"
    return model.select(chosen), text

