// The annotate page: one item at a time, one control per label, keyboard first; every label is saved
// the moment it is given (POST .../labels), the item is submitted when complete. No inline script or
// style: this file runs under the service's strict Content-Security-Policy. Everything users wrote is
// put in the page with textContent, never as HTML.
//
// One focus: the page's "label in focus" (where digit keys, tag keys and Backspace act) and the browser's
// focus are kept in one place. Keys that move the label in focus move the browser's focus to its button;
// Tab (or a click) moves the browser's focus, and the label in focus follows. Enter always submits (also on
// a label button: it never presses one); Space presses the label button the browser's focus is on.
(function () {
  "use strict";
  const root = document.getElementById("annotate");
  if (!root) return;
  const cfg = { project: root.dataset.project, code: root.dataset.code };
  const api = root.dataset.api;  // the project's API under the service's path prefix, as the page gives it
  const call = window.dialevalApi(api, cfg.code);
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
  let busy = false;
  let lost = false;       // the item is no longer this annotator's (expired and taken, withdrawn, submitted)
  let minus = "";         // "-" typed just before: the next digit chooses a negative level
  let saving = Promise.resolve();   // saves go one after another, in the order labels were given
  let unsaved = 0;                  // saves not answered yet ("saved" is said when none is left)


  function showError(msg) {
    const e = $("error");
    e.textContent = msg || "";
    e.hidden = !msg;
    // where it is seen: the alerts stick to the top of the window (annotate.css); scrolled to if need be
    if (msg && e.scrollIntoView) e.scrollIntoView({ block: "nearest" });
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
    add("Backspace", "clear the label in focus");
    add("Tab, Space", "move to a button, press it");
    add("Enter", "submit the item when complete (never changes a label)");
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
    box.setAttribute("role", "group");
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
      b.setAttribute("aria-pressed", "false");
      b.addEventListener("click", () => {
        if (lost) return;
        if (c.flag) setLabel(turn, scale, labels[key(turn, scale)] === "yes" ? "no" : "yes");
        else setLabel(turn, scale, lv.value);
        focusOn(turn, scale, false);
      });
      if (c.flag) box.querySelector(".title").textContent = "";
      box.appendChild(b);
    }
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
        b.setAttribute("aria-pressed", on ? "true" : "false");
        if (!c.flag) b.classList.toggle("chosen", on);
      }
    }
  }

  function currentBox() {
    const s = slots[focus];
    return s ? root.querySelector('.control[data-turn="' + s.turn + '"][data-scale="' + CSS.escape(s.scale) + '"]') : null;
  }

  function showMinus() {  // the pending "-" is seen on the label in focus until a digit or another key
    for (const x of root.querySelectorAll(".pending-minus")) x.remove();
    const box = currentBox();
    const said = "“-” typed: the next digit chooses a negative level";
    if (!minus && $("saved").textContent === said) $("saved").textContent = "";
    if (minus && box) {
      const m = el("span", "pending-minus", "−…");
      m.title = "a negative level: type its digit (any other key cancels)";
      box.appendChild(m);
      $("saved").textContent = said;
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
      if (unit.scrollIntoView) unit.scrollIntoView({ block: "nearest" });
    }
    const box = currentBox();
    if (!box) return;
    box.classList.add("current");
    if (moveDom) {
      const b = box.querySelector('button[aria-pressed="true"]') || box.querySelector("button");
      if (b && document.activeElement !== b) b.focus({ preventScroll: true });
    }
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
    $("saved").textContent = "";
    showError("This item is no longer yours (" + e.message + "). Go on with the next item.");
    $("lost").hidden = false;
    progress();
    $("next-item").focus();
    return true;
  }

  async function setLabel(turn, scale, value) {
    if (!view || lost) return;
    const k = key(turn, scale);
    const before = labels[k];
    if (value === null) delete labels[k]; else labels[k] = value;
    paint();
    $("saved").textContent = "saving…";
    progress();
    const aid = view.assignment;
    unsaved += 1;
    const save = async () => {
      unsaved -= 1;
      if (lost) return;
      try {
        await call("POST", "/assignments/" + aid + "/labels", { turn, scale, value });
        if (!unsaved) $("saved").textContent = "saved";
        showError("");
      } catch (e) {
        if (view && view.assignment === aid) {
          if (before === undefined) delete labels[k]; else labels[k] = before;
        }
        $("saved").textContent = "";
        if (!(await checkLost(aid, e))) showError(e.message);
      }
      if (view && view.assignment === aid) { paint(); progress(); }
    };
    saving = saving.then(save, save);
    return saving;
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
        $("saved").textContent = "";
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
      $("saved").textContent = left.length + " label" + (left.length === 1 ? "" : "s") +
        " still missing (marked *); the first is now the label in focus (its keys act there)";
      focusOn(left[0].turn, left[0].scale, true);
      return;
    }
    busy = true;
    progress();
    const aid = view.assignment;
    try {
      await saving;
      if (lost) { busy = false; progress(); return; }
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
    if (ev.ctrlKey || ev.metaKey || ev.altKey || MODIFIERS.has(ev.key)) return;
    const t = ev.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT")) return;
    const k = ev.key;
    const onLabel = !!(t && t.closest && t.closest(".control"));
    // other buttons (Submit, Next item), links, the guidelines' summary: their own Enter and Space
    if (t && !onLabel && (t.tagName === "BUTTON" || t.tagName === "A" || t.tagName === "SUMMARY")) return;
    if (lost) {  // the item is gone: Enter goes on to the next one, other keys do nothing
      if (k === "Enter") { ev.preventDefault(); next(); }
      return;
    }
    if (!view) return;
    const pending = minus;
    setMinus("");  // a "-" waits for the very next key only: any other key than a digit cancels it
    if (k === " " && onLabel) return;  // Space presses the label button the browser's focus is on
    // Enter submits, also on a label button (its default, pressing the button, would change a label)
    if (k === "Enter") { ev.preventDefault(); submit(); return; }
    if (k === "ArrowDown" || k === "j") { ev.preventDefault(); focus = Math.min(focus + 1, slots.length - 1); paintFocus(true); return; }
    if (k === "ArrowUp" || k === "k") { ev.preventDefault(); focus = Math.max(focus - 1, 0); paintFocus(true); return; }
    const s = slots[focus];
    if (!s) return;
    if (k === "Backspace" || k === "Delete") { ev.preventDefault(); setLabel(s.turn, s.scale, null); return; }
    const c = controls[s.scale];
    // a negative level is typed as written: "-" then its digit ("-" is kept for the next key only)
    if (k === "-" && c.levels.some((l) => l.key.startsWith("-"))) { ev.preventDefault(); setMinus("-"); return; }
    const lv = c.levels.find((l) => l.key === pending + k);
    if (lv) {
      ev.preventDefault();
      setLabel(s.turn, s.scale, lv.value);
      // on to the next missing label, but never past a turn with tags: the tags typed next are its own
      const here = slots.slice(focus + 1).findIndex((x) => labels[key(x.turn, x.scale)] === undefined);
      const to = here >= 0 ? focus + 1 + here : Math.min(focus + 1, slots.length - 1);
      if (!(unitHasTags(s.turn) && slots[to].turn !== s.turn)) focus = to;
      paintFocus(true);
      return;
    }
    // a flag of the unit in focus (e.g. p for POSITIVE on this turn)
    const unit = view.units.find((u) => u.turn === s.turn);
    for (const name of unit ? unit.controls : []) {
      const f = controls[name];
      if (f.flag && f.levels[0].key === k) {
        ev.preventDefault();
        setLabel(s.turn, name, labels[key(s.turn, name)] === "yes" ? "no" : "yes");
        return;
      }
    }
  });

  $("submit").addEventListener("click", submit);
  $("next-item").addEventListener("click", () => next());
  // Tab (or a click) moves the browser's focus: the label in focus (where digit keys and Backspace act) follows
  root.addEventListener("focusin", (ev) => {
    const box = ev.target.closest && ev.target.closest(".control");
    if (box) {
      if (minus) setMinus("");
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
