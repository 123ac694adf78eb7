// Losing the server and finding it again. When a request cannot reach the server (it was
// stopped, restarted, or the network dropped), the page says "reconnecting…" and asks
// /api/health again and again, waiting longer each time (0.5 s doubling to 10 s), until
// the server answers; then it says so, reloads what may have changed, and clears the note.

const FIRST_WAIT_MS = 500;
const LONGEST_WAIT_MS = 10_000;
const SHOWN_BACK_MS = 4_000;

export class Connection {
  /**
   * @param {HTMLElement} banner where the state is shown (`data-state`: reconnecting,
   *   connected; hidden when all is well)
   * @param {() => unknown} onBack called each time the server answers again
   */
  constructor(banner, onBack) {
    this.banner = banner;
    this.onBack = onBack;
    this.waiting = null;
    this.hideTimer = null;
    this.pending = [];
  }

  get reconnecting() {
    return this.waiting !== null;
  }

  /** A request could not reach the server: reconnect, then run `then` (once). */
  lost(then = null) {
    if (then) this.pending.push(then);
    if (!this.waiting) {
      this.waiting = this.#reconnect().then(() => {
        this.waiting = null;
        return this.#back();
      });
    }
    return this.waiting;
  }

  async #reconnect() {
    clearTimeout(this.hideTimer);
    let wait = FIRST_WAIT_MS;
    for (let attempt = 1; ; attempt++) {
      this.#show("reconnecting", attempt === 1
        ? "The server cannot be reached; reconnecting…"
        : `The server cannot be reached; reconnecting… (try ${attempt}, every ${Math.round(wait / 1000) || 1} s)`);
      await new Promise((resolve) => setTimeout(resolve, wait * (0.8 + Math.random() * 0.4)));
      try {
        const response = await fetch("/api/health", { cache: "no-store" });
        if (response.ok) break;
      } catch {
        // still unreachable
      }
      wait = Math.min(wait * 2, LONGEST_WAIT_MS);
    }
    this.#show("connected", "Connected to the server again.");
    this.hideTimer = setTimeout(() => {
      this.banner.hidden = true;
      this.banner.dataset.state = "ok";
    }, SHOWN_BACK_MS);
  }

  async #back() {
    const pending = this.pending.splice(0);
    for (const then of [this.onBack, ...pending]) {
      try {
        await then();
      } catch {
        // what could not be reloaded now will be on the next request
      }
    }
  }

  #show(state, text) {
    this.banner.dataset.state = state;
    this.banner.textContent = text;
    this.banner.hidden = false;
  }
}
