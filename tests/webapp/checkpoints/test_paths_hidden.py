"""The Checkpoints pages show where things are relative to the checkpoints folder, never the server's
absolute paths, to anyone but staff (issue 51, item 4).

Any signed-up account could read the data directory's absolute path on both pages: the folders looked
in, the default's folder and its reason, each checkpoint's folder, its manifest's path beside an error,
the serve commands, and the paths the manifest recorded at export (base model, data files, serve
commands). alice is a developer and bob a plain user: they read names and paths relative to the
checkpoints folder ("checkpoints/sft-small/merged", "…/smollm2-135m-instruct"); carol is staff and
reads the paths as they are, to operate the server; a visitor is sent to log in.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from django.test import override_settings

from simulator import config
from tests.webapp.checkpoints.support import good_manifest, write_checkpoint

pytestmark = pytest.mark.django_db

RECORDED = (
    "/data/models/smollm2-135m-instruct",
    "/tmp/export/merged",
    "/tmp/export/adapter",
    "/tmp/data/sft.jsonl",
)


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The data directory's checkpoints folder, at a distinctive absolute path: a good checkpoint (the
    default, named by its absolute path), one with a servable merged folder, and a broken one."""
    root = tmp_path / "srv-execsim-secret-data" / "checkpoints"
    good = write_checkpoint(root, "sft-small", good_manifest())
    (good / "merged").mkdir()
    (good / "merged" / "config.json").write_text("{}")
    write_checkpoint(root, "broken", '{"base_model": "x",')
    monkeypatch.setattr(config, "checkpoints_dir", lambda: root)
    monkeypatch.setenv("EXECSIM_CHECKPOINT", str(good))
    with override_settings(EXECSIM_CHECKPOINT_DIRS=[str(root)]):
        yield root


def _pages(client: Any) -> list[str]:
    return [
        client.get(url).content.decode()
        for url in ("/checkpoints/", "/checkpoints/sft-small/", "/checkpoints/broken/")
    ]


def _absolute_paths(page: str) -> list[str]:
    """Every absolute path a page shows (in text or attributes; URLs of this site's pages aside)."""
    text = re.sub(r'(?:href|src|action|hx-get|hx-post)="[^"]*"', "", page)
    return re.findall(r"(?<![\w.:/~<-])/(?:[\w.+@-]+/)+[\w.+@-]+", text)


def test_a_signed_up_user_reads_no_absolute_server_path(client, alice, bob, data_dir):
    for user in (alice, bob):
        client.force_login(user)
        for page in _pages(client):
            assert str(data_dir.parent) not in page
            assert _absolute_paths(page) == [], _absolute_paths(page)
            for recorded in RECORDED:
                assert recorded not in page, recorded
        listing, detail, broken = _pages(client)
        assert "checkpoints/sft-small" in listing  # the default's folder, relative to the checkpoints folder
        assert "execsim model serve --checkpoint checkpoints/sft-small/merged" in detail
        assert "…/smollm2-135m-instruct" in detail and "…/sft.jsonl" in detail  # recorded at export: names
        assert "checkpoints/broken/manifest.json" in broken


def test_staff_read_the_paths_as_they_are(client, carol, data_dir):
    client.force_login(carol)
    listing, detail, broken = _pages(client)
    assert str(data_dir) in listing and str(data_dir / "sft-small") in listing
    assert f"execsim model serve --checkpoint {data_dir / 'sft-small' / 'merged'}" in detail
    assert all(recorded in detail for recorded in RECORDED)
    assert str(data_dir / "broken" / "manifest.json") in broken


def test_a_visitor_is_sent_to_log_in(client, data_dir):
    for url in ("/checkpoints/", "/checkpoints/sft-small/"):
        response = client.get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_the_charts_and_tables_still_read_the_same_without_paths(client, alice, carol, data_dir):
    def charts(user: Any) -> list[str]:
        client.force_login(user)
        page = client.get("/checkpoints/sft-small/").content.decode()
        return [
            ElementTree.tostring(ElementTree.fromstring(svg)).decode()
            for svg in re.findall(r"<svg\b.*?</svg>", page, re.S)
        ]

    assert charts(alice) == charts(carol) != []  # drawn from the same figures, well-formed


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (
            "cannot read /srv/data/checkpoints/x/manifest.json: denied",
            "cannot read checkpoints/x/manifest.json: denied",
        ),
        ("vllm serve /data/models/base --lora x=/tmp/export/adapter", "vllm serve …/base --lora x=…/adapter"),
        ("pass@1 (nlex, greedy), 1/2, a/b, </text>, https://example.org/a/b", None),
    ],
)
def test_free_text_names_paths_relative_to_the_checkpoints_folder(text: str, shown: str | None) -> None:
    from webapp.checkpoints.manifests import DATA_DIR, Root
    from webapp.checkpoints.paths import text_shown

    assert text_shown(text, [Root(Path("/srv/data/checkpoints"), DATA_DIR)]) == (shown or text)
