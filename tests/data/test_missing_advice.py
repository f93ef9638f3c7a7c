"""The missing-value error advises only the policies that can work for the column at fault, on a
table and on a counted one (:mod:`ppdm.data.missing`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ppdm.data.missing import handle_missing, handle_missing_counted
from ppdm.errors import DataError

TABLE = pd.DataFrame({"split": pd.Categorical(["a", None, "b"]), "other": pd.Categorical(["u", "v", None]), "number": [1.0, 2.0, np.nan]})


@pytest.mark.parametrize("column, as_value", [("split", False), ("other", True), ("number", False)])
def test_as_value_is_advised_only_for_a_categorical_column_the_model_does_not_split_on(column, as_value):
    for call in (lambda: handle_missing(TABLE, [column], "error", ["split"]), lambda: handle_missing_counted(TABLE, np.ones(3), [column], "error", ["split"])):
        with pytest.raises(DataError, match=rf"column '{column}': 1 missing value") as why:
            call()
        assert ("as-value" in str(why.value)) is as_value and ("as-value" in why.value.for_command_line()) is as_value
        assert "missing='drop'" in str(why.value) and "--missing drop" in why.value.for_command_line()
        assert ("the model splits on it" in str(why.value)) is (column == "split")


def test_as_value_is_not_advised_for_the_class_column():
    for call in (lambda: handle_missing(TABLE, ["other"], "error", ["split"], "other"),
                 lambda: handle_missing_counted(TABLE, np.ones(3), ["other"], "error", ["split"], "other")):  # fmt: skip
        with pytest.raises(DataError, match=r"column 'other': 1 missing value\(s\)(, first at row\(s\) 2)? \(use missing='drop', or fill them in: the model's classes hold no such value\)") as why:
            call()
        assert "as-value" not in why.value.for_command_line()
