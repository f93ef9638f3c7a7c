"""The threat model: what the attacker knows, what they want, and what the model publishes.

Declared once and used by every audit. Paper 000 §3 fixes one story (the attacker knows every
quasi-identifier, the sensitive attribute is the class); a publisher usually fears another, so
every part is a choice:

* ``known``: the columns the attacker holds for every training record (any subset of the table;
  listing the class column means the attacker knows each record's class);
* ``sensitive``: the column the attack is about (the class or an input of the model);
* ``publish``: what of the model is audited (default: exactly what the file holds — class
  counts, error rates or labels); a user may audit *less* than the file holds, never more;
* ``sa_published``: whether the sensitive attribute's distribution is known to the attacker (paper
  000 §4.3). Default: yes for a sensitive input (a demographic attribute's distribution is in every
  census table, and an estimate without it can fall below the prior's own majority guess, which
  would understate the risk), no for the class (paper 000's default; published counts reveal it);
* ``known_individuals``: rows whose full record the attacker already has (background knowledge of
  paper 003 §3.2): they are no longer targets, and what they contribute to the published counts is
  subtracted from what the attacker has to explain. They are named by the table's row ids, its
  index (the ``row`` of ``people()``; the row number, from 0, of a CSV file); a resolved threat
  holds their positions in the table it was resolved against.
* ``class_known``: the attacker also knows each record's class (the same as listing the class
  column in ``known``; with a ``preset`` it adds the class to the preset's columns).
* ``outputs``: the attacker also sees, for each target, the model's answer about them (the
  deployed model's output, the setting of Fredrikson et al. 2015 and IBM ART's black-box attack):
  ``"label"`` (the predicted class) or ``"score"`` (the class probabilities). They restrict each
  person's reachable leaves (or a forest's joint leaves) to those giving that answer
  (:mod:`ppdm.maxent.table.outputs`), in the estimate and the exact audit alike (and a single
  tree's leaf attacks); the likelihood
  rules condition on the label; the model-free reference attacker (:mod:`ppdm.attacks.baselines.reference`)
  takes them as a feature beside the known columns. A forest estimate pooled over its trees (when
  the joint table is too large) does not read them, and says so.

Presets name the usual stories (:data:`PRESETS`); a YAML file (:func:`load_threat`) or the CLI
flags declare the rest.
"""

from __future__ import annotations

import functools
import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np
import pandas as pd

from ppdm.data.roles import Roles
from ppdm.data.roles import check_varies as check_varies  # re-exported: the defense search reads data through attacks
from ppdm.data.roles import text_columns as text_columns  # re-exported, likewise
from ppdm.errors import ArgumentTypeError, DataError, PpdmError, check_flags, shown
from ppdm.tree.disclosure import Disclosure
from ppdm.tree.forest import Forest
from ppdm.tree.model import Tree

#: Column names a census or population register holds (matched ignoring case, '-', '_' and spaces).
DEMOGRAPHIC = (
    "age", "sex", "gender", "race", "ethnicity", "maritalstatus", "marital", "nativecountry",
    "country", "countryofbirth", "nationality", "education", "zip", "zipcode", "postcode",
    "dateofbirth", "birthdate", "birthyear", "yearofbirth",
)

PRESETS: dict[str, str] = {
    "census": (
        "knows the demographic columns a census or population register holds (age, sex, race, "
        "marital status, native country, education, zip code: whichever the table has), not the "
        "class: use it when the model is published and anyone can link it to public records"
    ),
    "insider": (
        "knows every other column of the table, the class included (IBM ART's white-box setting): "
        "use it for the worst case, e.g. a colleague or a data broker holding the rest of the records"
    ),
    "paper": (
        "knows the table's declared quasi-identifiers and wants the class (paper 000's setting): use "
        "it to reproduce the papers or when the class itself is the secret"
    ),
    "nothing": "knows no column, only the model (the reconstruction setting): use it to see what the model alone reveals",
}

#: What the attacker may see of the model's answer about each person (``ThreatModel.outputs``).
OUTPUTS: tuple[str, ...] = ("label", "score")


def _as_text(argument: str, names: Sequence[object]) -> str:
    """The hint for column names given as numbers: columns are named by text (a table's numeric
    names are read as text, :func:`~ppdm.data.roles.text_columns`)."""
    if not names or not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in names):
        return ""
    shown = [str(n) for n in names]
    return f" (column names are text, a table's numbers read as text: write {argument}={shown if argument == 'known' else repr(shown[0])})"


def _norm(name: str) -> str:
    return re.sub(r"[\s_\-.]", "", name.lower())


def identifier_columns(data: pd.DataFrame, columns: Sequence[str]) -> list[str]:
    """The ``columns`` of ``data`` that identify each row: whole numbers or texts, none missing,
    no value twice (an ``ID``, a customer number). Measurements (floats) are not identifiers even
    when no two rows share one."""
    if len(data) < 2:
        return []
    out = []
    for c in columns:
        column = data[c]
        if pd.api.types.is_float_dtype(column.dtype) or pd.api.types.is_bool_dtype(column.dtype):
            continue
        if column.notna().all() and column.is_unique:
            out.append(c)
    return out


def demographic_columns(columns: Sequence[str]) -> list[str]:
    """The columns of a table that the ``census`` preset assumes public."""
    wanted = set(DEMOGRAPHIC)
    return [c for c in columns if _norm(c) in wanted]


@dataclass(frozen=True)
class ThreatModel:
    """One declared attacker (see the module docstring).

    ``known`` may be left ``None`` when a ``preset`` says it; :meth:`resolve` fills every default
    from the table and the model and checks every column.
    """

    sensitive: str | None = None
    known: tuple[str, ...] | None = None
    publish: Disclosure | None = None
    sa_published: bool | None = None
    known_individuals: tuple[int, ...] = ()
    preset: str | None = None
    quasi_identifiers: tuple[str, ...] = field(default=(), compare=False)
    class_known: bool = False
    outputs: str | None = None
    #: Columns a preset left out of ``known`` because they identify each row and the model does
    #: not split on them (:func:`identifier_columns`); set by :meth:`resolve`, said by :meth:`notes`.
    left_out: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.known, (str, bytes)):
            raise PpdmError(f"known must be a list of column names, not the text {self.known!r}: write known=[{self.known!r}]")
        if self.sensitive is not None and not isinstance(self.sensitive, str):
            raise PpdmError(f"sensitive must be one column name, got {self.sensitive!r}{_as_text('sensitive', [self.sensitive])}")
        if self.sensitive is not None:
            object.__setattr__(self, "sensitive", str(self.sensitive))  # np.str_ as plain text, in messages too
        check_flags(class_known=self.class_known)
        object.__setattr__(self, "class_known", bool(self.class_known))
        if self.outputs is not None and self.outputs not in OUTPUTS:
            raise PpdmError(f"outputs must be one of {', '.join(OUTPUTS)} (what the attacker sees of the model's answer about each person), got {self.outputs!r}")
        if self.preset is not None and self.preset not in PRESETS:
            raise PpdmError(f"unknown threat preset {self.preset!r} (choose one of: {', '.join(PRESETS)})")
        if self.sa_published is not None:
            try:
                check_flags(sa_published=self.sa_published)
            except ArgumentTypeError:
                raise ArgumentTypeError(f"sa_published must be True, False or None, got {shown(self.sa_published)}") from None
            object.__setattr__(self, "sa_published", bool(self.sa_published))
        if self.publish is not None:
            object.__setattr__(self, "publish", Disclosure.parse(self.publish))
        if self.known is not None:
            known = tuple(self.known) if isinstance(self.known, Iterable) else None
            if known is None or not all(isinstance(c, str) for c in known):
                raise PpdmError(f"known must be a list of column names, got {self.known!r:.80}{_as_text('known', known or ())}")
            known = tuple(str(c) for c in known)
            twice = _twice(known)
            if twice is not None:
                raise PpdmError(f"known: column {twice!r} is listed twice")
            object.__setattr__(self, "known", known)
        individuals = self.known_individuals
        if isinstance(individuals, (str, bytes)) or not isinstance(individuals, Iterable):
            raise PpdmError(f"known_individuals must be a list of row ids (the table's index; 0 = the first row of a CSV), got {individuals!r:.80}")
        rows = tuple(individuals)
        bad = [i for i in rows if isinstance(i, bool) or not isinstance(i, (int, np.integer))]
        if bad:
            raise PpdmError(f"known_individuals: {bad[0]!r} is not a row id (the table's index; 0 = the first row of a CSV)")
        twice = _twice(int(i) for i in rows)
        if twice is not None:
            raise PpdmError(f"known_individuals: row {twice} is listed twice")
        object.__setattr__(self, "known_individuals", tuple(int(i) for i in rows))

    _class: str | None = field(default=None, repr=False, compare=False)

    def resolve(self, data: pd.DataFrame, class_attribute: str, *, splits: Iterable[str] | None = None) -> ThreatModel:
        """Every default filled in and checked against ``data`` and the model's class column.

        ``splits``: the columns the model splits on. When given, a preset leaves out of ``known``
        the columns that identify each row (:func:`identifier_columns`: an ``ID``) and that the
        model does not split on, and says so (:attr:`left_out`, :meth:`notes`). Such a column
        tells the attacker nothing about the model's counts: people who differ only in it share
        every published constraint, so the estimate and the proof are the same without it, but
        as a known column it would make every person a group of one. A column the model splits
        on stays known (leaving it out would make the attacker weaker).

        A threat :meth:`is_resolved` already is only checked against ``data`` and returned as it
        is (resolving it again would give it back): an audit resolves its attacker once and hands
        the resolved one to every step."""
        if not isinstance(data, pd.DataFrame):
            raise DataError(f"the records must be a pandas DataFrame (its columns named), got {type(data).__name__}")
        if self.is_resolved(class_attribute):
            self._check(data, class_attribute)
            return self
        sensitive = self.sensitive or class_attribute
        if sensitive not in data.columns and sensitive != class_attribute:
            raise DataError(f"the sensitive column {sensitive!r} is not in the data")
        left_out = self.left_out
        if self.known is not None:
            known = self.known
        else:
            known = self._preset_known(data, sensitive, class_attribute)
            if splits is not None:
                left_out = tuple(identifier_columns(data, [c for c in known if c not in set(splits)]))
                known = tuple(c for c in known if c not in left_out)
        missing = [c for c in known if c not in data.columns]
        if missing:
            raise DataError(f"known column(s) not in the data: {', '.join(map(repr, missing))}")
        if sensitive in known:
            raise DataError(f"the sensitive column {sensitive!r} cannot also be known to the attacker")
        individuals = _positions(data.index, self.known_individuals)
        if self.class_known:
            if sensitive == class_attribute:
                raise DataError(f"class_known: the class {class_attribute!r} is the sensitive column")
            known = (*known, class_attribute)
        known = tuple(dict.fromkeys(known))
        sa = self.sa_published if self.sa_published is not None else sensitive != class_attribute
        return replace(
            self, sensitive=sensitive, known=known, sa_published=sa, class_known=class_attribute in known, _class=class_attribute,
            left_out=left_out, known_individuals=individuals,
        )

    def is_resolved(self, class_attribute: str) -> bool:
        """Whether :meth:`resolve` made this threat for a model of class ``class_attribute``, every
        default filled in (so that resolving it again gives it back unchanged)."""
        return (
            self._class == class_attribute and self.sensitive is not None and self.known is not None
            and self.sa_published is not None and self.class_known == (class_attribute in self.known)
        )  # fmt: skip

    def _check(self, data: pd.DataFrame, class_attribute: str) -> None:
        """The checks :meth:`resolve` makes of a resolved threat against ``data``, in its order."""
        assert self.sensitive is not None and self.known is not None
        if self.sensitive not in data.columns and self.sensitive != class_attribute:
            raise DataError(f"the sensitive column {self.sensitive!r} is not in the data")
        missing = [c for c in self.known if c not in data.columns]
        if missing:
            raise DataError(f"known column(s) not in the data: {', '.join(map(repr, missing))}")
        if self.sensitive in self.known:
            raise DataError(f"the sensitive column {self.sensitive!r} cannot also be known to the attacker")
        bad = [i for i in self.known_individuals if not 0 <= i < len(data)]
        if bad:
            raise DataError(f"known individual row {bad[0]} is outside the table's {len(data):,} rows")
        if self.class_known and self.sensitive == class_attribute:
            raise DataError(f"class_known: the class {class_attribute!r} is the sensitive column")

    def notes(self) -> list[str]:
        """What a reader of the audit should know about how the attacker was resolved (the
        identifier columns a preset left out), one sentence each; the CLI prints them."""
        if not self.left_out:
            return []
        names = ", ".join(repr(c) for c in self.left_out)
        one = len(self.left_out) == 1
        return [
            f"note: {names} {'is' if one else 'are'} left out of what the attacker knows: unique per row (an identifier) and not "
            f"split on by the model, {'it' if one else 'they'} would only make every person a group of one; name "
            f"{'it' if one else 'them'} in --known (known=) to count {'it' if one else 'them'}"
        ]

    def _preset_known(self, data: pd.DataFrame, sensitive: str, class_attribute: str) -> tuple[str, ...]:
        preset = self.preset or "paper"
        columns = [c for c in data.columns if c != sensitive]
        if preset == "insider":
            return tuple(columns)
        if preset == "nothing":
            return ()
        if preset == "census":
            found = [c for c in demographic_columns(columns) if c != class_attribute]
            if not found:
                raise DataError("the census preset found no demographic column in the table: declare the known columns")
            return tuple(found)
        qis = [c for c in (self.quasi_identifiers or columns) if c in data.columns and c not in (sensitive, class_attribute)]
        return tuple(qis)

    def describe(self, disclosure: Disclosure | None = None) -> str:
        """The threat model in one line, for the top of every output."""
        known = ", ".join(self.known or ()) or "no column"
        if self.left_out:
            known += f" (not {', '.join(self.left_out)}: an identifier)"
        publish = (self.publish or disclosure or Disclosure.CLASS_COUNTS).value
        parts = [
            f"attacker knows {known}",
            f"class {'known' if self.class_known else 'unknown'}" if self._class != self.sensitive else "",
            f"wants {self.sensitive!r}",
            f"model publishes {publish}",
            "sensitive distribution published" if self.sa_published else "",
            f"{len(self.known_individuals):,} individuals fully known" if self.known_individuals else "",
            f"sees each person's predicted {self.outputs}" if self.outputs else "",
        ]
        preset = f"threat model{f' {self.preset!r}' if self.preset else ''}: "
        return preset + "; ".join(p for p in parts if p)

    def to_spec(self) -> dict[str, object]:
        """The declared fields (what :class:`ThreatModel` takes), unresolved."""
        return {
            "sensitive": self.sensitive, "known": self.known, "publish": self.publish, "sa_published": self.sa_published,
            "known_individuals": self.known_individuals, "preset": self.preset, "class_known": self.class_known,
            "outputs": self.outputs,
        }

    def to_dict(self) -> dict[str, object]:
        return {
            "preset": self.preset,
            "sensitive": self.sensitive,
            "known": list(self.known or ()),
            "class_known": self.class_known,
            "publish": self.publish.value if self.publish else None,
            "sa_published": self.sa_published,
            "known_individuals": list(self.known_individuals),
            "outputs": self.outputs,
        }


def _positions(index: pd.Index, ids: tuple[int, ...]) -> tuple[int, ...]:
    """The positions in a table of the rows whose ids (index labels) are ``ids``."""
    if not ids:
        return ids
    found = index.get_indexer(pd.Index(ids)) if index.is_unique else np.full(len(ids), -2)
    if (found == -2).any():
        raise DataError("known_individuals name rows by the table's index, which repeats ids: pass data.reset_index(drop=True)")
    if (found < 0).any():
        first = ids[int(np.flatnonzero(found < 0)[0])]
        if index.equals(pd.RangeIndex(len(index))):
            raise DataError(f"known individual row {first} is outside the table's {len(index):,} rows")
        span = f"ids {shown(index[0])} to {shown(index[-1])}" if len(index) else "no rows"
        raise DataError(f"known individual row {first} is not a row of the table (its index runs over {span}; people() names rows by it)")
    return tuple(int(p) for p in found)


_KEYS = {"preset", "sensitive", "known", "publish", "sa_published", "known_individuals", "class_known", "outputs"}


def threat_from_dict(spec: Mapping[str, object], where: str = "threat model") -> ThreatModel:
    """A :class:`ThreatModel` from a mapping (a parsed YAML file); errors name the key at fault."""
    if not isinstance(spec, Mapping):
        raise PpdmError(f"{where}: expected a mapping of keys ({', '.join(sorted(_KEYS))})")
    unknown = sorted(set(map(str, spec)) - _KEYS)
    if unknown:
        raise PpdmError(f"{where}: unknown key {unknown[0]!r} (keys: {', '.join(sorted(_KEYS))})")
    known = spec.get("known")
    if known is not None and (isinstance(known, (str, bytes)) or not isinstance(known, Sequence)):
        raise PpdmError(f"{where}: 'known' must be a list of column names")
    if known is not None and not known:
        raise PpdmError(f"{where}: 'known' lists no column: name the columns the attacker knows, or write preset: nothing")
    for i, column in enumerate(known or ()):
        if not _is_name(column):
            raise PpdmError(f"{where}: known[{i}] must be a column name, got {column!r:.60}")
    for key in ("sensitive", "preset", "publish", "outputs"):
        if spec.get(key) is not None and not _is_name(spec[key]):
            raise PpdmError(f"{where}: '{key}' must be one name, got {spec[key]!r:.60}")
    sa = spec.get("sa_published")
    if sa is not None and not isinstance(sa, bool):
        raise PpdmError(f"{where}: 'sa_published' must be true or false, got {sa!r}")
    class_known = spec.get("class_known", False)
    if not isinstance(class_known, bool):
        raise PpdmError(f"{where}: 'class_known' must be true or false, got {class_known!r}")
    individuals = spec.get("known_individuals", []) or []
    if not isinstance(individuals, Sequence) or not all(isinstance(i, int) and not isinstance(i, bool) for i in individuals):
        raise PpdmError(f"{where}: 'known_individuals' must be a list of row numbers (0 = the first data row)")
    try:
        return ThreatModel(
            sensitive=None if spec.get("sensitive") is None else str(spec["sensitive"]),  # a name, checked above
            known=None if known is None else tuple(str(c) for c in known),
            publish=None if spec.get("publish") is None else Disclosure.parse(str(spec["publish"])),
            sa_published=sa,
            known_individuals=tuple(individuals),
            preset=None if spec.get("preset") is None else str(spec["preset"]),
            class_known=class_known,
            outputs=None if spec.get("outputs") is None else str(spec["outputs"]),
        )
    except PpdmError as exc:
        raise PpdmError(f"{where}: {exc}") from None


def _twice(values: Iterable[Any]) -> Any:
    """The first value met a second time in ``values`` (in linear time), or ``None``."""
    seen: set[Any] = set()
    for value in values:
        if value in seen:
            return value
        seen.add(value)
    return None


def _is_name(value: object) -> bool:
    """A column or choice name as YAML reads one: a text, or a number written bare (a column '5')."""
    return isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool))


def load_threat(path: str | Path) -> ThreatModel:
    """Read a threat model from a YAML file (see ``docs/threat_models.md`` for the keys): a
    regular text file of reasonable size, without YAML aliases or keys written twice."""
    from ppdm.files import load_yaml, read_text

    text = read_text(path, "threat-model")
    path = Path(path)
    spec = load_yaml(text, str(path))
    return threat_from_dict({} if spec is None else spec, str(path))


# -- the one spelling of an attacker ------------------------------------------------------------
def checked_threat(function: str, threat: object) -> ThreatModel | None:
    """``threat`` as every attack takes it: a :class:`ThreatModel`, or ``None`` for the attack's
    documented default. Anything else (a list of columns, as the spelling before the threat model
    put there) is refused in one line naming ``function`` and the one spelling."""
    if threat is None or isinstance(threat, ThreatModel):
        return threat
    if isinstance(threat, Roles):
        threat = list(threat.quasi_identifiers)
    if isinstance(threat, Sequence) and not isinstance(threat, (str, bytes)) and all(isinstance(c, str) for c in threat):
        raise PpdmError(f"{function}: the attacker is a ThreatModel, not a list of columns: write threat=ThreatModel(known={list(threat)!r}, sensitive=...)")
    raise PpdmError(f"{function}: threat must be a ThreatModel, got {threat!r:.60}: write threat=ThreatModel(known=[...], sensitive=...)")


def required_threat(function: str, threat: object) -> ThreatModel:
    """:func:`checked_threat` for a step that has no default attacker (it is handed the audit's)."""
    checked = checked_threat(function, threat)
    if checked is None:
        raise PpdmError(f"{function}: the attacker must be given: threat=ThreatModel(known=[...], sensitive=...)")
    return checked


_Model = TypeVar("_Model", bound=Tree | Forest)


def audited(model: _Model, publish: Disclosure | None) -> _Model:
    """The model as audited under a threat model's ``publish``: what its file holds (``None``), or
    less; never more than it holds."""
    if publish is None or publish is model.disclosure:
        return model
    if publish > model.disclosure:
        raise PpdmError(f"the model publishes {model.disclosure.value} only: it cannot be audited as publishing {publish.value}")
    return cast(_Model, model.published(publish))


_Function = TypeVar("_Function", bound=Callable[..., Any])


def deprecated_alias(function: _Function, name: str) -> _Function:
    """``function`` under an old ``name`` that warns (:class:`DeprecationWarning`) when called."""

    @functools.wraps(function)
    def alias(*args: Any, **kwargs: Any) -> Any:
        warnings.warn(f"{name} is deprecated and will be removed: call {function.__name__}, which takes a tree or a forest", DeprecationWarning, stacklevel=2)
        return function(*args, **kwargs)

    alias.__name__ = alias.__qualname__ = name
    return cast(_Function, alias)
