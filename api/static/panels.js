// The job view's panels that read a finished or running job: its results, its log tail, the
// exception chain of a failure, its snapshots and the SDK script that builds it again. Every
// value from the API reaches the DOM as text (``el`` sets textContent), never as markup.
"use strict";

const RESULTS_PAGE = 50;
const LOG_TAIL = 200;
const LOG_KEPT = 500;
const MAX_COLUMNS = 30;
const MAX_CELL = 300;

// ---- results: the first rows, a page at a time through GET /v1/jobs/{id}/results --------
const results = { jobId: null, cursors: [null], page: 0 };

function cellText(value) {
  const text = value !== null && typeof value === "object" ? JSON.stringify(value) : String(value);
  return text.length > MAX_CELL ? `${text.slice(0, MAX_CELL)}…` : text;
}

// Window bounds (SPEC §5: event time, ms since the epoch) read as moments; the raw number
// stays in the cell's tooltip.
const EVENT_TIME_COLUMNS = new Set(["window_start", "window_end"]);

function resultCell(name, value) {
  if (EVENT_TIME_COLUMNS.has(name) && typeof value === "number") {
    const cell = el("td", formatTime(value));
    cell.title = `${value} ms · ${formatIso(value)}`;
    return cell;
  }
  const cell = el("td", value === undefined ? "" : cellText(value));
  if (value === null) cell.className = "muted";
  return cell;
}

function resultColumns(items) {
  const columns = [];
  for (const item of items) {
    for (const key of Object.keys(item)) {
      if (!columns.includes(key) && columns.length < MAX_COLUMNS) columns.push(key);
    }
  }
  return columns;
}

async function loadResults(jobId, page) {
  const cursor = results.cursors[page];
  const params = new URLSearchParams({ limit: String(RESULTS_PAGE) });
  if (cursor) params.set("cursor", cursor);
  const body = await api(`/v1/jobs/${jobId}/results?${params}`);
  if (results.jobId !== jobId) return; // another job's view by now
  results.page = page;
  results.cursors[page + 1] = body.next_cursor;
  const columns = resultColumns(body.items);
  const head = el("tr");
  head.append(...columns.map((name) => el("th", name)));
  $("results").querySelector("thead").replaceChildren(head);
  $("results").querySelector("tbody").replaceChildren(...body.items.map((item) => {
    const row = el("tr");
    row.append(...columns.map((name) => resultCell(name, item[name])));
    return row;
  }));
  const first = page * RESULTS_PAGE;
  $("results-range").textContent = body.items.length
    ? `rows ${first + 1} to ${first + body.items.length}` : (page ? "no more rows" : "no results");
  $("results-prev").disabled = page === 0;
  $("results-next").disabled = !body.next_cursor;
  $("results-panel").hidden = false;
}

function showResults(jobId) {
  results.jobId = jobId;
  results.cursors = [null];
  loadResults(jobId, 0).catch((error) => say(error.message));
}

function resetResults() {
  results.jobId = null;
  $("results-panel").hidden = true;
  $("results").querySelector("thead").replaceChildren();
  $("results").querySelector("tbody").replaceChildren();
}

// ---- the exception chain (of a FAILED job's view, or of a log line) -----------------------
function chainList(chain) {
  const list = el("ol", undefined, "chain");
  for (const link of chain || []) {
    const item = el("li");
    const head = el("div");
    head.append(el("strong", link.type), el("span", `: ${link.message}`, "message"));
    item.append(head);
    if (link.traceback) {
      const details = el("details");
      details.append(el("summary", "traceback"), el("pre", link.traceback));
      item.append(details);
    }
    list.append(item);
  }
  return list;
}

function showError(job) {
  const box = $("job-error");
  box.hidden = !job.error;
  if (!job.error) return box.replaceChildren();
  const summary = el("p", `${job.error.type}: ${job.error.message.split("\n")[0]}`, "error");
  box.replaceChildren(summary);
  if (job.error.chain && job.error.chain.length) {
    box.append(el("h3", "Exception chain (outermost first)"), chainList(job.error.chain));
  }
}

// ---- the log tail: GET /v1/jobs/{id}/logs for the last lines, then ``log`` events ---------
// Lines are numbered in one order and published in another (a job's threads log at once):
// each line is shown once, in its place by ``seq``, whenever it comes.
const logs = { jobId: null, lastSeq: -1, from: 0, seen: new Set() };

function logLine(line) {
  const item = el("li", undefined, `log ${line.level || "info"}`);
  item.dataset.seq = line.seq;
  const at = line.at ? Date.parse(line.at) : null;
  const time = el("time", at ? formatTime(at).slice(11) : "", "muted");
  if (line.at) time.setAttribute("datetime", line.at);
  item.append(time, el("span", (line.level || "").toUpperCase(), "level"), el("span", line.event));
  const fields = Object.entries(line.fields || {}).map(([k, v]) => `${k}=${v}`).join(" ");
  if (fields) item.append(el("span", fields, "fields muted"));
  if (line.exception) {
    const details = el("details");
    details.append(el("summary", "exception chain"), chainList(line.exception));
    item.append(details);
  }
  return item;
}

function addLogLines(jobId, lines) {
  if (logs.jobId !== jobId) return;
  const box = $("logs");
  const following = box.scrollTop + box.clientHeight >= box.scrollHeight - 8;
  for (const line of lines) {
    if (line.seq < logs.from || logs.seen.has(line.seq)) continue; // fetched, then replayed
    logs.seen.add(line.seq);
    logs.lastSeq = Math.max(logs.lastSeq, line.seq);
    const later = [...box.children].find((item) => Number(item.dataset.seq) > line.seq);
    box.insertBefore(logLine(line), later || null);
  }
  while (box.children.length > LOG_KEPT) box.firstElementChild.remove();
  if (box.firstElementChild) {
    logs.from = Math.max(logs.from, Number(box.firstElementChild.dataset.seq));
    for (const seq of logs.seen) if (seq < logs.from) logs.seen.delete(seq);
  }
  $("logs-empty").hidden = box.children.length > 0;
  const shown = box.children.length;
  $("logs-count").textContent = `${logs.lastSeq + 1} lines logged` +
    (shown <= logs.lastSeq ? `, the last ${shown} shown` : "");
  if (following) box.scrollTop = box.scrollHeight;
}

async function showLogs(jobId) {
  logs.jobId = jobId;
  logs.lastSeq = -1;
  logs.from = 0;
  logs.seen = new Set();
  $("logs").replaceChildren();
  const head = await api(`/v1/jobs/${jobId}/logs?from=0&size=1`);
  const from = Math.max(head.first, head.total - LOG_TAIL);
  const page = await api(`/v1/jobs/${jobId}/logs?from=${from}&size=${LOG_TAIL}`);
  logs.lastSeq = from - 1; // lines before the tail are counted, not shown
  logs.from = from;
  addLogLines(jobId, page.lines);
}

// ---- snapshots, with their size -----------------------------------------------------------
const snapshotsState = { jobId: null, busy: false, again: false, chart: null };

function snapshotSize(snapshot) {
  if (Number.isFinite(snapshot.bytes)) return snapshot.bytes;
  return Object.values(snapshot.vertices || {}).reduce((sum, v) => sum + (v.bytes || 0), 0);
}

function snapshotRow(snapshot) {
  const row = el("tr");
  row.dataset.snapshot = snapshot.snapshot_id;
  const size = el("td", formatBytes(snapshotSize(snapshot)));
  size.title = Object.entries(snapshot.vertices || {})
    .map(([name, v]) => `${name}: ${formatBytes(v.bytes)}, ${v.keys} keys, ${v.rows} rows`)
    .join("\n");
  row.append(el("td", snapshot.snapshot_id), el("td", snapshot.epoch), el("td", snapshot.name || "-"),
    el("td", formatStamp(snapshot.committed_at)), size);
  return row;
}

// A row of the snapshot history: committed, failed or abandoned, and how long each part took.
function historyRow(record) {
  const row = el("tr");
  row.dataset.snapshot = record.snapshot_id;
  row.dataset.state = record.state;
  const state = el("td", record.state);
  state.className = `snapshot-${record.state}`;
  const duration = el("td", formatDuration(record.duration_ms));
  if (record.write_ms !== null && record.duration_ms !== null) {
    duration.title = `state written in ${formatDuration(record.write_ms)}, committed in ` +
      formatDuration(record.duration_ms - record.write_ms);
  }
  const size = el("td", record.state === "committed" ? formatBytes(record.bytes) : "-");
  size.title = Object.entries(record.vertices || {})
    .map(([name, v]) => `${name}: ${formatBytes(v.bytes)}, ${v.keys} keys, ${v.rows} rows`)
    .join("\n");
  const replicas = record.backup_count
    ? `${record.replicas ?? "-"} of ${record.backup_count}${record.under_replicated ? " (short)" : ""}`
    : "-";
  row.append(el("td", record.snapshot_id), el("td", record.attempt), state,
    el("td", formatStamp(record.started_at)), duration, size,
    el("td", record.state === "committed" ? formatCount(record.rows) : "-"), el("td", replicas),
    el("td", record.reason || ""));
  return row;
}

function showHistory(history) {
  $("snapshot-history").querySelector("tbody").replaceChildren(...history.map(historyRow));
  $("snapshot-history-empty").hidden = history.length > 0;
  $("snapshot-chart").hidden = history.length === 0;
  if (!snapshotsState.chart) snapshotsState.chart = new SnapshotChart($("snapshot-chart"));
  snapshotsState.chart.show(history);
  showTimelineSnapshots(history);
  const failed = history.filter((r) => r.state === "failed" || r.state === "abandoned").length;
  $("snapshot-history-count").textContent = history.length
    ? `last ${history.length}${failed ? `, ${failed} failed or abandoned` : ""}` : "";
}

async function loadSnapshots(jobId) {
  if (snapshotsState.busy) {
    snapshotsState.again = true;
    return;
  }
  snapshotsState.busy = true;
  try {
    do {
      snapshotsState.again = false;
      const body = await api(`/v1/jobs/${jobId}/snapshots`);
      if (snapshotsState.jobId !== jobId) return;
      $("snapshots").querySelector("tbody").replaceChildren(...body.items.map(snapshotRow));
      $("snapshots-empty").hidden = body.items.length > 0;
      showHistory(body.history || []);
    } while (snapshotsState.again);
  } finally {
    snapshotsState.busy = false;
  }
}

function showSnapshots(jobId) {
  snapshotsState.jobId = jobId;
  $("snapshots").querySelector("tbody").replaceChildren();
  $("snapshot-history").querySelector("tbody").replaceChildren();
  if (snapshotsState.chart) snapshotsState.chart.destroy();
  snapshotsState.chart = null;
  loadSnapshots(jobId).catch((error) => say(error.message));
}

// ---- the SDK script that builds the job again ---------------------------------------------
async function showSdkSource(jobId) {
  $("sdk-source").textContent = "";
  const body = await api(`/v1/jobs/${jobId}/sdk`);
  if (logs.jobId === jobId) $("sdk-source").textContent = body.python;
}
