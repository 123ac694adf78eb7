// The sidebar's chat list: each chat's title and the date of its last message (the exact
// time on hover), a rename that edits the title in place (Enter saves, Escape cancels)
// and a delete that asks first. The server keeps the titles: a rename is an event in the
// chat's log (PATCH /api/chats/<id>), a delete a tombstone (DELETE /api/chats/<id>).

import { api, el, errorOf, request } from "./util.js";

const MAX_TITLE = 200;

/** "just now", "5 min ago", "3 h ago", "yesterday", a weekday within the week, then a date. */
export function whenText(iso, now = new Date()) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const seconds = (now - date) / 1000;
  if (seconds < 60) return "just now";
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  const day = (d) => new Date(d.getFullYear(), d.getMonth(), d.getDate());
  const days = Math.round((day(now) - day(date)) / 86_400_000);
  if (days <= 0) return `${Math.floor(seconds / 3600)} h ago`;
  if (days === 1) return "yesterday";
  if (days < 7) return date.toLocaleDateString(undefined, { weekday: "long" });
  const year = date.getFullYear() === now.getFullYear() ? undefined : "numeric";
  return date.toLocaleDateString(undefined, { day: "numeric", month: "short", year });
}

/** The exact time, in the person's own locale and time zone. */
export function exactText(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? "" : date.toLocaleString(undefined, { dateStyle: "full", timeStyle: "medium" });
}

export class ChatList {
  /**
   * @param {HTMLElement} list The <ul> the chats are drawn in.
   * @param {{current: () => string|null, open: (id: string) => void, deleted: (id: string) => void,
   *   unreachable: () => void}} hooks What the page does when a chat is opened or deleted.
   */
  constructor(list, hooks) {
    this.list = list;
    this.hooks = hooks;
  }

  async load() {
    const chats = await api("/api/chats");
    this.list.replaceChildren(...chats.map((chat) => this.row(chat)));
  }

  row(chat) {
    const title = chat.title || "(no question yet)";
    const when = chat.last_message_at;
    const link = el("a", {
      class: "chat-link", href: `/chat/${chat.id}`, title: chat.title || chat.id,
      "aria-current": chat.id === this.hooks.current() ? "page" : false,
      onclick: (event) => {
        event.preventDefault();
        if (chat.id !== this.hooks.current()) this.hooks.open(chat.id);
      },
    },
    el("span", { class: "chat-title", text: title }),
    when ? el("time", { class: "chat-date", datetime: when, title: exactText(when), text: whenText(when) }) : null);
    const li = el("li", { class: "chat", dataset: { chatId: chat.id } }, link);
    const actions = el("span", { class: "chat-actions" },
      el("button", {
        type: "button", class: "chat-rename", "aria-label": `Rename the chat ${title}`, title: "Rename",
        text: "✎", onclick: () => this.rename(li, chat),
      }),
      el("button", {
        type: "button", class: "chat-delete", "aria-label": `Delete the chat ${title}`, title: "Delete",
        text: "✕", onclick: () => this.confirmDelete(li, chat),
      }));
    li.append(actions);
    return li;
  }

  /** Edit the title in place: Enter saves, Escape (or leaving the field) cancels. */
  rename(li, chat) {
    const link = li.querySelector(".chat-link");
    const actions = li.querySelector(".chat-actions");
    const note = el("p", { class: "chat-note error-note", role: "alert", hidden: true });
    const input = el("input", {
      class: "chat-title-input", type: "text", maxlength: MAX_TITLE, "aria-label": "Chat title",
    });
    input.value = chat.title || "";
    let done = false;
    const restore = () => {
      if (done) return;
      done = true;
      input.replaceWith(link);
      note.remove();
      actions.hidden = false;
      li.querySelector(".chat-rename").focus();
    };
    const save = async () => {
      const title = input.value.trim();
      if (title === (chat.title || "")) return restore();
      input.disabled = true;
      try {
        await api(`/api/chats/${chat.id}`, {
          method: "PATCH", body: JSON.stringify({ title }), headers: { "content-type": "application/json" },
        });
        done = true;
        await this.load();
        this.list.querySelector(`li[data-chat-id="${chat.id}"] .chat-rename`)?.focus();
      } catch (error) {
        input.disabled = false;
        note.hidden = false;
        note.textContent = `Not renamed: ${error.message}`;
        input.focus();
        if (error.name === "Unreachable") this.hooks.unreachable();
      }
    };
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.isComposing) { event.preventDefault(); save(); }
      else if (event.key === "Escape") { event.preventDefault(); restore(); }
    });
    input.addEventListener("blur", () => { if (!input.disabled) setTimeout(restore, 0); });
    actions.hidden = true;
    link.replaceWith(input);
    li.append(note);
    input.focus();
    input.select();
  }

  /** Ask before deleting: the chat's own Delete and Cancel buttons, Cancel focused. */
  confirmDelete(li, chat) {
    const actions = li.querySelector(".chat-actions");
    const title = chat.title || "this chat";
    const cancel = () => {
      ask.remove();
      actions.hidden = false;
      li.querySelector(".chat-delete").focus();
    };
    const ask = el("div", { class: "chat-confirm", role: "group", "aria-label": `Delete the chat ${title}?` },
      el("span", { text: "Delete this chat?" }),
      el("button", {
        type: "button", class: "chat-delete-confirm danger", text: "Delete",
        onclick: async () => {
          try {
            const response = await request(`/api/chats/${chat.id}`, { method: "DELETE" });
            if (!response.ok && response.status !== 404) throw await errorOf(response);
            this.hooks.deleted(chat.id);
            await this.load();
            this.list.querySelector(".chat-link")?.focus();
          } catch (error) {
            ask.querySelector("span").textContent = `Not deleted: ${error.message}`;
            if (error.name === "Unreachable") this.hooks.unreachable();
          }
        },
      }),
      el("button", { type: "button", class: "chat-delete-cancel", text: "Cancel", onclick: cancel }));
    ask.addEventListener("keydown", (event) => {
      if (event.key === "Escape") { event.preventDefault(); cancel(); }
    });
    actions.hidden = true;
    li.append(ask);
    ask.querySelector(".chat-delete-cancel").focus();
  }
}
