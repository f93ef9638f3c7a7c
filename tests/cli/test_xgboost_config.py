"""An XGBoost JSON model file does not say whether its rounds subsampled the rows. ppdm settles it
from the training rows (every leaf's cover is their hessians summed there only when no row was
left out), or from the training configuration (``--xgboost-config``, ``config=``); otherwise only
the first round is tied to the training rows, and the verdict is "not judged"."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import ppdm
from ppdm.errors import DataError, ModelImportError
from ppdm.tree.model_files import save_model

xgboost = pytest.importorskip("xgboost")

FEATURES = ["parents", "has_nurs", "form", "children", "housing", "finance", "social", "health"]
KNOWN = ["--known", "parents,has_nurs,form,health", "--sensitive", "finance"]


@pytest.fixture(scope="module")
def files(tmp_path_factory, nursery):
    frame, _ = nursery
    root = tmp_path_factory.mktemp("xgboost-config")
    train = frame[frame["class"] != "recommend"].sample(800, random_state=0).reset_index(drop=True)
    train["class"] = train["class"].astype(str)
    D = pd.get_dummies(train[FEATURES]).astype(float)
    y = train["class"].astype("category").cat.codes
    for name, subsample in (("whole", 1.0), ("drawn", 0.8)):
        model = xgboost.XGBClassifier(n_estimators=4, max_depth=3, subsample=subsample, random_state=0).fit(D, y)
        model.save_model(root / f"{name}.json")
        (root / f"{name}.config.json").write_text(model.get_booster().save_config())
    train.to_csv(root / "train.csv", index=False)
    return root


def test_the_training_rows_settle_whether_rows_were_subsampled(files):
    frame = pd.read_csv(files / "train.csv")
    whole = ppdm.load_model(files / "whole.json", frame)
    assert all(m is not None and (m == 1).all() for m in whole.multiplicities) and "no row subsampled" in whole.params["rows_once"]
    drawn = ppdm.load_model(files / "drawn.json", frame)
    assert all(m is None for m in drawn.multiplicities) and "rows_once" not in drawn.params
    sample = ppdm.load_model(files / "whole.json", frame.iloc[:700])  # not the training rows: nothing to check them against
    assert all(m is None for m in sample.multiplicities)
    configured = ppdm.load_model(files / "drawn.json", frame, config=files / "drawn.config.json")  # a path, as the command line gives it
    assert all(m is None for m in configured.multiplicities) and configured.params["subsample"] == pytest.approx(0.8)


def test_every_round_is_read_when_rows_were_not_subsampled(run, files, tmp_path):
    """Four known columns: a model whose rounds subsampled the rows has no count the audit can tie to
    the records (refused in one line); one whose rounds did not is read on every round, from the
    rows alone or from its configuration, with a verdict; the record cites the configuration."""
    drawn = run("audit", "--model", files / "drawn.json", "--data", files / "train.csv", *KNOWN)
    assert drawn.exit_code == 2 and "no tree's counts can be tied to the table's records" in drawn.output
    for extra in ([], ["--xgboost-config", files / "whole.config.json", "--record", tmp_path / "record.json"]):
        whole = run("audit", "--model", files / "whole.json", "--data", files / "train.csv", *KNOWN, *extra)
        assert whole.exit_code == 0, whole.output
        assert "all 16 boosting trees" in whole.output and "not judged" not in whole.output
    assert "whole.config.json" in json.dumps(json.loads((tmp_path / "record.json").read_text()))


def test_the_configuration_is_xgboosts_only(files, tmp_path):
    frame = pd.read_csv(files / "train.csv")
    save_model(ppdm.load_model(files / "whole.json", frame), tmp_path / "ppdm.json")
    with pytest.raises(ModelImportError, match="XGBoost's; this is a ppdm-forest model"):
        ppdm.load_model(tmp_path / "ppdm.json", frame, config=files / "whole.config.json")


def test_the_membership_road_says_where_the_configuration_goes(run, files):
    result = run("audit", "--membership", "--model", files / "whole.json", "--population", files / "train.csv", "--xgboost-config", files / "whole.config.json")
    assert result.exit_code == 2 and "ppdm.load_model(MODEL, candidates, config=CONFIG)" in result.output


def _model_file(nursery, path, rows: int, rounds: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """``rows`` Nursery people (four classes, as text), a random half of them members, and an
    XGBoost model of ``rounds`` rounds fitted on the members, saved as JSON at ``path``."""
    frame, _ = nursery
    frame = frame[frame["class"] != "recommend"].sample(rows, random_state=seed).reset_index(drop=True)
    frame["class"] = frame["class"].astype(str)
    member = np.random.default_rng(seed).random(len(frame)) < 0.5
    train = frame[member]
    D = pd.get_dummies(train[FEATURES]).astype(float)
    xgboost.XGBClassifier(n_estimators=rounds, max_depth=3, random_state=0).fit(D, train["class"].astype("category").cat.codes).save_model(path)
    return frame, member


def test_a_complete_population_with_its_truth_reads_every_round_of_the_file(nursery, tmp_path):
    """Membership over every training record and as many non-members: the members are the
    training rows, so the file's rounds are checked on them and every round's leaf values and
    covers are read (before: the first round alone, from an XGBoost file); the truth meets every
    row and no proof is wrong."""
    frame, member = _model_file(nursery, tmp_path / "m.json", rows=600, rounds=3, seed=3)
    pool = frame.assign(member=member)
    done = ppdm.audit(tmp_path / "m.json", membership=pool, blackbox=False, exact_time_limit=2, time_limit=10, progress=False)
    s = done.membership.summary()
    assert "rounds used: 0, 1, 2 of 3" in s["trees_used"]
    assert s["wrong_proved_members"] == 0 and s["wrong_proved_non_members"] == 0
    assert done.membership.rows.truth_violations(member).size == 0
    half = ppdm.audit(tmp_path / "m.json", membership=pool[~member | (np.arange(len(pool)) % 2 == 0)], sample=True, blackbox=False, progress=False)
    assert "rounds used: 0 of 3" in half.membership.summary()["trees_used"]  # some members only: nothing to check the file's rounds on


def test_a_wrong_truth_is_named_as_such_not_as_a_bad_model_file(nursery, tmp_path):
    """Reading the file over members who are not its training rows fails its own count check; the
    audit then reads it over the candidates and says the truth is wrong, as for any model."""
    frame, member = _model_file(nursery, tmp_path / "m.json", rows=400, rounds=2, seed=4)
    wrong = member.copy()
    wrong[np.flatnonzero(member)[:5]] = False
    wrong[np.flatnonzero(~member)[:5]] = True  # as many members, five of them the wrong people
    with pytest.raises(DataError, match="the truth breaks"):
        ppdm.audit(tmp_path / "m.json", membership=frame.assign(member=wrong), blackbox=False, progress=False)
