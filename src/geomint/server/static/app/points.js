// A large layer of points drawn by the page's own WebGL, as kepler.gl and deck.gl draw one:
// one buffer of positions, colours and sizes on the GPU, a few draw calls a frame.
//
// Why not MapLibre's circle layer: a GeoJSON source is copied to MapLibre's worker, indexed,
// cut into tiles and each tile's circles laid out and written again as a vector tile, all
// before the first frame (2.2-2.5 s for 100,000 points on this project's 2-core machine,
// docs/performance.md), and each frame draws every circle as two triangles through a shader
// of many data-driven inputs. Points need none of that: a point has no extent to cut, and
// a circle is one GL point. What MapLibre's layer did besides drawing is done here from the
// same style: colours and sizes by property, opacity, the white ring, the flash when a
// result arrives, and picking the point under a click. Labels, and map code that styles the
// entry's own source, still go through MapLibre (map.js adds the source when they are
// needed).

import { FALLBACK_STYLE, circleRadiusAt, colourTable, opacityOf, sizeTable } from "./styles.js";

const VERTEX = `
uniform mat4 u_matrix;
uniform float u_centre_w;
uniform float u_radius;
uniform float u_stroke;
uniform float u_pixel_ratio;
attribute vec2 a_offset;
attribute vec4 a_color;
attribute float a_radius;
varying vec4 v_color;
varying float v_radius;
varying float v_extent;
void main() {
  gl_Position = u_matrix * vec4(a_offset, 0.0, 1.0);
  v_radius = a_radius >= 0.0 ? a_radius : u_radius;
  // The ring and a pixel for the smoothed edge are drawn outside the radius.
  v_extent = v_radius + u_stroke + 1.0;
  // On a tilted map a far circle is drawn smaller, as MapLibre's circles ("circle-pitch-scale":
  // "map"): by the distance to the view's centre over the distance to the point.
  gl_PointSize = 2.0 * v_extent * u_pixel_ratio * u_centre_w / gl_Position.w;
  v_color = a_color;
}`;

const FRAGMENT = `
precision highp float;
uniform float u_stroke;
uniform float u_opacity;
uniform vec4 u_stroke_color;
varying vec4 v_color;
varying float v_radius;
varying float v_extent;
void main() {
  float d = length(gl_PointCoord - 0.5) * 2.0 * v_extent;
  float outside = clamp(v_radius + u_stroke + 0.5 - d, 0.0, 1.0);
  if (outside <= 0.0) discard;
  float inside = u_stroke > 0.0 ? clamp(v_radius + 0.5 - d, 0.0, 1.0) : 1.0;
  vec4 color = mix(u_stroke_color, v_color, inside);
  float alpha = color.a * outside * u_opacity;
  gl_FragColor = vec4(color.rgb * alpha, alpha);
}`;

/** Bytes of one point in the buffer: x, y (float32 offsets), RGBA (bytes), radius (float32). */
const STRIDE = 16;
/** Points are drawn in cells of a 64 x 64 grid over the world, each from its own centre. */
const CELLS = 64;

/**
 * A MapLibre custom layer drawing every point of a FeatureCollection of points. Positions
 * are kept as float32 offsets in Web Mercator units from the centre of their cell of a 64 x
 * 64 grid over the world, and each cell is drawn with its centre put into the matrix, which
 * is multiplied in float64: a float32 offset of at most 1/128 of the world is within a
 * quarter of a pixel of the point at zoom 20 (whole-world coordinates would be off by
 * hundreds). The points are kept in cell order, each cell in feature order.
 */
export class PointLayer {
  constructor(id, collection, style) {
    this.id = id;
    this.type = "custom";
    this.renderingMode = "2d";
    this.visible = true;
    this.flashing = false;
    this.setData(collection);
    this.setStyle(style);
  }

  /** Replace the points (a new version of the entry). */
  setData(collection) {
    const features = collection.features;
    // Each feature's points: a MultiPoint draws all of its own, each picked as the feature.
    let count = 0;
    for (const f of features) count += f.geometry.type === "Point" ? 1 : f.geometry.coordinates.length;
    const x = new Float64Array(count);
    const y = new Float64Array(count);
    const owner = new Int32Array(count);
    const cell = new Int32Array(count);
    const starts = new Int32Array(CELLS * CELLS + 1); // counts, then where each cell starts
    let i = 0;
    for (let index = 0; index < features.length; index++) {
      const g = features[index].geometry;
      for (const [lon, lat] of g.type === "Point" ? [g.coordinates] : g.coordinates) {
        x[i] = (180 + lon) / 360;
        y[i] = mercatorY(lat);
        owner[i] = index;
        cell[i] = gridCell(y[i]) * CELLS + gridCell(x[i]);
        starts[cell[i] + 1]++;
        i++;
      }
    }
    // A counting sort by cell keeps each cell's points in feature order.
    for (let c = 0; c < CELLS * CELLS; c++) starts[c + 1] += starts[c];
    const next = starts.slice(0, CELLS * CELLS);
    const order = new Int32Array(count);
    for (let k = 0; k < count; k++) order[next[cell[k]]++] = k;
    this.x = new Float64Array(count);
    this.y = new Float64Array(count);
    this.owner = new Int32Array(count);
    for (let p = 0; p < count; p++) {
      this.x[p] = x[order[p]];
      this.y[p] = y[order[p]];
      this.owner[p] = owner[order[p]];
    }
    this.cells = [];
    for (let c = 0; c < CELLS * CELLS; c++) {
      if (starts[c + 1] === starts[c]) continue;
      const row = Math.floor(c / CELLS);
      const column = c % CELLS;
      this.cells.push({ first: starts[c], count: starts[c + 1] - starts[c], centre: [(column + 0.5) / CELLS, (row + 0.5) / CELLS] });
    }
    this.features = features;
    this.count = count;
    this.bytes = new ArrayBuffer(count * STRIDE);
    const offsets = new Float32Array(this.bytes);
    for (const { first, count: n, centre } of this.cells) {
      for (let k = first; k < first + n; k++) {
        offsets[k * 4] = this.x[k] - centre[0];
        offsets[k * 4 + 1] = this.y[k] - centre[1];
      }
    }
    this.styled = null; // the style the buffer's colours and sizes were written for
    this.dirty = true;
    this.drawn = false; // whether a frame has drawn these points (the benchmark waits for it)
    this.drawnWith = null; // the matrix and world copies of the last frame, which clicks use
  }

  /** Draw with `style` (the server's, see styles.js): colours and sizes are written again
   * only when what they come from changed, opacity is a uniform. */
  setStyle(style) {
    this.style = style || FALLBACK_STYLE;
    const key = JSON.stringify([this.style.color, this.style.color_by, this.style.size_by]);
    if (key === this.styled) return;
    this.styled = key;
    const colours = colourTable(this.style);
    const sizes = sizeTable(this.style);
    const bytes = new Uint8Array(this.bytes);
    const floats = new Float32Array(this.bytes);
    for (let k = 0; k < this.count; k++) {
      const properties = this.features[this.owner[k]].properties || {};
      bytes.set(colours(properties), k * STRIDE + 8);
      floats[k * 4 + 3] = sizes ? sizes(properties) : -1;
    }
    this.sized = Boolean(sizes);
    this.dirty = true;
  }

  onAdd(map, gl) {
    // Added again after a basemap switch (map.js's styleReplaced): what the last add made goes.
    if (this.program) this.onRemove(map, gl);
    this.map = map;
    this.program = program(gl, VERTEX, FRAGMENT);
    this.buffer = gl.createBuffer();
    this.locations = {};
    for (const name of ["u_matrix", "u_centre_w", "u_radius", "u_stroke", "u_pixel_ratio", "u_opacity", "u_stroke_color"]) {
      this.locations[name] = gl.getUniformLocation(this.program, name);
    }
    for (const name of ["a_offset", "a_color", "a_radius"]) this.locations[name] = gl.getAttribLocation(this.program, name);
    this.dirty = true;
  }

  onRemove(_map, gl) {
    gl.deleteBuffer(this.buffer);
    gl.deleteProgram(this.program);
  }

  render(gl, options) {
    const opacity = this.visible ? opacityOf(this.style) : 0;
    if (opacity === 0 || !this.count) return;
    gl.useProgram(this.program);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.buffer);
    if (this.dirty) {
      gl.bufferData(gl.ARRAY_BUFFER, this.bytes, gl.STATIC_DRAW);
      this.dirty = false;
    }
    const at = this.locations;
    gl.enableVertexAttribArray(at.a_offset);
    gl.vertexAttribPointer(at.a_offset, 2, gl.FLOAT, false, STRIDE, 0);
    gl.enableVertexAttribArray(at.a_color);
    gl.vertexAttribPointer(at.a_color, 4, gl.UNSIGNED_BYTE, true, STRIDE, 8);
    gl.enableVertexAttribArray(at.a_radius);
    gl.vertexAttribPointer(at.a_radius, 1, gl.FLOAT, false, STRIDE, 12);
    const zoom = this.map.getZoom();
    const fixed = Number.isFinite(this.style.radius) ? this.style.radius : circleRadiusAt(zoom);
    gl.uniform1f(at.u_radius, fixed);
    gl.uniform1f(at.u_stroke, this.flashing ? 3 : 1);
    gl.uniform4fv(at.u_stroke_color, this.flashing ? [1, 0.831, 0.231, 1] : [1, 1, 1, 1]);
    gl.uniform1f(at.u_pixel_ratio, this.map.getPixelRatio());
    gl.uniform1f(at.u_opacity, opacity);
    gl.enable(gl.BLEND);
    gl.blendFunc(gl.ONE, gl.ONE_MINUS_SRC_ALPHA);
    gl.disable(gl.DEPTH_TEST);
    gl.disable(gl.STENCIL_TEST);
    const matrix = Float64Array.from(options.defaultProjectionData.mainMatrix);
    const wraps = wrapsInView(this.map);
    const centreW = clipW(matrix, this.map.getCenter());
    gl.uniform1f(at.u_centre_w, centreW);
    // A copy of the world either side is drawn where the view shows one (as MapLibre does).
    for (const wrap of wraps) {
      for (const { first, count, centre } of this.cells) {
        gl.uniformMatrix4fv(at.u_matrix, false, translated(matrix, centre[0] + wrap, centre[1]));
        gl.drawArrays(gl.POINTS, first, count);
      }
    }
    this.drawn = true;
    this.drawnWith = { matrix, wraps, centreW };
    gl.disableVertexAttribArray(at.a_offset);
    gl.disableVertexAttribArray(at.a_color);
    gl.disableVertexAttribArray(at.a_radius);
  }

  /** The index of the feature drawn under `point` (CSS pixels in the map), or -1: the
   * nearest point whose circle (and ring) covers it in the last frame drawn, each point put
   * on the screen with that frame's matrix (so a tilted map and the world's copies are as
   * drawn). Looking at every point takes a few milliseconds for 100,000. */
  pick(point) {
    if (!this.visible || opacityOf(this.style) === 0 || !this.count || !this.drawnWith) return -1;
    const { matrix: m, wraps, centreW } = this.drawnWith;
    const canvas = this.map.getCanvas();
    const width = canvas.clientWidth;
    const height = canvas.clientHeight;
    const fixed = Number.isFinite(this.style.radius) ? this.style.radius : circleRadiusAt(this.map.getZoom());
    const floats = new Float32Array(this.bytes);
    let best = -1;
    let bestDistance = Infinity;
    for (const wrap of wraps) {
      for (let k = 0; k < this.count; k++) {
        const px = this.x[k] + wrap;
        const py = this.y[k];
        const w = m[3] * px + m[7] * py + m[15];
        if (!(w > 0)) continue;
        const sx = ((m[0] * px + m[4] * py + m[12]) / w + 1) * 0.5 * width;
        const sy = (1 - (m[1] * px + m[5] * py + m[13]) / w) * 0.5 * height;
        const radius = ((this.sized ? floats[k * 4 + 3] : fixed) + 1.5) * (centreW / w);
        const distance = (sx - point.x) ** 2 + (sy - point.y) ** 2;
        if (distance <= radius * radius && distance < bestDistance) {
          best = k;
          bestDistance = distance;
        }
      }
    }
    return best < 0 ? -1 : this.owner[best];
  }
}

/** The cell of the 64-cell grid over [0, 1] that a Web Mercator coordinate is in. */
function gridCell(value) {
  return Math.min(CELLS - 1, Math.max(0, Math.floor(value * CELLS)));
}

/** The clip-space w of the map's centre under `matrix` (what sizes are relative to). */
function clipW(matrix, centre) {
  const x = (180 + centre.lng) / 360;
  return matrix[3] * x + matrix[7] * mercatorY(centre.lat) + matrix[15];
}

/** Web Mercator's y of a latitude (0 at the top, 1 at the bottom), as MapLibre's
 * MercatorCoordinate.fromLngLat puts it, the latitude held to what the projection can show
 * (MapLibre's is infinite at the poles). Written out, with x beside its callers, because
 * the class makes an object a point, on the way to drawing 100,000 of them. */
function mercatorY(lat) {
  const clamped = Math.max(-85.051129, Math.min(85.051129, lat));
  return (180 - (180 / Math.PI) * Math.log(Math.tan(Math.PI / 4 + (clamped * Math.PI) / 360))) / 360;
}

/** `matrix` (column-major 4x4) times a translation by (x, y, 0), in float64, as float32. */
function translated(matrix, x, y) {
  const out = new Float32Array(16);
  for (let i = 0; i < 12; i++) out[i] = matrix[i];
  for (let row = 0; row < 4; row++) out[12 + row] = matrix[row] * x + matrix[4 + row] * y + matrix[12 + row];
  return out;
}

/** The world copies the view shows: 0, and -1 or 1 where the view crosses the antimeridian. */
function wrapsInView(map) {
  if (!map.getRenderWorldCopies()) return [0];
  const bounds = map.getBounds();
  const first = Math.floor((bounds.getWest() + 180) / 360);
  const last = Math.floor((bounds.getEast() + 180) / 360);
  const wraps = [];
  for (let wrap = Math.max(first, -2); wrap <= Math.min(last, 2); wrap++) wraps.push(wrap);
  return wraps;
}

function program(gl, vertexSource, fragmentSource) {
  const made = gl.createProgram();
  for (const [type, source] of [[gl.VERTEX_SHADER, vertexSource], [gl.FRAGMENT_SHADER, fragmentSource]]) {
    const shader = gl.createShader(type);
    gl.shaderSource(shader, source);
    gl.compileShader(shader);
    if (!gl.getShaderParameter(shader, gl.COMPILE_STATUS)) throw new Error(`point shader: ${gl.getShaderInfoLog(shader)}`);
    gl.attachShader(made, shader);
  }
  gl.linkProgram(made);
  if (!gl.getProgramParameter(made, gl.LINK_STATUS)) throw new Error(`point shader: ${gl.getProgramInfoLog(made)}`);
  return made;
}
