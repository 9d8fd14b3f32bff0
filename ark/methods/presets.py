"""Named presets of method options: ``paper`` sets each family's options to the values its paper states.

A method's spec lists its presets (:attr:`MethodSpec.presets`): per preset, the :class:`PresetSetting` s it changes,
each with the paper's value and where the paper states it. A preset is a layer *under* the options given with it:
``--preset paper --set n_agents=5`` runs the paper's settings with five agents. It is chosen by

- the command line: ``ark ask/eval/experiment ... --preset paper`` (or ``--set preset=paper``);
- a TOML options file: ``preset = "paper"`` in the method's table (or the whole file);
- Python: ``ARK(graph, preset="paper")``, ``build_method("ark", graph, {"preset": "paper"})``;
- HTTP and MCP: a request's ``preset`` field (a server's own options may name one too: ``--set ark.preset=paper``).
  Every setting a preset changes is one a request may set (its family's ``REQUEST_OPTIONS``; a test holds this),
  so a preset is per request, checked like the options it stands for: a preset that would change a server
  setting is refused as that option would be.

The preset applied is recorded with the options (:func:`preset_of`) and in a run's config (``preset``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ark.errors import ArkError

if TYPE_CHECKING:
    from .base import MethodOptions
    from .registry import MethodSpec

PRESETS = ("paper",)
NO_PRESET = "none"  # --preset none: no preset (the paper experiments' default is paper)
PRESET_KEY = "preset"  # the key naming a preset among a method's option values (TOML, --set, Python mappings)


class PresetError(ValueError, ArkError):
    """An unknown preset, or one a method does not have."""


@dataclass(frozen=True)
class PresetSetting:
    """One option a preset sets: its dotted ``key``, the paper's ``value``, and where the paper states it
    (``source``: section or table; ``quote``: the words of the paper that state it, found in its text by a test)."""

    key: str
    value: Any
    source: str
    quote: str

    def shown(self) -> str:
        """``key = value`` as ``ark methods --show-preset`` prints it (JSON-like values: ``false``, ``"plain"``)."""
        import json

        return f"{self.key} = {json.dumps(self.value)}"


@dataclass(frozen=True)
class Preset:
    """A named preset of one method: the paper it follows and the settings it changes."""

    name: str
    paper: str
    settings: tuple[PresetSetting, ...]

    def keys(self) -> list[str]:
        """The dotted option keys the preset sets."""
        return [setting.key for setting in self.settings]


def check_preset_name(name: str) -> str:
    """``name`` when it is a known preset, else :class:`PresetError` listing them."""
    if name not in PRESETS:
        raise PresetError(f"unknown preset {name!r}; valid: {', '.join(PRESETS)}")
    return name


def method_preset(spec: MethodSpec, name: str) -> Preset:
    """``spec``'s preset ``name``; :class:`PresetError` when the method has none of that name."""
    check_preset_name(name)
    for preset in spec.presets:
        if preset.name == name:
            return preset
    having = ", ".join(p.name for p in spec.presets) or "none"
    raise PresetError(f"method {spec.name!r} has no preset {name!r} (its presets: {having}); `ark methods "
                      f"--show-preset {name}` lists the methods that have it")


def preset_if_any(spec: MethodSpec, name: str | None) -> str | None:
    """``name`` when ``spec`` has that preset, else None: a table of many methods applies the paper preset to
    those of the papers' families and leaves the others as they are."""
    return name if name is not None and any(p.name == name for p in spec.presets) else None


def preset_values(spec: MethodSpec, name: str) -> dict[str, Any]:
    """The nested option values preset ``name`` sets for ``spec``."""
    values: dict[str, Any] = {}
    for setting in method_preset(spec, name).settings:
        *groups, last = setting.key.split(".")
        target = values
        for group in groups:
            target = target.setdefault(group, {})
        target[last] = setting.value
    return values


def split_preset(values: Mapping[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """The preset named among ``values`` (key ``preset``), and the other values."""
    rest = dict(values)
    name = rest.pop(PRESET_KEY, None)
    if name is not None and not isinstance(name, str):
        raise PresetError(f"preset must be a name ({', '.join(PRESETS)}), got {name!r}")
    return name, rest


def with_preset(spec: MethodSpec, name: str | None, values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` over the preset's (none: ``values`` as given)."""
    from .options import merge_options

    if name is None:
        return dict(values)
    return merge_options(preset_values(spec, name), values)


def mark_preset(options: MethodOptions, name: str | None) -> MethodOptions:
    """``options`` marked as made under preset ``name`` (read back by :func:`preset_of`)."""
    if name is not None:
        options._preset = name
    return options


def preset_of(options: MethodOptions) -> str | None:
    """The preset ``options`` were made under (None: none)."""
    return options._preset
