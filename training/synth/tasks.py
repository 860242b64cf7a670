"""Stated tasks: small programming problems with a real statement, a reference solution and drawn inputs.

A synthesised program has no statement: its problem says only "returns the value the test shows", so
the model's own solutions and fixes for it can be checked against nothing but the test, and they
learn to write the test's answer in (``return 6``; docs/results.md#training). A stated task says what to
compute ("returns how many numbers in `nums` are greater than `k`"), so a reply that passes every
test of it computed the answer. Each family is a statement and a reference program with the same
placeholders, filled by each of its variants; the records go through synthesis's filters (benchmark
decontamination included) like any other source. Written for this project, not taken from a
benchmark; families that restated a task of the MBPP dev split (the sum of a number's digits, whether
an integer is prime, the sum of a dictionary's values, the largest minus the smallest, long words,
words reversed, the second largest, element-wise arithmetic on two lists) were removed, since the
AST fingerprint filter does not see a task restated with other code (docs/results.md#training).
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from training.synth.records import IOPair, SynthRecord

Args = Callable[[random.Random], tuple[Any, ...]]


@dataclass(frozen=True)
class Task:
    """A family of stated tasks: ``statement`` and ``code`` share ``{placeholders}`` that each of
    ``variants`` fills; ``args`` draws one test's arguments."""

    name: str
    statement: str
    code: str
    args: Args
    variants: Sequence[dict[str, Any]] = field(default_factory=lambda: [{}])


def _ints(rng: random.Random, low: int = -9, high: int = 20, size: tuple[int, int] = (3, 8)) -> list[int]:
    return [rng.randint(low, high) for _ in range(rng.randint(*size))]


def _word(rng: random.Random, size: tuple[int, int] = (2, 7)) -> str:
    return "".join(rng.choice("abcdeilmnorstu") for _ in range(rng.randint(*size)))


def _words(rng: random.Random, size: tuple[int, int] = (2, 6)) -> list[str]:
    return [_word(rng) for _ in range(rng.randint(*size))]


def _sentence(rng: random.Random) -> str:
    return " ".join(_words(rng, (2, 5)))


def _mixed(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_letters[:12] + "xyzXYZ aeo") for _ in range(rng.randint(4, 12)))


def _one_to_one(rng: random.Random) -> dict[str, int]:
    keys = rng.sample("abcdefgh", rng.randint(2, 5))
    return dict(zip(keys, rng.sample(range(30), len(keys)), strict=True))


def _dict(rng: random.Random) -> dict[str, int]:
    return {k: rng.randint(0, 20) for k in rng.sample(list("abcdefghijk"), rng.randint(2, 6))}


TASKS: tuple[Task, ...] = (
    Task(
        "count_{word}",
        "Write a function `count_{word}(nums, k)` that returns how many numbers in the list `nums` "
        "are {phrase} `k`.",
        "def count_{word}(nums, k):\n    return sum(1 for x in nums if x {op} k)\n",
        lambda rng: (_ints(rng), rng.randint(-2, 12)),
        [
            {"word": "above", "phrase": "greater than", "op": ">"},
            {"word": "below", "phrase": "less than", "op": "<"},
            {"word": "at_least", "phrase": "greater than or equal to", "op": ">="},
            {"word": "at_most", "phrase": "less than or equal to", "op": "<="},
        ],
    ),
    Task(
        "sum_multiples_of_{d}",
        "Write a function `sum_multiples_of_{d}(nums)` that returns the sum of the numbers in the list "
        "`nums` that are divisible by {d}.",
        "def sum_multiples_of_{d}(nums):\n    return sum(x for x in nums if x % {d} == 0)\n",
        lambda rng: (_ints(rng, 0, 40),),
        [{"d": d} for d in (3, 4, 5, 7)],
    ),
    Task(
        "count_letter_{c}",
        "Write a function `count_letter_{c}(s)` that returns how many times the letter '{c}' occurs "
        "in the string `s`.",
        "def count_letter_{c}(s):\n    return s.count('{c}')\n",
        lambda rng: (_sentence(rng),),
        [{"c": c} for c in "aeoinrst"],
    ),
    Task(
        "replace_{a}_with_{b}",
        "Write a function `replace_{a}_with_{b}(s)` that returns the string `s` with every '{a}' "
        "replaced by '{b}'.",
        "def replace_{a}_with_{b}(s):\n    return s.replace('{a}', '{b}')\n",
        lambda rng: (_sentence(rng),),
        [{"a": a, "b": b} for a, b in ("ae", "oi", "sz", "tx", "nm")],
    ),
    Task(
        "sum_of_powers_{p}",
        "Write a function `sum_of_powers_{p}(n)` that returns the sum of k ** {p} for every integer k "
        "from 1 to `n`.",
        "def sum_of_powers_{p}(n):\n    return sum(k ** {p} for k in range(1, n + 1))\n",
        lambda rng: (rng.randint(1, 12),),
        [{"p": p} for p in (1, 2, 3)],
    ),
    Task(
        "digit_product",
        "Write a function `digit_product(n)` that returns the product of the decimal digits of the "
        "positive integer `n`.",
        "def digit_product(n):\n    result = 1\n    for c in str(n):\n        result *= int(c)\n"
        "    return result\n",
        lambda rng: (rng.randint(1, 99999),),
    ),
    Task(
        "capitalize_words",
        "Write a function `capitalize_words(s)` that returns the string `s` with the first letter of "
        "every word upper case and the rest lower case, the words joined by single spaces.",
        "def capitalize_words(s):\n    return ' '.join(w.capitalize() for w in s.split())\n",
        lambda rng: (_sentence(rng),),
    ),
    Task(
        "running_{what}",
        "Write a function `running_{what}(nums)` that returns a list whose i-th element is the {what} "
        "of the first i + 1 numbers of the list `nums`.",
        "def running_{what}(nums):\n    result = []\n    for i in range(len(nums)):\n"
        "        result.append({what}(nums[:i + 1]))\n    return result\n",
        lambda rng: (_ints(rng),),
        [{"what": w} for w in ("sum", "max", "min")],
    ),
    Task(
        "differences",
        "Write a function `differences(nums)` that returns the list of differences between each "
        "number of the list `nums` and the number before it (one element fewer than `nums`).",
        "def differences(nums):\n    return [b - a for a, b in zip(nums, nums[1:])]\n",
        lambda rng: (_ints(rng),),
    ),
    Task(
        "count_{kind}",
        "Write a function `count_{kind}(nums)` that returns how many {kind} numbers the list `nums` holds.",
        "def count_{kind}(nums):\n    return sum(1 for x in nums if x % 2 == {rest})\n",
        lambda rng: (_ints(rng),),
        [{"kind": "even", "rest": 0}, {"kind": "odd", "rest": 1}],
    ),
    Task(
        "index_of_{what}",
        "Write a function `index_of_{what}(nums)` that returns the index of the {what}est number in the "
        "non-empty list `nums` (the first such index when it occurs more than once).",
        "def index_of_{what}(nums):\n    return nums.index({what}(nums))\n",
        lambda rng: (_ints(rng),),
        [{"what": "max"}, {"what": "min"}],
    ),
    Task(
        "rotate_{side}",
        "Write a function `rotate_{side}(nums, k)` that returns the non-empty list `nums` rotated to "
        "the {side} by `k` positions (`k` may exceed its length).",
        "def rotate_{side}(nums, k):\n    k = k % len(nums)\n    return {body}\n",
        lambda rng: (_ints(rng), rng.randint(0, 10)),
        [
            {"side": "left", "body": "nums[k:] + nums[:k]"},
            {"side": "right", "body": "nums[len(nums) - k:] + nums[:len(nums) - k]"},
        ],
    ),
    Task(
        "chunks",
        "Write a function `chunks(nums, size)` that splits the list `nums` into consecutive lists of "
        "`size` elements (the last one may be shorter) and returns the list of them.",
        "def chunks(nums, size):\n    return [nums[i:i + size] for i in range(0, len(nums), size)]\n",
        lambda rng: (_ints(rng), rng.randint(1, 4)),
    ),
    Task(
        "is_palindrome{suffix}",
        "Write a function `is_palindrome{suffix}(s)` that returns True when the string `s` reads the "
        "same backwards{how}, else False.",
        "def is_palindrome{suffix}(s):\n    t = {prep}\n    return t == t[::-1]\n",
        lambda rng: (rng.choice([_word(rng), (w := _word(rng, (1, 4))) + w[::-1], "Abba", "Noon"]),),
        [
            {"suffix": "", "how": "", "prep": "s"},
            {"suffix": "_ignoring_case", "how": ", ignoring upper and lower case", "prep": "s.lower()"},
        ],
    ),
    Task(
        "count_vowels",
        "Write a function `count_vowels(s)` that returns how many vowels (a, e, i, o, u, lower or "
        "upper case) the string `s` holds.",
        "def count_vowels(s):\n    return sum(1 for c in s.lower() if c in 'aeiou')\n",
        lambda rng: (_mixed(rng),),
    ),
    Task(
        "drop_vowels",
        "Write a function `drop_vowels(s)` that returns the string `s` without its lower case vowels "
        "(a, e, i, o, u).",
        "def drop_vowels(s):\n    return ''.join(c for c in s if c not in 'aeiou')\n",
        lambda rng: (_sentence(rng),),
    ),
    Task(
        "letter_counts",
        "Write a function `letter_counts(s)` that returns a dictionary mapping each character of the "
        "string `s` to how many times it occurs, in the order the characters first appear.",
        "def letter_counts(s):\n    counts = {{}}\n    for c in s:\n"
        "        counts[c] = counts.get(c, 0) + 1\n    return counts\n",
        lambda rng: (_word(rng, (3, 9)),),
    ),
    Task(
        "most_common_char",
        "Write a function `most_common_char(s)` that returns the character that occurs most often in "
        "the non-empty string `s`; on a tie, the one that comes first in `s`.",
        "def most_common_char(s):\n    return max(s, key=s.count)\n",
        lambda rng: (_word(rng, (3, 10)),),
    ),
    Task(
        "without_duplicates",
        "Write a function `without_duplicates(nums)` that returns the list `nums` with every repeated "
        "number removed, keeping the first occurrence of each in order.",
        "def without_duplicates(nums):\n    seen = []\n    for x in nums:\n        if x not in seen:\n"
        "            seen.append(x)\n    return seen\n",
        lambda rng: (_ints(rng, 0, 6, (4, 10)),),
    ),
    Task(
        "common_items",
        "Write a function `common_items(a, b)` that returns, in the order of the list `a` and each "
        "once, the numbers of `a` that also occur in the list `b`.",
        "def common_items(a, b):\n    result = []\n    for x in a:\n        if x in b and x not in result:\n"
        "            result.append(x)\n    return result\n",
        lambda rng: (_ints(rng, 0, 9), _ints(rng, 0, 9)),
    ),
    Task(
        "merge_sorted",
        "Write a function `merge_sorted(a, b)` that returns one list, sorted in ascending order, of all "
        "the numbers of the lists `a` and `b`.",
        "def merge_sorted(a, b):\n    return sorted(a + b)\n",
        lambda rng: (sorted(_ints(rng)), sorted(_ints(rng))),
    ),
    Task(
        "replace_multiples_of_{d}",
        "Write a function `replace_multiples_of_{d}(n)` that returns the list of the integers from 1 to "
        "`n`, with every multiple of {d} replaced by the string '{w}'.",
        "def replace_multiples_of_{d}(n):\n"
        "    return ['{w}' if k % {d} == 0 else k for k in range(1, n + 1)]\n",
        lambda rng: (rng.randint(1, 12),),
        [{"d": 3, "w": "fizz"}, {"d": 5, "w": "buzz"}, {"d": 4, "w": "four"}],
    ),
    Task(
        "factorial",
        "Write a function `factorial(n)` that returns the product of the integers from 1 to `n` (1 "
        "when `n` is 0).",
        "def factorial(n):\n    result = 1\n    for k in range(2, n + 1):\n        result *= k\n"
        "    return result\n",
        lambda rng: (rng.randint(0, 12),),
    ),
    Task(
        "fibonacci",
        "Write a function `fibonacci(n)` that returns the n-th Fibonacci number, where fibonacci(0) "
        "is 0, fibonacci(1) is 1 and each next one is the sum of the two before it.",
        "def fibonacci(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n",
        lambda rng: (rng.randint(0, 25),),
    ),
    Task(
        "greatest_common_divisor",
        "Write a function `greatest_common_divisor(a, b)` that returns the greatest common divisor of "
        "the positive integers `a` and `b`.",
        "def greatest_common_divisor(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n",
        lambda rng: (rng.randint(1, 60) * (g := rng.randint(1, 6)), rng.randint(1, 60) * g),
    ),
    Task(
        "count_primes_below",
        "Write a function `count_primes_below(n)` that returns how many prime numbers are smaller than "
        "the integer `n`.",
        "def count_primes_below(n):\n    count = 0\n    for m in range(2, n):\n"
        "        if all(m % k for k in range(2, int(m ** 0.5) + 1)):\n            count += 1\n"
        "    return count\n",
        lambda rng: (rng.randint(0, 60),),
    ),
    Task(
        "to_base_{b}",
        "Write a function `to_base_{b}(n)` that returns the string of the digits of the non-negative "
        "integer `n` written in base {b}, without a prefix.",
        "def to_base_{b}(n):\n    digits = ''\n    while n > 0:\n        digits = str(n % {b}) + digits\n"
        "        n //= {b}\n    return digits or '0'\n",
        lambda rng: (rng.randint(0, 300),),
        [{"b": b} for b in (2, 3, 8)],
    ),
    Task(
        "words_starting_with_{c}",
        "Write a function `words_starting_with_{c}(words)` that returns how many words of the list "
        "`words` start with the letter '{c}'.",
        "def words_starting_with_{c}(words):\n    return sum(1 for w in words if w.startswith('{c}'))\n",
        lambda rng: (_words(rng, (3, 8)),),
        [{"c": c} for c in "almst"],
    ),
    Task(
        "longest_word",
        "Write a function `longest_word(s)` that returns the longest word of the string `s`, the "
        "first one when several are as long.",
        "def longest_word(s):\n    return max(s.split(), key=len)\n",
        lambda rng: (_sentence(rng),),
    ),
    Task(
        "{what}_of_{kind}",
        "Write a function `{what}_of_{kind}(nums)` that returns the list of the {what}s of the {kind} "
        "numbers of the list `nums`, in order.",
        "def {what}_of_{kind}(nums):\n    return [x ** {p} for x in nums if x % 2 == {rest}]\n",
        lambda rng: (_ints(rng),),
        [
            {"what": w, "p": p, "kind": k, "rest": r}
            for w, p in (("square", 2), ("cube", 3))
            for k, r in (("even", 0), ("odd", 1))
        ],
    ),
    Task(
        "clamp_all",
        "Write a function `clamp_all(nums, low, high)` that returns the list `nums` with every number "
        "below `low` replaced by `low` and every number above `high` replaced by `high`.",
        "def clamp_all(nums, low, high):\n    return [min(max(x, low), high) for x in nums]\n",
        lambda rng: (_ints(rng), (low := rng.randint(-3, 5)), low + rng.randint(0, 8)),
    ),
    Task(
        "invert",
        "Write a function `invert(d)` that returns a dictionary mapping each value of the dictionary "
        "`d` to its key (the values of `d` are all different).",
        "def invert(d):\n    return {{v: k for k, v in d.items()}}\n",
        lambda rng: (_one_to_one(rng),),
    ),
    Task(
        "keys_{word}",
        "Write a function `keys_{word}(d, k)` that returns the sorted list of the keys of the "
        "dictionary `d` whose value is {phrase} `k`.",
        "def keys_{word}(d, k):\n    return sorted(key for key, value in d.items() if value {op} k)\n",
        lambda rng: (_dict(rng), rng.randint(0, 20)),
        [
            {"word": "above", "phrase": "greater than", "op": ">"},
            {"word": "below", "phrase": "less than", "op": "<"},
        ],
    ),
    Task(
        "flatten",
        "Write a function `flatten(lists)` that returns one list of all the elements of the lists in "
        "the list `lists`, in order.",
        "def flatten(lists):\n    return [x for inner in lists for x in inner]\n",
        lambda rng: ([_ints(rng, 0, 9, (0, 3)) for _ in range(rng.randint(1, 4))],),
    ),
    Task(
        "count_upper",
        "Write a function `count_upper(s)` that returns how many upper case letters the string `s` holds.",
        "def count_upper(s):\n    return sum(1 for c in s if c.isupper())\n",
        lambda rng: (_mixed(rng),),
    ),
    Task(
        "average",
        "Write a function `average(nums)` that returns the mean of the numbers in the non-empty list "
        "`nums`, rounded to {digits} decimal places.",
        "def average(nums):\n    return round(sum(nums) / len(nums), {digits})\n",
        lambda rng: (_ints(rng),),
        [{"digits": d} for d in (1, 2)],
    ),
    Task(
        "is_leap_year",
        "Write a function `is_leap_year(year)` that returns True when `year` is a leap year of the "
        "Gregorian calendar (divisible by 4, but not by 100 unless also by 400), else False.",
        "def is_leap_year(year):\n    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n",
        lambda rng: (rng.choice([rng.randint(1800, 2100), 1900, 2000, 2024, 2100]),),
    ),
    Task(
        "swap_pairs",
        "Write a function `swap_pairs(nums)` that returns the list `nums` with the first and second "
        "elements swapped, the third and fourth, and so on (a last odd element stays).",
        "def swap_pairs(nums):\n    result = list(nums)\n    for i in range(0, len(result) - 1, 2):\n"
        "        result[i], result[i + 1] = result[i + 1], result[i]\n    return result\n",
        lambda rng: (_ints(rng),),
    ),
    Task(
        "repeat_chars",
        "Write a function `repeat_chars(s)` that returns the string `s` with every character written "
        "{n} times in a row.",
        "def repeat_chars(s):\n    return ''.join(c * {n} for c in s)\n",
        lambda rng: (_word(rng),),
        [{"n": n} for n in (2, 3)],
    ),
    Task(
        "position_sum",
        "Write a function `position_sum(nums)` that returns the sum of each number of the list `nums` "
        "multiplied by its index.",
        "def position_sum(nums):\n    return sum(i * x for i, x in enumerate(nums))\n",
        lambda rng: (_ints(rng),),
    ),
    Task(
        "{which}_half",
        "Write a function `{which}_half(nums)` that returns the {which} half of the list `nums` (for an "
        "odd length, the middle element belongs to the second half).",
        "def {which}_half(nums):\n    return {body}\n",
        lambda rng: (_ints(rng, size=(2, 9)),),
        [
            {"which": "first", "body": "nums[:len(nums) // 2]"},
            {"which": "second", "body": "nums[len(nums) // 2:]"},
        ],
    ),
)


def task_records(seed: int, tests: int = 4) -> list[SynthRecord]:
    """One record for every variant of every task, each with ``tests`` distinct drawn argument lists;
    the first is the public test's (``original``), the rest ``value``."""
    records = []
    for task in TASKS:
        for number, variant in enumerate(task.variants):
            rng = random.Random(f"{seed}:{task.name}:{number}")
            inputs: list[str] = []
            for _ in range(tests * 10):
                drawn = ", ".join(repr(a) for a in task.args(rng))
                if drawn not in inputs:
                    inputs.append(drawn)
                if len(inputs) == tests:
                    break
            name = task.name.format(**variant)
            records.append(
                SynthRecord(
                    id=f"task-{seed}-{name}-{number}",
                    source="tasks",
                    level=1,
                    constraint={"task": task.name, **variant},
                    code=task.code.format(**variant),
                    entry_point=name,
                    io=[IOPair(x, "original" if i == 0 else "value") for i, x in enumerate(inputs)],
                    statement=task.statement.format(**variant),
                )
            )
    return records
