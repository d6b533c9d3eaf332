"""The `kaudit` command line: one thin module per command group over the public library."""
