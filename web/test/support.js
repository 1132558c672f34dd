// Helpers shared by the browser test modules.

/** @typedef {{ passed: number, failed: number, skipped: number, failures: string[] }} GroupResult */

/** @returns {GroupResult} */
export function group() {
  return { passed: 0, failed: 0, skipped: 0, failures: [] };
}

/**
 * Counts one check; keeps the first ten failures' names.
 * @param {GroupResult} result @param {boolean} ok @param {string} what
 */
export function check(result, ok, what) {
  if (ok) {
    result.passed += 1;
  } else {
    result.failed += 1;
    if (result.failures.length < 10) result.failures.push(what);
  }
}

/**
 * A JSON document from this origin.
 * @param {string} path
 * @returns {Promise<any>}
 */
export async function load(path) {
  const response = await fetch(path);
  if (!response.ok) throw new Error(`${path}: HTTP ${response.status}`);
  return response.json();
}
