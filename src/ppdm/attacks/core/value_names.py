"""The data's values behind a sensitive value the attack names by an interval.

When the model splits on a numeric sensitive column, the attacker's unknown is the interval the
model's thresholds cut (paper 000 §4's domain of an attribute the tree splits on: ``Education <=
1.5``), and every result names its values so. A reader knows the column by its values (1, 2, 3):
this module names each interval by the values of the audited table that fall in it, so that a
report and a summary can say ``1`` and ``2 or 3`` where the attack says ``Education <= 1.5`` and
``Education > 1.5``. The intervals stay the attack's values; only their names for a reader change.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

#: An interval holding more distinct values than this is named by its smallest and largest.
LISTED = 3


def data_value_names(values: Sequence[object], true_codes: np.ndarray, column: pd.Series) -> dict[str, str]:
    """``{interval name: the data's values in it}`` for each of ``values`` (the attack's values,
    ``true_codes`` each record's index into them, ``column`` the records' sensitive values in the
    same order) that the audited records fill with values other than its own name: ``"1"``,
    ``"2 or 3"``, ``"1, 2 or 3"``, or ``"18 to 64"`` past :data:`LISTED` values; an interval no
    audited record falls in keeps its name and says so (``"2 < Family <= 2.5 (no audited row's
    value)"``: two trees' thresholds that no whole number lies between). Empty for a categorical
    column (its values are their own names)."""
    if not pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column) or len(column) != len(true_codes):
        return {}
    numbers = column.to_numpy(dtype=float, na_value=np.nan)
    ok = np.isfinite(numbers) & (true_codes >= 0)
    pairs = np.unique(np.stack([true_codes[ok].astype(float), numbers[ok]]), axis=1)  # sorted by code, then value
    cuts = np.searchsorted(pairs[0], np.arange(len(values) + 1))
    out = {}
    for j, name in enumerate(map(str, values)):
        held = pairs[1, cuts[j] : cuts[j + 1]]
        text = _listed(held) or f"{name} (no audited row's value)"
        if text != name:
            out[name] = text
    return out


def _listed(held: np.ndarray) -> str:
    if len(held) == 0:
        return ""
    words = [_number(v) for v in held]
    if len(words) > LISTED:
        return f"{words[0]} to {words[-1]}"
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def _number(v: float) -> str:
    return str(int(v)) if v.is_integer() and abs(v) < 1e15 else repr(float(v))
