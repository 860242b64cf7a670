"""Problem pages: list and search, visibility, create and edit with field errors, the problem page."""

from __future__ import annotations

import json
import re

import pytest

from tests.webapp.posts import problem_post
from webapp.problems.models import Problem

pytestmark = pytest.mark.django_db


def _form(**overrides):
    """A stdin problem with a public and a private test, as the New problem form posts it."""
    tests = [("2\n", "4\n", True), ("5\n", "10\n", False)]
    statement = "Print twice the number. <script>alert(1)</script>"
    return problem_post(tests, **{"statement": statement, "kind": "stdin", "entry_point": "", **overrides})


def test_it_lists_and_searches_problems(client, problem):
    assert problem in client.get("/problems/").context["problems"]
    assert list(client.get("/problems/?q=add").context["problems"]) == [problem]
    assert list(client.get("/problems/?q=zebra").context["problems"]) == []


def test_the_list_filters_by_source_and_offers_only_the_sources_of_problems_one_may_see(
    client, problem, alice, bob
):
    """An import brings hundreds of problems of one benchmark; the source select narrows the list (and
    its pages keep it). A private problem's source is not offered to those who may not see it."""
    Problem.objects.create(title="Secret", statement="s", owner=bob, source="codejam", is_public=False)
    mbpp = Problem.objects.create(title="MBPP 3: x", statement="s", owner=alice, source="mbpp")
    visitor = client.get("/problems/?source=mbpp")
    assert list(visitor.context["problems"]) == [mbpp] and visitor.context["sources"] == ["manual", "mbpp"]
    assert 'value="mbpp" selected' in visitor.content.decode()
    assert list(client.get("/problems/?source=codejam").context["problems"]) == []
    assert "No problems from codejam." in client.get("/problems/?source=codejam").content.decode()
    client.force_login(bob)
    assert client.get("/problems/").context["sources"] == ["codejam", "manual", "mbpp"]
    both = client.get("/problems/?q=MBPP&source=mbpp", headers={"HX-Request": "true"})
    assert list(both.context["problems"]) == [mbpp] and both.context["kept"] == "q=MBPP&source=mbpp"
    client.force_login(alice)
    assert client.get("/problems/").context["sources"] == ["manual", "mbpp"]


def test_a_visitor_is_told_what_execsim_is_and_a_user_is_not_told_again(client, problem, alice):
    page = client.get("/", follow=True).content.decode()
    assert (
        'data-testid="intro"' in page and "imagining how its own code" in page and "/accounts/signup/" in page
    )
    client.force_login(alice)
    assert 'data-testid="intro"' not in client.get("/", follow=True).content.decode()


def test_a_long_list_comes_a_page_at_a_time_and_the_search_stays_on_every_page(client, alice, problem):
    """An import brings hundreds of problems: none may fall off the end of the list unseen."""
    from webapp.pages import PAGE_SIZE

    for i in range(PAGE_SIZE + 10):
        Problem.objects.create(title=f"Imported {i}", statement="s", entry_point="f", owner=alice)
    first = client.get("/problems/")
    assert len(first.context["problems"]) == PAGE_SIZE and "1–50 of 61" in first.content.decode()
    assert 'data-testid="page-next"' in first.content.decode()
    last = client.get("/problems/?page=2")
    assert len(last.context["problems"]) == 11 and problem in last.context["problems"]  # the oldest: last
    response = client.get("/problems/?q=Imported&source=&page=2", headers={"HX-Request": "true"})
    assert response["HX-Push-Url"] == "/problems/?q=Imported&page=2"  # the address bar: no empty filter
    assert client.get("/problems/?q=&source=", headers={"HX-Request": "true"})["HX-Push-Url"] == "/problems/"
    searched = client.get("/problems/?q=Imported", headers={"HX-Request": "true"}).content.decode()
    assert "1–50 of 60" in searched and 'hx-get="?q=Imported&amp;page=2"' in searched
    assert len(client.get("/problems/?q=Imported&page=2").context["problems"]) == 10


def test_a_problem_is_solved_by_the_final_programs_rows_at_their_last_turn(alice, problem, make_run):
    """As ``Run.final_judgement`` reads them: a repaired program that passes solves the problem though
    its first version failed; one that fails a test does not, though its first version passed; another
    candidate passing is not the final program."""
    from webapp.runs.models import Execution, Run

    def run_with(rows, **fields):  # rows: (candidate, turn, passed on each test)
        run_ = make_run(status=Run.FINISHED, final_candidate=1, **fields)
        for candidate, turn, passed in rows:
            for test, ok in enumerate(passed):
                Execution.objects.create(
                    run=run_, candidate=candidate, turn=turn, test=test, status="ok", passed=ok
                )
        return run_

    fixed, broken, other = (Problem.objects.create(title=t, statement="s", owner=alice) for t in "FBO")
    run_with([(1, 0, [False, False]), (1, 1, [True, True])], problem=fixed)
    run_with([(1, 2, [True, False]), (1, 0, [True, True])], problem=broken)
    run_with([(0, 0, [True, True]), (1, 0, [False, True])], problem=other)
    run_with([(1, 0, [True, True])])  # the fixture's problem: accepted
    assert Run.objects.standing(alice) == {
        fixed.pk: "accepted",
        broken.pk: "tried",
        other.pk: "tried",
        problem.pk: "accepted",
    }
    assert Run.objects.standing(alice, [fixed.pk]) == {fixed.pk: "accepted"}
    for run_ in Run.objects.filter(user=alice):  # the same verdicts as each run's own judgement
        expected = Run.objects.standing(alice)[run_.problem_id] == "accepted"
        assert (run_.final_judgement().verdict == "accepted") == expected


def test_the_list_marks_the_problems_you_solved_and_tried_as_a_judge_does(
    client, alice, bob, problem, make_run
):
    from webapp.runs.models import Execution, Run

    other = Problem.objects.create(title="Other", statement="s", entry_point="f", owner=alice)
    Problem.objects.create(title="Untouched", statement="s", entry_point="f", owner=alice)
    solved = make_run(status=Run.FINISHED, final_candidate=0)
    for test in range(3):
        Execution.objects.create(run=solved, candidate=0, test=test, status="ok", passed=True)
    make_run(problem=problem, status=Run.FINISHED, final_candidate=0)  # not run for real: no verdict
    make_run(problem=other, status=Run.FINISHED)

    def standings(user):
        client.force_login(user)
        page = client.get("/problems/").content.decode()
        titles = re.findall(r'<td><a href="/problems/\d+/">([^<]+)</a></td>', page)
        return dict(zip(titles, re.findall(r'data-standing="(\w*)"', page), strict=True))

    assert standings(alice) == {"Add one": "accepted", "Other": "tried", "Untouched": ""}
    assert standings(bob) == {"Add one": "", "Other": "", "Untouched": ""}  # alice's runs are hers
    client.logout()
    assert "data-standing" not in client.get("/problems/").content.decode()

    def filtered(user, status):  # the status filter, as a judge's list has it
        client.force_login(user) if user else client.logout()
        response = client.get(f"/problems/?status={status}")
        return sorted(p.title for p in response.context["problems"])

    assert filtered(alice, "solved") == ["Add one"]
    assert filtered(alice, "tried") == ["Other"]
    assert filtered(alice, "new") == ["Untouched"]
    assert filtered(bob, "solved") == [] and filtered(bob, "new") == ["Add one", "Other", "Untouched"]
    assert filtered(None, "solved") == ["Add one", "Other", "Untouched"]  # a visitor has no status
    client.force_login(alice)
    page = client.get("/problems/?status=tried&source=manual", headers={"HX-Request": "true"})
    assert page.context["kept"] == "source=manual&status=tried"


def test_it_answers_htmx_search_with_the_results_partial_only(client, problem):
    response = client.get("/problems/?q=add", headers={"HX-Request": "true"})
    assert [t.name for t in response.templates][0] == "problems/results.html"
    assert b"<html" not in response.content


def test_it_hides_private_problems_from_others_but_not_from_staff(client, problem, bob, carol):
    problem.is_public = False
    problem.save()
    client.force_login(bob)
    assert problem not in client.get("/problems/").context["problems"]
    assert client.get(f"/problems/{problem.pk}/").status_code == 404
    client.force_login(carol)
    assert client.get(f"/problems/{problem.pk}/").status_code == 200


def test_it_creates_a_problem_with_public_and_private_tests(client, alice):
    client.force_login(alice)
    response = client.post("/problems/new/", _form())
    assert response.status_code == 302
    problem = Problem.objects.get(title="Double")
    assert [(t.input, t.public) for t in problem.tests.all()] == [("2\n", True), ("5\n", False)]
    assert problem.owner == alice


def test_it_renders_the_statement_sanitised(client, alice):
    client.force_login(alice)
    client.post("/problems/new/", _form())
    problem = Problem.objects.get(title="Double")
    page = client.get(f"/problems/{problem.pk}/").content.decode()
    assert "<script>alert(1)</script>" not in page


def test_a_plain_text_statement_shows_as_written_and_markdown_as_markdown(client, alice):
    """A Code Jam statement is plain text: "5*2" is not emphasis, line breaks stay, tags are text."""
    text = "Since 5*2 ≤ 20, bet 5*2 = 10.\nSample input\n\n<b>x_i</b> and *y*"
    plain = Problem.objects.create(
        title="Royale", statement=text, owner=alice, source="codejam", extra={"statement_format": "text"}
    )
    written = Problem.objects.create(title="Mark", statement=text, owner=alice)
    page = client.get(f"/problems/{plain.pk}/").content.decode()
    assert "<p>Since 5*2 ≤ 20, bet 5*2 = 10.<br>Sample input</p><p>&lt;b&gt;x_i&lt;/b&gt; and *y*</p>" in page
    page = client.get(f"/problems/{written.pk}/").content.decode()
    assert "<em>y</em>" in page and "5<em>2 ≤ 20, bet 5</em>2" in page  # Markdown, as the editor's help says


def test_a_statement_wrapped_by_its_html_source_reads_as_paragraphs_while_samples_and_grids_keep_lines(
    client, alice
):
    """Code Jam 2008 statements keep the page source's line breaks, every prose line indented."""
    text = (
        "Problem\n\n  You are trying to compute the next number in a sequence\n"
        "  generated by a secret code.\n\nSample Input\n\n3\n1 2 3\n\n"
        "  Here is a schedule for 4 teams:\n\n   |AB\n  A|.1\n  B|0.\n\n"
        "     R   RRRR  is R\n     R is   R   R R"
    )
    plain = Problem.objects.create(
        title="Seq", statement=text, owner=alice, source="codejam", extra={"statement_format": "text"}
    )
    page = client.get(f"/problems/{plain.pk}/").content.decode()
    assert (
        "<p>You are trying to compute the next number in a sequence generated by a secret code.</p>" in page
    )
    assert "<p>3<br>1 2 3</p>" in page  # a sample, at the margin
    assert "<p>   |AB<br>  A|.1<br>  B|0.</p>" in page  # a grid: no line reads as prose
    assert "<p>     R   RRRR  is R<br>     R is   R   R R</p>" in page  # a figure, aligned by spaces


def test_a_problem_downloads_in_the_cli_format_with_private_tests_for_its_owner_and_staff_only(
    client, alice, bob, carol, problem
):
    """Download JSON: what `execsim solve FILE` and the import page read (docs/problem-format.md)."""
    from simulator.problem import Problem as CoreProblem

    def exported(user):
        client.force_login(user) if user else client.logout()
        response = client.get(f"/problems/{problem.pk}/problem.json")
        assert response["Content-Disposition"] == f'attachment; filename="problem-{problem.pk}.json"'
        return CoreProblem.from_dict(json.loads(response.content))

    mine = exported(alice)
    assert (mine.title, mine.kind, mine.entry_point) == ("Add one", "call", "add_one")
    assert [(t.input, t.public) for t in mine.tests] == [("1", True), ("5", True), ("-1", False)]
    assert exported(carol).tests == mine.tests  # staff, who may edit it
    for user in (bob, None):  # another user, a visitor: the public tests only
        assert [t.input for t in exported(user).tests] == ["1", "5"]
    problem.is_public = False
    problem.save()
    client.force_login(bob)
    assert client.get(f"/problems/{problem.pk}/problem.json").status_code == 404
    client.logout()
    assert client.get(f"/problems/{problem.pk}/problem.json").status_code == 404


def test_it_reports_core_validation_errors_by_field(client, alice):
    client.force_login(alice)
    response = client.post("/problems/new/", _form(kind="call", entry_point="not an identifier"))
    assert response.status_code == 200
    assert "entry_point" in response.context["form"].errors
    assert not Problem.objects.filter(title="Double").exists()


def test_it_reports_a_bad_test_on_that_test(client, alice):
    client.force_login(alice)
    response = client.post(
        "/problems/new/", _form(kind="call", entry_point="double", **{"tests-1-input": "1,, 2"})
    )
    assert response.status_code == 200
    assert "input" in response.context["formset"].forms[1].errors


def test_it_requires_a_public_test(client, alice):
    client.force_login(alice)
    response = client.post("/problems/new/", _form(**{"tests-0-public": ""}))
    assert response.status_code == 200
    assert "at least one test must be public" in response.content.decode()


def test_only_the_owner_or_staff_can_edit(client, problem, bob, carol):
    client.force_login(bob)
    assert client.get(f"/problems/{problem.pk}/edit/").status_code == 404
    client.force_login(carol)
    assert client.get(f"/problems/{problem.pk}/edit/").status_code == 200


def test_it_edits_a_problem(client, alice, problem):
    client.force_login(alice)
    tests = list(problem.tests.all())
    data = _form(
        title="Add one (edited)",
        kind="call",
        entry_point="add_one",
        **{"tests-TOTAL_FORMS": "3", "tests-INITIAL_FORMS": "3"},
    )
    for i, test in enumerate(tests):
        data.update(
            {f"tests-{i}-id": str(test.pk), f"tests-{i}-input": test.input, f"tests-{i}-output": test.output}
        )
        data[f"tests-{i}-public"] = "on" if test.public else ""
    data["tests-2-DELETE"] = "on"
    response = client.post(f"/problems/{problem.pk}/edit/", data)
    assert response.status_code == 302, response.context["form"].errors if response.context else ""
    problem.refresh_from_db()
    assert problem.title == "Add one (edited)"
    assert problem.tests.count() == 2


def test_the_problem_page_shows_statement_public_tests_runs_and_solve_form(client, alice, problem, make_run):
    run = make_run()
    client.force_login(alice)
    response = client.get(f"/problems/{problem.pk}/")
    page = response.content.decode()
    assert 'data-testid="solve-form"' in page
    # the private test is not shown
    assert [t.input for _, t, _ in response.context["public_tests"]] == ["1", "5"]
    assert run in response.context["runs"]


def test_repair_is_off_by_default_and_the_form_says_why_in_one_sentence(client, alice, problem):
    from simulator.pipeline.settings import RunSettings
    from webapp.runs.forms import SolveForm

    assert SolveForm().fields["turns"].initial == 0
    defaults = {name: SolveForm().fields[name].initial for name in ("k", "turns", "narrate", "temperature")}
    assert defaults == {name: getattr(RunSettings, name) for name in defaults}  # the pipeline's own
    client.force_login(alice)
    page = client.get(f"/problems/{problem.pk}/").content.decode()
    assert 'name="turns" value="0"' in page
    assert "does not yet raise the score on hidden tests (docs/results.md#repair)" in page


def test_every_solve_field_has_one_sentence_of_help_and_no_figures(alice) -> None:
    from webapp.runs.forms import SimulateForm, SolveForm

    for form in (SolveForm(), SimulateForm(user=alice)):
        for name, field in form.fields.items():
            help_text = str(field.help_text)
            assert help_text.count(". ") == 0 and help_text.endswith("."), (name, help_text)
            assert "section" not in help_text and "%" not in help_text and "interval" not in help_text


def test_narration_is_on_by_default_and_a_run_can_answer_at_once(client, alice, problem):
    from webapp.runs.models import Run

    client.force_login(alice)
    page = client.get(f"/problems/{problem.pk}/").content.decode()
    assert 'id="id_narrate" checked' in page  # the product's own experience: NLEX, checked claim by claim
    assert "which is quicker" in page
    for checked, narrate in (({}, False), ({"narrate": "on"}, True)):  # an unchecked box posts nothing
        form = {"k": 1, "turns": 0, "temperature": 0.8, **checked}
        client.post(f"/problems/{problem.pk}/solve/", form)
        run = Run.objects.filter(problem=problem).latest("created_at")
        assert run.settings["narrate"] is narrate and run.pipeline_settings.narrate is narrate


def test_judging_by_real_runs_is_an_option_with_its_measured_effect_and_a_run_keeps_it(
    client, alice, problem
):
    from webapp.runs.models import Run

    client.force_login(alice)
    page = client.get(f"/problems/{problem.pk}/").content.decode()
    assert 'name="oracle"' in page and 'name="oracle" checked' not in page  # simulation by default
    assert "Judge by running the public tests" in page
    for name in ("k", "oracle"):  # each with a link to the figure that justifies it
        assert "docs/results.md#selection" in page.split(f'name="{name}"', 1)[1].split("</p>", 1)[0]
    for checked, oracle in (({}, False), ({"oracle": "on"}, True)):
        form = {"k": 2, "turns": 0, "temperature": 0.8, **checked}
        client.post(f"/problems/{problem.pk}/solve/", form)
        run = Run.objects.filter(problem=problem).latest("created_at")
        assert run.settings["oracle"] is oracle and run.pipeline_settings.oracle is oracle


def test_a_stdin_problem_says_how_seldom_the_model_writes_them(client, alice, problem):
    client.force_login(alice)
    assert (
        'data-testid="stdin-note"' not in client.get(f"/problems/{problem.pk}/").content.decode()
    )  # a call one
    typed = Problem.objects.create(title="Sum", statement="s", owner=alice, kind="stdin")
    page = client.get(f"/problems/{typed.pk}/").content.decode()
    note = page.split('data-testid="stdin-note">', 1)[1].split("</p>", 1)[0]
    assert "seldom writes" in note and "Judge by running the public tests" in note
    assert "docs/results.md#stdin-problems" in note


def test_a_retired_setting_posted_by_an_old_page_is_ignored_not_stored(client, alice, problem):
    from webapp.runs.models import Run

    client.force_login(alice)
    form = {"k": 1, "turns": 0, "temperature": 0.8, "ties": "likelihood", "sims": 3, "repair": "model"}
    client.post(f"/problems/{problem.pk}/solve/", form)
    run = Run.objects.filter(problem=problem).latest("created_at")
    assert not {"ties", "sims", "repair", "fixes"} & set(run.settings)
    assert run.pipeline_settings.k == 1


def test_the_solve_form_runs_the_code_for_real_by_default(client, alice, problem):
    """A user who solves a problem sees the verdict and where each simulation went wrong without a
    second click; unticking the box leaves it to the Run for real button."""
    from webapp.runs.models import Run

    client.force_login(alice)
    page = client.get(f"/problems/{problem.pk}/").content.decode()
    assert 'name="real" aria-describedby="id_real_helptext" id="id_real" checked' in page
    for checked, real in (({"real": "on"}, True), ({}, False)):
        form = {"k": 1, "turns": 0, "temperature": 0.8, **checked}
        client.post(f"/problems/{problem.pk}/solve/", form)
        assert Run.objects.filter(problem=problem).latest("created_at").settings["real"] is real


def test_a_statement_of_blanks_is_asked_for_and_saves_nothing(client, alice):
    client.force_login(alice)
    response = client.post("/problems/new/", _form(statement=" \r\n  "))
    assert response.status_code == 200 and "This field is required." in response.content.decode()
    assert not Problem.objects.filter(title="Double").exists()


def test_past_runs_give_each_run_its_final_programs_verdict(client, alice, problem, make_run):
    """As a judge's submissions on a problem's page: the verdict and the count, as the run history."""
    from webapp.runs.models import Execution, Run

    judged = make_run(status=Run.FINISHED, final_candidate=0)
    make_run(status=Run.FINISHED, final_candidate=0, code="def f(x):\n    return x\n")  # the user's own
    for test, public, passed in ((0, True, True), (1, False, False)):
        fields = {"public": public, "status": "ok", "passed": passed, "output": "secret-out", "expected": "9"}
        Execution.objects.create(run=judged, candidate=0, test=test, **fields)
    client.force_login(alice)
    page = client.get(f"/problems/{problem.pk}/").content.decode()
    verdicts = re.findall(r'data-testid="run-verdict">(.*?)</td>', page, re.S)
    assert len(verdicts) == 2 and "—" in verdicts[0] and "Wrong answer 1/2" in verdicts[1]  # newest first
    assert "your program" in page and "secret-out" not in page  # the own program's row, not k candidates
