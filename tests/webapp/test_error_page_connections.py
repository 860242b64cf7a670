"""A logged-in visitor's 404 page after the database dropped its connections (issue 51, item 15).

Django's ASGI handler renders the page for an exception raised outside a view (an address no route
matches) on a thread of the event loop's default executor (``response_for_exception``, not thread
sensitive). That thread's database connection is not the request thread's, so the request's
``close_old_connections`` never checks it: after a PostgreSQL restart every later 404 of a logged-in
visitor (the navigation reads the session, the user, their groups) answered 503 "The database is not
reachable" until daphne restarted. Here the connections are broken as a restart breaks them
(``pg_terminate_backend``), through the real ASGI application and a real PostgreSQL.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import pytest
from channels.testing import HttpCommunicator
from django.db import connection

pytestmark = pytest.mark.django_db(transaction=True)


def _break_other_connections() -> int:
    """End every other session on the test database, as a PostgreSQL restart does; how many."""
    try:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            return int(cursor.fetchone()[0])
    finally:
        connection.close()


async def _get(application, path: str, cookie: str) -> tuple[int, str]:
    headers = [(b"host", b"127.0.0.1"), (b"cookie", cookie.encode())]
    response = await HttpCommunicator(application, "GET", path, headers=headers).get_response(timeout=20)
    return response["status"], response["body"].decode()


def test_a_logged_in_404_answers_404_again_once_the_database_is_back(client, alice, monkeypatch):
    # persistent connections, as production has them (DATABASE_URL: CONN_MAX_AGE 60, health checks on);
    # every thread's connection reads this one dict
    monkeypatch.setitem(connection.settings_dict, "CONN_MAX_AGE", 60)
    assert connection.settings_dict["CONN_HEALTH_CHECKS"]
    from webapp.asgi import application

    client.force_login(alice)
    cookie = f"sessionid={client.cookies['sessionid'].value}"

    async def scenario() -> list[tuple[int, str]]:
        # one thread in the loop's default executor, as a quiet daphne reuses its idle one
        asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(1))
        answers = [await _get(application, "/no-such-page/", cookie)]
        with ThreadPoolExecutor(1) as elsewhere:  # not the default executor's thread: its session goes
            assert await asyncio.get_running_loop().run_in_executor(elsewhere, _break_other_connections)
        for _ in range(3):  # the database is back: every later 404 is a 404
            answers.append(await _get(application, "/no-such-page/", cookie))
        return answers

    connection.close()  # this thread's session ends too; the database's teardown opens a fresh one
    answers = asyncio.run(scenario())
    assert [status for status, _ in answers] == [404, 404, 404, 404], [
        (status, body[body.find("<h1") : body.find("</h1>")]) for status, body in answers
    ]
    assert all('data-testid="nav-user">alice' in body for _, body in answers)
