// The chat page of a collection (dialeval service). No inline script anywhere: this file is loaded by
// templates/collection/chat.html and reads its settings from the #chat element's data attributes.
// Everything people wrote is put on the page with textContent, never innerHTML.
"use strict";

(function () {
  const root = document.getElementById("chat");
  if (!root) return;
  const cfg = root.dataset;
  const humanHuman = cfg.kind === "human-human";
  const api = cfg.api;  // the collection's API under the service's path prefix, as the page gives it
  const call = window.dialevalApi(api, cfg.code, codeRefused);
  const el = (id) => document.getElementById(id);
  const turnsEl = el("turns"), statusEl = el("chat-status"), errorEl = el("chat-error");
  const input = el("utterance"), sendBtn = el("send"), endBtn = el("end"), retryBtn = el("retry");
  const againBtn = el("again"), form = el("turn-form"), countEl = el("count"), noteEl = el("send-note");
  const maxChars = Number(cfg.maxChars) || 2000;
  let session = null, lastPosition = 0, socket = null, busy = false;
  // a turn sent without an answer, or refused, while the chat could not be read again ({text, position,
  // refusal}): the next Send reads the chat first (the turn may have been stored), it does not send blindly
  let unsure = null;
  // the participant's turn on its way (human-machine: {li, text, position, back}): shown in the chat as soon as
  // it is sent, marked "Sending…" until the server's answer says it stored it; the box is free for the next one.
  // back: its text was given back to the box (it was not stored, or that is not known)
  let pending = null;
  let nudged = false;  // Enter was pressed while sending had to wait

  // why the code no longer works here (the organisers revoked it): the page has stopped and says only that
  let closed = "";
  function setStatus(text) { statusEl.textContent = closed ? "This chat cannot go on from this page." : text; }
  function showError(text) {
    text = closed || text;
    errorEl.textContent = text || "";
    errorEl.hidden = !text;
  }
  // The server refused the code itself (revoked since the page opened): nothing can be sent any more. The page
  // stops at once and says so, once; the turns sent before are kept.
  function codeRefused(e) {
    if (closed) return;
    closed = "Your code no longer works in this collection (" + e.message + "). What was said before is kept; " +
      "nothing more can be sent from this page.";
    if (socket) socket.close();
    render();
    showError("");
  }
  // The engine's failure as the participant reads it: the API's engine_error names the cause for the
  // organisers (an exception's class, an HTTP status, a JSON path), which means nothing to a participant.
  function engineTrouble(detail) {
    if (!detail) return "";
    const slow = /did not answer within/.test(detail);
    return (slow ? "The chat engine took too long to answer." : "The chat engine could not answer just now.") +
      " Your message is saved: ask again with Retry.";
  }
  // Characters as the server counts them (code points, after the outer blanks are removed)
  function length(text) { return [...text.replace(/\r\n?/g, "\n").trim()].length; }
  function count() {
    const n = length(input.value);
    const over = n > maxChars;
    countEl.hidden = n < maxChars * 0.9;  // shown near the limit only
    countEl.classList.toggle("over", over);
    countEl.textContent = n + " / " + maxChars + " characters" +
      (over ? ": " + (n - maxChars) + " too many; shorten the message to send it" : "");
    return n;
  }
  function roleName(speaker) {
    if (session && speaker === session.you) {  // the chat's own name for the participant (its log's)
      const name = session.your_name || cfg.nickname;
      return name ? name + " (you)" : "you";
    }
    if (speaker === "SYSTEM") return cfg.engine;
    return "the other person";
  }
  // who said a turn, as the page shows it (again when the page learns which role is the participant's)
  function paintTurn(li) {
    const mine = Boolean(session) && li.dataset.speaker === session.you;
    li.classList.toggle("mine", mine);
    li.classList.toggle("theirs", !mine);
    li.querySelector(".who").textContent = roleName(li.dataset.speaker);
  }
  function turnItem(t) {
    const li = document.createElement("li");
    li.dataset.position = String(t.position);
    li.dataset.speaker = t.speaker;
    const who = document.createElement("span");
    who.className = "who";
    const text = document.createElement("span");
    text.className = "utterance";
    text.dir = "auto";  // isolated: a right-to-left utterance does not reorder the speaker's name
    const lang = window.dialevalScriptLang(t.utterance);
    if (lang) text.lang = lang;
    text.textContent = t.utterance;
    li.append(who, text);
    paintTurn(li);
    return li;
  }
  function addTurn(t) {
    if (t.position <= lastPosition) return;
    lastPosition = t.position;
    const li = turnItem(t);
    // a turn the server has: it takes the place of the page's unconfirmed one there (and stays before later ones)
    turnsEl.querySelectorAll("li.pending").forEach((p) => { if (Number(p.dataset.position) <= t.position) p.remove(); });
    turnsEl.insertBefore(li, turnsEl.querySelector("li.pending"));
    li.scrollIntoView({ block: "end" });
  }
  function markPending(li, text) {
    let state = li.querySelector(".state");
    if (!state) {
      state = document.createElement("small");
      state.className = "state";
      state.style.display = "block";  // CSSOM, not a style attribute: the CSP allows it
      li.append(state);
    }
    state.textContent = text;
  }
  function showPending(text, position) {
    const li = turnItem({ position, speaker: session.you, utterance: text });
    li.classList.add("pending");
    markPending(li, "Sending…");
    turnsEl.append(li);
    li.scrollIntoView({ block: "end" });
    pending = { li, text, position, back: false };
  }
  // The text of a turn that was not stored (or may not have been) back in the box, never lost: before what
  // the participant typed meanwhile, if anything
  function giveBack(p) {
    if (p.back) return;
    p.back = true;
    const now = input.value;
    if (now.trim() !== p.text) input.value = now.trim() ? p.text + "\n" + now : p.text;
    count();
  }
  // What became of the pending turn: "stored" (the chat shows the server's turn in its place), "not stored"
  // (its text is back in the box) or "unknown" (the chat could not be read: it stays, marked, text in the box)
  function settle(outcome) {
    const p = pending;
    if (!p) return;
    if (outcome === "unknown") {
      markPending(p.li, "Not confirmed: this message may not have been saved.");
      giveBack(p);
      return;
    }
    pending = null;
    if (outcome === "stored") {
      if (p.back && input.value.trim() === p.text) { input.value = ""; count(); }
      if (p.li.isConnected) markPending(p.li, "Saved.");  // until the chat is read again and shows it in place
    } else {
      p.li.remove();
      giveBack(p);
    }
  }
  function myTurn() {
    if (!session || session.status !== "active") return false;
    if (session.next) return session.next === session.you;
    return lastPosition % 2 === 0;  // human-machine: the participant speaks at even counts
  }
  function endReason(s) {  // "ended by USER1" is the export's wording; the page speaks to the person
    const by = /^ended by (\w+)$/.exec(s.end_reason || "");
    if (!by) return s.end_reason;
    return by[1] === s.you ? "you ended it" : (by[1] === "SYSTEM" ? "the system ended it" : "the other person ended it");
  }
  // the keyboard's focus is nowhere useful: on the page itself, or on a control that went away or off
  function focusLost() {
    const a = document.activeElement;
    return !a || a === document.body || a === document.documentElement || !a.isConnected || a.disabled ||
      Boolean(a.closest("[hidden]"));
  }
  function render() {
    if (closed) {
      for (const b of [input, sendBtn, endBtn, retryBtn, againBtn]) b.disabled = true;
      noteEl.hidden = true;
      setStatus("");
      return;
    }
    const open = Boolean(session) && session.status === "active";
    const canSend = open && myTurn() && !busy && !(session.engine_error);
    // human-machine: the box stays open while the chat goes on, so the participant can type on while the reply
    // is awaited (only sending waits); human-human: it opens at the participant's turn
    const canType = humanHuman ? canSend : open;
    input.disabled = !canType;
    sendBtn.disabled = !canSend;
    // why Send does nothing now (said again, louder, when Enter was pressed meanwhile)
    noteEl.hidden = !(canType && !canSend);
    if (noteEl.hidden) nudged = false;
    noteEl.textContent = noteEl.hidden ? "" : (nudged ? "Not sent yet: " : "") + (session.engine_error && !busy ?
      "ask for the reply again with Retry, then send." : "wait for the reply to send; you can type on meanwhile.");
    endBtn.disabled = !session || !["active", "waiting"].includes(session.status);
    const retryWas = !retryBtn.hidden, againWas = !againBtn.hidden;
    retryBtn.hidden = !(open && session.engine_error);
    againBtn.hidden = !(session && ["ended", "abandoned"].includes(session.status));
    // the way forward gets the keyboard's focus as it appears: Retry after a failed reply (unless the participant
    // is typing in the box: keys meant for it must not press Retry), a new chat at the end; else the message box
    if (!retryBtn.hidden && !retryWas && (focusLost() || document.activeElement !== input || !input.value.trim())) {
      retryBtn.focus();
    } else if (!againBtn.hidden && !againWas) againBtn.focus();
    else if (canType && focusLost()) input.focus();
    if (!session) return;
    if (session.status === "waiting") setStatus("Waiting for another person to join…");
    else if (session.status === "ended") setStatus("The chat has ended (" + endReason(session) + "). Thank you!");
    else if (session.status === "abandoned") setStatus("The chat was abandoned.");
    else if (busy) setStatus(humanHuman ? "Sending…" : "Waiting for the reply…");
    else if (session.engine_error) setStatus("No reply came: ask for it again with Retry.");
    else if (myTurn()) setStatus("Your turn (" + lastPosition + " of at most " + session.max_turns + " turns).");
    else setStatus(humanHuman ? "The other person is writing…" : "Waiting for the reply…");
    if (humanHuman && session.status === "active" && session.partner_here === false) {
      statusEl.textContent += " The other person seems to have left; you may end the chat.";
    }
  }
  function absorb(state) {
    const youWas = session ? session.you : undefined;
    session = Object.assign({}, session || {}, state);
    if (session.you !== youWas) turnsEl.querySelectorAll("li").forEach(paintTurn);
    (state.turns || []).forEach(addTurn);
    // the engine's failure ("ask again with Retry") matters only while the chat goes on: once it has ended
    // or was abandoned there is nothing to retry, and the box goes (the server sends no engine_error then)
    showError(session.status === "active" ? engineTrouble(state.engine_error) : "");
    render();
  }
  async function act(fn) {
    busy = true; showError(""); render();
    try { await fn(); } catch (e) { showError(e.message); }
    busy = false; render();
  }

  // ---- human-machine: the JSON API ----
  // The chat as the server has it now: every turn after the page's last one (the page never skips one).
  async function reread() {
    absorb(await call("GET", "/sessions/" + session.id + "?after=" + lastPosition));
  }
  // An answer that holds turns of the chat: shown in order. When it skips turns the page has not shown
  // (sent from another window), the chat is read from the page's last turn on instead.
  async function take(state) {
    const next = session ? (state.turns || []).find((t) => t.position > lastPosition) : undefined;
    if (next === undefined || next.position === lastPosition + 1) { absorb(state); return; }
    try { await reread(); } catch (e) {
      showError("The chat has turns this page has not shown yet, and they could not be read (" + e.message +
        "). Reload the page to see the whole chat.");
    }
  }
  // After a turn was sent and no answer came (the connection broke: the server may have stored it or not),
  // or it was refused: read the chat again before anything is sent again, and say what became of the turn.
  async function recover(text, position, refusal) {
    let outcome;
    try { await reread(); } catch (e) {
      unsure = { text, position, refusal };
      outcome = refusal ? "not stored" : "unknown";
      showError((refusal ? "Your message was not sent: " + refusal.message + "." :
        "The server could not be reached (connection lost?): your message may have been saved.") +
        " The chat could not be reloaded yet; your text is kept: press Enter to reload the chat first.");
      return outcome;
    }
    unsure = null;
    const trouble = engineTrouble(session.status === "active" && session.engine_error);
    const say = (msg) => showError(trouble ? msg + " " + trouble : msg);
    if (refusal) {
      say("Your message was not sent: " + refusal.message + ". The chat was reloaded; your text is kept.");
      return "not stored";
    }
    const li = turnsEl.querySelector("li[data-position='" + position + "']:not(.pending)");
    if (li && li.dataset.speaker === session.you && li.querySelector(".utterance").textContent === text) {
      say("The connection was lost before the server's answer came, but your message was saved; the chat was " +
        "reloaded.");
      return "stored";
    } else {
      say("The server could not be reached (connection lost?): your message may have been saved. The chat was " +
        "reloaded and shows what was saved; your text is kept: send it again only if it is not in the chat.");
      return "not stored";
    }
  }
  async function start() {
    lastPosition = 0; turnsEl.replaceChildren(); session = null; unsure = null; pending = null;
    if (humanHuman) { connect(); return; }
    await act(async () => absorb(await call("POST", "/sessions", { name: cfg.nickname || "" })));
  }
  async function send(text) {
    const position = lastPosition + 1;  // a turn whose place was taken meanwhile is refused (409), not stored
    if (humanHuman) {
      socket.send(JSON.stringify({ type: "turn", utterance: text, position }));
      input.value = "";
      count();
      return;
    }
    // shown in the chat at once, and the box is cleared for the next message (typed while the reply is awaited)
    showPending(text, position);
    input.value = "";
    count();
    let outcome = "not stored";
    await act(async () => {
      let state;
      try {
        state = await call("POST", "/sessions/" + session.id + "/turns", { utterance: text, position });
      } catch (e) {
        if (e.network) { outcome = await recover(text, position, null); return; }
        if (e.status === 409) { outcome = await recover(text, position, e); return; }
        throw e;  // refused (nothing stored): the text goes back to the box
      }
      outcome = "stored";
      await take(state);
    });
    settle(outcome);
  }

  // ---- human-human: the WebSocket ----
  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + location.host + api + "/ws");
    socket.addEventListener("open", () => {
      socket.send(JSON.stringify({ type: "auth", code: cfg.code, name: cfg.nickname || "" }));
    });
    socket.addEventListener("message", (ev) => {
      const msg = JSON.parse(ev.data);
      if (msg.type === "turn") { addTurn(msg.turn); render(); }
      else if (msg.type === "state") { absorb(msg.session); }
      else if (msg.type === "error" && (msg.status === 401 || msg.status === 403)) codeRefused({ message: msg.detail });
      else if (msg.type === "error") { showError(msg.detail); }
    });
    socket.addEventListener("close", () => {
      if (session && session.status === "active") showError("The connection was lost; reload the page to go on.");
    });
  }

  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    if (sendBtn.disabled) {  // a reply is awaited (or must be asked for again): the text stays in the box
      if (!input.disabled) { nudged = true; render(); }
      return;
    }
    const text = input.value.trim();
    if (count() > maxChars) {  // refused here, whole: nothing is cut off without a word
      showError("Your message has " + length(text) + " characters; at most " + maxChars + " are sent. Shorten it, " +
        "or send it in two turns.");
      input.focus();
      return;
    }
    if (unsure) {
      const u = unsure;
      let outcome = "unknown";
      act(async () => { outcome = await recover(u.text, u.position, u.refusal); }).then(() => settle(outcome));
      return;
    }
    if (text && myTurn()) send(text);
  });
  input.addEventListener("input", count);
  input.addEventListener("keydown", (ev) => {
    // an input method's Enter (Japanese, Chinese…) confirms what it composes: it sends nothing
    if (ev.isComposing || ev.keyCode === 229) return;
    if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); form.requestSubmit(); }
  });
  retryBtn.addEventListener("click", () => act(async () => {
    await take(await call("POST", "/sessions/" + session.id + "/retry?after=" + lastPosition));
    unsure = null;  // the answer holds every turn after the page's last: the page shows the chat as it is
  }));
  endBtn.addEventListener("click", () => {
    if (humanHuman && socket && socket.readyState === WebSocket.OPEN) {
      socket.send(JSON.stringify({ type: "end" }));
      return;
    }
    act(async () => take(await call("POST", "/sessions/" + session.id + "/end")));
  });
  againBtn.addEventListener("click", () => start());
  start();
})();
