"""Checks on what the ``ppdm`` command prints, shared by the CLI tests (pytest's ``pythonpath``)."""


def one_line_error(result, message):  # type: ignore[no-untyped-def]
    """Exit status 2, ``message`` in one line of output, no traceback."""
    assert result.exit_code == 2, result.output
    assert message in result.output, result.output
    assert "Traceback" not in result.output
    assert result.output.strip().count("\n") == 0, result.output
