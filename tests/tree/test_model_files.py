"""``load_model``: one reader for every model file (ppdm tree and forest JSON, XGBoost JSON,
LightGBM text and dump JSON), telling them apart by content, with one-line errors naming the file."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier

from ppdm.errors import ModelImportError, PpdmError, TreeFormatError
from ppdm.learn import C45Classifier
from ppdm.tree import Forest, Tree, forest_from_sklearn, save_forest, save_tree
from ppdm.tree.model_files import load_model, model_kind

xgb = pytest.importorskip("xgboost")
lgb = pytest.importorskip("lightgbm")


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    rng = np.random.default_rng(2)
    n = 400
    frame = pd.DataFrame({"colour": pd.Categorical(rng.choice(["red", "green", "blue"], n)), "size": rng.normal(size=n).round(2)})
    score = (frame["colour"] == "red") + frame["size"] + rng.normal(scale=0.5, size=n)
    frame["label"] = pd.Categorical(np.where(score > 0.5, "yes", "no"))
    return frame


@pytest.fixture(scope="module")
def files(table, tmp_path_factory):
    folder = tmp_path_factory.mktemp("models")
    X, y = table[["colour", "size"]], table["label"]
    D = pd.get_dummies(X).astype(float)
    save_tree(C45Classifier(max_depth=3).fit(X, y).tree_, folder / "tree.json")
    rf = RandomForestClassifier(3, max_depth=3, random_state=0).fit(D, y)
    save_forest(forest_from_sklearn(rf, X, y=y), folder / "forest.json")
    booster = xgb.XGBClassifier(n_estimators=3, max_depth=3, n_jobs=1).fit(D, y.cat.codes).get_booster()
    booster.save_model(folder / "model.xgb.json")
    lgbm = lgb.LGBMClassifier(n_estimators=3, num_leaves=8, min_child_samples=5, verbose=-1, n_jobs=1).fit(D, y.cat.codes)
    lgbm.booster_.save_model(folder / "model.lgb.txt")
    (folder / "dump.lgb.json").write_text(json.dumps(lgbm.booster_.dump_model()))
    return folder


@pytest.mark.parametrize(
    "name, kind, model_type, n_trees",
    [
        ("tree.json", "ppdm-tree", Tree, None),
        ("forest.json", "ppdm-forest", Forest, 3),
        ("model.xgb.json", "xgboost-json", Forest, 3),
        ("model.lgb.txt", "lightgbm-text", Forest, 3),
        ("dump.lgb.json", "lightgbm-json", Forest, 3),
    ],
)
def test_every_kind_is_told_apart_by_its_content(files, table, name, kind, model_type, n_trees):
    assert model_kind(files / name) == kind
    model = load_model(files / name, table, class_attribute="label")
    assert isinstance(model, model_type)
    if n_trees is not None:
        assert model.n_trees == n_trees and model.class_attribute == "label"
    assert list(model.predict(table)[:3]) == list(model.predict(table.head(3)))
    renamed = files / f"renamed-{name}.bin"  # the name does not matter
    renamed.write_bytes((files / name).read_bytes())
    assert model_kind(renamed) == kind


def test_the_class_column_is_found_when_it_is_the_only_candidate(files, table):
    assert load_model(files / "model.xgb.json", table).classes == ("no", "yes")


@pytest.mark.parametrize(
    "content, message",
    [
        (None, "no such model file"),
        (b"\x00\xff\xfe binary", "not a text file"),
        (b"{not json", "neither JSON (line 1, column 2"),
        (b"[1, 2]", "expected a JSON object"),
        (b'{"format": "ppdm-rules"}', "format 'ppdm-rules'"),
        (b'{"nodes": []}', "no 'format' field"),
        (b'{"format": "ppdm-forest", "version": 7}', "version: unsupported version 7"),
        (b'{"format": "ppdm-tree", "version": 1, "classes": "a"}', "classes: expected a list"),
    ],
)
def test_bad_files_get_one_line_naming_the_file(tmp_path, content, message):
    path = tmp_path / "model.json"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(TreeFormatError) as info:
        load_model(path)
    text = str(info.value)
    assert text.startswith(f"{path}: ") and message in text and "\n" not in text


def test_library_files_need_the_training_table(files, table):
    for name in ("model.xgb.json", "model.lgb.txt"):
        with pytest.raises(ModelImportError, match=r"pass the training table \(data=\)") as info:
            load_model(files / name)
        assert str(info.value).startswith(str(files / name))
    with pytest.raises(ModelImportError) as info:
        load_model(files / "model.xgb.json", table.drop(columns="colour"), class_attribute="label")
    assert str(info.value).startswith(str(files / "model.xgb.json")) and "\n" not in str(info.value)
    with pytest.raises(PpdmError, match="is a directory"):
        load_model(files)


def test_an_ambiguous_class_column_is_named_in_each_interface_s_words(files, table):
    """Python is told its argument; each command its own option (audit's --class, attack's --sensitive)."""
    with pytest.raises(ModelImportError, match=r"model.lgb.txt: pass class_attribute") as info:
        load_model(files / "model.lgb.txt", table.assign(other=table["label"]))
    for option in ("--class", "--sensitive"):
        line = info.value.for_command_line({"class_attribute": option})
        assert f"model.lgb.txt: name the class column of the table ({option}): the model has 2 classes" in line
        assert "class_attribute" not in line
