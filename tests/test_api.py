"""The front door: ``import ppdm`` gives load_model, from_estimator, ThreatModel, audit and defend,
and a tree and a forest come back as the same kind of audit."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.ensemble import RandomForestClassifier
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, OrdinalEncoder, StandardScaler
from sklearn.tree import DecisionTreeClassifier

import ppdm
from ppdm.data.datasets import load_dataset
from ppdm.errors import ModelImportError, PpdmError
from ppdm.tree import Forest, Tree, save_forest, save_tree

FEATURES = ["parents", "has_nurs", "form", "children", "housing", "finance", "social", "health"]


@pytest.fixture(scope="module")
def nursery() -> pd.DataFrame:
    frame, _ = load_dataset("nursery")
    return frame.sample(1500, random_state=1).reset_index(drop=True)


def _encoded(estimator, frame):
    return make_pipeline(make_column_transformer((OneHotEncoder(), FEATURES)), estimator).fit(frame[FEATURES], frame["class"])


@pytest.fixture(scope="module")
def tree(nursery) -> Tree:
    return ppdm.from_estimator(_encoded(DecisionTreeClassifier(max_depth=5, random_state=0), nursery), nursery)


@pytest.fixture(scope="module")
def forest(nursery) -> Forest:
    return ppdm.from_estimator(_encoded(RandomForestClassifier(5, max_depth=4, random_state=0), nursery), nursery)


THREAT = ppdm.ThreatModel(sensitive="parents", preset="insider")


def test_the_front_door_names_are_exported():
    for name in ("audit", "Audit", "load_model", "from_estimator", "ThreatModel", "defend", "load_threat", "PpdmError"):
        assert name in ppdm.__all__ and hasattr(ppdm, name), name
    assert ppdm.ThreatModel is __import__("ppdm.attacks.core.threat", fromlist=["x"]).ThreatModel
    with pytest.raises(AttributeError):
        ppdm.no_such_name  # noqa: B018


def test_import_ppdm_loads_no_library():
    """``import ppdm`` stays light: the names load on first use (``ppdm --help`` depends on it)."""
    code = "import sys, ppdm; print(any(m in sys.modules for m in ('pandas', 'numpy', 'ppdm.api')))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_a_tree_and_a_forest_give_the_same_kind_of_audit(tree, forest, nursery):
    audits = [ppdm.audit(model, nursery, THREAT) for model in (tree, forest)]
    for audit in audits:
        assert isinstance(audit, ppdm.Audit)
        assert audit.estimate is not None and audit.proved is None
        people = audit.people()
        assert len(people) == len(nursery)
        assert {"row", "group", "truth", "guess", "confidence", "certain", "P(usual)"} <= set(people.columns)
        np.testing.assert_allclose(people[[f"P({v})" for v in audit.estimate.values]].sum(axis=1), 1.0, atol=1e-9)
    assert type(audits[0].people()) is type(audits[1].people())
    assert list(audits[0].leaves().columns) == list(audits[1].leaves().columns)


def test_leaves_lists_every_tree_and_leaf_of_a_forest(forest, nursery):
    leaves = ppdm.audit(forest, nursery, THREAT).leaves()
    assert sorted(leaves["tree"].unique()) == list(range(forest.n_trees))
    for t, tree in enumerate(forest.trees):
        rows = leaves[leaves["tree"] == t]
        assert sorted(rows["leaf"]) == sorted(n.id for n in tree.leaves())
        assert rows["records"].sum() == len(nursery)  # every record lands in one leaf of each tree
        landing = tree.apply(nursery)
        first = rows.iloc[0]
        assert first["records"] == (landing == first["leaf"]).sum()


def test_certain_people_per_leaf_add_up_to_the_certain_people(tree, nursery):
    audit = ppdm.audit(tree, nursery, THREAT, exact=True, exact_time_limit=60)
    leaves, people = audit.leaves(), audit.people()
    assert leaves["certain"].sum() == people["certain"].sum() == audit.estimate.summary()["certain_records"]
    assert leaves["proved_certain"].sum() == people["proved_certain"].sum()
    # what is proved certain, the estimate holds certain too, and right
    assert (people["certain"] | ~people["proved_certain"]).all()
    assert (people.loc[people["proved_certain"], "proved_value"] == people.loc[people["proved_certain"], "truth"]).all()


def test_print_gives_the_lines_the_cli_prints(tree, nursery, tmp_path):
    save_tree(tree, tmp_path / "tree.json")
    nursery.to_csv(tmp_path / "data.csv", index=False)
    done = subprocess.run(
        [sys.executable, "-m", "ppdm", "audit", "--tree", str(tmp_path / "tree.json"), "--data", str(tmp_path / "data.csv"),
         "--sensitive", "parents", "--preset", "insider", "--out", str(tmp_path / "cli.json")],
        capture_output=True, text=True, env={"COLUMNS": "1000", "PATH": ""},
    )
    assert done.returncode == 0, done.stderr
    audit = ppdm.audit(tmp_path / "tree.json", tmp_path / "data.csv", {"sensitive": "parents", "preset": "insider"})
    printed = done.stdout.splitlines()
    mine = str(audit).splitlines()
    assert [line.split(" solved in ")[0] for line in printed[: len(mine)]] == [line.split(" solved in ")[0] for line in mine]
    audit.save(tmp_path / "api.json")
    cli, api = (json.loads((tmp_path / f).read_text()) for f in ("cli.json", "api.json"))
    assert [g["posterior"] for g in cli["groups"]] == [g["posterior"] for g in api["groups"]]


def test_save_and_report_write_whole_files(forest, nursery, tmp_path):
    audit = ppdm.audit(forest, nursery, THREAT)
    audit.save(tmp_path / "audit.json")
    report = audit.report(tmp_path / "audit.html")
    assert json.loads((tmp_path / "audit.json").read_text())["summary"]["records"] == len(nursery)
    assert (tmp_path / "audit.report.json").is_file() and "<svg" in (tmp_path / "audit.html").read_text()
    assert report["attacks"][0]["name"]
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # no temporary file left


def test_load_model_reads_every_format_the_same_way(tree, forest, nursery, tmp_path):
    save_tree(tree, tmp_path / "t.json")
    save_forest(forest, tmp_path / "f.json")
    assert isinstance(ppdm.load_model(tmp_path / "t.json"), Tree)
    assert isinstance(ppdm.load_model(tmp_path / "f.json"), Forest)


def test_skops_files_are_read_without_a_pickle(nursery, tmp_path):
    sio = pytest.importorskip("skops.io")
    for estimator in (DecisionTreeClassifier(max_depth=4, random_state=0), RandomForestClassifier(3, max_depth=3, random_state=0)):
        fitted = _encoded(estimator, nursery)
        sio.dump(fitted, tmp_path / "m.skops")
        model = ppdm.load_model(tmp_path / "m.skops", nursery)
        expected = ppdm.from_estimator(fitted, nursery)
        np.testing.assert_array_equal(model.predict(nursery), expected.predict(nursery))
        np.testing.assert_array_equal(model.predict(nursery), fitted.predict(nursery[FEATURES]))
    with pytest.raises(ModelImportError, match="training table"):
        ppdm.load_model(tmp_path / "m.skops")


def _secret_step(x):
    return x


def test_a_skops_file_with_an_untrusted_type_is_refused(nursery, tmp_path):
    sio = pytest.importorskip("skops.io")
    X = pd.DataFrame({"children": nursery["children"].cat.codes.astype(float)})
    fitted = make_pipeline(FunctionTransformer(_secret_step), DecisionTreeClassifier(max_depth=2)).fit(X, nursery["class"])
    sio.dump(fitted, tmp_path / "m.skops")
    with pytest.raises(ModelImportError, match=r"m\.skops: the skops file holds types ppdm does not load \(.*_secret_step"):
        ppdm.load_model(tmp_path / "m.skops", nursery)


def test_a_zip_that_is_not_a_skops_file_is_refused(nursery, tmp_path):
    import zipfile

    with zipfile.ZipFile(tmp_path / "m.skops", "w") as z:
        z.writestr("hello.txt", "hi")
    with pytest.raises(PpdmError, match="not a skops model file"):
        ppdm.load_model(tmp_path / "m.skops", nursery)


def test_pipelines_that_only_encode_are_imported_and_others_refused(nursery):
    ordinal = make_pipeline(
        make_column_transformer((OrdinalEncoder(), FEATURES)), DecisionTreeClassifier(max_depth=4, random_state=0),
    ).fit(nursery[FEATURES], nursery["class"])
    model = ppdm.from_estimator(ordinal, nursery)
    np.testing.assert_array_equal(model.predict(nursery), ordinal.predict(nursery[FEATURES]))
    X = pd.DataFrame({"children": nursery["children"].cat.codes.astype(float)})
    scaled = make_pipeline(StandardScaler(), DecisionTreeClassifier(max_depth=2)).fit(X, nursery["class"])
    with pytest.raises(ModelImportError, match=r"pipeline step 'standardscaler' scales column 'children', which holds no numbers in the data"):
        ppdm.from_estimator(scaled, nursery)  # the table's column is the categories, not the codes the scaler was fitted on
    imputed = make_pipeline(SimpleImputer(), DecisionTreeClassifier(max_depth=2)).fit(X, nursery["class"])
    with pytest.raises(ModelImportError, match=r"pipeline step 'simpleimputer' \(SimpleImputer\) changes the values the trees compare"):
        ppdm.from_estimator(imputed, nursery)
    with pytest.raises(ModelImportError, match="is not a model ppdm imports"):
        ppdm.from_estimator(object(), nursery)


def test_threat_model_takes_class_known_and_refuses_a_text_for_known(nursery):
    with pytest.raises(PpdmError, match=r"known must be a list of column names, not the text 'age'"):
        ppdm.ThreatModel(known="age")
    listed = ppdm.ThreatModel(sensitive="parents", known=["form", "class"]).resolve(nursery, "class")
    flagged = ppdm.ThreatModel(sensitive="parents", known=["form"], class_known=True).resolve(nursery, "class")
    assert listed.known == flagged.known and listed.class_known and flagged.class_known
    with pytest.raises(PpdmError, match="class_known: the class 'class' is the sensitive column"):
        ppdm.ThreatModel(class_known=True).resolve(nursery, "class")


def test_audit_refuses_what_it_cannot_do_in_one_line(tree, nursery):
    with pytest.raises(PpdmError, match="leaves nothing to do"):
        ppdm.audit(tree, nursery, THREAT, estimate=False)
    with pytest.raises(PpdmError, match="exact_time_limit needs exact=True"):
        ppdm.audit(tree, nursery, THREAT, exact_time_limit=5)
    with pytest.raises(PpdmError, match="unknown missing-value policy"):
        ppdm.audit(tree, nursery, THREAT, missing="ignore")  # type: ignore[arg-type]
    with pytest.raises(PpdmError, match="data must be the training table"):
        ppdm.audit(tree, nursery.to_numpy(), THREAT)


def test_defend_is_model_first_and_the_old_spelling_warns(table):
    X, y = table
    data = X.assign(c=y)
    tree = ppdm.from_estimator(DecisionTreeClassifier(max_depth=3, random_state=0).fit(pd.get_dummies(X), y), data)
    threat = ppdm.ThreatModel(sensitive="a", known=["b", "c"])
    options = {"families": ["pruning"], "progress": False, "time_budget": 60}
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        new = ppdm.defend(tree, data, threat, "certain=0", **options)
    with pytest.warns(DeprecationWarning, match=r"call defend\(model, data, threat, target\)"):
        old = ppdm.defend(data, threat, "certain=0", model=tree, **options)
    assert new.chosen_label == old.chosen_label
    pd.testing.assert_frame_equal(new.frontier.drop(columns="seconds"), old.frontier.drop(columns="seconds"))


@pytest.fixture
def table():
    rng = np.random.default_rng(0)
    n = 600
    X = pd.DataFrame({"a": pd.Categorical(rng.choice(list("xyz"), n)), "b": rng.normal(size=n)})
    y = pd.Series(np.where((X["a"] == "x") | (X["b"] > 1), "yes", "no"), name="c")
    return X, y


def test_the_cli_default_exact_budget_is_the_library_s():
    from ppdm.cli.audit import DEFAULT_EXACT_SECONDS
    from ppdm.pipeline.options import AuditOptions

    assert DEFAULT_EXACT_SECONDS == AuditOptions().exact_seconds


def test_a_boosted_model_s_leaves_show_their_values_not_placeholder_labels(nursery):
    from sklearn.ensemble import GradientBoostingClassifier

    boosted = ppdm.from_estimator(_encoded(GradientBoostingClassifier(n_estimators=3, max_depth=2, random_state=0), nursery), nursery)
    audit = ppdm.audit(boosted, nursery, THREAT)
    leaves = audit.leaves()
    assert "value" in leaves and "label" not in leaves  # a round's labels are placeholders
    assert leaves["value"].notna().all() and leaves["tree"].nunique() == boosted.n_trees
    riskiest = [line for line in str(audit).splitlines() if "→" in line]
    assert riskiest and all(len(line.split(" record")[-1]) <= 140 for line in riskiest)  # a forest's provenance is cut
    assert any("more trees)" in line for line in riskiest)


def test_a_table_with_integer_column_names_is_read_by_their_text(nursery):
    """A frame built from an array names its columns 0, 1, 2...: ppdm names columns by text, so
    they are read as "0", "1", "2" (the import traced no feature, and the insider preset's own
    columns were refused as "not a list of column names")."""
    table = nursery.set_axis([*range(len(FEATURES)), "class"], axis=1)
    X = pd.get_dummies(table[list(range(len(FEATURES)))].rename(columns=str))
    est = DecisionTreeClassifier(max_depth=5, random_state=0).fit(X, table["class"])
    model = ppdm.from_estimator(est, table)
    assert set(model.split_attributes) <= {str(i) for i in range(len(FEATURES))}
    insider = ppdm.audit(est, table, ppdm.ThreatModel(sensitive="0", preset="insider"))
    assert insider.estimate.summary()["certain_wrong"] == 0
    assert ppdm.audit(model, table, ppdm.ThreatModel(sensitive="0", known=["1", "7"])).threat.known == ("1", "7")
    with pytest.raises(PpdmError, match=r"known=\['1', '7'\]"):
        ppdm.ThreatModel(sensitive="0", known=[1, 7])
    with pytest.raises(PpdmError, match="two columns named '1'"):
        ppdm.audit(model, table.set_axis(["1", *range(1, len(FEATURES)), "class"], axis=1), {"sensitive": "1"})
    searched = ppdm.defend(est, table, ppdm.ThreatModel(sensitive="0", known=["1"], class_known=True), "certain=0", families=["retrain"], progress=False)
    assert searched.frontier["status"].eq("audited").any()


def test_a_missing_value_advises_the_python_argument_and_the_command_line_its_option(tree, nursery):
    """From Python, "(use --missing drop ...)" named an option a Python caller does not have."""
    holey = nursery.copy()
    holey.loc[3, "health"] = np.nan
    with pytest.raises(PpdmError, match=r"column 'health': 1 missing value\(s\), first at row\(s\) 3") as why:
        ppdm.audit(tree, holey, THREAT)
    assert "missing='drop'" in str(why.value) and "--missing" not in str(why.value)
    assert "health" in tree.split_attributes  # as-value cannot route it: not advised
    assert why.value.for_command_line().endswith("(use --missing drop, or fill them in: the model splits on it, so a value of their own would reach no branch)")


@pytest.mark.parametrize("column, as_value", [("split", False), ("categorical", True), ("numeric", False)])
def test_a_missing_value_advises_as_value_only_where_it_works(column, as_value):
    """missing='as-value' gives a categorical column the model does not split on a value of its
    own; a split column then reaches no branch ("'(missing)' not in the tree's domain") and a
    numeric column has no such value: only drop (or filling the values in) is advised there."""
    rng = np.random.default_rng(0)
    table = pd.DataFrame({
        "split": pd.Categorical(rng.choice(["a", "b", "c"], 300)), "categorical": pd.Categorical(rng.choice(["u", "v"], 300)),
        "numeric": rng.normal(size=300).round(2),
    })  # fmt: skip
    table["y"] = np.where((table["split"] == "a") ^ (rng.random(300) < 0.1), "yes", "no")
    model = ppdm.from_estimator(DecisionTreeClassifier(max_depth=2, random_state=0).fit(table[["split"]].apply(lambda c: c.cat.codes), table["y"]), table, feature_names=["split"])
    assert model.split_attributes == ("split",)
    holey = table.copy()
    holey.loc[[5, 8], column] = np.nan
    threat = ppdm.ThreatModel(sensitive="y", known=["split", "categorical", "numeric"])
    with pytest.raises(PpdmError, match=rf"column '{column}': 2 missing value\(s\), first at row\(s\) 5, 8 \(use missing='drop'") as why:
        ppdm.audit(model, holey, threat)
    assert ("as-value" in str(why.value)) is as_value and ("as-value" in why.value.for_command_line()) is as_value
    assert ("fill them in" in str(why.value)) is not as_value
    if as_value:  # it works where advised
        assert ppdm.audit(model, holey, threat, missing="as-value").estimate is not None
    elif column == "split":  # and fails where it is not
        with pytest.raises(PpdmError, match="not in the tree's domain"):
            ppdm.audit(model, holey, threat, missing="as-value")


@pytest.mark.parametrize("make", [lambda: DecisionTreeClassifier(max_depth=4, random_state=0), lambda: RandomForestClassifier(3, max_depth=4, random_state=0)])
def test_a_categorical_column_of_numbers_fitted_as_it_is_reads_its_values(make):
    """scikit-learn reads a pandas categorical column of numbers (the bundled Bank Loan loader's
    Education: 1, 2, 3) as its values, not its codes: fitted on the table as loaded, the import
    read threshold 2.5 as a code and refused it ("sends every value one way"), or misread 1.5."""
    rng = np.random.default_rng(0)
    level = rng.integers(1, 4, 400)
    table = pd.DataFrame({
        "x": rng.normal(size=400).round(2), "level": pd.Categorical(level, categories=[1, 2, 3]), "group": pd.Categorical(rng.integers(1, 5, 400)),
    })
    table["y"] = np.where((level == 3) ^ (table["x"] > 1) ^ (rng.random(400) < 0.1), "yes", "no")
    est = make().fit(table[["x", "level", "group"]], table["y"])
    model = ppdm.from_estimator(est, table)
    assert "level" in model.split_attributes
    assert (np.asarray(model.predict(table)) == est.predict(table[["x", "level", "group"]])).all()
    audit = ppdm.audit(model, table, ppdm.ThreatModel(sensitive="level", preset="insider"))
    assert audit.estimate.summary()["certain_wrong"] == 0
