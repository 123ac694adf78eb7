// Small DOM helpers. Everything a chat shows is set as text, never parsed as HTML: model
// text, tool arguments and uploaded property values are untrusted.

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (key === "dataset") Object.assign(node.dataset, value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/**
 * Code as it may be shown: every invisible format character (bidirectional controls such
 * as U+2067, zero-width joiners, soft hyphens), Hangul fillers, line separators and a
 * carriage return not before a newline, written out as ⟨U+2067⟩, so code cannot read as
 * something other than what runs (Trojan Source).
 */
export function visibleCode(text) {
  return String(text).replace(/[\p{Cf}\u2028\u2029\u0085\u000B\u000C\u001C-\u001E\u115F\u1160\u3164\uFFA0]|\r(?!\n)/gu, (c) =>
    `⟨U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}⟩`);
}

/**
 * An answer's segments as paragraphs and lists, each cited or checked segment drawn by
 * ``draw(segment)``: the text is laid out as ``prose`` lays it out, with a marker where
 * each such segment goes, then the markers are replaced by what ``draw`` returns.
 */
export function answerProse(segments, draw) {
  const marked = [];
  let text = "";
  for (const segment of segments) {
    if (["plain", "quoted", "stated"].includes(segment.state)) {
      text += segment.shown.replace(/[\uE000\uE001]/g, "");
    } else {
      text += `\uE000${marked.length}\uE001`;
      marked.push(segment);
    }
  }
  const out = prose(text);
  const walker = document.createTreeWalker(out, NodeFilter.SHOW_TEXT);
  const nodes = [];
  while (walker.nextNode()) nodes.push(walker.currentNode);
  for (const node of nodes) {
    const pieces = node.data.split(/\uE000(\d+)\uE001/);
    if (pieces.length === 1) continue;
    node.replaceWith(...pieces.map((piece, i) => (i % 2 ? draw(marked[Number(piece)]) : piece)));
  }
  return out;
}

/** Paragraphs and "- " lists from plain text, as text nodes. Bidirectional embedding,
 * override and isolate controls are written out (⟨U+202E⟩): text from a model or a file
 * must not be able to show its characters in another order than they are. */
export function prose(text) {
  const out = document.createDocumentFragment();
  text = String(text).replace(/[\u202A-\u202E\u2066-\u2069]/g, (c) =>
    `⟨U+${c.codePointAt(0).toString(16).toUpperCase()}⟩`);
  for (const block of text.split(/\n{2,}/)) {
    const lines = block.split("\n").filter((l) => l.trim());
    if (!lines.length) continue;
    if (lines.every((l) => /^\s*[-*] /.test(l))) {
      out.append(el("ul", {}, lines.map((l) => el("li", { text: l.replace(/^\s*[-*] /, "") }))));
    } else {
      const p = el("p");
      lines.forEach((line, i) => {
        if (i) p.append(el("br"));
        p.append(line);
      });
      out.append(p);
    }
  }
  return out;
}

export function formatNumber(value) {
  if (typeof value !== "number") return String(value);
  const digits = Number.isInteger(value) ? 0 : Math.abs(value) < 10 ? 2 : 1;
  return value.toLocaleString("en", { maximumFractionDigits: digits });
}

export function formatDate(iso) {
  if (!iso) return "";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? String(iso) : date.toISOString().slice(0, 16).replace("T", " ") + " UTC";
}

/** A chat id the server accepts: 1-64 letters, digits, '-' or '_'. */
export function newChatId() {
  const bytes = crypto.getRandomValues(new Uint8Array(9));
  return "c-" + Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The error a failed response stands for: the server's `message` (said for a person,
 * see geomint.server.errors), else its detail, else its status line. The body's other
 * fields (such as `limit_bytes`) ride along as `error.body`. */
export async function errorOf(response) {
  let message = `The server answered ${response.status} ${response.statusText}`.trim();
  let body = null;
  const text = await response.text();
  try {
    body = JSON.parse(text);
    const said = body.message || body.detail || body.error;
    if (said) message = typeof said === "string" ? said : JSON.stringify(said);
  } catch {
    if (text && text.length < 200) message = `${message}: ${text}`;
  }
  const error = new Error(message);
  error.status = response.status;
  error.body = body;
  return error;
}

/** Raised when the server cannot be reached at all (it stopped, or the network is down). */
export class Unreachable extends Error {
  constructor(cause) {
    super("The server could not be reached: it may have stopped, or the network is down.");
    this.name = "Unreachable";
    this.cause = cause;
  }
}

/** fetch, with a failure to connect raised as Unreachable (the browser's own words,
 * "Failed to fetch", say nothing to a person). An abort stays an AbortError. */
export async function request(path, options = {}) {
  try {
    return await fetch(path, options);
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new Unreachable(error);
  }
}

export async function api(path, options = {}) {
  const response = await request(path, options);
  if (!response.ok) throw await errorOf(response);
  return response.json();
}

/**
 * A small "Export" menu: a disclosure button (a native <details>, so Enter and Space open
 * it) over links that download, each named by the server. Escape closes it and puts the
 * focus back on its button; so does choosing an item.
 * ``items`` are ``{text, href}`` (a download from the server) or ``{text, onclick}``.
 */
export function exportMenu(label, items, { text = "Export" } = {}) {
  const summary = el("summary", { class: "export-button", "aria-label": label, title: label, text });
  const menu = el("details", { class: "export-menu" }, summary);
  const close = () => {
    menu.open = false;
    summary.focus();
  };
  menu.append(el("ul", { class: "export-items" }, items.map((item) => el("li", {},
    el("a", {
      href: item.href || "#", download: item.href ? true : null, class: "export-item", text: item.text,
      dataset: item.format ? { format: item.format } : null,
      onclick: (event) => {
        if (item.onclick) {
          event.preventDefault();
          item.onclick();
        }
        setTimeout(close, 0);
      },
    })))));
  menu.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && menu.open) {
      event.preventDefault();
      close();
    }
  });
  return menu;
}

/** Where an export of the chat ``chatId`` is served (``path`` under the chat). */
export function exportUrl(chatId, path) {
  return `/api/chats/${encodeURIComponent(chatId)}/${path}`;
}
