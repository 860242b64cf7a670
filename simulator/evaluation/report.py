"""The human side of a run: report.md (figures with 95% intervals, provenance) and PNG plots."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def write_plots(out: Path, record: dict[str, Any]) -> list[str]:
    """metrics.png (each figure with its interval) and, when there is one, histogram.png; none when
    matplotlib (the ``eval`` extra) is not installed."""
    try:
        import matplotlib
    except ImportError:
        return []

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    names = list(record["metrics"])
    if names:
        values = [record["metrics"][n]["value"] for n in names]
        # clamped: float rounding can put a bound a hair on the wrong side of the value
        lows = [max(0.0, v - record["metrics"][n]["low"]) for n, v in zip(names, values, strict=True)]
        highs = [max(0.0, record["metrics"][n]["high"] - v) for n, v in zip(names, values, strict=True)]
        fig, ax = plt.subplots(figsize=(1.2 * len(names) + 2, 3.5))
        ax.bar(names, values, yerr=[lows, highs], capsize=4, color="#4c72b0")
        ax.set_ylim(0, max([1.0] + [record["metrics"][n]["high"] for n in names]))
        ax.set_ylabel("value (95% CI)")
        ax.set_title(f"{record['task']} (n={record['n_items']}, {record['provenance']['model']})")
        fig.tight_layout()
        fig.savefig(out / "metrics.png", dpi=100)
        plt.close(fig)
        written.append("metrics.png")
    if record.get("histogram"):
        fig, ax = plt.subplots(figsize=(5, 3.5))
        top = max(record["histogram"])
        ax.hist(record["histogram"], bins=range(0, top + 2), align="left", rwidth=0.8, color="#55a868")
        ax.set_xlabel(record.get("extra", {}).get("histogram_label", "correct samples per item"))
        ax.set_ylabel("items")
        fig.tight_layout()
        fig.savefig(out / "histogram.png", dpi=100)
        plt.close(fig)
        written.append("histogram.png")
    return written


def write_report(out: Path, record: dict[str, Any], plots: list[str]) -> None:
    prov = record["provenance"]
    lines = [
        f"# {record['task']}: {record['n_items']} items",
        "",
        f"Model `{prov['model']}` at {prov['model_url']} (weights sha256 {prov['weights_sha256'] or 'n/a'}), "
        f"data `{prov['data']['path']}` (sha256 {prov['data']['sha256'][:12]}), commit {prov['git_commit']}.",
        "",
        "| metric | value | 95% CI | method |",
        "|---|---|---|---|",
    ]
    for name, m in record["metrics"].items():
        lines.append(f"| {name} | {m['value']:.3f} | [{m['low']:.3f}, {m['high']:.3f}] | {m['method']} |")
    failures = record.get("parse_failures") or {}
    if failures:
        lines += ["", "| stage | parse failures | rate | 95% CI |", "|---|---|---|---|"]
        for stage, p in failures.items():
            interval = f"[{p['low']:.3f}, {p['high']:.3f}]"
            lines.append(f"| {stage} | {p['failed']} / {p['total']} | {p['rate']:.3f} | {interval} |")
    for table in record.get("extra", {}).get("tables", []):
        lines += ["", f"**{table['title']}**", "", "| " + " | ".join(table["header"]) + " |"]
        lines.append("|" + "---|" * len(table["header"]))
        lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in table["rows"]]
    unconverted = record.get("extra", {}).get("unconverted") or []
    if unconverted:
        listed = "; ".join(f"{u['id']} ({u['reason']})" for u in unconverted)
        noun = "item" if len(unconverted) == 1 else "items"
        lines += ["", f"Skipped {len(unconverted)} {noun} that could not be converted: {listed}"]
    req = record["requests"]
    lines += [
        "",
        f"Requests: {req['sent']} sent, {req['cached']} answered from the cache; {record['seconds']} s.",
        "",
        "Settings: " + ", ".join(f"{k}={v}" for k, v in prov["settings"].items()),
        "",
    ]
    lines += [f"![{p}]({p})" for p in plots]
    (out / "report.md").write_text("\n".join(lines) + "\n")
