// The job's timeline: a bar per phase of its last attempt, from the job view's `timings`
// (queued, claimed, running, planned, each Spark job, computed, results written, finished; a
// stream's restore, first epoch and first snapshot), and for a stream a bar per snapshot of
// its history (state written, then committed). A slow job shows where it waited.
"use strict";

const PHASES = [
  // [from stamp, to stamp, what the time between them went to]
  ["queued", "claimed", "waiting in the queue"],
  ["claimed", "running", "starting on the worker"],
  ["running", "planned", "planning"],
  ["restoring", "restored", "restoring the snapshot"],
  ["planned", "computed", "Spark work"],
  ["planned", "first_epoch", "first epoch"],
  ["first_epoch", "first_snapshot", "first snapshot"],
  ["computed", "results_written", "writing results"],
  ["results_written", "finished", "finishing"],
];
const TIMELINE_SNAPSHOTS = 20; // the newest snapshots drawn; the table lists them all

const timelineState = { timings: null, history: [] };

function timelineRows(timings, history) {
  const at = (name) => (timings && timings[name] ? Date.parse(timings[name]) : null);
  const rows = [];
  for (const [from, to, label] of PHASES) {
    const start = from === "planned" && to === "first_epoch" && at("restored") ? at("restored") : at(from);
    if (start !== null && at(to) !== null) rows.push({ label, start, end: at(to), kind: from === "planned" ? "work" : "wait" });
  }
  // Each Spark job of the group, from its first stage's submission to the next job's.
  const jobs = ((timings && timings.spark_jobs) || []).filter((j) => j.submitted);
  const workEnd = at("computed") ?? at("first_epoch");
  jobs.forEach((job, i) => {
    const start = Date.parse(job.submitted);
    const end = i + 1 < jobs.length ? Date.parse(jobs[i + 1].submitted) : workEnd;
    if (end !== null && end >= start) {
      rows.push({ label: `Spark job ${job.id} (stages ${job.stages.join(", ")})`, start, end, kind: "spark" });
    }
  });
  for (const record of [...history].slice(0, TIMELINE_SNAPSHOTS).reverse()) {
    const start = Date.parse(record.started_at);
    const written = record.written_at ? Date.parse(record.written_at) : null;
    const ended = record.ended_at ? Date.parse(record.ended_at) : null;
    if (written !== null) rows.push({ label: `snapshot ${record.snapshot_id}: state written`, start, end: written, kind: "snapshot" });
    if (ended !== null) {
      rows.push({ label: `snapshot ${record.snapshot_id}: ${record.state === "committed" ? "committed" : record.state}`,
        start: written ?? start, end: ended, kind: record.state === "committed" ? "commit" : "failed" });
    }
  }
  return rows.sort((a, b) => a.start - b.start || a.end - b.end);
}

function drawTimeline() {
  const rows = timelineRows(timelineState.timings, timelineState.history);
  const canvas = $("timeline");
  canvas.replaceChildren();
  $("timeline-empty").hidden = rows.length > 0;
  $("timeline-box").hidden = rows.length === 0; // a div: an SVG element has no `hidden`
  canvas.dataset.rows = String(rows.length);
  if (!rows.length) return;
  const first = Math.min(...rows.map((r) => r.start));
  const last = Math.max(...rows.map((r) => r.end));
  const span = Math.max(1, last - first);
  const labelWidth = 300, barsWidth = 560, rowHeight = 20;
  const width = labelWidth + barsWidth + 90;
  canvas.setAttribute("viewBox", `0 0 ${width} ${rows.length * rowHeight + 4}`);
  canvas.setAttribute("width", width);
  canvas.setAttribute("height", rows.length * rowHeight + 4);
  rows.forEach((row, i) => {
    const y = i * rowHeight + 2;
    const group = svg("g", { class: `phase ${row.kind}`, "data-phase": row.label });
    const label = svg("text", { x: labelWidth - 8, y: y + 14, "text-anchor": "end" });
    label.textContent = row.label;
    const x = labelWidth + ((row.start - first) / span) * barsWidth;
    const w = Math.max(1.5, ((row.end - row.start) / span) * barsWidth);
    const bar = svg("rect", { x, y: y + 3, width: w, height: rowHeight - 6, rx: 2 });
    const title = svg("title");
    title.textContent = `${row.label}: ${formatDuration(row.end - row.start)}, from ${formatTime(row.start)}`;
    bar.append(title);
    const duration = svg("text", { x: x + w + 4, y: y + 14 });
    duration.textContent = formatDuration(row.end - row.start);
    group.append(label, bar, duration);
    canvas.append(group);
  });
}

// Where the job is in Spark's own UI or History Server: application, job group, job and
// stage ids; each a link when the operator named where they see Spark's UI
// (JETSPARK_API_SPARK_UI_URL, behind their own proxy; the API never serves Spark's UI).
const pageConfig = fetch("/page-config.json").then((r) => (r.ok ? r.json() : {}))
  .catch(() => ({}));

function sparkLink(base, path, text) {
  if (!base) return document.createTextNode(text);
  const link = document.createElement("a");
  link.href = `${base}${path}`;
  link.rel = "noopener noreferrer";
  link.target = "_blank";
  link.textContent = text;
  return link;
}

function sparkNames(timings, uiUrl) {
  const box = $("spark-names");
  box.replaceChildren();
  if (!timings || !timings.spark_job_group) return false;
  const app = timings.spark_application;
  const base = uiUrl && app ? uiUrl.replaceAll("{application}", encodeURIComponent(app))
    .replace(/\/+$/, "") : null;
  const parts = [];
  if (app) parts.push([document.createTextNode(`Spark application ${app}`)]);
  parts.push([document.createTextNode(`job group ${timings.spark_job_group}`)]);
  const jobs = timings.spark_jobs || [];
  if (jobs.length) {
    const ids = (label, list, path) => [document.createTextNode(`${label} `),
      ...list.flatMap((id, i) => [...(i ? [document.createTextNode(", ")] : []),
        sparkLink(base, path(id), String(id))])];
    parts.push(ids("Spark jobs", jobs.map((j) => j.id), (id) => `/jobs/job/?id=${id}`));
    parts.push(ids("stages", jobs.flatMap((j) => j.stages),
      (id) => `/stages/stage/?id=${id}&attempt=0`));
  }
  parts.forEach((nodes, i) => box.append(...(i ? [document.createTextNode(" · ")] : []),
    ...nodes));
  return true;
}

function showTimeline(timings) {
  timelineState.timings = timings || null;
  pageConfig.then((config) => {
    if (timelineState.timings !== (timings || null)) return; // another job shown since
    $("spark-names").hidden = !sparkNames(timings, config.spark_ui_url);
  });
  drawTimeline();
}

function showTimelineSnapshots(history) {
  timelineState.history = history || [];
  drawTimeline();
}

function resetTimeline() {
  timelineState.timings = null;
  $("spark-names").hidden = true;
  timelineState.history = [];
  drawTimeline();
}
