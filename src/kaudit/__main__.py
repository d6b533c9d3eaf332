"""`python -m kaudit`: the same as the `kaudit` command."""

from kaudit.cli.main import main

main()
