"use strict";
const errors = document.getElementById("errors");
function report(text) { errors.textContent += text + "\n"; }
window.addEventListener("error", e => report("error: " + e.message + " (" + (e.lineno || "?") + ")"));
window.addEventListener("unhandledrejection", e => report("error: " + e.reason));

// What lets the page's own requests in when it was opened with a viewer key or a signed link:
// the server writes it here (a signed link's signature, remade for every path: docs/security.md).
const ACCESS = ACCESS_QUERY;
// Whatever the page was opened with (a viewer key) goes to every request it makes.
function url(path, params) {
  const q = new URLSearchParams(ACCESS || location.search);
  for (const [k, v] of Object.entries(params || {})) q.set(k, v);
  const s = q.toString();
  return path + (s ? "?" + s : "");
}

const HISTORY = 300;  // one sample a second: five minutes
const history = [];
const COLORS = ["#5fa8f5", "#6fd08c", "#f2c14e", "#f26b5e", "#c792ea", "#7fdbca"];

function lookup(object, name) {
  return name.split(".").reduce((o, k) => (o == null ? undefined : o[k]), object);
}
function format(v) {
  if (typeof v !== "number") return v == null ? "–" : String(v);
  return Math.abs(v) >= 100 || Number.isInteger(v) ? v.toFixed(0) : v.toFixed(Math.abs(v) >= 10 ? 1 : 2);
}
function stateClass(state) {
  if (state === "live" || state === "ended") return "live";
  if (state === "given up") return "bad";
  return "warn";
}
function cell(row, text, cls, stat) {
  const td = row.insertCell();
  td.textContent = text;
  if (cls) td.className = cls;
  if (stat) td.dataset.stat = stat;
  return td;
}

function plot(id, series, zeroBased) {
  const canvas = document.getElementById(id);
  const ratio = window.devicePixelRatio || 1;
  const w = canvas.clientWidth, h = canvas.clientHeight;
  if (canvas.width !== w * ratio) { canvas.width = w * ratio; canvas.height = h * ratio; }
  const g = canvas.getContext("2d");
  g.setTransform(ratio, 0, 0, ratio, 0, 0);
  g.clearRect(0, 0, w, h);
  const values = series.flatMap(s => s.values.filter(v => typeof v === "number"));
  g.font = "11px system-ui, sans-serif";
  if (values.length === 0) {
    g.fillStyle = "#9aa4b2";
    g.fillText(series.length ? "no data yet" : "none", 4, 14);
    return;
  }
  let lo = Math.min(...values), hi = Math.max(...values);
  if (zeroBased) lo = Math.min(lo, 0);
  if (hi - lo < 1e-9) { hi += 1; lo -= zeroBased ? 0 : 1; }
  const left = 44, top = 6, bottom = h - 16, right = w - 4;
  const x = i => right - (HISTORY - 1 - i) * (right - left) / (HISTORY - 1);
  const y = v => bottom - (v - lo) * (bottom - top) / (hi - lo);
  g.strokeStyle = "#2f3540"; g.fillStyle = "#9aa4b2";
  for (const v of [lo, (lo + hi) / 2, hi]) {
    g.beginPath(); g.moveTo(left, y(v)); g.lineTo(right, y(v)); g.stroke();
    g.fillText(format(v), 2, y(v) + 4);
  }
  series.forEach((s, n) => {
    g.strokeStyle = s.color || COLORS[n % COLORS.length];
    g.beginPath();
    let drawing = false;
    const offset = HISTORY - s.values.length;
    s.values.forEach((v, i) => {
      if (typeof v !== "number") { drawing = false; return; }
      if (drawing) g.lineTo(x(offset + i), y(v)); else g.moveTo(x(offset + i), y(v));
      drawing = true;
    });
    g.stroke();
    g.fillStyle = g.strokeStyle;
    g.fillText(s.label, left + 4 + n * 110, h - 3);
  });
}

// One series per output, by its id: two pushes with one masked name are two lines.
function seriesByOutput(list, field) {
  const key = o => o.id || o.name;
  const keys = [...new Set(history.flatMap(s => (s[list] || []).map(key)))];
  return keys.map(k => {
    const last = history.flatMap(s => (s[list] || []).filter(o => key(o) === k)).pop();
    const name = (last.id ? last.id + " " : "") + last.name;
    return {
      label: name.length > 18 ? "…" + name.slice(-17) : name,
      values: history.map(s => { const o = (s[list] || []).find(o => key(o) === k); return o ? o[field] : null; })
    };
  });
}

function drawPlots() {
  const column = f => history.map(s => lookup(s, f));
  plot("plot-bitrate", [
    { label: "total", values: column("bitrate_kbps") },
    { label: "video", values: column("video.bitrate_kbps") },
    { label: "audio", values: column("audio.bitrate_kbps") }], true);
  plot("plot-offset", [{ label: "A/V offset", values: column("av_offset_ms") }], false);
  plot("plot-latency", [{ label: "p99", values: column("latency_ms.p99") }], true);
  plot("plot-link", seriesByOutput("network", "link_kbps"), true);
  plot("plot-backlog", seriesByOutput("network", "backlog_ms"), true);
}

function renderSources(s) {
  const section = document.getElementById("sources-section");
  const table = document.getElementById("sources");
  // Levels are audio's: a video source has none to show.
  const sources = (s.sources || []).filter(source => source.kind === "audio");
  section.hidden = sources.length === 0;
  table.replaceChildren();
  sources.forEach(source => {
    const row = table.insertRow();
    // A long device name (PulseAudio's) is cut to the box; the whole name is its tooltip.
    cell(row, source.label + " " + (source.name || ""), "source-name").title = source.name || "";
    cell(row, source.state || "", stateClass(source.state), "sources.state");
    const meter = row.insertCell();
    meter.style.width = "40%";
    if (typeof source.peak_dbfs === "number") {
      const bar = document.createElement("div"); bar.className = "meter";
      const fill = document.createElement("div");
      fill.style.width = Math.max(0, Math.min(100, (source.peak_dbfs + 60) / 60 * 100)) + "%";
      bar.appendChild(fill); meter.appendChild(bar);
    }
    cell(row, typeof source.peak_dbfs === "number" ? format(source.peak_dbfs) + " dBFS" : "–", "num", "sources.peak_dbfs");
  });
}

function renderStates(s) {
  const table = document.getElementById("states");
  table.replaceChildren();
  const head = table.insertRow();
  ["", "state", "detail"].forEach(t => { const th = document.createElement("th"); th.textContent = t; head.appendChild(th); });
  (s.devices || []).forEach(d => {
    const row = table.insertRow();
    cell(row, d.name, null, "devices.name");
    cell(row, d.state, stateClass(d.state), "devices.state");
    cell(row, "failures " + d.failures + ", away " + format(d.away_s) + " s");
  });
  // Every output by its id (outputs); a URL output's connection and link from network.
  const outputs = s.outputs || [];
  (s.network || []).forEach(o => {
    const row = table.insertRow();
    cell(row, o.id + " " + o.name, null, "network.name");
    cell(row, o.state, stateClass(o.state), "network.state");
    const state = (outputs.find(out => out.id === o.id) || {}).state || "";
    const failed = state.startsWith("failed: ");
    cell(row, failed ? state.slice(8) : format(o.link_kbps) + " kbit/s, backlog " + format(o.backlog_ms) + " ms");
  });
  outputs.forEach(out => {
    if ((s.network || []).some(o => o.id === out.id)) return;
    const row = table.insertRow();
    cell(row, out.id.startsWith("/") ? out.name : out.id + " " + out.name, null, "output_states");
    const failed = out.state.startsWith("failed: ");
    cell(row, failed ? "failed" : out.state, failed ? "bad" : "live", "output_states");
    cell(row, failed ? out.state.slice(8) : format(out.bytes / 1e6) + " MB");
  });
}

function renderViewers(s) {
  const table = document.getElementById("viewers");
  table.replaceChildren();
  const v = s.viewers || { count: 0, max: 0, streams: {} };
  Object.entries(v.streams).forEach(([path, n]) => {
    const row = table.insertRow();
    cell(row, path);
    cell(row, String(n), "num", "viewers.streams");
  });
  const row = table.insertRow();
  cell(row, "of at most " + v.max);
  cell(row, String(v.count), "num", "viewers.count");
}

const seenWarnings = new Set();
function renderWarnings(s) {
  const list = document.getElementById("warnings");
  (s.warnings || []).forEach(w => {
    const key = w.elapsed_s + " " + w.message;
    if (seenWarnings.has(key)) return;
    seenWarnings.add(key);
    const li = document.createElement("li");
    li.dataset.stat = "warnings.message";
    li.textContent = format(w.elapsed_s) + " s: " + w.message;
    list.prepend(li);
  });
}

function show(s) {
  history.push(s);
  if (history.length > HISTORY) history.shift();
  for (const el of document.querySelectorAll("header [data-stat], table:not(#states):not(#viewers):not(#sources) [data-stat]")) {
    el.textContent = format(lookup(s, el.dataset.stat));
  }
  renderSources(s);
  renderStates(s);
  renderViewers(s);
  renderWarnings(s);
  drawPlots();
}

const connection = document.getElementById("connection");
function listen() {
  const events = new EventSource(url("/events"));
  events.onmessage = e => {
    const s = JSON.parse(e.data);
    const last = history[history.length - 1];
    if (last && s.elapsed_s <= last.elapsed_s) history.pop();  // the second /history ended with
    show(s);
    connection.textContent = "live"; connection.className = "live";
  };
  events.onerror = () => { connection.textContent = "disconnected, retrying…"; connection.className = "bad"; };
}
// The last five minutes first, so the plots are full from the start; then one event a second.
fetch(url("/history")).then(r => r.ok ? r.json() : []).then(points => {
  history.push(...points.slice(-HISTORY));
}).catch(error => report("error: /history: " + error)).finally(listen);

// The snapshot: a new one a second after the last one loaded, while the tab is visible and the
// live picture does not show (it takes the snapshot's place, which comes back when it ends).
const snapshot = document.getElementById("snapshot");
const picture = document.getElementById("picture-section");
function refresh() {
  if (document.hidden || picture.hidden) { setTimeout(refresh, 1000); return; }
  snapshot.src = url("/snapshot.jpg", { width: 640, t: Date.now() });
}
snapshot.onload = () => { snapshot.dataset.naturalWidth = snapshot.naturalWidth; setTimeout(refresh, 1000); };
snapshot.onerror = () => setTimeout(refresh, 2000);
refresh();

// The live picture and sound: /live.mp4 (fragmented MP4, one fragment a packet) through Media
// Source Extensions, muted so it may start by itself; one click turns the sound on. It stays
// near the live edge: more than JUMP_S behind, it skips to BEHIND_S behind; between CATCH_UP_S
// and JUMP_S it plays CATCH_UP_RATE times faster. "Behind" is media_time_s of /stats, moved on
// by the time since that sample, minus currentTime: the stream is on the same media clock.
// /stats is sampled once a second, so the sample's age comes from its elapsed_s: the server's
// clock is at least elapsed_s when the answer arrives, and the largest such offset seen (polls
// every POLL_MS land at every phase of the second) is within a poll of the true one.
const LIVE = { JUMP_S: 1.0, BEHIND_S: 0.3, CATCH_UP_S: 0.6, CATCH_UP_RATE: 1.05, KEEP_S: 30, POLL_MS: 170, TICK_MS: 250 };
const video = document.getElementById("live");
const unmute = document.getElementById("unmute");
const behindStat = document.querySelector('[data-stat="playback_behind_ms"]');
const STREAM = LIVE_STREAM_PATH;
const player = window.livePlayer = { firstFrameMs: null, jumps: 0, behindMs: null, error: null };
let liveClock = null;  // { media: media_time_s, elapsed: elapsed_s } of the newest /stats sample
let serverOffset = -Infinity;  // the server's elapsed_s minus performance.now() in s, at least
function liveEdge() {
  return liveClock && liveClock.media + (performance.now() / 1000 + serverOffset - liveClock.elapsed);
}
async function pollLiveClock() {
  try {
    const r = await fetch(url("/stats", { t: Date.now() }));
    if (r.ok) {
      const s = await r.json();
      if (typeof s.media_time_s === "number" && typeof s.elapsed_s === "number") {
        liveClock = { media: s.media_time_s, elapsed: s.elapsed_s };
        serverOffset = Math.max(serverOffset, s.elapsed_s - performance.now() / 1000);
      }
    }
  } catch (e) { /* the next poll tries again */ }
  setTimeout(pollLiveClock, LIVE.POLL_MS);
}
function keepLive() {
  const b = video.buffered;
  if (b.length > 0) {
    const end = b.end(b.length - 1);
    if (video.currentTime < b.start(0)) video.currentTime = b.start(0);  // the first fragment: its keyframe
    const edge = liveEdge() ?? end;
    const behind = edge - video.currentTime;
    if (behind > LIVE.JUMP_S && Math.min(edge, end) - LIVE.BEHIND_S > video.currentTime) {
      video.currentTime = Math.min(edge, end) - LIVE.BEHIND_S;
      video.playbackRate = 1;
      player.jumps += 1;
    } else {
      video.playbackRate = behind > LIVE.CATCH_UP_S ? LIVE.CATCH_UP_RATE : 1;
    }
    if (liveClock && video.readyState >= 2) {
      player.behindMs = Math.round(behind * 1000);
      behindStat.textContent = player.behindMs;
    }
  }
  setTimeout(keepLive, LIVE.TICK_MS);
}
async function playLive() {
  if (!window.MediaSource || !STREAM) return;  // the section stays hidden
  document.getElementById("live-section").hidden = false;
  const r = await fetch(url(STREAM));
  const type = r.headers.get("Content-Type") || "";
  if (!r.ok || !MediaSource.isTypeSupported(type)) {
    r.body && r.body.cancel();
    document.getElementById("live-section").hidden = true;  // a codec browsers lack
    return;
  }
  const source = new MediaSource();
  video.src = URL.createObjectURL(source);
  await new Promise(resolve => source.addEventListener("sourceopen", resolve, { once: true }));
  const buffer = source.addSourceBuffer(type);
  const pending = [];
  // One append at a time; between them, what is more than KEEP_S old goes (the buffer is bounded).
  function pump() {
    if (buffer.updating || source.readyState !== "open") return;
    const b = video.buffered;
    if (b.length > 0 && video.currentTime - b.start(0) > LIVE.KEEP_S) {
      buffer.remove(0, video.currentTime - LIVE.KEEP_S / 2);
      return;
    }
    if (pending.length === 0) return;
    const size = pending.reduce((n, p) => n + p.length, 0);
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const p of pending) { bytes.set(p, at); at += p.length; }
    pending.length = 0;
    buffer.appendBuffer(bytes);
  }
  buffer.addEventListener("updateend", pump);
  const firstFrame = () => {
    player.firstFrameMs = Math.round(performance.now());
    picture.hidden = true;
  };
  if (video.requestVideoFrameCallback) {
    video.requestVideoFrameCallback(firstFrame);
  } else {
    video.addEventListener("loadeddata", firstFrame, { once: true });
  }
  video.play().catch(() => {});
  unmute.hidden = false;
  pollLiveClock();
  keepLive();
  const reader = r.body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    pending.push(value);
    pump();
  }
  if (source.readyState === "open" && !buffer.updating) source.endOfStream();
  picture.hidden = false;
}
unmute.addEventListener("click", () => {
  video.muted = false;
  video.play().catch(() => {});
  unmute.hidden = true;
});
playLive().catch(error => {
  player.error = String(error);
  picture.hidden = false;
  report("error: " + STREAM + ": " + error);
});

// The controls, for whoever opened the page with the control key (#control=KEY): the fragment
// is read once into the tab's sessionStorage and taken out of the address bar and history.
const CONTROL_STORAGE = "livemux-control-key";
const CONTROL_POLL_MS = 1000;
const VOLUME_MAX = 2;  // linear: the API takes up to 16, the slider the useful range
const ID = /^[a-z][0-9]+$/;  // an API id (a0, o1) goes into a path and an attribute
const LAYOUTS = LAYOUT_NAMES;  // VideoLayout's names, as PUT /api/layout takes them
const NAME_SHOWN = 40;  // characters of a source's name in the main picture's list
function controlKey() {
  const fragment = new URLSearchParams(location.hash.slice(1));
  const given = fragment.get("control");
  let stored = null;
  try {
    if (given) sessionStorage.setItem(CONTROL_STORAGE, given);
    stored = sessionStorage.getItem(CONTROL_STORAGE);
  } catch (e) {}  // storage off (a sandboxed frame): the key lives as long as the page
  if (given !== null) {
    fragment.delete("control");
    const rest = fragment.toString();
    window.history.replaceState(null, "", location.pathname + location.search + (rest ? "#" + rest : ""));
  }
  return stored || given || null;
}
function forgetControlKey() {
  try { sessionStorage.removeItem(CONTROL_STORAGE); } catch (e) {}
}

// removing: outputs whose remove was clicked, whose button stays hidden while they end;
// layoutAsked: a layout change on its way, which the poll does not undo in the selectors.
const control = { key: controlKey(), shown: false, pollMessage: false, removing: new Set(), layoutAsked: false };
const controlMessage = document.querySelector('[data-control="message"]');
function say(text, cls) { controlMessage.textContent = text; controlMessage.className = cls || ""; }

// One request to /api; the status and the JSON answer ({} when there is none).
async function api(method, path, body) {
  const init = { method, cache: "no-store", headers: { "Authorization": "Bearer " + control.key } };
  if (body !== undefined) { init.headers["Content-Type"] = "application/json"; init.body = JSON.stringify(body); }
  const r = await fetch(path, init);
  let json = {};
  try { json = await r.json(); } catch (e) {}
  return { status: r.status, json: json || {} };
}
// A change asked by a click: its error, the API's own words, in the message line. True when made.
// `done` is what to say when made: text, or a function of the answer.
async function change(method, path, body, done) {
  try {
    const answer = await api(method, path, body);
    if (answer.status >= 400) { say(answer.json.error || "HTTP " + answer.status, "bad"); return false; }
    say((typeof done === "function" ? done(answer.json) : done) || "", "live");
    control.pollMessage = false;
    if (answer.json.id && ID.test(answer.json.id)) renderControlEntry(answer.json);
    if (answer.json.layout) renderLayout(answer.json.layout);
    return true;
  } catch (e) {
    say("cannot reach livemux: " + e.message, "bad");
    return false;
  }
}

function controlElement(tag, name, props) {
  const el = document.createElement(tag);
  el.dataset.control = name;
  Object.assign(el, props || {});
  return el;
}

function sourceRow(id) {
  const table = document.getElementById("control-sources");
  let row = table.querySelector('tr[data-id="' + id + '"]');
  if (row) return row;
  row = table.insertRow();
  row.dataset.id = id;
  cell(row, "", "control-name");  // the source's label and name, by textContent
  const mute = controlElement("button", "mute-" + id, { type: "button" });
  mute.addEventListener("click", () => {
    const muted = mute.getAttribute("aria-pressed") === "true";
    change("PATCH", "/api/sources/" + id, { mute: !muted });
  });
  row.insertCell().appendChild(mute);
  const volume = controlElement("input", "volume-" + id, { type: "range", min: 0, max: VOLUME_MAX, step: 0.05 });
  volume.setAttribute("aria-label", "volume of " + id);
  volume.addEventListener("input", () => { row.cells[3].textContent = "×" + Number(volume.value).toFixed(2); });
  volume.addEventListener("change", () => change("PATCH", "/api/sources/" + id, { volume: Number(volume.value) }));
  const slider = row.insertCell(); slider.style.width = "40%"; slider.appendChild(volume);
  cell(row, "", "num");
  return row;
}

function outputRow(id) {
  const table = document.getElementById("control-outputs");
  let row = table.querySelector('tr[data-id="' + id + '"]');
  if (row) return row;
  row = table.insertRow();
  row.dataset.id = id;
  cell(row, "", "control-name");
  cell(row, "", "num");
  const form = document.createElement("form");
  const field = controlElement("input", "vbitrate-" + id, { type: "text", placeholder: "800k", autocomplete: "off" });
  field.setAttribute("aria-label", "video bit rate of " + id);
  const set = controlElement("button", "vbitrate-set-" + id, { type: "submit", textContent: "set" });
  form.append(field, set);
  form.addEventListener("submit", e => {
    e.preventDefault();
    const text = field.value.trim();
    // Sent as typed: the API says what is wrong with it, and the text stays to be fixed.
    if (text) change("PATCH", "/api/outputs/" + id, { vbitrate: text }).then(made => { if (made) field.value = ""; });
  });
  row.insertCell().appendChild(form);
  cell(row, "");  // its state
  const remove = controlElement("button", "remove-" + id, { type: "button", textContent: "remove" });
  remove.addEventListener("click", () => {
    // Hidden at once: a second click would only be refused (409, already ending).
    control.removing.add(id);
    remove.hidden = true;
    change("DELETE", "/api/outputs/" + id, undefined, "removing " + id + ": it ends whole, the others go on")
      .then(made => { if (!made) { control.removing.delete(id); remove.hidden = false; } });
  });
  row.insertCell().appendChild(remove);
  return row;
}

// Adds an output as -o would. A URL's stream key leaves the page with the request and nowhere
// else: the field is cleared on submit, and the output shows as the API answers it, masked.
function addOutputForm() {
  const form = document.createElement("form");
  form.id = "control-add";
  const output = controlElement("input", "add-output", { type: "text", placeholder: "file or rtmp://… to add", autocomplete: "off", spellcheck: false });
  output.setAttribute("aria-label", "output to add: a file or a URL");
  const vbitrate = controlElement("input", "add-vbitrate", { type: "text", placeholder: "800k", autocomplete: "off" });
  vbitrate.setAttribute("aria-label", "its video bit rate (optional)");
  const size = controlElement("input", "add-size", { type: "text", placeholder: "1280x720", autocomplete: "off" });
  size.setAttribute("aria-label", "its picture size (optional)");
  const overwrite = controlElement("input", "add-overwrite", { type: "checkbox" });
  const label = document.createElement("label");
  label.append(overwrite, " overwrite");
  const submit = controlElement("button", "add-output-submit", { type: "submit", textContent: "add output" });
  form.append(output, vbitrate, size, label, submit);
  form.addEventListener("submit", e => {
    e.preventDefault();
    const body = { output: output.value.trim(), overwrite: overwrite.checked };
    output.value = "";
    // The optional fields go as typed (the API says what is wrong) and stay to be fixed.
    if (vbitrate.value.trim()) body.vbitrate = vbitrate.value.trim();
    if (size.value.trim()) body.size = size.value.trim();
    change("POST", "/api/outputs", body, added => "added " + added.id + ": " + added.target).then(made => {
      if (made) { vbitrate.value = ""; size.value = ""; overwrite.checked = false; }
    });
  });
  return form;
}

// The main picture and the layout, each applied when chosen.
function layoutControls() {
  const box = document.createElement("form");
  box.id = "control-layout";
  const main = controlElement("select", "main");
  main.setAttribute("aria-label", "the main picture");
  const layout = controlElement("select", "layout");
  layout.setAttribute("aria-label", "the layout");
  LAYOUTS.forEach(name => layout.add(new Option(name, name)));
  const ask = body => {
    control.layoutAsked = true;
    change("PUT", "/api/layout", body).finally(() => { control.layoutAsked = false; });
  };
  main.addEventListener("change", () => ask({ main: main.value }));
  layout.addEventListener("change", () => ask({ layout: layout.value }));
  const labelled = (text, select) => { const l = document.createElement("label"); l.append(text + " ", select); return l; };
  box.append(labelled("main picture", main), labelled("layout", layout));
  box.addEventListener("submit", e => e.preventDefault());
  return box;
}

// The video sources into the main picture's list (when they changed); the layout shown.
function renderLayout(layout, videos) {
  const box = document.getElementById("control-layout");
  if (!box) return;
  const main = box.querySelector('[data-control="main"]'), shape = box.querySelector('[data-control="layout"]');
  if (videos) {
    box.hidden = videos.length < 2;
    if ([...main.options].map(o => o.value).join() !== videos.map(v => v.id).join()) {
      main.replaceChildren(...videos.map(v => {
        const name = v.name || "";
        return new Option(v.id + " " + (name.length > NAME_SHOWN ? name.slice(0, NAME_SHOWN - 1) + "…" : name), v.id);
      }));
    }
  }
  // While a choice is on its way the poll's older answer would flip the selector back.
  if (control.layoutAsked && videos) return;
  if (typeof layout.main === "string") main.value = layout.main;
  if (typeof layout.layout === "string") shape.value = layout.layout;
}

// One source or output of GET /api (or of a change's answer) into its row.
function renderControlEntry(entry) {
  if (entry.kind === "audio") {
    const row = sourceRow(entry.id);
    row.cells[0].textContent = entry.id + " " + (entry.name || "");
    row.cells[0].title = entry.name || "";
    const mute = row.cells[1].firstChild;
    mute.textContent = entry.mute ? "unmute" : "mute";
    mute.setAttribute("aria-pressed", entry.mute ? "true" : "false");
    const volume = row.cells[2].firstChild;
    // Not under the pointer or the keyboard: that one is being moved.
    if (document.activeElement !== volume && typeof entry.volume === "number") {
      volume.value = Math.min(entry.volume, VOLUME_MAX);
      row.cells[3].textContent = "×" + entry.volume.toFixed(2);
    }
  } else if (typeof entry.target === "string") {
    const settings = entry.settings || {};
    const writing = ["connecting", "writing"].includes(entry.state) || (entry.state || "").startsWith("reconnecting");
    const row = outputRow(entry.id);
    row.cells[0].textContent = entry.id + " " + entry.target;
    row.cells[0].title = entry.target;
    const video = typeof settings.vbitrate === "number";
    row.cells[1].textContent = settings.adapts ? "follows its link" : video ? format(settings.vbitrate / 1000) + " kbit/s" : "";
    // Only where the API takes it: not a bit rate that follows its link or an encode shared
    // (with other outputs, or serve's viewers), nor an output without video.
    row.cells[2].firstChild.hidden = !writing || !entry.vbitrate_settable;
    row.cells[3].textContent = entry.state || "";
    row.cells[3].className = entry.state === "finished" ? "live" : writing ? "" : "bad";
    row.cells[4].firstChild.hidden = !writing || control.removing.has(entry.id);
  }
}

function renderControls(job) {
  (job.sources || []).filter(s => s.kind === "audio" && ID.test(s.id)).forEach(renderControlEntry);
  (job.outputs || []).filter(o => ID.test(o.id)).forEach(renderControlEntry);
  const section = document.getElementById("control-section");
  let cut = section.querySelector('[data-control="cut"]');
  if (job.segments && !cut) {
    cut = controlElement("button", "cut", { type: "button", textContent: "cut segment" });
    cut.addEventListener("click", () => change("POST", "/api/segments/cut", undefined, "cut at the next keyframe"));
    section.insertBefore(cut, controlMessage);
  }
  if (!document.getElementById("control-add")) {
    section.insertBefore(layoutControls(), controlMessage);
    section.insertBefore(addOutputForm(), controlMessage);
  }
  if (job.layout) renderLayout(job.layout, (job.sources || []).filter(s => s.kind === "video" && ID.test(s.id)));
  section.hidden = false;
  control.shown = true;
}

// GET /api once a second: the controls show what the job has, whoever changed it.
async function pollControl() {
  try {
    const answer = await api("GET", "/api");
    if (answer.status === 200) {
      renderControls(answer.json);
      if (control.pollMessage) { say(""); control.pollMessage = false; }
    } else if (!control.shown) {
      // A wrong or stale key shows nothing; said once, and not tried again on reload.
      forgetControlKey();
      report("control: " + (answer.json.error || "HTTP " + answer.status));
      return;
    } else {
      say(answer.json.error || "HTTP " + answer.status, "bad");
      control.pollMessage = true;
    }
  } catch (e) {
    if (!control.shown) { report("control: cannot reach livemux: " + e.message); return; }
    say("cannot reach livemux: " + e.message, "bad");
    control.pollMessage = true;
  }
  setTimeout(pollControl, CONTROL_POLL_MS);
}
if (control.key) pollControl();
