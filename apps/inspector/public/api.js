// @ts-check
// The tenant API, called with the key the user typed, kept in sessionStorage
// only. The key goes in the Authorization header only, never in a URL.

const KEY_STORAGE = 'inspector.apiKey';

export class ApiError extends Error {
  /** @param {number} status @param {string} code @param {string} message */
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function apiKey() {
  return sessionStorage.getItem(KEY_STORAGE);
}

/** @param {string} key */
export function keepKey(key) {
  sessionStorage.setItem(KEY_STORAGE, key);
}

export function forgetKey() {
  sessionStorage.removeItem(KEY_STORAGE);
}

/** What a refused key does (sign out), set by the page's entry module, which this one cannot import. */
let unauthorized = () => {};
/** @param {() => void} handler */
export function onUnauthorized(handler) {
  unauthorized = handler;
}

/** @param {string} path @param {{ key?: string, accept?: string, signal?: AbortSignal }} [options] */
export function request(path, { key = apiKey() ?? '', accept = 'application/json', signal } = {}) {
  return fetch(path, { headers: { authorization: `Bearer ${key}`, accept }, credentials: 'omit', cache: 'no-store', signal });
}

/** @param {string} text @returns {any} */
function parsed(text) {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    return text;
  }
}

/** The error a refused request becomes (a 401 signs out). @param {Response} response @param {string} text */
export function refusal(response, text) {
  const body = parsed(text);
  const problem = body && typeof body === 'object';
  const detail = problem ? `${body.code ?? ''} ${body.detail ?? body.title ?? ''}`.trim() : String(body).slice(0, 300);
  if (response.status === 401) unauthorized();
  return new ApiError(response.status, problem && typeof body.code === 'string' ? body.code : '', `${response.status} ${detail}`);
}

/** @param {string} path @param {string} [key] @returns {Promise<any>} */
export async function api(path, key) {
  const response = await request(path, { key });
  const text = await response.text();
  if (!response.ok) throw refusal(response, text);
  return parsed(text);
}

export const enc = encodeURIComponent;
