// The layers panel: every entry of the open chat as a layer, topmost first, with its
// colour (and legend), label, kind, feature count and sources; show or hide, zoom to,
// opacity, move up or down, export, remove from the map (listed below the others, with
// "Put back"; the entry stays in the chat). A raster is a layer like the others: its legend
// is its colour ramp with the values at its ends, and it exports as a GeoTIFF. What a
// person changes is sent to the server, which
// keeps it in the chat's log and answers with the entry's whole style: the map draws that
// answer, so a reload shows the same.

import { legendOf, ramp, rasterLegendOf, swatch } from "./styles.js";
import { api, el, exportMenu, exportUrl, formatNumber } from "./util.js";

const FORMATS = [["geojson", "GeoJSON"], ["csv", "CSV"], ["parquet", "GeoParquet"]];
const RASTER_FORMATS = [["geotiff", "GeoTIFF"]];

export class LayersPanel {
  /**
   * @param list the <ul> the rows go in; count: the element showing how many there are.
   * @param liveMap the LiveMap whose entries are the layers drawn.
   * @param chatId a function returning the open chat's id.
   * @param failed called with a sentence when a change could not be kept.
   * @param extraTools optional: more controls for a row, given the layer (e.g. a table).
   */
  constructor(list, count, { liveMap, chatId, failed, extraTools = () => [] }) {
    this.list = list;
    this.count = count;
    this.liveMap = liveMap;
    this.chatId = chatId;
    this.failed = failed;
    this.extraTools = extraTools;
    /** entry id -> {entry_id, label, version, removed, raster}: every layer, drawn on the map or not. */
    this.layers = new Map();
    // Redrawn once a frame at most: reopening a chat of 50 layers changes the map 100 times.
    liveMap.onChange = () => {
      if (this.pending) return;
      this.pending = requestAnimationFrame(() => {
        this.pending = null;
        this.draw();
      });
    };
  }

  /** Note an entry's newest version (a part, a restored entry or an upload) and redraw. */
  note(entry) {
    if (!entry || !entry.entry_id) return;
    const known = this.layers.get(entry.entry_id);
    if (known && known.version && entry.version && known.version > entry.version) return;
    this.layers.set(entry.entry_id, {
      entry_id: entry.entry_id, label: entry.label || entry.entry_id, version: entry.version ?? null,
      removed: entry.removed ?? known?.removed ?? false, raster: Boolean(entry.raster) || (known?.raster ?? false),
    });
    this.draw();
  }

  /** A layer taken off the map (and listed apart) or put back; null: unchanged. */
  setRemoved(entryId, removed) {
    const layer = this.layers.get(entryId);
    if (!layer || removed === null || removed === undefined || layer.removed === removed) return;
    layer.removed = removed;
    this.draw();
  }

  clear() {
    this.layers.clear();
    this.draw();
  }

  /** The layers topmost first: by their drawing order, those not on the map last. */
  ordered() {
    const order = (layer) => this.liveMap.entries.get(layer.entry_id)?.style.order ?? -1;
    return [...this.layers.values()].sort((a, b) => order(b) - order(a));
  }

  draw() {
    const focused = document.activeElement?.closest?.("[data-control]");
    const refocus = focused && this.list.contains(focused)
      ? [focused.closest(".layer")?.dataset.entryId, focused.dataset.control] : null;
    const ordered = this.ordered().filter((layer) => !layer.removed);
    const removed = this.ordered().filter((layer) => layer.removed);
    this.count.textContent = String(ordered.length);
    this.list.replaceChildren(
      ...ordered.map((layer, i) => this.#row(layer, ordered[i - 1], ordered[i + 1])),
      removed.length ? this.#removed(removed) : "");
    if (!refocus) return;
    // A removed layer's focus goes to its "Put back", and back again.
    const row = `.layer[data-entry-id="${CSS.escape(refocus[0] || "")}"]`;
    const other = { remove: "restore", restore: "remove" }[refocus[1]];
    (this.list.querySelector(`${row} [data-control="${refocus[1]}"]`)
      || (other && this.list.querySelector(`${row} [data-control="${other}"]`)))?.focus();
  }

  /** The layers removed from the map: listed apart, each with "Put back". */
  #removed(layers) {
    return el("li", { class: "layers-removed" },
      el("p", { class: "layer-meta", text: `Removed from the map (${layers.length}); still in the chat` }),
      el("ul", { "aria-label": "Layers removed from the map" }, ...layers.map((layer) =>
        el("li", { class: "layer removed", dataset: { entryId: layer.entry_id } },
          el("span", { class: "layer-label", title: layer.entry_id, text: layer.label }),
          el("button", {
            type: "button", class: "layer-tool", dataset: { control: "restore" }, text: "Put back",
            "aria-label": `Put ${layer.label} back on the map`, title: `Put ${layer.label} back on the map`,
            onclick: () => this.#keep(layer.entry_id, { removed: false }),
          })))));
  }

  #row(layer, above, below) {
    const drawn = this.liveMap.entries.get(layer.entry_id);
    const version = layer.version ? `&version=${layer.version}` : "";
    const base = exportUrl(this.chatId(), `entries/${encodeURIComponent(layer.entry_id)}/export`);
    const exports = exportMenu(`Export the layer ${layer.label}`, (layer.raster ? RASTER_FORMATS : FORMATS).map(([format, text]) =>
      ({ text, format, href: `${base}?format=${format}${version}` })));
    const label = el("span", { class: "layer-label", title: `${layer.entry_id}${layer.version ? ` v${layer.version}` : ""}`, text: layer.label });
    if (!drawn) {
      // Too large to draw again after a reload (or, a raster, with no place in longitude
      // and latitude): listed (and exportable), not on the map.
      const why = layer.raster ? "not drawn: its extent has no longitude and latitude" : "not drawn: too large to draw again after a reload";
      return el("li", { class: "layer", dataset: { entryId: layer.entry_id } },
        el("div", { class: "layer-head" }, label, exports),
        el("p", { class: "layer-meta", text: why }));
    }
    const name = layer.label;
    const shown = el("input", {
      type: "checkbox", class: "layer-visible", "aria-label": `Show ${name} on the map`,
      dataset: { control: "visible" }, checked: drawn.visible,
      onchange: (event) => this.#keep(layer.entry_id, { visible: event.target.checked }),
    });
    const opacity = el("input", {
      type: "range", min: "0", max: "1", step: "0.05", value: String(drawn.style.opacity ?? 1),
      class: "layer-opacity", "aria-label": `Opacity of ${name}`, dataset: { control: "opacity" },
      oninput: (event) => this.liveMap.preview(layer.entry_id, { opacity: Number(event.target.value) }),
      onchange: (event) => this.#keep(layer.entry_id, { opacity: Number(event.target.value) }),
    });
    const tool = (control, text, title, onclick, disabled = false) => el("button", {
      type: "button", class: "layer-tool", dataset: { control }, "aria-label": `${title} ${name}`, title: `${title} ${name}`, text, onclick, disabled,
    });
    const sources = [...new Set((drawn.sources || []).map((s) => [s.publisher || s.title, s.licence].filter(Boolean).join(", ")))];
    const meta = drawn.raster ? rasterMeta(drawn) : `${drawn.kind} · ${formatNumber(drawn.count)} feature${drawn.count === 1 ? "" : "s"}`;
    const sample = drawn.raster ? ramp(drawn.raster.legend?.palette, "swatch swatch-raster") : swatch(drawn.style.color, drawn.geometry);
    return el("li", { class: "layer", dataset: drawn.raster ? { entryId: layer.entry_id, raster: "true" } : { entryId: layer.entry_id } },
      el("div", { class: "layer-head" }, shown, sample, label, exports),
      el("p", { class: "layer-meta", text: meta }),
      sources.length ? el("p", { class: "layer-source", text: sources.join("; ") }) : null,
      el("div", { class: "layer-tools" },
        tool("zoom", "Zoom to", "Zoom to", () => this.liveMap.zoomTo(layer.entry_id)),
        tool("up", "↑", "Move up", () => this.#swap(layer, above), !above || !this.liveMap.entries.get(above.entry_id)),
        tool("down", "↓", "Move down", () => this.#swap(layer, below), !below || !this.liveMap.entries.get(below.entry_id)),
        el("label", { class: "layer-opacity-label" }, "Opacity ", opacity),
        ...this.extraTools(layer),
        tool("remove", "Remove", "Remove from the map", () => this.#keep(layer.entry_id, { removed: true }))),
      drawn.raster ? rasterLegendOf(drawn.raster) : legendOf(drawn.style, { geometry: drawn.geometry }));
  }

  /** Swap two layers' places in the drawing order. */
  async #swap(layer, other) {
    const a = this.liveMap.entries.get(layer.entry_id)?.style.order;
    const b = this.liveMap.entries.get(other?.entry_id)?.style.order;
    if (a === undefined || b === undefined) return;
    // Equal orders (entries written before orders were kept apart) still swap visibly.
    const [up, down] = a === b ? [a + 1, a] : [b, a];
    await this.#keep(layer.entry_id, { order: up });
    await this.#keep(other.entry_id, { order: down });
  }

  /** Send a change to the server and draw what it answers. */
  async #keep(entryId, change) {
    try {
      const kept = await api(`/api/chats/${encodeURIComponent(this.chatId())}/entries/${encodeURIComponent(entryId)}/display`, {
        method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify(change),
      });
      this.liveMap.setDisplay(entryId, kept.visible, kept.style);
      this.setRemoved(entryId, kept.removed);
    } catch (error) {
      this.failed(`The change to ${entryId} was not kept: ${error.message}`);
      this.draw(); // back to what the map draws
    }
  }
}

/** A raster's line under its name: its kind, its grid's size, its CRS. */
function rasterMeta(drawn) {
  const summary = drawn.raster.summary || {};
  const [rows, cols] = Array.isArray(summary.shape) ? summary.shape : [];
  const parts = [drawn.kind];
  if (rows && cols) parts.push(`${formatNumber(cols)} × ${formatNumber(rows)} cells`);
  if (summary.crs) parts.push(String(summary.crs));
  return parts.join(" · ");
}
