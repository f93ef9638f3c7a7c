"""A membership audit's truth given as the training rows' identifiers (issue 27): the same
answer as a member column, every identifier accounted for, bad identifiers refused in one line."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import ppdm
from ppdm.cli import main
from ppdm.errors import DataError, PpdmError
from ppdm.tree import save_forest

from families import FAMILIES


@pytest.fixture(scope="module")
def registry(nursery_small):
    sample, X, D, y = nursery_small
    member = np.random.default_rng(5).random(len(sample)) < 0.5
    model = FAMILIES["random-forest"](X[member].reset_index(drop=True), D[member].reset_index(drop=True), y[member].reset_index(drop=True))
    population = sample.assign(ID=[f"P{1000 + i}" for i in range(len(sample))])
    return model, population, population["ID"][member].tolist(), member


def test_identifiers_give_the_same_audit_as_a_member_column(registry):
    model, population, ids, member = registry
    by_column = ppdm.audit(model, membership=population.drop(columns="ID").assign(member=member)).membership
    by_ids = ppdm.audit(model, membership=population, member_ids=ids + ["P9999"], id_column="ID").membership
    np.testing.assert_array_equal(by_ids.truth, member)
    np.testing.assert_allclose(by_ids.probability, by_column.probability)
    assert by_ids.summary()["auc"] == by_column.summary()["auc"]
    assert by_ids.details["ids_not_candidates"] == 1 and by_ids.details["first_id_not_candidate"] == "P9999"


def test_identifiers_are_read_from_a_file_with_or_without_a_header(registry, tmp_path):
    model, population, ids, member = registry
    plain, table = tmp_path / "ids.txt", tmp_path / "ids.csv"
    plain.write_text("\n".join(ids) + "\n")
    pd.DataFrame({"ID": ids, "other": 1}).to_csv(table, index=False)
    for path in (plain, table):
        result = ppdm.audit(model, membership=population, member_ids=path, id_column="ID").membership
        np.testing.assert_array_equal(result.truth, member)


def test_bad_identifiers_are_refused_in_one_line(registry, tmp_path):
    model, population, ids, _ = registry
    with pytest.raises(PpdmError, match="give id_column="):
        ppdm.audit(model, membership=population, member_ids=ids)
    with pytest.raises(DataError, match="no identifier column 'id'"):
        ppdm.audit(model, membership=population, member_ids=ids, id_column="id")
    twice = population.assign(ID=population["ID"].where(population.index != 3, population["ID"][2]))
    with pytest.raises(DataError, match="names two candidates"):
        ppdm.audit(model, membership=twice, member_ids=ids, id_column="ID")
    with pytest.raises(PpdmError, match="two truths") as both:
        ppdm.audit(model, membership=population.assign(member=True), member_ids=ids, id_column="ID")
    assert both.value.for_command_line({"member_ids": "--member-ids"}) == (
        "two truths: the population's column 'member' and the training rows' identifiers (--member-ids); give one"
    )
    with pytest.raises(DataError, match="no identifier column 'pid'"):  # the wrong column first, not the two truths
        ppdm.audit(model, membership=population.assign(member=True), member_ids=ids, id_column="pid")
    wrong = tmp_path / "wrong.csv"
    pd.DataFrame({"person": ids, "x": 1}).to_csv(wrong, index=False)
    with pytest.raises(DataError, match="needs the column 'ID'"):
        ppdm.audit(model, membership=population, member_ids=wrong, id_column="ID")
    with pytest.raises(PpdmError, match="add membership="):
        ppdm.audit(model, population, member_ids=ids, id_column="ID")


def test_the_cli_reads_identifiers(registry, tmp_path):
    model, population, ids, member = registry
    save_forest(model, tmp_path / "forest.json")
    population.to_csv(tmp_path / "population.csv", index=False)
    (tmp_path / "ids.txt").write_text("\n".join(ids) + "\n")
    args = ["audit", "--membership", "--model", str(tmp_path / "forest.json"), "--population", str(tmp_path / "population.csv")]
    run = CliRunner().invoke(main, [*args, "--member-ids", str(tmp_path / "ids.txt"), "--id-column", "ID"])
    assert run.exit_code == 0, run.output
    assert "AUC" in run.output
    bad = CliRunner().invoke(main, [*args, "--member-ids", str(tmp_path / "ids.txt")])
    assert bad.exit_code == 2 and len(bad.output.strip().splitlines()) == 1 and "--id-column" in bad.output
