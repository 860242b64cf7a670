// Review screen keys, as in Prodigy: a = accept, x = reject, space = skip, backspace = undo.
// Keys are ignored while typing in the text box (Esc leaves it). Buttons set the decision too.
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
