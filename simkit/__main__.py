"""``python -m simkit``: the same as the ``simkit`` command."""

from simkit.cli import console_main

if __name__ == "__main__":
    console_main()
