"""Read what a report is made from: saved attack results, the published model, a frontier."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ppdm.errors import PpdmError, ReportError, TreeFormatError
from ppdm.files import finite_number
from ppdm.report.persons import leaf_pairs_of
from ppdm.tree.forest import Forest
from ppdm.tree.forest_io import forest_from_dict
from ppdm.tree.io import other_model_kind, read_model_file, tree_from_dict
from ppdm.tree.model import Tree
from ppdm.tree.model_files import is_skops


def read_json(path: str | Path, what: str) -> Any:
    """The parsed JSON of ``path`` (a regular file of reasonable size); every error is one line
    naming the file."""
    from ppdm.files import as_path, load_json, read_bytes

    p = as_path(path, what, ReportError)
    if p.is_dir():
        raise ReportError(f"{p}: is a directory, not {what}")
    if not p.exists():
        raise ReportError(f"{p}: no such file ({what})")
    if not p.is_file():
        raise ReportError(f"{p}: not a regular file ({what} is read from disk, not from a pipe or device)")
    raw = read_bytes(p, what.split(" ", 1)[-1], MAX_RESULT_BYTES, ReportError)
    try:
        return load_json(raw, str(p), ReportError)
    except ReportError as exc:
        raise ReportError(f"{exc} ({what})" if "nested too deeply" in str(exc) or "not a text file" in str(exc) else str(exc)) from None


#: The largest attack result read: a million groups with their rows.
MAX_RESULT_BYTES = 2**31


def load_result(path: str | Path) -> dict[str, Any]:
    """An attack result as ``ppdm audit --out`` / ``ppdm attack --out`` write it, checked: every
    field a report reads has the type and range it needs, or the error names it."""
    data = read_json(path, "an attack result")
    if not isinstance(data, dict) or data.get("format") != "ppdm-attack-result":
        raise ReportError(f"{path}: not an attack result (write one with ppdm audit --out or ppdm attack --out)")
    try:
        check_result(data)
    except ReportError as exc:
        raise ReportError(f"{path}: {exc}") from None
    return data


#: The format a report's own JSON carries (:data:`ppdm.report.build.FORMAT`, spelled here so that
#: reading one loads no report builder).
REPORT_FORMAT = "ppdm-report"

#: The keys a report's JSON must hold for its page to be drawn again, and their types.
REPORT_KEYS: dict[str, type | tuple[type, ...]] = {"title": str, "attacks": list, "advice": list}


#: A regressor's audit (``ppdm audit --out``) and its report's JSON, by their ``format``.
REGRESSION_FORMATS = ("ppdm-regression-result", "ppdm-regression-report")


def _regression_shaped(data: dict[str, Any]) -> bool:
    """A regressor's audit or report written before they carried a ``format``."""
    summary = data.get("summary")
    return data.get("kind") == "regression" or (isinstance(summary, dict) and summary.get("kind") == "regression")


def load_saved(path: str | Path) -> tuple[str, dict[str, Any]]:
    """What ``ppdm report`` reads: an attack result (``"result"``, checked as :func:`load_result`
    checks it), a report's own JSON (``"report"``, the ``NAME.report.json`` written beside a
    page: :func:`check_report`) or a regressor's audit or report (``"regression"``), told apart by
    their ``format``."""
    data = read_json(path, "an attack result")  # or a report's JSON, which is no larger
    if isinstance(data, dict) and (data.get("format") in REGRESSION_FORMATS or _regression_shaped(data)):
        return "regression", data
    if isinstance(data, dict) and data.get("format") == REPORT_FORMAT:
        try:
            check_report(data)
        except ReportError as exc:
            raise ReportError(f"{path}: {exc}") from None
        return "report", data
    if not isinstance(data, dict) or data.get("format") != "ppdm-attack-result":
        raise ReportError(f"{path}: not an attack result (ppdm audit --out, ppdm attack --out) or a report's JSON (NAME.report.json beside a report)")
    try:
        check_result(data)
    except ReportError as exc:
        raise ReportError(f"{path}: {exc}") from None
    return "result", data


def check_report(data: dict[str, Any]) -> None:
    """Refuse a report's JSON that cannot be drawn again: another version, or a key the page
    reads first missing or of the wrong type (the rest is checked as the page is drawn,
    :func:`ppdm.report.write.redraw_report`)."""
    if data.get("version", 1) != 1:
        raise ReportError(f"version: expected 1, got {data.get('version')!r}")
    for key, kind in REPORT_KEYS.items():
        if not isinstance(data.get(key), kind):
            raise ReportError(f"{key}: expected {'a text' if kind is str else 'a list'}, got {_short(data.get(key))} (a report's JSON as ppdm report writes it)")
    for i, attack in enumerate(data["attacks"]):
        if not isinstance(attack, dict):
            raise ReportError(f"attacks[{i}]: expected an object, got {_short(attack)}")


def check_result(data: dict[str, Any], where: str = "") -> None:
    """Refuse an attack result's JSON whose fields a report cannot read as they are: a count that
    is negative or fractional, a posterior that is not a distribution, a row, truth or QI value of
    the wrong type; errors name the field."""
    at = f"{where}." if where else ""
    if data.get("version", 1) != 1:
        raise ReportError(f"{at}version: expected 1, got {data.get('version')!r}")
    missing = [k for k in ("summary", "values", "quasi_identifiers", "groups") if k not in data]
    if missing:
        raise ReportError(f"attack result without {at}{missing[0]!r}")
    if not isinstance(data["groups"], list) or not isinstance(data["values"], list) or not isinstance(data["summary"], dict):
        raise ReportError(f"attack result whose {at}groups, values or summary have the wrong type")
    values, qis = data["values"], data["quasi_identifiers"]
    if not values or not all(_is_value(v) for v in values) or len({(type(v) is str, v) for v in values}) != len(values):
        raise ReportError(f"{at}values: expected the sensitive column's distinct values (texts or numbers), got {_short(values)}")
    if not isinstance(qis, list) or not all(isinstance(q, str) for q in qis) or len(set(qis)) != len(qis):
        raise ReportError(f"{at}quasi_identifiers: expected distinct column names, got {_short(qis)}")
    unknown = sorted(set(map(str, data)) - RESULT_KEYS)
    if unknown:
        raise ReportError(f"{at}{unknown[0]}: unknown key (an attack result has: {', '.join(sorted(RESULT_KEYS))})")
    _check_summary(data["summary"], values, at)
    if "target" in data:
        from ppdm.attacks.core.target import target_from_dict

        try:
            target_from_dict(data["target"], f"{at}target")
        except PpdmError as exc:
            raise ReportError(f"{at}target: {exc}") from None
    seen: set[int] = set()
    records = 0.0
    for i, group in enumerate(data["groups"]):
        _check_group(group, i, len(values), qis, at)
        rows = group["rows"]
        twice = seen.intersection(rows)
        if twice:
            raise ReportError(f"{at}group {i} rows: row {min(twice)} is in another group too (a record is in one group)")
        seen.update(rows)
        records += group.get("records", len(rows))
    summary = data["summary"]
    if _is_whole(summary.get("records")) and abs(records - summary["records"]) > 1e-6 * max(records, 1.0):
        raise ReportError(f"{at}the groups hold {records:,.0f} records but {at}summary records is {summary['records']:,}")
    try:
        leaf_pairs_of(data)
    except ReportError as exc:
        raise ReportError(f"{at}{exc}") from None
    if "exact" in data:
        if not isinstance(data["exact"], dict):
            raise ReportError(f"{at}exact: expected the exact audit's result")
        check_result(data["exact"], f"{at}exact")


#: The keys at the top of an attack result (``exact``: the exact audit's own result, beside the
#: estimate's; ``top_individuals``: audit-rules' top-K table).
#: ``target``: the privacy target the audit was run with (:meth:`~ppdm.attacks.core.target.Target.to_dict`).
RESULT_KEYS = frozenset({"format", "version", "summary", "quasi_identifiers", "values", "groups", "exact", "top_individuals", "target"})

#: The keys of a group of an attack result.
GROUP_KEYS = frozenset({
    "qi", "records", "exposed_records", "posterior", "certain", "provenance", "rows", "truth", "targets", "leaf_pairs", "min_count", "max_count",
    "undecided", "std_error",
})


def _is_value(x: Any) -> bool:
    return isinstance(x, (str, int)) or (isinstance(x, float) and math.isfinite(x))


def _is_whole(x: Any) -> bool:
    return finite_number(x) and x >= 0 and float(x).is_integer()


def _is_share(x: Any) -> bool:
    return finite_number(x) and -1e-9 <= x <= 1 + 1e-9


def _short(x: Any) -> str:
    text = repr(x)
    return text if len(text) <= 80 else text[:77] + "..."


#: Head counts of a summary: whole numbers of people.
_COUNTS = ("records", "targets", "qi_groups", "exposed_records", "certain_records", "exposed_wrong", "certain_right", "certain_wrong")
#: Shares of a summary: numbers in [0, 1].
_SHARES = ("attacker_accuracy", "mean_confidence_in_true_value")
#: What a summary holds when the true values were known (the report reads them together).
_TRUTH = ("attacker_accuracy", "attacker_accuracy_ci95", "baseline", "mean_confidence_in_true_value", "confidence_in_true_value", "prior_alone", "beyond_prior")


def _check_summary(summary: dict[str, Any], values: list[Any], at: str) -> None:
    for key in ("attack", "sensitive"):
        if not isinstance(summary.get(key), str):
            raise ReportError(f"{at}summary {key} is {_short(summary.get(key))} (expected a text)")
    for key in _COUNTS:
        if key in summary and not _is_whole(summary[key]):
            raise ReportError(f"{at}summary {key} is {summary[key]!r} (expected a whole number >= 0)")
    for key in ("threat_model", "sample", "note", "exact_not_run"):
        if summary.get(key) is not None and not isinstance(summary[key], str):
            raise ReportError(f"{at}summary {key} is {_short(summary[key])} (expected a text)")
    if not any(key in summary for key in _TRUTH):
        return
    absent = [key for key in _TRUTH if key not in summary]
    if absent:
        raise ReportError(f"{at}summary has the attack's accuracy but not {absent[0]!r}")
    for key in _SHARES:
        if not _is_share(summary[key]):
            raise ReportError(f"{at}summary {key} is {summary[key]!r} (expected a number from 0 to 1)")
    _check_interval(summary["attacker_accuracy_ci95"], f"{at}summary attacker_accuracy_ci95")
    for key in ("confidence_in_true_value", "prior_alone", "beyond_prior"):
        table = summary[key]
        if not isinstance(table, dict) or not all(isinstance(k, str) and _is_whole(v) for k, v in table.items()):
            raise ReportError(f"{at}summary {key} is {_short(table)} (expected thresholds and whole numbers of people)")
    base = summary["baseline"]
    if not isinstance(base, dict):
        raise ReportError(f"{at}summary baseline is {_short(base)} (expected an object)")
    for key in ("accuracy", "mean_confidence_in_true_value"):
        if not _is_share(base.get(key)):
            raise ReportError(f"{at}summary baseline {key} is {_short(base.get(key))} (expected a number from 0 to 1)")
    if "accuracy_ci95" in base:
        _check_interval(base["accuracy_ci95"], f"{at}summary baseline accuracy_ci95")
    if not _is_value(base.get("majority_guess")):
        raise ReportError(f"{at}summary baseline majority_guess is {_short(base.get('majority_guess'))} (expected a value)")
    prior = base.get("prior")
    if not isinstance(prior, dict) or not all(isinstance(k, str) and _is_share(v) for k, v in prior.items()):
        raise ReportError(f"{at}summary baseline prior is {_short(prior)} (expected each value's share)")
    lift = summary.get("lift", {})
    if not (isinstance(lift, dict) and all(v is None or finite_number(v) for v in lift.values())):
        raise ReportError(f"{at}summary lift is {_short(lift)} (expected finite numbers)")


def _check_interval(pair: Any, where: str) -> None:
    if not (isinstance(pair, list) and len(pair) == 2 and all(_is_share(x) for x in pair) and pair[0] <= pair[1]):
        raise ReportError(f"{where} is {_short(pair)} (expected [low, high] between 0 and 1)")


def _check_group(group: Any, i: int, n_values: int, qis: list[str], at: str) -> None:
    """Check group ``i`` of a result whose sensitive column has ``n_values`` values."""
    where = f"{at}group {i}"
    if not isinstance(group, dict) or not {"rows", "posterior", "provenance", "qi"} <= set(group):
        raise ReportError(f"{where} lacks rows, posterior, provenance or qi")
    unknown = sorted(set(map(str, group)) - GROUP_KEYS)
    if unknown:
        raise ReportError(f"{where} {unknown[0]}: unknown key (a group has: {', '.join(sorted(GROUP_KEYS))})")
    if not isinstance(group["posterior"], list) or len(group["posterior"]) != n_values:
        n = len(group["posterior"]) if isinstance(group["posterior"], list) else group["posterior"]
        raise ReportError(f"{where} has {_short(n)} probabilities for {n_values} values")
    _check_posterior(group["posterior"], where)
    records = group.get("records", 0)
    if not _is_whole(records):
        raise ReportError(f"{where} has {records!r} records (expected a whole number >= 0)")
    rows = group["rows"]
    if not isinstance(rows, list) or not all(type(r) is int and 0 <= r < 2**53 for r in rows):
        raise ReportError(f"{where} rows: expected row numbers (whole numbers >= 0), got {_short(rows)}")
    qi = group["qi"]
    if not isinstance(qi, dict) or not all(isinstance(k, str) and (v is None or _is_value(v) or isinstance(v, bool)) for k, v in qi.items()):
        raise ReportError(f"{where} qi: expected each quasi-identifier's value, got {_short(qi)}")
    if not isinstance(group["provenance"], str):
        raise ReportError(f"{where} provenance: expected a text, got {_short(group['provenance'])}")
    for key in ("truth", "targets"):
        if key in group:
            items = group[key]
            ok = isinstance(items, list) and len(items) == len(rows)
            ok = ok and all(type(t) is int and 0 <= t < n_values for t in items) if key == "truth" else ok and all(isinstance(t, bool) for t in items)
            if not ok:
                kind = f"an index into the {n_values} values" if key == "truth" else "true or false"
                raise ReportError(f"{where} {key}: expected {kind} for each of its {len(rows)} rows, got {_short(items)}")
    for key in ("certain", "undecided"):
        if key in group and not isinstance(group[key], bool):
            raise ReportError(f"{where} {key}: expected true or false, got {_short(group[key])}")
    if "exposed_records" in group and group["exposed_records"] is not None and not _is_whole(group["exposed_records"]):
        raise ReportError(f"{where} exposed_records: expected a whole number >= 0, got {_short(group['exposed_records'])}")
    for key in ("min_count", "max_count"):  # the exact audit's proved count of each value in the group
        bounds = group.get(key)
        if bounds is not None and not (isinstance(bounds, list) and len(bounds) == n_values and all(_is_whole(b) for b in bounds)):
            raise ReportError(f"{where} {key}: expected a whole number >= 0 for each of the {n_values} values, got {_short(bounds)}")


def _check_posterior(posterior: list[Any], where: str) -> None:
    """Probabilities: finite, in [0, 1], adding up to 1."""
    ok = all(_is_share(p) for p in posterior)
    if not ok or abs(sum(posterior) - 1.0) > 1e-6:
        raise ReportError(f"{where}: posterior {posterior[:6]!r} is not a probability distribution")


def load_model(path: str | Path) -> Tree | Forest:
    """A ppdm tree or forest JSON file (``ppdm train --out``, the importers). A fitted estimator
    saved by skops is read against its training table, which a report does not have: it is named
    as such, with the command that reads it."""
    if Path(path).is_file() and is_skops(path):
        raise TreeFormatError(
            f"{path}: a skops file (a fitted estimator), read against its training table, which the report does not have: "
            "make the report with the audit (ppdm audit --model ... --data ... --report REPORT.html)"
        )

    def parse(data: Any) -> Tree | Forest:
        if isinstance(data, dict) and data.get("format") == "ppdm-forest":
            return forest_from_dict(data)
        kind = other_model_kind(data) if isinstance(data, dict) else None
        if kind is not None:
            raise TreeFormatError(f"{kind}, not a ppdm tree or forest file (the models whose leaves a report links)")
        return tree_from_dict(data)

    return read_model_file(path, "model", parse)


def load_frontier(path: str | Path) -> list[Any] | dict[str, Any]:
    """A frontier: a JSON list of ``[accuracy, risk, label]`` (or objects with those keys), or
    ``{"risk": name, "points": [...]}``; checked by :func:`ppdm.report.build.frontier_of`."""
    data = read_json(path, "a frontier")
    if not isinstance(data, (list, dict)):
        raise ReportError(f"{path}: a frontier is a list of points or an object with 'points'")
    try:
        from ppdm.report.build import frontier_of

        frontier_of(data, "risk")
    except ReportError as exc:
        raise ReportError(f"{path}: {exc}") from None
    return data
