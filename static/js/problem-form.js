// The problem form's tests without a round trip: "Add a test" clones the formset's empty form (the
// <template id="test-template">, prefix __prefix__) and raises TOTAL_FORMS; "Remove this test" ticks the
// test's DELETE box and hides it (Django drops it on Save). Without this file the same buttons submit
// and the server re-renders the form (webapp/problems/views.py). No inline script (the CSP).
(function () {
  var form = document.getElementById("problem-form");
  if (!form) { return; }
  var total = form.querySelector('input[name="tests-TOTAL_FORMS"]');
  var list = document.getElementById("tests");
  var template = document.getElementById("test-template");

  function renumber() {
    var n = 0;
    list.querySelectorAll('fieldset.test').forEach(function (fieldset) {
      if (!fieldset.hidden) { n += 1; fieldset.querySelector(".test-number").textContent = String(n); }
    });
  }

  form.addEventListener("click", function (evt) {
    var button = evt.target.closest("button");
    if (!button) { return; }
    if (button.name === "add_test") {
      evt.preventDefault();
      var index = parseInt(total.value, 10);
      var html = template.innerHTML.replace(/__prefix__/g, String(index));
      list.insertAdjacentHTML("beforeend", html);
      total.value = String(index + 1);
      renumber();
      var added = list.lastElementChild.querySelector("textarea");
      if (added) { added.focus(); }
    } else if (button.name === "remove_test") {
      evt.preventDefault();
      var fieldset = button.closest("fieldset.test");
      var box = fieldset.querySelector('input[type="checkbox"][name$="-DELETE"]');
      if (box) { box.checked = true; }
      fieldset.hidden = true;
      fieldset.setAttribute("data-removed", "1");
      renumber();
    }
  });
})();

// A call problem's tests: each shows the call it makes (entry_point(<input>), as the judge runs it) and
// warns when its input is one tuple, such as ([5, 7],): the function would get a tuple, not [5, 7].
// The same words as webapp/problems/calls.py, which renders them when the page comes from the server.
(function () {
  var form = document.getElementById("problem-form");
  if (!form) { return; }
  var kind = document.getElementById("id_kind");
  var entry = document.getElementById("id_entry_point");
  var UNNAMED = "<entry point>";

  // The source split at its top-level commas (not those inside brackets or strings); null when its
  // brackets do not balance (the form says what is wrong with it on save).
  function topLevelParts(source) {
    var parts = [], depth = 0, start = 0, quote = null;
    for (var i = 0; i < source.length; i++) {
      var c = source[i];
      if (quote) {
        if (c === "\\") { i += 1; } else if (c === quote) { quote = null; }
      } else if (c === "'" || c === '"') {
        quote = c;
      } else if ("([{".indexOf(c) >= 0) {
        depth += 1;
      } else if (")]}".indexOf(c) >= 0) {
        depth -= 1;
        if (depth < 0) { return null; }
      } else if (c === "," && depth === 0) {
        parts.push(source.slice(start, i));
        start = i + 1;
      }
    }
    if (depth !== 0 || quote) { return null; }
    parts.push(source.slice(start));
    return parts;
  }

  function tupleWarning(source) {
    var args = topLevelParts(source);
    if (!args) { return ""; }
    args = args.map(function (a) { return a.trim(); });
    if (args.length === 2 && args[1] === "") { args.pop(); }  // f(x,) is f(x)
    if (args.length !== 1) { return ""; }
    var only = args[0];
    if (only[0] !== "(" || only[only.length - 1] !== ")") { return ""; }
    var inside = only.slice(1, -1);
    var close = topLevelParts(inside);
    if (!close) { return ""; }  // (1), (2): not one group
    var items = close.map(function (a) { return a.trim(); });
    if (items.length === 1) {
      if (items[0] === "") { return emptyWarning(); }
      var nested = items[0];
      if (nested[0] === "(" && nested[nested.length - 1] === ")" && topLevelParts(nested.slice(1, -1))) {
        return tupleWarning(nested);  // ((1, 2)) is the tuple (1, 2)
      }
      return "";  // (5) is 5; (x for x in y) a generator
    }
    if (items[items.length - 1] === "") { items.pop(); }  // (x,)
    return warningFor(items);
  }

  function emptyWarning() {
    return "This test passes one argument, the empty tuple (). For a function of no arguments, leave " +
      "the input blank.";
  }

  function warningFor(items) {
    var keep = "; keep the tuple only if the function takes one.";
    if (items.length === 1) {
      var item = items[0];
      return "This test passes one argument, a tuple: the function gets (" + item + ",), not " + item +
        ". To pass " + item + ", write " + item + keep;
    }
    return "This test passes one argument, a tuple of " + items.length + " values. To pass them as " +
      items.length + " arguments, write " + items.join(", ") + keep;
  }

  function show(fieldset) {
    var input = fieldset.querySelector('textarea[name$="-input"]');
    var output = fieldset.querySelector('textarea[name$="-output"]');
    var call = fieldset.querySelector('[data-testid="test-call"]');
    var warning = fieldset.querySelector('[data-testid="test-tuple-warning"]');
    if (!input || !call || !warning) { return; }
    var given = input.value;
    var shown = kind && kind.value === "call" && (given !== "" || (output && output.value !== ""));
    call.hidden = !shown;
    call.querySelector("code").textContent = ((entry && entry.value.trim()) || UNNAMED) + "(" + given + ")";
    var text = shown ? tupleWarning(given) : "";
    warning.textContent = text;
    warning.hidden = !text;
  }

  function showAll() {
    form.querySelectorAll("fieldset.test").forEach(show);
  }

  form.addEventListener("input", function (evt) {
    var fieldset = evt.target.closest("fieldset.test");
    if (fieldset) { show(fieldset); } else if (evt.target === entry) { showAll(); }
  });
  if (kind) { kind.addEventListener("change", showAll); }
  // "Add a test" clones a blank test: nothing to show until it is filled in.
  showAll();
})();
