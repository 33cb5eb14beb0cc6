// The annotate page: one item at a time, one control per label, keyboard first; every label is saved
// the moment it is given (POST .../labels), the item is submitted when complete. No inline script or
// style: this file runs under the service's strict Content-Security-Policy. Everything users wrote is
// put in the page with textContent, never as HTML.
//
// One focus: the page's "label in focus" (where digit keys, tag keys and Backspace act) and the browser's
// focus are kept in one place. Keys that move the label in focus move the browser's focus to its button;
// Tab (or a click) moves the browser's focus, and the label in focus follows. Enter always submits (also on
// a label button: it never presses one); Space presses the label button the browser's focus is on.
//
// Each choice (a level of one label) is an ARIA radio group: one Tab stop per group (roving tabindex), ← / →
// move the browser's focus within it, Space chooses. A tag is a toggle button (aria-pressed). The shortcuts
// act wherever the browser's focus is, except in a text field; on a link, the guidelines' summary and the
// page's other buttons (Submit, Next item) Enter and Space keep their own meaning.
//
// While an item is being submitted (or the next one is being fetched) labels cannot change: keys and clicks
// that would change one are refused ("submitting…"), and the submit waits for every save still under way.
(function () {
  "use strict";
  const root = document.getElementById("annotate");
  if (!root) return;
  const cfg = { project: root.dataset.project, code: root.dataset.code };
  const api = root.dataset.api;  // the project's API under the service's path prefix, as the page gives it
  const call = window.dialevalApi(api, cfg.code, codeRefused);
  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  let info = null;        // the project: scheme controls and keys
  let controls = {};      // scale -> control info
  let view = null;        // the current assignment
  let labels = {};        // "turn|scale" -> value (this annotator's own)
  let slots = [];         // [{turn, scale}] every choice control, in page order (keyboard focus moves here)
  let focus = 0;
  let busy = false;       // an item is being submitted, or the next one fetched: no label changes meanwhile
  let lost = false;       // the item is no longer this annotator's (expired and taken, withdrawn, submitted)
  let minus = "";         // "-" typed just before: the next digit chooses a negative level
  let saving = Promise.resolve();   // saves go one after another, in the order labels were given
  let unsaved = 0;                  // saves not answered yet ("saved" is said when none is left)
  let changes = {};                 // "turn|scale" -> how many times the page changed it (a failed save undoes
                                    // its change only if no later one was made)
  const saveErrors = new Map();     // "turn|scale" -> why its last save failed (shown until it is saved again)
  let errorText = "";               // any other error (the start, a submit, the next item)
  let closed = "";                  // why the code no longer works here (excluded, revoked): the page has stopped

  // The error box shows every label whose save failed (until it is saved again) and the last other error.
  function showErrors() {
    const msgs = closed ? [closed] : [...saveErrors.values()];  // once stopped, that is all there is to say
    if (errorText && !closed) msgs.push(errorText);
    const msg = msgs.join("\n");
    const e = $("error");
    const changed = e.textContent !== msg;
    e.textContent = msg;
    e.hidden = !msg;
    // where it is seen: the alerts stick to the top of the window (annotate.css); scrolled to if need be
    if (msg && changed && e.scrollIntoView) e.scrollIntoView({ block: "nearest" });
  }

  function showError(msg) {
    errorText = msg || "";
    showErrors();
  }

  function say(msg) { if (!closed) $("saved").textContent = msg; }   // the page's one live region (polite)

  // The server refused the code itself (the organisers excluded this annotator or revoked the code): nothing
  // can be saved or submitted any more. The page stops at once and says so, once, instead of asking for each
  // label again; the labels saved before stay saved.
  function codeRefused(e) {
    if (closed) return;
    say("");
    closed = "Your code no longer works in this project (" + e.message + "). Labels saved before this are kept; " +
      "nothing more can be saved from this page.";
    lost = true;  // no label changes, no submit, no next item
    setMinus("");
    for (const b of root.querySelectorAll("button")) b.disabled = true;
    $("lost").hidden = true;
    showErrors();
  }

  function key(turn, scale) { return turn + "|" + scale; }
  function unitName(turn) { return Number(turn) === -1 ? "dialogue" : "turn " + turn; }

  // What is still to label, from this page's own labels (answers to concurrent saves may arrive out of
  // order, so the server's "missing" of one answer can be older than the page; submit checks again).
  function missing() { return slots.filter((s) => labels[key(s.turn, s.scale)] === undefined); }

  function unitHasTags(turn) {
    const unit = view && view.units.find((u) => u.turn === turn);
    return !!unit && unit.controls.some((name) => controls[name].flag);
  }

  function keyHelp() {
    const dl = $("keys");
    dl.textContent = "";
    const add = (k, what) => { dl.appendChild(el("dt", "", k)); dl.appendChild(el("dd", "", what)); };
    const all = info.scheme.controls;
    const tags = all.filter((c) => c.flag);
    for (const c of all) {
      if (c.flag) add(c.levels[0].key, "toggle " + c.title + " on the turn in focus");
      else add(c.levels.map((l) => l.key).join(" "), c.title + ": " + c.levels.map((l) => l.value).join(" / "));
    }
    if (all.some((c) => !c.flag && c.levels.some((l) => l.key.startsWith("-")))) {
      add("- then a digit", "a negative level (-1, -2); any other key cancels the \"-\"");
    }
    if (tags.length) {
      add("after a level", "the turn stays in focus, so tags typed next (" + tags.map((c) => c.levels[0].key).join(" ") +
          ") are its own; ↓ / j goes on to the next turn");
    } else {
      add("after a level", "the next missing label comes into focus");
    }
    add("↓ / j, ↑ / k", "next / previous label");
    add("← / →", "the previous / next level of the label the browser's focus is on (Space chooses it)");
    add("Backspace", "clear the level of the label in focus" + (tags.length ? "; on a tag's button: clear that tag" : ""));
    add("Tab, Space", "move to the next label or button (one stop per label), press it");
    add("Enter", "submit the item when complete (never changes a label); on a link or the guidelines' title: " +
        "open it");
    add("where", "these keys work wherever the browser's focus is, except in a text field");
    // what the levels mean where their names do not say it (STC-3's nugget types)
    const legend = $("legend");
    legend.textContent = "";
    for (const c of all) {
      for (const lv of c.levels) {
        if (!lv.description) continue;
        legend.appendChild(el("dt", "", lv.value));
        legend.appendChild(el("dd", "", lv.description));
      }
    }
    $("legend-box").hidden = !legend.childElementCount;
  }

  function progress() {
    const need = view ? view.units.reduce((n, u) => n + u.controls.filter((s) => !controls[s].flag).length, 0) : 0;
    const given = view ? need - missing().length : 0;
    const bar = $("progress");
    bar.max = Math.max(need, 1);
    bar.value = view ? given : (info && info.progress && info.progress.finished ? bar.max : 0);
    const p = (view && view.progress) || (info && info.progress) || { finished: 0 };
    // "item k of n": this annotator's k-th item; n the project's items (nobody gets an item twice, so
    // nobody labels more than n; with k annotators per item and many annotators each labels fewer)
    const which = view && p.items ? "item " + Math.min(p.finished + 1, p.items) + " of " + p.items + " · " : "";
    $("progress-text").textContent = which + (view ? "this item: " + given + " of " + need + " labels · " : "") +
      "you finished " + p.finished + " item" + (p.finished === 1 ? "" : "s");
    $("submit").disabled = !view || busy || lost;  // with labels missing, pressing it says which (submit())
  }

  function controlElement(turn, scale) {
    const c = controls[scale];
    const box = el("span", "control");
    box.dataset.turn = turn;
    box.dataset.scale = scale;
    box.setAttribute("role", c.flag ? "group" : "radiogroup");
    const name = unitName(turn) + " " + c.title;  // "turn 3 validity": which turn, for a screen reader too
    box.setAttribute("aria-label", name);
    box.appendChild(el("span", "title", c.title));
    for (const lv of c.levels) {
      const b = el("button", "");
      b.type = "button";
      b.dataset.value = lv.value;
      b.appendChild(el("kbd", "", lv.key));
      b.appendChild(document.createTextNode(c.flag ? c.title : lv.value));
      const meaning = lv.description ? " — " + lv.description : "";
      b.title = c.flag ? "toggle " + c.title + " (" + lv.key + ")" : lv.value + meaning + " (" + lv.key + ")";
      // read as "turn 3 validity: VALID", not "1VALID" (the key and the value run together otherwise)
      b.setAttribute("aria-label", c.flag ? name : name + ": " + lv.value);
      if (lv.description) b.setAttribute("aria-description", lv.description);
      b.setAttribute("aria-keyshortcuts", lv.key);
      if (c.flag) {
        b.setAttribute("aria-pressed", "false");
      } else {  // one level of a choice: a radio of the group, one Tab stop per group (rove())
        b.setAttribute("role", "radio");
        b.setAttribute("aria-checked", "false");
        b.tabIndex = -1;
      }
      b.addEventListener("click", () => {
        if (lost) return;
        if (busy) { refuse(); return; }
        if (c.flag) setLabel(turn, scale, labels[key(turn, scale)] === "yes" ? "no" : "yes");
        else setLabel(turn, scale, lv.value);
        focusOn(turn, scale, false);
      });
      if (c.flag) box.querySelector(".title").textContent = "";
      box.appendChild(b);
    }
    if (!c.flag) box.querySelector("button").tabIndex = 0;
    return box;
  }

  function render() {
    const ol = $("dialogue");
    ol.textContent = "";
    const dc = $("dialogue-controls");
    dc.textContent = "";
    dc.hidden = true;
    slots = [];
    lost = false;
    $("lost").hidden = true;
    $("done").hidden = true;
    $("item-title").textContent = "Item " + (view.item.position + 1) + (view.item.dialogue_id ? " · " + view.item.dialogue_id : "");
    const units = {};
    for (const u of view.units) units[u.turn] = u.controls;
    for (const t of view.item.turns) {
      const li = el("li", units[t.index] ? "labelled" : "context");
      li.dataset.turn = t.index;
      // the turn's number as the API and its messages give it ("turn 0 validity" missing): numbered from 0
      li.appendChild(el("span", "turn-no", "turn " + t.index));
      li.appendChild(el("span", "speaker", t.speaker));
      const said = el("span", "text", t.text);
      said.dir = "auto";  // isolated: a right-to-left turn does not reorder the speaker's name
      const lang = window.dialevalScriptLang(t.text);
      if (lang) said.lang = lang;
      li.appendChild(said);
      if (units[t.index]) {
        const row = el("div", "controls");
        for (const s of units[t.index]) {
          row.appendChild(controlElement(t.index, s));
          if (!controls[s].flag) slots.push({ turn: t.index, scale: s });
        }
        li.appendChild(row);
      }
      ol.appendChild(li);
    }
    if (units[-1]) {
      dc.hidden = false;
      dc.dataset.turn = -1;
      dc.appendChild(el("p", "note", "The whole dialogue:"));
      const row = el("div", "controls");
      for (const s of units[-1]) {
        row.appendChild(controlElement(-1, s));
        if (!controls[s].flag) slots.push({ turn: -1, scale: s });
      }
      dc.appendChild(row);
    }
    labels = {};
    for (const l of view.labels) labels[key(l.turn, l.scale)] = l.value;
    saveErrors.clear();
    showErrors();
    paint();
    const firstMissing = slots.findIndex((s) => labels[key(s.turn, s.scale)] === undefined);
    focus = firstMissing < 0 ? 0 : firstMissing;
    paintFocus(true);  // the keyboard starts in the item, on its first missing label
    progress();
  }

  function paint() {
    const todo = new Set(missing().map((m) => key(m.turn, m.scale)));
    for (const box of root.querySelectorAll(".control")) {
      const k = key(box.dataset.turn, box.dataset.scale);
      const c = controls[box.dataset.scale];
      box.classList.toggle("missing", todo.has(k));
      for (const b of box.querySelectorAll("button")) {
        const on = c.flag ? labels[k] === "yes" : labels[k] === b.dataset.value;
        b.setAttribute(c.flag ? "aria-pressed" : "aria-checked", on ? "true" : "false");
        if (!c.flag) b.classList.toggle("chosen", on);
      }
      rove(box);
    }
  }

  // A choice's one Tab stop: the level the browser's focus is on, else the chosen level, else the first.
  function rove(box) {
    const radios = [...box.querySelectorAll('[role="radio"]')];
    if (!radios.length) return;
    const stop = radios.find((b) => b === document.activeElement) ||
      radios.find((b) => b.getAttribute("aria-checked") === "true") || radios[0];
    for (const b of radios) b.tabIndex = b === stop ? 0 : -1;
  }

  function currentBox() {
    const s = slots[focus];
    return s ? root.querySelector('.control[data-turn="' + s.turn + '"][data-scale="' + CSS.escape(s.scale) + '"]') : null;
  }

  function showMinus() {  // the pending "-" is seen on the label in focus until a digit or another key
    for (const x of root.querySelectorAll(".pending-minus")) x.remove();
    const box = currentBox();
    const said = "“-” typed: the next digit chooses a negative level";
    if (!minus && $("saved").textContent === said) say("");
    if (minus && box) {
      const m = el("span", "pending-minus", "−…");
      m.title = "a negative level: type its digit (any other key cancels)";
      box.appendChild(m);
      say(said);
    }
  }

  function setMinus(v) {
    if (v === minus) return;
    minus = v;
    showMinus();
  }

  // Marks the label in focus; with moveDom the browser's focus goes to its button (the chosen level, or the
  // first), so that Tab, Space and a screen reader are where the keys act.
  function paintFocus(moveDom) {
    for (const x of root.querySelectorAll(".focus, .current")) x.classList.remove("focus", "current");
    const s = slots[focus];
    if (!s) return;
    const unit = s.turn === -1 ? $("dialogue-controls") : root.querySelector('#dialogue li[data-turn="' + s.turn + '"]');
    if (unit) {
      unit.classList.add("focus");
      // the whole turn in view when it fits in the window; a taller one is not scrolled as a whole (its
      // top or bottom would be aligned, and the control in focus could be pushed off screen)
      if (unit.scrollIntoView && unit.getBoundingClientRect().height <= window.innerHeight) {
        unit.scrollIntoView({ block: "nearest" });
      }
    }
    const box = currentBox();
    if (!box) return;
    box.classList.add("current");
    let shown = box.contains(document.activeElement) ? document.activeElement : box;
    if (moveDom) {
      const b = box.querySelector('[aria-checked="true"]') || box.querySelector("button");
      if (b && document.activeElement !== b) b.focus({ preventScroll: true });
      if (b) shown = b;
    }
    if (shown.scrollIntoView) shown.scrollIntoView({ block: "nearest" });  // the control in focus is on screen
    showMinus();
  }

  function focusOn(turn, scale, moveDom) {
    let i = slots.findIndex((s) => s.turn === turn && s.scale === scale);
    if (i < 0) i = slots.findIndex((s) => s.turn === turn);  // a tag's button: the label of its turn
    if (i >= 0) { focus = i; paintFocus(moveDom); }
  }

  // An error on a save or a submit: is the item still this annotator's? (Its time ran out and another
  // annotator took it, the organisers withdrew it, another tab submitted it.) If not, say so and offer the
  // next item, instead of repeating the error at every key.
  async function checkLost(aid, e) {
    if (!e || (e.status !== 409 && e.status !== 404)) return false;
    let state = null;
    try { state = (await call("GET", "/assignments/" + aid)).state; } catch (e2) { state = e2.status === 404 ? "gone" : null; }
    if (state === null || state === "active" || !view || view.assignment !== aid) return false;
    lost = true;
    setMinus("");
    for (const b of root.querySelectorAll(".control button")) b.disabled = true;
    say("");
    saveErrors.clear();
    showError("This item is no longer yours (" + e.message + "). Go on with the next item.");
    $("lost").hidden = false;
    progress();
    $("next-item").focus();
    return true;
  }

  function refuse() { say("submitting… (labels cannot change now)"); }

  function labelName(turn, scale) { return unitName(turn) + " " + controls[scale].title; }

  async function setLabel(turn, scale, value) {
    if (!view || lost) return;
    if (busy) { refuse(); return; }
    const k = key(turn, scale);
    const before = labels[k];
    const mine = changes[k] = (changes[k] || 0) + 1;
    if (value === null) delete labels[k]; else labels[k] = value;
    paint();
    say("saving…");
    progress();
    const aid = view.assignment;
    unsaved += 1;
    const save = async () => {
      unsaved -= 1;
      if (lost) return;
      const here = () => view && view.assignment === aid;
      try {
        await call("POST", "/assignments/" + aid + "/labels", { turn, scale, value });
        if (here()) {
          saveErrors.delete(k);  // saved again: its failure is over (other labels' failures stay shown)
          errorText = "";
          showErrors();
        }
        if (!unsaved) say(saveErrors.size ? "some labels are not saved (see above)" : "saved");
      } catch (e) {
        if (here()) {
          // undo this change unless the label was changed since (the later change stands, and is saved
          // after this one: saves go one after another)
          if (changes[k] === mine) { if (before === undefined) delete labels[k]; else labels[k] = before; }
          say(unsaved ? "saving…" : "");
          if (!(await checkLost(aid, e))) {
            saveErrors.set(k, labelName(turn, scale) + ": not saved (" + e.message + "); give its label again");
            showErrors();
          }
        }
      }
      if (here()) { paint(); progress(); }
    };
    saving = saving.then(save, save);
    return saving;
  }

  // Every save given so far answered (also saves chained while waiting).
  async function settled() {
    let p;
    do { p = saving; await p; } while (p !== saving);
  }

  // Which labels ("turn|scale") the server has otherwise than the page (another tab or window changed them);
  // a flag "no" and no flag at all are the same.
  function labelsDiff(server) {
    const norm = (m) => {
      const out = {};
      for (const [k, v] of Object.entries(m)) {
        const scale = k.slice(k.indexOf("|") + 1);
        if (v === null || v === undefined || (controls[scale] && controls[scale].flag && v === "no")) continue;
        out[k] = v;
      }
      return out;
    };
    const theirs = {};
    for (const l of server) theirs[key(l.turn, l.scale)] = l.value;
    const a = norm(labels), b = norm(theirs);
    return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => a[k] !== b[k]);
  }

  async function next() {
    busy = true;
    lost = false;
    $("lost").hidden = true;
    try {
      const r = await call("POST", "/next");
      if (r.done) {
        view = null;
        $("dialogue").textContent = "";
        $("dialogue-controls").hidden = true;
        $("item-title").textContent = "";
        $("done").hidden = false;
        $("submit").hidden = true;
        say("");
        root.querySelector(".keys").hidden = true;
        info.progress = r.progress;
        $("done").focus();
      } else {
        view = r;
        render();
      }
      showError("");
    } catch (e) {
      showError(e.message);
    }
    busy = false;
    progress();
  }

  async function submit() {
    if (!view || busy || lost) return;
    const left = missing();
    if (left.length) {  // say what is missing, and take the annotator there
      say(left.length + " label" + (left.length === 1 ? "" : "s") +
        " still missing (marked *); the first is now the label in focus (its keys act there)");
      focusOn(left[0].turn, left[0].scale, true);
      return;
    }
    busy = true;
    say("submitting…");
    progress();
    const aid = view.assignment;
    try {
      await settled();  // every save under way (no label changes from now on: busy)
      if (lost) { busy = false; progress(); return; }
      if (saveErrors.size) {  // a label the annotator gave is not saved: never submitted as if it were
        busy = false;
        const [k] = saveErrors.keys();
        const [turn, scale] = [Number(k.slice(0, k.indexOf("|"))), k.slice(k.indexOf("|") + 1)];
        say("not submitted: " + labelName(turn, scale) + " is not saved; give its label again, then press Enter");
        focusOn(turn, scale, true);
        progress();
        return;
      }
      // the labels as saved: another tab or window of this annotator may have changed them since this page
      // showed them. Then the page shows the saved ones, and the annotator checks them before submitting.
      const now = await call("GET", "/assignments/" + aid);
      const diff = now.state === "active" ? labelsDiff(now.labels) : [];
      if (diff.length && view && view.assignment === aid) {
        busy = false;
        view = now;
        render();
        const first = slots.findIndex((s) => diff.includes(key(s.turn, s.scale)));
        if (first >= 0) { focus = first; paintFocus(true); }
        const names = diff.map((k) => labelName(Number(k.slice(0, k.indexOf("|"))), k.slice(k.indexOf("|") + 1)));
        showError("Not submitted: this item's labels were changed elsewhere (another tab or window?) since this " +
                  "page showed them (" + names.join(", ") + "). The page now shows the saved labels: check them " +
                  "and press Enter again to submit.");
        say("not submitted: check the labels, then press Enter again");
        progress();
        return;
      }
      const r = await call("POST", "/assignments/" + aid + "/submit");
      info.progress = r.progress;
      busy = false;
      await next();
    } catch (e) {
      busy = false;
      if (!(await checkLost(aid, e))) showError(e.message);
      progress();
    }
  }

  const MODIFIERS = new Set(["Shift", "Control", "Alt", "AltGraph", "Meta", "CapsLock", "NumLock", "Dead"]);
  document.addEventListener("keydown", (ev) => {
    if (closed || ev.ctrlKey || ev.metaKey || ev.altKey || MODIFIERS.has(ev.key)) return;
    const t = ev.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) return;
    const k = ev.key;
    const labelButton = t && t.closest ? t.closest(".control button") : null;  // a level's radio or a tag's button
    // Submit, Next item, links, the guidelines' summary: their own Enter and Space; every other key is a shortcut
    const own = !labelButton && t && (t.tagName === "BUTTON" || t.tagName === "A" || t.tagName === "SUMMARY");
    if (own && (k === "Enter" || k === " ")) return;
    if (lost) {  // the item is gone: Enter goes on to the next one, other keys do nothing
      if (k === "Enter") { ev.preventDefault(); next(); }
      return;
    }
    if (!view) return;
    const pending = minus;
    setMinus("");  // a "-" waits for the very next key only: any other key than a digit cancels it
    if (k === " ") return;  // Space presses the label button the browser's focus is on (elsewhere: scrolls)
    // Enter submits, also on a label button (its default, pressing the button, would change a label)
    if (k === "Enter") { ev.preventDefault(); submit(); return; }
    if ((k === "ArrowLeft" || k === "ArrowRight") && labelButton && labelButton.getAttribute("role") === "radio") {
      ev.preventDefault();  // within the radio group: the browser's focus moves, Space chooses
      const radios = [...labelButton.closest(".control").querySelectorAll('[role="radio"]')];
      const i = (radios.indexOf(labelButton) + (k === "ArrowRight" ? 1 : radios.length - 1)) % radios.length;
      radios[i].focus();
      return;
    }
    if (k === "ArrowDown" || k === "j") { ev.preventDefault(); focus = Math.min(focus + 1, slots.length - 1); paintFocus(true); return; }
    if (k === "ArrowUp" || k === "k") { ev.preventDefault(); focus = Math.max(focus - 1, 0); paintFocus(true); return; }
    const s = slots[focus];
    if (!s) return;
    const c = controls[s.scale];
    const unit = view.units.find((u) => u.turn === s.turn);
    const tag = (unit ? unit.controls : []).find((name) => controls[name].flag && controls[name].levels[0].key === k);
    const lv = c.levels.find((l) => l.key === pending + k);
    const clear = k === "Backspace" || k === "Delete";
    const negative = k === "-" && c.levels.some((l) => l.key.startsWith("-"));
    if (!(lv || tag || clear || negative)) return;
    ev.preventDefault();
    if (busy) { refuse(); return; }  // being submitted: no label changes
    if (clear) {
      // on a tag's button: that tag; elsewhere the level of the label in focus
      const box = labelButton && labelButton.closest(".control");
      if (box && controls[box.dataset.scale].flag) setLabel(Number(box.dataset.turn), box.dataset.scale, "no");
      else setLabel(s.turn, s.scale, null);
      return;
    }
    // a negative level is typed as written: "-" then its digit ("-" is kept for the next key only)
    if (negative) { setMinus("-"); return; }
    if (lv) {
      setLabel(s.turn, s.scale, lv.value);
      // on to the next missing label, but never past a turn with tags: the tags typed next are its own
      const here = slots.slice(focus + 1).findIndex((x) => labels[key(x.turn, x.scale)] === undefined);
      const to = here >= 0 ? focus + 1 + here : Math.min(focus + 1, slots.length - 1);
      if (!(unitHasTags(s.turn) && slots[to].turn !== s.turn)) focus = to;
      paintFocus(true);
      return;
    }
    // a flag of the unit in focus (e.g. p for POSITIVE on this turn)
    setLabel(s.turn, tag, labels[key(s.turn, tag)] === "yes" ? "no" : "yes");
  });

  $("submit").addEventListener("click", submit);
  $("next-item").addEventListener("click", () => next());
  // Tab (or a click) moves the browser's focus: the label in focus (where digit keys and Backspace act) follows
  root.addEventListener("focusin", (ev) => {
    const box = ev.target.closest && ev.target.closest(".control");
    if (box) {
      if (minus) setMinus("");
      rove(box);  // the radio the browser's focus is on is its group's Tab stop
      focusOn(Number(box.dataset.turn), box.dataset.scale, false);
    }
  });

  (async function start() {
    try {
      info = await call("GET", "");
      for (const c of info.scheme.controls) controls[c.scale] = c;
      keyHelp();
      progress();
      await next();
    } catch (e) {
      showError(e.message);
    }
  })();
})();
