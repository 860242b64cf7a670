"""``rename`` and ``drop_test_code``: a candidate as the simulation is asked about it
(``simulate.as_trained``), everything else as written."""

from __future__ import annotations

from simulator.prompts.simulate import as_trained
from simulator.source import drop_test_code, rename

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


# What the default model wrote after its function (MBPP 618), the example's expected value in it.
WITH_TESTS = """def div_list(a, b):  # divide
    return [x // y for x, y in zip(a, b)]


test_data = [4, 5, 6]
expected_output = [4.0, 2.5, 2.0]
assert div_list(test_data, [1, 2, 3]) == expected_output
print(div_list([4, 5, 6], [1, 2, 3])) == [4.0, 2.5, 2.0]
if __name__ == "__main__":
    print(div_list([1], [1]))
"""


def test_test_code_after_the_function_is_dropped_with_the_values_only_it_read() -> None:
    assert (
        drop_test_code(WITH_TESTS)
        == "def div_list(a, b):  # divide\n    return [x // y for x, y in zip(a, b)]\n"
    )


def test_what_the_function_reads_or_a_call_may_change_stays() -> None:
    code = "TABLE = [1, 2]\ndef g(x):\n    return TABLE[x]\nsetup()\nassert g(0) == 1\n"
    assert drop_test_code(code) == "TABLE = [1, 2]\ndef g(x):\n    return TABLE[x]\nsetup()\n"
    assert drop_test_code("def g(:\nassert 1\n") == "def g(:\nassert 1\n"  # does not parse: as written


def test_as_trained_is_the_function_named_f_without_its_tests() -> None:
    code, name = as_trained(WITH_TESTS, "div_list")
    assert (code, name) == ("def f(a, b):  # divide\n    return [x // y for x, y in zip(a, b)]\n", "f")
    assert as_trained("def g(f):\n    return f\n", "g") == ("def g(f):\n    return f\n", "g")  # f taken
