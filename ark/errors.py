"""The one root of the errors ARK raises: ``except ark.ArkError`` catches every one of them.

Each ARK exception also keeps its kind: a bad value is still a ``ValueError``, a damaged file an ``OSError``, a
failed endpoint a ``RuntimeError`` (``class QueryFileError(ValueError, ArkError)``), so callers that catch the kind
keep working. The lowest layer: this module imports nothing of ARK, and every layer may import it. The one
exception is the sandbox worker's control flow (``CodeTimeout``, ``OutputLimit``): ``BaseException`` on purpose, so
model-written ``except Exception`` cannot swallow them, and never raised outside the sandboxed process.
"""

from __future__ import annotations


class ArkError(Exception):
    """The base of every exception ARK defines."""
