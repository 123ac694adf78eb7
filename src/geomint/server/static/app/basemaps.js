// The map's settings: which basemap style it is drawn on and which language its labels
// are in. The catalogue comes from /api/map; a chat's log says which it last chose (the
// model's set_map_style / set_language, or the person's switch, posted to the chat).

const OURS = /^(city-|district-names|streets|street-names|country-names|entry-|mapcode-)/;
/** Street and label colours over a light or a dark basemap. */
const PALETTES = {
  light: { path: "#cfc8bb", casing: "#d6d0c4", road: "#ffffff", text: "#4a4f55", halo: "#ffffff", district: "#5c4a36", coast: "#b9c6cf" },
  dark: { path: "#4b5157", casing: "#15181b", road: "#3a3f45", text: "#d3d7db", halo: "#15181b", district: "#c9b79c", coast: "#3a4650" },
};

export class MapSettings {
  constructor(liveMap) {
    this.liveMap = liveMap;
    this.map = liveMap.map;
    this.styles = [];
    this.languages = {};
    this.style = null; // the style's name as drawn now
    this.language = null;
    this.onChange = null; // (change) => Promise: the person switched something
    this.catalogue = fetch("/api/map").then((r) => (r.ok ? r.json() : null)).then((data) => {
      this.styles = data?.styles || [];
      this.languages = data?.languages || {};
      this.style = data?.default_style || null;
      this.#fillControl();
    }).catch(() => null);
  }

  /** Draw a chat's settings (null: the default style, names as signed). */
  async show({ style = null, language = null } = {}) {
    await this.catalogue;
    await this.setStyle(style || this.styles[0]?.name);
    this.setLanguage(language);
  }

  async setStyle(name) {
    await this.catalogue;
    const found = this.styles.find((s) => s.name === name);
    if (!found || name === this.style) return this.#sync();
    await this.liveMap.loaded;
    const changed = new Promise((resolve) => this.map.once("style.load", resolve));
    const places = this.liveMap.pointPlaces();
    this.map.setStyle(found.url, {
      diff: false,
      // Keep what the page drew (streets, labels, entries) over the new basemap.
      transformStyle: (previous, next) => ({
        ...next,
        sources: {
          ...Object.fromEntries(Object.entries(previous?.sources || {}).filter(([id]) => !(id in next.sources))),
          ...next.sources,
        },
        layers: [...next.layers, ...(previous?.layers || []).filter((layer) => OURS.test(layer.id))],
      }),
    });
    this.style = name;
    await changed;
    this.liveMap.styleReplaced(places);
    this.#recolour(found.theme);
    this.#sync();
  }

  setLanguage(language) {
    this.language = language && language in this.languages ? language : null;
    this.liveMap.setLanguage(this.language);
    this.#sync();
  }

  /** The switcher: a MapLibre control with the styles and the languages. */
  control() {
    const box = document.createElement("div");
    box.className = "maplibregl-ctrl maplibregl-ctrl-group map-settings";
    this.styleSelect = Object.assign(document.createElement("select"), { title: "Basemap style" });
    this.styleSelect.setAttribute("aria-label", "Basemap style");
    this.languageSelect = Object.assign(document.createElement("select"), { title: "Label language" });
    this.languageSelect.setAttribute("aria-label", "Label language");
    this.styleSelect.addEventListener("change", () => this.#switch({ style: this.styleSelect.value }));
    this.languageSelect.addEventListener("change", () => this.#switch({ language: this.languageSelect.value }));
    box.append(this.styleSelect, this.languageSelect);
    this.#fillControl();
    return { onAdd: () => box, onRemove: () => box.remove() };
  }

  async #switch(change) {
    if (change.style) await this.setStyle(change.style);
    if (change.language) this.setLanguage(change.language);
    if (this.onChange) await this.onChange(change).catch((error) => console.warn("map setting not kept", error));
  }

  #fillControl() {
    if (!this.styleSelect) return;
    const option = (value, text) => Object.assign(document.createElement("option"), { value, textContent: text });
    this.styleSelect.replaceChildren(...this.styles.map((s) => option(s.name, s.label)));
    const signed = option("", "Names as signed");
    signed.disabled = true;
    this.languageSelect.replaceChildren(signed,
      ...Object.entries(this.languages).map(([code, name]) => option(code, name)));
    this.#sync();
  }

  #sync() {
    if (this.styleSelect && this.style) this.styleSelect.value = this.style;
    if (this.languageSelect) this.languageSelect.value = this.language || "";
    this.map.getContainer().dataset.basemap = this.style || "";
    this.map.getContainer().dataset.language = this.language || "";
  }

  #recolour(theme) {
    const c = PALETTES[theme] || PALETTES.light;
    this.liveMap.labelColours = { text: c.text, halo: c.halo }; // for entries added from now on
    const paint = (layer, property, value) => {
      if (this.map.getLayer(layer)) this.map.setPaintProperty(layer, property, value);
    };
    paint("streets-paths", "line-color", c.path);
    for (const id of ["streets-minor", "streets-major"]) {
      paint(`${id}-casing`, "line-color", c.casing);
      paint(id, "line-color", c.road);
    }
    for (const layer of this.map.getStyle()?.layers || []) {
      if (layer.type !== "symbol" || !OURS.test(layer.id)) continue;
      paint(layer.id, "text-color", c.text);
      paint(layer.id, "text-halo-color", c.halo);
    }
    paint("district-names", "text-color", c.district);
    // The city's water and land (city.js) take the new basemap's sea and land colours.
    const base = (layer, property) => (this.map.getLayer(layer) ? this.map.getPaintProperty(layer, property) : null);
    const sea = base("background", "background-color");
    const land = base("countries-fill", "fill-color");
    if (sea) paint("city-water", "fill-color", sea);
    if (land) paint("city-land", "fill-color", land);
    paint("city-coast", "line-color", c.coast);
  }
}
