"""A method's options from the command line (``--set key=value``, ``--config FILE.toml``) or Python, validated by
its options model, with errors that list the valid keys and their types."""

from __future__ import annotations

import json
import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from ark.errors import ArkError

from ..text import did_you_mean

if TYPE_CHECKING:
    from .base import MethodOptions
    from .registry import MethodSpec


@dataclass(frozen=True)
class OptionInfo:
    """One option as ``ark methods`` shows it: dotted key, type, default and description."""

    key: str
    type: str
    default: Any
    description: str


def parse_set_values(pairs: Iterable[str]) -> dict[str, Any]:
    """``["a=1", "tools.neighborhood_budget=10", "fusion=votes"]`` → a nested dict.

    A value is read as JSON when it parses (numbers, ``true``/``false``, ``null``, lists, quoted strings), else kept
    as the plain string; dots in the key address nested options.
    """
    from .registry import MethodError

    values: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise MethodError(f"--set {pair!r}: expected key=value, e.g. --set n_agents=5")
        try:
            value: Any = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        _assign(values, key.split("."), value, pair)
    return values


def _assign(target: dict[str, Any], path: list[str], value: Any, pair: str) -> None:
    from .registry import MethodError

    for part in path[:-1]:
        child = target.setdefault(part, {})
        if not isinstance(child, dict):
            raise MethodError(f"--set {pair!r}: {part!r} is set to a value and also used as a group of options")
        target = child
    target[path[-1]] = value


def read_options_file(path: str | Path, method: str) -> dict[str, Any]:
    """Options from a TOML file: the table named after the method when there is one, else the whole file."""
    import tomllib  # here: a run without --config does not pay for the TOML parser's import

    from .registry import MethodError

    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MethodError(f"--config {path}: no such file") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise MethodError(f"--config {path}: not a readable TOML file ({exc})") from None
    table = data.get(method)
    return dict(table) if isinstance(table, dict) else data


def merge_options(*layers: Mapping[str, Any]) -> dict[str, Any]:
    """Later layers override earlier ones, key by key (nested tables merged)."""
    merged: dict[str, Any] = {}
    for layer in layers:
        for key, value in layer.items():
            if isinstance(value, Mapping) and isinstance(merged.get(key), dict):
                merged[key] = merge_options(merged[key], value)
            else:
                merged[key] = dict(value) if isinstance(value, Mapping) else value
    return merged


def validate_options(spec: MethodSpec, values: Mapping[str, Any]) -> MethodOptions:
    """``spec.options`` built from ``values``; :class:`~ark.methods.registry.MethodError` names each bad key or value
    and lists the valid keys with their types."""
    from .registry import MethodError

    try:
        return spec.options.model_validate(dict(values))
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            key = ".".join(str(p) for p in error["loc"]) or "(options)"
            if error["type"] == "extra_forbidden":
                keys = [o.key for o in describe_options(spec.options)]
                problems.append(f"unknown option {key!r}{did_you_mean(key, keys)}")
            else:
                problems.append(f"{key}={error.get('input')!r}: {error['msg']}")
        valid = ", ".join(f"{o.key} ({o.type})" for o in describe_options(spec.options))
        raise MethodError(f"method {spec.name!r}: {'; '.join(problems)}. Valid options: {valid or '(none)'}") from None


def describe_options(model: type[BaseModel], prefix: str = "") -> list[OptionInfo]:
    """Every option of ``model`` (nested models flattened to dotted keys), in declaration order."""
    out: list[OptionInfo] = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            out += describe_options(annotation, prefix=f"{prefix}{name}.")
            continue
        default = None if field.is_required() else field.get_default(call_default_factory=True)
        out.append(OptionInfo(f"{prefix}{name}", type_name(annotation), default, field.description or ""))
    return out


def type_name(annotation: Any) -> str:
    """A short readable name of a type annotation: ``int``, ``str | None``, ``one of votes, ordering``."""
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return "one of " + ", ".join(str(v) for v in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(a) for a in typing.get_args(annotation))
    if origin is not None:
        args = ", ".join(type_name(a) for a in typing.get_args(annotation))
        return f"{getattr(origin, '__name__', str(origin))}[{args}]"
    if annotation is type(None):
        return "None"
    return getattr(annotation, "__name__", str(annotation))


def options_dict(options: MethodOptions) -> dict[str, Any]:
    """The full options as plain JSON values (what a run's config records and a resume compares)."""
    return options.model_dump(mode="json")


class RequestOptionError(ValueError, ArkError):
    """An option a request may not set (``server_only``: a setting of the server's; else no such option)."""

    def __init__(self, message: str, key: str, server_only: bool) -> None:
        super().__init__(message)
        self.key = key
        self.server_only = server_only


def request_keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    """The dotted keys a request may set: the fields each options model names in its ``REQUEST_OPTIONS``, a nested
    options model by its own list (:class:`~ark.methods.base.MethodOptions`)."""
    out: list[str] = []
    for name in getattr(model, "REQUEST_OPTIONS", ()):
        annotation = model.model_fields[name].annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            out += request_keys(annotation, f"{prefix}{name}.")
        else:
            out.append(f"{prefix}{name}")
    return out


def request_values(spec: MethodSpec, values: Mapping[str, Any] | BaseModel) -> dict[str, Any]:
    """The options a request gave, by dotted key, each checked against the method's allow-list
    (:func:`request_keys`): :class:`RequestOptionError` names the first option the request may not set and lists
    those it may. Options models given whole count by the fields set in them."""
    allowed = request_keys(spec.options)
    known = {info.key for info in describe_options(spec.options)}
    groups = {key.rsplit(".", depth)[0] for key in known for depth in range(1, key.count(".") + 1)}
    given: dict[str, Any] = {}
    for key, value in _dotted(_plain(values), known):
        if key in allowed:
            given[key] = value
            continue
        under = sorted(k for k in known if k.startswith(f"{key}.")) if key in groups else []
        refused = [k for k in under if k not in allowed]
        if under and not refused:  # a whole group of per-request options given as one value
            given[key] = value
            continue
        allowed_text = ", ".join(allowed) or "(none)"
        if key in known or under:
            raise RequestOptionError(f"option {key!r} is set by the server, not per request; allowed per-request "
                                     f"options for {spec.name}: {allowed_text}", key, server_only=True)
        raise RequestOptionError(f"unknown option {key!r} for method {spec.name!r}; allowed per-request options: "
                                 f"{allowed_text}", key, server_only=False)
    return given


def _plain(values: Mapping[str, Any] | BaseModel) -> Mapping[str, Any]:
    return values.model_dump(exclude_unset=True) if isinstance(values, BaseModel) else values


def _dotted(values: Mapping[str, Any], leaves: set[str], prefix: str = "") -> list[tuple[str, Any]]:
    """``{"a": {"b": 1}, "c.d": 2}`` → ``[("a.b", 1), ("c.d", 2)]`` (an option that is itself a leaf is kept whole;
    a nested options model given as an object counts by the fields set in it)."""
    out: list[tuple[str, Any]] = []
    for name, value in values.items():
        key = f"{prefix}{name}"
        if isinstance(value, BaseModel) and key not in leaves:
            value = value.model_dump(exclude_unset=True)
        if isinstance(value, Mapping) and key not in leaves:
            out += _dotted(value, leaves, f"{key}.")
        else:
            out.append((key, value))
    return out


def nest_keys(values: Mapping[str, Any]) -> dict[str, Any]:
    """``{"a.b": 1, "c": 2}`` → ``{"a": {"b": 1}, "c": 2}`` (the inverse of :func:`request_values`' keys)."""
    nested: dict[str, Any] = {}
    for key, value in values.items():
        *groups, leaf = key.split(".")
        target = nested
        for group in groups:
            target = target.setdefault(group, {})
            if not isinstance(target, dict):
                raise RequestOptionError(f"option {group!r} is given both as a value and as a group of options",
                                         key, server_only=False)
        target[leaf] = value
    return nested
