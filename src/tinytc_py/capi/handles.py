"""The handle table: C handles ↔ Python objects, reference counts and ownership (docs/design.md
§C1.3, §C1.5, §C1.6).

A handle is an opaque address the library makes up (a counter, never reused, never
dereferenced by anyone); the table maps it to an `Entry` holding the Python object, its kind
and, for shared objects, the reference count and the handles it retains. Looking a handle up
through the table (instead of casting pointers back to objects) makes a NULL, stale or wrong-kind
handle an `invalid_arguments` status instead of a crash.

Lifetime classes:
* shared (compiler_context, prog, binary, spv_mod, core_info, recipe, recipe_handler): created
  with refcount 1; retain/release; at zero the entry goes away, its internal references (prog →
  context, binary → context, ...) are released, and so are the handles of everything it owns.
  A program that only its handle holds (parsed or created through the C API, not a recipe's)
  is dismantled then (ir/dismantle.py): one web of cycles otherwise, left to the collector.
* unique (inst, func): the caller owns a new one until a region / program takes it over; the
  handle stays valid (borrowed) afterwards and goes away with its owner.
* managed (type, attr: owned by their context; value, region: owned by an instruction or
  function): handles are made on first use and dropped when the owner goes.

The table keeps a strong reference to each object, so the object lives as long as its handle.
All calls come in holding the GIL (cffi's embedding does that), so the table needs no lock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import UNKNOWN_LOCATION, Location, Position
from ..ir.dismantle import dismantle_prog
from .errors import invalid

SHARED = frozenset(
    ("compiler_context", "prog", "binary", "spv_mod", "core_info", "recipe", "recipe_handler")
)
_ADDRESS_STEP = 0x10
# The kinds of handle that die with the program they belong to (purge_prog).
_IR_KINDS = frozenset(("func", "region", "end", "inst", "value"))


class _State:
    """The cffi objects of libtinytc (set by `attach`)."""

    ffi: Any = None
    lib: Any = None


state = _State()


@dataclass(slots=True)
class Entry:
    obj: Any
    kind: str
    refcount: int = 0
    refs: list[int] = field(default_factory=list)  # shared handles this one retains
    deps: list[int] = field(default_factory=list)  # handles that die with this one
    keep: Any = None  # C memory handed out as a borrowed pointer
    owned: bool = False  # unique objects: taken over by a region / program
    source: Any = None  # a prog still equal to the parse of its text (capi/parsed.py)
    sole: bool = False  # a prog that nothing but this handle holds: dismantled when it goes


class HandleTable:
    def __init__(self) -> None:
        self.by_addr: dict[int, Entry] = {}
        self.by_obj: dict[tuple[str, int], int] = {}
        self._next = 0x7F0000100000
        # Live handles of _IR_KINDS: while there are none (a program parsed and compiled
        # without the builder API), releasing a program need not walk it.
        self.ir_handles = 0

    def __len__(self) -> int:
        return len(self.by_addr)

    # ---- creation -----------------------------------------------------------------------------

    def _add(self, kind: str, obj: Any, entry: Entry) -> int:
        addr = self._next
        self._next += _ADDRESS_STEP
        self.by_addr[addr] = entry
        self.by_obj[(kind, id(obj))] = addr
        if kind in _IR_KINDS:
            self.ir_handles += 1
        return addr

    def new_shared(self, kind: str, obj: Any, refs: list[int] | tuple[int, ...] = ()) -> int:
        """A new shared object with refcount 1 that also retains `refs`."""
        for r in refs:
            self.retain_addr(r)
        return self._add(kind, obj, Entry(obj, kind, 1, list(refs)))

    def handle(self, kind: str, obj: Any) -> int:
        """The handle of a unique or managed object, made on first use."""
        addr = self.by_obj.get((kind, id(obj)))
        if addr is not None:
            return addr
        addr = self._add(kind, obj, Entry(obj, kind))
        if kind in ("type", "attr"):
            ctx_addr = self.by_obj.get(("compiler_context", id(obj.ctx)))
            if ctx_addr is not None:
                self.by_addr[ctx_addr].deps.append(addr)
        return addr

    def shared_handle(self, kind: str, obj: Any) -> int | None:
        return self.by_obj.get((kind, id(obj)))

    def context_handle(self, context: Any, what: str = "the compiler context") -> int:
        """The handle of compiler context `context` (`what` holds it), which a C host may have
        released: invalid-argument status then, never a None in compiled code."""
        a = self.by_obj.get(("compiler_context", id(context)))
        if a is None:
            invalid(f"{what} has been released")
        return a

    # ---- lookup -------------------------------------------------------------------------------

    def entry_at(self, addr: int) -> Entry:
        entry = self.by_addr.get(addr)
        if entry is None:
            invalid("unknown handle")
        return entry

    def entry(self, kind: str, p: Any) -> Entry:
        return self.entry_of(kind, addr(p))

    def entry_of(self, kind: str, a: int) -> Entry:
        """The entry of the handle at address `a`, which must be of `kind`."""
        entry = self.by_addr.get(a)
        if entry is None or entry.kind != kind:
            invalid(f"not a {kind} handle")
        return entry

    def get(self, kind: str, p: Any) -> Any:
        """The object behind handle `p` (cdata); NULL, unknown or another kind is invalid.
        A program parsed from text is parsed now if that was put off, and is no longer
        taken for its text: the caller may change it."""
        entry = self.by_addr.get(addr(p))
        if entry is None or entry.kind != kind:
            invalid(f"not a {kind} handle")
        if entry.source is not None:
            entry.source.settle(entry)
        return entry.obj

    def replace(self, entry: Entry, obj: Any) -> None:
        """Puts `obj` behind the handle of `entry` in place of its object."""
        a = self.by_obj.pop((entry.kind, id(entry.obj)))
        entry.obj = obj
        self.by_obj[(entry.kind, id(obj))] = a

    def get_many(self, kind: str, count: int, p: Any) -> list[Any]:
        if count == 0:
            return []
        if p == state.ffi.NULL:
            invalid("NULL array with a non-zero size")
        addrs = state.ffi.unpack(state.ffi.cast("uintptr_t *", p), count)
        out = []
        for a in addrs:
            entry = self.by_addr.get(a)
            if entry is None or entry.kind != kind:
                invalid(f"not a {kind} handle")
            out.append(entry.obj)
        return out

    # ---- reference counting -------------------------------------------------------------------

    def retain_addr(self, a: int) -> None:
        entry = self.entry_at(a)
        if entry.kind not in SHARED:
            invalid("not a reference-counted handle")
        entry.refcount += 1

    def release_addr(self, a: int) -> None:
        entry = self.entry_at(a)
        if entry.kind not in SHARED:
            invalid("not a reference-counted handle")
        entry.refcount -= 1
        if entry.refcount <= 0:
            self._destroy(a, entry)

    def _destroy(self, a: int, entry: Entry) -> None:
        self.drop(entry.kind, entry.obj)
        for d in entry.deps:
            dep = self.by_addr.pop(d, None)
            if dep is not None:
                self.by_obj.pop((dep.kind, id(dep.obj)), None)
        if entry.kind == "prog" and self.ir_handles:
            purge_prog(self, entry.obj)
        if entry.sole:  # freed now by reference counting, not left to the collector
            dismantle_prog(entry.obj)
        for r in entry.refs:
            if r in self.by_addr:
                self.release_addr(r)

    # ---- removal ------------------------------------------------------------------------------

    def drop(self, kind: str, obj: Any) -> None:
        a = self.by_obj.pop((kind, id(obj)), None)
        if a is not None:
            self.by_addr.pop(a, None)
            if kind in _IR_KINDS:
                self.ir_handles -= 1


table = HandleTable()


# ---- ownership: handles of IR objects die with their owner -----------------------------------


def purge_region(t: HandleTable, region: Any) -> None:
    t.drop("region", region)
    t.drop("end", region)
    for v in region.params:
        t.drop("value", v)
    for inst in region.insts:
        purge_inst(t, inst)


def purge_inst(t: HandleTable, inst: Any) -> None:
    t.drop("inst", inst)
    for v in inst.results:
        t.drop("value", v)
    for r in inst.regions:
        purge_region(t, r)


def purge_func(t: HandleTable, func: Any) -> None:
    t.drop("func", func)
    purge_region(t, func.body)


def purge_prog(t: HandleTable, prog: Any) -> None:
    for func in prog.funcs:
        purge_func(t, func)


# ---- conversions between cdata and Python ------------------------------------------------------


def addr(p: Any) -> int:
    """The integer value of a pointer (0 for NULL)."""
    return int(state.ffi.cast("uintptr_t", p))


def is_null(p: Any) -> bool:
    return p == state.ffi.NULL


def addresses(count: int, p: Any) -> list[int]:
    """The `count` pointer-sized values of a C array of handles (wait-event lists)."""
    if not count:
        return []
    need(p)
    values = state.ffi.cast("uintptr_t *", p)
    return [int(values[i]) for i in range(count)]


def need(*pointers: Any) -> None:
    """NULL handles and out-pointers are invalid arguments."""
    for p in pointers:
        if p == state.ffi.NULL:
            invalid("NULL argument")


def out(p: Any, value: int) -> None:
    """Stores a handle (an address; 0 for NULL) into a handle out-pointer."""
    state.ffi.cast("uintptr_t *", p)[0] = value


def out_handle(p: Any, kind: str, obj: Any) -> None:
    out(p, table.handle(kind, obj))


def text(p: Any, length: int | None = None) -> str:
    """A C string: NUL-terminated, or at most `length` bytes up to the first NUL."""
    need(p)
    raw = state.ffi.string(p) if length is None else state.ffi.string(p, length)
    return raw.decode("utf-8", errors="replace")


def int64s(count: int, p: Any) -> tuple[int, ...]:
    if count == 0:
        return ()
    need(p)
    return tuple(state.ffi.unpack(state.ffi.cast("int64_t *", p), count))


def location(p: Any) -> Location:
    """A `const tinytc_location_t *` (NULL: unknown location)."""
    if p == state.ffi.NULL:
        return UNKNOWN_LOCATION
    b, e = p.begin, p.end
    return Location(
        Position(b.source_id, b.line, b.column), Position(e.source_id, e.line, e.column)
    )


def c_location(loc: Location) -> Any:
    b, e = loc.begin, loc.end
    return state.ffi.new(
        "tinytc_location_t *",
        ((b.source_id, b.line, b.column), (e.source_id, e.line, e.column)),
    )


def c_string(value: str) -> Any:
    """A heap copy that the caller frees with tinytc_string_destroy (malloc-allocated)."""
    data = value.encode()
    ptr = state.lib._tinytc_py_strndup(data, len(data))
    if ptr == state.ffi.NULL:
        raise MemoryError
    return ptr


def fill_list(size_p: Any, list_p: Any, addrs: list[int]) -> None:
    """The query/fill protocol of docs/design.md §C1.7: *size == 0 asks for the count; otherwise up to
    *size handles are written and *size becomes the number written."""
    need(size_p)
    capacity = size_p[0]
    if capacity == 0:
        size_p[0] = len(addrs)
        return
    need(list_p)
    n = min(capacity, len(addrs))
    dst = state.ffi.cast("uintptr_t *", list_p)
    for i in range(n):
        dst[i] = addrs[i]
    size_p[0] = n
