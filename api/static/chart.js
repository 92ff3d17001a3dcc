// The throughput chart: uPlot (vendored, see vendor/README.md) with a time axis and an
// items/s axis. One point per metrics tick; the last MAX_POINTS are kept.
"use strict";

const MAX_POINTS = 600;

class ThroughputChart {
  constructor(container) {
    this.container = container;
    this.xs = [];
    this.ys = [];
    this.plot = new uPlot(this.options(), [this.xs, this.ys], container);
    this.resize = () => this.plot.setSize(this.size());
    window.addEventListener("resize", this.resize);
  }

  size() {
    return { width: Math.max(320, this.container.clientWidth || 640), height: 220 };
  }

  options() {
    const axis = { stroke: "#1d2733", grid: { stroke: "#eef1f5" }, ticks: { stroke: "#d8dee6" } };
    return {
      ...this.size(),
      scales: { x: { time: true }, y: { range: (u, min, max) => [0, Math.max(1, max * 1.1)] } },
      series: [
        { label: "time", value: (u, v) => (v === null ? "-" : formatTime(v * 1000)) },
        {
          label: "items/s out of the sources",
          stroke: "#35618f",
          fill: "rgba(53, 97, 143, 0.12)",
          width: 1.5,
          value: (u, v) => (v === null ? "-" : `${formatCount(v)} items/s`),
        },
      ],
      axes: [
        { ...axis, label: "time" },
        { ...axis, label: "items/s", size: 70, values: (u, ticks) => ticks.map(formatCount) },
      ],
    };
  }

  // Adds the rate at ``atMs``; ticks at or before the last one are ignored (a replay).
  add(atMs, rate) {
    const x = atMs / 1000;
    if (this.xs.length && x <= this.xs[this.xs.length - 1]) return;
    this.xs.push(x);
    this.ys.push(rate);
    if (this.xs.length > MAX_POINTS) {
      this.xs.shift();
      this.ys.shift();
    }
    this.plot.setData([this.xs, this.ys]);
    this.container.dataset.points = String(this.xs.length);
  }

  destroy() {
    window.removeEventListener("resize", this.resize);
    this.plot.destroy();
  }
}

// The snapshot history's chart: each snapshot's duration (ms, left axis) and size (bytes,
// right axis) at the time it started, oldest to newest; failed and abandoned ones have no
// duration and are left out of the line (a gap), as their size is unknown too.
class SnapshotChart {
  constructor(container) {
    this.container = container;
    this.plot = new uPlot(this.options(), [[], [], []], container);
    this.resize = () => this.plot.setSize(this.size());
    window.addEventListener("resize", this.resize);
  }

  size() {
    return { width: Math.max(320, this.container.clientWidth || 640), height: 200 };
  }

  options() {
    const axis = { stroke: "#1d2733", grid: { stroke: "#eef1f5" }, ticks: { stroke: "#d8dee6" } };
    const fromZero = (u, min, max) => [0, Math.max(1, max * 1.1)];
    return {
      ...this.size(),
      scales: { x: { time: true }, ms: { range: fromZero }, bytes: { range: fromZero } },
      series: [
        { label: "started", value: (u, v) => (v === null ? "-" : formatTime(v * 1000)) },
        {
          label: "duration",
          scale: "ms",
          stroke: "#35618f",
          width: 1.5,
          points: { show: true },
          value: (u, v) => formatDuration(v),
        },
        {
          label: "size",
          scale: "bytes",
          stroke: "#a35d00",
          width: 1.5,
          dash: [6, 3],
          points: { show: true },
          value: (u, v) => formatBytes(v),
        },
      ],
      axes: [
        { ...axis, label: "started" },
        { ...axis, scale: "ms", label: "duration", size: 70, values: (u, t) => t.map(formatDuration) },
        { ...axis, scale: "bytes", label: "size", side: 1, size: 80, grid: { show: false },
          values: (u, t) => t.map(formatBytes) },
      ],
    };
  }

  // ``records``: the API's history, newest first.
  show(records) {
    const oldestFirst = [...records].reverse();
    const xs = [], durations = [], sizes = [];
    for (const r of oldestFirst) {
      xs.push(Date.parse(r.started_at) / 1000);
      durations.push(r.state === "committed" ? r.duration_ms : null);
      sizes.push(r.state === "committed" ? r.bytes : null);
    }
    this.plot.setData([xs, durations, sizes]);
    this.container.dataset.points = String(durations.filter((d) => d !== null).length);
  }

  destroy() {
    window.removeEventListener("resize", this.resize);
    this.plot.destroy();
  }
}
