// Trace explorer: steps through the real trace embedded in the page (json_script "explorer-data").
// State at step n is replayed from step 0: each frame's locals from the `changed` of its steps, the
// call stack from call/return events, the output from the steps' stdout (docs/trace-schema.md).
// No dependencies; keys: Left/Right (back/forward), Home/End (first/last). Any element with
// data-step="N" (a checked claim, a divergence link) jumps to step N when clicked.
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

  function q(id) { return root.querySelector('[data-testid="' + id + '"]'); }
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined) { node.textContent = text; }
    return node;
  }

  var code = q("ex-code");
  var lines = (data.lines || []).slice();
  while (lines.length > 1 && lines[lines.length - 1] === "") { lines.pop(); }  // the final newline
  lines.forEach(function (text, i) {
    var li = el("li");
    li.setAttribute("data-line", String(i + 1));
    li.appendChild(el("span", "ln", String(i + 1)));
    li.appendChild(el("span", "src", text || " "));
    code.appendChild(li);
  });

  function stateAt(n) {
    var frames = {}, stack = [], stdout = "";
    for (var i = 0; i <= n && i < steps.length; i++) {
      var s = steps[i];
      if (!frames[s.frame]) {
        frames[s.frame] = { id: s.frame, fn: s["function"], locals: {}, order: [], line: s.line };
        stack.push(s.frame);
      }
      var f = frames[s.frame];
      f.line = s.line;
      Object.keys(s.changed || {}).forEach(function (name) {
        if (!(name in f.locals)) { f.order.push(name); }
        f.locals[name] = s.changed[name];
      });
      stdout += s.stdout || "";
      if (s.event === "return" && i < n) {  // a frame that returned before step n is gone
        stack.splice(stack.indexOf(s.frame), 1);
        delete frames[s.frame];
      }
    }
    return { frames: frames, stack: stack, stdout: stdout };
  }

  function sentenceAt(n) {
    var found = null;
    sentences.forEach(function (s) { if (s.step <= n) { found = s; } });
    return found;
  }

  function describe(s) {
    if (!s) { return "(no step)"; }
    var where = s["function"] + ", line " + s.line;
    if (s.event === "call") { return "call: " + s["function"] + " starts (line " + s.line + ")"; }
    if (s.event === "return") {
      return "return from " + s["function"] + (s.value ? " \u2192 " + s.value.repr : " (unwinding an exception)");
    }
    if (s.event === "exception") { return "exception in " + where + ": " + (s.value ? s.value.repr : ""); }
    return where + " is about to run";
  }

  function render() {
    var s = steps[current];
    var state = stateAt(current);
    q("ex-step").textContent = String(current);
    q("ex-slider").value = String(current);
    Array.prototype.forEach.call(code.children, function (li) {
      li.classList.toggle("current", !!s && Number(li.getAttribute("data-line")) === s.line);
    });
    var active = code.querySelector("li.current");
    if (active && active.scrollIntoView) { active.scrollIntoView({ block: "nearest" }); }
    q("ex-event").textContent = describe(s);
    var sentence = sentenceAt(current);
    q("ex-narration").textContent = sentence ? sentence.text : "";

    var stack = q("ex-stack");
    stack.textContent = "";
    state.stack.slice().reverse().forEach(function (id, i) {
      var f = state.frames[id];
      var li = el("li", i === 0 ? "top" : "", f.fn + "  (line " + f.line + ")");
      stack.appendChild(li);
    });

    var frames = q("ex-frames");
    frames.textContent = "";
    state.stack.forEach(function (id) {
      var f = state.frames[id];
      var box = el("div", "ex-frame" + (s && s.frame === id ? " active" : ""));
      box.appendChild(el("div", "ex-frame-head", f.fn + " #" + id));
      var table = el("table");
      f.order.forEach(function (name) {
        var value = f.locals[name];
        var changed = s && s.frame === id && s.changed && Object.prototype.hasOwnProperty.call(s.changed, name);
        var tr = el("tr", changed ? "changed" : "");
        tr.setAttribute("data-name", name);
        tr.appendChild(el("th", "", name));
        tr.appendChild(el("td", "", value.repr));
        tr.appendChild(el("td", "type", value.type));
        table.appendChild(tr);
      });
      if (!f.order.length) { table.appendChild(el("tr", "muted")).appendChild(el("td", "", "(no locals yet)")); }
      box.appendChild(table);
      frames.appendChild(box);
    });
    q("ex-stdout").textContent = state.stdout;
    q("ex-back").disabled = q("ex-first").disabled = current === 0;
    q("ex-forward").disabled = q("ex-last").disabled = current === last;
  }

  var useHash = root.getAttribute("data-hash") === "1";  // permalinks: #step-N opens at step N

  function go(n, initial) {
    n = Math.max(0, Math.min(last, Number(n) || 0));
    current = n;
    render();
    if (useHash && !initial && window.history && window.history.replaceState) {
      window.history.replaceState(null, "", "#step-" + n);
    }
  }

  root.addEventListener("click", function (evt) {
    var button = evt.target.closest("button[data-act]");
    if (!button) { return; }
    var act = button.getAttribute("data-act");
    if (act === "first") { go(0); }
    else if (act === "back") { go(current - 1); }
    else if (act === "forward") { go(current + 1); }
    else if (act === "last") { go(last); }
    else if (act === "present") { document.body.classList.toggle("present"); }
  });
  q("ex-slider").addEventListener("input", function (evt) { go(evt.target.value); });
  q("ex-jump").addEventListener("submit", function (evt) {
    evt.preventDefault();
    go(q("ex-jump-input").value);
  });
  document.addEventListener("click", function (evt) {
    var target = evt.target.closest("[data-step]");
    if (!target || root.contains(target) && target.tagName === "INPUT") { return; }
    evt.preventDefault();
    go(target.getAttribute("data-step"));
  });
  document.addEventListener("keydown", function (evt) {
    var t = evt.target;
    if (evt.altKey || evt.ctrlKey || evt.metaKey) { return; }
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) { return; }
    if (evt.key === "ArrowRight") { go(current + 1); }
    else if (evt.key === "ArrowLeft") { go(current - 1); }
    else if (evt.key === "Home") { go(0); }
    else if (evt.key === "End") { go(last); }
    else { return; }
    evt.preventDefault();
  });

  if (root.getAttribute("data-present") === "1") { document.body.classList.add("present"); }
  var hash = useHash ? /^#step-(\d+)$/.exec(window.location.hash) : null;
  window.ExecSimExplorer = { go: go, current: function () { return current; }, last: last };
  go(hash ? hash[1] : 0, true);
})();
