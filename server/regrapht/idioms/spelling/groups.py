"""Spelling passes over library spellings of the block and its shared memory: cooperative
groups' handle of the thread block, and a `SharedMemory<T>` proxy for `extern __shared__`.

- `block_groups`: a handle `cg::thread_block b = cg::this_thread_block();` (any alias of the
  `cooperative_groups` namespace, `auto`, or the namespace used) whose every use is a barrier
  or a rank: `b.sync()`, `cg::sync(b)` (and the same of `cg::this_thread_block()` itself) ->
  `__syncthreads()`; `b.thread_rank()` -> the linear rank `(threadIdx.x + blockDim.x *
  (threadIdx.y + blockDim.y * threadIdx.z))`; `b.size()`, `b.num_threads()` -> `(blockDim.x *
  blockDim.y * blockDim.z)`. The declaration goes. A handle used any other way (passed on,
  partitioned into tiles) leaves the kernel as written.
- `shared_proxies`: `T *s = SharedMemory<T>();`, where `SharedMemory` is a struct (template) of
  the file whose every member is a conversion operator `{ extern __shared__ X a[]; return (T
  *)a; }`, written `extern __shared__ T s[];`: the same dynamically sized buffer, seen as T,
  when `s` is never re-pointed.
- `builtin_aliases`: locals that only rename a built-in index (`int tx = threadIdx.x;`) written
  as the built-in (cast to the local's signed type where it is signed); not a `plain_spelling`
  step (`builtins_unaliased`).
"""

from __future__ import annotations

from tree_sitter import Node

from regrapht.idioms.spelling.common import Edits, changes
from regrapht.idioms.syntax import KernelSyntax, call_args, named_statements, text, unparen, walk

NAMESPACE = "cooperative_groups"
SYNC = "__syncthreads()"
RANK = "(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z))"
SIZE = "(blockDim.x * blockDim.y * blockDim.z)"
MEMBERS = {"sync": SYNC, "thread_rank": RANK, "size": SIZE, "num_threads": SIZE}


def _prefixes(root: Node) -> set[str]:
    """How the file may qualify cooperative groups' names: `cooperative_groups::`, an alias's
    `cg::`, and "" after `using namespace cooperative_groups;`."""
    found = {NAMESPACE + "::"}
    for node in walk(root):
        if node.type == "namespace_alias_definition":
            names = [c for c in node.named_children if c.type in ("namespace_identifier", "identifier")]
            if len(names) == 2 and text(names[1]) == NAMESPACE:
                found.add(text(names[0]) + "::")
        elif node.type == "using_declaration" and " ".join(text(node).split()) == f"using namespace {NAMESPACE};":
            found.add("")
    return found


def _this_block(node: Node | None, prefixes: set[str]) -> bool:
    node = unparen(node)
    return node is not None and node.type == "call_expression" and not call_args(node) and \
        "".join(text(node.child_by_field_name("function")).split()) in {p + "this_thread_block" for p in prefixes}


def _handles(body: Node, prefixes: set[str]) -> dict[str, Node]:
    """name -> declaration of each block handle declared in the kernel."""
    types = {p + "thread_block" for p in prefixes} | {"auto"}
    handles: dict[str, Node] = {}
    for node in walk(body):
        if node.type != "declaration":
            continue
        declarators = node.children_by_field_name("declarator")
        kind = "".join(w for w in text(node.child_by_field_name("type")).split())
        if len(declarators) != 1 or declarators[0].type != "init_declarator" or kind not in types:
            continue
        target = declarators[0].child_by_field_name("declarator")
        if target is not None and target.type == "identifier" and \
                _this_block(declarators[0].child_by_field_name("value"), prefixes):
            handles[text(target)] = node
    return handles


def _is_handle(node: Node | None, handles: dict[str, Node], prefixes: set[str]) -> bool:
    node = unparen(node)
    return node is not None and ((node.type == "identifier" and text(node) in handles) or _this_block(node, prefixes))


def block_groups(syntax: KernelSyntax) -> Edits:
    prefixes = _prefixes(syntax.root)
    handles = _handles(syntax.body, prefixes)
    edits: Edits = []
    covered: list[tuple[int, int]] = []
    for node in walk(syntax.body):
        if node.type != "call_expression":
            continue
        function, args = node.child_by_field_name("function"), call_args(node)
        name = "".join(text(function).split())
        if name in {p + "sync" for p in prefixes} and len(args) == 1 and _is_handle(args[0], handles, prefixes):
            edits.append((node.start_byte, node.end_byte, SYNC))
        elif function is not None and function.type == "field_expression" and not args and \
                text(function.child_by_field_name("field")) in MEMBERS and \
                _is_handle(function.child_by_field_name("argument"), handles, prefixes):
            edits.append((node.start_byte, node.end_byte, MEMBERS[text(function.child_by_field_name("field"))]))
        else:
            continue
        covered.append((node.start_byte, node.end_byte))
    declarations = {handles[name].id for name in handles}
    for node in walk(syntax.body):
        if node.type == "identifier" and text(node) in handles and \
                not any(start <= node.start_byte < end for start, end in covered) and \
                not _inside(node, declarations):
            return []  # a handle used otherwise: leave the kernel as written
    if changes(syntax.body, set(handles)):
        return []
    edits += [_whole_lines(syntax.source, d) for d in handles.values()]
    return edits


def _whole_lines(source: bytes, node: Node) -> tuple[int, int, str]:
    """The edit deleting `node`, with its line when nothing else is on it."""
    start, end = node.start_byte, node.end_byte
    line_start = source.rfind(b"\n", 0, start) + 1
    line_end = source.find(b"\n", end)
    if source[line_start:start].isspace() and (line_end < 0 or not source[end:line_end].strip()):
        return line_start, (line_end + 1 if line_end >= 0 else end), ""
    return start, end, ""


def _inside(node: Node, ids: set[int]) -> bool:
    current: Node | None = node
    while current is not None:
        if current.id in ids:
            return True
        current = current.parent
    return False


def _proxies(root: Node) -> set[str]:
    """Names of the file's structs whose members are all conversion operators returning a cast
    of an `extern __shared__` array (the `SharedMemory<T>` idiom), specialisations included."""
    verdicts: dict[str, bool] = {}
    for node in walk(root):
        if node.type != "struct_specifier":
            continue
        name, members = node.child_by_field_name("name"), node.child_by_field_name("body")
        if name is None or members is None:
            continue
        key = text(name.child_by_field_name("name")) if name.type == "template_type" else text(name)
        operators = [m for m in members.named_children if m.type != "comment"]
        good = bool(operators) and all(_shared_operator(m) for m in operators)
        verdicts[key] = verdicts.get(key, True) and good
    return {name for name, good in verdicts.items() if good}


def _shared_operator(member: Node) -> bool:
    declarator = member.child_by_field_name("declarator") if member.type == "function_definition" else None
    if declarator is None or declarator.type != "operator_cast":
        return False
    statements = named_statements(member.child_by_field_name("body"))
    if len(statements) != 2 or statements[0].type != "declaration" or statements[1].type != "return_statement":
        return False
    declaration, returned = statements
    words = {text(c) for c in declaration.children}
    declarators = declaration.children_by_field_name("declarator")
    if not {"extern", "__shared__"} <= words or len(declarators) != 1 or declarators[0].type != "array_declarator" or \
            declarators[0].child_by_field_name("size") is not None:
        return False
    array = text(declarators[0].child_by_field_name("declarator"))
    value = unparen(returned.named_children[0]) if returned.named_children else None
    if value is not None and value.type == "cast_expression":
        value = unparen(value.child_by_field_name("value"))
    return value is not None and value.type == "identifier" and text(value) == array


def shared_proxies(syntax: KernelSyntax) -> Edits:
    proxies = _proxies(syntax.root)
    if not proxies:
        return []
    edits: Edits = []
    for statement in named_statements(syntax.body):
        declarators = statement.children_by_field_name("declarator") if statement.type == "declaration" else []
        if len(declarators) != 1 or declarators[0].type != "init_declarator":
            continue
        pointer, value = declarators[0].child_by_field_name("declarator"), unparen(
            declarators[0].child_by_field_name("value"))
        if pointer is None or pointer.type != "pointer_declarator" or value is None or \
                value.type != "call_expression" or call_args(value):
            continue
        name = pointer.child_by_field_name("declarator")
        function = value.child_by_field_name("function")
        if name is None or name.type != "identifier" or function is None or function.type != "template_function":
            continue
        arguments = function.child_by_field_name("arguments")
        element = " ".join(text(statement.child_by_field_name("type")).split())
        if text(function.child_by_field_name("name")) not in proxies or arguments is None or \
                [" ".join(text(a).split()) for a in arguments.named_children] != [element] or \
                any(c.type in ("type_qualifier", "storage_class_specifier") for c in statement.children) or \
                changes(syntax.body, {text(name)}):
            continue
        edits.append((statement.start_byte, statement.end_byte, f"extern __shared__ {element} {text(name)}[];"))
    return edits


BUILTIN_FIELDS = frozenset(f"{v}.{a}" for v in ("threadIdx", "blockIdx", "blockDim", "gridDim") for a in "xyz")
_SIGNED = frozenset({"int", "const int", "long", "const long", "long long", "const long long"})
_UNSIGNED = frozenset({"unsigned", "unsigned int", "const unsigned", "const unsigned int"})


def builtin_aliases(syntax: KernelSyntax) -> Edits:
    """A local that only renames a built-in index (`int tx = threadIdx.x, bx = blockIdx.x;`),
    never changed nor addressed, written as the built-in at each use: `threadIdx.x` for an
    unsigned local, `((int)threadIdx.x)` for a signed one (the same value and type); the
    declaration goes when all its declarators are such aliases."""
    edits: Edits = []
    statements = named_statements(syntax.body)
    for statement in statements:
        if statement.type != "declaration" or any(c.type == "storage_class_specifier" for c in statement.children):
            continue
        qualifiers = " ".join(text(c) for c in statement.children if c.type == "type_qualifier")
        kind = " ".join(f"{qualifiers} {text(statement.child_by_field_name('type'))}".split())
        if kind not in _SIGNED | _UNSIGNED:
            continue
        aliases: dict[str, str] = {}
        for declarator in statement.children_by_field_name("declarator"):
            target = declarator.child_by_field_name("declarator") if declarator.type == "init_declarator" else None
            value = unparen(declarator.child_by_field_name("value")) if target is not None else None
            if target is None or target.type != "identifier" or value is None or \
                    "".join(text(value).split()) not in BUILTIN_FIELDS:
                aliases = {}
                break
            builtin = "".join(text(value).split())
            aliases[text(target)] = builtin if kind in _UNSIGNED else f"((int){builtin})"
        if not aliases or changes(syntax.body, set(aliases)):
            continue
        uses = [n for n in walk(syntax.body) if n.type == "identifier" and text(n) in aliases and
                not _inside(n, {statement.id})]
        if any(_redeclared(syntax.body, name, statement) for name in aliases):
            continue
        edits.append(_whole_lines(syntax.source, statement))
        edits += [(n.start_byte, n.end_byte, aliases[text(n)]) for n in uses]
    return edits


def _redeclared(body: Node, name: str, declaration: Node) -> bool:
    """Whether another declaration in the kernel declares `name` (a shadowing inner scope)."""
    for node in walk(body):
        if node.type in ("init_declarator", "parameter_declaration") and node.id != declaration.id and \
                not _inside(node, {declaration.id}):
            target = node.child_by_field_name("declarator")
            if target is not None and text(target) == name:
                return True
        elif node.type == "declaration" and node.id != declaration.id and \
                any(d.type == "identifier" and text(d) == name for d in node.children_by_field_name("declarator")):
            return True
    return False
