// The feature picked in the attribute table, outlined on the map. It is drawn from a
// source of its own (a copy of that one feature) rather than by feature-state on the entry's
// layers, so it shows whatever style those layers have and stays on top of them.

export const HIGHLIGHT_SOURCE = "table-highlight";
const LAYERS = [
  {
    id: `${HIGHLIGHT_SOURCE}-fill`, type: "fill",
    filter: ["in", ["geometry-type"], ["literal", ["Polygon", "MultiPolygon"]]],
    paint: { "fill-color": "#ffd43b", "fill-opacity": 0.35 },
  },
  {
    id: `${HIGHLIGHT_SOURCE}-line`, type: "line",
    filter: ["!", ["in", ["geometry-type"], ["literal", ["Point", "MultiPoint"]]]],
    paint: { "line-color": "#f08c00", "line-width": 4 },
    layout: { "line-join": "round", "line-cap": "round" },
  },
  {
    id: `${HIGHLIGHT_SOURCE}-circle`, type: "circle",
    filter: ["in", ["geometry-type"], ["literal", ["Point", "MultiPoint"]]],
    paint: {
      "circle-radius": 9, "circle-color": "#ffd43b", "circle-opacity": 0.6,
      "circle-stroke-color": "#f08c00", "circle-stroke-width": 3,
    },
  },
];
const EMPTY = { type: "FeatureCollection", features: [] };

export class Highlight {
  constructor(map) {
    this.map = map;
  }

  /** Outline `feature` (a GeoJSON Feature), in place of whatever was outlined before. */
  show(feature) {
    this.#draw({ type: "FeatureCollection", features: [{ type: "Feature", properties: {}, geometry: feature.geometry }] });
  }

  clear() {
    if (this.map.getSource(HIGHLIGHT_SOURCE)) this.#draw(EMPTY);
  }

  #draw(data) {
    const source = this.map.getSource(HIGHLIGHT_SOURCE);
    if (source) source.setData(data);
    else this.map.addSource(HIGHLIGHT_SOURCE, { type: "geojson", data, attribution: "" });
    // Layers added since (a new entry) would cover the outline: lift it back on top.
    for (const layer of LAYERS) {
      if (this.map.getLayer(layer.id)) this.map.moveLayer(layer.id);
      else this.map.addLayer({ ...layer, source: HIGHLIGHT_SOURCE });
    }
  }
}
