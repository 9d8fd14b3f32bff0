"""STaRK's semi-structured knowledge bases (prime, mag, amazon) from their released ``processed/`` folders.

``root`` is one dataset's folder (``skb/<name>/`` of the Hugging Face dataset ``snap-stanford/stark``, where
``processed.zip`` was extracted). The files read are those STaRK's ``load_files`` reads:

- prime: ``<root>/processed/``; mag: ``<root>/processed/`` (its type names are class constants in STaRK, here
  :data:`MAG_NODE_TYPES` / :data:`MAG_RELATIONS`); amazon: ``<root>/processed/cache/brand-category-color/``.
- ``node_info.pkl`` (pickled dict: node id → dict of fields), ``edge_index.pt`` (``[2, E]`` tensor),
  ``edge_types.pt`` (``[E]``), ``node_types.pt`` (``[N]``), ``node_type_dict.pkl`` and ``edge_type_dict.pkl``
  (code → name; built-in defaults when absent). ``.pt`` files need ``torch`` (``pip install torch``).
  ``node_info.pkl`` is a pickle: load only files you trust.

Mapping to :class:`~ark.graph.KnowledgeGraph`:

- node ids are STaRK's integer ids as strings (``"18423"``), so ``answer_ids`` of the question files map
  directly; node types and relations keep STaRK's names and codes.
- edges keep the direction stored in ``edge_index`` (source row → target row). STaRK itself symmetrizes with
  ``to_undirected`` when it loads (merging parallel edges and reciprocal pairs); we do not, so the direction
  information survives (MAG citing vs cited). Neighborhood tools look both ways, so nothing is lost for them.
  Exact duplicate (source, target, relation) edges are kept once.
- node text is STaRK's ``get_doc_info(idx, add_rel=False, compact=False)`` document (see
  :func:`stark_document`); the relation-appended variant is :func:`ark.loaders.documents.relational_document`.
- node name: prime ``name``; mag ``title`` (papers) or ``DisplayName``; amazon ``title`` (products),
  ``brand_name`` / ``category_name`` / ``color_name``.
- node properties: the node's scalar fields (strings up to 200 characters, numbers, booleans); long texts,
  lists and nested records (reviews, abstracts, details) are in the text only.
"""

from __future__ import annotations

import math
import pickle
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from ark.graph import GraphValidationError, KnowledgeGraph, build_graph_from_arrays, save_graph
from ark.graph.storage import check_source_outside_target
from ark.storage.atomic import atomic_directory

STARK_DATASETS = ("prime", "mag", "amazon")
ALIASES = {"primekg": "prime"}
AMAZON_META_LINKS = "brand-category-color"

PRIME_NODE_TYPES = {
    i: t
    for i, t in enumerate(
        ["disease", "gene/protein", "molecular_function", "drug", "pathway", "anatomy", "effect/phenotype",
         "biological_process", "cellular_component", "exposure"]
    )
}
PRIME_RELATIONS = {
    i: r
    for i, r in enumerate(
        ["ppi", "carrier", "enzyme", "target", "transporter", "contraindication", "indication",
         "off-label use", "synergistic interaction", "associated with", "parent-child", "phenotype absent",
         "phenotype present", "side effect", "interacts with", "linked to", "expression present",
         "expression absent"]
    )
}
MAG_NODE_TYPES = {0: "author", 1: "institution", 2: "field_of_study", 3: "paper"}
MAG_RELATIONS = {
    0: "author___affiliated_with___institution",
    1: "paper___cites___paper",
    2: "paper___has_topic___field_of_study",
    3: "author___writes___paper",
}
AMAZON_NODE_TYPES = {0: "product", 1: "brand", 2: "category", 3: "color"}
AMAZON_RELATIONS = {0: "also_buy", 1: "also_view", 2: "has_brand", 3: "has_category", 4: "has_color"}
DEFAULT_TYPES = {
    "prime": (PRIME_NODE_TYPES, PRIME_RELATIONS),
    "mag": (MAG_NODE_TYPES, MAG_RELATIONS),
    "amazon": (AMAZON_NODE_TYPES, AMAZON_RELATIONS),
}
REQUIRED_FILES = ("node_info.pkl", "edge_index.pt", "edge_types.pt", "node_types.pt")
GENE_EXPLANATIONS = {
    "name": "gene name",
    "type_of_gene": "gene types",
    "alias": "other gene names",
    "other_names": "extended other gene names",
    "genomic_pos": "genomic position",
    "generif": "PubMed text",
    "interpro": "protein family and classification information",
    "summary": "protein summary text",
}
AMAZON_MAX_ENTRIES = 25
MAX_PROPERTY_CHARS = 200


def stark_dataset_name(name: str) -> str:
    """Canonical STaRK dataset name (``prime``, ``mag``, ``amazon``; ``primekg`` is accepted)."""
    key = ALIASES.get(name.strip().lower(), name.strip().lower())
    if key not in STARK_DATASETS:
        raise ValueError(f"unknown STaRK dataset {name!r}; valid: {', '.join(STARK_DATASETS)}")
    return key


def stark_processed_dir(name: str, root: str | Path) -> Path:
    """The folder STaRK loads for ``name`` under ``root`` (amazon: ``processed/cache/<meta links>``)."""
    name = stark_dataset_name(name)
    processed = Path(root) / "processed"
    return processed / "cache" / AMAZON_META_LINKS if name == "amazon" else processed


def load_stark_skb(name: str, root: str | Path, amazon_dimensions: bool = True) -> KnowledgeGraph:
    """Build the graph of STaRK knowledge base ``name`` from ``<root>/processed/...`` (see module doc).

    ``amazon_dimensions=False`` leaves the dimensions/weight lines out of Amazon product documents, as in the
    STaRK code behind the paper's results (where that line was broken).
    """
    name = stark_dataset_name(name)
    folder = stark_processed_dir(name, root)
    files = _read_processed(folder)
    default_nodes, default_relations = DEFAULT_TYPES[name]
    node_type_dict = files.get("node_type_dict", default_nodes)
    relation_dict = files.get("edge_type_dict", default_relations)
    node_info: dict = files["node_info"]
    type_codes = _as_numpy(files["node_types"], folder / "node_types.pt").reshape(-1).astype(np.int64)
    edge_index = _as_numpy(files["edge_index"], folder / "edge_index.pt")
    relations = _as_numpy(files["edge_types"], folder / "edge_types.pt").reshape(-1).astype(np.int64)
    n = len(type_codes)
    if n == 0:
        raise GraphValidationError(f"{folder / 'node_types.pt'}: the graph has no nodes")
    if edge_index.ndim != 2 or edge_index.shape[0] != 2 or edge_index.shape[1] != len(relations):
        raise GraphValidationError(
            f"{folder / 'edge_index.pt'}: expected shape [2, {len(relations)}] to match edge_types.pt, "
            f"got {list(edge_index.shape)}"
        )
    node_types, type_codes = _recode(type_codes, node_type_dict, folder / "node_types.pt", "node type")
    relation_types, relations = _recode(relations, relation_dict, folder / "edge_types.pt", "relation")
    src, dst = edge_index[0].astype(np.int64), edge_index[1].astype(np.int64)
    bad = np.flatnonzero((src < 0) | (src >= n) | (dst < 0) | (dst >= n))
    if len(bad):
        shown = ", ".join(f"edge {e}: {src[e]}->{dst[e]}" for e in bad[:5].tolist())
        raise GraphValidationError(
            f"{folder / 'edge_index.pt'}: {len(bad)} edge(s) point outside node ids 0..{n - 1}: {shown}"
        )
    missing = [i for i in range(n) if i not in node_info]
    if missing:
        raise GraphValidationError(
            f"{folder / 'node_info.pkl'}: no entry for {len(missing)} node id(s): "
            + ", ".join(map(str, missing[:5]))
        )

    names, texts, properties = [], [], []
    for i in range(n):
        info = node_info[i]
        node_type = node_types[int(type_codes[i])]
        names.append(stark_node_name(name, info, node_type))
        texts.append(stark_document(name, info, node_type, amazon_dimensions=amazon_dimensions))
        properties.append(_scalar_properties(info))
    table = pa.table(
        {
            "id": pa.array([str(i) for i in range(n)], pa.string()),
            "name": pa.array(names, pa.string()),
            "text": pa.array(texts, pa.string()),
            "properties": pa.array(properties, pa.string()),
        }
    )
    metadata = {
        "name": f"stark-{name}",
        "source": f"STaRK semi-structured knowledge base {name!r} read from {folder.resolve()}",
        "credit": "STaRK benchmark (Wu et al., 2024), https://github.com/snap-stanford/stark",
        "description": f"STaRK {name} knowledge base; node ids are STaRK's integer node ids.",
    }
    return build_graph_from_arrays(
        table, type_codes, node_types, src, dst, relations, relation_types, metadata=metadata
    )


def import_stark(name: str, root: str | Path, out: str | Path) -> Path:
    """Load STaRK knowledge base ``name`` from ``root`` and save it to ``out`` (atomic)."""
    check_source_outside_target(root, out)
    return save_graph(load_stark_skb(name, root), out)


def download_stark_skb(name: str, root: str | Path) -> Path:
    """Download ``skb/<name>/processed.zip`` from the Hugging Face dataset and extract it into ``root``.

    Needs network access and ``huggingface_hub``. Returns ``root``, ready for :func:`load_stark_skb`.
    """
    name = stark_dataset_name(name)
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise ImportError(
            "downloading STaRK knowledge bases needs huggingface_hub (pip install huggingface_hub) and "
            "network access to huggingface.co; or extract skb/<name>/processed.zip into the root yourself"
        ) from None
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    archive = hf_hub_download(
        repo_id="snap-stanford/stark", repo_type="dataset", filename=f"skb/{name}/processed.zip"
    )
    with tempfile.TemporaryDirectory(prefix=".processed.", dir=root) as unpacked:
        with zipfile.ZipFile(archive) as zipped:
            zipped.extractall(unpacked)
        extracted = Path(unpacked) / "processed" if (Path(unpacked) / "processed").is_dir() else Path(unpacked)
        with atomic_directory(root / "processed") as staging:
            staging.rmdir()
            extracted.rename(staging)  # publish the extracted folder itself
    return root


# --------------------------------------------------------------------------------------------- documents
def stark_node_name(dataset: str, info: dict[str, Any], node_type: str) -> str:
    """The display name of a STaRK node (see module doc)."""
    if dataset == "prime":
        return str(info.get("name", ""))
    if dataset == "mag":
        if node_type == "paper":
            return str(info.get("title") or info.get("OriginalTitle") or "")
        return str(info.get("DisplayName", ""))
    keys = {"product": "title", "brand": "brand_name", "category": "category_name", "color": "color_name"}
    return str(info.get(keys.get(node_type, "title"), ""))


def stark_document(dataset: str, info: dict[str, Any], node_type: str, amazon_dimensions: bool = True) -> str:
    """STaRK's ``get_doc_info(idx, add_rel=False, compact=False)`` for one node's ``node_info`` entry.

    Follows STaRK's formats line for line; where STaRK prints a nested record object we print the Python
    ``str`` of the dict, and Amazon reviews with equal votes keep their stored order (STaRK's sort is not
    stable).
    """
    dataset = stark_dataset_name(dataset)
    if dataset == "prime":
        return _prime_document(info, node_type)
    if dataset == "mag":
        return _mag_document(info, node_type)
    return _amazon_document(info, node_type, amazon_dimensions)


def _prime_document(info: dict[str, Any], node_type: str) -> str:
    kind = info.get("type", node_type)
    doc = f"- name: {info.get('name')}\n- type: {kind}\n- source: {info.get('source')}\n"
    details = info.get("details")
    lines = []
    if isinstance(details, dict):
        for key, value in details.items():
            if _blank(value) or key.startswith("_") or "_id" in key:
                continue
            if kind == "gene/protein" and key in GENE_EXPLANATIONS:
                if "interpro" in key:
                    value = [v["desc"] for v in ([value] if isinstance(value, dict) else value)]
                if "generif" in key:
                    value = " ".join("; ".join(v["text"] for v in value).split(" ")[:50000])
                if "genomic_pos" in key and isinstance(value, list):
                    value = value[0]
                lines.append(f"  - {key} ({GENE_EXPLANATIONS[key]}): {value}\n")
            else:
                lines.append(f"  - {key}: {value}\n")
    return doc + ("- details:\n" + "".join(lines) if lines else "")


def _mag_document(info: dict[str, Any], node_type: str) -> str:
    kind = info.get("type", node_type)
    if kind == "paper":
        doc = f" - paper title: {info.get('title')}\n - abstract: {info.get('abstract')}\n"
        if _known(info.get("Date")):
            doc += f" - publication date: {info.get('Date')}\n"
        if _known(info.get("OriginalVenue")):
            doc += f" - venue: {info.get('OriginalVenue')}\n"
        elif _known(info.get("JournalDisplayName")):
            doc += f" - journal: {info.get('JournalDisplayName')}\n"
        elif _known(info.get("ConferenceSeriesDisplayName")):
            doc += f" - conference: {info.get('ConferenceSeriesDisplayName')}\n"
        elif _known(info.get("ConferenceInstancesDisplayName")):
            doc += f" - conference: {info.get('ConferenceInstancesDisplayName')}\n"
        return doc
    heads = {
        "author": ("- author name: ", "author"),
        "field_of_study": (" - field of study: ", "field"),
        "institution": (" - institution: ", "institution"),
    }
    head, label = heads.get(kind, (f" - {kind}: ", kind))
    doc = f"{head}{info.get('DisplayName')}\n"
    if _known(info.get("PaperCount")):
        doc += f"- {label} paper count: {info.get('PaperCount')}\n"
    if _known(info.get("CitationCount")):
        doc += f"- {label} citation count: {info.get('CitationCount')}\n"
    return doc.replace("-1", "Unknown")


def _amazon_document(info: dict[str, Any], node_type: str, dimensions: bool) -> str:
    if node_type in ("brand", "category", "color"):
        return f"{node_type} name: {info.get(f'{node_type}_name')}"
    doc = f"- product: {info.get('title')}\n"
    if "brand" in info:
        doc += f"- brand: {info['brand']}\n"
    details = info.get("details")
    if dimensions and isinstance(details, dict) and isinstance(details.get("product_dimensions"), str):
        parts = details["product_dimensions"].split(" ; ")
        if len(parts) == 2:
            doc += f"- dimensions: {parts[0]}\n- weight: {parts[1]}\n"
    description = " ".join(info.get("description") or []).strip(" ")
    if description:
        doc += f"- description: {description}\n"
    features = info.get("feature") or []
    if features:
        doc += "- features: \n" + "".join(
            f"#{k + 1}: {f}\n" for k, f in enumerate(features) if f and "asin" not in f.lower()
        )
    reviews = info.get("review") or []
    if reviews:
        votes = np.array([_vote(r.get("vote")) for r in reviews])
        doc += "- reviews: \n"
        for rank, k in enumerate(np.argsort(-votes, kind="stable").tolist()):
            review = reviews[k]
            doc += f'#{k + 1}:\nsummary: {review.get("summary")}\ntext: "{review.get("reviewText")}"\n'
            if rank > AMAZON_MAX_ENTRIES:
                break
    answers = info.get("qa") or []
    if answers:
        doc += "- Q&A: \n"
        for k, qa in enumerate(answers):
            doc += f'#{k + 1}:\nquestion: "{qa.get("question")}"\nanswer: "{qa.get("answer")}"\n'
            if k > AMAZON_MAX_ENTRIES:
                break
    return doc


# --------------------------------------------------------------------------------------------- helpers
def _blank(value: Any) -> bool:
    return str(value) in ("", "nan")


def _known(value: Any) -> bool:
    """MAG stores missing values as -1 (STaRK tests ``str(x) != '-1'``); NaN and None count as missing too."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return False
    return str(value) not in ("-1", "-1.0")


def _vote(value: Any) -> int:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return 0
    return int(str(value).replace(",", ""))


def _scalar_properties(info: dict[str, Any]) -> str:
    import json

    kept: dict[str, bool | int | float | str] = {}
    for key, value in info.items():
        if isinstance(value, bool | int | np.integer):
            kept[key] = int(value) if not isinstance(value, bool) else value
        elif isinstance(value, float | np.floating) and not math.isnan(value):
            kept[key] = float(value)
        elif isinstance(value, str) and value and len(value) <= MAX_PROPERTY_CHARS:
            kept[key] = value
    return json.dumps(kept, ensure_ascii=False)


def _recode(codes: np.ndarray, names: dict, path: Path, what: str) -> tuple[list[str], np.ndarray]:
    """Map STaRK's codes onto a dense name table (codes kept when they are already 0..K-1)."""
    keys = sorted(int(k) for k in names)
    table = np.full(max(keys, default=-1) + 2, -1, dtype=np.int64)
    for position, key in enumerate(keys):
        table[key] = position
    inside = (codes >= 0) & (codes <= (keys[-1] if keys else -1))
    mapped = np.where(inside, table[np.clip(codes, 0, len(table) - 1)], -1)
    unknown = np.unique(codes[mapped < 0])
    if len(unknown):
        count = int((mapped < 0).sum())
        raise GraphValidationError(
            f"{path}: {count} row(s) have {what} code(s) {unknown[:5].tolist()} not in the type table; "
            f"valid: {', '.join(f'{k}={names[k]}' for k in keys)}"
        )
    return [str(names[k]) for k in keys], mapped


def _as_numpy(value: Any, path: Path) -> np.ndarray:
    if hasattr(value, "numpy"):
        return value.detach().cpu().numpy()
    try:
        return np.asarray(value)
    except Exception as error:  # noqa: BLE001 - any unreadable content is reported the same way
        raise GraphValidationError(f"{path}: expected a tensor, got {type(value).__name__}") from error


def _read_processed(folder: Path) -> dict[str, Any]:
    """Load the top-level ``.pkl`` and ``.pt`` files of ``folder`` like STaRK's ``load_files``."""
    if not folder.is_dir():
        raise FileNotFoundError(
            f"STaRK processed folder not found: {folder} (extract skb/<name>/processed.zip from the "
            "Hugging Face dataset snap-stanford/stark there, or use download_stark_skb)"
        )
    missing = [f for f in REQUIRED_FILES if not (folder / f).is_file()]
    if missing:
        raise FileNotFoundError(f"{folder}: missing STaRK file(s) {', '.join(missing)}")
    try:
        import torch
    except ImportError:
        raise ImportError("reading STaRK .pt files needs torch: pip install torch (ark-kg[stark])") from None
    files: dict[str, Any] = {}
    for path in sorted(folder.iterdir()):
        if path.suffix == ".pkl":
            with path.open("rb") as handle:
                files[path.stem] = pickle.load(handle)  # noqa: S301 - STaRK's released format is a pickle
        elif path.suffix == ".pt":
            files[path.stem] = torch.load(path, map_location="cpu", weights_only=True)
    return files
