"""Reading a tree as an anonymized table (paper 003 §3.1, Table 4).

Each leaf's path is a generalized QI record ("< 170", "*" for an attribute the path does not
test), repeated once per training record of each class the leaf counts. The table can then be
checked with the tools of data anonymization (k-anonymity, l-diversity, ...).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ppdm.attacks.leaf.leaves import published_leaf_counts
from ppdm.tree.model import Tree

ANY = "*"


def tree_as_table(tree: Tree, expand: bool = True) -> pd.DataFrame:
    """The generalized table a published tree amounts to.

    One column per attribute the tree splits on, holding the path's condition or ``*``, then the
    class column. With ``expand`` one row per training record (counts must be exact integers);
    otherwise one row per (leaf, class) with a ``count`` column, and a ``leaf`` column.
    """
    counts, _ = published_leaf_counts(tree)
    used = set(tree.split_attributes)
    attributes = [a for a in tree.attributes if a in used]
    domains = tree.domains()
    rows = []
    for leaf in tree.leaves():
        prefix = tree.prefix(leaf.id)
        described = {
            a: (prefix.conditions[a].describe(a, domains.get(a)).removeprefix(f"{a} ") if a in prefix.conditions else ANY)
            for a in attributes
        }
        for k, cls in enumerate(tree.classes):
            if counts[leaf.id, k] > 0:
                rows.append({"leaf": leaf.id, **described, tree.class_attribute: cls, "count": counts[leaf.id, k]})
    table = pd.DataFrame(rows, columns=["leaf", *attributes, tree.class_attribute, "count"])
    if not expand:
        return table
    repeats = np.rint(table["count"].to_numpy()).astype(int)
    return table.loc[table.index.repeat(repeats)].drop(columns=["count"]).reset_index(drop=True)
