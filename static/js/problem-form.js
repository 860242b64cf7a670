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
