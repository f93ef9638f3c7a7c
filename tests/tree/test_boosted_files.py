"""XGBoost and LightGBM models read from their own files: exact thresholds, missing values,
what the stored statistics reveal with and without the training parameters, clear refusals,
and no need for either library to read a file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdm.errors import ModelImportError
from ppdm.tree import forest_from_lightgbm, forest_from_xgboost
from ppdm.tree.newton import NewtonStep, newton_step

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def adult(adult_split):
    rows = np.random.default_rng(7).choice(len(adult_split.X), 8000, replace=False)
    pick = lambda frame: frame.iloc[rows].reset_index(drop=True)  # noqa: E731
    return pick(adult_split.X), pick(adult_split.D), pick(adult_split.y)


@pytest.fixture(scope="module")
def noisy():
    """Numeric columns with many distinct float64 values (and NaN in one), a binary class."""
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": rng.normal(size=3000), "b": rng.uniform(-5, 5, 3000) ** 3, "c": rng.normal(size=3000)})
    y = pd.Series(pd.Categorical(np.where(X["a"] + 0.1 * X["b"] + rng.normal(size=3000) > 0, "yes", "no")), name="cls")
    X.loc[rng.random(3000) < 0.1, "c"] = np.nan
    return X, y


def _probes(forest, columns):
    """Values at and next to every threshold of the forest, a row per value."""
    values = {c: [np.nan, 0.0] for c in columns}
    for tree in forest.trees:
        for node in tree.internal_nodes():
            t = node.split.threshold
            near = [t, np.nextafter(t, np.inf), np.nextafter(t, -np.inf)]
            t32 = np.float32(t)
            near += [float(t32), float(np.nextafter(t32, np.float32(np.inf))), float(np.nextafter(t32, np.float32(-np.inf)))]
            values[node.split.attribute] += near
    n = max(len(v) for v in values.values())
    return pd.DataFrame({c: np.resize(np.asarray(v, dtype=float), n) for c, v in values.items()})


def test_xgboost_thresholds_and_missing_values_send_every_value_the_same_way(noisy):
    X, y = noisy
    est = xgb.XGBClassifier(n_estimators=15, max_depth=4, n_jobs=1).fit(X, y.cat.codes)
    forest = forest_from_xgboost(est, X, y=y)
    probe = _probes(forest, X.columns)
    assert np.array_equal(forest.predict(probe), np.asarray(y.cat.categories, dtype=object)[est.predict(probe)])
    assert np.array_equal(forest.predict(X), np.asarray(y.cat.categories, dtype=object)[est.predict(X)])


@pytest.mark.parametrize("train_nan", [True, False])
def test_lightgbm_thresholds_and_missing_values_send_every_value_the_same_way(noisy, train_nan):
    X, y = noisy
    fit = X if train_nan else X.fillna(0.5)  # without NaN in training LightGBM reads NaN as 0
    est = lgb.LGBMClassifier(n_estimators=15, max_depth=4, verbose=-1, n_jobs=1).fit(fit, y.cat.codes)
    forest = forest_from_lightgbm(est, fit, y=y)
    probe = _probes(forest, X.columns)
    assert np.array_equal(forest.predict(probe), np.asarray(y.cat.categories, dtype=object)[est.predict(probe)])
    assert np.abs(forest.predict_proba(probe) - est.predict_proba(probe)).max() < 1e-12


def test_an_xgboost_file_alone_reveals_the_first_trees_class_counts(adult, tmp_path, claims_hold):
    X, D, y = adult
    est = xgb.XGBClassifier(n_estimators=4, max_depth=4, learning_rate=0.2, reg_lambda=2.0, n_jobs=1).fit(D, y.cat.codes)
    est.get_booster().save_model(tmp_path / "m.json")
    (tmp_path / "config.json").write_text(est.get_booster().save_config())
    live = forest_from_xgboost(est, X, y=y)
    alone = forest_from_xgboost(tmp_path / "m.json", X, y=y)  # λ and η solved from the tree's weights
    configured = forest_from_xgboost(tmp_path / "m.json", X, y=y, config=tmp_path / "config.json")
    assert alone.params["reg_lambda"] == pytest.approx(2.0, rel=1e-3) and alone.params["learning_rate"] == pytest.approx(0.2, rel=1e-3)
    assert configured.params["reg_lambda"] == 2.0 and live.params == configured.params
    for forest in (live, alone, configured):
        assert "class-counts" in forest.known[0]
        assert [n.counts.tolist() for n in forest.trees[0].nodes] == [n.counts.tolist() for n in live.trees[0].nodes]
    # the file does not say whether rows were subsampled; the training rows' hessians matching every cover do
    assert "no row subsampled" in alone.params["rows_once"] and claims_hold(alone, X, y.cat.codes.to_numpy()) == (4, 1)
    assert claims_hold(live, X, y.cat.codes.to_numpy()) == (4, 1)  # the configuration says: no subsampling


def test_stumps_publish_row_counts_but_their_weights_do_not_solve_lambda(adult, tmp_path):
    X, D, y = adult
    est = xgb.XGBClassifier(n_estimators=2, max_depth=1, n_jobs=1).fit(D, y.cat.codes)
    est.get_booster().save_model(tmp_path / "m.json")
    forest = forest_from_xgboost(tmp_path / "m.json", X, y=y)
    assert forest.known[0] == {"sample-counts", "cover", "leaf-values"}
    assert forest.trees[0].root.n_samples == len(X)


def test_lightgbm_text_file_and_dump_agree_and_parameters_give_the_class_counts(adult, tmp_path, claims_hold):
    X, D, y = adult
    est = lgb.LGBMClassifier(n_estimators=4, num_leaves=12, reg_lambda=1.5, verbose=-1, n_jobs=1).fit(D, y.cat.codes)
    est.booster_.save_model(tmp_path / "m.txt")
    from_text = forest_from_lightgbm(tmp_path / "m.txt", X, y=y)
    dump = est.booster_.dump_model()
    bare = forest_from_lightgbm(dump, X, y=y)
    given = forest_from_lightgbm(dump, X, y=y, params={"learning_rate": 0.1, "lambda_l2": 1.5})
    step = newton_step(from_text)
    assert isinstance(step, NewtonStep) and (step.learning_rate, step.l2) == (0.1, 1.5) and step == newton_step(given)
    assert from_text.params == {"learning_rate": 0.1, "lambda_l2": 1.5, "newton_step": step.to_params()} == given.params
    assert "class-counts" in from_text.known[0] and "class-counts" in given.known[0]
    assert bare.known[0] == {"sample-counts", "cover", "leaf-values"}
    assert bare.params == {"rounds_hidden": newton_step(bare)} and "no training parameters" in str(newton_step(bare))
    assert np.array_equal(from_text.predict_proba(X), bare.predict_proba(X))
    codes = y.cat.codes.to_numpy()
    assert claims_hold(from_text, X, codes) == (4, 1)
    assert claims_hold(bare, X, codes) == (4, 0)


def test_bagged_lightgbm_trees_count_their_bag(adult):
    X, D, y = adult
    est = lgb.LGBMClassifier(n_estimators=3, subsample=0.6, subsample_freq=1, verbose=-1, n_jobs=1).fit(D, y.cat.codes)
    forest = forest_from_lightgbm(est, X, y=y)
    assert forest.multiplicities == [None] * 3
    root = forest.trees[0].root
    assert root.n_samples < len(X) and root.counts.sum() == root.n_samples
    share = (y == ">50K").mean()
    assert abs(root.counts[1] / root.n_samples - share) < 0.03  # a bag's share of positives


def test_unsupported_models_and_files_are_refused_with_their_reason(adult, tmp_path):
    X, D, y = adult
    est = xgb.XGBClassifier(n_estimators=1, max_depth=2, n_jobs=1).fit(D, y.cat.codes)
    with pytest.raises(ModelImportError, match=r"not JSON \(save the model as JSON"):
        forest_from_xgboost(est.get_booster().save_raw(raw_format="ubj"), X, y=y)
    with pytest.raises(ModelImportError, match="no such XGBoost model file"):
        forest_from_xgboost(tmp_path / "none.json", X, y=y)
    reg = xgb.XGBRegressor(n_estimators=1, max_depth=2, objective="reg:absoluteerror").fit(D, y.cat.codes)
    with pytest.raises(ModelImportError, match="objective 'reg:absoluteerror': its leaf values are not linear"):
        forest_from_xgboost(reg, X, y=y)
    cats = X[["sex", "race"]].copy()
    native = xgb.XGBClassifier(n_estimators=1, max_depth=2, enable_categorical=True, tree_method="hist").fit(cats, y.cat.codes)
    with pytest.raises(ModelImportError, match="categorical splits .* are not imported"):
        forest_from_xgboost(native, X, y=y)
    native = lgb.LGBMClassifier(n_estimators=2, verbose=-1, min_child_samples=5).fit(cats, y.cat.codes)
    with pytest.raises(ModelImportError, match="categorical splits"):
        forest_from_lightgbm(native, X, y=y)
    (tmp_path / "junk.txt").write_text("not a model\n")
    with pytest.raises(ModelImportError, match="junk.txt: not a LightGBM model text file"):
        forest_from_lightgbm(tmp_path / "junk.txt", X, y=y)
    with pytest.raises(ModelImportError, match="pass classes: the model numbers its 2 classes"):
        forest_from_xgboost(est, X, class_attribute="income")


def test_files_are_read_without_the_libraries(adult, tmp_path):
    X, D, y = adult
    xgb.XGBClassifier(n_estimators=2, max_depth=3, n_jobs=1).fit(D, y.cat.codes).get_booster().save_model(tmp_path / "m.json")
    lgb.LGBMClassifier(n_estimators=2, verbose=-1, n_jobs=1).fit(D, y.cat.codes).booster_.save_model(tmp_path / "m.txt")
    script = f"""
import sys
class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('xgboost', 'lightgbm'):
            raise ImportError(name + ' is blocked')
sys.meta_path.insert(0, Block())
from ppdm.data.datasets import load_adult
from ppdm.tree import forest_from_lightgbm, forest_from_xgboost
rows = load_adult('train')[0].drop(columns='fnlwgt')
X = rows.drop(columns='income')
print(forest_from_xgboost({str(tmp_path / 'm.json')!r}, X, y=rows['income'], verify=False).n_trees,
      forest_from_lightgbm({str(tmp_path / 'm.txt')!r}, X, y=rows['income'], verify=False).n_trees)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env={"PYTHONPATH": str(REPO / "src")})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2", "2"]


def test_lightgbm_names_with_spaces_are_traced_back_to_the_columns(tmp_path):
    # LightGBM writes "Securities Account" as "Securities_Account" in its model file; the file
    # alone (as the CLI reads it) must still find the column, numeric and one-hot alike
    r = np.random.default_rng(0)
    X = pd.DataFrame({"Securities Account": r.integers(0, 2, 400), "home town": r.choice(["a", "b c"], 400)})
    y = pd.Series(np.where((X["Securities Account"] == 1) ^ (r.random(400) < 0.2), 1, 0), name="Personal Loan")
    D = pd.get_dummies(X).astype(float)
    est = lgb.LGBMClassifier(n_estimators=3, num_leaves=4, verbose=-1, n_jobs=1).fit(D, y)
    est.booster_.save_model(tmp_path / "m.txt")
    forest = forest_from_lightgbm(tmp_path / "m.txt", X.assign(**{"Personal Loan": y}), y=y)
    assert set(forest.trees[0].attributes) <= {"Securities Account", "home town"}
    assert (forest.predict(X) == est.predict(D)).all()
