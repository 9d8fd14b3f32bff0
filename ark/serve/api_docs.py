"""``GET /docs``: the JSON API's reference as one page rendered on the server from the app's OpenAPI schema.

FastAPI's own ``/docs`` and ``/redoc`` load Swagger UI and ReDoc from a CDN (the page would reach out to the
internet and run code from it); this page has no script and loads nothing: every route with its summary, parameters
and body schema, escaped, and a link to ``/openapi.json`` for tools that want the schema itself.
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

STYLE = ("body{font:15px/1.45 system-ui,sans-serif;max-width:980px;margin:2em auto;padding:0 1em;color:#222}"
         "h2{margin-top:2em;font-size:1.05em}code.m{font-weight:600;margin-right:.5em}"
         "pre{background:#f4f4f4;padding:.6em;overflow:auto;font-size:13px}table{border-collapse:collapse}"
         "td,th{border:1px solid #ddd;padding:.2em .5em;text-align:left}")


def _resolve(schema: Any, components: dict[str, Any], depth: int = 0) -> Any:
    """``schema`` with its ``$ref``s replaced by the referenced component (a few levels deep)."""
    if isinstance(schema, list):
        return [_resolve(item, components, depth) for item in schema]
    if not isinstance(schema, dict):
        return schema
    ref = schema.get("$ref")
    if isinstance(ref, str) and depth < 4:
        return _resolve(components.get(ref.rsplit("/", 1)[-1], {}), components, depth + 1)
    return {key: _resolve(value, components, depth) for key, value in schema.items()}


def _parameters(parameters: list[dict[str, Any]]) -> str:
    if not parameters:
        return ""
    rows = "".join(
        f"<tr><td><code>{escape(str(p.get('name')))}</code></td><td>{escape(str(p.get('in')))}</td>"
        f"<td>{'yes' if p.get('required') else 'no'}</td>"
        f"<td><code>{escape(json.dumps(p.get('schema', {}), ensure_ascii=False))}</code></td></tr>"
        for p in parameters)
    return f"<table><tr><th>parameter</th><th>in</th><th>required</th><th>schema</th></tr>{rows}</table>"


def render_docs(openapi: dict[str, Any]) -> str:
    """The reference page (HTML) of an OpenAPI document."""
    info = openapi.get("info", {})
    components = openapi.get("components", {}).get("schemas", {})
    parts = [f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{escape(str(info.get('title', 'API')))}"
             f" API</title><style>{STYLE}</style></head><body>",
             f"<h1>{escape(str(info.get('title', 'API')))} API</h1>",
             f"<p>{escape(str(info.get('description') or info.get('summary') or ''))}</p>",
             "<p>The schema itself: <a href=\"/openapi.json\">/openapi.json</a>. Every error is JSON "
             "<code>{\"error\": message, \"kind\": ...}</code>. Requests other than GET must be sent from this "
             "server's own page or by a client that is not a browser, with <code>Content-Type: application/json"
             "</code>.</p>"]
    for path, operations in openapi.get("paths", {}).items():
        for method, operation in operations.items():
            parts.append(f"<h2><code class=m>{escape(method.upper())}</code><code>{escape(path)}</code></h2>")
            parts.append(f"<p>{escape(str(operation.get('summary') or operation.get('description') or ''))}</p>")
            parts.append(_parameters(operation.get("parameters", [])))
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
            if body is not None:
                shown = json.dumps(_resolve(body, components), indent=2, ensure_ascii=False)
                parts.append(f"<p>Body (JSON):</p><pre>{escape(shown)}</pre>")
    parts.append("</body></html>")
    return "".join(parts)
