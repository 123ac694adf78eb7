// The page: a chat beside a live map. The chat's id lives in the URL (/chat/<id>); the
// server holds the thread, so a reload reads it back. window.geomint exposes the map and
// the chat for the end-to-end tests and for anyone poking at the page.

import { LiveMap, bboxOf } from "./map.js";
import { MapSettings } from "./basemaps.js";
import { AssistantView, uploadMessage, userMessage } from "./render.js";
import { streamTurn } from "./stream.js";
import { api, el, exportUrl, newChatId, visibleCode } from "./util.js";
import { LayersPanel } from "./layers.js";
import { Connection } from "./connection.js";
import { ChatList } from "./sidebar.js";
import { AttributeTable } from "./table.js";
import { Examples } from "./examples.js";
import { UploadQueue, dropTarget } from "./uploads.js";
import { MapCode } from "./mapcode.js";

const $ = (selector) => document.querySelector(selector);
const messages = $("#messages");
const prompt = $("#prompt");
const examples = new Examples($("#examples"), (text) => { prompt.value = text; ask(); });

const state = { chatId: null, health: null, controller: null, current: null, opening: 0 };
/** The figures the open chat minted, by id: what a cited figure's chip opens. */
const figures = new Map();
const liveMap = new LiveMap("map");
const table = new AttributeTable(liveMap);
const mapSettings = new MapSettings(liveMap);
liveMap.map.addControl(mapSettings.control(), "top-left");
mapSettings.onChange = (change) => api(`/api/chats/${state.chatId}/map`, {
  method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(change),
});
// Map code's changes to the map (map_change parts), applied, undone and replayed.
const mapCode = new MapCode(liveMap, {
  chatId: () => state.chatId,
  notice: (text) => showNote(text),
  undo: (changeId) => api(`/api/chats/${state.chatId}/map-changes/${encodeURIComponent(changeId)}/undo`, { method: "POST" }),
});
const connection = new Connection($("#banner-connection"), () => loadChats());
let markReady;
window.geomint = {
  map: liveMap.map,
  get chatId() { return state.chatId; },
  entryFeatures: (entryId) => liveMap.entryFeatures(entryId),
  setDisplay: (entryId, visible) => liveMap.setDisplay(entryId, visible),
  shown: (entryId) => liveMap.shown(entryId),
  settings: mapSettings,
  mapCode,
  ready: new Promise((resolve) => (markReady = resolve)),
};

function chatIdFromPath() {
  const match = location.pathname.match(/^\/chat\/([A-Za-z0-9_-]{1,64})$/);
  return match ? match[1] : null;
}

function setBusy(busy) {
  document.body.dataset.busy = String(busy);
  $("#stop").hidden = !busy;
  $("#send").disabled = busy;
  if (!busy) uploads.resume();
}

function scrollDown() {
  messages.scrollTop = messages.scrollHeight;
}

// -- health and banners ------------------------------------------------------------------

async function loadHealth() {
  const health = await api("/api/health");
  state.health = health;
  $("#banner-demo").hidden = !health.model?.demo;
  const sandbox = $("#banner-sandbox");
  if (health.sandbox !== "isolated") {
    sandbox.hidden = false;
    sandbox.textContent = health.sandbox === "restricted"
      ? "Sandbox is restricted, not isolated: model-written code runs with less separation from this machine."
      : `Sandbox is ${health.sandbox}: model-written code is not isolated.`;
  }
  $("#add-data-input").accept = health.upload_suffixes.join(",");
  return health;
}

async function loadExamples() {
  examples.set((await api("/api/examples")).examples);
}

// -- the sidebar -------------------------------------------------------------------------

const chatList = new ChatList($("#chats"), {
  current: () => state.chatId,
  open: (chatId) => openChat(chatId, { push: true }),
  // The open chat was deleted: start a new one in its place.
  deleted: (chatId) => { if (chatId === state.chatId) openChat(newChatId(), { push: true }); },
  unreachable: () => connection.lost(),
});

async function loadChats() {
  await chatList.load();
}

// -- the layers panel --------------------------------------------------------------------

const layersPanel = new LayersPanel($("#layer-list"), $("#layer-count"), {
  liveMap,
  chatId: () => state.chatId,
  failed: (text) => showNote(text),
  // A raster has cells, not rows of features: no table.
  extraTools: (layer) => layer.raster ? [] : [el("button", {
    type: "button", class: "layer-tool layer-table", dataset: { control: "table" }, text: "Table", "aria-label": `Table of ${layer.label}`,
    onclick: (event) => table.open(layer.entry_id, layer.label, event.currentTarget),
  })],
});

// -- opening a chat ----------------------------------------------------------------------

// The largest entry drawn again on reload (a bigger one is listed, not fetched). A raster
// is drawn from a picture of at most 2048 pixels a side, whatever its size.
const MAX_RESTORED_BYTES = 20_000_000;

async function openChat(chatId, { push = false } = {}) {
  if (state.controller) state.controller.abort();
  const ticket = ++state.opening; // a later openChat wins, whichever answer comes first
  state.chatId = chatId;
  figures.clear();
  layersPanel.clear();
  table.close();
  $("#export-chat").href = exportUrl(chatId, "export");
  $("#export-notebook").href = exportUrl(chatId, "export.zip?format=notebook");
  if (push) history.pushState({}, "", `/chat/${chatId}`);
  messages.replaceChildren();
  mapCode.clear(); // first: its layers may draw the entries' sources
  liveMap.clear();
  // The chat list is read meanwhile: awaited last, its answer waited for the map's first
  // frame (0.6 s for a chat of 50 turns).
  const listed = loadChats();
  listed.catch(() => {}); // thrown again where it is awaited; a later chat's open drops it
  // A chat not stored yet reads as a new one (with the demo data, for the demo model):
  // the server stores it with its first message or file.
  const { parts } = await api(`/api/chats/${chatId}/parts`);
  if (ticket !== state.opening) return;
  // The chat is drawn from the parts its runs streamed, with the code that drew them live.
  const thread = new Thread({ live: false });
  for (const part of parts) {
    try {
      thread.apply(part);
    } catch (error) {
      thread.view?.error(`part of this answer could not be shown (${error.message})`);
    }
  }
  const restored = [];
  for (const entry of thread.entries.values()) {
    if (!entry.raster && entry.bytes > MAX_RESTORED_BYTES) {
      messages.append(el("li", { class: "progress", role: "note",
        text: `${entry.entry_id} (${entry.label}) is too large to draw again after a reload; the model can still read it.` }));
      continue;
    }
    restored.push(entry);
  }
  // Every entry's GeoJSON is fetched at once, then the entries are added in order with no
  // wait between them: fetching each in turn let the map draw a frame per entry, and a
  // chat of 50 turns took 17 s to open (2 cores, WebGL in software).
  const fetched = await Promise.all(restored.map(async (entry) =>
    entry.geojson || !entry.geojson_url ? entry : { ...entry, geojson: await liveMap.fetchGeojson(entry.geojson_url) }));
  if (ticket !== state.opening) return;
  // The camera goes where the chat leaves it before the basemap has loaded, so that its
  // tiles are asked for once, for that view.
  if (thread.lastView) liveMap.view(thread.lastView, { animate: false });
  else liveMap.fitParts(fetched);
  await liveMap.loaded; // on the first open, the map's style may still be loading
  if (ticket !== state.opening) return;
  for (const entry of fetched) await liveMap.setEntry(entry);
  await mapSettings.show({ style: thread.basemap, language: thread.language });
  if (ticket !== state.opening) return;
  mapCode.redraw({ camera: true }); // the changes still applied, over the entries, in order
  examples.unfold(!parts.some((p) => p.type === "question" || p.type === "upload"));
  scrollDown();
  await listed;
}

/**
 * Draws parts (geomint.ui.parts) in order: a live turn as its parts stream in, and a chat
 * read back, part by part. A question starts a message of the person's; anything after it
 * in the run draws in the answer. Read back, the map is drawn once at the end, from the
 * latest version of each entry and its display state.
 */
class Thread {
  constructor({ live, view = null }) {
    this.live = live;
    this.view = view;
    this.runId = null;
    this.entries = new Map();
    this.lastView = null;
    this.basemap = null;
    this.language = null;
  }

  answer(part) {
    if (!this.view || (part.run_id && part.run_id !== this.runId)) {
      this.view = newAssistant();
      messages.append(this.view.node);
    }
    this.runId = part.run_id || this.runId;
    return this.view;
  }

  apply(part) {
    switch (part.type) {
      case "question":
        // Live, the page drew the question and the answer's message when it was sent.
        if (!this.live) {
          messages.append(userMessage(part.text));
          this.view = null;
        }
        this.runId = part.run_id;
        return;
      case "upload":
        if (!this.live) messages.append(uploadMessage(part));
        this.view = null;
        return;
      case "entry": return this.#entry(part);
      case "display": return this.#display(part);
      // Live, a camera move waits for nobody: unless the person moved the map since asking.
      case "view": return this.live ? (liveMap.movedByPerson ? null : liveMap.view(part)) : (this.lastView = part);
      case "basemap": return this.live ? mapSettings.setStyle(part.style) : (this.basemap = part.style);
      case "language": return this.live ? mapSettings.setLanguage(part.language) : (this.language = part.language);
      case "progress": return this.view?.progress(part);
      case "run_started":
        if (this.live && this.view) this.runId = part.run_id;
        return;
      case "analysis":
        for (const figure of part.figures || []) figures.set(figure.id, figure);
        return;
      case "map_undone":
        if (!this.live) return mapCode.undo(part.change_id, { draw: false });
        return this.#drawn(() => mapCode.undo(part.change_id));
      case "classified": case "monitor": return;
      default: break;
    }
    const view = this.answer(part);
    switch (part.type) {
      case "text": view.textBlock(part, { live: this.live }); break;
      case "tool_call": view.toolStart(part.call_id, part.tool); break;
      case "tool_result": view.toolEnd(part.call_id, { ok: part.ok, error: part.ok ? null : part.error }); break;
      case "chart": view.chart(part); break;
      case "figure":
        for (const figure of part.figures || []) figures.set(figure.id, figure);
        view.figure(part);
        break;
      case "observation": view.observation(part); break;
      case "approval":
        view.approval(part, { live: this.live });
        // A map change waiting for its approval is drawn as a preview meanwhile.
        if (this.live && part.preview?.about?.stage === "effect") mapCode.preview(part.preview.about.diff);
        break;
      case "approval_answered":
        view.approvalAnswered(part);
        mapCode.clearPreview();
        break;
      case "map_change":
        if (this.live) this.#drawn(() => mapCode.add(part));
        else mapCode.add(part, { draw: false });
        view.node.append(mapCode.card(part));
        break;
      case "miss": view.miss(part); break;
      case "discovery": view.discovery(part); break;
      case "monitor_ran": view.monitorRan(part); break;
      case "run_ended":
        mapCode.clearPreview();
        if (part.error) view.error(part.error);
        if (part.stopped) view.stopped();
        break;
      default: break;
    }
  }

  async #entry(part) {
    layersPanel.note(part);
    if (this.live) {
      this.entryDrawn = liveMap.setEntry(part);
      await this.entryDrawn;
      liveMap.arrived(part.entry_id);
      return;
    }
    // Read back, each entry is drawn once, with the newest of its style and display state.
    const shown = this.entries.get(part.entry_id);
    this.entries.set(part.entry_id, { ...part, visible: shown?.visible ?? true, style: part.style ?? shown?.style ?? null });
  }

  /** Change the map once the entries that came before have been drawn (a change may draw
   * an entry that arrived in the same run), in the order the parts came. */
  #drawn(change) {
    this.mapChanges = Promise.all([this.mapChanges, this.entryDrawn]).then(change).catch((error) =>
      this.view?.error(`a map change could not be drawn (${error.message})`));
  }

  #display(part) {
    layersPanel.setRemoved(part.entry_id, part.removed);
    if (this.live) return liveMap.setDisplay(part.entry_id, part.visible, part.style ?? null);
    const entry = this.entries.get(part.entry_id);
    if (!entry) return;
    if (part.visible !== null && part.visible !== undefined) entry.visible = part.visible;
    if (part.style) entry.style = part.style;
  }
}

function newAssistant() {
  return new AssistantView({
    chatId: state.chatId,
    figureOf: (id) => figures.get(id) || null,
    onAnalysis: (analysisId) => showAnalysis(analysisId),
    onApprove: (approvalId, approved, extra = {}) =>
      api(`/api/chats/${state.chatId}/approvals/${encodeURIComponent(approvalId)}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ...extra, approved }),
      }).catch((error) => {
        if (error.name === "Unreachable") connection.lost();
        throw error;
      }),
  });
}

// -- a turn ------------------------------------------------------------------------------

async function ask() {
  const text = prompt.value.trim();
  if (!text || document.body.dataset.busy === "true") return;
  const typed = prompt.value;
  prompt.value = "";
  showNote(null);
  examples.unfold(false);
  liveMap.follow();
  const question = userMessage(text);
  messages.append(question);
  const view = newAssistant();
  messages.append(view.node);
  const thread = new Thread({ live: true, view });
  scrollDown();
  const controller = new AbortController();
  state.controller = controller;
  state.current = view;
  setBusy(true);
  const chatId = state.chatId;
  try {
    // A file being sent holds the chat: the question goes once it is in (the files
    // queued after it wait for the answer, as the page is busy).
    await uploads.settled();
    await streamTurn(chatId, text, (chunk) => {
      if (state.chatId !== chatId) return;
      try {
        onChunk(thread, chunk);
      } catch (error) {
        // One part the page cannot show must not stop it reading the rest of the answer.
        view.error(`part of this answer could not be shown (${error.message})`);
      }
      scrollDown();
    }, controller.signal);
  } catch (error) {
    if (error.name === "AbortError") view.stopped();
    else if (error.midway) {
      view.error("The connection to the server was lost during this answer; what had arrived is kept above.");
      connection.lost();
    } else {
      // Not sent: the message goes back in the box, and the note says why.
      question.remove();
      view.node.remove();
      if (!prompt.value) prompt.value = typed;
      showNote(notSent(error, text));
      if (error.name === "Unreachable") connection.lost();
    }
  } finally {
    view.finish();
    mapCode.clearPreview();
    if (state.controller === controller) {
      state.controller = null;
      setBusy(false);
    }
    loadChats().catch(() => {});
  }
}

/** Why a message was not sent, for the person: the server's words, with the message's
 * own size when it was too long. */
function notSent(error, text) {
  if (error.status === 413 && error.body?.limit_bytes) {
    const bytes = new TextEncoder().encode(text).length;
    const size = bytes === text.length
      ? `${text.length.toLocaleString("en")} characters`
      : `${text.length.toLocaleString("en")} characters (${bytes.toLocaleString("en")} bytes)`;
    return `Not sent: this message is ${size}. ${error.message} Your text is still in the box.`;
  }
  if (error.name === "Unreachable") return `Not sent. ${error.message} Your text is still in the box; send it again once the page has reconnected.`;
  return `Not sent: ${error.message} Your text is still in the box.`;
}

function showNote(text) {
  const note = $("#composer-note");
  note.hidden = !text;
  note.textContent = text || "";
}

// The stream's AI SDK chunks for tool calls and errors repeat typed parts the page reads.
function onChunk(thread, chunk) {
  if (chunk.type === "text-delta") thread.answer({}).appendText(chunk.delta);
  else if (chunk.type === "text-end") thread.view?.endText();
  else if (chunk.type.startsWith("data-") && chunk.data && chunk.data.type) thread.apply(chunk.data);
}

// -- the analysis behind a figure -------------------------------------------------------

async function showAnalysis(analysisId) {
  const dialog = $("#analysis");
  const found = await api(`/api/chats/${state.chatId}/analyses/${encodeURIComponent(analysisId)}`);
  dialog.querySelector("#analysis-title").textContent = `${found.name || found.analysis_id} (${found.tool || "code"})`;
  dialog.querySelector(".analysis-meta").textContent =
    `${found.analysis_id} · code sha256 ${found.code_hash.slice(0, 12)}…` + (found.error ? ` · failed: ${found.error}` : "");
  dialog.querySelector(".inputs").replaceChildren(...found.inputs.map((input) =>
    el("li", { text: `${input.entry_id} v${input.version}${input.label ? ` — ${input.label}` : ""}` })));
  dialog.querySelector("pre.code").textContent = visibleCode(found.code);
  const result = JSON.stringify(found.result, null, 1) ?? "";
  dialog.querySelector("pre.result").textContent = result.length > 4000 ? result.slice(0, 4000) + "\n…" : result;
  dialog.showModal();
}

// -- files added to the chat -----------------------------------------------------------

const uploads = new UploadQueue({
  list: messages,
  chatId: () => state.chatId,
  busy: () => document.body.dataset.busy === "true",
  limit: () => state.health?.max_upload_bytes ?? 25_000_000,
  lost: () => connection.lost(),
  changed: scrollDown,
  added: async (added, chatId) => {
    loadChats().catch(() => {});
    if (state.chatId !== chatId) return; // the person has moved to another chat meanwhile
    layersPanel.note(added);
    await liveMap.setEntry({ ...added, kind: added.kind || "byod", visible: true });
    const box = added.geojson ? bboxOf(added.geojson) : added.bbox;
    if (box) liveMap.view({ bbox: box });
  },
});
const addData = $("#add-data-input");
$("#add-data").addEventListener("click", () => addData.click());
addData.addEventListener("change", () => {
  uploads.add([...addData.files]);
  addData.value = ""; // so that the same file can be picked again
});
dropTarget($("#chat-panel"), (files) => uploads.add(files));
dropTarget($("#map"), (files) => uploads.add(files));

// -- wiring ------------------------------------------------------------------------------

$("#composer").addEventListener("submit", (event) => { event.preventDefault(); ask(); });
prompt.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) { event.preventDefault(); ask(); }
});
$("#stop").addEventListener("click", () => state.controller?.abort());
$("#new-chat").addEventListener("click", () => openChat(newChatId(), { push: true }));
window.addEventListener("popstate", () => { const id = chatIdFromPath(); if (id) openChat(id); });

async function start() {
  let chatId = chatIdFromPath();
  if (!chatId) {
    chatId = newChatId();
    history.replaceState({}, "", `/chat/${chatId}`);
  }
  // The chat is read (and its layers' data fetched) while the map's style loads: in turn,
  // a chat of 50 turns waited 0.6 s for the style before asking for its first byte.
  await Promise.all([loadHealth(), loadExamples(), openChat(chatId)]);
  markReady(true);
}

function started(error) {
  if (error.name === "Unreachable") {
    // Reopen the chat once the server is back.
    connection.lost(() => start().catch(started));
    return;
  }
  const text = error.status === 401
    ? "This server needs an access token: open the link `geomint serve` printed (it ends in ?token=…)."
    : `The page could not start: ${error.message}`;
  messages.append(el("li", { class: "error-note", role: "alert", text }));
  markReady(false);
}

start().catch(started);
