"""RunSettings: defaults, validation that names the field, JSON round trip."""

from __future__ import annotations

import pytest

from simulator.pipeline.settings import RunSettings, SettingsError


def test_the_defaults_are_the_documented_ones() -> None:
    assert RunSettings().to_dict() == {
        "k": 4,
        "turns": 0,  # repair off until it helps (issue 12, docs/results.md)
        "repair": "guided",  # when on: the simulation decides, the reply is a program (issue 12)
        "fixes": 4,  # replies a guided turn samples: the first usable one is the fix (issue 12)
        "sims": 1,
        "ties": "agreement",  # ties by the program written most often: +0.4 points (issue 12)
        "oracle": False,
        "real": False,
        "narrate": False,  # the answer at once: the default model predicts better (issue 12)
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
        ({"fixes": 0}, "fixes"),
        ({"sims": 17}, "sims"),
        ({"max_tokens": 8}, "max_tokens"),
        ({"concurrency": 0}, "concurrency"),
        ({"temperature": 2.5}, "temperature"),
        ({"top_p": 0}, "top_p"),
        ({"seed": -3}, "seed"),
        ({"seed": True}, "seed"),
        ({"model": " "}, "model"),
        ({"oracle": "yes"}, "oracle"),
        ({"repair": "free"}, "repair"),
        ({"repair": None}, "repair"),
    ],
)
def test_out_of_range_values_name_the_field(changes: dict, field: str) -> None:
    with pytest.raises(SettingsError) as info:
        RunSettings(**changes)
    assert info.value.field == field
    assert str(info.value).startswith(f"{field}: ")


def test_json_round_trip() -> None:
    settings = RunSettings(k=2, turns=0, sims=3, oracle=True, seed=9, model="m")
    assert RunSettings.from_dict(settings.to_dict()) == settings


def test_a_bad_repair_mode_names_the_modes() -> None:
    with pytest.raises(SettingsError, match="^repair: must be one of guided, model, not 'free'$"):
        RunSettings(repair="free")
    assert RunSettings(repair="model").repair == "model"


def test_settings_stored_before_the_repair_mode_get_the_default() -> None:
    assert RunSettings.from_dict({"k": 2, "turns": 1}).repair == "guided"


def test_from_dict_refuses_unknown_keys_and_non_objects() -> None:
    with pytest.raises(SettingsError, match="^tempreature: unknown setting"):
        RunSettings.from_dict({"tempreature": 0.1})
    with pytest.raises(SettingsError):
        RunSettings.from_dict([1])


def test_a_guided_turn_asks_for_fixes_replies_when_sampling_and_one_when_greedy() -> None:
    assert RunSettings(fixes=3, temperature=0.8).fix_replies == 3
    assert RunSettings(fixes=3, temperature=0.0).fix_replies == 1  # the others would be the same
