"""Defaults every layer shares, each defined once: the time budgets and the whole-count tolerance.

Importable by every row of the layer table (like :mod:`ppdm.errors`), and importing nothing, so
that the CLI builds its ``--help`` from them without loading a solver.
"""

from __future__ import annotations

#: The default time budget of every step that has one (seconds): a forest's estimate, the exact
#: audit's integer search, a regressor's linear programmes, the defense search.
SECONDS = 300.0

#: A forest estimate's time budget when none is given (seconds): past it the audit answers with
#: the point the solver reached, status ``inaccurate``, and possible and certain sets that are proved.
FOREST_SECONDS = SECONDS

#: The exact audit's time budget when none is given (seconds).
EXACT_SECONDS = SECONDS

#: Seconds for a regressor's linear programmes (``exact=True``) when none are given.
LP_SECONDS = SECONDS

#: The defense search's time budget when none is given (seconds).
DEFENSE_SECONDS = SECONDS

#: A count read from stored fractions, a published support times ``n``, a scaled right-hand side,
#: a bound or a product is a whole number when within this of one (per record where scaled).
WHOLE = 1e-6
