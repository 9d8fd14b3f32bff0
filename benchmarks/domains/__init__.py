"""Graphs of other domains built from real data that ships in Python packages, written as the tables a user would
have and imported with ARK's own importer (``ark graph import``), each with questions of six kinds whose answers
are computed from the tables (issue 46's evaluation half).

They live under ``benchmarks/`` and not in the ``ark`` package: they are evaluation fixtures (held-out schemas for
the offline policy), not something a user's graph needs; a user brings their own tables to ``ark graph import``.
``GRAPHS`` names each builder; ``benchmarks/other_domains.py`` runs them.
"""

from __future__ import annotations

from collections.abc import Callable

from .tables import DomainData


def _pypackages(limit: int | None) -> DomainData:
    from . import pypackages

    return pypackages.build(limit)


def _edam(limit: int | None) -> DomainData:
    from . import edam

    return edam.build(limit)


def _wordnet(limit: int | None) -> DomainData:
    from . import wordnet

    return wordnet.build(limit)


def _famplex(limit: int | None) -> DomainData:
    from . import famplex

    return famplex.build(limit)


def _films(limit: int | None) -> DomainData:
    from . import films

    return films.build(limit)


GRAPHS: dict[str, Callable[[int | None], DomainData]] = {
    "pypackages": _pypackages, "edam": _edam, "wordnet": _wordnet, "famplex": _famplex, "films": _films}
