"""The question of membership: a population of candidates, its truth (a member column or the training rows' identifiers), the white-box audit and the black-box attacks (:mod:`ppdm.attacks.membership.audit`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ppdm.attacks.core.threat import ThreatModel
from ppdm.attacks.membership.audit import MembershipOptions, flags, members_by_id, membership_attack, with_blackbox
from ppdm.errors import DataError, ModelImportError, PpdmError, advising
from ppdm.pipeline.findings import Findings
from ppdm.pipeline.read import as_model, as_rules, as_table


@dataclass
class Population:
    """The candidates of a membership audit, the truth when known and where it came from, and the
    candidates the attacker knows are no training record (``non_members``, one boolean each)."""

    table: pd.DataFrame
    truth: str | np.ndarray | None
    hidden: list[str]
    details: dict[str, Any]
    non_members: np.ndarray | None = None


#: The population's truth column read when present, unless another is named.
MEMBER_COLUMN = "member"


def membership_truth(population: Any, member_column: str | None, member_ids: Any, id_column: str | None, non_members: Any = None) -> Population:
    """The population and its truth: a member column, or the training rows' identifiers; with the
    candidates the attacker knows are non-members (``non_members``: the name of a true/false column
    of the population, left out of the candidates' inputs, or one boolean per candidate)."""
    table = as_table(population)
    known = known_non_members(table, non_members, member_column)
    found = _truth_of(table, member_column, member_ids, id_column)
    if isinstance(non_members, str):
        found.hidden.append(non_members)
    found.non_members = known
    return found


def known_non_members(table: pd.DataFrame, non_members: Any, member_column: str | None) -> np.ndarray | None:
    """``non_members`` read as one boolean per candidate (a column of ``table`` or the values given)."""
    if isinstance(non_members, str) and non_members == member_column:
        raise PpdmError(f"non_members={non_members!r} is the truth's column: name the column of the candidates the attacker knows are non-members")
    return flags(table, non_members, "non-member")


def _truth_of(table: pd.DataFrame, member_column: str | None, member_ids: Any, id_column: str | None) -> Population:
    """The population and its truth (see :func:`membership_truth`): the default member column
    when the population has it; a column named otherwise must be there (a misspelt name was the
    audit of no truth, its target "cannot be checked", exit 0)."""
    if member_column not in (None, MEMBER_COLUMN) and member_column not in table.columns:
        raise DataError(f"the population has no member column {member_column!r} (its columns: {', '.join(map(str, table.columns[:8]))})")
    column = member_column if member_column is not None and member_column in table.columns else None
    if member_ids is None:
        if id_column is not None:
            raise PpdmError("id_column= names the candidates' identifiers for member_ids=: give the training rows' identifiers too")
        return Population(table, column, [column] if column else [], {})
    if id_column is None:
        raise advising(
            PpdmError("member_ids= are matched against the population's identifier column: give id_column= (e.g. 'ID')"),
            "give id_column= (e.g. 'ID')", "id_column", "give the population's column of identifiers",
        )
    ids = read_ids(member_ids, id_column) if isinstance(member_ids, (str, Path)) else member_ids
    members, details = members_by_id(table, id_column, ids)  # a wrong id_column is named first
    if column is not None:
        raise advising(
            PpdmError(f"two truths: the population's column {column!r} and member_ids=; give one"),
            "member_ids=", "member_ids", "the training rows' identifiers",
        )
    return Population(table, members, [id_column], details)


def read_ids(path: str | Path, id_column: str) -> Any:
    """Identifiers from a CSV with the column ``id_column`` or a file of one identifier per line."""
    file = Path(path)
    if not file.is_file():
        raise DataError(f"{file}: no such file of training-row identifiers")
    first = file.read_text(encoding="utf-8", errors="replace").splitlines()[:1]
    header = [h.strip() for h in first[0].split(",")] if first else []
    if id_column in header:
        return pd.read_csv(file, usecols=[id_column], dtype=str)[id_column].dropna()
    if len(header) > 1:
        raise DataError(f"{file}: a CSV of identifiers needs the column {id_column!r} (it has {', '.join(header[:6])})")
    return pd.read_csv(file, header=None, dtype=str)[0].dropna()


def membership_audit(
    model: Any, data: Any, population: Population, class_known: bool | None, class_attribute: str | None,
    proof_seconds: float | None, estimate_seconds: float | None, sample: bool = False, reference: Any = None, blackbox: Any = None,
) -> Findings:
    """The membership audit of ``population`` (see :func:`audit`; ``sample``: it holds some of the
    training records only, the published counts then upper bounds)."""
    from dataclasses import replace

    if data is not None:
        raise PpdmError("membership= audits a population of candidates: leave data out (the truth is the population's member column)")
    table, truth = population.table, population.truth
    candidates = table.drop(columns=population.hidden)
    model = _estimator_of(model)
    try:
        published = as_rules(model) or _read_over_members(model, table, candidates, truth, sample, class_attribute)
    except ModelImportError:
        if blackbox is False or not (hasattr(model, "predict_proba") or isinstance(blackbox, (pd.DataFrame, str, Path))):
            raise
        published = None  # not readable as trees: the black-box attacks alone
    options = MembershipOptions()
    if proof_seconds is not None:
        options = replace(options, proof=replace(options.proof, time_limit=float(proof_seconds)))
    if estimate_seconds is not None:
        options = replace(options, solver=replace(options.solver, time_limit=float(estimate_seconds)))
    audited = table if isinstance(truth, str) else candidates  # a truth column is read by name; identifiers are not the attacker's
    try:
        result = None if published is None else membership_attack(
            published, audited, class_known=class_known, truth=truth, complete=not sample, options=options, non_members=population.non_members,
        )
    except DataError as why:
        if getattr(why, "argument", None) != "complete":
            raise
        # the audit's argument for an incomplete population is sample=, not the attack's complete=
        raise advising(DataError(str(why).replace("complete=False", "sample=True")), "declare it incomplete: sample=True", "sample", why.advice) from None
    klass = class_attribute or getattr(published, "class_attribute", None)
    ref = as_table(reference) if reference is not None else None
    answering = published if isinstance(model, (str, Path)) and published is not None else model  # a model file: the model read from it answers
    result = with_blackbox(result, answering, audited, truth, class_attribute=klass, class_known=class_known, reference=ref, options=blackbox)
    result.details.update(population.details)
    if population.non_members is not None:
        result.details["known_non_members"] = int(population.non_members.sum())
    return Findings(published if published is not None else model, ThreatModel(), table, membership=result)



def _estimator_of(model: Any) -> Any:
    """A skops file's fitted estimator (read white-box when it is a tree model, and by its answers
    in the black-box attacks, whose shadows are then fitted by its own learner); any other model as given."""
    from ppdm.tree.model_files import is_skops, load_estimator

    if isinstance(model, (str, Path)) and Path(model).is_file() and is_skops(model):
        return load_estimator(model)
    return model


def _read_over_members(model: Any, table: pd.DataFrame, candidates: pd.DataFrame, truth: Any, sample: bool, class_attribute: str | None) -> Any:
    """``model`` read over the candidates; a model file of a complete population with its truth
    is read over the members, the training rows, first: what the file does not say but they show
    (an XGBoost file's rounds grown on every row once, :func:`~ppdm.tree.forest_check.rows_once_by_covers`)
    is then known, and every round's rows are read. A file the members do not fit (a wrong truth)
    is read over the candidates, and the audit's own check of the truth says what is wrong."""
    if isinstance(model, (str, Path)) and truth is not None and not sample:
        members = flags(table, truth, "truth")
        if members is not None and members.any():
            try:
                return as_model(model, candidates[members].reset_index(drop=True), class_attribute)
            except (ModelImportError, DataError):
                pass
    return as_model(model, candidates, class_attribute)
