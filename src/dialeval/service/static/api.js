// The JSON API as the service's pages call it: one fetch helper for the chat and annotate pages.
// Loaded before chat.js / annotate.js; no inline script anywhere (the service's CSP forbids it).
"use strict";

window.dialevalApi = function (base, code, refused) {
  // call(method, path, body): the parsed JSON answer, or an Error with the server's message. refused(error), if
  // given, is called when the server refuses the code itself (401: not, or no longer, a valid code; 403: its
  // work closed by the organisers): the page then stops, and says so once.
  return async function call(method, path, body) {
    const headers = { "Authorization": "Bearer " + code };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let r;
    try {
      r = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (e) {  // no answer at all ("Failed to fetch"): say what happened in words. The request may have
      // reached the server all the same (only its answer was lost): the page that knows what it sent says more
      const lost = new Error("the server could not be reached (connection lost?); try again");
      lost.network = true;
      throw lost;
    }
    let data = null;
    try { data = await r.json(); } catch (e) { data = null; }
    if (!r.ok) {
      const d = data && data.detail;
      const e = new Error(typeof d === "string" ? d
        : (Array.isArray(d) ? d.map((x) => x.msg || x).join("; ") : "the server answered " + r.status));
      e.status = r.status;  // e.g. 409: the page may ask what became of the item or chat
      if ((r.status === 401 || r.status === 403) && refused) refused(e);
      throw e;
    }
    return data;
  };
};

// The language a text's script tells for certain enough to say (a screen reader then reads it in that language,
// not as English, the page's): "ja" with kana, "ko" with hangul, "zh" with Han characters only; "" otherwise
// (the page's language stands: the script of Latin, Cyrillic or Arabic text does not tell its language).
window.dialevalScriptLang = function (text) {
  if (/[\p{Script=Hiragana}\p{Script=Katakana}]/u.test(text)) return "ja";
  if (/\p{Script=Hangul}/u.test(text)) return "ko";
  if (/\p{Script=Han}/u.test(text)) return "zh";
  return "";
};
