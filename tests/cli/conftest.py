"""Run the ``ppdm`` command in-process."""

import pytest
from click.testing import CliRunner

from ppdm.cli import main


@pytest.fixture
def run():
    """``run("audit", "--dataset", ...)`` invokes ``ppdm`` with the arguments as strings."""
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(main, [str(a) for a in args], catch_exceptions=False)

    return invoke

