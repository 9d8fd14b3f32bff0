"""The fault-injection cases of what a request may set (issue 44), as rows of ``benchmarks/fault_injection.py``
(which runs them with its other cases, in its ``Bench``: a temporary ``ARK_HOME``, the small clinical graph, the
scripted loopback model server).

The downgrade: ``method: graphscout``, ``options.sandbox.isolation: "rlimit"`` and the request's own
``model.base_url`` at the scripted server, whose "model" sends code printing a planted canary file (readable by
every user). Sent to the real ``ark serve`` (``/api/ask``, with and without ``--allow-request-models``) and to the
real ``ark mcp``'s ``retrieve`` (stdio, the SDK's client): each must be refused naming the option, with no model
call and the canary's content nowhere.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from fault_cases_harden import _error_line, _post, _serve  # noqa: E402

from tests.support.openai_server import text_reply, tool_reply, turn_script  # noqa: E402

QUESTION = "How many genes are associated with Marfan syndrome?"
NAMED = "'sandbox.isolation' is set by the server"


def _downgrade(b: Any, canary: Path) -> dict:
    code = f"print(open({str(canary)!r}).read())"
    b.server.responder = turn_script([tool_reply(("code_interpreter", {"code": code})), text_reply("\\answer{1}")])
    return {"question": QUESTION, "method": "graphscout", "options": {"sandbox": {"isolation": "rlimit"}},
            "model": {"model": "test-model", "base_url": b.server.base_url}}


def _canary() -> tuple[Path, str]:
    folder = Path(tempfile.mkdtemp(prefix="ark-canary-"))
    folder.chmod(0o755)
    path = folder / "canary.txt"
    secret = f"CANARY-{uuid.uuid4().hex}"
    path.write_text(secret)
    path.chmod(0o644)
    return path, secret


def request_settings(b: Any) -> None:
    canary, secret = _canary()
    try:
        for flags in ([], ["--allow-request-models"]):
            body = _downgrade(b, canary)
            before = b.server.request_count
            process, url = _serve(b, ["serve", b.graph, "--port", "0", "--offline", *flags],
                                  r"listening on (http://127\.0\.0\.1:\d+)/")
            try:
                code, text = _post(f"{url}/api/ask", json.dumps(body).encode(), {"Content-Type": "application/json"})
            finally:
                process.terminate()
                process.wait(timeout=30)
            calls, seen = b.server.request_count - before, secret in text + json.dumps(b.server.requests)
            b.record(f"44.1 sandbox rlimit + own base_url: ark serve {' '.join(flags)}".rstrip(),
                     (code, _error_line(text)), code == 403 and NAMED in text and calls == 0 and not seen,
                     f"{calls} model call(s); canary {'READ' if seen else 'unread'}")
        _mcp_row(b, canary, secret)
    finally:
        shutil.rmtree(canary.parent, ignore_errors=True)


def _mcp_row(b: Any, canary: Path, secret: str) -> None:
    """The server's own model writes the code: only the sandbox setting stands between it and the canary."""
    try:
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters
    except ImportError:
        b.record("44.1 sandbox rlimit: ark mcp retrieve", (0, "skipped: the mcp extra is not installed"), True)
        return
    body = _downgrade(b, canary)
    del body["model"]
    command = b.command("mcp", b.graph, "--model", "test-model", "--base-url", b.server.base_url)
    target = StdioServerParameters(command=command[0], args=command[1:], env={**os.environ, **b.env()})

    async def call() -> tuple[bool, str]:
        async with Client(target) as client:
            result = await client.call_tool("retrieve", body)
            return bool(result.is_error), result.content[0].text

    before = b.server.request_count
    refused, text = asyncio.run(call())
    calls, seen = b.server.request_count - before, secret in text + json.dumps(b.server.requests)
    b.record("44.1 sandbox rlimit: ark mcp retrieve (stdio)", (1 if refused else 0, text[:140]),
             refused and NAMED in text and calls == 0 and not seen,
             f"{calls} model call(s); canary {'READ' if seen else 'unread'}")


CASES = [("request settings", request_settings)]
