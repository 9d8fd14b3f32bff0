// The ARK page: plain JavaScript over the JSON API (no outside assets). Views by URL hash:
// #/ask, #/node/REF, #/runs, #/runs/NAME, #/runs/NAME/trajectories/N.
"use strict";

const $ = (selector) => document.querySelector(selector);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

async function api(path, options = {}) {
  const response = await fetch(path, options);
  const data = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
  return data;
}

// replaceChildren with nested lists flattened and empty parts (null, undefined) left out.
const put = (parent, ...children) => parent.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined));

const nodeLink = (index, label) => el("a", { href: `#/node/${index}` }, label);
const fmt = (value) => (typeof value === "number" ? (Number.isInteger(value) ? String(value) : value.toFixed(3)) : value ?? "");

function show(view) {
  for (const section of document.querySelectorAll(".view")) section.hidden = section.id !== `view-${view}`;
}

// ---------------------------------------------------------------- asking
let methods = [];

async function loadMethods() {
  // The server writes the method list into the page; this fills it only where it came without one.
  const select = $("#method");
  if (select.options.length) return;
  methods = await api("/api/methods");
  select.replaceChildren(...methods.map((m) => el("option", { value: m.name, title: m.summary }, m.name)));
  select.value = methods.some((m) => m.name === "ark") ? "ark" : methods[0].name;
}

// Each agent's steps, collapsed (a <details> per agent; its summary counts the steps as they come).
function agentBox(agent) {
  let box = document.getElementById(`agent-${agent}`);
  if (!box) {
    box = el("details", { class: "agent", id: `agent-${agent}` }, el("summary", {}, `Agent ${agent}`));
    const boxes = [...$("#agents").children, box].sort((a, b) => a.id.localeCompare(b.id, undefined, { numeric: true }));
    $("#agents").replaceChildren(...boxes);
    $("#traces").hidden = false;
  }
  return box;
}

// The evidence drawing, made by the server (every graph string escaped there), parsed as SVG, never as HTML.
function drawing(evidence) {
  if (!evidence || !(evidence.edges.length || evidence.nodes.some((n) => n.anchor))) {
    return el("p", { class: "muted" }, "Nothing to draw: no exploration from an anchor was recorded.");
  }
  const parsed = new DOMParser().parseFromString(evidence.svg, "image/svg+xml").documentElement;
  if (parsed.nodeName !== "svg") return el("p", { class: "error" }, "The evidence drawing could not be read.");
  return document.importNode(parsed, true);
}

function evidencePanel(evidence) {
  const drawn = drawing(evidence);
  return [el("h2", {}, "Evidence"), drawn, drawn.nodeName === "svg"
    ? el("p", { class: "muted" }, "Anchors left, answers right; hover an edge for its relation and the steps that followed it, click a node to open it.")
    : null];
}

// Competition ranks of tie groups: "1=", "1=", "3" (the graph does not tell tied answers apart).
function tieLabels(ranked) {
  const first = {}, size = {};
  for (const row of ranked) if (row.tie_group) { first[row.tie_group] ??= row.rank; size[row.tie_group] = (size[row.tie_group] || 0) + 1; }
  return (row) => (row.tie_group ? `${first[row.tie_group]}${size[row.tie_group] > 1 ? "=" : ""}` : String(row.rank));
}

function showStep(step) {
  const calls = step.calls.map((call) => el("div", {},
    el("div", { class: "call" }, `${call.name}(${JSON.stringify(call.arguments)})`,
      call.ok ? "" : el("span", { class: "error" }, ` ${call.error || "error"}`)),
    el("div", { class: "summary" }, call.summary),
    call.nodes.length ? el("div", {}, "→ ", ...call.nodes.slice(0, 5).flatMap((n, i) =>
      [i ? ", " : "", nodeLink(n.index, `${n.name} (${n.type})`)]),
      call.node_count > 5 ? ` … ${call.node_count} nodes` : "") : null));
  const box = agentBox(step.agent);
  box.append(el("div", { class: "step", "data-step": step.step },
    el("strong", {}, `Step ${step.step}`), el("span", { class: "muted" }, ` ${fmt(step.wall_s)} s`), ...calls,
    step.content ? el("div", { class: "muted" }, step.content) : null));
  const steps = box.querySelectorAll(".step").length;
  box.querySelector("summary").textContent = `Agent ${step.agent} · ${steps} step${steps === 1 ? "" : "s"}`;
}

function showAnswer(answer) {
  const rank = tieLabels(answer.ranked);
  const rows = answer.ranked.map((row) => {
    const evidence = row.evidence.length ? row.evidence.join(" · ") : row.snippet;
    return el("tr", {},
      el("td", { class: "num" }, rank(row)),
      el("td", {}, nodeLink(row.index, row.name)),
      el("td", {}, row.type), el("td", {}, row.id),
      el("td", { class: "num" }, row.votes ?? fmt(row.score)),
      el("td", { class: "evidence", title: evidence }, el("div", { class: "clamp" }, evidence)));
  });
  const table = el("table", { id: "answer-table" },
    el("thead", {}, el("tr", {}, ...["#", "name", "type", "id", answer.ranked.some((r) => r.votes !== null) ? "votes" : "score", "evidence"].map((h) => el("th", {}, h)))),
    el("tbody", {}, rows));
  const parts = [el("h2", {}, `Answer (${answer.method}, ${answer.llm || "no model"}, ${fmt(answer.wall_s)} s)`)];
  if (answer.answer) parts.push(el("p", {}, `Answer (${answer.answer.type}): ${answer.answer.text}`));
  if (answer.partial) parts.push(el("p", { class: "error" }, "Partial: some agents failed."));
  parts.push(answer.ranked.length ? table : el("p", { id: "answer-table" }, "No node was found."));
  if (answer.ranked.some((row) => rank(row).endsWith("="))) parts.push(el("p", { class: "muted" }, "n= : tied answers (the graph does not tell them apart)"));
  if (answer.confidence) parts.push(el("p", { id: "confidence" }, el("strong", {}, "Confidence: "),
    el("span", { class: `confidence-${answer.confidence}` }, answer.confidence),
    answer.confidence_reason ? ` — ${answer.confidence_reason}` : ""));
  put($("#answer"), parts);
  put($("#evidence"), evidencePanel(answer.evidence_graph));
}

function readEvents(buffer, handle) {
  // Server-sent events over a fetch body (EventSource cannot POST): blocks separated by a blank line.
  let cut;
  while ((cut = buffer.indexOf("\n\n")) >= 0) {
    const block = buffer.slice(0, cut);
    buffer = buffer.slice(cut + 2);
    let name = "message", data = "";
    for (const line of block.split("\n")) {
      if (line.startsWith("event: ")) name = line.slice(7);
      else if (line.startsWith("data: ")) data += line.slice(6);
    }
    if (data) handle(name, JSON.parse(data));
  }
  return buffer;
}

async function ask(event) {
  event.preventDefault();
  let options;
  try {
    options = JSON.parse($("#options").value || "{}");
  } catch (error) {
    $("#status").replaceChildren(el("span", { class: "error" }, `Options are not JSON: ${error.message}`));
    return;
  }
  const temperature = $("#temperature").value;
  const body = {
    question: $("#question").value, method: $("#method").value, options,
    model: { model: $("#model").value || null, base_url: $("#base-url").value || null,
             temperature: temperature === "" ? null : Number(temperature), offline: $("#offline").checked },
  };
  $("#agents").replaceChildren();
  $("#traces").hidden = true;
  $("#answer").replaceChildren();
  $("#evidence").replaceChildren();
  $("#status").textContent = "Asking …";
  $("#ask-button").disabled = true;
  try {
    const response = await fetch("/api/ask/stream", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    if (!response.ok) {
      const data = await response.json().catch(() => ({}));
      throw new Error(data.error || `HTTP ${response.status}`);
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "", steps = 0;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer = readEvents(buffer + decoder.decode(value, { stream: true }), (name, data) => {
        if (name === "step") { steps += 1; showStep(data); $("#status").textContent = `Running … ${steps} step(s)`; }
        else if (name === "answer") { showAnswer(data); $("#status").textContent = `Done: ${steps} step(s).`; }
        else if (name === "error") $("#status").replaceChildren(el("span", { class: "error" }, data.error));
      });
    }
  } catch (error) {
    $("#status").replaceChildren(el("span", { class: "error" }, error.message));
  } finally {
    $("#ask-button").disabled = false;
  }
}

// ---------------------------------------------------------------- nodes
async function showNode(ref) {
  show("node");
  const view = $("#view-node");
  put(view, el("p", {}, "Loading …"));
  try {
    const node = await api(`/api/nodes/${encodeURIComponent(ref)}`);
    const rows = node.neighbour_list.map((n) => el("tr", {},
      el("td", {}, n.direction === "out" ? `-${n.relation}->` : `<-${n.relation}-`),
      el("td", {}, nodeLink(n.index, n.name)), el("td", {}, n.type), el("td", {}, n.id)));
    put(view, 
      el("h2", { id: "node-title" }, `${node.name} (${node.type})`), el("p", { class: "muted" }, `${node.id} · index ${node.index}`),
      el("pre", { id: "node-text" }, node.text),
      Object.keys(node.properties || {}).length ? el("pre", {}, JSON.stringify(node.properties, null, 2)) : null,
      el("h3", {}, `Neighbours (${node.neighbour_total})`),
      el("p", {}, node.neighbours.map((g) => `${g.relation} ${g.direction === "out" ? "->" : "<-"} ${g.node_type}: ${g.count}`).join("; ")),
      el("table", { id: "neighbours" }, el("tbody", {}, rows)),
      node.neighbour_total > rows.length ? el("p", { class: "muted" }, `First ${rows.length} of ${node.neighbour_total}.`) : null);
  } catch (error) {
    put(view, el("p", { class: "error" }, error.message));
  }
}

// ---------------------------------------------------------------- runs
function metricsTable(rows, id) {
  const keys = [...new Set(rows.flatMap(([, metrics]) => Object.keys(metrics || {})))].filter((k) => typeof rows[0][1][k] !== "object");
  return el("table", { id }, el("thead", {}, el("tr", {}, el("th", {}, ""), ...keys.map((k) => el("th", {}, k)))),
    el("tbody", {}, rows.map(([name, metrics]) => el("tr", {}, el("td", {}, name),
      ...keys.map((k) => el("td", { class: "num" }, fmt(metrics[k])))))));
}

async function showRuns() {
  show("runs");
  const view = $("#view-runs");
  try {
    const runs = await api("/api/runs");
    put(view, el("h2", {}, "Runs"), runs.length ? el("table", { id: "runs-table" },
      el("thead", {}, el("tr", {}, ...["run", "method", "graph", "model", "queries", "Hit@1", "MRR"].map((h) => el("th", {}, h)))),
      el("tbody", {}, runs.map((r) => el("tr", {}, el("td", {}, el("a", { href: `#/runs/${encodeURIComponent(r.name)}` }, r.name)),
        el("td", {}, r.method), el("td", {}, r.graph), el("td", {}, r.llm), el("td", { class: "num" }, r.n_queries),
        el("td", { class: "num" }, fmt(r["hit@1"])), el("td", { class: "num" }, fmt(r.mrr))))))
      : el("p", {}, "No runs: start the server with --runs FOLDER."));
  } catch (error) {
    put(view, el("p", { class: "error" }, error.message));
  }
}

async function showRun(name) {
  show("runs");
  const view = $("#view-runs");
  try {
    const run = await api(`/api/runs/${encodeURIComponent(name)}`);
    const page = await api(`/api/runs/${encodeURIComponent(name)}/trajectories?limit=200`);
    const base = `/api/runs/${encodeURIComponent(name)}`;
    put(view, 
      el("h2", {}, `Run ${name}`),
      el("p", { class: "muted" }, `${run.config?.method} on ${run.config?.graph} · ${run.config?.llm ?? ""} · ${run.n_queries ?? "?"} queries`),
      run.overall ? metricsTable([["overall", run.overall]], "run-metrics") : el("p", {}, "Not scored."),
      Object.keys(run.by_template).length ? [el("h3", {}, "Per template"), metricsTable(Object.entries(run.by_template), "run-templates")] : null,
      run.charts.length ? el("div", { class: "charts" }, run.charts.map((c) => el("img", { src: `${base}/charts/${encodeURIComponent(c)}`, alt: c }))) : null,
      el("h3", {}, `Got wrong (${run.wrong.length})`),
      el("ul", { id: "run-wrong" }, run.wrong.map((w) => el("li", {}, `${w.id}: ${w.query} `,
        el("span", { class: "muted" }, `(answer ${(w.answer_ids || []).join(", ")}; first found at ${w.first_answer_rank ?? "—"})`)))),
      el("h3", {}, `Trajectories (${page.total})`),
      el("table", { id: "run-trajectories" }, el("tbody", {}, page.items.map((t) => el("tr", {},
        el("td", {}, el("a", { href: `#/runs/${encodeURIComponent(name)}/trajectories/${t.position}` }, t.id ?? t.position)),
        el("td", {}, t.question), el("td", { class: "num" }, `${t.agents} agents`), el("td", { class: "num" }, `${t.steps} steps`),
        el("td", {}, t.top.join(", ")))))));
  } catch (error) {
    put(view, el("p", { class: "error" }, error.message));
  }
}

async function showTrajectory(name, position) {
  show("runs");
  const view = $("#view-runs");
  try {
    const base = `/api/runs/${encodeURIComponent(name)}/trajectories/${position}`;
    const record = await api(base);
    const evidence = await api(`${base}/evidence`).then(evidencePanel, (error) => el("p", { class: "error" }, error.message));
    const agents = record.trajectories || record.agents || [];
    put(view, 
      el("p", {}, el("a", { href: `#/runs/${encodeURIComponent(name)}` }, `← run ${name}`)),
      el("h2", { id: "trajectory-title" }, `${record.id ?? position}: ${record.question}`),
      el("p", {}, "Fused: ", (record.ranked || []).slice(0, 10).map((r, i) => [i ? ", " : "", nodeLink(r.index, r.name || r.node_id)]).flat()),
      el("div", { class: "evidence-panel" }, evidence),
      agents.map((agent, k) => el("details", { class: "agent trajectory" },
        el("summary", {}, `Agent ${agent.agent_index ?? k} · ${agent.steps.length} steps · ${agent.stop_reason}${agent.error ? ` (${agent.error})` : ""}`),
        agent.steps.map((step) => el("div", { class: "step" }, el("strong", {}, `Step ${step.index + 1}`),
          (step.tool_calls || []).map((call, i) => el("div", {},
            el("div", { class: "call" }, `${call.name}(${call.arguments})`),
            el("pre", {}, (step.observations || [])[i] || ""))))))));
  } catch (error) {
    put(view, el("p", { class: "error" }, error.message));
  }
}

// ---------------------------------------------------------------- routing
function route() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  if (parts[0] === "node" && parts[1]) showNode(parts[1]);
  else if (parts[0] === "runs" && parts[1] && parts[2] === "trajectories") showTrajectory(parts[1], parts[3]);
  else if (parts[0] === "runs" && parts[1]) showRun(parts[1]);
  else if (parts[0] === "runs") showRuns();
  else show("ask");
}

window.addEventListener("hashchange", route);
window.addEventListener("DOMContentLoaded", async () => {
  $("#ask-form").addEventListener("submit", ask);
  try {
    const graph = await api("/api/graph");
    $("#graph-name").textContent = `${graph.name}: ${graph.nodes.toLocaleString()} nodes, ${graph.edges.toLocaleString()} edges`;
    if (!graph.allow_request_models) {  // the model and its endpoint are the server's
      for (const id of ["#model", "#base-url"]) {
        Object.assign($(id), { disabled: true, value: "", title: "set by the server (ark serve --allow-request-models lets a request choose it)" });
      }
    }
    await loadMethods();
  } catch (error) {
    $("#status").replaceChildren(el("span", { class: "error" }, error.message));
  }
  route();
});
