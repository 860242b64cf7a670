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

// While the model does not answer, the Solve button waits and the sentence beside it says why
// (templates/problems/detail.html renders both as the page loads); the header's model status, polled
// every 10 s (templates/status/model_status.html), opens it again as soon as the model answers.
document.addEventListener("htmx:afterSettle", (event) => {
  if (!event.target || event.target.id !== "model-status") return;
  const state = event.target.querySelector('[data-testid="model-up"]');
  const button = document.querySelector('[data-testid="solve-submit"]');
  const note = document.getElementById("solve-model-note");
  if (!state || !button || !note) return;
  const up = state.dataset.up === "true";
  button.disabled = !up;
  note.hidden = up;
  if (!up) note.querySelector('[data-testid="solve-model-sentence"]').textContent = state.dataset.sentence;
});
