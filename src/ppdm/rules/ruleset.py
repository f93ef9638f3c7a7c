"""What a data owner publishes when publishing association rules (paper 004 §V-A).

A :class:`RuleSet` holds the rules Q_s ⇒ x (Q_s quasi-identifier items, x a sensitive value), the
thresholds s and c they were mined with, the sensitive attribute's domain (paper 004 §III-A: the
attacker knows it) and *what is published* about each rule:

* ``"thresholds"``: only the rules and s, c: the attacker knows P(Q_s, x) ≥ max(s, c·P(Q_s));
* ``"exact"``: also each rule's support s′ and confidence c′: P(Q_s, x) = s′ (equation 4).

``complete`` says whether the list is every pattern meeting both thresholds (as Apriori outputs);
only then does a pattern's absence mean it failed a threshold, the premise of the NAR constraints
(§V-B). A prefix of a rule list (the paper's "first T rules", Figure 5(c)) is not complete.

JSON in and out (``format: ppdm-rules``, ``version: 1``), validated field by field, so that rules
mined by another tool (e.g. mlxtend, see :meth:`RuleSet.from_mlxtend`) can be audited too.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from ppdm.errors import RulesError
from ppdm.files import finite_number, write_atomic

Publish = Literal["exact", "thresholds"]
FORMAT = "ppdm-rules"
VERSION = 1


@dataclass(frozen=True)
class Rule:
    """One published rule ``antecedent ⇒ sensitive = consequent`` (support, confidence if published)."""

    antecedent: tuple[tuple[str, Any], ...]
    consequent: Any
    support: float | None = None
    confidence: float | None = None

    @property
    def items(self) -> dict[str, Any]:
        return dict(self.antecedent)

    def describe(self, sensitive: str) -> str:
        lhs = " & ".join(f"{a}={v}" for a, v in self.antecedent)
        stats = [f"{name} {value:.4g}" for name, value in (("support", self.support), ("confidence", self.confidence)) if value is not None]
        return f"{lhs} => {sensitive}={self.consequent}" + (f" ({', '.join(stats)})" if stats else "")


@dataclass
class RuleSet:
    """Published QI ⇒ SA association rules and what the attacker knows about them (paper 004 §V-A)."""

    sensitive: str
    values: tuple[Any, ...]
    quasi_identifiers: tuple[str, ...]
    min_support: float
    min_confidence: float
    rules: list[Rule] = field(default_factory=list)
    publish: Publish = "exact"
    n_records: int | None = None
    complete: bool = True

    def __post_init__(self) -> None:
        self.values = tuple(self.values)
        self.quasi_identifiers = tuple(self.quasi_identifiers)
        _check_fraction(self.min_support, "min_support")
        _check_fraction(self.min_confidence, "min_confidence")
        if self.publish not in ("exact", "thresholds"):
            raise RulesError(f"publish must be 'exact' or 'thresholds', got {self.publish!r}")
        for j, v in enumerate(self.values):
            if not _is_value(v):
                raise RulesError(f"values[{j}]: expected a text or a number, got {v!r:.60}")
        if len(set(map(str, self.values))) != len(self.values) or not self.values:
            raise RulesError("values: the sensitive attribute's domain must list distinct values")
        seen: dict[tuple, int] = {}
        for i, rule in enumerate(self.rules):
            _check_rule(rule, i, self)
            key = (tuple(sorted((a, str(v)) for a, v in rule.antecedent)), str(rule.consequent))
            if key in seen:
                raise RulesError(f"rules[{i}]: the same rule as rules[{seen[key]}] (a rule is published once)")
            seen[key] = i

    def __len__(self) -> int:
        return len(self.rules)

    # -- what is published ----------------------------------------------------------------------
    def published(self, publish: Publish) -> RuleSet:
        """The same rules with only what ``publish`` reveals (exact values are dropped for thresholds)."""
        if publish == "thresholds":
            rules = [replace(r, support=None, confidence=None) for r in self.rules]
            return replace(self, rules=rules, publish="thresholds")
        return replace(self, publish="exact")

    def top(self, t: int) -> RuleSet:
        """The ``t`` rules of highest confidence (paper 004 Figure 5(c)); not a complete rule set."""
        if any(r.confidence is None for r in self.rules):
            raise RulesError("top(t) sorts by confidence, which this rule set does not record")
        order = sorted(range(len(self.rules)), key=lambda i: (-self.rules[i].confidence, -(self.rules[i].support or 0.0), i))  # type: ignore[operator]
        return replace(self, rules=[self.rules[i] for i in order[:t]], complete=t >= len(self.rules) and self.complete)

    # -- JSON -------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "sensitive": self.sensitive,
            "values": [_plain(v) for v in self.values],
            "quasi_identifiers": list(self.quasi_identifiers),
            "min_support": self.min_support,
            "min_confidence": self.min_confidence,
            "publish": self.publish,
            "n_records": self.n_records,
            "complete": self.complete,
            "rules": [_rule_dict(r, self.publish) for r in self.rules],
        }

    def save(self, path: str | Path) -> None:
        write_atomic(path, json.dumps(self.to_dict(), indent=1) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> RuleSet:
        from ppdm.files import as_path, load_json, read_text

        p = as_path(path, "rules", RulesError)
        if p.is_dir():
            raise RulesError(f"{p}: is a directory, not a rules file")
        if p.exists() and not p.is_file():
            raise RulesError(f"{p}: not a regular file (a rule set is a JSON file)")
        text = read_text(p, "rules", error=RulesError)

        try:
            data = load_json(text, str(p), RulesError, allow_nan=False)
        except RulesError as exc:
            if "is not a JSON number" in str(exc):
                raise RulesError(f"{exc} (supports and confidences are numbers in [0, 1])") from None
            raise
        try:
            return cls.from_dict(data)
        except RulesError as exc:
            raise RulesError(f"{path}: {exc}") from None

    @classmethod
    def from_dict(cls, data: Any) -> RuleSet:
        """Read the JSON form; every error names the field at fault (e.g. ``rules[3].support``)."""
        if not isinstance(data, dict):
            raise RulesError("a rule set must be a JSON object")
        if data.get("format") != FORMAT:
            raise RulesError(f"format: expected {FORMAT!r}, got {data.get('format')!r}")
        if data.get("version") != VERSION:
            raise RulesError(f"version: expected {VERSION}, got {data.get('version')!r}")
        known = {"format", "version", "sensitive", "values", "quasi_identifiers", "min_support", "min_confidence", "publish", "n_records", "complete", "rules"}
        extra = sorted(set(data) - known)
        if extra:
            raise RulesError(f"unknown field {extra[0]!r}")
        sensitive = _field(data, "sensitive", str)
        values = _field(data, "values", list)
        qis = _field(data, "quasi_identifiers", list)
        if not all(isinstance(q, str) for q in qis):
            raise RulesError("quasi_identifiers: must be a list of column names")
        publish = data.get("publish", "exact")
        n_records = data.get("n_records")
        if n_records is not None and (not isinstance(n_records, int) or isinstance(n_records, bool) or n_records <= 0):
            raise RulesError(f"n_records: must be a positive integer, got {n_records!r}")
        rules_data = _field(data, "rules", list)
        rules = [_rule_from(r, i, publish) for i, r in enumerate(rules_data)]
        complete = data.get("complete", True)
        if not isinstance(complete, bool):
            raise RulesError(f"complete: must be true or false, got {complete!r}")
        return cls(
            sensitive, tuple(values), tuple(qis), _number(data, "min_support"), _number(data, "min_confidence"),
            rules, publish, n_records, complete,
        )

    @classmethod
    def from_mlxtend(
        cls, frame: pd.DataFrame, sensitive: str, values: Sequence[Any], quasi_identifiers: Sequence[str],
        min_support: float, min_confidence: float, sep: str = "=", n_records: int | None = None,
    ) -> RuleSet:
        """Rules from an ``mlxtend.frequent_patterns.association_rules`` frame over one-hot columns
        named ``attribute{sep}value`` (as ``pandas.get_dummies(prefix_sep=sep)`` makes them).

        Only rules whose consequent is one sensitive item and whose antecedent holds QI items only
        are kept (paper 004 §V-A: the rules an attacker can link to people).
        """
        for col in ("antecedents", "consequents", "support", "confidence"):
            if col not in frame.columns:
                raise RulesError(f"mlxtend rules: column {col!r} is missing")
        by_name = {str(v): v for v in values}
        rules = []
        columns = zip(frame["antecedents"], frame["consequents"], frame["support"], frame["confidence"])
        for i, (antecedents, consequents, support, confidence) in enumerate(columns):
            lhs = [_split_item(item, sep, f"row {i} antecedent") for item in sorted(antecedents)]
            rhs = [_split_item(item, sep, f"row {i} consequent") for item in consequents]
            if len(rhs) != 1 or rhs[0][0] != sensitive or any(a not in quasi_identifiers for a, _ in lhs):
                continue
            if rhs[0][1] not in by_name:
                raise RulesError(f"mlxtend rules: row {i}: {sensitive}={rhs[0][1]!r} is not one of the values {list(by_name)}")
            ordered = tuple(sorted(lhs, key=lambda av: list(quasi_identifiers).index(av[0])))
            rules.append(Rule(ordered, by_name[rhs[0][1]], float(support), float(confidence)))
        return cls(sensitive, tuple(values), tuple(quasi_identifiers), min_support, min_confidence, rules, "exact", n_records)


# -- validation helpers ---------------------------------------------------------------------------
def _plain(v: Any) -> Any:
    return v.item() if hasattr(v, "item") else v


def _check_fraction(value: Any, name: str) -> None:
    if not finite_number(value) or not 0 <= value <= 1:
        raise RulesError(f"{name}: must be a number in [0, 1], got {value!r}")


def _is_value(v: Any) -> bool:
    """A value of a published item: a text or a finite number (not a list, an object, null or NaN)."""
    return isinstance(v, (str, int, np.integer)) or (isinstance(v, (float, np.floating)) and math.isfinite(v))


def _check_rule(rule: Rule, i: int, rs: RuleSet) -> None:
    where = f"rules[{i}]"
    for attribute, value in rule.antecedent:
        if not isinstance(attribute, str) or not _is_value(value):
            raise RulesError(f"{where}.antecedent: {attribute!r}: {value!r:.60} is not an attribute name and a value")
    if not _is_value(rule.consequent):
        raise RulesError(f"{where}.consequent: expected a value of {rs.sensitive!r}, got {rule.consequent!r:.60}")
    if not rule.antecedent:
        raise RulesError(f"{where}.antecedent: must hold at least one quasi-identifier item")
    attrs = [a for a, _ in rule.antecedent]
    if len(set(attrs)) != len(attrs):
        raise RulesError(f"{where}.antecedent: an attribute appears twice ({attrs})")
    unknown = [a for a in attrs if a not in rs.quasi_identifiers]
    if unknown:
        raise RulesError(f"{where}.antecedent: {unknown[0]!r} is not one of the quasi_identifiers {list(rs.quasi_identifiers)}")
    if str(rule.consequent) not in {str(v) for v in rs.values}:
        raise RulesError(f"{where}.consequent: {rule.consequent!r} is not one of the values {list(rs.values)}")
    for name in ("support", "confidence"):
        value = getattr(rule, name)
        if value is not None:
            _check_fraction(value, f"{where}.{name}")
    if rule.support is not None and rule.confidence is not None and rule.support > rule.confidence + 1e-9:
        raise RulesError(f"{where}: support {rule.support:g} above confidence {rule.confidence:g} (a rule's support is at most its confidence)")
    if rs.publish == "exact" and rule.support is None:
        raise RulesError(f"{where}.support: publish is 'exact' but the rule has no support")


def _field(data: dict, name: str, kind: type) -> Any:
    if name not in data:
        raise RulesError(f"missing field {name!r}")
    value = data[name]
    if not isinstance(value, kind):
        raise RulesError(f"{name}: expected {kind.__name__}, got {type(value).__name__}")
    return value


def _number(data: dict, name: str) -> float:
    if name not in data:
        raise RulesError(f"missing field {name!r}")
    _check_fraction(data[name], name)
    return float(data[name])


def _rule_dict(rule: Rule, publish: Publish) -> dict[str, Any]:
    out: dict[str, Any] = {"antecedent": {a: _plain(v) for a, v in rule.antecedent}, "consequent": _plain(rule.consequent)}
    if publish == "exact":
        out["support"] = rule.support
        out["confidence"] = rule.confidence
    return out


def _rule_from(data: Any, i: int, publish: str) -> Rule:
    where = f"rules[{i}]"
    if not isinstance(data, dict):
        raise RulesError(f"{where}: must be an object with antecedent and consequent")
    extra = sorted(set(data) - {"antecedent", "consequent", "support", "confidence"})
    if extra:
        raise RulesError(f"{where}: unknown field {extra[0]!r}")
    lhs = data.get("antecedent")
    if not isinstance(lhs, dict):
        raise RulesError(f"{where}.antecedent: expected an object {{attribute: value}}")
    if "consequent" not in data:
        raise RulesError(f"{where}: missing field 'consequent'")
    stats = {}
    for name in ("support", "confidence"):
        value = data.get(name)
        if value is not None:
            _check_fraction(value, f"{where}.{name}")
            value = float(value)
        elif publish == "exact" and name == "support":
            raise RulesError(f"{where}.support: publish is 'exact' but the rule has no support")
        stats[name] = value
    return Rule(tuple(lhs.items()), data["consequent"], stats["support"], stats["confidence"])


def _split_item(item: Any, sep: str, where: str) -> tuple[str, str]:
    text = str(item)
    if sep not in text:
        raise RulesError(f"mlxtend rules: {where}: item {text!r} is not of the form attribute{sep}value")
    attr, value = text.split(sep, 1)
    return attr, value


def rules_from_items(sensitive: str, values: Iterable[Any], quasi_identifiers: Sequence[str], min_support: float, min_confidence: float, rules: Iterable[tuple[dict[str, Any], Any, float | None, float | None]], publish: Publish = "exact", n_records: int | None = None, complete: bool = True) -> RuleSet:
    """A :class:`RuleSet` from ``(antecedent dict, consequent, support, confidence)`` tuples."""
    order = {q: i for i, q in enumerate(quasi_identifiers)}
    made = [Rule(tuple(sorted(lhs.items(), key=lambda av: order.get(av[0], len(order)))), rhs, sup, conf) for lhs, rhs, sup, conf in rules]
    return RuleSet(sensitive, tuple(values), tuple(quasi_identifiers), min_support, min_confidence, made, publish, n_records, complete)
