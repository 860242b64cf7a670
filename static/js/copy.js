// Copy buttons: a <button data-copy="TEXT"> or data-copy-from="#id" (an input or link) copies that
// text to the clipboard and says so for two seconds. No inline script (the Content-Security-Policy).
(function () {
  document.addEventListener("click", function (evt) {
    var button = evt.target.closest("[data-copy], [data-copy-from]");
    if (!button) { return; }
    evt.preventDefault();
    var text = button.getAttribute("data-copy");
    if (text === null) {
      var source = document.querySelector(button.getAttribute("data-copy-from"));
      text = source ? (source.value || source.href || source.textContent) : "";
    }
    var label = button.textContent;
    function done(word) {
      button.textContent = word;
      setTimeout(function () { button.textContent = label; }, 2000);
    }
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { done("Copied"); }, function () { done("Copy failed"); });
    } else {  // plain http on another host: select a temporary field and copy
      var field = document.createElement("textarea");
      field.value = text;
      document.body.appendChild(field);
      field.select();
      var ok = false;
      try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
      document.body.removeChild(field);
      done(ok ? "Copied" : "Copy failed");
    }
  });
})();
