// An entry's style as MapLibre paint, and as a legend. The style is the server's
// (geomint.state.styles, carried by entry and display parts): the page draws it and invents
// nothing, so a reload, the terminal and an export see the same colours.

import { el, formatNumber } from "./util.js";

/** Drawn when a part carries no style (a part from before styles were held by the server). */
export const FALLBACK_STYLE = {
  color: "#495057", opacity: 1, width: 2, radius: null, color_by: null, size_by: null, label_by: null, order: 0,
};
const SAFE_COLOUR = /^(#[0-9a-f]{3,8}|[a-z]{3,20})$/i;
/** Fills are drawn at this share of the layer's opacity, so what lies beneath shows. */
const FILL_SHARE = 0.25;

function colour(value, fallback) {
  return typeof value === "string" && SAFE_COLOUR.test(value) ? value : fallback;
}

/** The feature colour: one colour, or the classes of `color_by` with "other" for the rest. */
export function colourOf(style) {
  const base = colour(style.color, FALLBACK_STYLE.color);
  const by = style.color_by;
  if (!by || !Array.isArray(by.classes) || !by.classes.length) return base;
  const value = ["get", by.property];
  const other = colour(by.classes.find((c) => c.other)?.color, base);
  const classes = by.classes.filter((c) => !c.other);
  if (!classes.length) return other;
  if (by.kind === "graduated") {
    const steps = ["step", value, colour(classes[0].color, base)];
    for (const c of classes.slice(1)) steps.push(c.low, colour(c.color, base));
    return ["case", ["==", ["typeof", value], "number"], steps, other];
  }
  // Match on text: a class's value may be a number or text, and MapLibre's labels must be
  // one literal each (two values that read the same are drawn as the first).
  const seen = new Set();
  const match = ["match", ["to-string", value]];
  for (const c of classes) {
    const label = String(c.value);
    if (seen.has(label)) continue;
    seen.add(label);
    match.push(label, colour(c.color, base));
  }
  return seen.size ? [...match, other] : other;
}

/** A size in pixels from `size_by`, or `fixed` when the style sizes nothing by data. */
function sizeOf(style, fixed) {
  const by = style.size_by;
  if (!by) return fixed;
  if (!(by.high > by.low)) return by.smallest;
  return ["interpolate", ["linear"], ["to-number", ["get", by.property], by.low],
    by.low, by.smallest, by.high, by.largest];
}

/** A circle's radius in pixels at `zoom` when the style fixes none: 2.5 at zoom 11 and
 * below, 6 at 16 and above, linear between (MapLibre's circle layer is given the same). */
export function circleRadiusAt(zoom) {
  return 2.5 + (6 - 2.5) * Math.min(1, Math.max(0, (zoom - 11) / 5));
}

const CIRCLE_RADIUS = ["interpolate", ["linear"], ["zoom"], 11, 2.5, 16, 6];

/**
 * The style's colour of a feature as a function of its properties, giving [r, g, b, a]
 * bytes: what `colourOf`'s expression makes MapLibre draw, for the page's own point layer
 * (points.js). The two are kept side by side so they change together.
 */
export function colourTable(style) {
  const base = colour(style.color, FALLBACK_STYLE.color);
  const bytesOf = rgbaBytes();
  const by = style.color_by;
  const fixed = bytesOf(base);
  if (!by || !Array.isArray(by.classes) || !by.classes.length) return () => fixed;
  const other = bytesOf(colour(by.classes.find((c) => c.other)?.color, base));
  const classes = by.classes.filter((c) => !c.other);
  if (!classes.length) return () => other;
  const property = by.property;
  if (by.kind === "graduated") {
    const steps = classes.map((c, i) => [i === 0 ? -Infinity : c.low, bytesOf(colour(c.color, base))]);
    return (properties) => {
      const value = propertyOf(properties, property);
      if (typeof value !== "number") return other;
      let found = steps[0][1];
      for (const [low, bytes] of steps) if (value >= low) found = bytes;
      return found;
    };
  }
  const byText = new Map();
  for (const c of classes) if (!byText.has(String(c.value))) byText.set(String(c.value), bytesOf(colour(c.color, base)));
  return (properties) => byText.get(asText(propertyOf(properties, property))) ?? other;
}

/** A feature's size in pixels by `size_by` as a function of its properties, or null when
 * the style sizes nothing by data (what `sizeOf`'s expression makes MapLibre draw). */
export function sizeTable(style) {
  const by = style.size_by;
  if (!by) return null;
  if (!(by.high > by.low)) return () => by.smallest;
  const span = by.high - by.low;
  return (properties) => {
    const value = asNumber(propertyOf(properties, by.property), by.low);
    const t = Math.min(1, Math.max(0, (value - by.low) / span));
    return by.smallest + t * (by.largest - by.smallest);
  };
}

/** A feature's property as MapLibre's `get` reads it: null when it has none, and a name its
 * object inherits ("constructor") read as the inherited value, as MapLibre does (the parity
 * test in tests/e2e/test_web_points.py checks both). */
export function propertyOf(properties, name) {
  const value = properties?.[name];
  return value === undefined ? null : value;
}

/** MapLibre's `to-string` of a property value: "" for none, JSON for objects. */
function asText(value) {
  if (value === null || value === undefined) return "";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** MapLibre's `to-number` of a property value: JavaScript's Number of it (0 for none, for
 * "" and for false; 5 for [5]), `fallback` where that is not a number. */
function asNumber(value, fallback) {
  if (value === null || value === undefined) return 0;
  const number = Number(value);
  return Number.isNaN(number) ? fallback : number;
}

/** A function from a colour (checked by `colour`) to its [r, g, b, a] bytes. The browser
 * parses it (named colours too), once per colour. */
function rgbaBytes() {
  const context = document.createElement("canvas").getContext("2d", { willReadFrequently: true });
  const known = new Map();
  return (css) => {
    if (!known.has(css)) {
      context.clearRect(0, 0, 1, 1);
      context.fillStyle = "#000000";
      context.fillStyle = css;
      context.fillRect(0, 0, 1, 1);
      known.set(css, Uint8Array.from(context.getImageData(0, 0, 1, 1).data));
    }
    return known.get(css);
  };
}

/** A style's opacity, from 0 to 1 (1 when it sets none). */
export function opacityOf(style) {
  const value = style?.opacity;
  return Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 1;
}

/** Paint properties of each of an entry's layers (fill, line, circle, label). */
export function paintOf(style, kind) {
  const s = style || FALLBACK_STYLE;
  const opacity = opacityOf(s);
  const color = colourOf(s);
  // Hidden and shown at once: MapLibre fades a paint change over 300 ms by default, and a
  // person who unticks a layer expects it gone (the map is idle again one frame later).
  const now = { duration: 0, delay: 0 };
  return {
    fill: {
      "fill-color": color, "fill-opacity": (kind === "ranges" ? 0.7 : 1) * FILL_SHARE * opacity,
      "fill-opacity-transition": now,
    },
    line: {
      "line-color": color, "line-opacity": opacity, "line-width": sizeOf(s, s.width || 2),
      "line-opacity-transition": now,
    },
    circle: {
      "circle-color": color,
      "circle-opacity": opacity,
      "circle-stroke-opacity": opacity,
      "circle-radius": sizeOf(s, Number.isFinite(s.radius) ? s.radius : CIRCLE_RADIUS),
      "circle-opacity-transition": now,
      "circle-stroke-opacity-transition": now,
      "circle-stroke-width-transition": now,
    },
    label: { "text-opacity": opacity, "text-opacity-transition": now },
  };
}

/**
 * What an entry's label layer shows: the `label_by` property's value on every feature at
 * every zoom, or else, from zoom 14, the names of its points (in `language` where a place
 * has a name in it: `name:<language>`, else its `name`).
 */
export function labelsOf(style, language = null) {
  const property = style?.label_by;
  if (property) return { field: ["to-string", ["get", property]], filter: ["has", property], minzoom: 0 };
  const name = language ? ["coalesce", ["get", `name:${language}`], ["get", "name"]] : ["get", "name"];
  const points = ["in", ["geometry-type"], ["literal", ["Point", "MultiPoint"]]];
  return { field: name, filter: ["all", points, ["has", "name"]], minzoom: 14 };
}

/**
 * The legend of one entry: a swatch of its colour, or one row per class of `color_by`
 * with its count, and a line saying what sizes and labels come from.
 */
export function legendOf(style, { geometry = "point" } = {}) {
  const s = style || FALLBACK_STYLE;
  const box = el("div", { class: "legend" });
  const by = s.color_by;
  if (by && Array.isArray(by.classes)) {
    box.append(el("p", { class: "legend-title", text: `${by.property} (${by.kind === "graduated" ? "graduated" : "categories"})` }));
    box.append(el("ul", { class: "legend-classes" }, by.classes.map((c) => el("li", {},
      swatch(colour(c.color, s.color), geometry),
      el("span", { class: "legend-value", text: classText(c, by.kind) }),
      el("span", { class: "legend-count", text: formatNumber(c.count) })))));
  }
  if (s.size_by) {
    const z = s.size_by;
    box.append(el("p", { class: "legend-note", text: `size by ${z.property}: ${formatNumber(z.low)} to ${formatNumber(z.high)}` }));
  }
  if (s.label_by) box.append(el("p", { class: "legend-note", text: `labels: ${s.label_by}` }));
  return box.childElementCount ? box : null;
}

function classText(c, kind) {
  if (c.other) return "other";
  if (kind === "graduated") return `${formatNumber(c.low)} – ${formatNumber(c.high)}`;
  return String(c.value);
}

/** A small sample of a colour shaped like the geometry it colours (point, line or area). */
export function swatch(color, geometry = "point") {
  const node = el("span", { class: `swatch swatch-${geometry}`, "aria-hidden": "true" });
  // Through the CSSOM: the page's CSP refuses style attributes.
  node.style.setProperty("--swatch", colour(color, FALLBACK_STYLE.color));
  return node;
}

/** The colours a raster's ramp runs through when its legend has not said (viridis). */
const RAMP = ["#440154", "#482878", "#3e4a89", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6dcd59", "#b4de2c", "#fde725"];
const HEX = /^#[0-9a-f]{6}$/i;

/** Paint of a raster entry's layer: its opacity (0 when hidden), cells drawn sharp. */
export function rasterPaintOf(style, visible = true) {
  const opacity = opacityOf(style);
  return {
    "raster-opacity": visible ? opacity : 0,
    "raster-opacity-transition": { duration: 0, delay: 0 },
    "raster-resampling": "nearest",
    "raster-fade-duration": 0,
  };
}

/** A strip of a raster's colour ramp, low on the left (`palette`: hex colours). */
export function ramp(palette, className = "legend-ramp") {
  const colours = Array.isArray(palette) && palette.length > 1 && palette.every((c) => HEX.test(c)) ? palette : RAMP;
  const node = el("span", { class: className, "aria-hidden": "true" });
  // Through the CSSOM: the page's CSP refuses style attributes.
  node.style.setProperty("--ramp", `linear-gradient(to right, ${colours.join(", ")})`);
  return node;
}

/**
 * The legend of a raster entry: what its values are, its ramp with the values at its ends
 * (the 2nd and 98th percentiles drawn: values beyond take the end colours), and that cells
 * with no data are not drawn. `legend` is the server's (raster.json), null until it came.
 */
export function rasterLegendOf(raster) {
  const summary = raster?.summary || {};
  const legend = raster?.legend;
  const title = summary.label || "cell values";
  const band = legend && legend.bands > 1 ? ` (band ${legend.band} of ${legend.bands})` : "";
  const range = legend?.range;
  return el("div", { class: "legend legend-raster" },
    el("p", { class: "legend-title", text: `${title}${band}` }),
    ramp(legend?.palette),
    el("p", { class: "legend-range" },
      el("span", { class: "legend-low", text: range ? formatNumber(range[0]) : "low" }),
      el("span", { class: "legend-high", text: range ? formatNumber(range[1]) : "high" })),
    el("p", { class: "legend-note", text: range
      ? `colours from the ${ordinal(legend.stretch?.[0] ?? 2)} to the ${ordinal(legend.stretch?.[1] ?? 98)} percentile; no data is clear`
      : "no data is clear" }));
}

function ordinal(n) {
  const v = Math.round(n);
  const tail = v % 100 >= 11 && v % 100 <= 13 ? "th" : ({ 1: "st", 2: "nd", 3: "rd" }[v % 10] || "th");
  return `${v}${tail}`;
}
