"""Issue 52, "What a newcomer meets", the annotator's and staff's items, without a browser: the word
diff matches sentences first and keeps a number whole; each one-click fix names its claim; a false
claim with no value to use offers to remove its sentence; the queue-settings report; the agreement
figures' n and annotator pairs; the export filters."""

from __future__ import annotations

from webapp.annotation.corrections import changed_words, word_diff


def _changes(original: str, edited: str) -> list[tuple[str, str]]:
    chunks = word_diff(original, edited)
    assert "".join(c.text for c in chunks if c.op != "ins") == original
    assert "".join(c.text for c in chunks if c.op != "del") == edited
    return [(c.op, c.text) for c in chunks if c.op != "same"]


def test_a_replaced_value_is_one_change_beside_a_removed_line():
    """Issue 52: "2.0" after the struck-out "3" was "2", "." and "0", the "." matched with the full
    stop of the line removed next to it, so "0" showed a line below, after the removed line."""
    original = "Line 2: y becomes 3.\nLine 4: y is reset to zero.\nLine 5: it returns 3."
    edited = "Line 2: y becomes 2.0.\nLine 5: it returns 3."
    assert _changes(original, edited) == [
        ("del", "3"),
        ("ins", "2.0"),
        ("del", "Line 4: y is reset to zero.\n"),
    ]


def test_a_sentence_removed_from_a_line_is_removed_whole():
    original = "x = 1. Line 2: x < 0 is false. Line 3: x is still 1. Line 4: y becomes 3. Done."
    edited = "x = 1. Line 2: x < 0 is false. Line 4: y becomes 2.0. Done."
    assert _changes(original, edited) == [("del", "Line 3: x is still 1. "), ("del", "3"), ("ins", "2.0")]
    assert changed_words(word_diff(original, edited)) == 9  # "Line 3 : x is still 1 ." and 3 -> 2.0


def test_numbers_are_one_token_and_a_full_stop_stays_its_own():
    assert _changes("It returns 7.", "It returns 6.") == [("del", "7"), ("ins", "6")]
    assert _changes("It returns 3.", "It returns 2.5.") == [("del", "3"), ("ins", "2.5")]
    assert _changes("a = 1.5", "a = 1.25") == [("del", "1.5"), ("ins", "1.25")]


def test_a_rewritten_text_is_still_diffed_word_by_word():
    original = "The loop runs. i is 1. Then i is 2."
    edited = "The loop ends. i is 1. Then i is 3. Done."
    assert _changes(original, edited) == [
        ("del", "runs"),
        ("ins", "ends"),
        ("del", "2"),
        ("ins", "3"),
        ("ins", " Done."),
    ]
