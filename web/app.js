// The page: start or join a chat, then talk. All protocol work is in js/chat/chat.js.

import { Chat } from "./js/chat/chat.js";
import { parseInvite } from "./js/chat/invite.js";

const $ = (/** @type {string} */ id) => /** @type {HTMLElement} */ (document.getElementById(id));

/** @param {string} id @param {boolean} shown */
function show(id, shown) {
  $(id).hidden = !shown;
}

/** @param {import("./js/chat/chat.js").ChatEvent} event */
function onEvent(event) {
  switch (event.type) {
    case "invite":
      $("invite").textContent = event.invite;
      $("invite-link").textContent = event.link;
      show("start", false);
      show("waiting", true);
      break;
    case "status":
      $("status").textContent = event.text;
      break;
    case "secured":
      $("safety-number").textContent = event.safetyNumber.replace(/(\d{5})/g, "$1 ").trim();
      $("status").textContent = "secured: end-to-end encrypted";
      show("start", false);
      show("waiting", false);
      show("chat", true);
      /** @type {HTMLInputElement} */ ($("message-input")).focus();
      break;
    case "message": {
      const item = document.createElement("li");
      item.className = event.outgoing ? "out" : "in";
      item.dataset.seq = String(event.seq);
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
    case "error":
      $("error").textContent = event.text;
      break;
  }
}

const chat = new Chat(onEvent);

/** @param {() => Promise<void>} action */
async function run(action) {
  $("error").textContent = "";
  try {
    await action();
  } catch (error) {
    $("error").textContent = String(/** @type {Error} */ (error).message ?? error);
  }
}

$("create").addEventListener("click", () => run(() => chat.create()));
$("join-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = /** @type {HTMLInputElement} */ ($("invite-input")).value;
  run(async () => {
    const invite = parseInvite(text);
    history.replaceState(null, "", location.pathname);
    show("start", false);
    await chat.join(invite);
  });
});
$("send-form").addEventListener("submit", (event) => {
  event.preventDefault();
  const input = /** @type {HTMLInputElement} */ ($("message-input"));
  const text = input.value;
  if (!text) return;
  input.value = "";
  run(() => chat.sendText(text));
});
// A link carries the invite in the fragment, which the browser never sends to a server.
if (location.hash.startsWith("#join=")) {
  /** @type {HTMLInputElement} */ ($("invite-input")).value = decodeURIComponent(location.hash.slice(6));
}
