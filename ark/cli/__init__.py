"""The ``ark`` command line (typer + rich); each module registers one group of commands."""

import gc
import os

# A command's start-up imports create hundreds of thousands of objects, and with the default threshold (700) the
# cyclic garbage collector runs over and over meanwhile (~0.02 s of an offline `ark ask`). It still runs, less often:
# at most this many new container objects (a few MB) wait for a collection. Set here, before the commands' imports.
gc.set_threshold(50_000, *gc.get_threshold()[1:])

# numpy's OpenBLAS starts its worker threads when numpy is imported, and each spins for 2**28 cycles (~0.1 s of a
# core) waiting for work before it sleeps: up to 0.3 s of CPU for every command that opens a graph, and on a busy
# machine wall time too, as the spinning threads compete with the command itself. 2**4 cycles makes them sleep at
# once; a later BLAS call wakes them (microseconds), with the same threads and the same results. Read by OpenBLAS
# when it loads, so set before any import of numpy; a value the user set wins.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
