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
