"""How long the narrator's NLEX is in each style, in the model's tokens, on CRUXEval-O programs (issue
12, item 3: a narration a small model can finish within the simulate budget).

    .venv/bin/python bench/narration_length.py --data ../shared/benchmarks/cruxeval/dev.jsonl \
        [--tokenizer .data/models/smollm2-135m-instruct] [--budget 512]

Each item's ``f(input)`` runs traced in the sandbox; both styles narrate the same trace (the SFT
completion, as ``execsim train data`` writes it). Per style: items narrated, mean and p90 completion
tokens, the share that fits in ``--budget`` tokens (the app's simulate budget; Wilson 95%), and the
share whose every claim checks true against the trace; then the compact/full ratio of mean tokens.
It measures length and faithfulness only: which style a trained model scores better with needs two
training runs.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from rich.progress import track

from simulator.benchmarks import read_jsonl
from simulator.evaluation.metrics import wilson
from simulator.execution import Program, run_many
from simulator.nlex.check import check_text
from simulator.nlex.claims import program_names
from simulator.nlex.narrator import STYLES, narrate
from simulator.pipeline.settings import RunSettings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="CRUXEval JSONL (code, input, output)")
    parser.add_argument("--tokenizer", default=".data/models/smollm2-135m-instruct")
    parser.add_argument("--budget", type=int, default=RunSettings().max_tokens)
    parser.add_argument("--limit", type=int)
    args = parser.parse_args()

    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer)
    items = [record for _, record in read_jsonl(args.data, "CRUXEval")][: args.limit]
    programs = [Program(code=item["code"], call=f"f({item['input']})") for item in items]
    results = run_many(programs, trace=True)
    rows: dict[str, list[tuple[int, bool]]] = {style: [] for style in STYLES}
    for program, result in track(list(zip(programs, results, strict=True)), description="narrating"):
        if result.status != "ok" or result.trace is None or result.trace.truncated:
            continue
        names = program_names(program.code)
        for style in STYLES:
            text = " " + narrate(result.trace, program, style).strip()
            checked = check_text(text, result.trace, names)
            faithful = checked.count("false") == 0 and checked.count("unverifiable") == 0
            rows[style].append((len(tokenizer(text, add_special_tokens=False)["input_ids"]), faithful))
    print(f"{len(items)} items, {len(rows[STYLES[0]])} traced ok; budget {args.budget} tokens")
    means = {}
    for style, measured in rows.items():
        tokens = sorted(n for n, _ in measured)
        means[style] = statistics.mean(tokens)
        p90 = tokens[int(0.9 * (len(tokens) - 1))]
        fits = wilson(sum(n <= args.budget for n in tokens), len(tokens))
        true = wilson(sum(ok for _, ok in measured), len(measured))
        print(
            f"{style:8} n={len(tokens)} mean={means[style]:.1f} p90={p90} "
            f"fits={fits.value:.3f} [{fits.low:.3f}, {fits.high:.3f}] "
            f"all_true={true.value:.3f} [{true.low:.3f}, {true.high:.3f}]"
        )
    print(f"compact/full mean tokens: {means['compact'] / means['full']:.2f}")


if __name__ == "__main__":
    main()
