// Map code on the page: the diffs `execute_map_code` kept (map_change parts), applied
// through MapLibre's API and nothing else. No code of the model's runs here: a diff is
// data, checked again before it is drawn (every source's URL must be one of this chat's
// own routes), its text goes in as text, and its animations are keyframes this module
// plays. A change can be undone; the map is then rebuilt from the changes still applied,
// which is also how a reload draws them (the parts come back in order).
//
// Ids: a diff speaks the model's ids (an entry's source `places-1`, its layers
// `places-1-fill|line|circle|label`, a raster entry's one layer `rasters-1-raster`, a layer
// of map code `cafe-heat`). On the map an
// entry's source is `entry-places-1` (map.js) and map code's own sources and layers are
// `mapcode-<id>`, so they can never meet the basemap's ids, and a basemap switch keeps them
// (basemaps.js keeps ours).

import { el, formatNumber, visibleCode } from "./util.js";

/** The prefix of map code's own sources and layers on the map. */
export const PREFIX = "mapcode-";
/** The attribute table's outline (highlight.js) stays above everything map code adds. */
const ON_TOP = "table-highlight-fill";
const ENTRY_LAYER = /^(.+)-(fill|line|circle|label|raster)$/;
/** Source types a diff may add, with the one key each may point at a URL with. */
const SOURCE_URL_KEY = { geojson: "data", image: "url" };
const REDUCED_MOTION = "(prefers-reduced-motion: reduce)";

/**
 * `path` as an absolute URL if it is a same-origin path under this chat's API
 * (`/api/chats/<chatId>/...`), else null. MapLibre's worker needs absolute URLs.
 */
export function ownUrl(path, chatId, origin = location.origin) {
  if (typeof path !== "string" || !path.startsWith("/") || path.startsWith("//") || /[\\\s]/.test(path)) return null;
  let url;
  try {
    url = new URL(path, origin);
  } catch {
    return null;
  }
  const base = `/api/chats/${encodeURIComponent(chatId)}/`;
  if (url.origin !== new URL(origin).origin || !url.pathname.startsWith(base)) return null;
  // A dot segment ("/api/chats/a/../b/") is resolved by URL(): what is checked is what is fetched.
  return url.href;
}

/**
 * A source spec as the map may take it: {spec} with its URL made absolute, or {refused}
 * saying why it is not drawn.
 */
export function checkedSource(id, source, chatId) {
  const key = source && SOURCE_URL_KEY[source.type];
  if (!key) return { refused: `source ${id} is of type ${source?.type}, which the page does not draw from map code` };
  for (const other of ["url", "tiles", "data"]) {
    if (other !== key && other in source) return { refused: `source ${id} has a "${other}", which map code cannot set` };
  }
  const href = ownUrl(source[key], chatId);
  if (!href) return { refused: `source ${id} points outside this chat's data (${String(source[key]).slice(0, 80)}), so it is not drawn` };
  return { spec: { ...source, [key]: href } };
}

/** Between two JSON values at `s` (0..1): every number at the same place interpolated,
 * anything else switching to `b` at the later keyframe. */
export function between(a, b, s) {
  if (typeof a === "number" && typeof b === "number") return a + (b - a) * s;
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) return a.map((v, i) => between(v, b[i], s));
  if (a && b && typeof a === "object" && typeof b === "object" && !Array.isArray(a) && !Array.isArray(b)) {
    const keys = Object.keys(a);
    if (keys.length === Object.keys(b).length && keys.every((k) => k in b)) {
      return Object.fromEntries(keys.map((k) => [k, between(a[k], b[k], s)]));
    }
  }
  return s >= 1 ? b : a;
}

/** The paint of keyframes at `t` (0..1 of the animation). */
export function paintAt(keyframes, t) {
  const frames = [...keyframes].sort((a, b) => a.at - b.at);
  let low = frames[0];
  let high = frames[frames.length - 1];
  for (let i = 0; i + 1 < frames.length; i++) {
    if (t >= frames[i].at && t <= frames[i + 1].at) {
      [low, high] = [frames[i], frames[i + 1]];
      break;
    }
  }
  if (t <= low.at) return { ...low.paint };
  if (t >= high.at) return { ...high.paint };
  const s = (t - low.at) / (high.at - low.at || 1);
  const out = {};
  for (const name of new Set([...Object.keys(low.paint || {}), ...Object.keys(high.paint || {})])) {
    if (!(name in high.paint)) out[name] = low.paint[name];
    else if (!(name in low.paint)) out[name] = s >= 1 ? high.paint[name] : undefined;
    else out[name] = between(low.paint[name], high.paint[name], s);
  }
  return out;
}

/** Plays one animation of a diff: keyframes of paint over `duration_ms`, once or looped. */
class Player {
  constructor(map, layerId, animation) {
    this.map = map;
    this.layerId = layerId;
    this.keyframes = animation.keyframes || [];
    this.duration = Math.max(1, Number(animation.duration_ms) || 1000);
    this.repeat = Boolean(animation.repeat);
    this.frame = null;
    this.shown = new Map();
    this.done = false;
  }

  /** Play from the start; `settled` (a replay) or reduced motion shows the end at once. */
  start({ settled = false } = {}) {
    if (!this.keyframes.length) return;
    if ((settled && !this.repeat) || window.matchMedia?.(REDUCED_MOTION).matches) {
      this.#draw(1);
      this.done = true;
      return;
    }
    const begun = performance.now();
    const tick = (now) => {
      if (!this.map.getLayer(this.layerId)) return this.stop();
      const elapsed = (now - begun) / this.duration;
      const t = this.repeat ? elapsed % 1 : Math.min(1, elapsed);
      this.#draw(t);
      if (!this.repeat && t >= 1) {
        this.done = true;
        this.frame = null;
        return;
      }
      this.frame = requestAnimationFrame(tick);
    };
    this.frame = requestAnimationFrame(tick);
  }

  stop() {
    if (this.frame) cancelAnimationFrame(this.frame);
    this.frame = null;
  }

  #draw(t) {
    if (!this.map.getLayer(this.layerId)) return;
    for (const [name, value] of Object.entries(paintAt(this.keyframes, t))) {
      if (value === undefined) continue;
      const text = JSON.stringify(value);
      if (this.shown.get(name) === text) continue; // a value that did not move costs nothing
      this.shown.set(name, text);
      this.map.setPaintProperty(this.layerId, name, value);
    }
  }
}

export class MapCode {
  /**
   * @param liveMap the LiveMap (map.js) whose map the diffs change.
   * @param chatId a function returning the open chat's id.
   * @param notice called with a sentence when part of a diff is not drawn.
   * @param undo called with a change id when the person asks to undo it; resolves once
   *   the server has kept the undo (or throws its error).
   */
  constructor(liveMap, { chatId, notice = () => {}, undo }) {
    this.liveMap = liveMap;
    this.map = liveMap.map;
    this.chatId = chatId;
    this.notice = notice;
    this.sendUndo = undo;
    /** The map_change parts applied, in order (what a rebuild draws). */
    this.applied = [];
    /** The diff drawn as a preview while an approval waits, or null. */
    this.previewed = null;
    /** Diff ids of map code's sources and layers on the map now. */
    this.sources = new Set();
    this.layers = new Set();
    /** entry layer (map id) -> what it was before map code changed it: {paint, layout, filter, zoom, next}. */
    this.originals = new Map();
    /** entry layer (map id) -> what map code set on it: {paint, layout, filter?, zoom?}. */
    this.overrides = new Map();
    /** change id -> its players. */
    this.players = new Map();
    /** change id -> its card in the chat. */
    this.cards = new Map();
    this.undone = new Set();
    // An entry restyled (its display part, the layers panel, a flash ending) gets map code's
    // changes to its layers back on top of its own style.
    liveMap.onStyled = (entryId) => this.#reapply(entryId);
  }

  // -- what the chat's parts say --------------------------------------------------------

  /** A map_change part: kept, and drawn when `draw` (a live turn; a reload draws once all
   * its parts are read, with redraw()). */
  add(part, { draw = true } = {}) {
    if (this.applied.some((c) => c.change_id === part.change_id)) return;
    if (draw && this.previewDrawn) {
      // The preview goes first: the change it previewed is drawn as itself.
      this.previewed = null;
      this.redraw();
    }
    this.applied.push(part);
    if (draw) this.#apply(part.diff, { changeId: part.change_id });
  }

  /** A change taken back (a map_undone part, or the person's undo once the server kept it). */
  undo(changeId, { draw = true } = {}) {
    this.undone.add(changeId);
    this.#markUndone(changeId);
    const before = this.applied.length;
    this.applied = this.applied.filter((c) => c.change_id !== changeId);
    if (draw && this.applied.length !== before) this.redraw();
  }

  /** Draw a diff awaiting approval (removed again by clearPreview). */
  preview(diff) {
    if (!diff || typeof diff !== "object") return;
    if (this.previewDrawn) {
      this.previewed = null;
      this.redraw();
    }
    this.previewed = diff;
    this.previewDrawn = true;
    this.#apply(diff, { changeId: "preview", camera: false });
  }

  /** Take the preview off the map (refused, answered, or the run ended). */
  clearPreview() {
    if (!this.previewed) return;
    this.previewed = null;
    this.redraw();
  }

  /** The open chat is closing: everything map code drew goes (before its entries do). */
  clear() {
    this.applied = [];
    this.previewed = null;
    this.#removeAll();
    this.cards.clear();
    this.undone.clear();
  }

  /**
   * Draw the map as the applied changes make it: map code's layers and sources removed,
   * the entry layers it changed put back, then every change still applied, in order
   * (settled: animations that ran once show their end; no camera moves but the tilt).
   */
  redraw({ camera = false } = {}) {
    this.#removeAll();
    for (const change of this.applied) this.#apply(change.diff, { changeId: change.change_id, camera: false, settled: true });
    if (camera) {
      // A reload keeps the tilt and turn a change gave the map (where it looks comes from
      // the chat's camera moves).
      const moves = this.applied.map((c) => c.diff?.camera).filter((c) => c && (Number.isFinite(c.pitch) || Number.isFinite(c.bearing)));
      const last = moves[moves.length - 1];
      if (last) this.map.jumpTo({ ...(Number.isFinite(last.pitch) ? { pitch: last.pitch } : {}), ...(Number.isFinite(last.bearing) ? { bearing: last.bearing } : {}) });
    }
    if (this.previewed) {
      this.previewDrawn = true;
      this.#apply(this.previewed, { changeId: "preview", camera: false });
    }
  }

  /** A diff id's map id: map code's own, or an entry's source or layer; null if neither. */
  sourceId(id) {
    if (this.sources.has(id)) return PREFIX + id;
    // An entry drawn by points.js gets MapLibre's source and layers, which map code styles.
    if (this.liveMap.entries.has(id) && this.liveMap.standardLayers(id)) return `entry-${id}`;
    return null;
  }

  layerId(id) {
    if (typeof id !== "string") return null;
    if (this.layers.has(id)) return PREFIX + id;
    const entry = ENTRY_LAYER.exec(id);
    if (entry && this.liveMap.entries.has(entry[1]) && this.liveMap.standardLayers(entry[1])) return `entry-${id}`;
    return null;
  }

  // -- applying a diff ----------------------------------------------------------------------

  #apply(diff, { changeId, camera = true, settled = false }) {
    const skipped = [];
    const removed = diff.removed || {};
    for (const id of removed.layers || []) {
      if (!this.layers.has(id)) continue;
      this.#removeLayer(PREFIX + id);
      this.layers.delete(id);
    }
    for (const id of removed.sources || []) {
      if (!this.sources.has(id)) continue;
      try {
        this.map.removeSource(PREFIX + id);
      } catch (error) {
        skipped.push(`source ${id} could not be removed (${error.message})`);
      }
      this.sources.delete(id);
    }
    const added = diff.added || {};
    for (const [id, source] of Object.entries(added.sources || {})) {
      const checked = checkedSource(id, source, this.chatId());
      if (checked.refused) {
        skipped.push(checked.refused);
        continue;
      }
      if (this.map.getSource(PREFIX + id)) {
        skipped.push(`source ${id} is on the map already`);
        continue;
      }
      this.map.addSource(PREFIX + id, checked.spec);
      this.sources.add(id);
    }
    const updates = (diff.updated || {}).layers || [];
    for (const update of updates) {
      const id = this.layerId(update.id);
      if (!id || !this.map.getLayer(id)) {
        skipped.push(`layer ${update.id} is not on the map`);
        continue;
      }
      const { before, ...properties } = update;
      this.#update(id, properties);
    }
    // Layers are placed from the top of the final order down, each under its `before`:
    // then a `before` naming a layer added or moved in the same change is already where
    // it ends (docs/map-code.md, "The diff"; the server folds the same way).
    const rank = new Map((diff.order || []).map((id, index) => [id, index]));
    const top = rank.size;
    const placements = [
      ...(added.layers || []).map((layer) => ({ id: layer.id, layer })),
      ...updates.filter((update) => "before" in update).map((update) => ({ id: update.id, before: update.before })),
    ].sort((a, b) => (rank.get(b.id) ?? top) - (rank.get(a.id) ?? top));
    for (const placement of placements) {
      if (!placement.layer) {
        const id = this.layerId(placement.id);
        if (id && this.map.getLayer(id)) this.map.moveLayer(id, this.#under(placement.before));
        continue;
      }
      const { before, ...spec } = placement.layer;
      if (typeof spec.id !== "string" || this.layers.has(spec.id)) {
        skipped.push(`layer ${spec.id} is on the map already`);
        continue;
      }
      const source = spec.source === undefined ? undefined : this.sourceId(spec.source);
      if (spec.source !== undefined && !source) {
        skipped.push(`layer ${spec.id} draws ${spec.source}, which is not on the map`);
        continue;
      }
      const onMap = { ...spec, id: PREFIX + spec.id, ...(source ? { source } : {}) };
      this.map.addLayer(onMap, this.#under(before));
      this.layers.add(spec.id);
    }
    if (camera && diff.camera) this.#camera(diff.camera);
    for (const animation of diff.animations || []) {
      const id = this.layerId(animation.layer_id);
      if (!id) continue;
      const player = new Player(this.map, id, animation);
      if (!this.players.has(changeId)) this.players.set(changeId, []);
      this.players.get(changeId).push(player);
      player.start({ settled });
    }
    if (skipped.length) this.notice(`Part of map change ${changeId} was not drawn: ${skipped.join("; ")}.`);
  }

  /** The layer to add or move a layer under: `before` if it is on the map, else on top. */
  #under(before) {
    const id = before ? this.layerId(before) : null;
    if (id && this.map.getLayer(id)) return id;
    return this.map.getLayer(ON_TOP) ? ON_TOP : undefined;
  }

  #update(id, update) {
    const entry = id.startsWith("entry-");
    const original = entry ? this.#original(id) : null;
    const override = entry ? this.#override(id) : null;
    for (const group of ["paint", "layout"]) {
      for (const [name, value] of Object.entries(update[group] || {})) {
        if (original && !(name in original[group])) {
          original[group][name] = group === "paint" ? this.map.getPaintProperty(id, name) : this.map.getLayoutProperty(id, name);
        }
        if (override) override[group][name] = value;
        this.#set(id, group, name, value);
      }
    }
    if ("filter" in update) {
      if (override) override.filter = [update.filter ?? null];
      this.map.setFilter(id, update.filter ?? null);
    }
    if ("minzoom" in update || "maxzoom" in update) {
      const layer = this.map.getLayer(id);
      const zoom = [update.minzoom ?? layer.minzoom ?? 0, update.maxzoom ?? layer.maxzoom ?? 24];
      if (override) override.zoom = zoom;
      this.map.setLayerZoomRange(id, ...zoom);
    }
    if ("before" in update) this.map.moveLayer(id, this.#under(update.before));
  }

  #set(id, group, name, value) {
    const unset = value === null ? undefined : value;
    if (group === "paint") this.map.setPaintProperty(id, name, unset);
    else this.map.setLayoutProperty(id, name, unset);
  }

  /** What an entry layer was before map code first changed it (kept once, to put back). */
  #original(id) {
    if (!this.originals.has(id)) {
      const layer = this.map.getLayer(id);
      const order = this.map.getLayersOrder();
      this.originals.set(id, {
        paint: {}, layout: {}, filter: this.map.getFilter(id), zoom: [layer.minzoom ?? 0, layer.maxzoom ?? 24],
        next: order[order.indexOf(id) + 1] ?? null,
      });
    }
    return this.originals.get(id);
  }

  #override(id) {
    if (!this.overrides.has(id)) this.overrides.set(id, { paint: {}, layout: {} });
    return this.overrides.get(id);
  }

  /** An entry's layers were restyled by geomint: map code's changes to them go back on. A
   * hidden entry keeps its opacities at 0 (that is how map.js hides one). */
  #reapply(entryId) {
    const shown = this.liveMap.shown(entryId);
    for (const [id, override] of this.overrides) {
      if (!id.startsWith(`entry-${entryId}-`) || !ENTRY_LAYER.test(id.slice(6)) || !this.map.getLayer(id)) continue;
      for (const group of ["paint", "layout"]) {
        for (const [name, value] of Object.entries(override[group])) {
          if (!shown && /opacity/.test(name)) continue;
          this.#set(id, group, name, value);
        }
      }
      if (override.filter) this.map.setFilter(id, override.filter[0]);
      if (override.zoom) this.map.setLayerZoomRange(id, ...override.zoom);
    }
  }

  #camera(camera) {
    const number = (v) => (Number.isFinite(v) ? v : undefined);
    const lonLat = (c) => (Array.isArray(c) && c.length === 2 && c.every(Number.isFinite) ? c : undefined);
    const reduced = window.matchMedia?.(REDUCED_MOTION).matches;
    if (camera.kind === "fit_bounds") {
      const b = camera.bounds;
      if (!Array.isArray(b) || b.length !== 4 || !b.every(Number.isFinite)) return;
      this.map.fitBounds([[b[0], b[1]], [b[2], b[3]]], { padding: number(camera.padding) ?? 40, animate: !reduced });
      return;
    }
    const options = {
      center: lonLat(camera.center), zoom: number(camera.zoom), bearing: number(camera.bearing), pitch: number(camera.pitch),
    };
    for (const key of Object.keys(options)) if (options[key] === undefined) delete options[key];
    if (reduced) this.map.jumpTo(options);
    else if (camera.kind === "fly_to") this.map.flyTo(options);
    else this.map.easeTo(options);
  }

  #removeLayer(id) {
    if (this.map.getLayer(id)) this.map.removeLayer(id);
  }

  /** Every layer and source of map code off the map, and the entry layers it changed as
   * they were (then restyled by geomint, which owns their style). */
  #removeAll() {
    for (const players of this.players.values()) for (const player of players) player.stop();
    this.players.clear();
    this.previewDrawn = false;
    for (const id of this.map.getLayersOrder()) if (id.startsWith(PREFIX)) this.map.removeLayer(id);
    for (const id of Object.keys(this.map.getStyle()?.sources || {})) if (id.startsWith(PREFIX)) this.map.removeSource(id);
    this.sources.clear();
    this.layers.clear();
    const entries = new Set();
    for (const [id, original] of this.originals) {
      if (!this.map.getLayer(id)) continue;
      for (const group of ["paint", "layout"]) {
        for (const [name, value] of Object.entries(original[group])) this.#set(id, group, name, value ?? null);
      }
      this.map.setFilter(id, original.filter ?? null);
      this.map.setLayerZoomRange(id, ...original.zoom);
      if (original.next && this.map.getLayer(original.next)) this.map.moveLayer(id, original.next);
      entries.add(ENTRY_LAYER.exec(id.slice(6))?.[1]);
    }
    this.originals.clear();
    this.overrides.clear();
    for (const entryId of entries) if (entryId) this.liveMap.setDisplay(entryId, null);
  }

  // -- the chat's card ------------------------------------------------------------------

  /** The card of a map change in the chat: what it does, the intent, the code, its cost,
   * and Undo. */
  card(part) {
    const usage = part.usage || {};
    const tokens = (usage.input_tokens || 0) + (usage.output_tokens || 0);
    const calls = usage.requests ?? 0;
    const cost = [
      `${part.attempts ?? 1} attempt${part.attempts === 1 ? "" : "s"}`,
      calls ? `${formatNumber(calls)} generation call${calls === 1 ? "" : "s"}` : "code given by the model (no generation)",
      calls ? `${formatNumber(tokens)} tokens (${formatNumber(usage.input_tokens || 0)} in, ${formatNumber(usage.output_tokens || 0)} out)` : null,
      Number.isFinite(usage.ms) ? `${formatNumber(usage.ms)} ms` : null,
      usage.model ? String(usage.model) : null,
    ].filter(Boolean).join(" · ");
    const status = el("span", { class: "map-change-status", role: "status" });
    const button = el("button", {
      type: "button", class: "map-change-undo", text: "Undo", "aria-label": `Undo map change ${part.change_id}`,
      onclick: () => this.#askUndo(part.change_id, button, status),
    });
    const node = el("section", { class: "map-change", dataset: { changeId: part.change_id, state: "applied" }, "aria-label": `map change ${part.change_id}` },
      el("div", { class: "map-change-head" },
        el("strong", { class: "map-change-description", text: part.description || "Map changed" }),
        el("span", { class: "map-change-id", text: part.change_id })),
      el("div", { class: "map-change-intent", text: `Intent: ${part.intent || ""}` }),
      part.problem ? el("div", { class: "map-change-problem", role: "note", text: `Not drawn: ${part.problem}` }) : null,
      el("details", { class: "map-change-code" },
        el("summary", { text: "Code" }),
        el("pre", { class: "code", tabindex: "0", text: visibleCode(part.code || "") })),
      el("div", { class: "map-change-cost", text: cost }),
      el("div", { class: "map-change-actions" }, button, status));
    this.cards.set(part.change_id, { node, button, status });
    if (this.undone.has(part.change_id)) this.#markUndone(part.change_id);
    return node;
  }

  async #askUndo(changeId, button, status) {
    button.disabled = true;
    status.textContent = "Undoing…";
    try {
      await this.sendUndo(changeId);
    } catch (error) {
      button.disabled = false;
      status.textContent = error.message;
      return;
    }
    this.undo(changeId);
  }

  #markUndone(changeId) {
    const card = this.cards.get(changeId);
    if (!card) return;
    card.node.dataset.state = "undone";
    card.button.disabled = true;
    card.button.textContent = "Undone";
    card.status.textContent = "";
  }
}

/** What an approval of map code shows beside its arguments: the intent (before any code
 * is written) or what the diff would do (drawn on the map as a preview meanwhile). */
export function approvalAbout(preview) {
  const about = preview?.about;
  if (!about || (about.stage !== "intent" && about.stage !== "effect")) return null;
  return el("div", { class: "map-change-about" },
    about.intent ? el("div", { text: `Intent: ${about.intent}` }) : null,
    about.description ? el("div", { text: `Would change the map: ${about.description} (previewed on the map)` }) : null);
}
