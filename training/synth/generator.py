"""A model-free program generator: programs composed from Python's built-in types and methods.

Given a ``Constraint`` and a seeded ``random.Random`` it writes a CRUXEval-shaped program: an entry
function ``f`` (plus a helper at level 6) whose body chains built-in calls (at least two levels deep),
optional control structures nested to the constraint's depth, and accumulators updated inside them.
Variables are typed while generating, so almost every program runs; the ones that do not (an input
mutated to another type, say) are removed later by the execution filter, as for model-written ones.

Deterministic: the same constraint and seed give the same source, byte for byte.
"""

from __future__ import annotations

import ast
import random
from dataclasses import dataclass, field

from simulator.source import parse_python
from training.synth.constraints import Constraint

# Value types the generator tracks. Sets hold ints only (a set of strings iterates in hash order).
TYPES = ("str", "int", "float", "bool", "list_int", "list_str", "dict_str_int", "set_int", "tuple_int")


@dataclass(frozen=True)
class Template:
    """An expression of type ``result`` built from arguments of types ``args``; ``{0}``, ``{1}`` are the
    arguments, ``{ch}``/``{ch2}`` random characters (quoted), ``{n}`` a small int, ``{sep}`` a separator."""

    result: str
    args: tuple[str, ...]
    text: str
    method: str  # "type.method" or "builtin.name" or "" for plain operators


T = Template
TEMPLATES: tuple[Template, ...] = (
    # str -> str
    T("str", ("str",), "{0}.upper()", "str.upper"),
    T("str", ("str",), "{0}.lower()", "str.lower"),
    T("str", ("str",), "{0}.swapcase()", "str.swapcase"),
    T("str", ("str",), "{0}.title()", "str.title"),
    T("str", ("str",), "{0}.capitalize()", "str.capitalize"),
    T("str", ("str",), "{0}.strip({ch})", "str.strip"),
    T("str", ("str",), "{0}.replace({ch}, {ch2})", "str.replace"),
    T("str", ("str",), "{0}.center({n2}, {ch})", "str.center"),
    T("str", ("str",), "{0}.zfill({n2})", "str.zfill"),
    T("str", ("str",), "{0}[::-1]", ""),
    T("str", ("list_str",), "{sep}.join({0})", "str.join"),
    T("str", ("int",), "str({0})", ""),
    T("str", ("str", "int"), "{0}[:{1}]", ""),
    T("list_str", ("str",), "{0}.split({ch})", "str.split"),
    T("list_str", ("str",), "list({0})", ""),
    T("list_str", ("str",), "sorted({0})", "builtin.sorted"),
    T("list_str", ("list_str",), "sorted({0})", "builtin.sorted"),
    T("list_str", ("list_str",), "list(reversed({0}))", "builtin.reversed"),
    T("list_str", ("list_str",), "[w.upper() for w in {0}]", "str.upper"),
    T("list_str", ("list_str",), "list(filter(lambda w: len(w) > 1, {0}))", "builtin.filter"),
    T("list_str", ("list_int",), "[str(v) for v in {0}]", ""),
    T("int", ("str",), "{0}.count({ch})", "str.count"),
    T("int", ("str",), "{0}.find({ch})", "str.find"),
    T("int", ("str",), "len({0})", "builtin.len"),
    T("bool", ("str",), "{0}.isalpha()", "str.isalpha"),
    T("bool", ("str",), "{0}.startswith({ch})", "str.startswith"),
    T("bool", ("str",), "{0}.endswith({ch})", "str.endswith"),
    # list[int]
    T("list_int", ("list_int",), "sorted({0})", "builtin.sorted"),
    T("list_int", ("list_int",), "sorted({0}, reverse=True)", "builtin.sorted"),
    T("list_int", ("list_int",), "{0}[::-1]", ""),
    T("list_int", ("list_int",), "list(reversed({0}))", "builtin.reversed"),
    T("list_int", ("list_int",), "list(filter(lambda v: v % {n} == 0, {0}))", "builtin.filter"),
    T("list_int", ("list_int",), "[v * {n} for v in {0}]", ""),
    T("list_int", ("list_int",), "[i * v for i, v in enumerate({0})]", "builtin.enumerate"),
    T("list_int", ("list_int", "list_int"), "[x + y for x, y in zip({0}, {1})]", "builtin.zip"),
    T("list_int", ("list_int", "list_int"), "{0} + {1}", ""),
    T("list_int", ("int",), "list(range({0} % 12))", "builtin.range"),
    T("list_int", ("set_int",), "sorted({0})", "builtin.sorted"),
    T("list_int", ("tuple_int",), "list({0})", ""),
    T("list_int", ("dict_str_int",), "list({0}.values())", "dict.values"),
    T("list_int", ("str",), "[ord(c) % {n2} for c in {0}]", ""),
    T("int", ("list_int",), "sum({0})", "builtin.sum"),
    T("int", ("list_int",), "len({0})", "builtin.len"),
    T("int", ("list_int",), "max({0}, default=0)", "builtin.max"),
    T("int", ("list_int",), "min({0}, default=0)", "builtin.min"),
    T("int", ("list_int",), "{0}.count({n})", "list.count"),
    # set[int]
    T("set_int", ("list_int",), "set({0})", ""),
    T("set_int", ("set_int", "set_int"), "{0}.union({1})", "set.union"),
    T("set_int", ("set_int", "set_int"), "{0}.intersection({1})", "set.intersection"),
    T("set_int", ("set_int", "set_int"), "{0}.difference({1})", "set.difference"),
    T("set_int", ("set_int", "set_int"), "{0}.symmetric_difference({1})", "set.symmetric_difference"),
    T("int", ("set_int",), "len({0})", "builtin.len"),
    # tuple[int]
    T("tuple_int", ("list_int",), "tuple({0})", ""),
    T("tuple_int", ("tuple_int",), "{0}[::-1]", ""),
    T("int", ("tuple_int",), "{0}.count({n})", "tuple.count"),
    T("int", ("tuple_int",), "{0}.index(max({0})) if {0} else -1", "tuple.index"),
    # dict[str, int]
    T("dict_str_int", ("list_str",), "{{k: len(k) for k in {0}}}", ""),
    T("dict_str_int", ("list_str", "list_int"), "dict(zip({0}, {1}))", "builtin.zip"),
    T("dict_str_int", ("str",), "{{c: {0}.count(c) for c in {0}}}", "str.count"),
    T("list_str", ("dict_str_int",), "list({0}.keys())", "dict.keys"),
    T("list_str", ("dict_str_int",), "sorted({0}, key={0}.get)", "dict.get"),
    T("list_str", ("dict_str_int",), "[k for k, v in {0}.items() if v > {n}]", "dict.items"),
    T("int", ("dict_str_int", "str"), "{0}.get({1}, {n})", "dict.get"),
    T("int", ("dict_str_int",), "sum({0}.values())", "dict.values"),
    # numbers
    T("int", ("int", "int"), "{0} * {1}", ""),
    T("int", ("int",), "{0} // {n}", ""),
    T("int", ("int",), "{0} % {n}", ""),
    T("int", ("int", "int"), "abs({0} - {1})", ""),
    T("int", ("int", "int"), "max({0}, {1})", "builtin.max"),
    T("int", ("int",), "{0}.bit_length()", "int.bit_length"),
    T("int", ("float",), "int({0})", ""),
    T("float", ("int",), "{0} / {n}", ""),
    T("float", ("float",), "round({0}, 2)", ""),
    T("float", ("list_int",), "sum({0}) / max(len({0}), 1)", "builtin.sum"),
    T("bool", ("float",), "{0}.is_integer()", "float.is_integer"),
    T("str", ("float",), "str(round({0}, 1))", ""),
)

# Statements that mutate an accumulator in place (the list/dict/set methods that return None).
MUTATORS: dict[str, tuple[tuple[str, str, str], ...]] = {
    # accumulator type -> (element type needed, statement, method)
    "list_int": (
        ("int", "{acc}.append({0})", "list.append"),
        ("int", "{acc}.insert(0, {0})", "list.insert"),
        ("list_int", "{acc}.extend({0})", "list.extend"),
    ),
    "list_str": (
        ("str", "{acc}.append({0})", "list.append"),
        ("str", "{acc}.insert(0, {0})", "list.insert"),
        ("list_str", "{acc}.extend({0})", "list.extend"),
    ),
    "int": (("int", "{acc} += {0}", ""), ("int", "{acc} = max({acc}, {0})", "builtin.max")),
    "str": (("str", "{acc} += {0}", ""), ("str", "{acc} = {0} + {acc}", "")),
    "dict_str_int": (
        ("str", "{acc}[{0}] = {acc}.get({0}, 0) + 1", "dict.get"),
        ("str", "{acc}.setdefault({0}, len({acc}))", "dict.setdefault"),
        ("str", "{acc}.update({{{0}: len({acc})}})", "dict.update"),
    ),
    "set_int": (("int", "{acc}.add({0})", "set.add"),),
}
ACC_INIT = {
    "list_int": "[]",
    "list_str": "[]",
    "int": "0",
    "str": "''",
    "dict_str_int": "{}",
    "set_int": "set()",
}
# Statements on a whole value that change it in place (no return value), used after loops.
FINISHERS = {
    "list_int": (("{acc}.sort()", "list.sort"), ("{acc}.reverse()", "list.reverse")),
    "list_str": (("{acc}.sort()", "list.sort"), ("{acc}.reverse()", "list.reverse")),
}
ELEMENT = {
    "str": "str",
    "list_int": "int",
    "list_str": "str",
    "set_int": "int",
    "tuple_int": "int",
    "dict_str_int": "str",
}

PARAM_NAMES = {
    "str": ("s", "text", "word", "name", "line"),
    "int": ("n", "k", "count", "limit", "x"),
    "float": ("value", "ratio", "y"),
    "list_int": ("nums", "values", "arr", "data", "xs"),
    "list_str": ("words", "items", "names", "parts"),
    "dict_str_int": ("d", "counts", "table", "mapping"),
    "set_int": ("seen", "pool", "group"),
    "tuple_int": ("t", "pair", "coords", "row"),
}
LOCAL_NAMES = ("r", "tmp", "out", "res", "acc", "total", "buf", "cur", "step", "part", "best", "mid")
HELPER_NAMES = ("helper", "process", "transform", "collect", "build")
# The parameter type that exercises a focal method's receiver.
RECEIVER = {"str": "str", "list": "list_int", "dict": "dict_str_int", "set": "set_int", "tuple": "tuple_int"}
RECEIVER.update({"int": "int", "float": "float"})


@dataclass
class SynthProgram:
    """Generated source, its entry point and typed parameters (the input generator needs the types)."""

    code: str
    entry: str
    params: list[tuple[str, str]]
    methods: set[str] = field(default_factory=set)


class _Body:
    """Lines of one function under construction, with typed variables in scope."""

    def __init__(self, rng: random.Random, scope: dict[str, str]) -> None:
        self.rng = rng
        self.scope = dict(scope)
        self.lines: list[str] = []
        self.methods: set[str] = set()
        self.used_names = set(scope)

    def fresh(self, pool: tuple[str, ...] = LOCAL_NAMES) -> str:
        options = [n for n in pool if n not in self.used_names]
        name = self.rng.choice(options) if options else f"v{len(self.used_names)}"
        self.used_names.add(name)
        return name

    def fill(self, template: Template, args: list[str]) -> str:
        rng = self.rng
        chars = "aeiouxyz"
        if template.method:
            self.methods.add(template.method)
        return template.text.format(
            *[_atom(a) for a in args],
            ch=repr(rng.choice(chars)),
            ch2=repr(rng.choice("-_#*")),
            n=rng.randint(2, 4),
            n2=rng.randint(6, 12),
            sep=repr(rng.choice(["", "-", " ", ","])),
        )

    def vars_of(self, type_: str) -> list[str]:
        return sorted(n for n, t in self.scope.items() if t == type_)

    def expr(self, type_: str, depth: int, prefer: str | None = None) -> str:
        """An expression of ``type_`` with at least ``depth`` nested template applications."""
        if depth <= 0:
            names = self.vars_of(type_)
            if names:
                return self.rng.choice(names)
            depth = 1  # no variable of this type: build one from what is in scope
        candidates = [t for t in TEMPLATES if t.result == type_ and self._buildable(t.args, depth - 1)]
        if prefer:
            preferred = [t for t in candidates if t.method == prefer]
            candidates = preferred or candidates
        if not candidates:
            return _literal(type_, self.rng)
        template = self.rng.choice(candidates)
        args = [self.expr(template.args[0], depth - 1)]
        args += [self.expr(a, 0) for a in template.args[1:]]
        return self.fill(template, args)

    def _buildable(self, args: tuple[str, ...], depth: int) -> bool:
        # The first argument may be built from scope; the rest need a variable (keeps lines short).
        return all(self.vars_of(a) for a in args[1:]) and (depth > 0 or bool(self.vars_of(args[0])))

    def assign(self, type_: str, depth: int, indent: int, prefer: str | None = None) -> str:
        value = self.expr(type_, depth, prefer)
        name = self.fresh()
        self.lines.append("    " * indent + f"{name} = {value}")
        self.scope[name] = type_
        return name


def _atom(source: str) -> str:
    """``source`` wrapped in parentheses when it is an operator expression (``k % 4`` -> ``(k % 4)``)."""
    node = parse_python(source, mode="eval").body
    if isinstance(node, ast.BinOp | ast.BoolOp | ast.Compare | ast.IfExp | ast.UnaryOp | ast.Lambda):
        return f"({source})"
    return source


def _literal(type_: str, rng: random.Random) -> str:
    return {
        "str": repr(rng.choice(["abc", "hello", "xyz"])),
        "int": str(rng.randint(2, 9)),
        "float": str(rng.choice([1.5, 2.25, 3.0])),
        "bool": "True",
        "list_int": repr([rng.randint(0, 9) for _ in range(4)]),
        "list_str": repr(["ab", "cd", "e"]),
        "dict_str_int": repr({"a": 1, "b": 2}),
        "set_int": "{1, 2, 3}",
        "tuple_int": repr(tuple(rng.randint(0, 9) for _ in range(3))),
    }[type_]


def generate(constraint: Constraint, rng: random.Random) -> SynthProgram:
    """One program that meets ``constraint`` (deterministic for a seeded ``rng``)."""
    receiver = RECEIVER.get(constraint.type) or rng.choice(["str", "list_int"])
    params = _params(receiver, rng)
    focal = f"{constraint.type}.{constraint.method}"
    if constraint.helper:
        helper_name = rng.choice(HELPER_NAMES)
        helper_params = [(f"{name}_", type_) for name, type_ in params]
        helper = _Body(rng, dict(helper_params))
        result = _control_section(helper, constraint, focal)
        helper.lines.append(f"    return {result}")
        entry = _Body(rng, dict(params))
        entry.used_names |= {helper_name}
        call_args = [entry.expr(t, 1) if i == 0 else n for i, (n, t) in enumerate(params)]
        tmp = entry.fresh()
        entry.lines.append(f"    {tmp} = {helper_name}({', '.join(call_args)})")
        entry.scope[tmp] = helper.scope[result]
        entry.lines.append(f"    return {entry.expr(helper.scope[result], 1)}")
        code = (
            _function(helper_name, helper_params, helper.lines) + "\n\n" + _function("f", params, entry.lines)
        )
        return SynthProgram(code, "f", params, helper.methods | entry.methods)
    body = _Body(rng, dict(params))
    if constraint.control:
        result = _control_section(body, constraint, focal)
        body.lines.append(f"    return {result}")
    else:
        _straight_section(body, constraint, focal, receiver)
    return SynthProgram(_function("f", params, body.lines), "f", params, body.methods)


class GenerationError(RuntimeError):
    """No attempt met the constraint (rare; the caller draws another constraint)."""


def generate_checked(constraint: Constraint, rng: random.Random, attempts: int = 30) -> SynthProgram:
    """Like ``generate``, retried until the program's AST has every construct the constraint claims."""
    from training.synth.analysis import features, unmet

    problems: list[str] = []
    for _ in range(attempts):
        program = generate(constraint, rng)
        problems = unmet(constraint, features(program.code, program.entry))
        if not problems:
            return program
    raise GenerationError(f"{constraint}: {'; '.join(problems)}")


def _params(receiver: str, rng: random.Random) -> list[tuple[str, str]]:
    types = [receiver]
    if rng.random() < 0.6:
        types.append(rng.choice([t for t in PARAM_NAMES if t != receiver and t != "float"]))
    used: set[str] = set()
    params = []
    for type_ in types:
        name = rng.choice([n for n in PARAM_NAMES[type_] if n not in used])
        used.add(name)
        params.append((name, type_))
    return params


def _function(name: str, params: list[tuple[str, str]], lines: list[str]) -> str:
    return f"def {name}({', '.join(p for p, _ in params)}):\n" + "\n".join(lines)


def _focal_statement(body: _Body, focal: str, indent: int) -> str:
    """Use the focal method once, as an expression template or as an in-place mutator."""
    template = [t for t in TEMPLATES if t.method == focal and body._buildable(t.args, 1)]
    if template:
        chosen = body.rng.choice(template)
        return body.assign(chosen.result, 2, indent, prefer=focal)
    for acc_type, mutators in MUTATORS.items():
        for elem, stmt, method in mutators:
            if method == focal:
                acc = body.fresh()
                body.lines.append("    " * indent + f"{acc} = {ACC_INIT[acc_type]}")
                body.scope[acc] = acc_type
                value = body.expr(elem, 2)
                body.methods.add(method)
                body.lines.append("    " * indent + stmt.format(value, acc=acc))
                return acc
    for acc_type, finishers in FINISHERS.items():
        for stmt, method in finishers:
            if method == focal:
                acc = body.assign(acc_type, 2, indent)
                body.methods.add(method)
                body.lines.append("    " * indent + stmt.format(acc=acc))
                return acc
    if focal == "list.pop":
        source = body.assign("list_int", 2, indent)
        body.methods.add(focal)
        popped = body.fresh()
        body.lines.append("    " * indent + f"{popped} = {source}.pop() if {source} else 0")
        body.scope[popped] = "int"
        return popped
    elif focal == "list.copy":
        source = body.assign("list_int", 2, indent)
        body.methods.add(focal)
        copy = body.fresh()
        body.lines.append("    " * indent + f"{copy} = {source}.copy()")
        body.scope[copy] = "list_int"
        return copy
    # no template for this focal method: fall back to any nested chain
    return body.assign(body.rng.choice(["str", "list_int"]), 2, indent)


def _straight_section(body: _Body, constraint: Constraint, focal: str, receiver: str) -> None:
    last = _focal_statement(body, focal, 1)
    for _ in range(constraint.extra_methods):
        type_ = body.rng.choice(["str", "list_int", "int", "list_str", "dict_str_int", "set_int"])
        last = body.assign(type_, 2, 1)
    last_type = body.scope[last]
    body.lines.append(f"    return {body.expr(last_type, 1) if body.rng.random() < 0.7 else last}")


def _control_section(body: _Body, constraint: Constraint, focal: str) -> str:
    """Setup, nested control structures updating accumulators, and the name of the value to return."""
    _focal_statement(body, focal, 1)
    for _ in range(constraint.extra_methods - 1):
        body.assign(body.rng.choice(["str", "list_int", "list_str"]), 2, 1)
    acc_type = body.rng.choice(sorted(MUTATORS))
    acc = body.fresh(("acc", "out", "total", "result", "seen", "buf"))
    body.lines.append(f"    {acc} = {ACC_INIT[acc_type]}")
    body.scope[acc] = acc_type
    _nest(body, list(constraint.control), indent=1, acc=acc, acc_type=acc_type, loop_vars={})
    if acc_type in FINISHERS and body.rng.random() < 0.4:
        stmt, method = body.rng.choice(FINISHERS[acc_type])
        body.methods.add(method)
        body.lines.append("    " + stmt.format(acc=acc))
    return acc


def _nest(body: _Body, control: list[str], indent: int, acc: str, acc_type: str, loop_vars: dict) -> None:
    pad = "    " * indent
    rng = body.rng
    if not control:
        _update(body, indent, acc, acc_type)
        return
    kind, rest = control[0], control[1:]
    if kind == "for":
        iterables = [n for n, t in body.scope.items() if t in ELEMENT and n != acc]
        source = rng.choice(sorted(iterables)) if iterables else body.assign("list_int", 1, indent)
        elem_type = ELEMENT[body.scope[source]]
        var = body.fresh(("c", "v", "item", "e", "w", "ch"))
        if rng.random() < 0.35:
            index = body.fresh(("i", "j", "idx", "pos"))
            body.methods.add("builtin.enumerate")
            body.lines.append(f"{pad}for {index}, {var} in enumerate({source}):")
            body.scope[index] = "int"
        else:
            body.lines.append(f"{pad}for {var} in {source}:")
        body.scope[var] = elem_type
        if rng.random() < 0.5:
            _update(body, indent + 1, acc, acc_type)
        _nest(body, rest, indent + 1, acc, acc_type, loop_vars)
    elif kind == "while":
        counter = body.fresh(("i", "j", "k", "steps", "idx"))
        body.lines.append(f"{pad}{counter} = 0")
        body.scope[counter] = "int"
        sized = [n for n, t in body.scope.items() if t in ELEMENT and n != acc]
        bound = (
            f"min(len({rng.choice(sorted(sized))}), {rng.randint(3, 6)})" if sized else str(rng.randint(3, 6))
        )
        body.lines.append(f"{pad}while {counter} < {bound}:")
        _nest(body, rest, indent + 1, acc, acc_type, loop_vars)
        body.lines.append(f"{pad}    {counter} += 1")
    else:  # if / if-elif
        body.lines.append(f"{pad}if {_condition(body)}:")
        _nest(body, rest, indent + 1, acc, acc_type, loop_vars)
        if kind == "if-elif":
            body.lines.append(f"{pad}elif {_condition(body)}:")
            _update(body, indent + 1, acc, acc_type)
            body.lines.append(f"{pad}else:")
            _update(body, indent + 1, acc, acc_type)


def _condition(body: _Body) -> str:
    rng = body.rng
    options = []
    for name, type_ in sorted(body.scope.items()):
        if type_ == "int":
            options += [f"{name} % {rng.randint(2, 3)} == 0", f"{name} > {rng.randint(3, 12)}"]
        elif type_ == "str":
            options += [f"{name}.isalpha()", f"{name} in {rng.choice(['aeiou', 'xyz', 'abc'])!r}"]
            body.methods.add("str.isalpha")
        elif type_ in ("list_int", "list_str", "dict_str_int", "set_int"):
            options.append(f"len({name}) < {rng.randint(3, 8)}")
    return rng.choice(options) if options else "True"


def _update(body: _Body, indent: int, acc: str, acc_type: str) -> None:
    elem, stmt, method = body.rng.choice(MUTATORS[acc_type])
    value = body.expr(elem, 1)
    if method:
        body.methods.add(method)
    body.lines.append("    " * indent + stmt.format(value, acc=acc))
