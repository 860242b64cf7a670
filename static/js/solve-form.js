// A field behind "More settings" that the browser finds invalid opens the fold, so the browser can
// point at it and say why the form was not sent (a closed <details> hides the field and the message).
document.addEventListener(
  "invalid",
  (event) => {
    const fold = event.target.closest("details.more-settings");
    if (fold) fold.open = true;
  },
  true,
);

// While the model does not answer, a button that asks it (Solve, Simulate: data-needs-model) waits and
// the sentence beside it says why (templates/runs/_model_note.html, rendered as the page loads); the
// header's model status, polled every 10 s (templates/status/model_status.html), opens it again as soon
// as the model answers.
document.addEventListener("htmx:afterSettle", (event) => {
  if (!event.target || event.target.id !== "model-status") return;
  const state = event.target.querySelector('[data-testid="model-up"]');
  if (!state) return;
  const up = state.dataset.up === "true";
  for (const button of document.querySelectorAll("button[data-needs-model]")) {
    const note = document.getElementById(button.getAttribute("aria-describedby"));
    button.disabled = !up;
    if (!note) continue;
    note.hidden = up;
    if (!up) note.querySelector("span").textContent = state.dataset.sentence;
  }
});
