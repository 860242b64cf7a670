// Live run page: keep track of the last event sequence number applied, skip duplicates, and reconnect
// with ?last_seq=<that number> so the server replays only what this page has not seen.
(function () {
  "use strict";
  var run = document.getElementById("run");
  if (!run) { return; }

  function lastSeq() {
    var marker = document.getElementById("run-seq");
    return marker ? parseInt(marker.getAttribute("data-seq"), 10) : -1;
  }

  // The ws extension reuses the ws-connect URL when it reconnects: rewrite last_seq each time.
  var create = htmx.createWebSocket;
  htmx.createWebSocket = function (url) {
    var fresh = url.replace(/([?&])last_seq=-?\d+/, "$1last_seq=" + lastSeq());
    return create(fresh);
  };

  // Fragments swapped in over the WebSocket are rendered without a request, so their forms (Cancel,
  // Retry, Run for real) carry no CSRF token: add the page's own (the one htmx sends) on submit.
  run.addEventListener("submit", function (evt) {
    var form = evt.target;
    if ((form.getAttribute("method") || "").toLowerCase() !== "post" ||
        form.querySelector("input[name=csrfmiddlewaretoken]")) { return; }
    var token = JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"];
    if (!token) { return; }
    var input = document.createElement("input");
    input.type = "hidden";
    input.name = "csrfmiddlewaretoken";
    input.value = token;
    form.appendChild(input);
  });

  // A message carries one event or several, in order, each ending with its run-seq marker. Drop one
  // whose events are all on the page already. One that is only partly (the server resumes after the
  // page's last_seq, so it never sends one) is dropped too, and the page reconnects from its seq.
  run.addEventListener("htmx:wsBeforeMessage", function (evt) {
    var marker = /id="run-seq"[^>]*data-seq="(-?\d+)"/g;
    var seqs = [], match;
    while ((match = marker.exec(evt.detail.message)) !== null) { seqs.push(parseInt(match[1], 10)); }
    if (!seqs.length || seqs[0] > lastSeq()) { return; }
    evt.preventDefault();
    if (seqs[seqs.length - 1] > lastSeq()) { evt.detail.socketWrapper.reconnect(); }
  });
})();
