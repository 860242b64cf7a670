"""The Checkpoints pages: the list and a checkpoint's page (evaluation table with intervals and its
inline SVG chart), a malformed manifest shown as an error instead of a 500, 404 for an unknown name,
login required, the nav link; the default checkpoint as ``simulator.config.checkpoint_choice()`` names
it (EXECSIM_CHECKPOINT set with monkeypatch, the committed folder pointed at tmp_path); and the default
folders the pages look in. Tests that read the server's folders log in as staff (carol): others read
them relative to the checkpoints folder (test_paths_hidden.py)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from django.conf import settings
from django.test import override_settings

from simulator import config
from tests.webapp.checkpoints.support import GOOD_EVALUATION, good_manifest, write_checkpoint
from webapp.checkpoints import conf
from webapp.checkpoints.manifests import MANIFEST, Root, read_checkpoint

pytestmark = pytest.mark.django_db

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(autouse=True)
def no_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """EXECSIM_CHECKPOINT unset and no committed checkpoint (an empty folder): the base model is the
    default unless a test says otherwise. Returns the committed folder checkpoint_choice() reads."""
    committed = tmp_path / "committed"
    committed.mkdir()
    monkeypatch.delenv("EXECSIM_CHECKPOINT", raising=False)
    monkeypatch.setattr(config, "checkpoints_dir", lambda: committed)
    return committed


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Two checkpoints (a good one, made the default, and a malformed one) in one configured folder."""
    write_checkpoint(tmp_path, "sft-small", good_manifest())
    write_checkpoint(tmp_path, "broken", '{"base_model": "x",')
    monkeypatch.setattr(config, "checkpoints_dir", lambda: tmp_path)
    monkeypatch.setenv("EXECSIM_CHECKPOINT", "sft-small")
    with override_settings(EXECSIM_CHECKPOINT_DIRS=[str(tmp_path)]):
        yield tmp_path


def _default_reason(page: str) -> str:
    found = re.search(r'<p data-testid="default-reason">(.*?)</p>', page, re.S)
    assert found, "no default-reason paragraph"
    return found.group(1)


def _marked(page: str) -> list[str]:
    """The names of the list's rows marked default."""
    rows = re.findall(r'<tr data-testid="checkpoint-row" data-name="([^"]+)">(.*?)</tr>', page, re.S)
    return [name for name, html in rows if 'data-testid="checkpoint-default"' in html]


def _svgs(page: str) -> list[ElementTree.Element]:
    return [ElementTree.fromstring(svg) for svg in re.findall(r"<svg\b.*?</svg>", page, re.S)]


def test_the_pages_need_a_login(client: Any, folders: Path) -> None:
    for url in ("/checkpoints/", "/checkpoints/sft-small/"):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_the_list_shows_each_checkpoint_the_default_and_a_broken_manifest(
    client: Any, carol: Any, folders: Path
) -> None:
    client.force_login(carol)  # staff: the server's paths as they are (test_paths_hidden.py)
    response = client.get("/checkpoints/")
    assert response.status_code == 200
    page = response.content.decode()
    rows = re.findall(r'<tr data-testid="checkpoint-row" data-name="([^"]+)">(.*?)</tr>', page, re.S)
    assert [name for name, _ in rows] == ["broken", "sft-small"]
    broken, good = (html for _, html in rows)
    assert 'data-testid="checkpoint-error"' in broken and "is not valid JSON" in broken
    assert 'data-testid="checkpoint-default"' in good and 'data-testid="checkpoint-default"' not in broken
    for text in (
        "/data/models/smollm2-135m-instruct",
        ">150<",
        "1 h 30 min",
        ">422<",
        "2025-01-02T03:04:05Z",
    ):
        assert text in good
    assert (
        "<b>cruxeval-o</b> pass@1 (nlex, greedy): base 0.020 [0.005, 0.050], sft 0.120 [0.080, 0.170], "
        "sft - base 0.100 [0.060, 0.145]"
    ) in good  # each value with its 95% interval, as the list's intro says
    assert "<b>mbpp</b> best@4: sft 0.250 [0.175, 0.343]" in good
    assert 'href="/checkpoints/sft-small/"' in good
    assert "EXECSIM_CHECKPOINT=sft-small" in page and str(folders) in page
    reason = _default_reason(page)
    assert "Default checkpoint: <b>sft-small</b> (EXECSIM_CHECKPOINT=sft-small)" in reason
    assert str(folders / "sft-small") in reason and "default-missing" not in reason


def test_a_checkpoint_page_tables_and_plots_its_results(client: Any, carol: Any, folders: Path) -> None:
    client.force_login(carol)  # staff: the server's paths as they are (test_paths_hidden.py)
    response = client.get("/checkpoints/sft-small/")
    assert response.status_code == 200
    page = response.content.decode()
    # the table: every row's model, value and 95% interval
    for model, value, interval in [
        ("base", "0.020", "[0.005, 0.050]"),
        ("sft", "0.120", "[0.080, 0.170]"),
        ("sft - base", "0.100", "[0.060, 0.145]"),
        ("sft", "0.250", "[0.175, 0.343]"),
    ]:
        assert re.search(
            rf'data-model="{model}">\s*<td>{model}</td><td class="num">{value}</td><td class="mono">'
            rf"{re.escape(interval)}</td>",
            page,
        ), (model, value)
    # the charts: one per benchmark and metric, one <rect> per row, titled and described
    svgs = _svgs(page)
    assert len(svgs) == 2
    bars = [svg.findall(f".//{SVG}rect") for svg in svgs]
    assert [len(b) for b in bars] == [3, 1] and sum(map(len, bars)) == len(GOOD_EVALUATION)
    assert [r.get("data-value") for r in bars[0]] == ["0.020", "0.120", "0.100"]
    heights = [float(r.get("height")) for r in bars[0]]
    assert heights[1] > heights[2] > heights[0] > 0  # 0.12 > 0.10 > 0.02
    first = svgs[0]
    assert first.get("role") == "img" and first.get("aria-labelledby") == "chart-0-title chart-0-desc"
    assert first.find(f"{SVG}title").text == "cruxeval-o: pass@1 (nlex, greedy)"
    desc = first.find(f"{SVG}desc").text
    assert "base 0.020 (95% interval 0.005 to 0.050, n = 200)" in desc and "sft - base 0.100" in desc
    texts = [t.text for t in first.iter(f"{SVG}text")]
    assert {"0.020", "0.120", "0.100", "base", "sft", "sft - base", "n = 200"} <= set(texts)
    whiskers = [line for line in first.iter(f"{SVG}line") if line.get("stroke-width") == "1.5"]
    assert len(whiskers) == 3 * 3  # a vertical line and two caps per bar
    # the rest of the page
    for text in ("completion loss 1.36 -&gt; 1.1", "120 generated, 62 kept", "constant_output 40",
                 "vllm serve /tmp/export/merged", 'data-testid="checkpoint-default"'):  # fmt: skip
        assert text in page, text


def test_a_malformed_manifest_shows_its_error_not_a_500(client: Any, carol: Any, folders: Path) -> None:
    client.force_login(carol)  # staff: the server's paths as they are (test_paths_hidden.py)
    response = client.get("/checkpoints/broken/")
    assert response.status_code == 200
    page = response.content.decode()
    assert 'data-testid="checkpoint-error"' in page
    assert "manifest.json is not valid JSON: Expecting property name enclosed in double quotes" in page
    assert str(folders / "broken" / MANIFEST) in page and "<svg" not in page


def test_a_partial_manifest_renders_with_its_warnings(client: Any, alice: Any, tmp_path: Path) -> None:
    rows = [{"benchmark": "mbpp", "metric": "pass@1", "model": "base", "value": 0.4}, {"metric": 3}]
    write_checkpoint(tmp_path, "half", {"steps": "x", "evaluation": rows})
    client.force_login(alice)
    with override_settings(EXECSIM_CHECKPOINT_DIRS=[str(tmp_path)]):
        page = client.get("/checkpoints/half/").content.decode()
        listing = client.get("/checkpoints/").content.decode()
    assert 'data-testid="checkpoint-warnings"' in page and "steps: expected an integer" in page
    assert "lacks n, low, high" in page and "not plotted (no value)" in page
    assert [len(svg.findall(f".//{SVG}rect")) for svg in _svgs(page)] == [1]  # the row with a value
    assert "The manifest lists no stages." in page and "No synthesis card" in page
    assert _marked(listing) == [] and 'data-testid="checkpoint-default"' not in page


def test_manifest_text_is_escaped_everywhere(client: Any, alice: Any, tmp_path: Path) -> None:
    evil = "<script>alert(1)</script>"
    row = {"benchmark": evil, "metric": "m", "model": evil, "value": 0.5, "n": 2, "low": 0.1, "high": 0.9}
    write_checkpoint(tmp_path, "evil", good_manifest(base_model=evil, evaluation=[row]))
    client.force_login(alice)
    with override_settings(EXECSIM_CHECKPOINT_DIRS=[str(tmp_path)]):
        pages = [client.get(u).content.decode() for u in ("/checkpoints/", "/checkpoints/evil/")]
    for page in pages:
        assert evil not in page and "&lt;script&gt;" in page
    assert len(_svgs(pages[1])) == 1  # still well-formed XML


def test_an_unknown_checkpoint_is_a_404(client: Any, alice: Any, folders: Path) -> None:
    client.force_login(alice)
    assert client.get("/checkpoints/nope/").status_code == 404


def test_no_checkpoints_says_so_and_the_nav_links_the_page(client: Any, alice: Any, tmp_path: Path) -> None:
    client.force_login(alice)
    with override_settings(EXECSIM_CHECKPOINT_DIRS=[str(tmp_path / "none")]):
        page = client.get("/checkpoints/").content.decode()
    assert 'data-testid="checkpoint-none"' in page
    assert re.search(r'<a href="/checkpoints/" data-testid="nav-checkpoints">Checkpoints</a>', page)


def test_unset_the_default_is_the_committed_smollm2_135m_nlex(
    client: Any, alice: Any, no_default: Path
) -> None:
    write_checkpoint(no_default, config.DEFAULT_CHECKPOINT, good_manifest())
    write_checkpoint(no_default, "another", good_manifest())
    client.force_login(alice)
    with override_settings(EXECSIM_CHECKPOINT_DIRS=[str(no_default)]):
        listing = client.get("/checkpoints/").content.decode()
        mine = client.get(f"/checkpoints/{config.DEFAULT_CHECKPOINT}/").content.decode()
        other = client.get("/checkpoints/another/").content.decode()
    assert _marked(listing) == [config.DEFAULT_CHECKPOINT]
    reason = _default_reason(listing)
    assert f"<b>{config.DEFAULT_CHECKPOINT}</b> (the committed default checkpoint)" in reason
    assert 'title="the committed default checkpoint">default</span>' in mine
    assert 'data-testid="checkpoint-default"' not in other


@pytest.mark.parametrize("setting", ["base", None])
def test_the_base_model_as_default_marks_no_checkpoint_and_says_so(
    client: Any, carol: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str | None
) -> None:
    """EXECSIM_CHECKPOINT=base, or unset with no committed smollm2-135m-nlex (another one is listed)."""
    write_checkpoint(tmp_path / "listed", config.DEFAULT_CHECKPOINT, good_manifest())
    if setting:
        monkeypatch.setenv("EXECSIM_CHECKPOINT", setting)
    client.force_login(carol)  # staff: the server's paths as they are (test_paths_hidden.py)
    with override_settings(EXECSIM_CHECKPOINT_DIRS=[str(tmp_path / "listed")]):
        listing = client.get("/checkpoints/").content.decode()
        page = client.get(f"/checkpoints/{config.DEFAULT_CHECKPOINT}/").content.decode()
    assert _marked(listing) == [] and 'data-testid="checkpoint-default"' not in page
    reason = _default_reason(listing)
    assert "the app serves the plain base model <b>smollm2-135m-instruct</b>" in reason
    expected = "EXECSIM_CHECKPOINT=base" if setting else f"no folder {tmp_path / 'committed'}"
    assert f"({expected}" in reason and "Default checkpoint:" not in reason


def test_a_path_default_matches_its_folder_however_it_is_spelled(
    client: Any, carol: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_checkpoint(tmp_path / "a", "same", good_manifest())
    write_checkpoint(tmp_path / "b", "same", good_manifest())  # listed as same-2
    (tmp_path / "link").symlink_to(tmp_path / "b")
    monkeypatch.setenv("EXECSIM_CHECKPOINT", str(tmp_path / "link" / "same"))
    client.force_login(carol)  # staff: the server's paths as they are (test_paths_hidden.py)
    with override_settings(EXECSIM_CHECKPOINT_DIRS=[str(tmp_path / "a"), str(tmp_path / "b")]):
        listing = client.get("/checkpoints/").content.decode()
    assert _marked(listing) == ["same-2"]  # the folder, not the name
    assert f"(EXECSIM_CHECKPOINT={tmp_path / 'link' / 'same'})" in _default_reason(listing)


def test_a_default_whose_folder_is_missing_or_unlisted_says_so(
    client: Any, carol: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_checkpoint(tmp_path / "listed", "gone", good_manifest())
    outside = write_checkpoint(tmp_path / "outside", "elsewhere", good_manifest())
    client.force_login(carol)  # staff: the server's paths as they are (test_paths_hidden.py)
    with override_settings(EXECSIM_CHECKPOINT_DIRS=[str(tmp_path / "listed")]):
        monkeypatch.setenv("EXECSIM_CHECKPOINT", "gone")  # no folder committed/gone
        missing = client.get("/checkpoints/").content.decode()
        monkeypatch.setenv("EXECSIM_CHECKPOINT", str(outside))
        unlisted = client.get("/checkpoints/").content.decode()
    # the name is the fallback, but the page warns that prepare will fail
    assert _marked(missing) == ["gone"]
    assert 'data-testid="default-missing"' in _default_reason(missing)
    assert str(tmp_path / "committed" / "gone") in _default_reason(missing)
    assert _marked(unlisted) == []
    reason = _default_reason(unlisted)
    assert 'data-testid="default-unlisted"' in reason and "default-missing" not in reason
    assert f"Default checkpoint: <b>elsewhere</b> (EXECSIM_CHECKPOINT={outside})" in reason


def test_the_default_folders_are_the_committed_one_and_the_data_dirs() -> None:
    assert conf.roots() == [
        Root(Path(settings.BASE_DIR) / "checkpoints", "committed"),
        Root(Path(settings.DATA_DIR) / "checkpoints", "data dir"),
    ]
    with override_settings(EXECSIM_CHECKPOINT_DIRS=["/srv/a", Path("~/b")]):
        assert conf.roots() == [
            Root(Path("/srv/a"), "configured"),
            Root(Path("~/b").expanduser(), "configured"),
        ]


COMMITTED = sorted((Path(settings.BASE_DIR) / "checkpoints").glob(f"*/{MANIFEST}"))


@pytest.mark.parametrize("manifest", COMMITTED or [None], ids=[p.parent.name for p in COMMITTED] or ["none"])
def test_every_committed_manifest_reads_and_plots(manifest: Path | None) -> None:
    if manifest is None:
        pytest.skip("no checkpoint is committed under checkpoints/ yet")
    c = read_checkpoint(manifest.parent)
    assert c.error is None, c.error
    assert [r.problems for r in c.evaluation if r.problems] == []
