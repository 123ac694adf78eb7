// The attribute table: one entry's features as rows and their properties as columns, in a
// drawer over the bottom of the map. Only the rows in view are in the DOM (a layer may hold
// 100,000 features). The rows are read from the entry's map source, which holds the GeoJSON
// the page already has; its features carry generated ids equal to their index, so a feature
// clicked on the map names its row.
//
// It follows the ARIA grid pattern at row level: each row is focusable (one at a time is in
// the tab order), Up/Down/PageUp/PageDown/Home/End move the selection, Space selects the
// focused row, Enter (or a click) flies the map to it; a header's button sorts by that column.

import { bboxOf, readable } from "./map.js";
import { Highlight } from "./highlight.js";
import { el } from "./util.js";

/** Every row is this tall (px, as in table.css), so a row's place is its position times it. */
const ROW_HEIGHT = 28;
/** Rows drawn beyond each edge of the view, so a quick scroll does not show a gap. */
const OVERSCAN = 10;
const collator = new Intl.Collator("en", { numeric: true });
const MOVES = {
  ArrowDown: (at) => at + 1,
  ArrowUp: (at) => at - 1,
  PageDown: (at, page) => at + page,
  PageUp: (at, page) => at - page,
  Home: () => 0,
  End: (at, page, last) => last,
};

export class AttributeTable {
  /** A closed table over `liveMap` (map.js's LiveMap); `open` shows an entry's rows. */
  constructor(liveMap) {
    const map = liveMap.map;
    this.liveMap = liveMap;
    this.map = map;
    this.highlight = new Highlight(map);
    this.entryId = null;
    this.data = null; // the FeatureCollection shown
    this.columns = [];
    this.order = []; // row position -> feature index (ids are indexes, see generateId)
    this.positions = new Int32Array(0); // feature index -> row position
    this.sorted = null; // {column, direction}: column null is the feature order ("#"), direction 1 ascending, -1 descending
    this.selected = -1; // feature index
    this.drawn = new Map(); // row position -> its element, for the rows in the DOM
    this.opener = null;
    this.#build();
    map.on("click", (event) => this.#pickOnMap(event));
    // A new version of the entry replaces its features: show those instead.
    liveMap.onData = (entryId) => {
      if (entryId === this.entryId && this.#sourceData() !== this.data) this.#load();
    };
  }

  /** Show the table of `entryId`; `opener` (the button pressed) gets the focus back on close. */
  open(entryId, label, opener = null) {
    this.entryId = entryId;
    this.opener = opener;
    this.title.textContent = `Table: ${label}`;
    this.sorted = null;
    this.selected = -1;
    this.highlight.clear();
    this.drawer.hidden = false;
    this.#load();
    (this.drawn.get(0) || this.closeButton).focus();
  }

  close() {
    if (this.entryId === null) return;
    this.entryId = null;
    this.data = null;
    this.drawer.hidden = true;
    this.highlight.clear();
    this.#clearRows();
    if (this.opener?.isConnected) this.opener.focus();
    this.opener = null;
  }

  #sourceData() {
    const data = this.liveMap.entryData(this.entryId);
    return data && data.type === "FeatureCollection" ? data : null;
  }

  #build() {
    this.title = el("h2", { id: "attribute-table-title" });
    this.count = el("span", { class: "table-count" });
    this.closeButton = el("button", { type: "button", class: "table-close", text: "Close", onclick: () => this.close() });
    this.note = el("p", { class: "table-note", hidden: true });
    this.header = el("div", { class: "table-row table-header", role: "row", "aria-rowindex": 1 });
    this.body = el("div", { class: "table-body", role: "rowgroup" });
    this.grid = el("div", { class: "table-grid", role: "grid", "aria-labelledby": "attribute-table-title" },
      el("div", { class: "table-head", role: "rowgroup" }, this.header), this.body);
    this.drawer = el("section", { id: "attribute-table", class: "attribute-table", "aria-labelledby": "attribute-table-title", hidden: true },
      el("div", { class: "table-bar" }, this.title, this.count, this.closeButton), this.note, this.grid);
    this.drawer.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        event.preventDefault();
        this.close();
      }
    });
    // Rendering in the scroll event draws the new rows in the same frame as the scroll.
    this.grid.addEventListener("scroll", () => this.#render());
    this.body.addEventListener("click", (event) => {
      const row = event.target.closest("[data-position]");
      if (row) this.#select(this.order[Number(row.dataset.position)], { focus: true, fly: true });
    });
    this.body.addEventListener("keydown", (event) => this.#key(event));
    // Inside the map's container (not its canvas container), so the map's own mouse, wheel
    // and keyboard handlers never see the table's events.
    this.map.getContainer().append(this.drawer);
  }

  /** Read the entry's features from its map source and draw the first rows. */
  #load() {
    this.data = this.#sourceData();
    const features = this.data?.features ?? [];
    this.note.hidden = Boolean(this.data);
    this.note.textContent = this.data ? "" : "This layer is not on the map (too large to draw again after a reload), so its table cannot be shown.";
    this.columns = columnsOf(features);
    this.order = features.map((_, index) => index);
    if (this.sorted?.column && !this.columns.includes(this.sorted.column)) this.sorted = null;
    if (this.selected >= features.length) this.selected = -1;
    this.count.textContent = `${features.length.toLocaleString("en")} feature${features.length === 1 ? "" : "s"}`;
    this.grid.setAttribute("aria-rowcount", String(features.length + 1));
    this.grid.setAttribute("aria-colcount", String(this.columns.length + 1));
    const width = `${NUMBER_WIDTH + this.columns.length * COLUMN_WIDTH}px`;
    this.header.style.width = width;
    this.body.style.width = width;
    this.body.style.height = `${features.length * ROW_HEIGHT}px`;
    this.#sort();
  }

  /** Order the rows by the sorted column (feature order when none) and redraw them. */
  #sort() {
    const { column, direction } = this.sorted ?? { column: null, direction: 1 };
    if (column !== null) this.order = sortedOrder(this.data.features, column, direction);
    else this.order = this.order.map((_, position) => (direction > 0 ? position : this.order.length - 1 - position));
    this.positions = new Int32Array(this.order.length);
    this.order.forEach((index, position) => (this.positions[index] = position));
    this.#drawHeader();
    this.#clearRows();
    this.#render();
    if (this.selected >= 0) this.#reveal(this.positions[this.selected]);
  }

  #drawHeader() {
    const header = (name, label, colindex) => {
      const sorted = this.sorted?.column === name;
      const ariaSort = !sorted ? "none" : this.sorted.direction > 0 ? "ascending" : "descending";
      return el("div", { class: `table-cell${name === null ? " table-number" : ""}`, role: "columnheader", "aria-colindex": colindex, "aria-sort": ariaSort },
        el("button", {
          type: "button", class: "table-sort", title: `Sort by ${label}`,
          text: `${label}${sorted ? (this.sorted.direction > 0 ? " ▲" : " ▼") : ""}`,
          onclick: () => this.#sortBy(name),
        }));
    };
    this.header.replaceChildren(header(null, "#", 1), ...this.columns.map((name, i) => header(name, name, i + 2)));
  }

  /** A header's button: ascending first, then descending, turn about. */
  #sortBy(column) {
    const again = this.sorted?.column === column && this.sorted.direction > 0;
    this.sorted = { column, direction: again ? -1 : 1 };
    this.#sort();
    // The header was drawn anew: keep the focus on the button just pressed.
    const colindex = column === null ? 1 : this.columns.indexOf(column) + 2;
    this.header.querySelector(`[aria-colindex="${colindex}"] button`)?.focus();
  }

  #clearRows() {
    for (const row of this.drawn.values()) row.remove();
    this.drawn.clear();
  }

  /** Draw the rows in view (and a few beyond), drop the rest; the focused row stays drawn. */
  #render() {
    if (this.entryId === null) return;
    const top = this.grid.scrollTop;
    const first = Math.max(0, Math.floor(top / ROW_HEIGHT) - OVERSCAN);
    const last = Math.min(this.order.length - 1, Math.ceil((top + this.grid.clientHeight) / ROW_HEIGHT) + OVERSCAN);
    for (const [position, row] of this.drawn) {
      if ((position < first || position > last) && row !== document.activeElement) {
        row.remove();
        this.drawn.delete(position);
      }
    }
    const added = document.createDocumentFragment();
    for (let position = first; position <= last; position++) {
      if (this.drawn.has(position)) continue;
      const row = this.#row(position);
      this.drawn.set(position, row);
      added.append(row);
    }
    this.body.append(added);
    this.#tabStop();
  }

  #row(position) {
    const index = this.order[position];
    const properties = this.data.features[index].properties ?? {};
    const row = el("div", {
      class: "table-row", role: "row", tabindex: -1,
      "aria-rowindex": position + 2, "aria-selected": String(index === this.selected),
      dataset: { position, feature: index },
    },
    el("div", { class: "table-cell table-number", role: "rowheader", "aria-colindex": 1, text: String(index + 1) }),
    this.columns.map((name, i) => {
      const value = properties[name];
      const text = readable(value);
      return el("div", {
        class: `table-cell${typeof value === "number" ? " number" : ""}`, role: "gridcell",
        "aria-colindex": i + 2, title: text.length > CELL_CHARS ? text : null, text,
      });
    }));
    // Set through the CSSOM: the page's CSP (style-src 'self') refuses style attributes.
    row.style.transform = `translateY(${position * ROW_HEIGHT}px)`;
    return row;
  }

  /** One row in the tab order: the selected one when drawn, else the first drawn. */
  #tabStop() {
    const selected = this.selected >= 0 ? this.drawn.get(this.positions[this.selected]) : null;
    const stop = selected || this.drawn.get(Math.min(...this.drawn.keys()));
    for (const row of this.drawn.values()) row.tabIndex = row === stop ? 0 : -1;
  }

  #key(event) {
    const row = event.target.closest("[data-position]");
    if (!row) return;
    const position = Number(row.dataset.position);
    if (event.key === "Enter" || event.key === " ") {
      event.preventDefault();
      this.#select(this.order[position], { focus: true, fly: event.key === "Enter" });
      return;
    }
    const move = MOVES[event.key];
    if (!move) return;
    event.preventDefault();
    const page = Math.max(1, Math.floor(this.grid.clientHeight / ROW_HEIGHT) - 2);
    const last = this.order.length - 1;
    const to = Math.min(last, Math.max(0, move(position, page, last)));
    this.#select(this.order[to], { focus: true });
  }

  /** Select a feature: its row marked, scrolled into view (and focused), the feature
   * outlined on the map, and with `fly` the camera moved to it. */
  #select(index, { focus = false, fly = false } = {}) {
    if (index === undefined || index < 0) return;
    this.drawn.get(this.positions[this.selected])?.setAttribute("aria-selected", "false");
    this.selected = index;
    const feature = this.data.features[index];
    this.#reveal(this.positions[index]);
    const row = this.drawn.get(this.positions[index]);
    row.setAttribute("aria-selected", "true");
    this.#tabStop();
    if (focus) row.focus({ preventScroll: true });
    if (feature.geometry) this.highlight.show(feature);
    if (fly) this.#fly(feature);
  }

  /** Scroll the row at `position` into view, below the sticky header, and draw it. */
  #reveal(position) {
    const head = this.header.offsetHeight;
    const top = position * ROW_HEIGHT;
    const view = this.grid.clientHeight - head;
    if (top < this.grid.scrollTop) this.grid.scrollTop = top;
    else if (top + ROW_HEIGHT > this.grid.scrollTop + view) this.grid.scrollTop = top + ROW_HEIGHT - view;
    this.#render(); // now, not at the scroll event: the caller needs the row's element
  }

  /** Move the camera to a feature, keeping it clear of the drawer over the map's bottom. */
  #fly(feature) {
    const box = bboxOf({ features: [feature] });
    if (!box) return;
    const [w, s, e, n] = box;
    const point = w === e && s === n;
    this.map.fitBounds([[w, s], [e, n]], {
      padding: { top: 40, left: 40, right: 40, bottom: this.drawer.offsetHeight + 40 },
      // A point has no extent to fit: zoom in to street level, never out.
      maxZoom: point ? Math.max(this.map.getZoom(), 16) : 17,
    });
  }

  /** A click on a feature of the open entry selects its row. */
  #pickOnMap(event) {
    if (this.entryId === null || !this.data) return;
    const feature = this.liveMap.featureAt(event.point, this.entryId);
    if (feature && Number.isInteger(feature.index) && feature.index < this.data.features.length) this.#select(feature.index);
  }
}

/** Column widths (px), as table.css sets them: the "#" column, and every property's. */
const NUMBER_WIDTH = 72;
const COLUMN_WIDTH = 160;
/** About as many characters as a column shows: a longer value also goes in the cell's title. */
const CELL_CHARS = 18;

/** Every property name of `features`, in the order first seen. */
function columnsOf(features) {
  const names = new Set();
  for (const feature of features) for (const name in feature.properties ?? {}) names.add(name);
  return [...names];
}

/** Feature indexes ordered by `column`: numbers as numbers and before text, text in natural
 * order ("item 2" before "item 10"), missing values last whichever the direction. */
function sortedOrder(features, column, direction) {
  const keys = features.map((feature) => sortKey(feature.properties?.[column]));
  const order = features.map((_, index) => index);
  order.sort((a, b) => {
    const x = keys[a];
    const y = keys[b];
    if (x === null || y === null) return (x === null) - (y === null);
    if (typeof x === "number" && typeof y === "number") return direction * (x - y);
    if (typeof x === "number" || typeof y === "number") return direction * (typeof x === "number" ? -1 : 1);
    return direction * collator.compare(x, y);
  });
  return order;
}

function sortKey(value) {
  if (value === null || value === undefined || value === "") return null;
  if (typeof value === "number") return Number.isNaN(value) ? null : value;
  return typeof value === "string" ? value : readable(value);
}
