// The page: start or join a chat, then talk. All protocol work is in js/chat/chat.js.

import { Chat, keptName } from "./js/chat/chat.js";
import { ContactBook, fingerprint } from "./js/chat/contacts.js";
import { Listener } from "./js/chat/listen.js";
import { parseInvite } from "./js/chat/invite.js";
import { encodeQRText } from "./js/chat/qr.js";
import { Vault, vaultExists } from "./js/store/vault.js";

const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));

/** @param {string} id @param {boolean} shown */
function show(id, shown) {
  $(id).hidden = !shown;
}

// Made once, at load: a formatter is slow to make (the first one loads locale data), and
// a message should not wait for it.
const CLOCK = new Intl.DateTimeFormat([], { hour: "2-digit", minute: "2-digit" });
const WHEN = new Intl.DateTimeFormat([], { dateStyle: "medium", timeStyle: "medium" });
CLOCK.format(0);
WHEN.format(0);

/** @param {import("./js/chat/chat.js").ChatEvent} event */
function onEvent(event) {
  switch (event.type) {
    case "invite":
      $("invite").textContent = event.invite;
      $("invite-link").textContent = event.link;
      showQR($("invite-qr"), event.link);
      show("start", false);
      show("kept", false);
      show("waiting", true);
      break;
    case "status":
      $("status").textContent = event.text;
      break;
    case "secured":
      $("safety-number").textContent = event.safetyNumber.replace(/(\d{5})/g, "$1 ").trim();
      $("status").textContent = event.protocol === "v1" ? "encrypted, unverified (v1)" : "secured: end-to-end encrypted";
      show("v1-warning", event.protocol === "v1");
      if (event.protocol === "v1" && event.verifiedByUser) markedVerified();
      show("start", false);
      show("kept", false);
      show("waiting", false);
      show("calling", false);
      show("chat", true);
      // A verified chat (an invite with words, or a call) that is kept can save the peer as a contact.
      show("save-form", event.savesContacts === true);
      /** @type {HTMLInputElement} */ ($("message-input")).focus();
      break;
    case "message": {
      const item = document.createElement("li");
      item.className = event.outgoing ? "out" : "in";
      item.dataset.seq = String(event.seq);
      item.dataset.at = String(event.at);
      // Its time, shown by the style sheet (so the item's text stays the message alone).
      item.dataset.time = CLOCK.format(event.at);
      item.title = WHEN.format(event.at);
      item.textContent = event.text;
      $("messages").append(item);
      break;
    }
    case "delivered":
      document.querySelector(`#messages li.out[data-seq="${event.seq}"]`)?.classList.add("delivered");
      break;
    case "peer":
      $("peer-name").textContent = event.name;
      break;
    case "presence":
      $("status").textContent = event.online ? "your peer is online" : "your peer is offline: your messages will be delivered when they return";
      break;
    case "lifetime_proposed":
      $("lifetime-proposal-text").textContent = `Your peer proposes that messages disappear after ${LIFETIME_NAMES[event.lifetime] ?? event.lifetime}.`;
      show("lifetime-proposal", true);
      break;
    case "lifetime":
      $("lifetime").textContent = LIFETIME_NAMES[event.lifetime] ?? event.lifetime;
      show("lifetime-proposal", false);
      expireShown();
      break;
    case "lifetime_rejected":
      $("status").textContent = "your peer rejected the lifetime you proposed";
      break;
    case "path":
      $("path").textContent = event.path === "direct" ? "peer to peer (WebRTC)" : event.path === "turn" ? "through the server's TURN relay (WebRTC)" : "through the server";
      break;
    case "contact_offered":
      $("status").textContent = "your peer saved you as a contact: save them too, so that you can call each other";
      if (current?.contacts) /** @type {HTMLInputElement} */ ($("save-input")).focus();
      else $("status").textContent += " (only a kept chat can save contacts)";
      break;
    case "contact_pending":
      $("status").textContent = `saving ${event.name} once your peer saves you too`;
      break;
    case "contact_saved":
      $("status").textContent = `saved ${event.name} as a contact (${event.fingerprint}): Call, under Contacts, starts a new chat with them`;
      show("save-form", false);
      listContacts();
      break;
    case "error":
      $("error").textContent = event.text;
      break;
    default:
      if (event.type.startsWith("file_")) showTransfer(/** @type {import("./js/chat/files.js").FileEvent} */ (event));
  }
}

/** @type {Record<string, string>} */
const LIFETIME_NAMES = { ephemeral: "the chat (never kept)", "1h": "1 hour", "6h": "6 hours", "1d": "1 day", "7d": "7 days", "30d": "30 days" };

/** Removes shown messages older than the agreed lifetime (ephemeral ones stay until the page closes). */
function expireShown() {
  if (!current) return;
  const keep = current.expire(Date.now());
  if (!keep) return;
  for (const item of Array.from(document.querySelectorAll("#messages li"))) {
    const at = Number(/** @type {HTMLElement} */ (item).dataset.at);
    if (at && Date.now() - at >= keep) item.remove();
  }
}
setInterval(expireShown, 5000);

/**
 * Draws `text` as a QR code (an SVG path, four modules of quiet zone) into `container`.
 * Drawn here: the invite's words never leave the page.
 * @param {HTMLElement} container @param {string} text
 */
function showQR(container, text) {
  const code = encodeQRText(text);
  const quiet = 4;
  const side = code.size + 2 * quiet;
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", `0 0 ${side} ${side}`);
  svg.setAttribute("shape-rendering", "crispEdges");
  let d = "";
  for (let y = 0; y < code.size; y++) {
    for (let x = 0; x < code.size; x++) if (code.modules[y * code.size + x]) d += `M${x + quiet} ${y + quiet}h1v1h-1z`;
  }
  const path = document.createElementNS("http://www.w3.org/2000/svg", "path");
  path.setAttribute("d", d);
  svg.append(path);
  container.replaceChildren(svg);
  container.dataset.version = String(code.version);
}

/** @param {number} bytes */
function size(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1048576) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1048576).toFixed(1)} MiB`;
}

/**
 * A button that runs `onClick`, named `action` for the tests (`data-action`), with `label`
 * for a screen reader when its text alone does not say what it acts on.
 * @param {string} text @param {string} action @param {() => void} onClick @param {string} [label]
 */
function actionButton(text, action, onClick, label) {
  const element = document.createElement("button");
  element.type = "button";
  element.textContent = text;
  element.dataset.action = action;
  if (label) element.setAttribute("aria-label", label);
  element.addEventListener("click", onClick);
  return element;
}

/**
 * One line per transfer: what it is, a progress bar, and what can be done with it.
 * @param {import("./js/chat/files.js").FileEvent} event
 */
function showTransfer(event) {
  let item = /** @type {HTMLLIElement | null} */ (document.getElementById(`transfer-${event.id}`));
  if (!item) {
    item = document.createElement("li");
    item.id = `transfer-${event.id}`;
    const label = document.createElement("span");
    label.className = "label";
    const bar = document.createElement("progress");
    bar.max = 1;
    bar.value = 0;
    const actions = document.createElement("span");
    actions.className = "actions";
    item.append(label, bar, actions);
    $("transfers").append(item);
  }
  const label = /** @type {HTMLElement} */ (item.querySelector(".label"));
  const bar = /** @type {HTMLProgressElement} */ (item.querySelector("progress"));
  const actions = /** @type {HTMLElement} */ (item.querySelector(".actions"));
  const id = event.id;
  switch (event.type) {
    case "file_incoming":
      item.dataset.state = "incoming";
      label.textContent = `Your peer offers ${event.name} (${size(event.size)})`;
      bar.setAttribute("aria-label", `Receiving ${event.name}`);
      actions.replaceChildren(
        actionButton("Accept", "accept", () => {
          current?.files.accept(id);
          actions.replaceChildren(actionButton("Cancel", "cancel", () => current?.files.cancel(id)));
        }),
        actionButton("Refuse", "refuse", () => {
          current?.files.refuse(id);
          item?.remove();
        }));
      break;
    case "file_offered":
      item.dataset.state = "offered";
      label.textContent = `Offering ${event.name} (${size(event.size)}): waiting for your peer`;
      bar.setAttribute("aria-label", `Sending ${event.name}`);
      actions.replaceChildren(actionButton("Cancel", "cancel", () => current?.files.cancel(id)));
      break;
    case "file_progress":
      item.dataset.state = event.sending ? "sending" : "receiving";
      bar.value = event.total ? event.bytes / event.total : 1;
      break;
    case "file_received": {
      item.dataset.state = "received";
      bar.value = 1;
      label.textContent = `${event.name} (${size(event.size)}) arrived; SHA-256 checked`;
      const link = document.createElement("a");
      link.href = event.url;
      link.download = event.name;
      link.textContent = "Save";
      link.dataset.sha256 = event.sha256;
      actions.replaceChildren(link);
      break;
    }
    case "file_sent":
      item.dataset.state = "sent";
      bar.value = 1;
      label.textContent = `${label.textContent?.replace(/: waiting for your peer$/, "").replace(/^Offering /, "") ?? ""}: delivered; your peer's SHA-256 matched`;
      actions.replaceChildren();
      break;
    case "file_refused":
      item.dataset.state = "refused";
      label.textContent = "Your peer refused the file";
      actions.replaceChildren();
      break;
    case "file_cancelled":
      item.dataset.state = "cancelled";
      label.textContent = event.byPeer ? "Your peer cancelled the transfer" : "Cancelled";
      actions.replaceChildren();
      break;
    case "file_failed":
      item.dataset.state = "failed";
      label.textContent = `The transfer failed: ${event.reason}`;
      actions.replaceChildren();
      break;
  }
}

// Relay only: chosen here, remembered in this browser, or asked for by the link (`?relay`).
const relayOnly = /** @type {HTMLInputElement} */ ($("relay-only"));
relayOnly.checked = new URLSearchParams(location.search).has("relay") || localStorage.getItem("inviso.relayOnly") === "1";
relayOnly.addEventListener("change", () => localStorage.setItem("inviso.relayOnly", relayOnly.checked ? "1" : "0"));

/** @type {Chat | null} */
let current = null;
/** @type {Vault | null} */
let vault = null;
/** @type {ContactBook | null} */
let contacts = null;
/** @type {Listener | null} */
let listener = null;

/** @param {Vault} opened */
function unlocked(opened) {
  vault = opened;
  contacts = new ContactBook(opened);
}

/** @param {Chat} chat */
function started(chat) {
  current = chat;
  relayOnly.disabled = true;
  /** @type {any} */ (globalThis).invisoChat = chat; // for the browser tests and the console
  return chat;
}

/**
 * The chat, made when the user starts one (with the relay-only and keep choices of that
 * moment; keeping opens, or makes, the vault with the passphrase typed).
 */
async function chat() {
  if (current) return current;
  const keep = /** @type {HTMLInputElement} */ ($("keep"));
  if (keep.checked && !vault) unlocked(await Vault.open(/** @type {HTMLInputElement} */ ($("passphrase-input")).value));
  const name = /** @type {HTMLInputElement} */ ($("name-input")).value;
  return started(new Chat(onEvent, { relayOnly: relayOnly.checked, vault: keep.checked ? vault : null, contacts: keep.checked ? contacts : null, name }));
}

$("keep").addEventListener("change", () => show("passphrase-row", /** @type {HTMLInputElement} */ ($("keep")).checked && !vault));

/** Lists the kept chats, each with a button that resumes it and one that forgets it. */
async function listKept() {
  if (!vault) return;
  const list = $("kept-list");
  list.replaceChildren();
  for (const id of await vault.ids()) {
    const item = document.createElement("li");
    let label = "";
    let ended = false;
    try {
      const stored = await vault.get(id);
      const name = keptName(stored) || "your peer";
      const when = new Date(Number(stored?.savedAt) || 0).toLocaleString();
      const v1 = stored?.protocol === "v1" ? (stored.verifiedByUser ? " (v1, verified by you)" : " (v1, unverified)") : "";
      ended = stored?.ended === true;
      label = ended ? `Chat with ${name}${v1}, ended ${when}: your peer left` : `Chat with ${name}${v1}, last used ${when}`;
    } catch {
      label = "A damaged chat";
    }
    const text = document.createElement("span");
    text.textContent = label;
    const resume = document.createElement("button");
    resume.type = "button";
    resume.id = `resume-${id}`;
    resume.textContent = "Resume";
    resume.setAttribute("aria-label", `Resume: ${label}`);
    if (ended) {
      resume.textContent = "Read";
      resume.setAttribute("aria-label", `Read: ${label}`);
    }
    resume.addEventListener("click", () => run(async () => {
      if (current || !vault) return;
      if (ended) return readEnded(vault, id);
      // The chat is the page's at once: what is typed while it reconnects goes to it.
      const chat = started(await Chat.restore(vault, id, onEvent, { relayOnly: relayOnly.checked, contacts }));
      await chat.reconnect();
    }));
    const forget = document.createElement("button");
    forget.type = "button";
    forget.textContent = "Forget";
    forget.setAttribute("aria-label", `Forget: ${label}`);
    forget.addEventListener("click", () => run(async () => {
      if (!vault || !confirm(`Forget the ${label.toLowerCase()} on this device? This cannot be undone.`)) return;
      await vault.delete(id);
      await listKept();
    }));
    item.append(text, " ", resume, " ", forget);
    list.append(item);
  }
  if (!list.children.length) list.textContent = "No chat is kept.";
}

/** The controls of a running chat, hidden while an ended one is read. */
const LIVE_CONTROLS = ["send-form", "file-form", "lifetime-form", "leave", "rename"];

/**
 * Shows an ended chat's kept messages, read only.
 * @param {Vault} opened @param {string} id
 */
async function readEnded(opened, id) {
  $("messages").replaceChildren();
  await Chat.readEnded(opened, id, onEvent);
  for (const control of [...LIVE_CONTROLS, "save-form", "v1-warning"]) show(control, false);
  $("safety-number").textContent = "(ended)";
  $("path").textContent = "none: the chat ended";
  show("start", false);
  show("kept", false);
  show("chat", true);
  $("status").textContent = "This chat ended: your peer left. Its messages stay on this device until you forget it (Back, then Forget).";
  show("back", true);
}

/** From an ended chat back to the start and the kept list. */
$("back").addEventListener("click", () => run(async () => {
  show("chat", false);
  show("back", false);
  for (const control of LIVE_CONTROLS) show(control, true);
  $("messages").replaceChildren();
  $("status").textContent = "";
  show("start", true);
  show("kept", true);
  await listKept();
}));

/**
 * A call chat for `contact`: kept (calls need the vault), our identity key as the
 * session's, the contact's pinned.
 * @param {import("./js/chat/contacts.js").Contact} contact @param {(event: import("./js/chat/chat.js").ChatEvent) => void} emit
 */
function callChat(contact, emit) {
  const name = /** @type {HTMLInputElement} */ ($("name-input")).value;
  return new Chat(emit, { relayOnly: relayOnly.checked, vault, contacts, call: contact, name });
}

/** @param {string} text */
function calling(text) {
  $("calling-text").textContent = text;
  show("start", false);
  show("kept", false);
  show("calling", true);
}

/** Back to the start after a call or a wait that was stopped. */
function stopped() {
  current = null;
  relayOnly.disabled = false;
  show("calling", false);
  show("start", true);
  show("kept", true);
}

/** Lists the saved contacts, each with Call, Rename, Verify and Delete. */
async function listContacts() {
  if (!contacts) return;
  const book = contacts;
  const all = await book.all();
  show("contacts", true);
  show("listen", all.length > 0);
  const list = $("contacts-list");
  list.replaceChildren();
  for (const contact of all) {
    const item = document.createElement("li");
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = contact.name;
    const print = document.createElement("span");
    print.className = "fingerprint";
    print.textContent = fingerprint(contact.identity);
    print.title = "The start of their identity key";
    const status = document.createElement("span");
    status.textContent = contact.verified ? "verified" : "saved from a verified invite";
    const button = (/** @type {string} */ text, /** @type {string} */ action, /** @type {() => Promise<void>} */ work) =>
      actionButton(text, action, () => run(work), `${text} ${contact.name}`);
    item.append(name, print, status,
      button("Call", "call", async () => {
        if (current) return;
        const chat = started(callChat(contact, onEvent));
        calling(`Calling ${contact.name}… They answer with Call (or a page or inviso listen waiting for calls).`);
        // Stopped meanwhile: the search ends there, quietly.
        await chat.call().catch((error) => {
          if (!chat.closed) throw error;
        });
      }),
      button("Rename", "rename", async () => {
        const renamed = prompt(`New name for ${contact.name}`, contact.name);
        if (renamed === null || renamed.trim() === contact.name) return;
        await book.save({ ...contact, name: renamed });
        await listContacts();
      }),
      button("Verified", "verify", async () => {
        if (!confirm(`Mark ${contact.name} verified? Do this once you compared the safety number with them in person or over a call you trust.`)) return;
        await book.save({ ...contact, verified: true });
        await listContacts();
      }),
      button("Delete", "delete", async () => {
        if (!confirm(`Delete ${contact.name}? Its secret is gone: no more calls until you pair again with an invite.`)) return;
        await book.delete(contact);
        await listContacts();
      }));
    list.append(item);
  }
  if (!list.children.length) list.textContent = "No contacts yet: in a kept chat from an invite with words, both of you choose Save contact.";
}

$("listen").addEventListener("click", () => run(async () => {
  if (current || listener || !contacts) return;
  const all = await contacts.all();
  listener = new Listener({
    contacts: all,
    chat: callChat,
    answered: (chat, contact, events) => {
      listener = null;
      started(chat);
      chat.emit = onEvent;
      calling(`${contact.name} is calling…`);
      for (const event of events) onEvent(event);
    },
    failed: (contact, error) => {
      $("error").textContent = `${contact.name}: ${error.message}`;
    },
  });
  const waiting = listener;
  calling("Opening a room for each contact…");
  await waiting.start();
  // Every room is open (unless a call came meanwhile).
  if (listener === waiting) calling(`Waiting for a call from ${waiting.contacts.map((contact) => contact.name).join(", ")}…`);
}));

$("save-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = /** @type {HTMLInputElement} */ ($("save-input"));
  const name = input.value;
  run(async () => {
    if (!current) return;
    await current.saveContact(name);
    input.value = "";
  });
});

$("stop-calling").addEventListener("click", () => run(async () => {
  listener?.stop();
  listener = null;
  const chat = current;
  stopped();
  await chat?.leave();
  $("status").textContent = "stopped";
}));

$("unlock-form").addEventListener("submit", (event) => {
  event.preventDefault();
  run(async () => {
    const input = /** @type {HTMLInputElement} */ ($("unlock-input"));
    unlocked(await Vault.open(input.value));
    input.value = "";
    show("unlock-form", false);
    show("passphrase-row", false);
    await listKept();
    await listContacts();
  });
});

vaultExists().then((exists) => show("kept", exists));

/** @param {() => Promise<void>} action */
async function run(action) {
  $("error").textContent = "";
  try {
    await action();
  } catch (error) {
    $("error").textContent = String(/** @type {Error} */ (error).message ?? error);
  }
}

$("create").addEventListener("click", () => run(async () => (await chat()).create()));
$("join-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = /** @type {HTMLInputElement} */ ($("invite-input")).value;
  run(async () => {
    const invite = parseInvite(text);
    const joining = await chat();
    history.replaceState(null, "", location.pathname + location.search);
    show("start", false);
    show("kept", false);
    await joining.join(invite);
  });
});
$("send-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = /** @type {HTMLInputElement} */ ($("message-input"));
  const text = input.value;
  if (!text) return;
  input.value = "";
  run(async () => (await chat()).sendText(text));
});
$("leave").addEventListener("click", () => run(async () => {
  if (!current || !confirm("Leave this chat for good? Your peer is told, and nothing of it is kept.")) return;
  await current.leave();
  for (const id of ["send-form", "file-form", "leave"]) show(id, false);
}));
$("lifetime-form").addEventListener("submit", (event) => {
  event.preventDefault();
  run(async () => {
    const lifetime = /** @type {HTMLSelectElement} */ ($("lifetime-select")).value;
    (await chat()).proposeLifetime(lifetime);
    $("status").textContent = `proposed: messages disappear after ${LIFETIME_NAMES[lifetime]}; waiting for your peer`;
  });
});
$("rename").addEventListener("click", () => {
  if (!current) return;
  const name = prompt("Your name for this chat (on this device only; empty: the name your peer chose)", current.shownName());
  if (name !== null) current.rename(name);
});
$("accept-lifetime").addEventListener("click", () => current?.acceptLifetime());
$("reject-lifetime").addEventListener("click", () => {
  current?.rejectLifetime();
  show("lifetime-proposal", false);
});
/** The v1 chat was marked verified (now, or before it was kept). */
function markedVerified() {
  $("v1-warning").textContent = "Marked verified: you compared the safety number with your peer.";
  $("status").textContent = "encrypted, verified by you (v1)";
}
$("mark-verified").addEventListener("click", () => {
  current?.markVerified();
  markedVerified();
});
$("file-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = /** @type {HTMLInputElement} */ ($("file-input"));
  const file = input.files?.[0];
  if (!file) return;
  input.value = "";
  run(async () => {
    await (await chat()).sendFile(file, file.name);
  });
});
// A link carries the invite in the fragment, which the browser never sends to a server.
if (location.hash.startsWith("#join=")) {
  /** @type {HTMLInputElement} */ ($("invite-input")).value = decodeURIComponent(location.hash.slice(6));
}

// Every module loaded and every handler is in place (the browser tests wait for this).
document.body.dataset.ready = "true";
