"""The ``ppdm`` command: a thin layer that parses arguments, calls the library and prints.

Every :class:`~ppdm.errors.PpdmError` (and a missing or unreadable file) ends the command with a
one-line ``error: ...`` on standard error and exit status 2, never a traceback. Error texts and
data are printed literally (no console markup), so ``[1, 2]`` in a message stays ``[1, 2]``.

The module imports only click and the standard library at start, so ``ppdm --help`` answers at
once; each command imports the parts of the library (numpy, pandas, scipy and scikit-learn take
seconds to load) and of rich that it uses.
"""

from ppdm.cli import (  # noqa: F401  (each registers its command)
    attack,
    audit,
    audit_rules,
    check,
    datasets,
    defend,
    disguise,
    hierarchy,
    prune,
    report,
    show,
    train,
)
from ppdm.cli.common import DISCLOSURES, main

__all__ = ["DISCLOSURES", "main"]
