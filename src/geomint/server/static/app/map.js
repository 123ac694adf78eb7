// The live map: an offline basemap, and one source per entry whose layers follow the
// entry's display state. Sources are named "entry-<entry id>".

import * as maplibregl from "/static/vendor/maplibre-gl/maplibre-gl.mjs";
import { addCityLabels, addCityLand } from "./city.js";

const KIND_COLOURS = {
  places: "#d9480f",
  geometries: "#2b8a3e",
  routes: "#1971c2",
  ranges: "#7048e8",
  incidents: "#e03131",
  byod: "#0c8599",
  traffic_area_analytics: "#f08c00",
};
const SAFE_COLOUR = /^(#[0-9a-f]{3,8}|[a-z]{3,20})$/i;

export class LiveMap {
  constructor(container) {
    maplibregl.setWorkerUrl("/static/vendor/maplibre-gl/maplibre-gl-worker.mjs");
    const protocol = new window.pmtiles.Protocol();
    maplibregl.addProtocol("pmtiles", protocol.tile);
    this.entries = new Map(); // entry id -> {kind, label, count}
    this.map = new maplibregl.Map({
      container,
      style: "/static/basemap/style.json",
      center: [24.945, 60.17],
      zoom: 13,
      attributionControl: { compact: true },
      fadeDuration: 0,
    });
    this.map.addControl(new maplibregl.NavigationControl({ showCompass: false }), "top-right");
    this.map.addControl(new maplibregl.FullscreenControl(), "top-right");
    this.map.addControl(new maplibregl.ScaleControl({ unit: "metric" }), "bottom-left");
    this.loaded = new Promise((resolve) =>
      this.map.once("load", async () => {
        await addCityLand(this.map).catch(() => false);
        this.#addStreets();
        resolve();
      }));
    this.map.on("click", (event) => this.#popup(event));
  }

  /** Add or replace an entry's data; visible says whether its layers show. */
  async setEntry({ entry_id, kind, label, geojson, geojson_url, visible = true, style = null }) {
    // A large entry comes by reference: the stream and the reload carry its URL, not its data.
    if (!geojson && geojson_url) geojson = await this.fetchGeojson(geojson_url);
    if (!geojson || geojson.type !== "FeatureCollection") return;
    await this.loaded;
    const id = `entry-${entry_id}`;
    const source = this.map.getSource(id);
    if (source) source.setData(geojson);
    else {
      this.map.addSource(id, { type: "geojson", data: geojson, attribution: "" });
      this.#addLayers(id, kind);
    }
    this.entries.set(entry_id, { kind, label, count: geojson.features.length });
    this.setDisplay(entry_id, visible, style);
  }

  /** An entry's GeoJSON by reference (same origin, like every API call); null if it cannot be had. */
  async fetchGeojson(url) {
    if (typeof url !== "string" || !url.startsWith("/api/chats/")) return null;
    const response = await fetch(url);
    return response.ok ? response.json() : null;
  }

  /** Show or hide an entry, with an optional style (colour, opacity, width, radius). */
  setDisplay(entry_id, visible, style) {
    const id = `entry-${entry_id}`;
    for (const layer of this.#layerIds(id)) {
      if (!this.map.getLayer(layer)) continue;
      this.map.setLayoutProperty(layer, "visibility", visible ? "visible" : "none");
      if (style) this.#applyStyle(layer, style);
    }
  }

  clear() {
    for (const entryId of this.entries.keys()) {
      const id = `entry-${entryId}`;
      for (const layer of this.#layerIds(id)) if (this.map.getLayer(layer)) this.map.removeLayer(layer);
      if (this.map.getSource(id)) this.map.removeSource(id);
    }
    this.entries.clear();
  }

  /** Features the page put in an entry's source (read back from the map). */
  entryFeatures(entry_id) {
    const source = this.map.getSource(`entry-${entry_id}`);
    if (!source) return 0;
    const data = source.serialize().data;
    return data && Array.isArray(data.features) ? data.features.length : 0;
  }

  /** A camera move from the run: fit a bbox or fly to a centre. */
  view(view, { animate = true } = {}) {
    if (!view) return;
    if (Array.isArray(view.bbox) && view.bbox.length === 4) {
      const [w, s, e, n] = view.bbox;
      this.map.fitBounds([[w, s], [e, n]], { padding: view.padding ?? 40, maxZoom: 17, animate });
    } else if (Array.isArray(view.center)) {
      this.map.flyTo({ center: view.center, zoom: view.zoom ?? this.map.getZoom(), animate });
    }
  }

  /** Fit every visible entry (after a reload with no stored camera move). */
  fitEntries() {
    let box = null;
    for (const entryId of this.entries.keys()) {
      box = bboxOf(this.map.getSource(`entry-${entryId}`)?.serialize().data, box);
    }
    if (box) this.view({ bbox: box }, { animate: false });
  }

  /** The bundled Helsinki streets under everything else, and the basemap's labels. */
  #addStreets() {
    this.map.addSource("streets", {
      type: "geojson", data: "/basemap/streets.geojson",
      attribution: "© OpenStreetMap contributors (ODbL)",
    });
    const classes = (...names) => ["in", ["get", "highway"], ["literal", names]];
    const major = classes("primary", "primary_link", "secondary", "tertiary", "tertiary_link");
    const minor = classes("residential", "unclassified", "service", "pedestrian", "living_street");
    const width = (low, high) => ["interpolate", ["linear"], ["zoom"], 12, low, 17, high];
    this.map.addLayer({
      id: "streets-paths", type: "line", source: "streets", minzoom: 13,
      filter: ["!", ["any", major, minor]],
      paint: { "line-color": "#cfc8bb", "line-width": width(0.4, 1.2), "line-dasharray": [2, 1.5] },
    });
    for (const [id, filter, wide] of [["streets-minor", minor, 6], ["streets-major", major, 10]]) {
      this.map.addLayer({
        id: `${id}-casing`, type: "line", source: "streets", filter,
        paint: { "line-color": "#d6d0c4", "line-width": width(1.5, wide + 2) },
        layout: { "line-join": "round", "line-cap": "round" },
      });
      this.map.addLayer({
        id, type: "line", source: "streets", filter,
        paint: { "line-color": "#ffffff", "line-width": width(1, wide) },
        layout: { "line-join": "round", "line-cap": "round" },
      });
    }
    // Labels are drawn in the browser from the page's own Noto Sans (the style names no
    // glyph server, so MapLibre renders text locally), once that font has loaded.
    document.fonts.load('400 12px "Noto Sans"').catch(() => null).then(() => this.#addLabels(major, minor));
  }

  #addLabels(major, minor) {
    addCityLabels(this.map);
    const text = { "text-font": ["Noto Sans"], "text-max-width": 8 };
    const halo = { "text-color": "#4a4f55", "text-halo-color": "#ffffff", "text-halo-width": 1.4 };
    this.map.addLayer({
      id: "street-names", type: "symbol", source: "streets", minzoom: 15,
      filter: ["all", ["has", "name"], ["any", major, minor]],
      layout: { ...text, "text-field": ["get", "name"], "symbol-placement": "line", "text-size": 11 },
      paint: halo,
    });
    this.map.addLayer({
      id: "country-names", type: "symbol", source: "world", "source-layer": "country_labels",
      minzoom: 2, maxzoom: 9,
      layout: { ...text, "text-field": ["get", "name"], "text-size": 12 },
      paint: halo,
    });
  }

  #layerIds(id) {
    return [`${id}-fill`, `${id}-line`, `${id}-circle`];
  }

  #addLayers(id, kind) {
    const colour = KIND_COLOURS[kind] || "#495057";
    const is = (...types) => ["in", ["geometry-type"], ["literal", types]];
    const polygons = is("Polygon", "MultiPolygon");
    const lines = is("LineString", "MultiLineString", "Polygon", "MultiPolygon");
    this.map.addLayer({
      id: `${id}-fill`, type: "fill", source: id, filter: polygons,
      paint: { "fill-color": colour, "fill-opacity": kind === "ranges" ? 0.18 : 0.25 },
    });
    this.map.addLayer({
      id: `${id}-line`, type: "line", source: id, filter: lines,
      paint: { "line-color": colour, "line-width": kind === "routes" ? 4 : 2 },
      layout: { "line-join": "round", "line-cap": "round" },
    });
    this.map.addLayer({
      id: `${id}-circle`, type: "circle", source: id, filter: is("Point", "MultiPoint"),
      paint: {
        "circle-color": colour,
        "circle-radius": ["interpolate", ["linear"], ["zoom"], 11, 2.5, 16, 6],
        "circle-stroke-color": "#ffffff", "circle-stroke-width": 1,
      },
    });
  }

  #applyStyle(layer, style) {
    const colour = typeof style.color === "string" && SAFE_COLOUR.test(style.color) ? style.color : null;
    const opacity = Number.isFinite(style.opacity) ? Math.min(1, Math.max(0, style.opacity)) : null;
    const kind = layer.endsWith("-fill") ? "fill" : layer.endsWith("-line") ? "line" : "circle";
    try {
      if (colour) this.map.setPaintProperty(layer, `${kind}-color`, colour);
      if (opacity !== null) this.map.setPaintProperty(layer, `${kind}-opacity`, opacity);
      if (kind === "line" && Number.isFinite(style.width)) this.map.setPaintProperty(layer, "line-width", Math.min(20, Math.max(0.5, style.width)));
      if (kind === "circle" && Number.isFinite(style.radius)) this.map.setPaintProperty(layer, "circle-radius", Math.min(30, Math.max(1, style.radius)));
    } catch (error) {
      console.warn("style not applied", error);
    }
  }

  #popup(event) {
    const layers = [...this.entries.keys()].flatMap((e) => this.#layerIds(`entry-${e}`)).filter((l) => this.map.getLayer(l));
    const [feature] = this.map.queryRenderedFeatures(event.point, { layers });
    if (!feature) return;
    const entryId = feature.source.replace(/^entry-/, "");
    const box = document.createElement("div");
    box.className = "popup";
    const title = document.createElement("strong");
    title.textContent = feature.properties.name || this.entries.get(entryId)?.label || entryId;
    box.append(title);
    const rows = Object.entries(feature.properties).filter(([k]) => k !== "name").slice(0, 8);
    for (const [key, value] of rows) {
      const row = document.createElement("div");
      row.textContent = `${key}: ${readable(value)}`;
      box.append(row);
    }
    new maplibregl.Popup({ maxWidth: "280px" }).setLngLat(event.lngLat).setDOMContent(box).addTo(this.map);
  }
}

/**
 * A property value as a person reads it: nested objects and lists spelled out ("length_m:
 * 1,234; duration_s: 900"), not "[object Object]". MapLibre hands nested values back as
 * JSON text, so that is read first. Cut at `limit` characters.
 */
export function readable(value, limit = 200) {
  let v = value;
  if (typeof v === "string" && /^[\[{]/.test(v)) {
    try {
      v = JSON.parse(v);
    } catch {
      /* text that only looks like JSON */
    }
  }
  const text = spell(v, 0);
  return text.length > limit ? `${text.slice(0, limit - 1)}…` : text;
}

function spell(v, depth) {
  if (v === null || v === undefined) return "–";
  if (typeof v === "number") return Number.isFinite(v) ? v.toLocaleString("en-GB", { maximumFractionDigits: 6 }) : String(v);
  if (typeof v !== "object") return String(v);
  if (depth >= 2) return Array.isArray(v) ? `[${v.length} items]` : "{…}";
  if (Array.isArray(v)) return v.map((item) => spell(item, depth + 1)).join(", ");
  return Object.entries(v).map(([k, item]) => `${k}: ${spell(item, depth + 1)}`).join("; ");
}

/** The [west, south, east, north] of a FeatureCollection, grown from `box` if given. */
export function bboxOf(collection, box = null) {
  for (const feature of collection?.features ?? []) box = extend(box, feature.geometry);
  return box;
}

function extend(box, geometry) {
  if (!geometry) return box;
  const visit = (coords) => {
    if (typeof coords[0] === "number") {
      const [x, y] = coords;
      box = box ? [Math.min(box[0], x), Math.min(box[1], y), Math.max(box[2], x), Math.max(box[3], y)] : [x, y, x, y];
    } else coords.forEach(visit);
  };
  if (geometry.type === "GeometryCollection") geometry.geometries.forEach((g) => (box = extend(box, g)));
  else if (geometry.coordinates) visit(geometry.coordinates);
  return box;
}
