// The example questions the server offers (GET /api/examples: with the scripted demo
// model, every prompt it answers). They are a disclosure beside the composer: open in a
// chat with no question yet, folded but still there after one, so that every example can
// be tried in the same chat.

import { el } from "./util.js";

export class Examples {
  /**
   * @param {HTMLDetailsElement} box the disclosure (its <ul> holds the questions)
   * @param {(text: string) => void} ask asks a question
   */
  constructor(box, ask) {
    this.box = box;
    this.ask = ask;
  }

  /** Offer `texts` (hidden when there are none). */
  set(texts) {
    this.box.hidden = !texts.length;
    this.box.querySelector("ul").replaceChildren(...texts.map((text) => el("li", {},
      el("button", { type: "button", text, onclick: () => { this.box.open = false; this.ask(text); } }))));
  }

  /** Open the list for a chat with no question yet; fold it once there is one. */
  unfold(open) {
    this.box.open = open;
  }
}
