"""One root for every error ARK raises: ``except ark.ArkError`` catches them all, and each keeps its kind."""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import pytest

import ark
from ark.errors import ArkError

ARK_SOURCES = Path(ark.__file__).resolve().parent
BUILTIN_EXCEPTIONS = {name for name, value in vars(builtins).items()
                      if isinstance(value, type) and issubclass(value, BaseException)}
# The sandbox worker's control flow: BaseException on purpose (model-written ``except Exception`` must not swallow
# it), raised and caught inside the sandboxed process only.
NOT_ARK_ERRORS = {"ark/sandbox/worker.py:CodeTimeout", "ark/sandbox/worker.py:OutputLimit"}
# A base named like an exception of another package (``httpx.ReadError``, ``_httpx().ReadError``) counts as one.
FOREIGN_EXCEPTION = ("Error", "Exception", "Timeout", "Exit", "Abort", "Warning")


def _base_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def exception_classes(root: Path = ARK_SOURCES) -> dict[str, list[str]]:
    """Every class defined in ark/ that derives from an exception (by its bases' names, to a fixpoint): its
    ``path:Name`` -> its bases' names. Read from the source, so modules with missing extras count too."""
    classes: dict[str, tuple[str, list[str]]] = {}
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                classes[f"{rel}:{node.name}"] = (node.name, [_base_name(base) for base in node.bases])
    exception_names = set(BUILTIN_EXCEPTIONS)
    grew = True
    while grew:
        found = {name for name, bases in classes.values()
                 if exception_names & set(bases) or any(base.endswith(FOREIGN_EXCEPTION) for base in bases)}
        grew = not found <= exception_names
        exception_names |= found
    return {key: bases for key, (name, bases) in classes.items() if name in exception_names - BUILTIN_EXCEPTIONS}


def stray_exceptions(classes: dict[str, list[str]]) -> list[str]:
    """The classes of :func:`exception_classes` not under ``ArkError`` (the sandbox worker's two aside)."""
    rooted = {"ArkError"}
    grew = True
    while grew:
        found = {key.split(":")[1] for key, bases in classes.items() if rooted & set(bases)}
        grew = not found <= rooted
        rooted |= found
    return sorted(key for key in classes if key.split(":")[1] not in rooted and key not in NOT_ARK_ERRORS)


def test_every_ark_exception_class_is_an_ark_error() -> None:
    classes = exception_classes()
    stray = stray_exceptions(classes)
    assert len(classes) >= 55, sorted(classes)  # the walk finds them (60 on 2 December 2026)
    assert "ark/llm/openai_client.py:ReplyCut" in classes  # a foreign exception's subclass (httpx's ReadError)
    assert stray == [], f"exception classes not under ark.ArkError: {stray}"


def test_the_walk_finds_a_stray_exception(tmp_path: Path) -> None:
    """The check can fail: a new error class with another root is reported, with what derives from it."""
    package = tmp_path / "ark"
    package.mkdir()
    (package / "mod.py").write_text("class Odd(KeyError):\n    pass\n\nclass Sub(Odd):\n    pass\n\n"
                                    "class Fine(ValueError, ArkError):\n    pass\n\nclass Plain:\n    pass\n\n"
                                    "class Wire(httpx.ReadError):\n    pass\n")
    classes = exception_classes(package)
    assert sorted(classes) == ["ark/mod.py:Fine", "ark/mod.py:Odd", "ark/mod.py:Sub", "ark/mod.py:Wire"]
    assert stray_exceptions(classes) == ["ark/mod.py:Odd", "ark/mod.py:Sub", "ark/mod.py:Wire"]


def test_errors_keep_their_kind_and_share_the_root() -> None:
    from ark.eval.query_files import QueryFileError
    from ark.graphdb.errors import CypherSyntaxError
    from ark.llm.openai_client import ReplyCut, ReplyTooLarge, _httpx
    from ark.llm.policy import LLMError
    from ark.methods.registry import MethodError
    from ark.storage.checksums import DamagedFileError

    assert ark.ArkError is ArkError
    for error, kind in ((QueryFileError, ValueError), (MethodError, ValueError), (LLMError, RuntimeError),
                        (DamagedFileError, OSError), (CypherSyntaxError, ArkError),
                        (ReplyTooLarge, _httpx().ReadError), (ReplyCut, _httpx().ReadError)):
        assert issubclass(error, ArkError) and issubclass(error, kind)
    with pytest.raises(ValueError):  # callers catching the kind still catch it
        raise MethodError("unknown method 'bm52'")
    try:
        from ark.methods import build_method

        build_method("no-such-method", None)
    except ArkError as caught:
        assert "no-such-method" in str(caught)
    else:  # pragma: no cover
        pytest.fail("an unknown method did not raise an ArkError")
