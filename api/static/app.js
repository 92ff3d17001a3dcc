// The jetspark status page. Every user-supplied string reaches the DOM through textContent
// (never innerHTML). Live updates come from the API's Server-Sent Events, read with fetch so
// the bearer token travels in a header, not in the URL.
"use strict";

const SVG_NS = "http://www.w3.org/2000/svg";
const EXAMPLE = {
  name: "word-count",
  dag: {
    vertices: [
      { name: "lines", processor: "source.items",
        params: { items: [{ line: "to be or not to be" }, { line: "that is the question" }] } },
      { name: "tokenize", processor: "flat_map",
        params: { explode: "split(lower(line), ' ')", as: "word" } },
      { name: "count", processor: "aggregate",
        params: { key: "word", aggregations: { count: "count(*)" } } },
      { name: "sink", processor: "sink.results" },
    ],
    edges: [
      { from: "lines", to: "tokenize" },
      { from: "tokenize", to: "count", routing: "partitioned", key: "word", distributed: true },
      { from: "count", to: "sink" },
    ],
  },
  config: { members: 1, local_parallelism: 2 },
};
const TERMINAL = new Set(["COMPLETED", "FAILED", "CANCELLED"]);
const NAME_FILTER_PAUSE_MS = 300;

const $ = (id) => document.getElementById(id);
let token = sessionStorage.getItem("jetspark-token") || "";
let viewAbort = null; // aborts the current view's event streams

function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function svg(tag, attrs) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs || {})) node.setAttribute(name, String(value));
  return node;
}

function say(text) {
  const box = $("message");
  box.textContent = text || "";
  box.hidden = !text;
}

// Read out by screen readers (an aria-live region); the same text twice is read twice.
function announce(text) {
  const region = $("announcer");
  region.textContent = region.textContent === text ? `${text}\u00a0` : text;
}

// ``action`` once the calls stop for ``ms``: the name filter asks once per pause, not per key.
function debounce(action, ms) {
  let timer = null;
  return (...args) => {
    clearTimeout(timer);
    timer = setTimeout(() => action(...args), ms);
  };
}

async function api(path, options = {}) {
  const headers = { Authorization: `Bearer ${token}`, ...(options.headers || {}) };
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, { ...options, headers });
  const body = response.status === 204 ? null : await response.json().catch(() => null);
  if (!response.ok) {
    const errors = (body && body.errors) || [];
    const detail = body ? body.detail || body.title : response.statusText;
    const where = errors.map((e) => `${e.pointer}: ${e.message}`).join("; ");
    throw new Error(`${response.status} ${detail}${where ? ` (${where})` : ""}`);
  }
  return body;
}

// Follows an SSE endpoint until aborted; reconnects with Last-Event-ID after a drop.
// ``fromId``: the first connection's Last-Event-ID (to replay what came before).
async function follow(path, onEvent, signal, onState, fromId) {
  let lastId = fromId || null;
  while (!signal.aborted) {
    try {
      const headers = { Authorization: `Bearer ${token}`, Accept: "text/event-stream" };
      if (lastId) headers["Last-Event-ID"] = lastId;
      const response = await fetch(path, { headers, signal });
      if (!response.ok) throw new Error(`${response.status} on ${path}`);
      onState && onState("live");
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      let fields = {};
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let newline;
        while ((newline = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, newline).replace(/\r$/, "");
          buffer = buffer.slice(newline + 1);
          if (line === "") {
            if (fields.data !== undefined) {
              if (fields.id) lastId = fields.id;
              const kind = fields.event || "message";
              onEvent(kind, JSON.parse(fields.data));
              if (kind === "end") return;
            }
            fields = {};
          } else if (!line.startsWith(":")) {
            const colon = line.indexOf(":");
            const name = colon < 0 ? line : line.slice(0, colon);
            const data = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
            fields[name] = name === "data" && fields.data !== undefined ? `${fields.data}\n${data}` : data;
          }
        }
      }
    } catch (error) {
      if (signal.aborted) return;
      onState && onState("reconnecting");
    }
    await new Promise((resolve) => setTimeout(resolve, 1000)); // reconnect backoff
  }
}

// ---- the job list ---------------------------------------------------------------------------
let nextCursor = null;

function jobRow(job) {
  const row = el("tr");
  row.dataset.jobId = job.id;
  const link = el("a", job.name);
  link.href = `#/jobs/${job.id}`;
  const name = el("td");
  name.append(link);
  row.append(name, el("td", job.status, `status ${job.status}`), el("td", job.attempt),
    el("td", new Date(job.created_at).toLocaleString()), el("td", job.id.slice(0, 8), "muted"));
  return row;
}

function listQuery() {
  const params = new URLSearchParams({ limit: "50" });
  if ($("filter-status").value) params.append("status", $("filter-status").value);
  if ($("filter-name").value) params.append("name", $("filter-name").value);
  return params;
}

let listAsked = 0; // the newest list request: an older answer arriving late is dropped

async function loadJobs(append) {
  const params = listQuery();
  if (append && nextCursor) params.set("cursor", nextCursor);
  const asked = ++listAsked;
  const page = await api(`/v1/jobs?${params}`);
  if (asked !== listAsked) return;
  const body = $("jobs").querySelector("tbody");
  if (!append) body.replaceChildren();
  page.items.forEach((job) => body.append(jobRow(job)));
  nextCursor = page.next_cursor;
  $("more-jobs").hidden = !nextCursor;
}

async function onListEvent(kind, data) {
  if (kind !== "status") return;
  const row = document.querySelector(`#jobs tr[data-job-id="${CSS.escape(data.job_id)}"]`);
  const status = $("filter-status").value;
  if (row && (!status || status === data.to_status)) {
    row.children[1].textContent = data.to_status;
    row.children[1].className = `status ${data.to_status}`;
    row.children[2].textContent = data.attempt;
  } else {
    await loadJobs(false); // a new job, or one that left or entered the filter
  }
}

function showList(signal, moveFocus) {
  $("list-view").hidden = false;
  if (moveFocus) $("list-title").focus();
  if (!$("dag-body").value) $("dag-body").value = JSON.stringify(EXAMPLE, null, 2);
  // Rows drawn on an earlier visit are stale: show none rather than old statuses until loaded.
  $("jobs").querySelector("tbody").replaceChildren();
  loadJobs(false).catch((error) => say(error.message));
  follow("/v1/events", (kind, data) => onListEvent(kind, data).catch((e) => say(e.message)),
    signal, (state) => { $("live").textContent = state; });
}

// ---- one job ------------------------------------------------------------------------------
const REPLAY_MS = 5 * 60 * 1000;
let chart = null;
let sources = [];
let shownStatus = null; // the status of the job on view, to announce its changes

function showJobView(job) {
  if (shownStatus && shownStatus.id === job.id && shownStatus.status !== job.status) {
    announce(`Job ${job.name} is ${job.status}`);
  }
  shownStatus = { id: job.id, status: job.status };
  $("job-name").textContent = job.name;
  $("job-status").textContent = job.status;
  $("job-status").className = `status ${job.status}`;
  // A lost Redis node: the job goes on, its snapshots with fewer backups than asked for.
  const short = job.under_replicated;
  $("job-replication").hidden = !short;
  $("job-replication").textContent = short
    ? `under-replicated: ${short.replicas} of ${short.backup_count} backups` : "";
  $("job-replication").title = short
    ? Object.entries(short.short).map(([node, n]) => `${node} has ${n}`).join(", ") : "";
  $("job-id").textContent = job.id;
  $("job-attempt").textContent = job.attempt;
  $("job-worker").textContent = job.worker || "-";
  $("job-created").textContent = formatStamp(job.created_at);
  $("job-started").textContent = formatStamp(job.started_at);
  $("job-finished").textContent = formatStamp(job.finished_at);
  const began = job.started_at ? Date.parse(job.started_at) : null;
  const ended = job.finished_at ? Date.parse(job.finished_at) : null;
  $("job-ran").textContent = began && ended ? formatDuration(ended - began) : "-";
  showError(job);
  for (const button of document.querySelectorAll("#job-view [data-action]")) {
    button.disabled = TERMINAL.has(job.status);
  }
  if (TERMINAL.has(job.status) && results.jobId !== job.id) showResults(job.id);
  showTimeline(job.timings);
}

function drawDag(view) {
  const graph = new dagre.graphlib.Graph();
  graph.setGraph({ rankdir: "LR", nodesep: 28, ranksep: 80, marginx: 12, marginy: 12 });
  graph.setDefaultEdgeLabel(() => ({}));
  view.vertices.forEach((v) => graph.setNode(v.name, { width: 170, height: 54 }));
  view.edges.forEach((e) => graph.setEdge(e.from, e.to,
    { label: e.label, width: 7 * e.label.length, height: 14, labelpos: "c" }));
  dagre.layout(graph);
  const canvas = $("dag");
  canvas.replaceChildren();
  const size = graph.graph();
  canvas.setAttribute("viewBox", `0 0 ${size.width} ${size.height}`);
  canvas.setAttribute("width", size.width);
  canvas.setAttribute("height", size.height);
  view.edges.forEach((e) => {
    const laid = graph.edge(e.from, e.to);
    const group = svg("g", { class: `edge ${e.exchange}` });
    group.append(svg("path", { d: `M${laid.points.map((p) => `${p.x},${p.y}`).join(" L")}` }));
    const label = svg("text", { x: laid.x, y: laid.y, "text-anchor": "middle" });
    label.textContent = e.label;
    group.append(label);
    canvas.append(group);
  });
  view.vertices.forEach((v) => {
    const node = graph.node(v.name);
    const group = svg("g", { class: "vertex", "data-vertex": v.name });
    group.append(svg("rect", { x: node.x - 85, y: node.y - 27, width: 170, height: 54, rx: 6 }));
    const title = svg("text", { x: node.x, y: node.y - 4, "text-anchor": "middle", "font-weight": "bold" });
    title.textContent = v.name;
    const kind = svg("text", { x: node.x, y: node.y + 14, "text-anchor": "middle" });
    kind.textContent = `${v.processor} ×${v.parallelism}`;
    group.append(title, kind);
    canvas.append(group);
  });
  sources = view.vertices.filter((v) => !view.edges.some((e) => e.to === v.name)).map((v) => v.name);
  const body = $("vertices").querySelector("tbody");
  body.replaceChildren(...view.vertices.map((v) => {
    const row = el("tr");
    row.dataset.vertex = v.name;
    row.append(el("td", v.name), ...Array.from({ length: 8 }, () => el("td", "-")));
    return row;
  }));
}

// The job's throughput in a tick: items/s out of its sources (null when none told a rate).
function sourceRate(tick) {
  const rates = sources.map((name) => (tick.vertices || {})[name]?.items_out_per_s)
    .filter((rate) => rate !== null && rate !== undefined);
  return rates.length ? rates.reduce((a, b) => a + b, 0) : null;
}

// Lag against the wall clock while event time is near it; for replayed or synthetic event
// time (1970's timestamps, say), how fast event time goes and how far it is behind the newest.
function eventTimeText(m) {
  const known = (v) => v !== null && v !== undefined;
  if (known(m.lag_ms)) return `lag ${formatDuration(m.lag_ms)}`;
  const parts = [];
  if (known(m.event_time_per_s)) parts.push(`event time +${formatDuration(m.event_time_per_s)}/s`);
  if (known(m.event_time_gap_ms)) parts.push(`gap ${formatDuration(m.event_time_gap_ms)}`);
  return parts.length ? parts.join(", ") : "-";
}

function showMetrics(tick, charted = true) {
  for (const [name, m] of Object.entries(tick.vertices || {})) {
    const node = document.querySelector(`#dag .vertex[data-vertex="${CSS.escape(name)}"]`);
    // The busiest vertex, when at least half busy, is where the job's time goes.
    const marked = m.bottleneck ? " bottleneck" : "";
    if (node) node.setAttribute("class", `vertex bp-${m.backpressure_level || "ok"}${marked}`);
    const row = document.querySelector(`#vertices tr[data-vertex="${CSS.escape(name)}"]`);
    if (!row) continue;
    row.classList.toggle("bottleneck", Boolean(m.bottleneck));
    const cells = row.children;
    cells[1].textContent = formatCount(m.items_in);
    cells[2].textContent = formatCount(m.items_out);
    cells[3].textContent = m.items_out_per_s === null || m.items_out_per_s === undefined
      ? "-" : `${formatCount(m.items_out_per_s)}/s`;
    cells[4].textContent = m.idle ? "idle" : formatTime(m.coalesced_wm);
    cells[4].title = m.coalesced_wm === null || m.coalesced_wm === undefined
      ? "" : `${formatIso(m.coalesced_wm)} (${m.coalesced_wm} ms since the epoch)`;
    cells[5].textContent = eventTimeText(m);
    cells[5].title = m.event_time_gap_ms === null || m.event_time_gap_ms === undefined ? ""
      : `its watermark is ${formatDuration(m.event_time_gap_ms)} behind the newest it saw`;
    cells[6].textContent = m.queue_capacity ? `${m.queue_size}/${m.queue_capacity}` : "-";
    cells[7].textContent = m.backpressure_ratio === undefined ? "-"
      : `${m.backpressure_level} (${(100 * m.backpressure_ratio).toFixed(0)}%)`;
    cells[8].textContent = m.busy_ratio === undefined ? "-"
      : `${(100 * m.busy_ratio).toFixed(0)}%${m.bottleneck ? " · bottleneck" : ""}`;
    cells[8].title = m.processors && m.processors.length ? "its processors' own report"
      : "its Spark stages' task time (vertices fused into one stage share it)";
  }
  $("metrics-at").textContent = tick.at_ms ? `as of ${formatTime(tick.at_ms)}` : "";
  if (charted && tick.at_ms && chart) chart.add(tick.at_ms, sourceRate(tick));
}

function refreshLogs(jobId) {
  api(`/v1/jobs/${jobId}/logs?from=${logs.lastSeq + 1}&size=${LOG_TAIL}`)
    .then((page) => addLogLines(jobId, page.lines)).catch((error) => say(error.message));
}

async function showJob(jobId, signal, moveFocus) {
  $("job-view").hidden = false;
  shownStatus = null;
  $("history").replaceChildren();
  resetResults();
  resetTimeline();
  if (chart) chart.destroy();
  chart = new ThroughputChart($("throughput"));
  const [job, view, metrics] = await Promise.all([
    api(`/v1/jobs/${jobId}`), api(`/v1/jobs/${jobId}/dag`), api(`/v1/jobs/${jobId}/metrics`),
  ]);
  drawDag(view);
  showJobView(job);
  if (moveFocus) $("job-title").focus(); // named now: a screen reader reads the job
  showMetrics(metrics, false); // the replay below charts the ticks, oldest first
  showSnapshots(jobId);
  showSdkSource(jobId).catch((error) => say(error.message));
  await showLogs(jobId);
  // Replay the last minutes of the job's event stream (its ids start with the time in ms):
  // the chart and the log tail then show what happened before the page was opened.
  const until = job.finished_at ? Date.parse(job.finished_at) : Date.now();
  const replay = `0.${Math.max(0, until - REPLAY_MS)}-0`;
  follow(`/v1/jobs/${jobId}/events`, async (kind, data) => {
    if (kind === "status") {
      $("history").append(el("li", `${formatStamp(data.at)} ${data.from_status || "-"} → ${data.to_status}: ${data.cause}`));
      showJobView(await api(`/v1/jobs/${jobId}`));
    } else if (kind === "metrics") {
      showMetrics(data);
    } else if (kind === "snapshot") {
      loadSnapshots(jobId).catch((error) => say(error.message));
    } else if (kind === "log") {
      addLogLines(jobId, [data]);
    } else if (kind === "end") {
      // The worker's last lines may follow its last status change.
      refreshLogs(jobId);
      setTimeout(() => { if (!signal.aborted) refreshLogs(jobId); }, 2000);
    }
  }, signal, undefined, replay);
}

// ---- wiring -------------------------------------------------------------------------------
// ``moveFocus``: the view changed under the reader (a link, the token form), so keyboard and
// screen reader focus go to the new view's heading; not on the first load of the page.
function route(moveFocus) {
  if (viewAbort) viewAbort.abort();
  viewAbort = new AbortController();
  say("");
  $("list-view").hidden = true;
  $("job-view").hidden = true;
  if (!token) {
    say("Enter an API token (jetspark up prints one; it is also in .jetspark/token).");
    return;
  }
  logs.jobId = snapshotsState.jobId = null;
  const match = location.hash.match(/^#\/jobs\/([0-9a-f-]{36})$/);
  if (match) showJob(match[1], viewAbort.signal, moveFocus).catch((error) => say(error.message));
  else showList(viewAbort.signal, moveFocus);
}

document.addEventListener("DOMContentLoaded", () => {
  $("token").value = token;
  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    token = $("token").value.trim();
    sessionStorage.setItem("jetspark-token", token);
    route(true);
  });
  $("filter-status").addEventListener("change", () => loadJobs(false).catch((e) => say(e.message)));
  $("filter-name").addEventListener("input", debounce(() =>
    loadJobs(false).catch((e) => say(e.message)), NAME_FILTER_PAUSE_MS));
  $("more-jobs").addEventListener("click", () => loadJobs(true).catch((e) => say(e.message)));
  $("submit-dag").addEventListener("click", async () => {
    try {
      const job = await api("/v1/jobs", { method: "POST", body: $("dag-body").value });
      $("submit-result").textContent = `submitted ${job.id}`;
      location.hash = `#/jobs/${job.id}`;
    } catch (error) {
      $("submit-result").textContent = error.message;
    }
  });
  for (const button of document.querySelectorAll("#job-view [data-action]")) {
    button.addEventListener("click", async () => {
      const jobId = $("job-id").textContent;
      try {
        showJobView(await api(`/v1/jobs/${jobId}/${button.dataset.action}`, { method: "POST" }));
      } catch (error) {
        say(error.message);
      }
    });
  }
  $("results-prev").addEventListener("click", () =>
    loadResults(results.jobId, results.page - 1).catch((e) => say(e.message)));
  $("results-next").addEventListener("click", () =>
    loadResults(results.jobId, results.page + 1).catch((e) => say(e.message)));
  window.addEventListener("hashchange", () => route(true));
  route(false);
});
