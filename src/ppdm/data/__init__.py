"""Tables and their roles: loaders, quasi-identifier groups, generalization hierarchies."""

from ppdm.data.counting import DaskCounting, Distinct, PandasCounting, compress, is_dask
from ppdm.data.hierarchy import Cut, Hierarchy, adult_hierarchies, load_hierarchies, save_hierarchies
from ppdm.data.qigroups import QIGroups, group_codes
from ppdm.data.roles import Roles, check_columns

__all__ = [
    "Cut", "DaskCounting", "Distinct", "Hierarchy", "PandasCounting", "QIGroups", "Roles", "adult_hierarchies",
    "check_columns", "compress", "group_codes", "is_dask",
    "load_hierarchies", "save_hierarchies",
]
