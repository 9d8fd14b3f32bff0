"""The evidence drawing (:mod:`ark.runtime.evidence_graph`) as SVG: one standalone document, also put as is into the
web page. Written here by hand because the drawing is a few circles, curves and labels at positions the layout
already fixed (a graph-drawing library would add a dependency and a layout of its own).

Every string from the graph or a model (names, types, relations) goes through :func:`xml_text`: XML-escaped, with
the characters XML cannot carry removed, so a node named ``<script>`` is text, never markup. Node links are built
from integer node indices only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from xml.sax.saxutils import escape

from .evidence_graph import EvidenceEdge, EvidenceGraph, EvidenceNode

LABEL_CHARS = 26
# Characters XML 1.0 cannot carry at all (C0 controls other than tab and line breaks, surrogates, U+FFFE/U+FFFF).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
STYLE = (".ev-edge path.line{fill:none;stroke:#8a94a6;stroke-width:1.4}"
         ".ev-edge path.hit{fill:none;stroke:transparent;stroke-width:9}"
         ".ev-edge:hover path.line{stroke:#1d2330;stroke-width:2.4}"
         ".ev-node circle{stroke:#fff;stroke-width:1.5}.ev-node.anchor circle{stroke:#1d2330;stroke-width:2.5}"
         ".ev-node text,.ev-legend text{font:12px system-ui,sans-serif;fill:#1d2330}"
         ".ev-node:hover text{font-weight:bold}.ev-legend text.muted{fill:#666}")


def xml_text(value: object) -> str:
    """``value`` as text safe in XML content and in a double- or single-quoted attribute."""
    return escape(_NOT_XML.sub("", str(value)), {'"': "&quot;", "'": "&apos;"})


def _short(name: str) -> str:
    return name if len(name) <= LABEL_CHARS else name[: LABEL_CHARS - 1].rstrip() + "…"


def render_svg(drawing: EvidenceGraph, node_href: Callable[[int], str] | None = None) -> str:
    """The drawing as an SVG document. ``node_href(index)`` makes each node a link (the web page's node page);
    without it nodes are not links (a file written for the terminal user)."""
    nodes = {node.index: node for node in drawing.nodes}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="evidence-drawing" width="{drawing.width:g}" '
             f'height="{drawing.height:g}" viewBox="0 0 {drawing.width:g} {drawing.height:g}" role="img" '
             f'aria-label="{xml_text(_caption(drawing))}">',
             f"<title>{xml_text(_caption(drawing))}</title>",
             f"<style>{STYLE}</style>", '<rect width="100%" height="100%" fill="#fff"/>', _legend(drawing),
             '<g class="ev-edges">']
    parts += [_edge(edge, nodes) for edge in drawing.edges]
    parts.append('</g><g class="ev-nodes">')
    parts += [_node(node, node_href) for node in drawing.nodes]
    parts.append("</g></svg>")
    return "\n".join(parts) + "\n"


def _caption(drawing: EvidenceGraph) -> str:
    anchors = sum(1 for n in drawing.nodes if n.anchor)
    answers = sum(1 for n in drawing.nodes if n.role == "answer")
    about = f" for: {drawing.question}" if drawing.question else ""
    return f"Evidence{about} ({anchors} anchor(s), {len(drawing.edges)} followed edge(s), {answers} answer(s))"


def _legend(drawing: EvidenceGraph) -> str:
    items, x = [], 10.0
    for node_type, colour in drawing.types:
        items.append(f'<circle cx="{x + 5:g}" cy="14" r="5" fill="{colour}"/>'
                     f'<text x="{x + 14:g}" y="18">{xml_text(node_type)}</text>')
        x += 24 + 7 * len(node_type)
    note = "outlined: anchor · size: votes"
    if drawing.omitted:
        note += f" · {drawing.omitted} more intermediate node(s) not drawn"
    items.append(f'<text class="muted" x="{x + 6:g}" y="18">{xml_text(note)}</text>')
    return f'<g class="ev-legend">{"".join(items)}</g>'


def _edge(edge: EvidenceEdge, nodes: dict[int, EvidenceNode]) -> str:
    source, target = nodes[edge.source], nodes[edge.target]
    dx, dy = target.x - source.x, target.y - source.y
    length = max((dx * dx + dy * dy) ** 0.5, 1.0)
    # Centre to centre, bent sideways for parallel edges (the direction is in the edge's title).
    mx = (source.x + target.x) / 2 - dy / length * 22 * edge.bend
    my = (source.y + target.y) / 2 + dx / length * 22 * edge.bend
    d = f"M{source.x:g},{source.y:g} Q{mx:.1f},{my:.1f} {target.x:g},{target.y:g}"
    steps = "; ".join(f"agent {u.agent} step {u.step}" for u in edge.uses)
    title = f"{source.name} —{edge.relation}→ {target.name} ({steps})"
    return (f'<g class="ev-edge" data-source="{edge.source}" data-target="{edge.target}" '
            f'data-relation="{xml_text(edge.relation)}"><title>{xml_text(title)}</title>'
            f'<path class="hit" d="{d}"/><path class="line" d="{d}"/></g>')


def _node(node: EvidenceNode, node_href: Callable[[int], str] | None) -> str:
    about = [node.type, "anchor" if node.anchor else "", f"answer #{node.rank}" if node.rank else "",
             f"{node.votes} vote(s)" if node.role == "answer" else f"used by {node.votes} agent(s)"]
    title = f"{node.name} ({', '.join(a for a in about if a)})"
    left = node.role == "anchor"
    label_x = node.x - node.r - 5 if left else node.x + node.r + 5
    align = "end" if left else "start"
    classes = " ".join(c for c in ("ev-node", node.role, "anchor" if node.anchor and node.role != "anchor" else "")
                       if c)
    body = (f"<title>{xml_text(title)}</title>"
            f'<circle cx="{node.x:g}" cy="{node.y:g}" r="{node.r:g}" fill="{node.color}"/>'
            f'<text x="{label_x:g}" y="{node.y + 4:g}" text-anchor="{align}">{xml_text(_short(node.name))}</text>')
    data = f'class="{classes}" data-index="{node.index}" data-role="{node.role}"'
    if node_href is None:
        return f"<g {data}>{body}</g>"
    return f'<a {data} href="{xml_text(node_href(node.index))}">{body}</a>'
