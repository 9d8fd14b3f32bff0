"""Derive GRBench's qid -> difficulty level table from Graph-CoT's own question generators, and check it.

GRBench's question files carry no level. Graph-CoT (github.com/PeterGriffinJin/Graph-CoT) writes the level of each
question template in ``data/processed_data/<domain>/design_questions.ipynb``: a Markdown cell heads each section
("Degree-based reasoning (easy)", "### Medium questions", ...) and many code cells open with a comment such as
``## question (medium): ...``. Each ``all_generated_data[(question, answer)] = ...`` adds one template of ``k``
questions, and ``generate_sample.ipynb`` numbers the questions of all templates in that order from qid 0. So a
template's level covers ``k`` consecutive qids.

A template is labelled only when every level mark that applies to it agrees (the section heading, and the cell's
comment where it has one); where they disagree (GRBench's degree questions sit under an "easy" heading in cells
commented "medium" in three notebooks) its qids are listed as a conflict and stay unlabelled. A domain is written
only when its template count times ``k`` equals its released ``data.json`` line count, and every template whose
answer is a count has only numeric answers there (a check that the order is right).

    usage: python benchmarks/grbench_levels_derive.py GRAPH_COT_CHECKOUT [--out FILE] [--show]

Prints the table per domain; ``--out`` writes the JSON that ark/loaders/grbench_levels.json ships.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

MARK = re.compile(r"\((easy|medium|hard)\)|\b(easy|medium|hard) questions?\b", re.IGNORECASE)
TEMPLATE_COMMENT = re.compile(r"question\s*\((easy|medium|hard)\)", re.IGNORECASE)
ADD_TEMPLATE = re.compile(r"^\s*all_generated_data\[\(question,\s*answer\)\]\s*=")
ASSIGN = re.compile(r"^\s*(question|answer)\s*=\s*(.+)$")
K_LINE = re.compile(r"^\s*k\s*=\s*(\d+)\s*$", re.MULTILINE)
COUNT_ANSWERS = {'"{num}"', '"{number}"'}
# Graph-CoT's question folders: a notebook per folder, one data.json per graph (maple has five graphs)
FOLDERS = {"amazon": ["amazon"], "biomedical": ["biomedical"], "dblp": ["dblp"], "goodreads": ["goodreads"],
           "legal": ["legal"], "maple": ["maple/Biology", "maple/Chemistry", "maple/Materials_Science",
                                         "maple/Medicine", "maple/Physics"]}


@dataclass
class Template:
    cell: int
    question: str
    answer: str
    marks: dict[str, str] = field(default_factory=dict)  # "heading (cell N)" / "comment (cell N)" -> level

    @property
    def pattern(self) -> re.Pattern[str]:
        text = self.question.strip()[1:-1].strip() if self.question[:1] in "'\"" else self.question
        parts = re.split(r"\{[^}]*\}", text)
        return re.compile(".+".join(re.escape(part) for part in parts), re.IGNORECASE | re.DOTALL)

    @property
    def level(self) -> str | None:
        levels = set(self.marks.values())
        return levels.pop() if len(levels) == 1 else None


def mark_of(text: str) -> str | None:
    match = MARK.search(text)
    return (match.group(1) or match.group(2)).lower() if match else None


def read_templates(notebook: Path) -> tuple[list[Template], int]:
    """The templates of a design_questions notebook in insertion order, with their level marks, and its ``k``."""
    cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    heading: tuple[int, str] | None = None
    templates: list[Template] = []
    k = None
    for number, cell in enumerate(cells):
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            level = mark_of(source)
            heading = (number, level) if level else heading
            continue
        k_match = K_LINE.search(source)
        if k is None and k_match:
            k = int(k_match.group(1))
        comment = None
        current = {"question": "", "answer": ""}
        for line in source.splitlines():
            if line.strip().startswith("#") and (level := mark_of(line)):
                if TEMPLATE_COMMENT.search(line):
                    comment = level  # "## question (medium): ..." marks this cell's templates
                else:
                    heading = (number, level)  # "# 1-hop reasoning (easy)" opens a section, as a heading does
            elif (assigned := ASSIGN.match(line)) is not None:
                current[assigned.group(1)] = assigned.group(2).strip()
            elif ADD_TEMPLATE.match(line):
                marks = {}
                if heading:
                    marks[f"heading (cell {heading[0]})"] = heading[1]
                if comment:
                    marks[f"comment (cell {number})"] = comment
                templates.append(Template(number, current["question"], current["answer"], marks))
    if k is None:
        raise SystemExit(f"{notebook}: no 'k = N' line")
    return templates, k


def ranges(templates: list[Template], k: int) -> tuple[list[list], list[list]]:
    """Collapsed ``[first, last, level]`` ranges and ``[first, last, why]`` conflicts."""
    labelled: list[list] = []
    conflicts: list[list] = []
    for i, template in enumerate(templates):
        first, last = i * k, i * k + k - 1
        if template.level is None:
            why = "; ".join(f"{where}: {level}" for where, level in template.marks.items()) or "no level mark"
            conflicts.append([first, last, why])
        elif labelled and labelled[-1][2] == template.level and labelled[-1][1] == first - 1:
            labelled[-1][1] = last
        else:
            labelled.append([first, last, template.level])
    return labelled, conflicts


def check_questions(templates: list[Template], k: int, data: Path, confirmed: list[bool]) -> list[str]:
    """Problems found comparing the template order with a released data.json (empty: consistent). GPT-4 reworded
    most questions, but each template's own wording stays among the choices: a group holding another template's
    exact wording is out of order; ``confirmed`` gets, per template, whether its group holds its own wording."""
    rows = [json.loads(line) for line in data.read_text(encoding="utf-8").splitlines() if line.strip()]
    problems = []
    if len(rows) != len(templates) * k:
        problems.append(f"{data}: {len(rows)} questions, the notebook makes {len(templates)} x {k}")
    if [r["qid"] for r in rows] != [str(i) for i in range(len(rows))]:
        problems.append(f"{data}: qids are not 0..{len(rows) - 1} in order")
    for i, template in enumerate(templates):
        group = rows[i * k:(i + 1) * k]
        where = f"{data}: qids {i * k}-{i * k + k - 1} ({template.question})"
        if template.answer in COUNT_ANSWERS and not all(re.fullmatch(r"-?\d+(\.\d+)?", r["answer"].strip())
                                                        for r in group):
            problems.append(f"{where} have non-numeric answers")
        for j, other in enumerate(templates):
            if j != i and any(other.pattern.fullmatch(r["question"].strip()) for r in group):
                problems.append(f"{where} hold the verbatim wording of template {j} ({other.question})")
        confirmed.append(any(template.pattern.fullmatch(r["question"].strip()) for r in group))
    return problems


def git_commit(checkout: Path) -> str:
    result = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True)
    return result.stdout.strip() if result.returncode == 0 else "unknown"


def derive(checkout: Path, show: bool) -> dict:
    commit = git_commit(checkout)
    domains: dict[str, list] = {}
    conflicts: dict[str, list] = {}
    left_out: dict[str, list[str]] = {}
    for notebook_folder, graphs in FOLDERS.items():
        notebook = checkout / "data/processed_data" / notebook_folder / "design_questions.ipynb"
        templates, k = read_templates(notebook)
        labelled, conflicted = ranges(templates, k)
        for graph in graphs:
            name = graph.split("/")[-1]
            confirmed: list[bool] = []
            problems = check_questions(templates, k, checkout / "data/processed_data" / graph / "data.json",
                                       confirmed)
            print(f"{name}: {len(templates)} templates x {k}, {sum(confirmed)} found in their own wording at their "
                  f"qids; labelled {labelled}; conflicts {conflicted}"
                  + (f"; NOT VERIFIED: {problems}" if problems else "; verified against data.json"))
            if show:
                for i, t in enumerate(templates):
                    print(f"   {i * k:>4}-{i * k + k - 1:<4} {t.level or '?':<7} {t.question[:90]}")
            if problems:
                left_out[name] = [problem.replace(f"{checkout}/", "") for problem in problems]
                continue
            domains[name] = labelled
            if conflicted:
                conflicts[name] = conflicted
    return {"commit": commit, "domains": domains, "conflicts": conflicts, "left_out": left_out}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("checkout", type=Path, help="a clone of github.com/PeterGriffinJin/Graph-CoT")
    parser.add_argument("--out", type=Path, help="write the level table JSON here")
    parser.add_argument("--show", action="store_true", help="print every template with its qids and level")
    args = parser.parse_args(argv)
    derived = derive(args.checkout, args.show)
    if args.out:
        commit = derived["commit"]
        table = {
            "about": " ".join(__doc__.split("\n\n")[1:3]).replace("\n", " "),
            "source": f"https://github.com/PeterGriffinJin/Graph-CoT/tree/{commit}/data/processed_data",
            "files": [f"data/processed_data/{folder}/design_questions.ipynb" for folder in FOLDERS],
            "commit": commit,
            "derived_by": "benchmarks/grbench_levels_derive.py",
            "levels": ["easy", "medium", "hard"],
            "domains": derived["domains"],
            "conflicts": derived["conflicts"],
            "left_out": derived["left_out"],
        }
        text = json.dumps(table, indent=1, ensure_ascii=False)
        text = re.sub(r"\[\s+(\d+),\s+(\d+),\s+(\"[^\"]*\")\s+\]", r"[\1, \2, \3]", text)  # a range a line
        args.out.write_text(text + "\n", encoding="utf-8")
        print(f"wrote {args.out}")
    return 0 if derived["domains"] else 1


if __name__ == "__main__":
    sys.exit(main())
