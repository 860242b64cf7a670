"""Template helpers for run pages: highlighted code, diffs, pretty JSON (all escaped)."""

from __future__ import annotations

import json
from typing import Any

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.text import Truncator

from simulator.source import renamed_variables
from webapp.runs.highlight import diff_html as _diff_html
from webapp.runs.highlight import python_html as _python_html

register = template.Library()


@register.filter
def python_html(code: str | None) -> SafeString:
    return _python_html(code or "")


@register.simple_tag
def diff_html(before: str | None, after: str | None) -> SafeString:
    return _diff_html(before or "", after or "", "previous", "repaired")


@register.filter
def test_name(index: int) -> str:
    """``{{ i|test_name }}``: the run's one name for test ``i`` (``Run.test_label``)."""
    from webapp.runs.models import Run

    return Run.test_label(int(index))


@register.simple_tag
def judgements(
    executions: Any, hidden: Any = (), candidate: Any = None, turn: Any = None
) -> list[dict[str, Any]]:
    """``{% judgements executions hidden_tests as rows %}``: per program (candidate, turn) of the
    real-execution rows, its judge's verdict (``simulator.pipeline.judge``); ``candidate``/``turn``
    keep one program only."""
    from simulator.pipeline.judge import judge
    from webapp.runs.models import Run

    groups: dict[tuple[int, int], list[Any]] = {}
    for x in executions:
        if (candidate is None or x.candidate == candidate) and (turn is None or x.turn == turn):
            groups.setdefault((x.candidate, x.turn), []).append(x)
    return [
        {
            "candidate": c,
            "turn": t,
            "judgement": judge([x.outcome() for x in rows], hidden or (), Run.test_label),
        }
        for (c, t), rows in sorted(groups.items())
    ]


@register.simple_tag
def final_judgement(run: Any, viewer: Any) -> Any:
    """``{% final_judgement r request.user as judgement %}``: the run's final verdict as ``viewer`` may
    read it (``privacy.final_judgement_for``: another user's private test, pass or fail only)."""
    from webapp.runs.privacy import final_judgement_for

    return final_judgement_for(run, viewer)


@register.filter
def hides_seconds(stage: str, hidden: Any) -> bool:
    """``{% if name|hides_seconds:hidden_tests %}``: the stage's seconds add up runs of tests the
    viewer may not see (``privacy.hides_seconds``)."""
    from webapp.runs.privacy import hides_seconds as hides

    return hides(str(stage), hidden)


@register.filter
def totals_for(totals: dict[str, Any] | None, hidden: Any) -> dict[str, Any]:
    """``{{ run.totals|totals_for:hidden_tests }}``: without the run's seconds beside tests the viewer
    may not see (``privacy.totals_for``)."""
    from webapp.runs.privacy import totals_for as visible

    return visible(totals or {}, frozenset(hidden or ()))


@register.simple_tag
def shown_message(run: Any, text: str | None, readonly: bool = False) -> str:
    """``{% shown_message run run.error readonly %}``: a message recorded for the run as its reader
    sees it, escaped: on a share link without where (``privacy.message_for``: no model server address,
    no server folder)."""
    from webapp.runs.privacy import message_for, server_of

    return message_for(text or "", bool(readonly), server_of(run))


_PROVENANCE_LABELS = {
    "model": "Model",
    "weights_sha256": "Weights (SHA-256)",
    "server": "Model server",
    "model_root": "Model folder",
    "prompts": "Prompt versions",
    "sampling": "Sampling",
    "seed": "Seed",
    "code_version": "Code version",
    "schema_version": "Schema version",
    "max_model_len": "Context length",
}


@register.filter
def provenance_label(key: str) -> str:
    return _PROVENANCE_LABELS.get(key, key.replace("_", " ").capitalize())


@register.filter
def is_local_detail(key: str) -> bool:
    """Provenance that says where, not what (``privacy.LOCAL_DETAILS``): not for share links."""
    from webapp.runs.privacy import LOCAL_DETAILS

    return key in LOCAL_DETAILS


@register.filter
def readable(value: Any, empty: str = "") -> str:
    """A dict as ``key: value, ...`` (nested ones in parentheses), anything else as text; an empty
    value (None or "") as ``empty``: a run's settings leave the model empty for the default one."""
    if isinstance(value, dict):
        shown = ((k, readable(v, empty), isinstance(v, dict)) for k, v in value.items())
        return ", ".join(f"{k}: ({text})" if nested else f"{k}: {text}" for k, text, nested in shown)
    return empty if value is None or value == "" else str(value)


@register.filter
def shown_output(text: str | None, limit: int = 60) -> SafeString:
    """A real output as the run pages show it, in code and cut to ``limit`` characters; an empty one
    in words, so that a program that printed nothing does not read as a blank cell."""
    if not text:
        return mark_safe('<em class="muted">nothing</em>')  # noqa: S308 (a constant)
    return format_html("<code>{}</code>", Truncator(text).chars(limit))


@register.filter
def by_candidate(values: list[Any] | None, decimals: int | None = None) -> str:
    """A per-candidate list as ``0: 2, 1: none, 2: 3`` (``none``: no value for that candidate);
    numbers to ``decimals`` places when given."""
    shown = (
        "none" if v is None else f"{v:.{decimals}f}" if decimals is not None else str(v) for v in values or []
    )
    return ", ".join(f"{i}: {text}" for i, text in enumerate(shown))


_TIE_STEPS = {
    "known": "with the programs known to fail left out",
    "agreement": "by how often the model wrote each program",
}


@register.filter
def tie_broken(selected: dict[str, Any]) -> str:
    """How the selected panel's tie was decided, in the order it was (``selected.broken_by``): ``tie
    broken by how often the model wrote each program, then at random among equals, seed 7``. A run
    recorded before ``broken_by`` was, by what its payload holds, then the draw. A tie left among
    copies of one program (``copies``) picks nothing: said so."""
    steps = selected.get("broken_by")
    if steps is None:
        steps = [*(["agreement"] if selected.get("agreement") else []), "random"]
    parts = [_TIE_STEPS[s] for s in steps if s in _TIE_STEPS]
    if "copies" in steps:
        if not parts:
            return "the tied candidates are one program"
        return "tie broken " + ", then ".join(parts) + "; the candidates left are one program"
    if "random" in steps:
        parts.append(f"at random{' among equals' if parts else ''}, seed {selected.get('seed')}")
    return "tie broken " + ", then ".join(parts)


@register.simple_tag
def cell_marks(verdict: Any, real: Any) -> dict[str, Any] | None:
    """``{% cell_marks verdict real as marks %}``: a verification cell's marks, kept apart: what the
    simulation predicted, whether the program really passes, whether the two agree
    (``views_context.cell_marks``)."""
    from webapp.runs.views_context import cell_marks as marks

    return marks(verdict, real)


@register.filter
def seconds(value: Any) -> str:
    """Seconds as a person reads them: ``12 ms``, ``21.1 s``, ``2 min 5 s`` ("" for none)."""
    if value is None or value == "":
        return ""
    try:
        total = float(value)
    except (TypeError, ValueError):
        return str(value)
    if total < 1:
        return f"{round(total * 1000)} ms"
    if total < 60:
        return f"{total:.1f} s"
    minutes, rest = divmod(round(total), 60)
    return f"{minutes} min {rest} s"


@register.filter
def totals_text(totals: dict[str, Any] | None) -> str:
    """A run's totals in words: ``1,204 tokens · 9 requests · 21.1 s`` (what the viewer may see)."""
    totals = totals or {}
    parts = []
    if totals.get("tokens") is not None:
        parts.append(f"{totals['tokens']:,} tokens")
    if totals.get("requests") is not None:
        parts.append(f"{totals['requests']:,} request{'' if totals['requests'] == 1 else 's'}")
    if totals.get("seconds") is not None:
        parts.append(seconds(totals["seconds"]))
    parts += [f"{k}: {readable(v)}" for k, v in totals.items() if k not in ("tokens", "requests", "seconds")]
    return " · ".join(parts)


@register.filter
def reply_text(text: str | None) -> str:
    """A repair reply as a person reads it: without the code fence that opens it (the request's
    prefill, ``solve.PREFILL``) and the one that may close it; the program itself is in the diff."""
    from simulator.prompts.solve import PREFILL

    text = (text or "").removeprefix(PREFILL)
    stripped = text.rstrip()
    return stripped.removesuffix("```").rstrip() if stripped.endswith("```") else text


@register.simple_tag
def renames(before: str | None, after: str | None) -> str:
    """``{% renames turn.previous_code turn.code as renamed %}``: ``x → y, total → s`` when the change
    only renames variables (``source.renamed_variables``), else ""."""

    found = renamed_variables(before or "", after or "") if before and after else None
    return ", ".join(f"{old} → {new}" for old, new in sorted(found.items())) if found else ""


@register.filter
def pretty_json(value: Any) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, default=str)


@register.simple_tag
def marked_nlex(text: str | None, verification: Any = None, link: str | None = None) -> SafeString:
    """``{% marked_nlex sim.text real.verification link %}``: the NLEX escaped, its claims coloured
    where ``verification`` (stored with a real run) checked this text, shown from where the model's
    words begin (``webapp.marks``)."""
    from webapp.marks import claims_in, marked_html, shown_from

    text = text or ""
    return marked_html(text, claims_in(text, verification), link=link, start=shown_from(text))
