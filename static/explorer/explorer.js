// Trace explorer: steps through the real trace embedded in the page (json_script "explorer-data").
// State at step n is replayed from step 0 (docs/trace-schema.md): each frame's locals from the
// `changed` of its steps and their objects from `refs`, the objects' views from `heap`, the call stack
// from call/return events, the output from the steps' stdout. Frames and objects are drawn side by side
// with SVG arrows from each reference to its object, so aliasing shows.
// Breakpoints and hidden names, as in Python Tutor: a line ending in `# break`, or whose number is
// clicked, is a breakpoint, and while there is one Forward and Back (and the arrow keys) jump to the
// next or previous step on such a line (once they differ from the comments' they are kept in the URL,
// ?break=3,7, and ?break= for none); names listed
// in a `# hide: a, b` comment are left out of the frames, with the objects only they reach.
// An exercise stops the stepper at its questions through `ExecSimExplorer.hooks` (below).
// No dependencies; keys: Left/Right (back/forward), Home/End (first/last). Any element with
// data-step="N" (a checked claim, a divergence link) jumps to the trace's step N when clicked. On
// permalinks the step is in the URL (#step-N): a hash edit or the browser's Back moves the stepper;
// jumps (first, last, go to, a claim) are history entries, single steps replace the current one.
// Numbering: a person reads steps from 1 ("Step 1 of 39", the slider, "Go to step", #step-N); the
// trace's JSON, data-step and `current` are its index, from 0. #step-0, which only a link made before
// steps were counted from 1 holds, opens step 1.
(function () {
  "use strict";
  var root = document.getElementById("explorer");
  var source = document.getElementById("explorer-data");
  if (!root || !source) { return; }
  var data = JSON.parse(source.textContent);
  var steps = (data.trace && data.trace.steps) || [];
  var sentences = data.sentences || [];
  var last = Math.max(steps.length - 1, 0);
  var current = 0;
  // An exercise (static/exercises/exercise.js) hooks in here: limit(from, to) -> the step a move may
  // reach (it stops at a question not yet answered); narration(step, text) -> what the narration box
  // says; rendered(step, measuring) after each drawing (measuring: presentation mode sizing its type).
  var hooks = {};
  var SVG = "http://www.w3.org/2000/svg";

  function q(id) { return root.querySelector('[data-testid="' + id + '"]'); }
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined) { node.textContent = text; }
    return node;
  }
  function has(obj, key) { return !!obj && Object.prototype.hasOwnProperty.call(obj, key); }

  var code = q("ex-code");
  var lines = (data.lines || []).map(function (text) { return text.replace(/\r$/, ""); });  // a trace saved with CRLF
  while (lines.length > 1 && lines[lines.length - 1] === "") { lines.pop(); }  // the final newline
  var breaks = {};  // line number -> true
  var hidden = {};  // name -> true
  lines.forEach(function (text, i) {
    if (/#\s*break\s*$/.test(text)) { breaks[i + 1] = true; }
    var hide = /#\s*(?:pythontutor_)?hide:\s*(.*)$/.exec(text);
    if (hide) { hide[1].split(",").forEach(function (name) { if (name.trim()) { hidden[name.trim()] = true; } }); }
    var li = el("li");
    li.setAttribute("data-line", String(i + 1));
    li.appendChild(el("span", "mark", ""));
    var ln = el("button", "ln", String(i + 1));
    ln.type = "button";
    ln.setAttribute("data-break", String(i + 1));
    ln.setAttribute("aria-label", "Breakpoint on line " + (i + 1));
    ln.title = "Set or clear a breakpoint on this line";
    li.appendChild(ln);
    li.appendChild(el("span", "src", text || " "));
    code.appendChild(li);
  });
  var commented = breakLines().join(",");  // those the code sets; ?break= holds the set once it differs
  var asked = new URLSearchParams(window.location.search).get("break");  // "" : none at all
  if (asked !== null) {
    breaks = {};
    asked.split(",").forEach(function (n) {
      if (Number(n) >= 1 && Number(n) <= lines.length) { breaks[Number(n)] = true; }
    });
  }

  // Functions and classes as Python Tutor shows them: `function build(items, key=None)`, its parameters
  // read from the code's one `def` of that name (left out when there are several or none), and
  // `class Point`; the Python repr stays in the cell's tooltip.
  var signatures = {};
  var defs = /\bdef\s+(\w+)\s*\(/g, found;
  var text = lines.join("\n");
  while ((found = defs.exec(text)) !== null) {
    var depth = 1, at = defs.lastIndex;
    while (at < text.length && depth > 0) {
      if (text[at] === "(") { depth++; } else if (text[at] === ")") { depth--; }
      at++;
    }
    var params = text.slice(defs.lastIndex, at - 1).replace(/#[^\n]*/g, "").replace(/\s+/g, " ").trim();
    signatures[found[1]] = has(signatures, found[1]) && signatures[found[1]] !== params ? null : params;
  }
  function shown(value) {
    if (value.shown) { return value.shown; }  // an instance told from the heap, not its address
    var fn = /^<function (?:[\w.<>]*\.)?([\w<>]+) at 0x\.\.\.>$/.exec(value.repr);
    if (value.type === "function" && fn) {
      var sig = has(signatures, fn[1]) ? signatures[fn[1]] : null;
      return "function " + fn[1] + (sig === null ? "" : "(" + sig.replace(/,$/, "") + ")");
    }
    var cls = /^<class '(?:__main__\.)?([\w.]+)'>$/.exec(value.repr);
    if (value.type === "type" && cls) { return "class " + cls[1]; }
    return value.repr;
  }

  // -- replaying the trace ----------------------------------------------------------------------

  function stateAt(n) {
    var frames = {}, stack = [], stdout = "", heap = {};
    for (var i = 0; i <= n && i < steps.length; i++) {
      var s = steps[i];
      if (!frames[s.frame]) {
        frames[s.frame] = { id: s.frame, fn: s["function"], depth: s.depth, locals: {}, refs: {}, order: [],
                            line: s.line, exc: null };
        stack.push(s.frame);
      }
      var f = frames[s.frame];
      f.line = s.line;
      (s.heap || []).forEach(function (view) { heap[view.id] = view; });
      var refs = s.refs || {};
      Object.keys(s.changed || {}).forEach(function (name) {
        if (!(name in f.locals)) { f.order.push(name); }
        f.locals[name] = s.changed[name];
        if (!has(refs, name)) { delete f.refs[name]; }  // now a plain value
      });
      Object.keys(refs).forEach(function (name) { if (name !== "return") { f.refs[name] = refs[name]; } });
      if (s.event === "exception") { f.exc = { line: s.line, value: s.value }; }
      else if (s.event === "line") { f.exc = null; }
      stdout += s.stdout || "";
      if (s.event === "return" && i < n) {  // a frame that returned before step n is gone
        stack.splice(stack.indexOf(s.frame), 1);
        delete frames[s.frame];
      }
    }
    return { frames: frames, stack: stack, stdout: stdout, heap: heap };
  }

  function sentenceAt(n) {
    var found = null;
    sentences.forEach(function (s) { if (s.step <= n) { found = s; } });
    return found;
  }

  function describe(s) {
    if (!s) { return "(no step)"; }
    var where = s["function"] + ", line " + s.line;
    if (s.event === "call" && s.resumed) { return "resume: " + s["function"] + " goes on after its yield (line " + s.line + ")"; }
    if (s.event === "call") { return "call: " + s["function"] + " starts (line " + s.line + ")"; }
    if (s.event === "return" && s.yielded) { return "yield from " + s["function"] + " \u2192 " + shown(s.value); }
    if (s.event === "return") {
      return "return from " + s["function"] + (s.value ? " \u2192 " + shown(s.value) : " (unwinding an exception)");
    }
    if (s.event === "exception") { return "exception in " + where + ": " + (s.value ? s.value.repr : ""); }
    return where + " is about to run";
  }

  // -- drawing ----------------------------------------------------------------------------------

  function pointer(ref) {
    var ptr = el("span", "ex-ptr", "");
    ptr.setAttribute("data-ref", String(ref));
    ptr.title = "object " + ref;
    return ptr;
  }

  function cellNode(cell) {  // a cell of a view: a value or a reference
    if (cell && has(cell, "ref")) { return pointer(cell.ref); }
    var span = el("span", "ex-val", cell ? shown(cell) : "");
    if (cell) { span.title = cell.type + (shown(cell) === cell.repr ? "" : ": " + cell.repr); }
    return span;
  }

  function justRan(s) {  // the step of the line just run: this frame's previous line, else the previous step
    for (var i = current - 1; s && i >= 0; i--) {
      if (steps[i].frame === s.frame) { return steps[i].event === "line" && s.event !== "call" ? steps[i] : steps[current - 1]; }
    }
    return current > 0 ? steps[current - 1] : null;
  }

  function markLines(s, state) {
    var prev = justRan(s);
    var frame = s ? state.frames[s.frame] : null;
    var raised = frame && frame.exc ? frame.exc : null;
    Array.prototype.forEach.call(code.children, function (li) {
      var n = Number(li.getAttribute("data-line"));
      li.classList.toggle("current", !!s && n === s.line);
      li.classList.toggle("prev", !!prev && !!s && n === prev.line && prev.line !== s.line);
      li.classList.toggle("raised", !!raised && n === raised.line);
      li.classList.toggle("break", !!breaks[n]);
      li.querySelector(".ln").setAttribute("aria-pressed", breaks[n] ? "true" : "false");
      var old = li.querySelector(".ex-exc");
      if (old) { li.removeChild(old); }
      if (raised && n === raised.line && raised.value) {
        li.appendChild(el("span", "ex-exc", "raised " + raised.value.repr));
      }
    });
    var active = code.querySelector("li.current");
    if (!measuring && active && active.scrollIntoView && root.getBoundingClientRect().top < window.innerHeight) {
      active.scrollIntoView({ block: "nearest" });
    }
  }

  // The frame tables: name | value | type (the type column only where there is room for it, so that a
  // value such as 10 never wraps on a phone, and not on one screen; the type stays in each value's
  // tooltip). A reference's
  // dot sits at the frame's right edge, with its type before it, so its arrow crosses no label.
  var wide = { matches: true };  // set on each render from the explorer's own width (> 600 px)

  function frameRow(name, value, ref, cls) {
    var tr = el("tr", cls || "");
    tr.appendChild(el("th", "", name));
    var td = el("td", "value" + (ref !== null ? " ref" : ""));
    td.title = value.repr;
    if (ref !== null) {
      if (wide.matches) { td.colSpan = 2; td.appendChild(el("span", "ex-ref-type", value.type)); }
      td.appendChild(pointer(ref));
      tr.appendChild(td);
      return tr;
    }
    td.textContent = shown(value);
    tr.appendChild(td);
    if (wide.matches) { tr.appendChild(el("td", "type", value.type)); }
    return tr;
  }

  function frameBox(title, depth, cls) {
    var box = el("div", "ex-frame" + (cls ? " " + cls : ""));
    var head = el("div", "ex-frame-head", title);
    head.setAttribute("data-testid", "ex-frame-head");
    head.appendChild(document.createTextNode(" "));
    head.appendChild(el("span", "ex-depth", depth));
    box.appendChild(head);
    var table = el("table");
    var cols = el("colgroup");
    cols.appendChild(el("col", "ex-col-name"));
    cols.appendChild(el("col", "ex-col-value"));
    if (wide.matches) { cols.appendChild(el("col", "ex-col-type")); }
    table.appendChild(cols);
    box.appendChild(table);
    return { box: box, table: table };
  }

  // Call mode traces only the call: the Global frame (functions, classes, imports, literal constants)
  // is read from the code's top level by the server (simulator.explore.global_names), as Python Tutor
  // shows it above the call's frames.
  var globalNames = data.globals || [];

  function renderFrames(s, state) {
    var frames = q("ex-frames");
    frames.textContent = "";
    var shownGlobals = globalNames.filter(function (g) { return !hidden[g.name]; });
    if (shownGlobals.length) {
      var glob = frameBox("Global frame", "", "ex-global");
      shownGlobals.forEach(function (g) {
        var row = frameRow(g.name, g.value, null, g.untraced ? "untraced" : "");
        row.setAttribute("data-name", g.name);
        glob.table.appendChild(row);
      });
      frames.appendChild(glob.box);
    }
    state.stack.forEach(function (id) {
      var f = state.frames[id];
      var module = f.fn === "<module>";
      var made = frameBox(module ? "Global frame" : f.fn, module ? "" : "depth " + f.depth,
                          s && s.frame === id ? "active" : "");
      made.box.setAttribute("data-frame", String(id));
      var table = made.table;
      f.order.forEach(function (name) {
        if (hidden[name]) { return; }
        var changed = s && s.frame === id && has(s.changed, name);
        var row = frameRow(name, f.locals[name], has(f.refs, name) ? f.refs[name] : null, changed ? "changed" : "");
        row.setAttribute("data-name", name);
        table.appendChild(row);
      });
      if (s && s.frame === id && s.event === "return" && s.value) {
        var returned = s.refs && has(s.refs, "return") ? s.refs["return"] : null;
        var ret = frameRow("Return value", s.value, returned, "ex-return");
        ret.setAttribute("data-testid", "ex-return");
        table.appendChild(ret);
      }
      if (table.rows.length === 0) {
        var empty = el("td", "muted", "(no locals yet)");
        empty.colSpan = 3;
        table.appendChild(el("tr", "muted")).appendChild(empty);
      }
      frames.appendChild(made.box);
    });
  }

  function objectNode(id, view, fresh) {
    var box = el("div", "ex-obj" + (fresh ? " changed" : "") + (view ? " kind-" + view.kind : " stub"));
    box.setAttribute("data-obj", String(id));
    box.setAttribute("data-testid", "ex-obj");
    if (!view) {  // deeper than the tracer's views go
      box.appendChild(el("div", "ex-obj-head", "\u2026"));
      return box;
    }
    box.setAttribute("data-kind", view.kind);
    box.appendChild(el("div", "ex-obj-head", view.kind === "object" ? view.type + " instance" : view.type));
    var items = view.items || [];
    if (view.kind === "dict" || view.kind === "object") {
      var table = el("table", "ex-obj-rows");
      items.forEach(function (pair) {
        var tr = el("tr");
        var key = el("th");
        if (view.kind === "object") { key.textContent = pair[0]; } else { key.appendChild(cellNode(pair[0])); }
        var td = el("td");
        td.appendChild(cellNode(pair[1]));
        tr.appendChild(key);
        tr.appendChild(td);
        table.appendChild(tr);
      });
      if (!items.length) { table.appendChild(el("tr", "muted")).appendChild(el("td", "", "(empty)")); }
      box.appendChild(table);
    } else {
      var row = el("div", "ex-cells");
      items.forEach(function (cell, i) {
        var c = el("div", "ex-cell");
        if (view.kind !== "set") { c.appendChild(el("span", "ex-idx", String(i))); }
        c.appendChild(cellNode(cell));
        row.appendChild(c);
      });
      if (!items.length) { row.appendChild(el("div", "ex-cell muted", "(empty)")); }
      box.appendChild(row);
    }
    if (view.more) { box.appendChild(el("div", "ex-more muted", "\u2026 " + view.more + " more")); }
    return box;
  }

  function childRefs(view) {
    var out = [];
    (view ? view.items || [] : []).forEach(function (item) {
      var cell = Array.isArray(item) ? item[1] : item;
      if (cell && has(cell, "ref")) { out.push(cell.ref); }
    });
    return out;
  }

  function renderHeap(s, state) {
    // Objects reachable from the live frames, one row per object first reached from a frame, its
    // not yet drawn children to its right (depth first), as Python Tutor lays them out.
    var heapBox = q("ex-heap");
    heapBox.textContent = "";
    var fresh = {};
    ((s && s.heap) || []).forEach(function (view) { fresh[view.id] = true; });
    var placed = {};
    var roots = [];
    state.stack.forEach(function (id) {
      var f = state.frames[id];
      f.order.forEach(function (name) { if (!hidden[name] && has(f.refs, name)) { roots.push(f.refs[name]); } });
    });
    if (s && s.refs && has(s.refs, "return")) { roots.push(s.refs["return"]); }
    function place(id, row) {
      if (placed[id]) { return; }
      placed[id] = true;
      row.appendChild(objectNode(id, state.heap[id], !!fresh[id]));
      childRefs(state.heap[id]).forEach(function (child) { place(child, row); });
    }
    roots.forEach(function (id) {
      if (placed[id]) { return; }
      var row = el("div", "ex-heap-row");
      place(id, row);
      heapBox.appendChild(row);
    });
    if (!roots.length) { heapBox.appendChild(el("p", "muted", "(no objects)")); }
  }

  function drawArrows() {
    var viz = q("ex-viz"), svg = q("ex-arrows");
    Array.prototype.slice.call(svg.querySelectorAll("path.ex-arrow")).forEach(function (p) { svg.removeChild(p); });
    var box = viz.getBoundingClientRect();
    svg.setAttribute("width", "0");  // the drawing's own size out of the way: it follows the content
    svg.setAttribute("height", "0");
    svg.setAttribute("width", String(viz.scrollWidth));
    svg.setAttribute("height", String(viz.scrollHeight));
    Array.prototype.forEach.call(viz.querySelectorAll(".ex-ptr[data-ref]"), function (ptr) {
      var target = viz.querySelector('.ex-obj[data-obj="' + ptr.getAttribute("data-ref") + '"]');
      if (!target) { return; }
      var a = ptr.getBoundingClientRect(), b = target.getBoundingClientRect();
      var sx = a.left + a.width / 2 - box.left + viz.scrollLeft, sy = a.top + a.height / 2 - box.top + viz.scrollTop;
      var ex = b.left - box.left + viz.scrollLeft, ey = b.top + 12 - box.top + viz.scrollTop;
      if (ex < sx) { ex = b.left + Math.min(14, b.width / 2) - box.left + viz.scrollLeft; ey = b.top - box.top + viz.scrollTop; }
      var dx = Math.max(24, Math.abs(ex - sx) / 2);
      var path = document.createElementNS(SVG, "path");
      path.setAttribute("class", "ex-arrow");
      path.setAttribute("d", "M" + sx + "," + sy + " C" + (sx + dx) + "," + sy + " " + (ex - dx) + "," + ey + " " + ex + "," + ey);
      path.setAttribute("marker-end", "url(#ex-arrowhead)");
      path.setAttribute("data-ref", ptr.getAttribute("data-ref"));
      svg.appendChild(path);
    });
  }

  var resultBox = document.querySelector('[data-testid="ex-result-box"]');
  var hideResult = !!resultBox && resultBox.getAttribute("data-reveal") === "last";

  function render() {
    wide.matches = root.clientWidth > 600 && !root.classList.contains("ex-fit");  // one screen: no room
    var s = steps[current];
    var state = stateAt(current);
    q("ex-step").textContent = String(steps.length ? current + 1 : 0);
    q("ex-slider").value = String(current + 1);
    markLines(s, state);
    q("ex-event").textContent = describe(s);
    var sentence = sentenceAt(current);
    var said = sentence ? sentence.text : "";
    q("ex-narration").textContent = hooks.narration ? hooks.narration(current, said) : said;

    var stack = q("ex-stack");
    stack.textContent = "";
    state.stack.slice().reverse().forEach(function (id, i) {
      var f = state.frames[id];
      stack.appendChild(el("li", i === 0 ? "top" : "", f.fn + "  (depth " + f.depth + ", line " + f.line + ")"));
    });
    renderFrames(s, state);
    renderHeap(s, state);
    drawArrows();
    q("ex-stdout").textContent = state.stdout;
    var set = breakLines();
    var note = q("ex-breaks");
    note.hidden = !set.length && !Object.keys(hidden).length;
    q("ex-breaks-text").textContent = (set.length
      ? "Breakpoint" + (set.length > 1 ? "s on lines " : " on line ") + set.join(", ") +
        ": Forward and Back jump " + (set.length > 1 ? "between them" : "to it") + ". " : "") +
      (Object.keys(hidden).length ? "Hidden (# hide:): " + Object.keys(hidden).join(", ") + "." : "");
    q("ex-breaks-clear").hidden = !set.length;
    q("ex-back").disabled = q("ex-first").disabled = current === 0;
    q("ex-forward").disabled = q("ex-last").disabled = current === last;
    if (resultBox) { resultBox.hidden = hideResult && current !== last; }
    updateLinks();
    if (hooks.rendered) { hooks.rendered(current, measuring); }
  }

  // -- navigation -------------------------------------------------------------------------------

  var useHash = root.getAttribute("data-hash") === "1";  // permalinks: #step-N opens at step N
  var presentLinks = root.querySelectorAll("a[data-act-link]");

  Array.prototype.forEach.call(presentLinks, function (a) { a.setAttribute("data-base", a.getAttribute("href")); });

  function updateLinks() {  // the presentation links keep the step and the clicked breakpoints
    var kept = new URLSearchParams(window.location.search).get("break");
    Array.prototype.forEach.call(presentLinks, function (a) {
      var base = a.getAttribute("data-base"), at = base.indexOf("?");  // the embed's: the permalink's
      var params = new URLSearchParams(at < 0 ? "" : base.slice(at + 1));
      if (kept !== null) { params.set("break", kept); }
      var search = params.toString();
      a.setAttribute("href", (at < 0 ? base : base.slice(0, at)) + "?" + search + "#step-" + (current + 1));
    });
  }

  function breakLines() {
    return Object.keys(breaks).map(Number).sort(function (a, b) { return a - b; });
  }

  function stepBy(dir) {  // one step, or to the next (dir 1) or previous (-1) step on a breakpoint line
    if (!breakLines().length) { return current + dir; }
    for (var i = current + dir; i >= 0 && i <= last; i += dir) {
      if (breaks[steps[i].line] && steps[i].event !== "return") { return i; }
    }
    return dir > 0 ? last : 0;
  }

  function toggleBreak(n) {
    if (breaks[n]) { delete breaks[n]; } else { breaks[n] = true; }
    keepBreaks();
    render();
  }

  function keepBreaks() {  // the breakpoints in the URL once they differ from the code's, so that a
    // link or a reload keeps them, a comment's cleared one included (?break= : none)
    if (!window.history || !window.history.replaceState) { return; }
    var params = new URLSearchParams(window.location.search);
    var set = breakLines().join(",");
    if (set === commented) { params.delete("break"); } else { params.set("break", set); }
    var search = params.toString();
    window.history.replaceState(null, "", window.location.pathname + (search ? "?" + search : "") + window.location.hash);
  }

  function stepFromHash() {  // #step-N names step N as shown (from 1): the index N - 1
    var match = /^#step-(\d+)$/.exec(window.location.hash);
    return match ? Math.max(Number(match[1]) - 1, 0) : null;
  }

  function go(n, how) {  // how: "push" (a jump), "replace" (a single step), "init" or "url" (from the URL)
    n = Math.max(0, Math.min(last, Number(n) || 0));
    if (hooks.limit) { n = hooks.limit(current, n); }
    var moved = n !== current;
    current = n;
    render();
    if (!useHash || how === "init" || how === "url" || !window.history || !window.history.replaceState) { return; }
    var url = window.location.pathname + window.location.search + "#step-" + (n + 1);
    if (how === "push" && moved) { window.history.pushState(null, "", url); }
    else { window.history.replaceState(null, "", url); }
  }

  function setPresent(on, hide) {
    document.body.classList.toggle("present", on);
    hideResult = on && !!hide;
    render();
    fit();
  }

  // -- one screen: presentation mode and the embed ----------------------------------------------
  // Presentation mode (the window) and the embed (its frame) show the code, the narration and the
  // frames and objects on one screen, as Python Tutor does: the type is the largest of SIZES at which
  // the explorer fits the window's height at the steps that need the most room (the most frames and
  // locals, the most objects, the last), and stays so while stepping. At the smallest the page
  // scrolls rather than cutting anything off. The view page sizes its embed snippet the same way.

  var SIZES = { present: [22, 20, 18, 17, 16, 15, 14, 13, 12], embed: [15, 14, 13, 12, 11, 10] };
  var measuring = false;

  var heavySteps = (function () {  // a few steps that need the most room, in one pass over the trace
    var frames = {}, live = [], objects = {}, byFrames = [], byObjects = [];
    steps.forEach(function (s, i) {
      if (!frames[s.frame]) { frames[s.frame] = { names: {}, n: 0 }; live.push(s.frame); }
      var f = frames[s.frame];
      Object.keys(s.changed || {}).forEach(function (name) {
        if (!f.names[name]) { f.names[name] = true; f.n++; }
      });
      (s.heap || []).forEach(function (view) { objects[view.id] = (view.items || []).length; });
      var rows = 0;
      live.forEach(function (id) { rows += 2 + frames[id].n; });
      var cells = 0;
      Object.keys(objects).forEach(function (id) { cells += 2 + Math.min(objects[id], 50); });
      byFrames.push([rows, i]);
      byObjects.push([cells, i]);
      if (s.event === "return" && live.indexOf(s.frame) >= 0) { live.splice(live.indexOf(s.frame), 1); }
    });
    var most = function (list) { return list.sort(function (a, b) { return b[0] - a[0] || b[1] - a[1]; }).slice(0, 3); };
    var chosen = {};
    most(byFrames).concat(most(byObjects)).forEach(function (pair) { chosen[pair[1]] = true; });
    if (steps.length) { chosen[last] = true; }
    return Object.keys(chosen).map(Number);
  })();

  function tallest(measure) {  // the largest of measure() over the heavy steps and the current one
    var keep = current, most = 0;
    measuring = true;
    heavySteps.concat([keep]).forEach(function (n) {
      current = n;
      render();
      most = Math.max(most, measure());
    });
    current = keep;
    measuring = false;
    render();
    return most;
  }

  function fitMode() {
    if (document.body.classList.contains("present")) { return "present"; }
    return root.getAttribute("data-embedded") === "1" ? "embed" : "";
  }

  function fit() {
    var mode = fitMode();
    root.classList.toggle("ex-fit", !!mode);
    if (!mode) { root.style.removeProperty("--ex-font"); drawArrows(); return; }
    var sizes = SIZES[mode], room = window.innerHeight, chosen = sizes[sizes.length - 1];
    for (var k = 0; k < sizes.length; k++) {
      root.style.setProperty("--ex-font", sizes[k] + "px");
      var need = tallest(function () {
        return root.getBoundingClientRect().bottom + window.scrollY;
      });
      var wide = document.documentElement.scrollWidth <= window.innerWidth + 1;
      if (need <= room && wide) { chosen = sizes[k]; break; }
    }
    root.style.setProperty("--ex-font", chosen + "px");
    render();
  }

  var refit = null;
  window.addEventListener("resize", function () {  // the type column comes and goes; the room changes
    clearTimeout(refit);
    refit = setTimeout(function () { render(); fit(); sizeSnippet(); }, 120);
  });

  // The embed snippet's height: what the embed needs at its largest type at the heavy steps (the
  // whole program, not a code box that scrolls), with the model's simulation when there is one.
  var snippet = document.querySelector('[data-testid="ex-embed-code"]');

  function sizeSnippet() {
    if (!snippet || fitMode()) { return; }
    root.classList.add("ex-fit", "ex-measure");
    root.style.setProperty("--ex-font", SIZES.embed[0] + "px");
    var top = root.getBoundingClientRect().top;
    var need = tallest(function () { return root.getBoundingClientRect().bottom - top; });
    root.classList.remove("ex-fit", "ex-measure");
    root.style.removeProperty("--ex-font");
    render();
    var model = document.querySelector('[data-testid="ex-model"]');
    var height = need + 48 + (model ? model.getBoundingClientRect().height + 24 : 0);  // + the title line
    height = Math.ceil(height / 20) * 20;
    snippet.value = snippet.value.replace(/height="\d+"/, 'height="' + height + '"');
    snippet.setAttribute("data-sized", "1");
  }

  root.addEventListener("click", function (evt) {
    var link = evt.target.closest("a[data-act-link]");
    if (link && link.target === "_blank") { return; }  // the embed's: a tab of its own
    if (link && window.history && window.history.pushState) {
      evt.preventDefault();
      var act = link.getAttribute("data-act-link");
      window.history.pushState(null, "", link.getAttribute("href"));
      setPresent(act !== "exit", act === "present-hidden");
      return;
    }
    var mark = evt.target.closest("button[data-break]");
    if (mark) { toggleBreak(Number(mark.getAttribute("data-break"))); return; }
    var button = evt.target.closest("button[data-act]");
    if (!button) { return; }
    var what = button.getAttribute("data-act");
    if (what === "first") { go(0, "push"); }
    else if (what === "back") { go(stepBy(-1), "replace"); }
    else if (what === "forward") { go(stepBy(1), "replace"); }
    else if (what === "last") { go(last, "push"); }
    else if (what === "clear-breaks") { breaks = {}; keepBreaks(); render(); }
  });
  q("ex-slider").addEventListener("input", function (evt) { go(Number(evt.target.value) - 1, "replace"); });
  q("ex-jump").addEventListener("submit", function (evt) {  // a step as shown, from 1; a wrong one is said
    evt.preventDefault();
    var input = q("ex-jump-input"), error = q("ex-jump-error");
    var text = input.value.trim(), n = Number(text);
    var ok = /^\d+$/.test(text) && n >= 1 && n <= steps.length;
    input.setAttribute("aria-invalid", ok ? "false" : "true");
    error.hidden = ok;
    if (!ok) {
      error.textContent = (text === "" ? "Type a step number" : "There is no step " + text) +
        (steps.length ? ": the steps go from 1 to " + steps.length + "." : ": this trace has no step.");
      return;
    }
    error.textContent = "";
    go(n - 1, "push");
  });
  document.addEventListener("click", function (evt) {
    var target = evt.target.closest("[data-step]");
    if (!target || root.contains(target) && target.tagName === "INPUT") { return; }
    evt.preventDefault();
    go(target.getAttribute("data-step"), "push");
  });
  document.addEventListener("keydown", function (evt) {
    var t = evt.target;
    if (evt.altKey || evt.ctrlKey || evt.metaKey) { return; }
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) { return; }
    if (evt.key === "ArrowRight") { go(stepBy(1), "replace"); }
    else if (evt.key === "ArrowLeft") { go(stepBy(-1), "replace"); }
    else if (evt.key === "Home") { go(0, "push"); }
    else if (evt.key === "End") { go(last, "push"); }
    else { return; }
    evt.preventDefault();
  });
  function followUrl() {  // a hash edit, Back or Forward
    var params = new URLSearchParams(window.location.search);
    var present = params.get("present") === "1";
    var n = useHash ? stepFromHash() : null;
    if (present !== document.body.classList.contains("present")) {
      current = Math.max(0, Math.min(last, n === null ? 0 : n));
      setPresent(present, params.get("hide") === "result");
    }
    go(n === null ? 0 : n, "url");
  }
  window.addEventListener("hashchange", followUrl);
  window.addEventListener("popstate", followUrl);

  if (root.getAttribute("data-present") === "1" && root.getAttribute("data-embedded") !== "1") {
    document.body.classList.add("present");
  }
  window.ExecSimExplorer = { go: go, current: function () { return current; }, last: last, hooks: hooks };
  var initial = useHash ? stepFromHash() : null;
  go(initial === null ? 0 : initial, "init");
  fit();
  sizeSnippet();
})();
