// The basemap at city zoom over central Helsinki: OpenStreetMap's land and water (the world
// tiles' Natural Earth coast is one straight line there), and labels that read at the opening
// view (zoom 13): the districts' names. The data is static/basemap/helsinki.geojson, written by
// scripts/build_city_basemap.py.

const URL = "/static/basemap/helsinki.geojson";
const ATTRIBUTION = "© OpenStreetMap contributors (ODbL)";
const TEXT = { "text-font": ["Noto Sans"], "text-max-width": 8 };

/** The city's land and water (null if they cannot be had), fetched as the page starts. */
export async function fetchCityLand() {
  const response = await fetch(URL);
  return response.ok ? response.json() : null;
}

/** Land and water, drawn over the world's countries and under everything added after;
 * `land` is what fetchCityLand promised. */
export async function addCityLand(map, land = fetchCityLand()) {
  const data = await land;
  if (!data) return false;
  const [w, s, e, n] = data.bbox;
  const colour = (layer, property, fallback) => {
    try {
      return map.getPaintProperty(layer, property) ?? fallback;
    } catch {
      return fallback;
    }
  };
  map.addSource("city", { type: "geojson", data, attribution: ATTRIBUTION });
  map.addSource("city-box", {
    type: "geojson",
    data: { type: "Polygon", coordinates: [[[w, s], [e, s], [e, n], [w, n], [w, s]]] },
  });
  map.addLayer({
    id: "city-water", type: "fill", source: "city-box", minzoom: 8,
    paint: { "fill-color": colour("background", "background-color", "#dfe8ee") },
  });
  map.addLayer({
    id: "city-land", type: "fill", source: "city", minzoom: 8,
    filter: ["==", ["geometry-type"], "Polygon"],
    paint: { "fill-color": colour("countries-fill", "fill-color", "#f7f5f0"), "fill-antialias": false },
  });
  map.addLayer({
    id: "city-coast", type: "line", source: "city", minzoom: 8,
    filter: ["==", ["geometry-type"], "Polygon"],
    paint: { "line-color": "#b9c6cf", "line-width": ["interpolate", ["linear"], ["zoom"], 10, 0.3, 16, 1.2] },
  });
  return true;
}

/**
 * District names from zoom 12 to 16, under the street names map.js draws from 15. Main streets
 * are not named at 13: in the bundled extract each street is many OSM ways of 20-200 m, too
 * short at that zoom (about 10 m a pixel) to carry a name along the line.
 */
export function addCityLabels(map) {
  const halo = { "text-halo-color": "#ffffff", "text-halo-width": 1.6 };
  if (map.getSource("city")) {
    map.addLayer({
      id: "city-name", type: "symbol", source: "city", minzoom: 8, maxzoom: 12.5,
      filter: ["==", ["get", "place"], "city"],
      layout: { ...TEXT, "text-field": ["get", "name"], "text-size": 15 },
      paint: { "text-color": "#1d2329", ...halo },
    });
    map.addLayer({
      id: "district-names", type: "symbol", source: "city", minzoom: 12, maxzoom: 16.5,
      filter: ["all", ["==", ["geometry-type"], "Point"], ["!=", ["get", "place"], "city"]],
      layout: {
        ...TEXT, "text-field": ["upcase", ["get", "name"]], "text-letter-spacing": 0.08,
        "text-size": ["interpolate", ["linear"], ["zoom"], 12, 11, 16, 14],
        "text-padding": 6, "symbol-sort-key": ["get", "rank"],
      },
      paint: { "text-color": "#5c4a36", ...halo },
    });
  }
}
