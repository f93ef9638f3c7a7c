"""What a notebook shows: short reprs, the report's first cards as HTML, real signatures on the
front door's functions, and ppdm's errors as one line in IPython."""

from __future__ import annotations

import inspect
import pydoc
import sys

import pandas as pd
import pytest
from small_nursery import small_nursery, small_tree

import ppdm
from ppdm.errors import DataError, PpdmError


@pytest.fixture(scope="module")
def nursery() -> pd.DataFrame:
    return small_nursery(3)


_tree = small_tree


@pytest.fixture(scope="module")
def audited(nursery):
    model = _tree(nursery)
    threat = ppdm.ThreatModel(sensitive="parents", known=["has_nurs", "form"], class_known=True)
    return model, ppdm.audit(model, nursery, threat, exact=True, progress=False)


def test_every_front_door_function_has_its_own_signature_and_docstring():
    import ppdm.defend.search  # importing the subpackage must not make ppdm.defend the package

    for name in ppdm.__all__:
        obj = getattr(ppdm, name)
        if not callable(obj) or isinstance(obj, type) and issubclass(obj, Exception):
            continue
        assert not inspect.ismodule(obj), name
        assert obj.__doc__ and "*args" not in str(inspect.signature(obj)), name
    assert ppdm.defend is sys.modules["ppdm.defend.search"].defend
    assert "threat" in inspect.signature(ppdm.defend).parameters
    assert "function defend" in pydoc.render_doc(ppdm.defend)
    from ppdm.defend import DefenseResult  # the package is still there to import from

    assert DefenseResult.__module__ == "ppdm.defend.search"


def test_a_ppdm_error_shows_as_one_line_in_ipython():
    error = DataError("column 'age': value 'x' is not a number")
    assert error._render_traceback_() == ["DataError: column 'age': value 'x' is not a number"]
    assert PpdmError("a\nb")._render_traceback_() == ["PpdmError: a\\nb"]


def test_an_ipython_shell_prints_a_ppdm_error_without_frames():
    IPython = pytest.importorskip("IPython")
    from IPython.testing.globalipapp import start_ipython

    shell = start_ipython()
    assert shell is not None and IPython
    shell.run_cell("from ppdm.errors import DataError")
    import io
    from contextlib import redirect_stdout

    out = io.StringIO()
    with redirect_stdout(out):
        shell.run_cell("def inner():\n    raise DataError(\"column 'age': not a number\")\ninner()")
    text = out.getvalue()
    assert "DataError: column 'age': not a number" in text and "inner()" not in text and "Traceback" not in text


def test_reprs_are_short(audited, nursery):
    model, audit = audited
    for shown in (repr(audit), repr(audit.estimate), repr(audit.proved), repr(model)):
        assert len(shown) < 400 and "array(" not in shown, shown
    assert f"{len(nursery):,} records" in repr(audit.proved)


def test_an_audit_shows_the_report_s_first_cards(audited):
    model, audit = audited
    html = audit._repr_html_()
    assert 'id="audited"' in html and 'id="verdict"' in html and "data-verdict=" in html
    assert "What was audited" in html and "<!DOCTYPE" not in html and "ppdm-cards" in html
    assert "decision tree predicting" in model._repr_html_() and f"{model.n_leaves:,} leaves" in model._repr_html_()


def test_a_defense_result_prints_one_line_and_shows_a_card(nursery):
    tree = _tree(nursery)
    threat = ppdm.ThreatModel(sensitive="parents", known=["has_nurs"], class_known=True)
    result = ppdm.defend(tree, nursery, threat, "certain=0", families=["pruning"], time_budget=60, progress=False)
    shown = str(result)
    assert "\n" not in shown and len(shown) < 400 and "candidates" in shown
    assert "data-verdict=" in result._repr_html_()


def test_a_membership_audit_shows_its_verdict_card(nursery):
    member = (pd.Series(range(len(nursery))) % 2 == 0).to_numpy()
    tree = _tree(nursery[member].reset_index(drop=True))
    audit = ppdm.audit(tree, membership=nursery.assign(member=member), progress=False)
    assert "candidates" in repr(audit) and len(repr(audit.membership)) < 200
    html = audit._repr_html_()
    assert "data-verdict=" in html and "Membership" in html


def test_a_regression_audit_shows_its_verdict_card():
    import numpy as np
    from sklearn.tree import DecisionTreeRegressor

    rng = np.random.default_rng(0)
    table = pd.DataFrame({"a": rng.integers(0, 4, 300).astype(float), "b": rng.integers(0, 3, 300).astype(float)})
    table["y"] = table["a"] * 2 + table["b"] + rng.normal(0, 0.1, 300)
    model = ppdm.from_estimator(DecisionTreeRegressor(max_depth=3, random_state=0).fit(table[["a", "b"]], table["y"]), table[["a", "b"]], table["y"])
    audit = ppdm.audit(model, table, ppdm.ThreatModel(sensitive="y", known=("a",)), progress=False)
    assert len(repr(audit.intervals)) < 200 and "pinned" in audit._repr_html_() and "ppdm-cards" in audit._repr_html_()
