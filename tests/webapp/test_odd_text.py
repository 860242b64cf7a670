"""NUL characters and lone surrogates (issue 11 item 8) in program output, run events and imported
problems: PostgreSQL refuses both in text and jsonb, so they are stored escaped (``\\x00``, ``\\udc80``,
as Python writes them), shown, and never fail a save. Against the suite's real PostgreSQL. And the
CRLF line breaks of every textarea a browser submits: stored, run and sent to the model as LF."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from simulator.execution import Program, SandboxError, run
from tests.webapp.posts import problem_post
from webapp.explorer.models import Trace
from webapp.problems.models import Problem
from webapp.runs.models import Run, RunEvent
from webapp.runs.record import record_and_publish

ODD = "A\x00B\udc80C"
ESCAPED = "A\\x00B\\udc80C"


def test_storable_escapes_only_nul_and_lone_surrogates_everywhere_in_a_value():
    from webapp.text import storable

    assert storable("plain \\n text ✓") == "plain \\n text ✓"
    assert storable({"k\x00": [ODD, 1, None, ("\ud800",)]}) == {"k\\x00": [ESCAPED, 1, None, ["\\ud800"]]}
    assert storable("🙂") == "🙂"  # a surrogate pair's character is not a lone surrogate


@pytest.mark.django_db
def test_a_run_event_with_nul_and_a_lone_surrogate_is_stored_and_shown(client, alice, make_run):
    run_ = make_run(status="running")
    started = {"problem": {}, "settings": {}, "provenance": {"model": "m"}}
    assert record_and_publish(
        run_.id, {"run_id": str(run_.id), "seq": 0, "type": "run_started", "payload": started}
    )
    delta = {"candidate": 0, "text": ODD}
    assert record_and_publish(
        run_.id, {"run_id": str(run_.id), "seq": 1, "type": "candidate_delta", "payload": delta}
    )
    assert RunEvent.objects.get(run=run_, seq=1).payload["text"] == ESCAPED
    client.force_login(alice)
    page = client.get(f"/runs/{run_.id}/")
    assert page.status_code == 200 and ESCAPED in page.content.decode()


@pytest.mark.django_db
def test_an_imported_title_with_nul_and_a_lone_surrogate_is_stored_escaped(client, alice):
    client.force_login(alice)
    data = {"title": f"T{ODD}", "statement": ODD, "kind": "stdin", "tests": [{"input": ODD, "output": "x\n"}]}
    upload = SimpleUploadedFile("p.json", json.dumps(data).encode())  # JSON escapes: \u0000, \udc80
    response = client.post("/problems/import/", {"file": upload, "format": "execsim", "is_public": "on"})
    assert response.status_code == 302, response.content.decode()[:2000]
    problem = Problem.objects.get()
    assert problem.title == f"T{ESCAPED}" and problem.tests.get().input == ESCAPED
    assert f"T{ESCAPED}" in client.get(f"/problems/{problem.pk}/").content.decode()


@pytest.mark.django_db(transaction=True)
def test_the_explorer_saves_a_trace_of_a_program_printing_nul(client, alice):
    try:
        run(Program(code="x = 1", stdin=""))
    except SandboxError as exc:
        pytest.skip(f"the sandbox is not available: {exc}")
    client.force_login(alice)
    response = client.post("/explorer/", {"code": "print('A\\x00B')\n", "mode": "stdin", "call_input": ""})
    assert response.status_code == 302
    trace = Trace.objects.get()
    assert trace.result["stdout"] == "A\\x00B\n"
    page = client.get(response["Location"]).content.decode()
    assert json.dumps("A\\x00B")[1:-1] in page  # in the page's trace data (json_script)


def _typed(text: str) -> str:
    """``text`` as a browser's form submission sends a textarea's value: every line break as CRLF."""
    return text.replace("\n", "\r\n")


def test_typed_text_keeps_everything_but_the_carriage_returns_of_line_breaks():
    from webapp.text import TypedField, typed

    assert typed("a\r\n  b\r\n\r\n") == "a\n  b\n\n"
    assert typed("a\rb\\r\\n") == "a\rb\\r\\n"  # a lone CR, and the four characters \\r\\n, stay
    assert TypedField(required=False).clean(" x\r\n") == " x\n"  # leading and trailing space kept


@pytest.mark.django_db
def test_what_a_browser_types_reaches_runs_traces_and_problems_with_lf_line_breaks(client, alice, no_enqueue):
    """Code, stdin, a statement and tests typed in the browser: the model was trained on LF text, and a
    `# hide:` comment ending in a carriage return was not read by the explorer."""
    client.force_login(alice)
    code = "n = int(input())\nprint(n * 2)  # hide: n\n"
    response = client.post("/simulate/", {"code": _typed(code), "mode": "stdin", "code_input": _typed("4\n")})
    assert response.status_code == 302
    run_ = Run.objects.get()
    assert (run_.code, run_.code_input) == (code, "4\n")
    client.post("/explorer/", {"code": _typed(code), "mode": "stdin", "call_input": _typed("4\n")})
    trace = Trace.objects.get()
    assert (trace.code, trace.call_input, trace.result["stdout"]) == (code, "4\n", "8\n")
    typed = [(_typed("4\n"), _typed("8\n"), True)]
    form = problem_post(
        typed, title="Twice", statement=_typed("Read n.\n\nPrint 2n."), kind="stdin", entry_point=""
    )
    assert client.post("/problems/new/", form).status_code == 302
    problem = Problem.objects.get(title="Twice")
    assert problem.statement == "Read n.\n\nPrint 2n."
    assert [(t.input, t.output) for t in problem.tests.all()] == [("4\n", "8\n")]
