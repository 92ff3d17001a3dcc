// How the page writes numbers people read: times, durations, sizes, rates. No DOM here.
"use strict";

const pad = (n, width = 2) => String(n).padStart(width, "0");

// A moment (ms since the epoch) in local time: "2026-11-24 02:41:07.312".
function formatTime(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(Number(ms))) return "-";
  const d = new Date(Number(ms));
  if (Number.isNaN(d.getTime())) return String(ms); // beyond what a Date holds
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

// The same moment as ISO 8601 in UTC, for a tooltip.
function formatIso(ms) {
  const d = new Date(Number(ms));
  return ms === null || ms === undefined || Number.isNaN(d.getTime()) ? "" : d.toISOString();
}

// An ISO timestamp from the API in local time ("-" for none).
function formatStamp(iso) {
  return iso ? formatTime(Date.parse(iso)) : "-";
}

// A duration in ms: "850 ms", "2.3 s", "4 min 12 s", "3 h 20 min", "12 d 4 h".
function formatDuration(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(Number(ms))) return "-";
  const value = Number(ms);
  const sign = value < 0 ? "-" : "";
  const abs = Math.abs(value);
  if (abs < 1000) return `${sign}${Math.round(abs)} ms`;
  if (abs < 59_950) return `${sign}${(abs / 1000).toFixed(1)} s`;
  const s = Math.floor(abs / 1000);
  if (s < 3600) return `${sign}${Math.floor(s / 60)} min ${s % 60} s`;
  if (s < 86_400) return `${sign}${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  return `${sign}${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`;
}

// A size in bytes: "512 B", "3.4 KiB", "12.0 MiB".
function formatBytes(n) {
  if (n === null || n === undefined || !Number.isFinite(Number(n))) return "-";
  let value = Number(n);
  if (value < 1024) return `${value} B`;
  for (const unit of ["KiB", "MiB", "GiB", "TiB"]) {
    value /= 1024;
    if (value < 1024 || unit === "TiB") return `${value.toFixed(1)} ${unit}`;
  }
  return `${n} B`;
}

// A count or rate: grouped thousands ("12,345"), one decimal below 100 ("2.5").
function formatCount(n) {
  if (n === null || n === undefined || !Number.isFinite(Number(n))) return "-";
  const value = Number(n);
  return value >= 100 || Number.isInteger(value)
    ? Math.round(value).toLocaleString("en-US")
    : value.toFixed(1);
}
