// The annotate page: one item at a time, one control per label, keyboard first; every label is saved
// the moment it is given (POST .../labels), the item is submitted when complete. No inline script or
// style: this file runs under the service's strict Content-Security-Policy. Everything users wrote is
// put in the page with textContent, never as HTML.
(function () {
  "use strict";
  const root = document.getElementById("annotate");
  if (!root) return;
  const cfg = { project: root.dataset.project, code: root.dataset.code };
  const api = "/api/annotation/" + encodeURIComponent(cfg.project);
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
  let saving = Promise.resolve();   // saves go one after another, in the order labels were given


  function showError(msg) {
    const e = $("error");
    e.textContent = msg || "";
    e.hidden = !msg;
  }

  function key(turn, scale) { return turn + "|" + scale; }

  // What is still to label, from this page's own labels (answers to concurrent saves may arrive out of
  // order, so the server's "missing" of one answer can be older than the page; submit checks again).
  function missing() { return slots.filter((s) => labels[key(s.turn, s.scale)] === undefined); }

  function keyHelp() {
    const dl = $("keys");
    dl.textContent = "";
    const add = (k, what) => { dl.appendChild(el("dt", "", k)); dl.appendChild(el("dd", "", what)); };
    for (const c of info.scheme.controls) {
      if (c.flag) add(c.levels[0].key, "toggle " + c.title);
      else add(c.levels.map((l) => l.key).join(" "), c.title + ": " + c.levels.map((l) => l.value).join(" / "));
    }
    add("↓ / j, ↑ / k", "next / previous label");
    add("Backspace", "clear the label in focus");
    add("Enter", "submit the item when complete");
  }

  function progress() {
    const need = view ? view.units.reduce((n, u) => n + u.controls.filter((s) => !controls[s].flag).length, 0) : 0;
    const given = view ? need - missing().length : 0;
    const bar = $("progress");
    bar.max = Math.max(need, 1);
    bar.value = view ? given : (info && info.progress && info.progress.finished ? bar.max : 0);
    const p = (view && view.progress) || (info && info.progress) || { finished: 0 };
    $("progress-text").textContent = (view ? "this item: " + given + " of " + need + " labels · " : "") +
      "you finished " + p.finished + " item" + (p.finished === 1 ? "" : "s");
    $("submit").disabled = !view || busy;  // with labels missing, pressing it says which (submit())
  }

  function controlElement(turn, scale) {
    const c = controls[scale];
    const box = el("span", "control");
    box.dataset.turn = turn;
    box.dataset.scale = scale;
    box.setAttribute("role", "group");
    box.setAttribute("aria-label", c.title);
    box.appendChild(el("span", "title", c.title));
    for (const lv of c.levels) {
      const b = el("button", "");
      b.type = "button";
      b.dataset.value = lv.value;
      b.appendChild(el("kbd", "", lv.key));
      b.appendChild(document.createTextNode(c.flag ? c.title : lv.value));
      b.title = c.flag ? "toggle " + c.title + " (" + lv.key + ")" : lv.value + " (" + lv.key + ")";
      // read as "A: 2", not "12" (the key and the value run together otherwise); the key as a shortcut
      b.setAttribute("aria-label", c.flag ? c.title : c.title + ": " + lv.value);
      b.setAttribute("aria-keyshortcuts", lv.key);
      b.setAttribute("aria-pressed", "false");
      b.addEventListener("click", () => {
        if (c.flag) setLabel(turn, scale, labels[key(turn, scale)] === "yes" ? "no" : "yes");
        else setLabel(turn, scale, lv.value);
        focusOn(turn, scale);
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
    paintFocus();
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

  function paintFocus() {
    for (const x of root.querySelectorAll(".focus, .current")) x.classList.remove("focus", "current");
    const s = slots[focus];
    if (!s) return;
    const unit = s.turn === -1 ? $("dialogue-controls") : root.querySelector('#dialogue li[data-turn="' + s.turn + '"]');
    if (unit) {
      unit.classList.add("focus");
      if (unit.scrollIntoView) unit.scrollIntoView({ block: "nearest" });
    }
    const box = root.querySelector('.control[data-turn="' + s.turn + '"][data-scale="' + CSS.escape(s.scale) + '"]');
    if (box) box.classList.add("current");
  }

  function focusOn(turn, scale) {
    const i = slots.findIndex((s) => s.turn === turn && s.scale === scale);
    if (i >= 0) { focus = i; paintFocus(); }
  }

  async function setLabel(turn, scale, value) {
    if (!view) return;
    const k = key(turn, scale);
    const before = labels[k];
    if (value === null) delete labels[k]; else labels[k] = value;
    paint();
    $("saved").textContent = "saving…";
    progress();
    const aid = view.assignment;
    const save = async () => {
      try {
        await call("POST", "/assignments/" + aid + "/labels", { turn, scale, value });
        $("saved").textContent = "saved";
        showError("");
      } catch (e) {
        if (view && view.assignment === aid) {
          if (before === undefined) delete labels[k]; else labels[k] = before;
        }
        $("saved").textContent = "";
        showError(e.message);
      }
      if (view && view.assignment === aid) { paint(); progress(); }
    };
    saving = saving.then(save, save);
    return saving;
  }

  async function next() {
    busy = true;
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
    if (!view || busy) return;
    const left = missing();
    if (left.length) {  // say what is missing, and take the annotator there
      $("saved").textContent = left.length + " label" + (left.length === 1 ? "" : "s") +
        " still missing (marked *); the first is now the label in focus (its keys act there)";
      focusOn(left[0].turn, left[0].scale);
      return;
    }
    busy = true;
    progress();
    try {
      await saving;
      const r = await call("POST", "/assignments/" + view.assignment + "/submit");
      info.progress = r.progress;
      busy = false;
      await next();
    } catch (e) {
      busy = false;
      showError(e.message);
      progress();
    }
  }

  let minus = "";  // "-" typed just before: the next digit chooses a negative level
  document.addEventListener("keydown", (ev) => {
    if (!view || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const t = ev.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA")) return;
    const k = ev.key;
    // A button reached with the keyboard (Tab) is pressed by Enter; after a mouse click, Enter still submits
    if (t && t.tagName === "BUTTON" && (k === " " || (k === "Enter" && t !== clicked))) return;
    const s = slots[focus];
    if (k === "Enter") { ev.preventDefault(); submit(); return; }
    if (k === "ArrowDown" || k === "j") { ev.preventDefault(); focus = Math.min(focus + 1, slots.length - 1); paintFocus(); return; }
    if (k === "ArrowUp" || k === "k") { ev.preventDefault(); focus = Math.max(focus - 1, 0); paintFocus(); return; }
    if (!s) return;
    if (k === "Backspace" || k === "Delete") { ev.preventDefault(); setLabel(s.turn, s.scale, null); return; }
    const c = controls[s.scale];
    // a negative level is typed as written: "-" then its digit ("-" is kept for the next key only)
    const typed = minus + k;
    minus = "";
    if (k === "-" && c.levels.some((l) => l.key.startsWith("-"))) { ev.preventDefault(); minus = "-"; return; }
    const lv = c.levels.find((l) => l.key === typed);
    if (lv) {
      ev.preventDefault();
      const here = slots.slice(focus + 1).findIndex((x) => labels[key(x.turn, x.scale)] === undefined);
      setLabel(s.turn, s.scale, lv.value);
      if (here >= 0) focus = focus + 1 + here;
      else if (focus < slots.length - 1) focus += 1;
      paintFocus();
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

  let clicked = null;  // the button the mouse (or a touch) last pressed: it keeps the focus, not the Enter key
  root.addEventListener("pointerdown", (ev) => { clicked = ev.target.closest ? ev.target.closest("button") : null; });
  document.addEventListener("keydown", (ev) => { if (ev.key === "Tab") clicked = null; }, true);

  $("submit").addEventListener("click", submit);
  // Tab moves the keyboard's focus: the label in focus (where digit keys and Backspace act) follows it
  root.addEventListener("focusin", (ev) => {
    const box = ev.target.closest && ev.target.closest(".control");
    if (box) focusOn(Number(box.dataset.turn), box.dataset.scale);
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
