"""RunSettings: defaults, validation that names the field, JSON round trip."""

from __future__ import annotations

import pytest

from simulator.pipeline.settings import RunSettings, SettingsError


def test_the_defaults_are_the_documented_ones() -> None:
    assert RunSettings().to_dict() == {
        "k": 4,
        "turns": 0,  # repair off until it helps (docs/results.md#repair)
        "oracle": False,
        "real": False,
        "narrate": True,  # the product's own experience: each simulation streams as NLEX
        "seed": None,
        "temperature": 0.8,
        "top_p": 0.95,
        "max_tokens": 512,
        "model": None,
        "concurrency": 8,
    }


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"k": 0}, "k"),
        ({"k": 2.5}, "k"),
        ({"turns": -1}, "turns"),
        ({"max_tokens": 8}, "max_tokens"),
        ({"concurrency": 0}, "concurrency"),
        ({"temperature": 2.5}, "temperature"),
        ({"top_p": 0}, "top_p"),
        ({"seed": -3}, "seed"),
        ({"seed": True}, "seed"),
        ({"model": " "}, "model"),
        ({"oracle": "yes"}, "oracle"),
        ({"narrate": None}, "narrate"),
    ],
)
def test_out_of_range_values_name_the_field(changes: dict, field: str) -> None:
    with pytest.raises(SettingsError) as info:
        RunSettings(**changes)
    assert info.value.field == field
    assert str(info.value).startswith(f"{field}: ")


def test_json_round_trip() -> None:
    settings = RunSettings(k=2, turns=1, narrate=False, oracle=True, seed=9, model="m")
    assert RunSettings.from_dict(settings.to_dict()) == settings


def test_from_dict_refuses_unknown_keys_and_non_objects() -> None:
    with pytest.raises(SettingsError, match="^tempreature: unknown setting"):
        RunSettings.from_dict({"tempreature": 0.1})
    with pytest.raises(SettingsError):
        RunSettings.from_dict([1])
