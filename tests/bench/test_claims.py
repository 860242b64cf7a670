"""bench/claims.py on texts of 1, 2 and 3 kB: every shape is verified at every size, and the table says
what each kB added costs."""

from __future__ import annotations


def test_claims_bench_prints_a_row_per_text_and_size_and_the_growth(run_bench) -> None:
    out = run_bench("claims", "--sizes", "1,2,3", "--repeat", "1").stdout
    assert "| text | size | claims | extract ms | verify ms | verify ms per kB | ms per kB added |" in out
    for shape in ("model", "narrated", "wrong", "one line", "open bracket"):
        assert all(f"| {shape} | {size} kB |" in out for size in (1, 2, 3)), out
    assert "ms per kB added from 2 to 3 kB over that from 1 to 2 kB (1.0x: linear):" in out
