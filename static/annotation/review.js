// Review screen keys, as in Prodigy: a = accept, x = reject, space = skip, backspace = undo.
// Keys are ignored while typing in the text box (Esc leaves it). Buttons set the decision too.
// "Reset to original", "Use the trace's value" and "Remove this sentence" edit the box in place and
// let htmx re-verify it; without JavaScript they are a link (the page afresh) and a form post
// (annotation:fix). Hovering or focusing a fix lights up its claim in the checked text below it.
(function () {
  "use strict";
  var form = document.getElementById("decide-form");
  if (!form) { return; }
  var decision = document.getElementById("decision");
  var submitted = false;

  function send(value) {
    if (submitted) { return; }
    submitted = true;
    decision.value = value;
    form.submit();
  }

  var box = document.getElementById("review-text");

  function setText(value) {
    box.value = value;
    box.dispatchEvent(new Event("input", { bubbles: true }));  // htmx: hx-trigger="input changed"
  }

  var reset = document.getElementById("reset-text");
  if (reset) {
    reset.addEventListener("click", function (evt) {
      evt.preventDefault();
      setText(box.getAttribute("data-original"));
    });
  }

  // The fix buttons arrive with each verdicts fragment: one listener on the document for them all.
  document.addEventListener("click", function (evt) {
    var fix = evt.target.closest("button[data-replace]");
    if (!fix) { return; }
    var start = Number(fix.getAttribute("data-start"));
    var end = Number(fix.getAttribute("data-end"));
    if (box.value.slice(start, end) !== fix.getAttribute("data-claimed")) { return; }  // stale: the server fixes it
    evt.preventDefault();
    setText(box.value.slice(0, start) + fix.getAttribute("data-value") + box.value.slice(end));
  });

  // The claim a fix changes: the claim span of the checked text that starts at the fix's claim_start
  // (the text as marked is the box's text, so offsets are counted over its text nodes).
  function claimAt(start) {
    var marked = document.querySelector("#verdicts [data-testid=verdicts-text]");
    if (!marked) { return null; }
    var offset = 0;
    for (var node = marked.firstChild; node; node = node.nextSibling) {
      if (offset === start && node.nodeType === 1 && node.getAttribute("data-testid") === "claim") { return node; }
      offset += node.textContent.length;
      if (offset > start) { return null; }
    }
    return null;
  }

  var lit = null;
  function light(row) {
    if (lit) { lit.classList.remove("claim-focus"); lit = null; }
    if (!row) { return; }
    lit = claimAt(Number(row.getAttribute("data-claim-start")));
    if (lit) { lit.classList.add("claim-focus"); }
  }
  function rowOf(node) { return node && node.closest ? node.closest("#verdicts li[data-claim-start]") : null; }
  document.addEventListener("mouseover", function (evt) { var row = rowOf(evt.target); if (row) { light(row); } });
  document.addEventListener("mouseout", function (evt) {
    var row = rowOf(evt.target);
    if (row && rowOf(evt.relatedTarget) !== row) { light(null); }
  });
  document.addEventListener("focusin", function (evt) { light(rowOf(evt.target)); });
  document.addEventListener("htmx:afterSwap", function () { lit = null; });

  form.addEventListener("click", function (evt) {
    var button = evt.target.closest("button[data-decision]");
    if (!button) { return; }
    evt.preventDefault();
    send(button.getAttribute("data-decision"));
  });

  document.addEventListener("keydown", function (evt) {
    var t = evt.target;
    if (evt.key === "Escape" && t && t.tagName === "TEXTAREA") { t.blur(); return; }
    if (evt.altKey || evt.ctrlKey || evt.metaKey) { return; }
    if (t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT" || t.isContentEditable)) { return; }
    if (evt.key === "a") { send("accept"); }
    else if (evt.key === "x") { send("reject"); }
    else if (evt.key === " ") { send("skip"); }
    else if (evt.key === "Backspace") {
      var undo = document.getElementById("undo-form");
      if (!undo) { return; }
      submitted = true;
      undo.submit();
    } else { return; }
    evt.preventDefault();
  });
})();
