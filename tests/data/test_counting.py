"""The counting backends agree: pandas and Dask (local scheduler, and a distributed client started
here) give the same groups, counts, posteriors, trees and rules on Adult, Nursery and random tables."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.models.maxent import maxent_attack
from ppdm.data.counting import (
    DaskCounting,
    PandasCounting,
    compress,
    group_codes,
    is_dask,
)
from ppdm.data.datasets import load_dataset
from ppdm.data.hierarchy import adult_hierarchies
from ppdm.data.lazy import read_lazy
from ppdm.data.qigroups import QIGroups
from ppdm.data.synthetic import sample_adult, write_scale_adult
from ppdm.errors import DataError
from ppdm.learn import C45Classifier, ID3Classifier
from ppdm.learn.kanonymity import KAnonymousTreeClassifier
from ppdm.rules.mining import mine_rules
from ppdm.tree.io import tree_to_dict

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")

TOL = 1e-12
ADULT_CATS = ["workclass", "education", "marital-status", "occupation", "relationship", "race", "sex"]


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def adult() -> pd.DataFrame:
    return load_dataset("adult")[0].iloc[:3000].reset_index(drop=True)


@pytest.fixture(scope="module")
def nursery() -> pd.DataFrame:
    return load_dataset("nursery")[0]


def random_table(seed: int, n: int = 3000) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "a": rng.choice(["x", "y", "z"], n),
        "b": pd.Categorical(rng.choice(["p", "q", "r", "s"], n), categories=["s", "r", "q", "p", "unused"]),
        "c": rng.integers(0, 3, n),
        "num": rng.integers(0, 40, n).astype(float),
        "cls": rng.choice(["no", "yes"], n, p=[0.7, 0.3]),
    })


def both(frame: pd.DataFrame, parts: int = 4):
    return frame, dd.from_pandas(frame, npartitions=parts)


# -- the primitive --------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1])
def test_distinct_same_on_both_backends_and_client(seed, client):
    frame = random_table(seed)
    frame.loc[frame.index[::17], "a"] = None  # missing values form groups of their own
    columns = ["a", "b", "c"]
    want = PandasCounting().distinct(frame, columns)
    for counting in (DaskCounting(progress=False), DaskCounting(client, progress=False), DaskCounting(progress=False, batch=1)):
        got = counting.distinct(dd.from_pandas(frame, npartitions=5), columns)
        pd.testing.assert_frame_equal(got.table, want.table)
        np.testing.assert_array_equal(got.counts, want.counts)
    codes, _ = group_codes(frame, columns)
    np.testing.assert_array_equal(np.bincount(codes), want.counts)


def test_group_ids_written_back_as_a_column(adult):
    frame, lazy = both(adult)
    groups = QIGroups.from_frame(frame, ["education", "sex", "race"])
    counting = DaskCounting(progress=False)
    found = counting.distinct(lazy, ["education", "sex", "race"])
    with_ids = counting.with_group_ids(lazy, ["education", "sex", "race"], found.table)
    np.testing.assert_array_equal(with_ids["__ppdm_group__"].compute().to_numpy(), groups.group_of_record)


def test_pandas_frames_pass_through_compress(adult):
    frame, weights = compress(adult, ["sex"])
    assert frame is adult and weights is None and not is_dask(adult)


# -- the audit ------------------------------------------------------------------------------------
def _audit_pair(tree, frame, lazy, threat, client=None):
    a = maxent_attack(tree, frame, threat=threat)
    b = maxent_attack(tree, lazy, threat=threat, client=client, progress=False)
    pd.testing.assert_frame_equal(a.groups.table, b.groups.table)
    np.testing.assert_array_equal(a.groups.counts, b.groups.counts)
    assert np.abs(a.posterior - b.posterior).max() <= TOL
    sa, sb = a.summary(), b.summary()
    for key in ("records", "targets", "qi_groups", "exposed_records", "certain_records", "certain_right", "certain_wrong",
                "confidence_in_true_value", "beyond_prior", "prior_alone"):
        assert sa.get(key) == sb.get(key), key
    for key in ("overall_divergence", "attacker_accuracy", "mean_confidence_in_true_value"):
        assert abs(sa[key] - sb[key]) <= TOL, key
    return a, b


def test_audit_same_on_adult(adult, client):
    frame, lazy = both(adult)
    tree = ID3Classifier(max_depth=2).fit(frame[ADULT_CATS], frame["income"]).tree_
    tree.class_attribute = "income"
    _audit_pair(tree, frame, lazy, None)  # paper 000's setting: explicit slots
    _audit_pair(tree, frame, lazy, ThreatModel(sensitive="income", known=("education", "sex", "race")), client)  # factored
    a, _ = _audit_pair(tree, frame, lazy, ThreatModel(sensitive="race", known=("education", "sex")))  # a sensitive input
    assert a.groups.n_groups > 10


def test_audit_same_on_nursery(nursery):
    frame, lazy = both(nursery, 3)
    x = ["parents", "has_nurs", "form", "children", "housing"]
    tree = ID3Classifier(max_depth=3).fit(frame[x], frame["class"]).tree_
    tree.class_attribute = "class"
    _audit_pair(tree, frame, lazy, None)
    _audit_pair(tree, frame, lazy, ThreatModel(sensitive="class", known=("parents", "form")))


def test_audit_same_on_random_tables():
    for seed in (2, 3):
        frame, lazy = both(random_table(seed))
        tree = C45Classifier(max_depth=3).fit(frame[["a", "b", "num"]], frame["cls"]).tree_
        tree.class_attribute = "cls"
        _audit_pair(tree, frame, lazy, None)
        _audit_pair(tree, frame, lazy, ThreatModel(sensitive="cls", known=("a", "c")))


def test_known_individuals_need_pandas(adult):
    _, lazy = both(adult)
    tree = ID3Classifier(max_depth=2).fit(adult[ADULT_CATS], adult["income"]).tree_
    tree.class_attribute = "income"
    with pytest.raises(DataError, match="known individuals"):
        maxent_attack(tree, lazy, threat=ThreatModel(sensitive="income", known=("sex",), known_individuals=(0,)), progress=False)


# -- the learners and rule mining -----------------------------------------------------------------
def _same_tree(a, b) -> None:
    assert json.dumps(tree_to_dict(a.tree_), sort_keys=True, default=str) == json.dumps(tree_to_dict(b.tree_), sort_keys=True, default=str)


def test_learners_same_on_adult(adult):
    frame, lazy = both(adult)
    for make, cols in (
        (lambda: ID3Classifier(max_depth=4), ADULT_CATS),
        (lambda: C45Classifier(max_depth=4), ["age", "hours-per-week", "education", "sex", "relationship"]),
        (lambda: KAnonymousTreeClassifier(k=30, quasi_identifiers=["education", "sex", "race"], hierarchies=adult_hierarchies(), max_depth=3),
         ["education", "sex", "race", "relationship"]),
        (lambda: KAnonymousTreeClassifier(k=30, algorithm="c45", quasi_identifiers=["age", "sex"], max_depth=3), ["age", "sex", "relationship"]),
    ):
        a, b = make().fit(frame[cols], frame["income"]), make().fit(lazy[cols], lazy["income"])
        _same_tree(a, b)
        if hasattr(a, "spans_"):
            np.testing.assert_array_equal(a.spans_.population, b.spans_.population)
            assert a.anonymity_ == b.anonymity_


def test_learners_same_on_nursery_and_random(nursery):
    frame, lazy = both(nursery, 3)
    x = ["parents", "has_nurs", "form", "children"]
    _same_tree(ID3Classifier(max_depth=3).fit(frame[x], frame["class"]), ID3Classifier(max_depth=3).fit(lazy[x], lazy["class"]))
    frame, lazy = both(random_table(4))
    x = ["a", "b", "num"]
    _same_tree(C45Classifier().fit(frame[x], frame["cls"]), C45Classifier().fit(lazy[x], lazy["cls"]))


def test_rules_same(nursery):
    frame, lazy = both(nursery, 3)
    qi = ["parents", "has_nurs", "form"]
    a = mine_rules(frame, qi, "class", 0.01, 0.5)
    b = mine_rules(lazy, qi, "class", 0.01, 0.5)
    assert [(r.antecedent, r.consequent) for r in a.rules] == [(r.antecedent, r.consequent) for r in b.rules]
    assert max((abs(r.support - s.support) + abs(r.confidence - s.confidence) for r, s in zip(a.rules, b.rules)), default=0) <= TOL
    assert a.n_records == b.n_records


# -- inputs at scale ------------------------------------------------------------------------------
def test_scale_generator_is_seeded_and_read_lazily(tmp_path, adult):
    files = write_scale_adult(tmp_path / "t", 2500, 1000, seed=3, source=adult)
    assert [f.name for f in files] == ["part-00000.parquet", "part-00001.parquet", "part-00002.parquet"]
    again = write_scale_adult(tmp_path / "u", 2500, 1000, seed=3, source=adult)
    pd.testing.assert_frame_equal(pd.read_parquet(files[1]), pd.read_parquet(again[1]))
    lazy = read_lazy(str(tmp_path / "t" / "part-*.parquet"))
    assert lazy.npartitions == 3 and list(lazy.columns) == list(adult.columns)
    whole = read_lazy(tmp_path / "t").compute()
    assert len(whole) == 2500 and whole["age"].between(17, 90).all()
    sample = sample_adult(adult, 500, np.random.default_rng(0))
    assert set(sample["education"]) <= set(adult["education"]) and (sample["fnlwgt"] > 0).all()


def test_read_lazy_csv_and_errors(tmp_path):
    frame = random_table(5, 200)
    frame.iloc[:100].to_csv(tmp_path / "a.csv", index=False)
    frame.iloc[100:].to_csv(tmp_path / "b.csv", index=False)
    lazy = read_lazy(str(tmp_path / "*.csv"))
    assert len(lazy.compute()) == 200
    with pytest.raises(DataError, match="no Parquet or CSV file"):
        read_lazy(str(tmp_path / "nothing-*.parquet"))


def test_cli_audit_with_the_dask_backend(tmp_path, adult):
    from click.testing import CliRunner

    from ppdm.cli import main
    from ppdm.tree import save_tree

    tree = ID3Classifier(max_depth=2).fit(adult[ADULT_CATS], adult["income"]).tree_
    tree.class_attribute = "income"
    save_tree(tree, tmp_path / "tree.json")
    adult.to_csv(tmp_path / "data.csv", index=False)
    adult.iloc[:1500].to_parquet(tmp_path / "part-0.parquet")
    adult.iloc[1500:].to_parquet(tmp_path / "part-1.parquet")
    outs = {}
    for backend, data in (("pandas", tmp_path / "data.csv"), ("dask", tmp_path / "part-*.parquet")):
        out = tmp_path / f"{backend}.json"
        args = ["audit", "--tree", str(tmp_path / "tree.json"), "--data", str(data),
                "--known", "education,sex,race,workclass", "--backend", backend, "--out", str(out), "--quiet"]
        done = CliRunner().invoke(main, args, catch_exceptions=False)
        assert done.exit_code == 0, done.output
        outs[backend] = json.loads(out.read_text())
    a, b = outs["pandas"], outs["dask"]
    assert a["summary"]["records"] == b["summary"]["records"] and a["summary"]["qi_groups"] == b["summary"]["qi_groups"]
    for ga, gb in zip(a["groups"], b["groups"]):
        assert ga["qi"] == gb["qi"] and ga["records"] == gb["records"]
        assert max(abs(x - y) for x, y in zip(ga["posterior"], gb["posterior"])) <= TOL


def test_ppdm_runs_without_dask():
    code = (
        "import sys; sys.modules['dask'] = None; sys.modules['distributed'] = None\n"
        "from ppdm.data.datasets import load_dataset\nfrom ppdm.learn import ID3Classifier\n"
        "from ppdm.attacks.models.maxent import maxent_attack\nfrom ppdm.rules.mining import mine_rules\n"
        "f = load_dataset('nursery')[0].iloc[:500]\n"
        "t = ID3Classifier(max_depth=2).fit(f[['parents', 'form']], f['class']).tree_; t.class_attribute = 'class'\n"
        "mine_rules(f, ['parents'], 'class', 0.1, 0.5)\n"
        "print(maxent_attack(t, f).groups.n_groups)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                          env={**__import__("os").environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")})
    assert done.returncode == 0, done.stderr
    assert int(done.stdout.strip()) > 1


def test_level_wise_counts_when_distinct_rows_do_not_fit(adult, nursery):
    few = {"max_distinct_rows": 10}  # every table is "too large": one pass per level
    frame, lazy = both(adult.iloc[:2000])
    _same_tree(ID3Classifier(max_depth=3).fit(frame[ADULT_CATS], frame["income"]), ID3Classifier(max_depth=3, **few).fit(lazy[ADULT_CATS], lazy["income"]))
    cols = ["age", "fnlwgt", "education", "sex"]
    _same_tree(C45Classifier(max_depth=4).fit(frame[cols], frame["income"]), C45Classifier(max_depth=4, **few).fit(lazy[cols], lazy["income"]))
    frame, lazy = both(random_table(6))
    _same_tree(C45Classifier().fit(frame[["a", "b", "num"]], frame["cls"]), C45Classifier(**few).fit(lazy[["a", "b", "num"]], lazy["cls"]))
    frame, lazy = both(nursery, 3)
    x = ["parents", "has_nurs", "form"]
    _same_tree(ID3Classifier(max_depth=2).fit(frame[x], frame["class"]), ID3Classifier(max_depth=2, **few).fit(lazy[x], lazy["class"]))
    with pytest.raises(DataError, match="kADET"):
        KAnonymousTreeClassifier(k=5, **few).fit(lazy[x], lazy["class"])
    with pytest.raises(DataError, match="depth-first"):
        ID3Classifier(builder="best-first", **few).fit(lazy[x], lazy["class"])
    assert ID3Classifier().max_distinct_rows == C45Classifier().max_distinct_rows == KAnonymousTreeClassifier().max_distinct_rows == 5_000_000

def test_level_wise_source_makes_one_pass_per_level(nursery):
    from ppdm.learn.criteria import get_criterion
    from ppdm.learn.grower import Grower
    from ppdm.learn.levelwise import LevelCounts, domains

    lazy = dd.from_pandas(nursery, npartitions=2)
    x = ["parents", "has_nurs", "form"]
    attributes, classes = domains(lazy, x, "class")
    source = LevelCounts(lazy, attributes, "class", classes, DaskCounting(progress=False))
    tree = Grower(source, attributes, get_criterion("entropy"), list(classes), builder="level-wise").grow()
    assert 1 < source.passes <= tree.depth + 1  # at most one per level (none for a level of leaves that cannot split)
