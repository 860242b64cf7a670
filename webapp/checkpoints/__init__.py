"""The Checkpoints pages: exported checkpoints (their manifest.json) with their stages, data card,
serve commands and evaluation results (base vs SFT vs RL, with 95% intervals), tabled and plotted.
Read-only: nothing here writes a file or a database row."""
