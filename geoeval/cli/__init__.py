"""The ``geoeval`` command line (Typer), one module per command, thin."""
