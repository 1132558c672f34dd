// Invites (docs/protocol.md, "Invite"): NNNNNN-word-word-word, or the page link
// https://server/#join=NNNNNN-word-word-word. Six digits alone are v1 (the iOS app's
// protocol: unauthenticated, so the chat is shown unverified).

import { WORDS } from "../v2/wordlist.js";

/** @typedef {{ joinCode: string, words: string[] }} Invite  `words` is empty for a v1 code. */

/**
 * Three fresh words (11 bits each from the browser's CSPRNG).
 * @returns {string[]}
 */
export function randomWords() {
  const values = globalThis.crypto.getRandomValues(new Uint16Array(3));
  return Array.from(values, (value) => WORDS[value & 0x7ff]);
}

/** @param {Invite} invite */
export function inviteText(invite) {
  return [invite.joinCode, ...invite.words].join("-");
}

/**
 * Reads an invite or a link to this page carrying one; any letter case, whitespace
 * around it. Throws a readable Error for anything else.
 * @param {string} input
 * @returns {Invite}
 */
export function parseInvite(input) {
  let text = input.trim();
  const hash = text.indexOf("#join=");
  if (hash >= 0) text = decodeURIComponent(text.slice(hash + 6));
  const parts = text.split("-");
  if (parts.length === 1 && /^[0-9]{6}$/.test(parts[0])) return { joinCode: parts[0], words: [] };
  if (parts.length !== 4 || !/^[0-9]{6}$/.test(parts[0])) throw new Error("an invite looks like 271828-orbit-violin-quantum");
  const words = parts.slice(1).map((word) => word.replace(/[A-Z]/g, (c) => c.toLowerCase()));
  for (const word of words) {
    if (!WORDS.includes(word)) throw new Error(`"${word}" is not an invite word`);
  }
  return { joinCode: parts[0], words };
}
