// The results page: say whether it is following the class live (htmx's WebSocket extension places
// each results fragment the server sends, and reconnects by itself; the server sends the results as
// they are on every (re)connection, so nothing is missed).
(function () {
  "use strict";
  var text = document.querySelector('[data-testid="exercise-live-text"]');
  var live = document.querySelector('[data-testid="exercise-live"]');
  if (!text || !live) { return; }
  function say(state, words) { live.setAttribute("data-state", state); text.textContent = words; }
  document.body.addEventListener("htmx:wsOpen", function () { say("live", "live: updates as students answer"); });
  document.body.addEventListener("htmx:wsClose", function () { say("down", "reconnecting… (the results shown may be behind)"); });
})();
