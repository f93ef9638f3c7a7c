"""Generalization hierarchies (paper 002 §3.1, §4; TDS): the model (:class:`Hierarchy`,
:class:`Cut`) in :mod:`~ppdm.data.hierarchy.model`, the parser of the nested structures that
describe one in :mod:`~ppdm.data.hierarchy.spec`, JSON/YAML files and the bundled Adult
hierarchies in :mod:`~ppdm.data.hierarchy.files`, and how hierarchies meet a table (checks,
binning by intervals, a starting hierarchy) in :mod:`~ppdm.data.hierarchy.usage`.
"""

from ppdm.data.hierarchy.files import adult_hierarchies, load_hierarchies, save_hierarchies
from ppdm.data.hierarchy.model import Cut, Hierarchy
from ppdm.data.hierarchy.spec import interval_label
from ppdm.data.hierarchy.usage import bin_by_hierarchies, check_hierarchies, starting_hierarchy

__all__ = [
    "Cut", "Hierarchy", "adult_hierarchies", "bin_by_hierarchies", "check_hierarchies",
    "interval_label", "load_hierarchies", "save_hierarchies", "starting_hierarchy",
]
