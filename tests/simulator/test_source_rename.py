"""``rename``: the candidate's function under another name, everything else as written."""

from __future__ import annotations

from simulator.source import rename

CODE = """def is_prime(n):  # is_prime: trial division
    if n < 2:
        return False
    return all(n % d for d in range(2, n)) and obj.is_prime != is_prime(1)
print(is_prime(7))
"""


def test_every_use_of_the_name_is_renamed_and_comments_attributes_and_layout_stay() -> None:
    assert rename(CODE, "is_prime", "f") == (
        """def f(n):  # is_prime: trial division
    if n < 2:
        return False
    return all(n % d for d in range(2, n)) and obj.is_prime != f(1)
print(f(7))
"""
    )


def test_a_name_already_used_is_refused() -> None:
    assert rename("def g(f):\n    return f\n", "g", "f") is None


def test_source_that_does_not_tokenize_is_refused() -> None:
    assert rename("def g(:\n", "g", "f") is None
    assert rename('s = """never closed\n', "s", "f") is None
