"""Objects and references in traces (``Step.refs``, ``Step.heap``): aliasing keeps one number, copies
get another, instances show their attributes, views are capped, hostile objects run no code, and the
``repr``/``type`` values the claim checker reads are unchanged."""

from __future__ import annotations

import json

import pytest

from simulator.execution import Program, SandboxError, run
from simulator.execution.trace import Step, Trace
from simulator.execution.tracer import HEAP_DEPTH, HEAP_ITEMS, trace_in_process


def _views(trace: Trace) -> dict[int, list[dict]]:
    """Every view recorded per object number, in step order."""
    views: dict[int, list[dict]] = {}
    for step in trace.steps:
        for view in step.heap:
            views.setdefault(view["id"], []).append(view)
    return views


def _step_at(trace: Trace, line: int) -> Step:
    """The first line step where ``line`` is about to run."""
    return next(s for s in trace.steps if s.event == "line" and s.line == line)


def test_an_alias_shares_the_number_and_a_copy_does_not():
    code = "def f():\n    a = [1]\n    b = a\n    c = a[:]\n    b.append(2)\n    return a\n"
    trace = trace_in_process(code, "f()").trace
    after_b, after_c, after_append = _step_at(trace, 4), _step_at(trace, 5), _step_at(trace, 6)
    assert after_b.refs["b"] == _step_at(trace, 3).refs["a"]
    assert after_c.refs["c"] != after_b.refs["b"]
    assert after_c.changed["c"].repr == "[1]"  # the same repr, another object
    number = after_b.refs["b"]
    view = next(v for v in after_append.heap if v["id"] == number)
    assert view == {"id": number, "kind": "list", "type": "list", "items": [
        {"repr": "1", "type": "int"}, {"repr": "2", "type": "int"}]}  # fmt: skip
    assert trace.steps[-1].refs["return"] == number


def test_rebinding_to_an_equal_new_object_is_a_new_reference_without_a_change():
    code = "def f():\n    a = [1]\n    a = [1]\n    return 0\n"
    trace = trace_in_process(code, "f()").trace
    first, second = _step_at(trace, 3), _step_at(trace, 4)
    assert "a" not in second.changed  # the values the narrator and the checker read are as before
    assert second.refs["a"] != first.refs["a"]


def test_instances_show_their_attributes_and_an_attribute_change_is_recorded():
    code = (
        "class Point:\n    def __init__(self, x):\n        self.x = x\n\n"
        "def f():\n    p = Point(1)\n    q = p\n    p.x = 5\n    return q\n"
    )
    trace = trace_in_process(code, "f()").trace
    step = _step_at(trace, 8)
    assert step.changed["q"].repr == "<__main__.Point object at 0x...>" and step.changed["q"].type == "Point"
    number = step.refs["q"]
    views = _views(trace)[number]
    assert views[0]["kind"] == "object" and views[0]["type"] == "Point"
    assert views[-1]["items"] == [["x", {"repr": "5", "type": "int"}]]
    assert [v["items"] for v in views].count([["x", {"repr": "1", "type": "int"}]]) == 1  # no repeats


def test_slotted_instances_show_the_slots_that_are_set_then_their_dict():
    code = (
        "class Base:\n    __slots__ = ('x', 'y')\n\n"
        "class Open(Base):\n    pass\n\n"
        "def f():\n    o = Open()\n    o.x = 1\n    o.z = [2]\n    return o\n"
    )
    trace = trace_in_process(code, "f()").trace
    view = [v for s in trace.steps for v in s.heap if v["type"] == "Open"][-1]
    assert [name for name, _ in view["items"]] == ["x", "z"]  # y was never set
    assert view["items"][0][1] == {"repr": "1", "type": "int"}


def test_nested_containers_refer_to_each_other_and_dicts_and_tuples_are_drawn():
    code = "def f():\n    inner = [1]\n    outer = (inner, {'k': inner}, {3})\n    return 0\n"
    trace = trace_in_process(code, "f()").trace
    step = _step_at(trace, 4)
    inner, outer = _step_at(trace, 3).refs["inner"], step.refs["outer"]
    views = {v["id"]: v for v in step.heap}
    assert views[outer]["kind"] == "tuple" and views[outer]["items"][0] == {"ref": inner}
    mapping = views[views[outer]["items"][1]["ref"]]
    assert mapping["kind"] == "dict" and mapping["items"] == [
        [{"repr": "'k'", "type": "str"}, {"ref": inner}]
    ]
    assert views[views[outer]["items"][2]["ref"]]["kind"] == "set"


def test_views_are_capped_in_size_and_depth_and_cycles_end():
    code = (
        "def f():\n    big = list(range(200))\n    deep = [[[[[1]]]]]\n"
        "    loop = []\n    loop.append(loop)\n    return 0\n"
    )
    trace = trace_in_process(code, "f()").trace
    big = _views(trace)[_step_at(trace, 3).refs["big"]][0]
    assert len(big["items"]) == HEAP_ITEMS and big["more"] == 200 - HEAP_ITEMS
    viewed = {v["id"] for v in _step_at(trace, 4).heap}
    assert len(viewed) == HEAP_DEPTH  # the levels below are references without a view
    loop = _views(trace)[_step_at(trace, 6).refs["loop"]][-1]
    assert loop["items"] == [{"ref": loop["id"]}]


def test_hostile_objects_run_no_code_and_the_trace_goes_on():
    code = (
        "class Sneaky(list):\n    def __iter__(self):\n        raise RuntimeError('no')\n\n"
        "class Lazy:\n    def __getattr__(self, name):\n        raise RuntimeError(name)\n\n"
        "class Slots:\n    __slots__ = ('a',)\n\n"
        "class Shadow(Slots):\n    @property\n    def a(self):\n        raise RuntimeError('a')\n\n"
        "def f():\n    s = Sneaky([1, 2])\n    z = Lazy()\n    t = Shadow()\n    Slots.a.__set__(t, 7)\n"
        "    return len(s)\n"
    )
    run = trace_in_process(code, "f()")
    assert run.value is not None and run.value.repr == "2" and run.trace.error == ""
    views = {v["type"]: v for s in run.trace.steps for v in s.heap}
    assert views["Sneaky"]["kind"] == "list" and len(views["Sneaky"]["items"]) == 2
    assert views["Lazy"]["items"] == []
    assert views["Shadow"]["items"] == [["a", {"repr": "7", "type": "int"}]]  # the slot, not the property
    assert any("t" in s.refs for s in run.trace.steps)


def test_refs_and_heap_round_trip_and_are_left_out_when_empty():
    code = "def f(n):\n    xs = [n]\n    return n\n"
    trace = trace_in_process(code, "f(3)").trace
    data = json.loads(json.dumps(trace.to_dict()))
    assert Trace.from_dict(data) == trace
    assert "refs" not in data["steps"][0] and "heap" not in data["steps"][0]  # f(3): nothing to draw
    assert "refs" in data["steps"][2] and data["steps"][2]["heap"][0]["kind"] == "list"
    old = {k: v for k, v in data["steps"][2].items() if k not in ("refs", "heap")}
    assert Step.from_dict(old).refs == {} and Step.from_dict(old).heap == []  # older records load


def test_objects_travel_through_the_sandbox():
    """The sandboxed child streams the steps (StepStream): refs and heap arrive as recorded."""
    code = "def f():\n    a = [1]\n    b = a\n    return b\n"
    try:
        result = run(Program(code=code, call="f()"), trace=True)
    except SandboxError as exc:
        pytest.skip(f"the sandbox is not available: {exc}")
    assert result.status == "ok" and result.trace is not None
    local = trace_in_process(code, "f()").trace
    assert [(s.refs, s.heap) for s in result.trace.steps] == [(s.refs, s.heap) for s in local.steps]
    assert result.trace.steps[-1].refs["return"] == result.trace.steps[2].refs["a"]
