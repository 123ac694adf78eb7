// Drawing messages: text, tool calls, charts, figure cards, approvals. The same code draws
// a live turn (chunk by chunk) and a chat read back after a reload (part by part).

import { answerProse, el, exportMenu, exportUrl, formatDate, formatNumber, prose, visibleCode } from "./util.js";
import { asksLocation, readLocation } from "./location.js";
import { approvalAbout } from "./mapcode.js";

const CHART_TYPES = new Set(["bar", "line", "pie", "doughnut", "scatter", "radar", "polarArea", "bubble"]);
/** What each default tool did, in words: [while it runs, once it has run]. A tool not
 * listed reads as its name with spaces (`toolName`); the name itself is the row's title. */
const TOOL_NAMES = {
  locate_place: ["Locating a place", "Located a place"],
  discover_places: ["Searching places", "Searched places"],
  get_boundaries: ["Fetching boundaries", "Fetched boundaries"],
  set_route: ["Planning a route", "Planned a route"],
  find_reachable_areas: ["Finding reachable areas", "Found reachable areas"],
  get_traffic_incidents: ["Fetching traffic incidents", "Fetched traffic incidents"],
  get_traffic_area_analytics: ["Fetching traffic statistics", "Fetched traffic statistics"],
  analyse_data: ["Analysing data", "Analysed data"],
  process_data: ["Processing data", "Processed data"],
  monitor_analysis: ["Switching a monitor", "Switched a monitor"],
  create_tracker: ["Creating a tracker", "Created a tracker"],
  cluster_incidents: ["Clustering incidents", "Clustered incidents"],
  add_byod_layer: ["Loading your layer", "Loaded your layer"],
  update_byod_display: ["Updating your layers", "Updated your layers"],
  recall_places: ["Recalling places", "Recalled places"],
  recall_routes: ["Recalling routes", "Recalled routes"],
  recall_ranges: ["Recalling reachable areas", "Recalled reachable areas"],
  recall_geometries: ["Recalling shapes", "Recalled shapes"],
  recall_byod: ["Recalling your layers", "Recalled your layers"],
  recall_state: ["Recalling the chat", "Recalled the chat"],
  update_places_display: ["Updating places on the map", "Updated places on the map"],
  update_geometries_display: ["Updating shapes on the map", "Updated shapes on the map"],
  update_rasters_display: ["Updating rasters on the map", "Updated rasters on the map"],
  fly_to: ["Moving the map", "Moved the map"],
  fit_bounds: ["Fitting the map", "Fitted the map"],
  set_map_style: ["Switching the basemap", "Switched the basemap"],
  set_language: ["Switching the label language", "Switched the label language"],
  get_current_location: ["Asking for your location", "Found your location"],
  find_sources: ["Finding sources", "Found sources"],
  resolve_place: ["Resolving a place", "Resolved a place"],
  fetch: ["Reading a source", "Read a source"],
  present_figure: ["Presenting figures", "Presented figures"],
  record_observation: ["Recording a conflict", "Recorded a conflict"],
  help: ["Listing what I can do", "Listed what I can do"],
  use_tools: ["Activating tools", "Activated tools"],
};

/** A tool's name as a person reads it: from TOOL_NAMES, else `get_bus_stops` → "Get bus stops". */
export function toolName(name, { done = true } = {}) {
  const known = TOOL_NAMES[name];
  if (known) return known[done ? 1 : 0];
  const words = String(name).replace(/[_\-.]+/g, " ").replace(/([a-z])([A-Z])/g, "$1 $2").trim().toLowerCase();
  return words ? words[0].toUpperCase() + words.slice(1) : String(name);
}

export function userMessage(text) {
  return el("li", { class: "msg", dataset: { role: "user" } }, el("div", { class: "text", text }));
}

export function uploadMessage(upload) {
  // A GeoTIFF becomes a rasters entry: a grid of cells, not features.
  const added = /^rasters-\d+$/.test(upload.entry_id || "") ? "a raster" : `${formatNumber(upload.features)} features`;
  const what = `${upload.name}: ${added} added as ${upload.entry_id}` + (upload.format ? ` (${upload.format})` : "");
  const node = el("li", { class: "msg upload", dataset: { role: "user", entryId: upload.entry_id } }, what);
  for (const warning of upload.warnings || []) node.append(el("div", { class: "progress", text: warning }));
  return node;
}

export function uploadError(name, message) {
  return el("li", { class: "msg upload error", role: "alert", dataset: { role: "user" } },
    `${name} was not added: ${message}`);
}

/** One assistant message, drawn as its parts arrive. */
export class AssistantView {
  constructor({ onAnalysis, onApprove, figureOf = () => null, chatId = null }) {
    this.node = el("li", { class: "msg", dataset: { role: "assistant" } });
    this.chatId = chatId;
    this.onAnalysis = onAnalysis;
    this.onApprove = onApprove;
    this.figureOf = figureOf;
    this.tools = new Map();
    this.approvals = new Map();
    this.textNode = null;
    this.lastTextNode = null;
    this.text = "";
    this.progressNode = null;
    this.finished = false;
  }

  appendText(delta) {
    if (!this.textNode) {
      this.text = "";
      this.textNode = el("div", { class: "text" });
      this.node.append(this.textNode);
    }
    this.text += delta;
    this.textNode.replaceChildren(prose(this.#streaming(this.text)));
  }

  /** Text as it streams: a figure cited by id reads as its value once the id is whole and
   * the figure known; a reference still arriving is held back, never shown half. */
  #streaming(text) {
    return text
      .replace(/\{v\d*$/, "")
      .replace(/\{(v\d{1,9})\}/g, (whole, id) => {
        const figure = this.figureOf(id);
        return figure ? `${formatNumber(figure.value)}${figure.unit ? ` ${figure.unit}` : ""}` : whole;
      });
  }

  endText() {
    if (this.textNode) this.lastTextNode = this.textNode;
    this.textNode = null;
  }

  /**
   * A kept block of the answer (a text part): drawn from its segments, each cited figure
   * as its value and unit (a chip that opens the figure's card), each typed number that
   * matched a minted value linked to it, and each number that matched none marked. Live,
   * it redraws the block its text deltas drew; read back, it draws a new one.
   */
  textBlock(part, { live = false } = {}) {
    const node = live && this.lastTextNode ? this.lastTextNode : el("div", { class: "text" });
    if (!node.isConnected) this.node.append(node);
    this.lastTextNode = null;
    if (!part.segments || !part.segments.length) {
      if (!live) node.replaceChildren(prose(part.text));
      return;
    }
    node.replaceChildren(answerProse(part.segments, (ref) => this.#citation(ref, node)));
    node.dataset.cited = String(part.cited || 0);
    node.dataset.unminted = String(part.unminted || 0);
  }

  #citation(segment, block) {
    const figure = segment.ref ? this.figureOf(segment.ref) : null;
    if (segment.state === "unminted") {
      return el("span", { class: "number unminted", title: "a number the model typed: it matches no minted figure", text: segment.shown });
    }
    if (segment.state === "unknown" || segment.state === "withdrawn") {
      return el("span", { class: "cite missing", dataset: { ref: segment.ref }, text: segment.shown });
    }
    const label = figure ? `${figure.label}: ${formatNumber(figure.value)}${figure.unit ? ` ${figure.unit}` : ""}` : segment.ref;
    const kind = segment.state === "cited" ? "cite" : "number matched";
    return el("button", {
      type: "button", class: kind, dataset: { ref: segment.ref }, title: label, text: segment.shown,
      onclick: () => {
        const open = block.parentNode?.querySelector(`.figure-card.cited[data-value-id="${segment.ref}"]`);
        if (open) return open.remove();
        if (figure) block.after(Object.assign(this.#card(figure), { className: "figure-card cited" }));
      },
    });
  }

  toolStart(id, name) {
    const label = el("span", { class: "tool-name", text: `${toolName(name, { done: false })}…` });
    const node = el("div", { class: "tool", dataset: { tool: name, state: "running" }, title: name }, label);
    this.tools.set(id, { node, label, name });
    this.node.append(node);
  }

  toolEnd(id, { ok = true, error = null } = {}) {
    const tool = this.tools.get(id);
    if (!tool) return;
    tool.node.dataset.state = ok ? "done" : "error";
    tool.label.textContent = toolName(tool.name);
    if (error) tool.node.append(el("span", { class: "tool-error", text: `: ${error}` }));
  }

  progress(data) {
    if (data.state === "done") {
      this.progressNode?.remove();
      this.progressNode = null;
      return;
    }
    if (!this.progressNode) {
      this.progressNode = el("div", { class: "progress", role: "status" });
      this.node.append(this.progressNode);
    }
    this.progressNode.textContent = data.message || `running ${data.tool || "code"}…`;
  }

  chart(data) {
    const config = data && data.config;
    if (!config || !CHART_TYPES.has(config.type) || !config.data || !Array.isArray(config.data.datasets)) {
      this.error("a chart came back in a shape that cannot be drawn");
      return;
    }
    const canvas = el("canvas", { role: "img", "aria-label": `chart: ${data.name || config.type}` });
    this.node.append(el("div", { class: "chart" }, canvas));
    if (this.chatId && data.analysis_id) {
      const name = data.name || config.type;
      this.node.append(el("div", { class: "chart-export", dataset: { analysisId: data.analysis_id } },
        exportMenu(`Export the chart ${name}`, [
          { text: "Data (CSV)", format: "csv", href: exportUrl(this.chatId, `analyses/${encodeURIComponent(data.analysis_id)}/chart.csv`) },
          { text: "Image (PNG)", format: "png", onclick: () => savePng(canvas, name) },
        ])));
    }
    const options = structuredClone(config.options || {});
    // The page decides how the chart is drawn: no animation, its box's size, the
    // screen's own pixel ratio (a config asking for 30x would allocate hundreds of MB).
    Object.assign(options, {
      animation: false, responsive: true, maintainAspectRatio: false,
      devicePixelRatio: window.devicePixelRatio || 1,
    });
    const labels = Array.isArray(config.data.labels) ? config.data.labels.length : 0;
    if (["bar", "line"].includes(config.type) && labels && labels <= 30) {
      // Every category named: Chart.js would skip every other label to save room.
      const axis = options.indexAxis === "y" ? "y" : "x";
      options.scales = options.scales || {};
      const scale = options.scales[axis] || {};
      options.scales[axis] = { ...scale, ticks: { autoSkip: false, ...(scale.ticks || {}) } };
    }
    const draw = () => {
      // The shipped Noto Sans, so a chart reads the same with no system fonts installed.
      window.Chart.defaults.font.family = '"Noto Sans", system-ui, sans-serif';
      try {
        new window.Chart(canvas, { type: config.type, data: structuredClone(config.data), options });
        canvas.dataset.rendered = "true";
      } catch (error) {
        // A config Chart.js cannot draw costs the chart, never the rest of the answer.
        canvas.parentElement.remove();
        this.error(`the chart "${data.name || config.type}" could not be drawn (${error.message})`);
      }
    };
    drawWhenNear(canvas, () => {
      if (window.Chart) draw();
      else window.addEventListener("load", draw, { once: true });
    });
  }

  figure(data) {
    const cards = (data.figures || []).map((figure) => this.#card(figure));
    this.node.append(
      el("section", { class: "figure", "aria-label": data.title || "figures" },
        data.title ? el("h3", { text: data.title }) : null,
        el("div", { class: "figure-cards" }, cards)));
  }

  #card(figure) {
    const unit = figure.unit ? ` ${figure.unit}` : "";
    const sources = el("ul", { class: "sources", hidden: true },
      (figure.sources || []).map((s) => el("li", {},
        el("strong", { text: s.publisher }), ` · ${s.title} · licence ${s.licence}${s.period ? ` · period ${s.period}` : ""} · retrieved ${formatDate(s.retrieved_at)}`,
        s.url && /^https?:\/\//.test(s.url) ? el("a", { href: s.url, rel: "noopener noreferrer", target: "_blank", text: " link" }) : null)));
    const toggle = el("button", {
      type: "button", class: "sources-toggle", "aria-expanded": "false",
      text: `Sources (${(figure.sources || []).length})`,
      onclick: () => {
        sources.hidden = !sources.hidden;
        toggle.setAttribute("aria-expanded", String(!sources.hidden));
      },
    });
    const code = figure.minted_by
      ? el("button", { type: "button", class: "show-code", text: "Code and inputs", onclick: () => this.onAnalysis(figure.minted_by) })
      : null;
    const exported = this.chatId
      ? exportMenu(`Export the figure ${figure.label}`, [
        { text: "Figure and sources (JSON)", format: "json", href: exportUrl(this.chatId, `figures/${encodeURIComponent(figure.id)}/export`) },
      ])
      : null;
    return el("article", { class: "figure-card", dataset: { valueId: figure.id } },
      el("div", { class: "figure-value", text: `${formatNumber(figure.value)}${unit}` }),
      el("div", { class: "figure-label", text: figure.label }),
      figure.period ? el("div", { class: "figure-period", text: `period: ${figure.period}` }) : null,
      toggle, code, exported, sources);
  }

  approval(data, { live = true } = {}) {
    const preview = data.preview || {};
    const answer = el("div", { class: "answer", role: "status" });
    const buttons = el("div", { class: "buttons" });
    const node = el("div", { class: "approval", dataset: { approvalId: data.approval_id, state: data.state || "pending" } },
      el("strong", { text: `${data.tool} asks to run` }),
      preview.effects ? el("ul", { class: "effects" }, ...preview.effects.map((e) => el("li", { text: `${e.means} (${e.effect})` }))) : null,
      preview.about && preview.about.label ? el("div", { class: "progress", text: `${preview.about.rerun ? "a monitor's re-run " : ""}would add ${JSON.stringify(preview.about.label)} (${preview.about.features} features)` }) : null,
      approvalAbout(preview),
      preview.reads ? el("div", { class: "progress", text: `reads ${preview.reads.map((r) => `${r.entry_id} (${r.label})`).join(", ")}` }) : null,
      preview.adds ? el("div", { class: "progress", text: `adds ${preview.adds}` }) : null,
      preview.code ? el("pre", { class: "code", text: visibleCode(preview.code) }) : el("pre", { class: "args", text: visibleCode(JSON.stringify(data.args, null, 1)) }),
      buttons, answer);
    this.approvals.set(data.approval_id, { node, answer, buttons });
    const location = asksLocation(preview);
    if (live && (data.state || "pending") === "pending") {
      const send = async (approved) => {
        buttons.querySelectorAll("button").forEach((b) => (b.disabled = true));
        // A request for the device's location is answered with it (or the browser's no).
        const extra = location && approved ? await readLocation() : {};
        this.onApprove(data.approval_id, extra.approved ?? approved, extra).catch((error) => {
          answer.textContent = `The answer could not be sent: ${error.message}`;
          // Only while the run still waits: once it has stopped there is nothing to answer.
          if (!this.finished) buttons.querySelectorAll("button").forEach((b) => (b.disabled = false));
        });
      };
      buttons.append(
        el("button", { type: "button", class: "approve", text: location ? "Share my location" : "Approve", onclick: () => send(true) }),
        el("button", { type: "button", class: "refuse", text: location ? "Don't share" : "Refuse", onclick: () => send(false) }));
    } else this.approvalAnswered({ approval_id: data.approval_id, approved: data.state === "given", reason: data.reason, state: data.state });
    this.node.append(node);
  }

  approvalAnswered(data) {
    const found = this.approvals.get(data.approval_id);
    if (!found) return;
    const state = data.state === "pending" ? "pending" : data.approved ? "given" : "refused";
    found.node.dataset.state = state;
    found.buttons.replaceChildren();
    found.answer.textContent = state === "given" ? "Approved" : state === "refused" ? `Refused${data.reason ? `: ${data.reason}` : ""}` : "Not answered";
  }

  /** Two minted values that disagree, with the ratio code computed and the reason given. */
  observation(data) {
    const c = data.conflict || {};
    const side = (v) => `${v.id} (${formatNumber(v.value)}${v.unit ? ` ${v.unit}` : ""}, ${v.label})`;
    const ratio = Number.isFinite(c.ratio) ? ` · ratio ${formatNumber(c.ratio)}` : "";
    this.node.append(el("div", { class: "observation", role: "note" },
      el("strong", { text: "Conflict: " }),
      c.a && c.b ? `${side(c.a)} vs ${side(c.b)}${ratio}` : "two figures disagree",
      c.reason ? el("div", { class: "progress", text: c.reason }) : null));
  }

  /** A monitor or tracker ran again after an entry it reads changed (or could not). */
  monitorRan(data) {
    const what = `${data.tracker ? "tracker" : "monitor"} ${data.name || ""}`.trim();
    const on = data.trigger ? ` after ${data.trigger.entry_id} v${data.trigger.version}` : "";
    const how = data.ok ? "ran again" : `could not run again: ${data.error || "it failed"}`;
    this.node.append(el("div", { class: data.ok ? "progress" : "error-note", dataset: { monitor: data.name || "" },
      text: `${what} ${how}${on}` }));
  }

  /**
   * A live catalogue search (a discovery part): one row, under the find_sources call it
   * belongs to, that expands into its steps: each catalogue searched, then what the
   * shortlist kept and why. Live and read back alike.
   */
  discovery(data) {
    const steps = el("ol", { class: "discovery-steps" });
    for (const search of data.searches || []) {
      const said = search.ok
        ? `Searched ${search.title || search.catalogue}: ${search.matched != null ? `${formatNumber(search.matched)} match, ` : ""}read ${formatNumber(search.read)}`
        : `Searched ${search.title || search.catalogue}: failed (${search.code || "error"}) ${search.error || ""}`;
      steps.append(el("li", { class: search.ok ? "step" : "step error-note", dataset: { catalogue: search.catalogue }, text: said }));
    }
    const read = (data.searches || []).reduce((sum, s) => sum + (s.read || 0), 0);
    const tokens = (data.usage?.input_tokens || 0) + (data.usage?.output_tokens || 0);
    const how = data.ranked_by === "model"
      ? `Shortlisted ${data.shortlist.length} of ${formatNumber(read)} results${tokens ? ` (${formatNumber(tokens)} tokens)` : ""}`
      : `Not shortlisted (${data.problem || "no model"}): the catalogues' first results`;
    const kept = el("ul", { class: "discovery-shortlist" }, (data.shortlist || []).map((item) => el("li", { dataset: { id: item.id } },
      item.url && /^https?:\/\//.test(item.url)
        ? el("a", { href: item.url, rel: "noopener noreferrer", target: "_blank", text: item.title })
        : el("strong", { text: item.title }),
      ` · ${item.catalogue}${item.licence ? ` · licence ${item.licence}` : ""}`,
      item.why ? el("div", { class: "progress", text: item.why }) : null)));
    steps.append(el("li", { class: "step" }, how, kept));
    if (data.dropped && data.dropped.length) {
      steps.append(el("li", { class: "step error-note", text: `Dropped, in no search: ${data.dropped.join(", ")}` }));
    }
    const node = el("details", { class: "discovery", dataset: { callId: data.call_id || "" } },
      el("summary", { text: data.summary }), steps);
    const tool = data.call_id ? this.tools.get(data.call_id) : null;
    if (tool) tool.node.after(node);
    else this.node.append(node);
  }

  miss(data) {
    this.node.append(el("div", { class: "progress", text: `no result: ${data.reason || data.code || "nothing found"}` }));
  }

  error(text) {
    this.node.append(el("div", { class: "error-note", role: "alert", text }));
  }

  stopped() {
    this.node.dataset.stopped = "true";
  }

  /** The run this message belongs to has stopped (ended, stopped or failed): its running
   * tools failed, and an approval still open can no longer be answered. */
  finish() {
    this.finished = true;
    this.progressNode?.remove();
    for (const { node, answer, buttons } of this.approvals.values()) {
      if (node.dataset.state !== "pending") continue;
      node.dataset.state = "closed";
      buttons.querySelectorAll("button").forEach((b) => (b.disabled = true));
      answer.textContent = "Not answered: the run stopped before an answer, which counts as a refusal.";
    }
    for (const tool of this.tools.values()) if (tool.node.dataset.state === "running") tool.node.dataset.state = "error";
  }
}

/** A drawn chart as a PNG file, made in the page from its canvas (on a white ground). */
function savePng(canvas, name) {
  if (!canvas.dataset.rendered) return;
  const copy = document.createElement("canvas");
  copy.width = canvas.width;
  copy.height = canvas.height;
  const context = copy.getContext("2d");
  context.fillStyle = "#ffffff";
  context.fillRect(0, 0, copy.width, copy.height);
  context.drawImage(canvas, 0, 0);
  copy.toBlob((blob) => {
    if (!blob) return;
    const url = URL.createObjectURL(blob);
    const link = el("a", { href: url, download: `${pngName(name)}.png` });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  }, "image/png");
}

/** A file name for a chart: no path, control or format characters. */
function pngName(name) {
  const clean = String(name).replace(/[\p{Cc}\p{Cf}/\\:*?"<>|]/gu, "_").replace(/\s+/g, " ").trim().slice(0, 80);
  return clean.replace(/^[ ._]+|[ ._]+$/g, "") || "chart";
}

/**
 * Call `draw` once `node` is within a screen of the chat's view: a chat read back with
 * many charts draws only those a person can scroll to soon (each chart is a canvas
 * drawn on the page's main thread).
 */
function drawWhenNear(node, draw) {
  if (!("IntersectionObserver" in window)) return draw();
  const observer = new IntersectionObserver((seen) => {
    if (!seen.some((s) => s.isIntersecting)) return;
    observer.disconnect();
    draw();
  }, { rootMargin: "100% 0px" });
  observer.observe(node);
}
