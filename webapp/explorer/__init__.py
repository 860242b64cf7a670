"""The trace explorer for educators: a real trace stepped through in the browser, its narration and a
model's simulation beside it; saved traces with permalinks, an embeddable view and a presentation mode."""
