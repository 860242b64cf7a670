"""The system checks of ExecSim's settings (webapp/checks.py): a bad value is an Error with its id and
the setting's name, whichever way it reached the settings; the shipped settings pass."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import override_settings

from webapp.checks import check_settings


def _problems(**values: object) -> list[tuple[str, str]]:
    with override_settings(**values):
        return [(e.id, e.msg) for e in check_settings()]


def test_it_passes_the_shipped_settings():
    assert check_settings() == []
    assert _problems(EXECSIM_CHECKPOINT_DIRS=("checkpoints", Path("/srv/ckpt"))) == []


@pytest.mark.parametrize(
    "name", ["EXECSIM_EXPLORER_MAX_STEPS", "EXECSIM_ANNOTATION_CLAIM_SECONDS", "EXECSIM_ANNOTATIONS_PER_ITEM"]
)
def test_it_reports_a_count_that_is_not_an_integer_or_below_one(name):
    assert _problems(**{name: "600"}) == [("execsim.E001", f"{name}='600' is not an integer")]
    assert _problems(**{name: True}) == [("execsim.E001", f"{name}=True is not an integer")]
    assert _problems(**{name: 0}) == [("execsim.E002", f"{name}=0 must be at least 1")]


@pytest.mark.parametrize("value", ["/srv/a,/srv/b", ["/srv/a", 3], None])
def test_it_reports_checkpoint_dirs_that_are_not_a_list_of_paths(value):
    [(code, message)] = _problems(EXECSIM_CHECKPOINT_DIRS=value)
    assert code == "execsim.E003" and message.startswith(f"EXECSIM_CHECKPOINT_DIRS={value!r}")


def test_manage_py_check_stops_on_a_bad_value():
    """The check is registered: ``manage.py check`` (and every start-up) fails on it."""
    with override_settings(EXECSIM_ANNOTATIONS_PER_ITEM=-1), pytest.raises(SystemCheckError, match="E002"):
        call_command("check")
