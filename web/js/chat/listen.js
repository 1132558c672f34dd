// Waiting for calls (`inviso listen` in the page): this window's room is opened for every
// saved contact (at most LISTEN_LIMIT), and opened again for each new window; the first
// room a contact enters gets the chat, the others are left and deleted at once.

import { Chat } from "./chat.js";
import { CALL_WINDOW_SECONDS, LISTEN_LIMIT, callWindow } from "./contacts.js";

/**
 * @typedef {{ contacts: import("./contacts.js").Contact[],
 *   chat: (contact: import("./contacts.js").Contact, emit: (event: import("./chat.js").ChatEvent) => void) => Chat,
 *   answered: (chat: Chat, contact: import("./contacts.js").Contact, events: import("./chat.js").ChatEvent[]) => void,
 *   failed: (contact: import("./contacts.js").Contact, error: Error) => void,
 *   now?: () => number }} ListenOptions
 * `chat` makes a call chat for a contact, emitting to the given function; `answered` gets
 * the chat a contact entered and what it said so far; `failed` hears a contact whose room
 * could not be opened (the others still wait).
 */

export class Listener {
  /** @param {ListenOptions} options */
  constructor(options) {
    if (options.contacts.length === 0) throw new Error("no contacts yet: save one in a verified chat first");
    this.options = options;
    this.contacts = options.contacts.slice(0, LISTEN_LIMIT);
    this.now = options.now ?? (() => Date.now());
    /** @type {Chat[]} */
    this.waiting = [];
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    this.timer = undefined;
    this.stopped = false;
    /** @type {Chat | null} */
    this.picked = null;
  }

  /** Opens this window's rooms, and the next window's when it starts. */
  async start() {
    if (this.stopped) return;
    const window = callWindow(this.now());
    await this.closeWaiting();
    for (const contact of this.contacts) {
      /** @type {import("./chat.js").ChatEvent[]} */
      const events = [];
      const chat = this.options.chat(contact, (event) => {
        events.push(event);
        // Someone entered this room: it gets the chat; the others close.
        if (event.type === "presence" && event.online && !this.stopped) this.pick(chat, contact, events);
      });
      this.waiting.push(chat);
      try {
        await chat.answer(window);
      } catch (error) {
        this.waiting = this.waiting.filter((item) => item !== chat);
        chat.close();
        if (!this.stopped) this.options.failed(contact, /** @type {Error} */ (error));
      }
      if (this.stopped) {
        // Stopped (or answered) while this room was being opened: it closes too.
        if (this.picked !== chat) await chat.leave().catch(() => chat.close());
        return;
      }
    }
    const next = (window + 1) * CALL_WINDOW_SECONDS * 1000;
    this.timer = setTimeout(() => this.start(), Math.max(1000, next - this.now()));
  }

  /** @param {Chat} chat @param {import("./contacts.js").Contact} contact @param {import("./chat.js").ChatEvent[]} events */
  pick(chat, contact, events) {
    // A room of the last window, being left: not a call any more.
    if (this.picked || !this.waiting.includes(chat)) return;
    this.picked = chat;
    this.waiting = this.waiting.filter((item) => item !== chat);
    this.stop();
    this.options.answered(chat, contact, events);
  }

  /** Stops waiting: every room not entered is left and deleted. */
  stop() {
    this.stopped = true;
    clearTimeout(this.timer);
    this.closeWaiting();
  }

  async closeWaiting() {
    const waiting = this.waiting.splice(0);
    await Promise.all(waiting.map((chat) => chat.leave().catch(() => chat.close())));
  }
}
