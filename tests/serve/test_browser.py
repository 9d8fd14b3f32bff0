"""The page of ``ark serve`` in a real headless Chromium (Debian's ``chromium`` + ``chromium-driver``, driven by
selenium; skipped when either is missing): a question answered by a scripted loopback model that takes 1 s a step
shows its first step well before the answer table (steps really stream); the answer table has the expected top node;
a trajectory of a run folder opens. Every request outside loopback is blocked in the browser, and every resource
the page loaded came from the server itself. Screenshots go to ``$ARK_TEST_ARTIFACTS/browser`` (default: the
test's temporary folder)."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
webdriver = pytest.importorskip("selenium.webdriver")

from selenium.common.exceptions import WebDriverException  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

from ark.loaders import open_graph  # noqa: E402
from ark.serve.graph_tools import GraphTools  # noqa: E402
from ark.serve.questions import ModelSettings, QuestionService  # noqa: E402
from ark.serve.webapp import create_app  # noqa: E402
from tests.support.graphs import DISEASES, ONE_HOP, PHENOTYPES, SHARED_FINDINGS, build_index  # noqa: E402
from tests.support.openai_server import tool_reply, turn_script  # noqa: E402

from .conftest import LoopbackServer  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver") or ("/usr/bin/chromedriver" if os.path.exists("/usr/bin/chromedriver") else None)
pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="needs chromium and chromium-driver (Debian)")
STEP_DELAY_S = 1.0
FINDINGS = ("Ectopia lentis", "Arachnodactyly", "Aortic root dilatation", "Tall stature")  # named by SHARED_FINDINGS


@pytest.fixture
def browser():
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                 "--window-size=1400,1000", "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"):
        options.add_argument(flag)
    try:
        driver = webdriver.Chrome(options=options, service=Service(DRIVER))
    except WebDriverException as exc:  # a browser that cannot start here (no display libraries, ...)
        pytest.skip(f"chromium did not start: {exc.msg}")
    yield driver
    driver.quit()


@pytest.fixture
def screenshots(tmp_path) -> Path:
    folder = Path(os.environ.get("ARK_TEST_ARTIFACTS") or tmp_path) / "browser"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def wait_for(driver, css: str, timeout: float = 30.0, poll: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = driver.find_elements(By.CSS_SELECTOR, css)
        if found:
            return found[0], time.monotonic()
        time.sleep(poll)
    raise AssertionError(f"{css} did not appear within {timeout} s")


def test_page_streams_steps_then_shows_the_answer_and_opens_a_trajectory(browser, screenshots, openai_server,
                                                                          clinical_dir, run_root):
    graph = open_graph(str(clinical_dir))
    marfan, fbn1 = graph.index_of("OMIM:154700"), graph.index_of(ONE_HOP[1])
    openai_server.responder = turn_script([
        tool_reply(("search_in_graph", {"query": "Marfan syndrome"}), delay_s=STEP_DELAY_S),
        tool_reply(("search_in_neighborhood", {"node_index": marfan, "node_type": "gene"}), delay_s=STEP_DELAY_S),
        tool_reply(("add_to_answer", {"answer_nodes": [{"node_index": fbn1, "reasoning": "Marfan's gene"}]}),
                   delay_s=STEP_DELAY_S),
        tool_reply(("finish", {}), delay_s=STEP_DELAY_S),
    ])
    questions = QuestionService(graph, ModelSettings(model="test-model", base_url=openai_server.base_url))
    app = create_app(GraphTools(graph, build_index(graph), questions=questions), runs=[run_root])
    with LoopbackServer(app) as server:
        browser.get(server.url + "/")
        wait_for(browser, "#method option[value='ark']")
        browser.find_element(By.ID, "question").send_keys(ONE_HOP[0] + " (browser)")
        browser.find_element(By.CSS_SELECTOR, "details summary").click()
        options = browser.find_element(By.ID, "options")
        options.clear()
        options.send_keys('{"n_agents": 1}')
        clicked = time.monotonic()
        browser.find_element(By.ID, "ask-button").click()
        _, first_step = wait_for(browser, ".step[data-step='1']")
        browser.save_screenshot(str(screenshots / "1-first-step.png"))
        assert not browser.find_elements(By.ID, "answer-table")  # the answer is not there yet
        table, answered = wait_for(browser, "#answer-table")
        browser.save_screenshot(str(screenshots / "2-answer.png"))
        print(f"first step after {first_step - clicked:.2f} s, answer table after {answered - clicked:.2f} s")
        assert answered - first_step >= 2.0, (first_step - clicked, answered - clicked)
        first_row = table.find_elements(By.CSS_SELECTOR, "tbody tr")[0].text
        assert "FBN1" in first_row and ONE_HOP[1] in first_row and "Marfan's gene" in first_row
        assert len(browser.find_elements(By.CSS_SELECTOR, ".step")) == 4
        # the model and its endpoint are the server's (not started with --allow-request-models)
        assert not browser.find_element(By.ID, "base-url").is_enabled()
        assert not browser.find_element(By.ID, "model").is_enabled()

        browser.find_element(By.LINK_TEXT, "FBN1").click()  # the node view
        title, _ = wait_for(browser, "#node-title")
        assert title.text == "FBN1 (gene)" and "Marfan syndrome" in browser.find_element(By.ID, "neighbours").text

        browser.get(server.url + "/#/runs")
        run_link, _ = wait_for(browser, "#runs-table a")
        run_link.click()
        wait_for(browser, "#run-trajectories a")
        assert "q2" in browser.find_element(By.ID, "run-wrong").text  # the query the run got wrong
        browser.find_elements(By.CSS_SELECTOR, "#run-trajectories a")[0].click()
        heading, _ = wait_for(browser, "#trajectory-title")
        assert ONE_HOP[0] in heading.text and browser.find_elements(By.CSS_SELECTOR, ".trajectory .step")
        browser.save_screenshot(str(screenshots / "3-trajectory.png"))

        loaded = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
        assert loaded and all(name.startswith(server.url) for name in loaded), loaded
    assert all((screenshots / name).stat().st_size > 1000 for name in ("1-first-step.png", "2-answer.png",
                                                                          "3-trajectory.png"))


def test_answer_and_evidence_drawing_come_first_and_a_drawn_node_opens_its_page(browser, screenshots, clinical_dir,
                                                                               run_root):
    graph = open_graph(str(clinical_dir))
    findings = [node_id for node_id, name, _ in PHENOTYPES if name in FINDINGS]
    anchors = {graph.index_of(node_id) for node_id in findings}
    questions = QuestionService(graph, ModelSettings(offline=True))
    app = create_app(GraphTools(graph, build_index(graph), questions=questions), runs=[run_root])
    with LoopbackServer(app) as server:
        browser.get(server.url + "/")
        assert browser.execute_script("return document.querySelector('#method').value") == "ark"  # in the page
        browser.find_element(By.ID, "question").send_keys(SHARED_FINDINGS[0])
        browser.find_element(By.ID, "ask-button").click()
        wait_for(browser, "#evidence svg .ev-node")
        browser.save_screenshot(str(screenshots / "4-answer-and-evidence.png"))
        assert browser.execute_script("return window.scrollY") == 0
        for css in ("#answer-table", "#evidence svg"):  # both whole in the 1400×1000 window, before any scrolling
            box = browser.execute_script("const r = document.querySelector(arguments[0]).getBoundingClientRect();"
                                         "return [r.top, r.bottom, r.width, window.innerHeight]", css)
            assert box[0] >= 0 and box[1] <= box[3] and box[2] > 300, (css, box)

        rows = browser.find_elements(By.CSS_SELECTOR, "#answer-table tbody tr")
        ranks = [row.find_elements(By.TAG_NAME, "td")[0].text for row in rows]
        answers = {int(row.find_element(By.TAG_NAME, "a").get_attribute("href").rsplit("/", 1)[1]) for row in rows}
        assert ranks == ["1", "2=", "2="] and "Marfan syndrome" in rows[0].text  # the tie groups
        assert "Confidence: medium" in browser.find_element(By.ID, "confidence").text

        drawn = {int(e.get_attribute("data-index")): e.get_attribute("data-role")
                 for e in browser.find_elements(By.CSS_SELECTOR, "#evidence svg .ev-node")}
        assert drawn == {i: "anchor" for i in anchors} | {i: "answer" for i in answers}
        edges = browser.find_elements(By.CSS_SELECTOR, "#evidence svg .ev-edge")
        expected = {(graph.index_of(disease), "has_phenotype", graph.index_of(p))
                    for disease, _, _, phenotypes, _ in DISEASES if graph.index_of(disease) in answers
                    for p in phenotypes if p in findings}
        assert len(edges) == len(expected) == 8
        assert {(int(e.get_attribute("data-source")), e.get_attribute("data-relation"),
                 int(e.get_attribute("data-target"))) for e in edges} == expected
        title = browser.execute_script("return arguments[0].querySelector('title').textContent", edges[0])
        assert "has_phenotype" in title and "agent 0 step" in title  # what hovering the edge shows
        edge, dx, dy = next(found for found in (_point_on(browser, e, f) for e in edges for f in (0.3, 0.5, 0.7))
                            if found)  # a point of an edge where no other edge lies over it
        line = edge.find_element(By.CSS_SELECTOR, "path.line")
        ActionChains(browser).move_to_element_with_offset(line, dx, dy).perform()  # the pointer on the edge
        assert browser.execute_script("return getComputedStyle(arguments[0]).strokeWidth", line) == "2.4px"

        traces = browser.find_elements(By.CSS_SELECTOR, "#agents details.agent")
        assert len(traces) == 3 and not any(t.get_attribute("open") for t in traces)  # collapsed per agent
        assert not browser.find_element(By.CSS_SELECTOR, "#agents .step").is_displayed()
        assert browser.execute_script("return document.querySelector('#traces').getBoundingClientRect().top") > \
            browser.execute_script("return document.querySelector('#evidence').getBoundingClientRect().top")

        marfan = graph.index_of(SHARED_FINDINGS[1])
        browser.find_element(By.CSS_SELECTOR, f"#evidence svg .ev-node[data-index='{marfan}'] circle").click()
        title_element, _ = wait_for(browser, "#node-title")
        assert title_element.text == "Marfan syndrome (disease)"

        browser.get(server.url + "/#/runs")  # the same picture for a run's question
        wait_for(browser, "#runs-table a")[0].click()
        wait_for(browser, "#run-trajectories a")[0].click()
        wait_for(browser, "#view-runs .evidence-panel svg .ev-node")
        browser.save_screenshot(str(screenshots / "5-run-evidence.png"))
        roles = {e.get_attribute("data-index"): e.get_attribute("data-role")
                 for e in browser.find_elements(By.CSS_SELECTOR, "#view-runs .ev-node")}
        assert roles[str(graph.index_of(ONE_HOP[1]))] == "answer" and roles[str(marfan)] == "anchor"
        loaded = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
        assert all(name.startswith(server.url) for name in loaded), loaded


def _point_on(browser, edge, fraction: float):
    """(edge, dx, dy): the point ``fraction`` along the edge's line, as an offset from the line's centre, if the edge
    is what the pointer meets there; else None."""
    found = browser.execute_script("""
        const [edge, fraction] = arguments, line = edge.querySelector("path.line");
        const p = line.getPointAtLength(line.getTotalLength() * fraction).matrixTransform(line.getScreenCTM());
        const box = line.getBoundingClientRect(), hit = document.elementFromPoint(p.x, p.y);
        return [p.x - (box.left + box.width / 2), p.y - (box.top + box.height / 2), hit?.closest(".ev-edge") === edge];
    """, edge, fraction)
    return (edge, round(found[0]), round(found[1])) if found[2] else None
