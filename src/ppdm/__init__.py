"""ppdm: audit what a published decision tree, forest or rule set discloses, and learn models that disclose less.

The front door (:mod:`ppdm.api`)::

    import ppdm
    model = ppdm.load_model("forest.json", data)     # ppdm JSON, XGBoost JSON, LightGBM text, .skops
    threat = ppdm.ThreatModel(sensitive="sex", known=["age", "race"], class_known=True)
    audit = ppdm.audit(model, data, threat)
    print(audit)
    ppdm.defend(model, data, threat, target="certain=0,confident=1%@0.9")

The names are loaded on first use, so ``import ppdm`` (and the ``ppdm`` command's ``--help``)
stays fast.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from ppdm.api import Audit, AuditOptions, ThreatModel, audit, defend, from_estimator, load_model, load_threat
    from ppdm.errors import PpdmError

_FRONT_DOOR = ("Audit", "AuditOptions", "ThreatModel", "audit", "from_estimator", "load_model", "load_threat")

__all__ = ["Audit", "AuditOptions", "PpdmError", "ThreatModel", "__version__", "audit", "defend", "from_estimator", "load_model", "load_threat"]


def __getattr__(name: str) -> Any:
    if name in _FRONT_DOOR:
        from ppdm import api

        return getattr(api, name)
    if name == "PpdmError":
        from ppdm.errors import PpdmError

        return PpdmError
    raise AttributeError(f"module 'ppdm' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(ModuleType):
    """The ``ppdm`` package, whose ``defend`` is the search function itself
    (:func:`ppdm.defend.search.defend`), with its signature and docstring for ``help`` and
    ``inspect``, although a subpackage of the same name exists: importing ``ppdm.defend`` (or
    anything in it) would otherwise make ``ppdm.defend`` that package. ``from ppdm.defend import
    DefenseResult`` still reads the package."""

    @property
    def defend(self) -> Any:
        from ppdm.api import defend

        return defend

    @defend.setter
    def defend(self, package: Any) -> None:
        """The import system records the subpackage here once it is imported; the front door keeps the function."""


sys.modules[__name__].__class__ = _Package
