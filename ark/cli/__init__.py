"""The ``ark`` command line (typer + rich); each module registers one group of commands."""
