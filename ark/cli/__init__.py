"""The ``ark`` command line (typer + rich); each module registers one group of commands."""

import gc

# A command's start-up imports create hundreds of thousands of objects, and with the default threshold (700) the
# cyclic garbage collector runs over and over meanwhile (~0.02 s of an offline `ark ask`). It still runs, less often:
# at most this many new container objects (a few MB) wait for a collection. Set here, before the commands' imports.
gc.set_threshold(50_000, *gc.get_threshold()[1:])
