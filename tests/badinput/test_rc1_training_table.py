"""Root cause 1: a table that cannot be the model's training data is refused, for every model, with
the counts that disagree; a sample is audited only when declared (--sample)."""

from __future__ import annotations

import pandas as pd
import pytest

#: Tables that cannot be the 300 training rows: (name, how to make it, its records).
TABLES = {
    "first100": (lambda f: f.head(100), 100),
    "one_row": (lambda f: f.head(1), 1),
    "one_fewer": (lambda f: f.iloc[:-1], 299),
    "one_more": (lambda f: pd.concat([f, f.head(1)]), 301),
    "twice": (lambda f: pd.concat([f, f]), 600),
}


def _table(world, tmp_path, name, source="data"):
    make, n = TABLES[name]
    path = tmp_path / f"{name}.csv"
    make(pd.read_csv(getattr(world, source))).to_csv(path, index=False)
    return path, n


@pytest.mark.parametrize("name", sorted(TABLES))
def test_a_tree_refuses_a_table_of_another_size(world, refuse, tmp_path, name):
    path, n = _table(world, tmp_path, name)
    out = tmp_path / "out.json"
    refuse(["audit", "--tree", world.tree, "--data", path, "--out", out, "-q"], f"the table has {n:,} record{'' if n == 1 else 's'} but the model was trained on 300", "(--sample)",
           outputs=[out])


@pytest.mark.parametrize("name", ["first100", "one_fewer", "twice"])
def test_a_forest_refuses_a_table_of_another_size(world, refuse, tmp_path, name):
    path, n = _table(world, tmp_path, name, "train")
    refuse(["audit", "--model", world.forest, "--data", path, "-q"], f"the table has {n:,} record{'' if n == 1 else 's'} but the model was trained on 300")


@pytest.mark.parametrize("model", ["xgb", "lgb"])
def test_a_boosted_model_refuses_a_table_of_another_size(world, refuse, needs, tmp_path, model):
    path, n = _table(world, tmp_path, "first100", "train")
    refuse(["audit", "--model", needs(model), "--data", path, "-q"], f"{n:,}")


def test_the_dask_backend_refuses_one_part_of_the_training_table(world, refuse, tmp_path):
    pytest.importorskip("dask.dataframe")
    pytest.importorskip("pyarrow")
    part = tmp_path / "part-0.parquet"
    pd.read_csv(world.data).head(100).to_parquet(part)
    refuse(["audit", "--tree", world.tree, "--data", part, "--backend", "dask", "-q"], "the table has 100 records but the model was trained on 300")


def test_defend_refuses_a_tree_with_another_table(world, refuse, tmp_path):
    path, _ = _table(world, tmp_path, "first100")
    out = tmp_path / "defended.json"
    refuse(["defend", "--model", world.tree, "--data", path, "--quick", "--out", out, "-q"], "the tree was trained on 300 rows, the data has 100", outputs=[out])


def test_audit_rules_refuses_rules_mined_from_another_table(world, refuse, tmp_path):
    path, _ = _table(world, tmp_path, "twice")
    refuse(["audit-rules", "--data", path, "--sensitive", "class", "--rules", world.rules, "-q"], "mined from 300 records", "has 600")


def test_the_python_audit_refuses_a_sample_unless_declared(world, raises):
    import ppdm
    from ppdm.errors import DataError

    tree = ppdm.load_model(world.tree)
    frame = pd.read_csv(world.data)
    raises(lambda: ppdm.audit(tree, frame.head(100)), DataError, "the table has 100 records but the model was trained on 300", "sample=True")
    assert ppdm.audit(tree, frame.head(100), sample=True).estimate is not None  # declared: audited


def test_the_python_defend_refuses_a_tree_with_another_table(world, raises):
    import ppdm
    from ppdm.errors import DataError

    tree = ppdm.load_model(world.tree)
    frame = pd.read_csv(world.data)
    raises(lambda: ppdm.defend(tree, frame.iloc[:-1], families=["pruning"]), DataError, "trained on 300 rows, the data has 299")
