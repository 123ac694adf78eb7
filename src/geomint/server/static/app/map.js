// The live map: an offline basemap, and one source per entry whose layers follow the
// entry's display state and the style the server holds for it. Sources are named
// "entry-<entry id>"; an entry with a higher style order is drawn above. A raster entry is
// an image source (the server's picture of it, placed by its corners) drawn by one raster
// layer, "entry-<entry id>-raster". A layer of many points is drawn by the page's own WebGL
// (points.js), one custom layer "entry-<entry id>-points"; its source is added only when its
// labels or map code need one.

import * as maplibregl from "/static/vendor/maplibre-gl/maplibre-gl.mjs";
import { FALLBACK_STYLE, labelsOf, paintOf, propertyOf, rasterPaintOf } from "./styles.js";
import { PointLayer } from "./points.js";
import { addCityLabels, addCityLand, fetchCityLand } from "./city.js";

/** The attribute table's outline (highlight.js) stays above every entry. */
const ON_TOP = "table-highlight-fill";
/** How long a result layer stays highlighted when it arrives. */
const FLASH_MS = 1600;
/**
 * Entries' sources and layers are added unvalidated, through the Style's methods (Map.addLayer
 * has no such option). MapLibre checks each against a copy of the whole style, every layer
 * cloned: adding a chat's entries took time growing with the square of their number (0.34 s
 * of a 50-turn chat's reload, 208 layers). The page builds them from the server's style,
 * and tests/e2e/test_web_layers.py draws every kind.
 */
const UNCHECKED = { validate: false };
/** A points-only source's tile margin, in pixels (see setEntry). */
const POINT_BUFFER = 4;
/**
 * From this many points, a points-only entry is drawn by points.js rather than by MapLibre's
 * circle layer. Below it MapLibre's own pipeline draws in well under half a second here
 * (10,000 points: 0.38 s), and its layers are what map code styles; above it, its worker's
 * tiling is most of the wait (100,000 points: 2.2-2.5 s, against 0.2-0.3 s drawn by the page).
 */
export const MANY_POINTS = 20000;

export class LiveMap {
  constructor(container) {
    maplibregl.setWorkerUrl("/static/vendor/maplibre-gl/maplibre-gl-worker.mjs");
    const protocol = new window.pmtiles.Protocol();
    maplibregl.addProtocol("pmtiles", protocol.tile);
    /** entry id -> {entry_id, kind, label, version, count, geometry, sources, style, visible,
     * bbox, raster, data, points}; raster is {summary, legend} for a raster entry, else
     * absent; data is a vector entry's FeatureCollection; points its PointLayer, or null when
     * MapLibre's own layers draw it. */
    this.entries = new Map();
    /** Called whenever an entry is added, changed or removed (the layers panel redraws). */
    this.onChange = () => {};
    /** Called with an entry's id when its features are replaced (the attribute table reloads). */
    this.onData = () => {};
    /** Called after an entry's layers are restyled (map code puts its changes back on). */
    this.onStyled = () => {};
    /** Entry label colours over the basemap drawn now (basemaps.js sets them for a dark one). */
    this.labelColours = { text: "#1f2328", halo: "#ffffff" };
    /** The language entry labels are drawn in (basemaps.js sets it), null for names as signed. */
    this.language = null;
    /** Whether the person has moved the map since the app last moved it (see follow()). */
    this.movedByPerson = false;
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
    // Fetched while the basemap loads, not after.
    const land = fetchCityLand().catch(() => null);
    this.loaded = new Promise((resolve) =>
      this.map.once("load", async () => {
        await addCityLand(this.map, land).catch(() => false);
        this.#addStreets();
        resolve();
      }));
    this.map.on("click", (event) => this.#popup(event));
    // MapLibre rebuilds its style after a lost WebGL context is restored, without custom
    // layers: points.js's are put back where they were.
    let places = new Map();
    this.map.on("webglcontextlost", () => { places = this.pointPlaces(); });
    this.map.on("webglcontextrestored", () => {
      const restore = () => {
        try {
          this.styleReplaced(places);
        } catch {
          this.map.once("styledata", restore); // its style still loading
        }
      };
      restore();
    });
    // A move with an input event behind it is the person's; the app's own moves have none.
    this.map.on("movestart", (event) => { if (event.originalEvent) this.movedByPerson = true; });
    this.map.on("zoomend", () => { for (const entryId of this.entries.keys()) this.#showLabels(entryId); });
    // The labels of an entry drawn by points.js come with the zoom that shows them.
    this.map.on("moveend", () => { for (const entryId of this.entries.keys()) this.#labelSource(entryId); });
  }

  /** From now on, move the camera to each result that arrives (a new question was asked). */
  follow() {
    this.movedByPerson = false;
  }

  /** Add or replace an entry's data; visible says whether its layers show. */
  async setEntry(part) {
    if (part.raster) return this.#setRaster(part);
    const { entry_id, kind, label, version = null, sources = [], visible = true, style = null } = part;
    let { geojson, geojson_url } = part;
    // A large entry comes by reference: the stream and the reload carry its URL, not its data.
    if (!geojson && geojson_url) geojson = await this.fetchGeojson(geojson_url);
    if (!geojson || geojson.type !== "FeatureCollection") return;
    await this.loaded;
    const id = `entry-${entry_id}`;
    const known = this.entries.get(entry_id);
    const drawn = style || known?.style || { ...FALLBACK_STYLE, order: this.entries.size };
    const many = onlyPoints(geojson) && geojson.features.length >= MANY_POINTS;
    const source = this.map.getSource(id);
    if (source) source.setData(geojson);
    let points = known?.points ?? null;
    if (points && many) points.setData(geojson);
    else if (points) {
      // A new version too small for points.js: MapLibre's layers draw it from now on.
      this.standardLayers(entry_id, geojson);
      points = null;
    } else if (!source && many) {
      points = new PointLayer(`${id}-points`, geojson, drawn);
      this.map.style.addLayer(points, undefined, UNCHECKED);
    } else if (!source) {
      this.#addSource(id, geojson);
      this.#addLayers(id, kind, drawn);
    }
    // setDisplay's Map.setPaintProperty also marks the style changed, which Map.addSource and
    // Map.addLayer would have done: the new source and layers are drawn in the next frame.
    this.entries.set(entry_id, {
      entry_id, kind, label, version, sources, style: drawn, visible, data: geojson, points,
      count: geojson.features.length, geometry: geometryOf(geojson), bbox: bboxOf(geojson),
    });
    this.setDisplay(entry_id, visible, drawn);
    if (known) this.onData(entry_id);
  }

  /** An entry's GeoJSON source, added unchecked. */
  #addSource(id, geojson) {
    // generateId: each feature's id is its index, which the attribute table's rows go by.
    const spec = { type: "geojson", data: geojson, attribution: "", generateId: true };
    // MapLibre cuts each tile with a margin of 128 pixels for lines and areas; circles and
    // point labels are drawn only by the tile their point is in, so points need none: a
    // few pixels keep a point on a tile's edge. Cutting 100,000 points with the margin put
    // each in about twice as many tiles.
    if (onlyPoints(geojson)) spec.buffer = POINT_BUFFER;
    this.map.style.addSource(id, spec, UNCHECKED);
  }

  /**
   * Draw an entry drawn by points.js with MapLibre's layers instead, over a source of its
   * own (map code asked for the entry's source or layers, which it styles as MapLibre's, or
   * a new version has too few points), its features `data` when it has no source yet.
   * Returns whether the entry is now drawn so.
   */
  standardLayers(entry_id, data = this.entries.get(entry_id)?.data) {
    const entry = this.entries.get(entry_id);
    if (!entry) return false;
    if (!entry.points) return true;
    const id = `entry-${entry_id}`;
    const next = this.#above(entry.points.id, [`${id}-label`]);
    this.map.removeLayer(entry.points.id);
    entry.points = null;
    if (this.map.getLayer(`${id}-label`)) this.map.removeLayer(`${id}-label`);
    if (!this.map.getSource(id)) this.#addSource(id, data);
    this.#addLayers(id, entry.kind, entry.style, next);
    this.#applyStyle(entry_id);
    return true;
  }

  /** The first layer above `layerId` that is neither a custom layer nor one of `skipped`,
   * or undefined when there is none (on top). */
  #above(layerId, skipped = []) {
    const order = this.map.getLayersOrder();
    for (const id of order.slice(order.indexOf(layerId) + 1)) {
      if (!skipped.includes(id) && this.map.getLayer(id)?.type !== "custom") return id;
    }
    return undefined;
  }

  /** Where each of points.js's layers is in the style now: the layer above it (what a
   * replaced style keeps), to put it back there with styleReplaced. */
  pointPlaces() {
    const places = new Map();
    for (const entry of this.entries.values()) {
      if (entry.points && this.map.getLayer(entry.points.id)) places.set(entry.points.id, this.#above(entry.points.id));
    }
    return places;
  }

  /** The style was replaced (a basemap switch, a lost WebGL context restored): MapLibre
   * carries over only what its style serializes, which leaves out custom layers, so
   * points.js's layers are added again where `places` (pointPlaces' answer) says. */
  styleReplaced(places = new Map()) {
    for (const entry of this.entries.values()) {
      if (!entry.points || this.map.getLayer(entry.points.id)) continue;
      const next = places.get(entry.points.id);
      this.map.style.addLayer(entry.points, next && this.map.getLayer(next) ? next : undefined, UNCHECKED);
    }
    this.map.triggerRepaint();
  }

  /** The FeatureCollection an entry's features came in (as drawn), or null. */
  entryData(entry_id) {
    return this.entries.get(entry_id)?.data ?? null;
  }

  /** A raster entry: the server's picture of it as an image source, placed by its corners
   * (the part's), drawn by one raster layer; its legend is fetched beside it. */
  async #setRaster({ entry_id, kind, label, version = null, sources = [], raster, bbox = null, visible = true, style = null }) {
    const corners = raster.coordinates;
    const url = ownApiUrl(raster.image_url);
    if (!url || !Array.isArray(corners) || corners.length !== 4) return; // listed, not drawn
    await this.loaded;
    const id = `entry-${entry_id}`;
    const known = this.entries.get(entry_id);
    const drawn = style || known?.style || { ...FALLBACK_STYLE, order: this.entries.size };
    const source = this.map.getSource(id);
    if (source) source.updateImage({ url, coordinates: corners });
    else {
      this.map.style.addSource(id, { type: "image", url, coordinates: corners }, UNCHECKED);
      this.map.style.addLayer({ id: `${id}-raster`, type: "raster", source: id, paint: rasterPaintOf(drawn, visible) }, undefined, UNCHECKED);
    }
    const legend = known?.version === version ? known?.raster?.legend ?? null : null;
    this.entries.set(entry_id, {
      entry_id, kind, label, version, sources, style: drawn, visible, count: null, geometry: "raster",
      bbox: rasterBox({ bbox, raster }),
      raster: { summary: raster.summary || {}, legend },
    });
    this.setDisplay(entry_id, visible, drawn);
    if (!legend) this.#fetchLegend(entry_id, version, raster.legend_url);
  }

  /** What a raster's legend shows (the values at its ramp's ends), once the server says. */
  async #fetchLegend(entry_id, version, url) {
    const href = ownApiUrl(url);
    if (!href) return;
    try {
      const response = await fetch(href);
      if (!response.ok) return;
      const legend = await response.json();
      const entry = this.entries.get(entry_id);
      if (!entry?.raster || entry.version !== version) return; // a newer version came meanwhile
      entry.raster.legend = legend;
      this.onChange();
    } catch {
      // Without it the legend shows the ramp and no numbers.
    }
  }

  /** A result arrived during a turn: highlight it, and show it unless the person moved the map. */
  arrived(entry_id) {
    const entry = this.entries.get(entry_id);
    if (!entry) return;
    if (!this.movedByPerson && entry.bbox) this.view({ bbox: entry.bbox });
    this.flash(entry_id);
  }

  /** Draw an entry wider and brighter for a moment, so the eye finds it. */
  flash(entry_id) {
    const id = `entry-${entry_id}`;
    const entry = this.entries.get(entry_id);
    if (entry?.points) {
      const points = entry.points;
      points.flashing = true;
      this.map.triggerRepaint();
      clearTimeout(entry.flashing);
      entry.flashing = setTimeout(() => {
        points.flashing = false;
        this.map.triggerRepaint();
      }, FLASH_MS);
      return;
    }
    if (!entry || !this.map.getLayer(`${id}-circle`)) return;
    this.map.setPaintProperty(`${id}-circle`, "circle-stroke-width", 3);
    this.map.setPaintProperty(`${id}-circle`, "circle-stroke-color", "#ffd43b");
    this.map.setPaintProperty(`${id}-line`, "line-width", (entry.style.width || 2) + 3);
    clearTimeout(entry.flashing);
    entry.flashing = setTimeout(() => {
      if (!this.map.getLayer(`${id}-circle`)) return;
      this.map.setPaintProperty(`${id}-circle`, "circle-stroke-color", "#ffffff");
      this.#applyStyle(entry_id);
    }, FLASH_MS);
  }

  /** An entry's GeoJSON by reference (same origin, like every API call); null if it cannot be had. */
  async fetchGeojson(url) {
    // A chat's entries, or those a new chat starts with before it is stored.
    if (typeof url !== "string" || !/^\/api\/(chats|new-chat)\//.test(url)) return null;
    const response = await fetch(url);
    return response.ok ? response.json() : null;
  }

  /** Show or hide an entry (visible null leaves it), and draw it with `style` (its whole
   * style, as the server holds it) when one is given. */
  setDisplay(entry_id, visible, style = null) {
    const entry = this.entries.get(entry_id);
    if (!entry) return;
    if (visible !== null && visible !== undefined) entry.visible = visible;
    if (style) entry.style = style;
    this.#applyStyle(entry_id);
    if (style && this.#outOfOrder()) this.#restack();
    this.onChange();
  }

  /** Draw a change the person is still making (an opacity being dragged) before it is kept. */
  preview(entry_id, changes) {
    const entry = this.entries.get(entry_id);
    if (!entry) return;
    entry.style = { ...entry.style, ...changes };
    this.#applyStyle(entry_id);
  }

  /** Move the camera to an entry's extent. */
  zoomTo(entry_id) {
    const bbox = this.entries.get(entry_id)?.bbox;
    if (bbox) this.view({ bbox });
  }

  clear() {
    for (const entryId of this.entries.keys()) {
      const id = `entry-${entryId}`;
      for (const layer of this.#layerIds(id, { labels: true, raster: true })) if (this.map.getLayer(layer)) this.map.removeLayer(layer);
      if (this.map.getSource(id)) this.map.removeSource(id);
    }
    this.entries.clear();
    this.onChange();
  }

  /** Features the page put in an entry's source (read back from the map). */
  entryFeatures(entry_id) {
    const points = this.entries.get(entry_id)?.points;
    if (points) return points.features.length;
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

  /** Fit the entries of a chat being opened, before they are drawn (after a reload with no
   * stored camera move), so that the basemap asks for its tiles once, for the view the chat
   * ends up at, rather than for the view before. */
  fitParts(parts) {
    let box = null;
    for (const part of parts) {
      if (part.raster) box = grow(box, rasterBox(part));
      else if (part.geojson?.type === "FeatureCollection") box = bboxOf(part.geojson, box);
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

  /** An entry's layers by its source id: those of features, with its labels' and its
   * raster's when asked (a raster entry has only the last). */
  #layerIds(id, { labels = false, raster = false } = {}) {
    const ids = [`${id}-fill`, `${id}-line`, `${id}-circle`, `${id}-points`];
    return [...ids, ...(labels ? [`${id}-label`] : []), ...(raster ? [`${id}-raster`] : [])];
  }

  #addLayers(id, kind, style, before = undefined) {
    const paint = paintOf(style, kind);
    const is = (...types) => ["in", ["geometry-type"], ["literal", types]];
    const polygons = is("Polygon", "MultiPolygon");
    const lines = is("LineString", "MultiLineString", "Polygon", "MultiPolygon");
    const add = (layer) => this.map.style.addLayer(layer, before, UNCHECKED);
    add({ id: `${id}-fill`, type: "fill", source: id, filter: polygons, paint: paint.fill });
    add({
      id: `${id}-line`, type: "line", source: id, filter: lines, paint: paint.line,
      layout: { "line-join": "round", "line-cap": "round" },
    });
    add({
      id: `${id}-circle`, type: "circle", source: id, filter: is("Point", "MultiPoint"),
      paint: { ...paint.circle, "circle-stroke-color": "#ffffff", "circle-stroke-width": 1 },
    });
    this.#addLabelLayer(id, style, before);
  }

  /** An entry's label layer (its text at opacity 0 until #applyStyle draws it). */
  #addLabelLayer(id, style, before = undefined) {
    const labels = labelsOf(style, this.language);
    const paint = paintOf(style);
    this.map.style.addLayer({
      id: `${id}-label`, type: "symbol", source: id, minzoom: labels.minzoom, filter: labels.filter,
      layout: {
        "text-field": labels.field, "text-font": ["Noto Sans"], "text-size": 11, "text-offset": [0, 1.1],
        "text-anchor": "top", "text-max-width": 10, "text-optional": true,
      },
      paint: { ...paint.label, "text-color": this.labelColours.text, "text-halo-color": this.labelColours.halo, "text-halo-width": 1.4 },
    }, before, UNCHECKED);
  }

  /**
   * Give an entry drawn by points.js its labels once they would show: it is visible, has
   * features to label, and the map is at their zoom. Its GeoJSON source (the worker's
   * tiling, which points.js spares the first drawing) is added then, with the label layer
   * just above the points.
   */
  #labelSource(entry_id) {
    const entry = this.entries.get(entry_id);
    if (!entry?.points || !entry.visible) return;
    const id = `entry-${entry_id}`;
    if (this.map.getLayer(`${id}-label`)) return;
    const labels = labelsOf(entry.style, this.language);
    if (this.map.getZoom() < labels.minzoom) return;
    // Whether any feature has the property labelled, looked for once per entry version.
    const property = entry.style.label_by || "name";
    entry.labelled ??= new Map();
    if (!entry.labelled.has(property)) {
      entry.labelled.set(property, entry.data.features.some((f) => propertyOf(f.properties, property) !== null));
    }
    if (!entry.labelled.get(property)) return;
    try {
      if (!this.map.getSource(id)) this.#addSource(id, entry.data);
      this.#addLabelLayer(id, entry.style, this.#above(entry.points.id));
    } catch {
      // The style is being replaced (a lost WebGL context restored): once it is idle again.
      this.map.once("idle", () => this.#labelSource(entry_id));
      return;
    }
    this.#applyStyle(entry_id);
  }

  /** Draw an entry as its display state and style say. */
  #applyStyle(entry_id) {
    const entry = this.entries.get(entry_id);
    const id = `entry-${entry_id}`;
    if (entry?.raster && this.map.getLayer(`${id}-raster`)) {
      // Hidden at opacity 0, as features are.
      for (const [name, value] of Object.entries(rasterPaintOf(entry.style, entry.visible))) {
        if (name.endsWith("-opacity") || name.endsWith("-transition")) this.map.setPaintProperty(`${id}-raster`, name, value);
      }
      this.onStyled(entry_id);
      return;
    }
    if (!entry) return;
    // A hidden entry is drawn at opacity 0, which MapLibre skips drawing, rather than with
    // visibility "none": showing a layer again after that re-lays out every tile of its
    // source in the worker (1.2 s for 100,000 points here), a paint change does not.
    const paint = paintOf(entry.visible ? entry.style : { ...entry.style, opacity: 0 }, entry.kind);
    if (entry.points) {
      entry.points.visible = entry.visible;
      entry.points.setStyle(entry.style);
      this.map.triggerRepaint();
      this.#labelSource(entry_id);
      if (this.map.getLayer(`${id}-label`)) this.#styleLabels(entry, id, paint);
      this.onStyled(entry_id);
      return;
    }
    if (!this.map.getLayer(`${id}-fill`)) return;
    try {
      for (const [layer, props] of [["fill", paint.fill], ["line", paint.line], ["circle", paint.circle]]) {
        for (const [name, value] of Object.entries(props)) this.map.setPaintProperty(`${id}-${layer}`, name, value);
      }
      this.map.setPaintProperty(`${id}-circle`, "circle-stroke-width", entry.visible ? 1 : 0);
      this.#styleLabels(entry, id, paint);
      this.onStyled(entry_id);
    } catch (error) {
      console.warn("style not applied", error);
    }
  }

  /** An entry's label layer as its style says (`paint`: paintOf's, at opacity 0 if hidden). */
  #styleLabels(entry, id, paint) {
    for (const [name, value] of Object.entries(paint.label)) this.map.setPaintProperty(`${id}-label`, name, value);
    // Symbol layout changes re-lay out the layer's tiles: made only when something changed.
    const labels = labelsOf(entry.style, this.language);
    const label = `${id}-label`;
    const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
    if (!same(this.map.getLayoutProperty(label, "text-field"), labels.field)) this.map.setLayoutProperty(label, "text-field", labels.field);
    if (!same(this.map.getFilter(label), labels.filter)) this.map.setFilter(label, labels.filter);
    if (this.map.getLayer(label).minzoom !== labels.minzoom) this.map.setLayerZoomRange(label, labels.minzoom, 24);
    this.#showLabels(entry.entry_id);
  }

  /**
   * Lay out a hidden entry's labels or not. Its text is already at opacity 0; "visibility"
   * also keeps its labels from taking the place of others, but changing it re-lays out every
   * tile of the entry's source (0.3 s for 100,000 points here). Out of the labels' zoom range
   * nothing is laid out either way, so the change waits for a zoom that brings them in.
   */
  #showLabels(entry_id) {
    const entry = this.entries.get(entry_id);
    const label = `entry-${entry_id}-label`;
    const layer = this.map.getLayer(label);
    if (!entry || !layer) return;
    const shown = entry.visible ? "visible" : "none";
    if (this.map.getLayoutProperty(label, "visibility") === shown) return;
    if (this.map.getZoom() < layer.minzoom) return;
    this.map.setLayoutProperty(label, "visibility", shown);
  }

  /** Whether the layers on the map are not in their entries' style order (a new entry is
   * added on top, which is its place unless an earlier one was moved above it). */
  #outOfOrder() {
    const stack = this.map.getLayersOrder().filter((id) => id.startsWith("entry-") && /-(fill|raster|points)$/.test(id));
    const orders = stack.map((id) => this.entries.get(id.slice(6).replace(/-(fill|raster|points)$/, ""))?.style.order ?? 0);
    return orders.some((order, i) => i > 0 && order < orders[i - 1]);
  }

  /** Put the entries' layers in their style order, the highest on top. */
  #restack() {
    const ordered = [...this.entries.values()].sort((a, b) => (a.style.order ?? 0) - (b.style.order ?? 0));
    for (const entry of ordered) {
      for (const layer of this.#layerIds(`entry-${entry.entry_id}`, { labels: true, raster: true })) {
        if (this.map.getLayer(layer)) this.map.moveLayer(layer, this.map.getLayer(ON_TOP) ? ON_TOP : undefined);
      }
    }
  }

  /** Draw every entry's name labels in `language` (null: names as signed). */
  setLanguage(language) {
    this.language = language;
    for (const entryId of this.entries.keys()) this.#applyStyle(entryId);
  }

  /** The name a feature is labelled with in the current language. */
  labelName(properties) {
    return (this.language && properties[`name:${this.language}`]) || properties.name;
  }

  /** Whether the map shows an entry (a hidden one is still in the map, drawn at opacity 0). */
  shown(entry_id) {
    return this.entries.get(entry_id)?.visible ?? false;
  }

  #popup(event) {
    const feature = this.featureAt(event.point);
    if (!feature) return;
    const { entryId, properties } = feature;
    const box = document.createElement("div");
    box.className = "popup";
    const title = document.createElement("strong");
    title.textContent = this.labelName(properties) || properties.name || this.entries.get(entryId)?.label || entryId;
    box.append(title);
    const rows = Object.entries(properties).filter(([k]) => k !== "name").slice(0, 8);
    for (const [key, value] of rows) {
      const row = document.createElement("div");
      row.textContent = `${key}: ${readable(value)}`;
      box.append(row);
    }
    new maplibregl.Popup({ maxWidth: "280px" }).setLngLat(event.lngLat).setDOMContent(box).addTo(this.map);
  }

  /**
   * The feature drawn on top at `point` (pixels) among the shown entries, as {entryId,
   * index, properties}, or null: MapLibre's layers are asked, and points.js's layers look
   * for themselves; the entry higher in the style order wins.
   */
  featureAt(point, only = null) {
    const shown = [...this.entries.values()].filter((e) => e.visible && (only === null || e.entry_id === only));
    const layers = shown.flatMap((e) => this.#layerIds(`entry-${e.entry_id}`)).filter((l) => this.map.getLayer(l) && !l.endsWith("-points"));
    const [rendered] = layers.length ? this.map.queryRenderedFeatures(point, { layers }) : [];
    let found = rendered ? {
      entryId: rendered.source.replace(/^entry-/, ""), index: rendered.id, properties: rendered.properties,
    } : null;
    for (const entry of shown) {
      if (!entry.points || (found && (this.entries.get(found.entryId)?.style.order ?? 0) > (entry.style.order ?? 0))) continue;
      const index = entry.points.pick(point);
      if (index >= 0) found = { entryId: entry.entry_id, index, properties: entry.data.features[index].properties || {} };
    }
    return found;
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

/** What most of a collection's features are, for the legend's swatch: point, line or area. */
export function geometryOf(collection) {
  const counts = { point: 0, line: 0, area: 0 };
  for (const feature of (collection?.features ?? []).slice(0, 1000)) {
    const type = feature.geometry?.type || "";
    if (type.endsWith("Point")) counts.point++;
    else if (type.endsWith("LineString")) counts.line++;
    else if (type.endsWith("Polygon")) counts.area++;
  }
  return Object.entries(counts).sort((a, b) => b[1] - a[1])[0][0];
}

/** Whether every feature of a FeatureCollection is a point or points (and there is one). */
export function onlyPoints(collection) {
  const features = collection?.features ?? [];
  return features.length > 0 && features.every((f) => f.geometry?.type === "Point" || f.geometry?.type === "MultiPoint");
}

/** A same-origin path under this server's API as an absolute URL (MapLibre loads images
 * from it), or null for anything else. */
function ownApiUrl(path) {
  if (typeof path !== "string" || !/^\/api\/(chats|new-chat)\//.test(path)) return null;
  return new URL(path, location.origin).href;
}

/** A raster part's [west, south, east, north]: its own bbox, else the one around its
 * picture's corners; null when it has neither. */
function rasterBox({ bbox, raster }) {
  if (Array.isArray(bbox) && bbox.length === 4) return bbox;
  const corners = raster?.coordinates;
  return Array.isArray(corners) && corners.length === 4 ? boxOfCorners(corners) : null;
}

/** The [west, south, east, north] around an image's four [lon, lat] corners. */
function boxOfCorners(corners) {
  const lons = corners.map((c) => c[0]);
  const lats = corners.map((c) => c[1]);
  return [Math.min(...lons), Math.min(...lats), Math.max(...lons), Math.max(...lats)];
}

/** `box` grown to take in `other` ([west, south, east, north] each; either may be null). */
function grow(box, other) {
  if (!Array.isArray(other) || other.length !== 4) return box;
  if (!box) return [...other];
  return [Math.min(box[0], other[0]), Math.min(box[1], other[1]), Math.max(box[2], other[2]), Math.max(box[3], other[3])];
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
