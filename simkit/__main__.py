"""``python -m simkit``: the same as the ``simkit`` command."""

from simkit.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
