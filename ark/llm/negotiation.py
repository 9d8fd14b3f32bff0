"""What an OpenAI-compatible endpoint refuses, and what the client does about it.

Some servers refuse a request field outright: llama-cpp-python 0.2.x answers ``tool_choice: "required"`` with an
HTTP 500 whose body is pydantic's validation error. That is no transient failure: sending the same body again gets
the same answer. So:

- a 4xx/5xx whose body names ``tool_choice`` while the request asked for ``required`` is retried once with
  ``auto`` (one warning per endpoint naming ``--set tool_choice=auto``), and the endpoint is remembered as refusing
  ``required`` for the rest of the process (:data:`TOOL_CHOICES`);
- a 5xx whose body is a validation error is marked not to be retried (the SDK honours ``x-should-retry: false``),
  and its error names the setting to change (:func:`refusal_hint`);
- a 5xx with an empty error message to a request asking for ``required`` counts as that refusal too: llama-cpp-python
  0.3.x's ``chatml-function-calling`` format fails an assertion on ``required`` and answers HTTP 500 with the
  assertion's empty text (measured with 0.3.36, issue #48).
"""

from __future__ import annotations

import json
import logging
import re
import threading
from typing import Any

log = logging.getLogger(__name__)

REQUIRED, AUTO = "required", "auto"
# Bodies that say the request itself is invalid (pydantic, FastAPI, OpenAI's own error type). Matched, not guessed:
# anything else on a 5xx stays transient.
_VALIDATION_BODY = re.compile(r"validation error|invalid_request_error|RequestValidationError|"
                              r"unprocessable entity|extra inputs are not permitted", re.IGNORECASE)
# Request fields an endpoint may refuse, and how the user changes each of them.
SETTING_HINTS = {
    "tool_choice": "ARK asks for tool_choice `required` unless told; `--set tool_choice=auto` asks for `auto`",
    "temperature": "change `temperature` under [llm] in $ARK_HOME/config.toml",
    "max_tokens": "change `max_tokens` under [llm] in $ARK_HOME/config.toml",
    "seed": "leave `seed` unset under [llm] in $ARK_HOME/config.toml",
    "tools": "this endpoint may not support tool calling; serve the model with a tool-calling chat format "
             "(llama-cpp-python: `--chat_format chatml-function-calling`)",
}


def body_text(response: Any) -> str:
    """A read response's body as text ("" when it cannot be read)."""
    try:
        return str(response.text)
    except Exception:  # noqa: BLE001 - only used to classify the reply
        return ""


def is_validation_error(status: int, body: str) -> bool:
    """True for a failed status whose body says the request is invalid."""
    return status >= 400 and bool(_VALIDATION_BODY.search(body))


def is_blank_server_error(status: int, body: str) -> bool:
    """True for a 5xx whose body carries no error message (empty, or an OpenAI-style error with an empty one)."""
    if status < 500:
        return False
    text = body.strip()
    if not text:
        return True
    try:
        data = json.loads(text)
    except ValueError:
        return False
    error = data.get("error") if isinstance(data, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return isinstance(message, str) and not message.strip()


def _asked_required(response: Any) -> bool:
    """Whether the request behind ``response`` asked for ``tool_choice: required``."""
    try:
        sent = json.loads(response.request.content or b"{}")
    except Exception:  # noqa: BLE001 - only used to classify the reply
        return False
    return isinstance(sent, dict) and sent.get("tool_choice") == REQUIRED


def mark_refusal(response: Any) -> None:
    """Tell the SDK not to retry a 5xx that refuses the request itself (a validation error, a body naming
    ``tool_choice``, or no message at all to a request asking for ``required``): resending cannot succeed."""
    status = int(getattr(response, "status_code", 0) or 0)
    if status < 500:
        return
    body = body_text(response)
    if (is_validation_error(status, body) or "tool_choice" in body
            or (is_blank_server_error(status, body) and _asked_required(response))):
        response.headers["x-should-retry"] = "false"


def refuses_tool_choice(request: dict[str, Any], status: int, body: str) -> bool:
    """True when a failed request asked for ``tool_choice: required`` and the endpoint's refusal names it (or is a
    5xx with no message, the form llama-cpp-python 0.3.x's refusal takes)."""
    return (request.get("tool_choice") == REQUIRED and status >= 400
            and ("tool_choice" in body or is_blank_server_error(status, body)))


def refusal_hint(message: str) -> str:
    """What to change for a validation error: the settings its message names, else the generic advice."""
    named = [hint for name, hint in SETTING_HINTS.items() if re.search(rf"\b{name}\b", message)]
    if named:
        return "the endpoint refused the request as invalid (not retried); " + "; ".join(named)
    return ("the endpoint refused the request as invalid (not retried); check which field its message names "
            "against what the server supports")


class ToolChoiceMemory:
    """The endpoints of this process known to refuse ``tool_choice: required`` (thread-safe)."""

    def __init__(self) -> None:
        self._auto: set[str] = set()
        self._lock = threading.Lock()

    def choice(self, endpoint: str, wanted: str) -> str:
        """The tool_choice to send to ``endpoint``: ``auto`` instead of ``required`` where it was refused."""
        with self._lock:
            return AUTO if wanted == REQUIRED and endpoint in self._auto else wanted

    def refused(self, endpoint: str, detail: str) -> None:
        """Remember that ``endpoint`` refused ``required``; the first time, one warning naming the setting."""
        with self._lock:
            first = endpoint not in self._auto
            self._auto.add(endpoint)
        if first:
            shown = " ".join(detail.split())[:200]
            log.warning("%s refused tool_choice=%r (%s); retrying with tool_choice=%r for the rest of this run. "
                        "Pass `--set tool_choice=auto` to ask for it directly", endpoint, REQUIRED, shown, AUTO)

    def forget(self) -> None:
        """Forget every endpoint (for tests and long-lived servers whose endpoints change)."""
        with self._lock:
            self._auto.clear()


TOOL_CHOICES = ToolChoiceMemory()
