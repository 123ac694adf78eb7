// Files added to a chat: picked with "Add data" or dropped on the chat or the map, and sent
// one at a time. The server keeps one upload or answer per chat at once (a second answers
// 409) and limits what one client sends a minute (429 beyond it), so files sent all at
// once were refused but for the first: the queue sends each in turn, waits while an answer
// is being written, and waits out a 429 for as long as the server says. Each file's row in
// the chat says where it is: waiting, uploading (with a percentage), reading, then added or
// refused with the server's own words. A refused file does not stop the files after it.

import { uploadError, uploadMessage } from "./render.js";
import { Unreachable, el, errorOf } from "./util.js";

// How long to wait before asking again when the chat is answering in another tab.
const BUSY_RETRY_MS = 3000;

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** One file's row in the chat while it waits and uploads. */
class Row {
  constructor(name) {
    this.name = name;
    this.state = el("span", { class: "upload-state" });
    this.bar = el("progress", { max: 100, hidden: true, "aria-hidden": "true" });
    this.node = el("li", { class: "msg upload pending", role: "status", dataset: { role: "user" } },
      el("span", { class: "upload-name", text: name }), " ", this.state, this.bar);
  }

  show(state, text, percent = null) {
    this.node.dataset.state = state;
    this.state.textContent = text;
    this.bar.hidden = percent === null;
    if (percent !== null) this.bar.value = percent;
  }

  replace(node, state) {
    node.dataset.state = state;
    this.node.replaceWith(node);
  }
}

export class UploadQueue {
  /**
   * @param {object} options
   * @param {HTMLElement} options.list where each file's row goes (the chat's messages)
   * @param {() => string} options.chatId the open chat's id (files go to the chat they were added in)
   * @param {() => boolean} options.busy whether an answer is being written (uploads wait for it)
   * @param {() => number} options.limit the server's upload limit in bytes
   * @param {(added: object, chatId: string) => Promise<void>} options.added draws an added file
   * @param {() => Promise<void>} options.lost reconnects; resolves once the server is back
   * @param {() => void} options.changed called when a row appears or changes (to scroll)
   */
  constructor({ list, chatId, busy, limit, added, lost, changed }) {
    Object.assign(this, { list, chatId, busy, limit, added, lost, changed });
    this.waiting = [];
    this.current = null;
    this.wake = null;
    this.running = false;
  }

  /** Queue files for the open chat, each with its row. */
  add(files) {
    for (const file of files) {
      const row = new Row(file.name);
      row.show("waiting", "waiting to be added");
      this.list.append(row.node);
      this.waiting.push({ file, row, chatId: this.chatId() });
    }
    this.changed();
    this.#run();
  }

  /** Settles once no file is being sent (a question waits for the one in flight). */
  settled() {
    return this.current ?? Promise.resolve();
  }

  /** An answer has finished: the files waiting for it go on. */
  resume() {
    this.wake?.();
    this.wake = null;
  }

  async #run() {
    if (this.running) return;
    this.running = true;
    try {
      while (this.waiting.length) {
        if (this.busy()) {
          for (const { row } of this.waiting) row.show("waiting", "waits for the answer being written to finish");
          await new Promise((resolve) => (this.wake = resolve));
          continue;
        }
        const item = this.waiting.shift();
        this.current = this.#send(item);
        await this.current;
        this.current = null;
      }
    } finally {
      this.running = false;
    }
  }

  async #send({ file, row, chatId }) {
    const limit = this.limit();
    if (file.size > limit) {
      row.replace(uploadError(file.name, `it is ${file.size.toLocaleString("en")} bytes; the limit is ${limit.toLocaleString("en")}`), "refused");
      this.changed();
      return;
    }
    for (;;) {
      try {
        const added = await post(chatId, file, (state, text, percent) => row.show(state, text, percent));
        const shown = uploadMessage(added);
        row.replace(shown, "added");
        this.changed();
        await this.added(added, chatId);
        return;
      } catch (error) {
        if (error.status === 429) {
          const seconds = Number(error.retryAfter) || 5;
          row.show("waiting", `waiting: the server takes only so many files a minute; trying again in ${seconds} s`);
          await sleep(seconds * 1000);
        } else if (error.status === 409) {
          row.show("waiting", "waiting: this chat is answering elsewhere (perhaps in another tab)");
          await sleep(BUSY_RETRY_MS);
        } else if (error.name === "Unreachable") {
          row.show("waiting", "waiting for the server to come back");
          await this.lost();
        } else {
          row.replace(uploadError(file.name, error.message), "refused");
          this.changed();
          return;
        }
      }
    }
  }
}

/**
 * POST one file to the chat, telling `progress(state, text, percent)` how far it is.
 * XMLHttpRequest, not fetch: fetch cannot report how much of a body has been sent.
 * A failure is the server's error (with `retryAfter` for a 429), or Unreachable.
 */
function post(chatId, file, progress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open("POST", `/api/chats/${encodeURIComponent(chatId)}/uploads?name=${encodeURIComponent(file.name)}`);
    xhr.setRequestHeader("content-type", "application/octet-stream");
    xhr.responseType = "text";
    progress("uploading", "uploading", 0);
    xhr.upload.onprogress = (event) => {
      if (!event.lengthComputable) return;
      const percent = Math.floor((100 * event.loaded) / event.total);
      progress("uploading", `uploading ${percent}%`, percent);
    };
    // Sent: the server now reads and checks it, which takes a while for a big file.
    xhr.upload.onload = () => progress("reading", "reading the file");
    xhr.onerror = () => reject(new Unreachable(new Error("the upload's connection failed")));
    xhr.onload = async () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        resolve(JSON.parse(xhr.responseText));
        return;
      }
      const error = await errorOf(new Response(xhr.responseText, { status: xhr.status, statusText: xhr.statusText }));
      error.retryAfter = xhr.getResponseHeader("retry-after");
      reject(error);
    };
    xhr.send(file);
  });
}

/** Files dropped on `node` go to `onFiles`; `node` is marked `dropping` while dragged over. */
export function dropTarget(node, onFiles) {
  let depth = 0;
  node.addEventListener("dragenter", (event) => { event.preventDefault(); depth++; node.classList.add("dropping"); });
  node.addEventListener("dragover", (event) => event.preventDefault());
  node.addEventListener("dragleave", () => { if (--depth <= 0) { depth = 0; node.classList.remove("dropping"); } });
  node.addEventListener("drop", (event) => {
    event.preventDefault();
    depth = 0;
    node.classList.remove("dropping");
    const files = [...(event.dataTransfer?.files ?? [])];
    if (files.length) onFiles(files);
  });
}
