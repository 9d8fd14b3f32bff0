"""The one registry of retrieval methods, read by the command line, the evaluation harness and the Python API.

A :class:`MethodSpec` names a method, its options model, and its factory as an import path, so listing methods
and validating options never imports a method's implementation or an optional extra. Specs come from:

- the method families shipped with ARK: every ``ark/methods/<family>/spec.py`` defines ``METHODS`` (a list of
  specs); a new family folder with a ``spec.py`` is picked up with no edit elsewhere;
- modules named in the environment variable ``ARK_METHOD_MODULES`` (comma-separated) and packages that declare an
  ``ark.methods`` entry point; each registers its specs with :func:`register_method` when imported (or, for an entry
  point, by pointing at a spec or a list of specs);
- :func:`register_method` called from Python.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ark.errors import ArkError

from ..text import did_you_mean
from .base import MethodContext, MethodOptions

if TYPE_CHECKING:
    from ..graph import KnowledgeGraph
    from .base import Retriever
    from .presets import Preset

PLUGIN_VARIABLE = "ARK_METHOD_MODULES"
ENTRY_POINT_GROUP = "ark.methods"


class MethodError(ValueError, ArkError):
    """An unknown method, bad options, or a method that cannot be built (its message says what to do)."""


@dataclass(frozen=True)
class MethodSpec:
    """A registered method: what the registry knows without importing its implementation.

    ``factory`` is ``"module:attribute"``, called as ``factory(graph, options, context)``. ``uses_llm``: the
    method talks to a chat model (``--model``/``--base-url``/``--offline`` apply). ``requires``: the extras it needs
    (named in the error when an import fails). ``analysis``: a module with ``analyze(records, per_query_rows)``,
    ``summary_rows(analysis)``, ``markdown(analysis)`` and ``write_charts(...)`` for the run's trajectories.
    ``default_truncate``: the ranking depth its evaluations score by default (ARK cuts its fused ranking at 20,
    Appendix A.2); None scores the whole ranking. ``offline``: an LLM method runs without a model through a
    scripted policy; False (the prompting baselines) makes a missing model an error (:func:`needs_model_message`).
    ``presets``: named option presets (``paper``: the paper's settings, :mod:`ark.methods.presets`).
    """

    name: str
    summary: str
    options: type[MethodOptions]
    factory: str
    family: str = ""
    uses_llm: bool = False
    requires: tuple[str, ...] = ()
    analysis: str | None = None
    docs: str | None = None
    paper: str | None = None
    default_truncate: int | None = None
    offline: bool = True
    presets: tuple[Preset, ...] = ()

    def make_options(self, values: Mapping[str, Any] | MethodOptions | None = None,
                     preset: str | None = None) -> MethodOptions:
        """Validated options from ``values`` (a mapping, already-built options, or None for the defaults) over
        ``preset``'s (or the preset ``values`` name under the key ``preset``)."""
        if isinstance(values, self.options) and preset is None:
            return values
        if isinstance(values, MethodOptions) and not isinstance(values, self.options):
            raise MethodError(f"options of type {type(values).__name__} do not belong to method {self.name!r} "
                              f"(it takes {self.options.__name__})")
        from .options import validate_options
        from .presets import PresetError, mark_preset, split_preset, with_preset

        given = values.model_dump(exclude_unset=True) if isinstance(values, MethodOptions) else dict(values or {})
        try:
            named, given = split_preset(given)
            if preset is not None and named is not None and named != preset:
                raise PresetError(f"two presets given: {preset!r} and {named!r}; choose one")
            chosen = preset or named
            return mark_preset(validate_options(self, with_preset(self, chosen, given)), chosen)
        except PresetError as exc:
            raise MethodError(str(exc)) from None

    def load_factory(self) -> Any:
        module_name, _, attribute = self.factory.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            extras = ", ".join(self.requires)
            hint = f"; install it with pip install 'ark-kg[{extras}]'" if extras else ""
            raise MethodError(f"method {self.name!r} needs a package that is not installed ({exc}){hint}") from exc
        return getattr(module, attribute)


def needs_model_message(method: str) -> str:
    """The one-line error of an LLM method without an offline policy run with no chat model, naming the fix."""
    return (f"method {method!r} prompts a chat model and has no offline policy: pass --model NAME with --base-url "
            "URL (or set ARK_MODEL with OPENAI_BASE_URL or OPENAI_API_KEY), or --model hf:PATH for a local model")


_REGISTRY: dict[str, MethodSpec] = {}
_BUILTIN: set[str] = set()
_builtins_loaded = False
_discovered = False


def register_method(spec: MethodSpec) -> MethodSpec:
    """Add ``spec`` to the registry (registering the same spec again is a no-op; another spec under a taken name
    raises :class:`MethodError`). The built-in families are read first, so no plugin takes a built-in method's name
    on any path: a lookup by a family folder's name (:func:`get_method_spec`) always finds the built-in."""
    _load_builtins()
    _add(spec)
    return spec


def method_specs() -> dict[str, MethodSpec]:
    """Every registered method by name (built-in families first, then plugins), discovering them on first use.
    A plugin that fails to load raises :class:`MethodError` naming it, on this call and every later one."""
    global _discovered
    if not _discovered:
        _discovered = True  # a plugin calling method_specs() while it is imported sees the methods found so far
        try:
            _load_builtins()
            _discover_plugins()
        except BaseException:
            _discovered = False
            raise
    return dict(_REGISTRY)


def get_method_spec(name: str) -> MethodSpec:
    """The spec of method ``name``; :class:`MethodError` lists the valid names."""
    own_family = _builtin_family_spec(name)
    if own_family is not None:
        return own_family
    specs = method_specs()
    if name not in specs:
        raise MethodError(f"unknown method {name!r}{did_you_mean(name, specs)}; valid: {', '.join(specs)}")
    return specs[name]


def resolve_truncate(spec: MethodSpec, truncate: int | None) -> int | None:
    """The truncation a run scores with: ``truncate`` when given (0: none), else the method's default."""
    if truncate is None:
        return spec.default_truncate
    if truncate < 0:
        raise MethodError(f"truncate must be >= 0 (0: no truncation), got {truncate}")
    return truncate or None


def build_method(name: str, graph: KnowledgeGraph, options: Mapping[str, Any] | MethodOptions | None = None,
                 context: MethodContext | None = None) -> Retriever:
    """Build method ``name`` for ``graph`` with validated ``options`` (a mapping or its options model)."""
    spec = get_method_spec(name)
    return spec.load_factory()(graph, spec.make_options(options), context or MethodContext())


def _builtin_family_spec(name: str) -> MethodSpec | None:
    """The spec of ``name`` where a built-in family folder of that name defines it (``ark`` in ``ark/methods/ark``),
    found without importing every family's options and scanning installed packages' entry points: a command that
    runs one method pays for that method alone. Only built-in folders are read: a plugin cannot take a built-in
    name (:func:`register_method` and plugin discovery refuse it), so full discovery finds the same spec."""
    if _builtins_loaded or not name.isidentifier():
        return _REGISTRY.get(name)
    spec_module = f"{__package__}.{name}.spec"
    try:
        if importlib.util.find_spec(spec_module) is None:
            return None
    except ModuleNotFoundError:  # ``ark.methods.<name>`` is a module, not a family folder
        return None
    # Not registered here: discovery registers the same specs later in the listing's order (families by name).
    return next((spec for spec in importlib.import_module(spec_module).METHODS if spec.name == name), None)


def _add(spec: MethodSpec) -> None:
    existing = _REGISTRY.get(spec.name)
    if existing is not None and existing != spec:
        if spec.name in _BUILTIN:
            raise MethodError(f"method {spec.name!r} ({spec.factory}) takes the name of a built-in method "
                              f"({existing.factory}); a plugin's method needs a name of its own")
        raise MethodError(f"a method named {spec.name!r} is already registered (from {existing.factory})")
    _REGISTRY[spec.name] = spec


def _load_builtins() -> None:
    """Register every ``ark/methods/<family>/spec.py``'s methods, once, before any plugin's."""
    global _builtins_loaded
    if _builtins_loaded:
        return
    from . import __path__ as package_path

    for module in sorted(pkgutil.iter_modules(package_path), key=lambda m: m.name):
        if not module.ispkg:
            continue
        spec_module = f"{__package__}.{module.name}.spec"
        if importlib.util.find_spec(spec_module) is None:
            continue
        for spec in importlib.import_module(spec_module).METHODS:
            _add(spec)
            _BUILTIN.add(spec.name)
    _builtins_loaded = True


def _discover_plugins() -> None:
    for name in filter(None, (part.strip() for part in os.environ.get(PLUGIN_VARIABLE, "").split(","))):
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise MethodError(f"{PLUGIN_VARIABLE} names module {name!r}, which cannot be imported: {exc}") from exc
        except MethodError as exc:
            raise MethodError(f"plugin module {name!r} (named in {PLUGIN_VARIABLE}): {exc}") from exc
    from importlib.metadata import entry_points

    for point in entry_points(group=ENTRY_POINT_GROUP):
        package = f" of package {point.dist.name}" if point.dist is not None else ""
        try:
            loaded = point.load()
            for spec in loaded if isinstance(loaded, (list, tuple)) else [loaded]:
                if isinstance(spec, MethodSpec):
                    _add(spec)
        except MethodError as exc:
            raise MethodError(f"plugin {point.name} = {point.value} ({ENTRY_POINT_GROUP} entry point{package}): "
                              f"{exc}") from exc
