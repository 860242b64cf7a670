"""Long lists a page at a time (problems, run history): ``page_of`` and the ``_pages.html`` links."""

from __future__ import annotations

from typing import Any

from django.core.paginator import Page, Paginator
from django.http import HttpRequest

PAGE_SIZE = 50  # rows a page: an import brings hundreds of problems (CRUXEval dev 200, MBPP dev 162)


def page_of(request: HttpRequest, items: Any) -> Page:
    """The page of ``items`` (an ordered queryset) that ``?page=`` asks for; the last for one past it,
    the first for one that is not a number."""
    return Paginator(items, PAGE_SIZE).get_page(request.GET.get("page"))
