"""typer's help and error renderer without the two rich modules it imports but rarely uses.

``typer.rich_utils`` (imported by typer the first time it renders help or a usage error) imports ``rich.markdown``
(markdown-it, ~130 M instructions) and ``rich.traceback`` (pygments, attrs; ~70 M) at its top, while it uses
``Markdown`` only for help written in markdown mode (ark's is not) and ``Traceback`` only to show an uncaught
exception: together most of ``ark --help``'s imports. :func:`install` hooks the import of ``typer.rich_utils`` so that
while it runs those two names come from placeholders that import the real class when first called or asked for an
attribute (``Markdown(...)``, ``Traceback.from_exception(...)``): the same objects, the same output, paid for only
when used. Nothing else sees the placeholders: they are never left in ``sys.modules``. When typer or rich change so
that the hook does not apply (another module layout), the import proceeds untouched.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import sys
import types
from typing import Any

TARGET = "typer.rich_utils"
DEFERRED = {"rich.markdown": "Markdown", "rich.traceback": "Traceback"}


class _Deferred(type):
    """Metaclass of the placeholders: calling one or reading an attribute goes to the real class."""

    _module: str

    def real(cls) -> Any:
        return getattr(importlib.import_module(cls._module), cls.__name__)

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return cls.real()(*args, **kwargs)

    def __getattr__(cls, name: str) -> Any:
        return getattr(cls.real(), name)


class _Loader:
    """The real loader of ``typer.rich_utils``, run with the placeholder modules in place. (A plain class, as the
    finder below: the import system only calls these methods, and importlib.abc costs ~10 M instructions.)"""

    def __init__(self, real: importlib.machinery.SourceFileLoader) -> None:
        self.real = real

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        return self.real.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        placeholders = {}
        for name, attribute in DEFERRED.items():
            if name not in sys.modules:  # already imported: the real one costs nothing more
                placeholder = types.ModuleType(name)
                setattr(placeholder, attribute, _Deferred(attribute, (), {"_module": name}))
                placeholders[name] = placeholder
        sys.modules.update(placeholders)
        try:
            self.real.exec_module(module)
        finally:
            for name, placeholder in placeholders.items():
                if sys.modules.get(name) is placeholder:
                    del sys.modules[name]

    def __getattr__(self, name: str) -> Any:  # get_source, get_filename, ... for tracebacks and inspect
        return getattr(self.real, name)


class _Finder:
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != TARGET:
            return None
        uninstall()
        spec = importlib.util.find_spec(fullname)
        if spec is not None and isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            spec.loader = _Loader(spec.loader)
        return spec


_FINDER = _Finder()


def install() -> None:
    """Hook the next import of ``typer.rich_utils`` (a no-op once it is imported)."""
    if TARGET not in sys.modules and _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def uninstall() -> None:
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
