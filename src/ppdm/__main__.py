"""``python -m ppdm``: the ``ppdm`` command."""

from ppdm.cli import main

if __name__ == "__main__":
    main(prog_name="ppdm")
