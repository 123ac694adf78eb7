// On a narrow screen (a phone, a tablet upright: 900 px or less) the chat list is a drawer.
// The menu button opens it and moves focus into it; Escape, the close button, a click
// outside it, or choosing a chat closes it and gives focus back to the menu button. While it
// is open the rest of the page is inert, so Tab stays in the drawer and a screen reader
// reads only it. On a wide screen the list is a plain column and none of this applies.

export const NARROW = "(max-width: 900px)";

export class Drawer {
  /**
   * @param {{button: HTMLElement, drawer: HTMLElement, close: HTMLElement,
   *   backdrop: HTMLElement, rest: HTMLElement[], media?: MediaQueryList}} parts
   *   `rest` is what turns inert while the drawer is open.
   */
  constructor({ button, drawer, close, backdrop, rest, media = window.matchMedia(NARROW) }) {
    Object.assign(this, { button, drawer, close, backdrop, rest, media });
    button.addEventListener("click", () => (this.isOpen ? this.hide() : this.show()));
    close.addEventListener("click", () => this.hide());
    backdrop.addEventListener("click", () => this.hide());
    document.addEventListener("keydown", (event) => {
      if (!this.isOpen || event.defaultPrevented) return;
      // A rename or a delete being confirmed takes its own Escape first (and prevents it).
      if (event.key === "Escape") {
        event.preventDefault();
        this.hide();
      } else if (event.key === "Tab") this.#wrap(event);
    });
    // Choosing a chat (or a new one) is what the drawer was opened for: it closes.
    drawer.addEventListener("click", (event) => {
      if (this.isOpen && event.target.closest("#new-chat, .chat-link")) this.hide();
    });
    // Widening the window past the breakpoint leaves no drawer to close.
    media.addEventListener("change", () => { if (!media.matches) this.hide({ focus: false }); });
    this.hide({ focus: false });
  }

  get isOpen() {
    return document.body.dataset.drawer === "open";
  }

  show() {
    if (!this.media.matches) return;
    document.body.dataset.drawer = "open";
    this.button.setAttribute("aria-expanded", "true");
    this.backdrop.hidden = false;
    for (const part of this.rest) part.inert = true;
    const current = this.drawer.querySelector('.chat-link[aria-current="page"]');
    (current || this.drawer.querySelector("#new-chat")).focus();
  }

  /** Tab from the last control goes to the first, Shift+Tab from the first to the last. */
  #wrap(event) {
    const controls = [...this.drawer.querySelectorAll("a[href], button, input, [tabindex]")]
      .filter((control) => !control.disabled && control.tabIndex >= 0 && control.getClientRects().length);
    if (!controls.length) return;
    const [first, last] = [controls[0], controls.at(-1)];
    const at = document.activeElement;
    if (event.shiftKey ? at === first || !this.drawer.contains(at) : at === last || !this.drawer.contains(at)) {
      event.preventDefault();
      (event.shiftKey ? last : first).focus();
    }
  }

  hide({ focus = true } = {}) {
    const wasOpen = this.isOpen;
    document.body.dataset.drawer = "closed";
    this.button.setAttribute("aria-expanded", "false");
    this.backdrop.hidden = true;
    for (const part of this.rest) part.inert = false;
    if (wasOpen && focus) this.button.focus();
  }
}

const $ = (selector) => document.querySelector(selector);
export const drawer = new Drawer({
  button: $("#menu-button"),
  drawer: $("#sidebar"),
  close: $("#drawer-close"),
  backdrop: $("#drawer-backdrop"),
  // Everything but the drawer: the body's other children and the drawer's siblings.
  rest: [...document.body.children, ...$(".layout").children].filter((part) =>
    part.tagName !== "SCRIPT" && !part.contains($("#sidebar")) && part.id !== "drawer-backdrop"),
});
