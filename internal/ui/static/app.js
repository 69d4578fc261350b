// tickscope ui's page: the live state from one event stream, and the
// actions, each a POST of a small JSON body. Every address is relative to
// the page's, which carries this run's token.
"use strict";

const $ = (id) => document.getElementById(id);
let state = null;
let shownJob = 0;

function setText(id, value) {
  const el = $(id);
  if (el.textContent !== value) el.textContent = value;
}

// holdInputs are hold's inputs, which persist's requests take too.
const holdInputs = { resolution: "hold-value", ms: "hold-value", "dma-latency": "hold-value", while: "hold-while" };
// fieldInputs are, for each section, the input that gives each of its
// requests' fields: the one an outcome's field (the value its error
// refuses) marks.
const fieldInputs = {
  measure: { method: "measure-method", samples: "measure-samples" },
  bench: { samples: "bench-samples", prefer: "bench-prefer" },
  hold: holdInputs,
  persist: holdInputs,
  slack: { pid: "slack-pid", slack: "slack-value" },
};

// markField marks the section's input whose value the outcome refuses
// (aria-invalid, which the style outlines) and clears the others'.
function markField(section, field) {
  const inputs = fieldInputs[section] || {};
  for (const id of new Set(Object.values(inputs))) $(id).removeAttribute("aria-invalid");
  const id = inputs[field];
  if (id) $(id).setAttribute("aria-invalid", "true");
}

// show renders an outcome (an action's answer or a job's result) into the
// section's outcome box: the command's error, its warnings, its text and
// its chart, as the command prints them.
function show(section, out) {
  if (out.command) setText(section + "-cmd", out.command);
  markField(section, out.field);
  const box = $(section + "-out");
  box.replaceChildren();
  if (out.error) {
    const p = document.createElement("p");
    p.className = "err";
    p.textContent = "error: " + out.error;
    box.append(p);
  }
  for (const w of out.warnings || []) {
    const p = document.createElement("p");
    p.className = "w";
    p.textContent = w.startsWith("hint: ") ? w : "warning: " + w;
    box.append(p);
  }
  if (out.text) {
    const pre = document.createElement("pre");
    pre.className = "out";
    pre.textContent = out.text;
    box.append(pre);
    // A bench's recommendation is its last lines: show them first.
    pre.scrollTop = pre.scrollHeight;
  }
  if (out.chart) {
    // The server's own SVG, drawn by htmlreport with every string escaped.
    const div = document.createElement("div");
    div.className = "chart-box";
    div.innerHTML = out.chart;
    box.append(div);
  }
  if (out.elevate) {
    const b = $("elevate");
    b.textContent = "Run " + out.elevate + " elevated (Windows asks for consent)";
    b.dataset.on = out.elevate.endsWith(" on") ? "1" : "";
    b.hidden = false;
  }
}

async function post(action, body, section) {
  let out;
  try {
    const r = await fetch("api/" + action, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body || {}),
    });
    if (!r.ok) throw new Error(action + ": HTTP " + r.status + " " + (await r.text()).trim());
    out = await r.json();
  } catch (e) {
    out = { error: String(e.message || e), warnings: [] };
  }
  if (section) show(section, out);
  return out;
}

function number(id) {
  const v = $(id).value.trim();
  return v === "" ? NaN : Number(v);
}

// The hold form's value as apply's flag, as typed: the server parses it
// as apply's command line does (on Windows a period in ms, --ms).
function setting() {
  const flag = state && state.hold && state.hold.flag ? state.hold.flag : "ms";
  const req = { [flag]: $("hold-value").value.trim() };
  const programs = $("hold-while").value.trim();
  if (programs !== "") req.while = programs;
  return req;
}

// holdArgs is apply's setting as a user would type it again: a period in
// ms as --resolution in the 100 ns units the OS counts in (as apply --ms
// rounds it), anything else as typed.
function holdArgs(flag, value, quote) {
  const units = value === "" ? NaN : Math.round(Number(value) * 10000);
  if (flag === "ms" && Number.isFinite(units) && units > 0) return "--resolution " + units;
  return "--" + flag + " " + quote(value);
}

// holdName says a suggestion's value with its unit.
function holdName(h) {
  if (h.flag === "ms") return h.value + " ms";
  if (h.flag === "dma-latency") return "DMA latency " + h.value + " µs";
  return "--" + h.flag + " " + h.value;
}

// renderList shows warnings as a list, replaced only when they change.
function renderList(id, list) {
  const ul = $(id);
  const wanted = list.join("\n");
  if (ul.dataset.text !== wanted) {
    ul.dataset.text = wanted;
    ul.replaceChildren(...list.map((w) => Object.assign(document.createElement("li"), { textContent: w })));
  }
}

// commandLines shows each form's command line as it stands, before it is
// pressed (an action's answer then shows the line the server ran).
function commandLines() {
  if (!state) return;
  const quote = (v) => (v === "" || /[\s"]/.test(v) ? JSON.stringify(v) : v);
  const sim = state.sim_flags;
  const model = state.model_only ? " " + state.model_only : "";
  const method = $("measure-method").value;
  setText("measure-cmd", "tickscope measure" + (method ? " --method " + quote(method) : "") + " --samples " + quote($("measure-samples").value) + sim);
  const prefer = $("bench-prefer").value;
  setText("bench-cmd", "tickscope bench --samples " + quote($("bench-samples").value) + (prefer !== "latency" ? " --prefer " + quote(prefer) : "") + sim);
  if (state.hold && state.hold.flag) {
    const programs = $("hold-while").value.trim();
    const apply = "tickscope apply " + holdArgs(state.hold.flag, $("hold-value").value.trim(), quote) + (programs ? " --while " + quote(programs) : "");
    setText("hold-cmd", apply + model);
    setText("persist-cmd", apply + " --persist" + model);
  }
  setText("slack-cmd", "tickscope apply --pid " + ($("slack-pid").value.trim() === "" ? "PID" : quote($("slack-pid").value.trim())) + " --slack " + quote($("slack-value").value.trim()) + model);
  setText("global-cmd", "tickscope global on, or tickscope global off" + model);
}

function renderFacts(s) {
  const rows = [];
  if (s.windows) {
    rows.push(["request model", s.windows.request_model]);
    rows.push(["global key", "GlobalTimerResolutionRequests " + s.windows.global_key]);
    rows.push(["a request here reaches", s.windows.reach]);
  }
  if (s.linux) {
    rows.push(["cpu_dma_latency", s.linux.cpu_dma_latency]);
    rows.push(["clocksource", s.linux.clocksource]);
    rows.push(["HZ", String(s.linux.hz)]);
  }
  rows.push(["elevated", s.elevated ? "yes" : "no"]);
  const table = $("facts");
  const html = rows.map(() => "<tr><td></td><td></td></tr>").join("");
  if (table.rows.length !== rows.length) table.innerHTML = html;
  rows.forEach(([k, v], i) => {
    const cells = table.rows[i].cells;
    if (cells[0].textContent !== k) cells[0].textContent = k;
    if (cells[1].textContent !== v) cells[1].textContent = v;
  });
}

function renderJob(s) {
  const job = s.job;
  const running = job && job.running;
  $("measure-run").disabled = !!running;
  // The server refuses a bench while the page holds: say so before.
  $("bench-run").disabled = !!running || !!s.held;
  $("bench-run").title = s.held ? "Release first: a bench applies settings of its own" : "";
  $("stop").disabled = !running;
  for (const kind of ["measure", "bench"]) {
    const box = $(kind + "-progress");
    if (job && job.kind === kind && running) {
      box.hidden = false;
      const bar = box.querySelector("progress");
      bar.max = Math.max(job.total, 1);
      bar.value = Math.min(job.done, bar.max);
      box.querySelector("span").textContent =
        (job.stopping ? "stopping… " : "") + job.done + " of about " + job.total + " waits, " + job.seconds + " s";
      setText(kind + "-cmd", job.command);
    } else {
      box.hidden = true;
    }
  }
  if (job && !running && job.id !== shownJob) {
    shownJob = job.id;
    fetch("result?job=" + job.id)
      .then((r) => (r.ok ? r.json() : Promise.reject(new Error("HTTP " + r.status))))
      .then((out) => show(job.kind, out))
      .catch((e) => show(job.kind, { error: String(e.message || e), warnings: [] }));
  }
}

function render(s) {
  const first = state === null;
  state = s;
  const sim = $("sim");
  sim.hidden = !s.simulated;
  if (s.simulated) setText("sim", "SIMULATED: " + s.simulated);
  setText("updated", s.updated.replace("T", " ").replace("Z", " UTC"));
  $("windows").hidden = !s.windows;
  if (s.windows) {
    setText("current", s.windows.current_ms);
    setText("finest", s.windows.finest_ms);
    setText("coarsest", s.windows.coarsest_ms);
  }
  renderFacts(s);
  renderList("warnings", s.warnings);
  renderList("held-warnings", s.held ? s.held.warnings : []);
  $("error").hidden = !s.error;
  setText("error", s.error ? "error: " + s.error : "");
  setText("held-line", s.held ? s.held.setting + " since " + s.held.since.replace("T", " ").replace("Z", " UTC") + " (" + s.held.command + ")" + (s.held.while ? ": " + s.held.while : "") : "nothing");
  setText("who", s.who.shown ? "as tickscope who shows it (" + s.who.reason + ")" : s.who.reason);
  $("who-text").hidden = !s.who.shown;
  setText("who-text", s.who.text || "");
  setText("startup", s.startup.text);
  setText("query", s.query_text);
  $("release").disabled = !s.held;
  $("hold-run").disabled = !!s.held;
  $("persist").disabled = false;
  $("global").hidden = !s.windows;
  $("slack").hidden = !s.linux;
  setText("persist-title", s.windows ? "Start at logon" : "Start at boot");
  setText("persist", s.windows ? "Start at logon" : "Start at boot");
  if (s.hold && s.hold.flag) {
    const ms = s.hold.flag === "ms";
    setText("hold-flag", ms ? "timer period" : "--" + s.hold.flag);
    setText("hold-unit", ms ? "ms" : s.hold.flag === "dma-latency" ? "µs" : "");
    setText("hold-from", "suggested: " + holdName(s.hold) + " (" + s.hold.from + ")");
    const input = $("hold-value");
    // The arrows step by the OS's 100 ns; the form does not validate
    // (novalidate): the server refuses in apply's words.
    input.step = ms ? "0.0001" : "1";
    if (first || (input.dataset.suggested !== s.hold.value && document.activeElement !== input)) {
      input.value = s.hold.value;
      input.dataset.suggested = s.hold.value;
      if (!first) commandLines();
    }
  }
  if (first) {
    const select = $("measure-method");
    for (const m of s.methods || []) select.append(Object.assign(document.createElement("option"), { textContent: m }));
    commandLines();
  }
  // A bench's recommendation, offered to hold with one click where the
  // bench's result shows.
  const offer = !!(s.hold && s.hold.from_bench && !s.held);
  $("bench-pick").hidden = !offer;
  if (offer) setText("hold-pick", "Hold " + holdName(s.hold) + ", the recommendation");
  renderJob(s);
}

function connect() {
  const events = new EventSource("events");
  events.onopen = () => {
    setText("conn", "live");
    $("conn").classList.remove("down");
  };
  events.onmessage = (e) => render(JSON.parse(e.data));
  events.onerror = () => {
    setText("conn", "disconnected: is tickscope ui still running?");
    $("conn").classList.add("down");
  };
}

function wire() {
  $("measure-form").addEventListener("submit", (e) => {
    e.preventDefault();
    post("measure", { method: $("measure-method").value, samples: number("measure-samples") }, "measure");
  });
  $("bench-form").addEventListener("submit", (e) => {
    e.preventDefault();
    post("bench", { samples: number("bench-samples"), prefer: $("bench-prefer").value }, "bench");
  });
  $("stop").addEventListener("click", () => post("stop", {}, null));
  $("hold-form").addEventListener("submit", (e) => {
    e.preventDefault();
    post("hold", setting(), "hold");
  });
  $("release").addEventListener("click", () => post("release", {}, "hold"));
  $("hold-pick").addEventListener("click", async () => {
    const h = state.hold;
    $("hold-value").value = h.value;
    commandLines();
    await post("hold", { [h.flag]: h.value }, "hold");
    $("hold").scrollIntoView({ block: "nearest" });
  });
  $("persist").addEventListener("click", () => post("persist", setting(), "persist"));
  $("slack-form").addEventListener("submit", (e) => {
    e.preventDefault();
    post("hold", { pid: $("slack-pid").value.trim(), slack: $("slack-value").value.trim() }, "slack");
  });
  $("remove").addEventListener("click", () => post("remove", {}, "persist"));
  $("global-on").addEventListener("click", () => { $("elevate").hidden = true; post("global", { on: true }, "global"); });
  $("global-off").addEventListener("click", () => { $("elevate").hidden = true; post("global", { on: false }, "global"); });
  $("elevate").addEventListener("click", () => {
    $("elevate").hidden = true;
    post("elevate", { on: $("elevate").dataset.on === "1" }, "global");
  });
  for (const form of ["measure-form", "bench-form", "hold-form", "slack-form"]) {
    $(form).addEventListener("input", commandLines);
    $(form).addEventListener("change", commandLines);
  }
  connect();
}

wire();
