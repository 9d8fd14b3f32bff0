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
