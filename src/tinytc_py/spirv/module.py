"""SPIR-V module model: sections in spec order, id allocation, uniqued types and constants.

The SPIR-V layer knows nothing about the tensor IR; a converter drives it through this API.
Everything is words from the start (docs/design.md §3, convention 7): each module section is
an `array('I')` and each basic block a list of finished instructions' words, so assembling is
concatenation and there is no text or per-instruction object on the way. Ids are allocated from the module when an instruction is created, which makes forward
references (branch targets, OpPhi operands from a later block) a matter of calling `new_id()`
first and passing `result_id=` later.

Uniquing: types, constants, ext-inst imports and builtin variables live in one dict keyed by the
instruction's opcode and operands, so equal requests return the same id (SPIR-V forbids two
non-aggregate types with equal operands). Pointer types are keyed by their alignment as well,
because that alignment is a decoration on the pointer type itself (docs/design.md §B6.3).

Capabilities and extensions are insertion-ordered sets filled by whoever emits code that needs
them (the capex pass); nothing here adds them behind the caller's back.
"""

from __future__ import annotations

import math
import struct
import sys
from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Final, cast

from .tables import (
    HAS_RESULT,
    HAS_RESULT_TYPE,
    OP_NAMES,
    AddressingModel,
    Decoration,
    ExecutionModel,
    FunctionControl,
    MemoryModel,
    Op,
    StorageClass,
)

#: Vector lengths OpenCL kernels may use (8 and 16 need the Vector16 capability).
VECTOR_LENGTHS: Final = frozenset({2, 3, 4, 8, 16})
_BIG_ENDIAN: Final = sys.byteorder == "big"
_FLOAT_FORMATS: Final = {16: "<e", 32: "<f", 64: "<d"}
_SCALAR_TYPE_OPS: Final = frozenset({Op.TypeInt, Op.TypeFloat, Op.TypeBool})
# The opcode kinds op() and emit() check once per instruction, as one byte per opcode: in the
# compiled module indexing a Final bytes object is a C array read, where a frozenset lookup
# boxes the opcode and hashes it.
_NO_RESULT: Final = 0
_RESULT_ONLY: Final = 1
_RESULT_AND_TYPE: Final = 2


def _kind_table() -> bytes:
    table = bytearray(max(HAS_RESULT) + 1)
    for opcode in HAS_RESULT:
        table[opcode] = _RESULT_AND_TYPE if opcode in HAS_RESULT_TYPE else _RESULT_ONLY
    return bytes(table)


_KINDS: Final = _kind_table()
_KINDS_END: Final = len(_KINDS)
_WORD_MAX: Final = 0xFFFF_FFFF


def _kind(opcode: int) -> int:
    """_NO_RESULT, _RESULT_ONLY or _RESULT_AND_TYPE (an opcode without a result type always
    has a result of its own or none; opcodes the grammar lacks count as having none)."""
    return _KINDS[opcode] if 0 <= opcode < _KINDS_END else _NO_RESULT


def string_words(text: str) -> array:
    """A SPIR-V literal string: UTF-8, NUL-terminated, zero-padded, packed little-endian."""
    if "\0" in text:
        raise ValueError(f"SPIR-V literal strings cannot contain NUL: {text!r}")
    data = text.encode() + b"\0"
    data += b"\0" * (-len(data) % 4)
    words = array("I", data)  # host byte order; the words hold the little-endian packing
    if _BIG_ENDIAN:
        words.byteswap()
    return words


_STRING_WORDS: dict[str, array] = {}
STRING_MEMO_SIZE = 1024
STRING_MEMO_LENGTH = 4096  # characters: the memo holds at most some 4 MB of words


def _string_words_memo(text: str) -> array:
    """string_words(text), remembered: a compile encodes the same few strings each time (the
    extended instruction set's name, the kernels' names). Emptied when it reaches
    STRING_MEMO_SIZE strings; strings longer than STRING_MEMO_LENGTH (a long vISA text, or one
    the instruction's 65535-word limit refuses) are encoded each time. The caller copies the
    words (`extend`)."""
    words = _STRING_WORDS.get(text)
    if words is None:
        words = string_words(text)
        if len(text) <= STRING_MEMO_LENGTH:
            if len(_STRING_WORDS) >= STRING_MEMO_SIZE:
                _STRING_WORDS.clear()
            _STRING_WORDS[text] = words
    return words


def literal64(value: int) -> tuple[int, int]:
    """Split a 64-bit literal into (low word, high word); negative values are two's complement.

    `emit` takes every int operand as one word, so 64-bit literals must be split explicitly:
    `emit(code, Op.Constant, ty, rid, *literal64(v))`.
    """
    value &= 0xFFFF_FFFF_FFFF_FFFF
    return value & 0xFFFF_FFFF, value >> 32


def _not_a_word(opcode: int, value: object) -> ValueError:
    """The error for an operand that is not a 32-bit word, nor a string where one may be."""
    return ValueError(
        f"{OP_NAMES.get(opcode, opcode)}: operand {value!r} is neither a 32-bit word"
        " nor a string (split 64-bit literals with literal64())"
    )


def _not_an_id(opcode: int, value: object) -> ValueError:
    """The error for a result type or result id that is not a 32-bit word (a string is no id,
    so it gets a message of its own; anything else the operands' message)."""
    if isinstance(value, str):
        return ValueError(
            f"{OP_NAMES.get(opcode, opcode)}: operand {value!r} is a string, not an id"
        )
    return _not_a_word(opcode, value)


def _encode_slow(opcode: int, operands: Sequence[object]) -> array:
    """The words of an instruction whose operands are not all plain words (strings), header
    included; or a ValueError that says why an operand is invalid. An array, so that the
    words of a string (vISA text runs to hundreds) are copied, not made into ints one by one."""
    words = array("I", (0,))
    for operand in operands:
        if isinstance(operand, str):
            words.extend(_string_words_memo(operand))
        elif isinstance(operand, int) and 0 <= operand <= _WORD_MAX:
            words.append(operand)
        else:
            raise _not_a_word(opcode, operand)
    if len(words) > 0xFFFF:
        raise ValueError(f"{OP_NAMES.get(opcode, opcode)}: more than 65535 words")
    words[0] = (len(words) << 16) | opcode
    return words


def _is_word(value: object) -> bool:
    """Whether `value` is an int that fits a word (bools and IntEnum members are ints). The
    block emitters take their words as `object` and check them here, a native call in the
    compiled module: a parameter typed `int` would turn a float or None into mypyc's TypeError
    at the call instead of the ValueError below, and the caller's value is appended as the
    object it already is (no unboxing and boxing again)."""
    return isinstance(value, int) and 0 <= value <= _WORD_MAX


def _all_words(operands: tuple[object, ...]) -> bool:
    """Whether every operand is an int that fits a word (else `_encode_slow` must see them)."""
    for operand in operands:
        if not isinstance(operand, int) or not 0 <= operand <= _WORD_MAX:
            return False
    return True


def emit(code: array, opcode: int, *operands: int | str) -> None:
    """Append one instruction to `code`: the generic encoder every opcode goes through.

    Operands are ids or 32-bit literals (ints) or literal strings (str). The common all-int case
    is one `fromlist` call; anything else (checked first: an exception from `fromlist` would cost
    more than the check) goes to `_encode_slow`, which also turns bad operands into a clear
    ValueError before anything is appended.
    """
    _emit(code, opcode, operands)


# Calls inside this module pass operands as one tuple to the underscore variants (_emit,
# Block._op, Module._declare, Module._unique_of): in compiled code a call that spreads a sequence
# into *operands (`emit(code, op, *rest)`) goes through the function's generic Python entry,
# which parses the arguments again; a call with a tuple argument is a direct native call.


def _emit(code: array, opcode: int, operands: tuple[int | str, ...]) -> None:
    """`emit` with the operands as one tuple."""
    if _all_words(operands):
        words = [((len(operands) + 1) << 16) | opcode]
        words += operands  # in compiled code a star in a display calls list.extend by name
        code.fromlist(words)
    else:
        code.extend(_encode_slow(opcode, operands))


def iter_instructions(words: Sequence[int], start: int = 0) -> Iterator[tuple[int, int, int]]:
    """Yield (opcode, offset, word count) for the instructions in `words[start:]`.

    A word count of 0 or one running past the end raises ValueError: such a binary makes the
    Intel OpenCL runtime loop forever, so every reader here refuses it.
    """
    end = len(words)
    offset = start
    while offset < end:
        first = words[offset]
        count = first >> 16
        if count == 0 or offset + count > end:
            raise ValueError(f"malformed instruction at word {offset}: word count {count}")
        yield first & 0xFFFF, offset, count
        offset += count


def opcodes_in(words: Sequence[int], start: int = 0) -> dict[int, None]:
    """The distinct opcodes of the instructions in `words[start:]`, in order of first
    occurrence: a plain loop over the instruction headers, for scans that only ask what occurs
    (capabilities, validation)."""
    found: dict[int, None] = {}
    offset, end = start, len(words)
    while offset < end:
        first = words[offset]
        found[first & 0xFFFF] = None
        offset += (first >> 16) or end  # a zero word count ends the scan; readers report it
    return found


class Ids:
    """A module's id allocator: `next` is the id the next request gets (the header's bound).

    The module, its functions and their blocks share it, so that functions and blocks allocate
    ids without a reference back to the module. A module is then no reference cycle (module ->
    function -> block -> module), and it is freed as soon as its last user lets go of it, not
    at the garbage collector's next scan, which would visit every word of every block first."""

    __slots__ = ("next",)

    def __init__(self) -> None:
        self.next = 1

    def new_id(self) -> int:
        result = self.next
        self.next = result + 1
        return result


class Block:
    """A basic block: OpLabel plus its instructions, in its own word list.

    Blocks are separate lists so a converter can keep appending to a block created earlier
    (loop headers, merge blocks) without caring about the final order. `opcodes` records the
    distinct opcodes of `code` in order of first occurrence as they are emitted, so capex need
    not scan the words again (one dict store per instruction is cheaper than that scan).

    `code` is a plain list of ints, not an `array('I')` like the module's sections: in the
    compiled module appending to a list is a C call per word, where `array.fromlist` is a
    Python method call per instruction on a list built for it. The emitters check that every
    operand fits a word before they append anything, so a block holds valid words only; the
    assembler converts each block once.
    """

    __slots__ = ("ids", "label", "code", "opcodes")

    def __init__(self, ids: Ids, label: int) -> None:
        self.ids = ids
        self.label = label
        self.code: list[int] = [2 << 16 | Op.Label, label]
        self.opcodes: dict[int, None] = {Op.Label: None}

    def op(self, opcode: int, result_type: object, *operands: object, result_id: object = 0) -> int:
        """Emit an instruction with result type and result id; return the id.

        `result_id` lets a caller define an id it allocated earlier with `Module.new_id()`
        (e.g. a loop-carried value already referenced by an OpPhi). Operands are words or
        literal strings; the result type and id are words. Anything else is a ValueError
        before the block or the module's id bound changes (the same for every emitter here).
        The words are typed `object` for that reason (see `_is_word`).

        This runs once per emitted instruction, so it does the least work: whether the opcode
        has a result type is one byte of a table, `opcodes` is written only when the block
        first sees the opcode, and the words are appended to the list after one pass that
        checks they are words (a string operand or a value beyond 32 bits takes
        `_encode_slow`). The kind check must not depend on `opcodes`: op() and emit() share
        that record, so skipping the check for a recorded opcode would accept op(Op.Store, ...)
        after emit(Op.Store, ...).
        """
        return self._op(opcode, result_type, operands, result_id)

    def _op(
        self, opcode: int, result_type: object, operands: tuple[object, ...], result_id: object
    ) -> int:
        """`op` with the operands as one tuple (see `_emit`)."""
        if _kind(opcode) != _RESULT_AND_TYPE:
            raise ValueError(f"{OP_NAMES.get(opcode, opcode)} has no result type; use emit()")
        if not _is_word(result_type):
            raise _not_an_id(opcode, result_type)
        if not _is_word(result_id):
            raise _not_an_id(opcode, result_id)
        words_only = _all_words(operands)
        slow = None if words_only else _encode_slow(opcode, (result_type, 0, *operands))
        rid = cast(int, result_id)
        if not rid:
            ids = self.ids
            rid = ids.next
            ids.next = rid + 1
        code: list[Any] = self.code
        if slow is None:
            code.append(((len(operands) + 3) << 16) | opcode)
            code.append(result_type)
            code.append(rid)
            code += operands
        else:
            slow[2] = rid
            code += slow.tolist()
        if opcode not in self.opcodes:
            self.opcodes[opcode] = None
        return rid

    def op1(self, opcode: int, result_type: object, a: object) -> int:
        """`op` with one operand (conversions, loads, negations): no tuple on the way."""
        if _kind(opcode) != _RESULT_AND_TYPE or not (_is_word(result_type) and _is_word(a)):
            return self._op(opcode, result_type, (a,), 0)
        ids = self.ids
        result_id = ids.next
        ids.next = result_id + 1
        code: list[Any] = self.code
        code.append(4 << 16 | opcode)
        code.append(result_type)
        code.append(result_id)
        code.append(a)
        if opcode not in self.opcodes:
            self.opcodes[opcode] = None
        return result_id

    def op2(self, opcode: int, result_type: object, a: object, b: object) -> int:
        """`op` with two operands (binary arithmetic, comparisons): no tuple on the way."""
        if _kind(opcode) != _RESULT_AND_TYPE or not (
            _is_word(result_type) and _is_word(a) and _is_word(b)
        ):
            return self._op(opcode, result_type, (a, b), 0)
        ids = self.ids
        result_id = ids.next
        ids.next = result_id + 1
        code: list[Any] = self.code
        code.append(5 << 16 | opcode)
        code.append(result_type)
        code.append(result_id)
        code.append(a)
        code.append(b)
        if opcode not in self.opcodes:
            self.opcodes[opcode] = None
        return result_id

    def emit(self, opcode: int, *operands: object) -> None:
        """Emit an instruction without a result (OpStore, OpBranch, OpReturn, ...); the kind
        check is unconditional for the reason given in op()."""
        if _kind(opcode) != _NO_RESULT:
            raise ValueError(f"{OP_NAMES.get(opcode, opcode)} defines a result; use op()")
        code: list[Any] = self.code
        if _all_words(operands):
            code.append(((len(operands) + 1) << 16) | opcode)
            code += operands
        else:
            code += _encode_slow(opcode, operands).tolist()
        if opcode not in self.opcodes:
            self.opcodes[opcode] = None

    def ext_inst(
        self, result_type: object, ext_set: object, number: object, *operands: object
    ) -> int:
        """OpExtInst: `number` of the instruction in the imported set `ext_set`."""
        return self._op(Op.ExtInst, result_type, (ext_set, number, *operands), 0)

    def emitter(self, opcode: int, result_type: object, *prefix: object) -> Emitter:
        """`op` with a fixed opcode, result type and leading operands, as a function of the
        other operands returning the new id (an `Emitter`). For loops that emit many
        instructions of one kind (a GEMM's broadcasts and fmas): the opcode, result type and
        leading operands are checked here once (a string among them encoded once), and each
        call only checks its operands, allocates the id and appends the words; operands that
        are not all words go through op(), which encodes strings and refuses the rest. The
        emitter appends to this block, so it is valid until the converter moves to another
        block."""
        if _kind(opcode) != _RESULT_AND_TYPE:
            raise ValueError(f"{OP_NAMES.get(opcode, opcode)} has no result type; use emit()")
        if not _is_word(result_type):
            raise _not_an_id(opcode, result_type)
        words = prefix if _all_words(prefix) else tuple(_encode_slow(opcode, prefix)[1:])
        return Emitter(self, opcode, result_type, words)


class Emitter:
    """What `Block.emitter` returns: a callable object rather than a closure, so that in the
    compiled module its state is read from native attributes. The words it appends are held as
    objects (`Any`) and boxed as few times as possible (a fresh int object is an allocation):
    the result type and the opcode once here, the header word once per operand count, and the
    new id once per call for both the block and the caller.

    `op2` and `op3` are the calls with two and three operands (a broadcast, an fma) as named
    methods: a compiled caller that holds an `Emitter` calls them directly, where calling the
    object goes through Python's calling convention (a tuple of the arguments, parsed again);
    they write what the call writes."""

    __slots__ = (
        "block",
        "code",
        "opcode",
        "result_type",
        "prefix",
        "fixed",
        "count",
        "header",
        "header2",
        "header3",
    )

    def __init__(
        self, block: Block, opcode: int, result_type: object, prefix: tuple[object, ...]
    ) -> None:
        self.block = block
        self.code: list[Any] = block.code
        self.opcode: Any = opcode
        self.result_type: Any = result_type
        self.prefix = prefix  # words only (`emitter` encoded any string)
        self.fixed = len(prefix) + 3  # the words besides the operands
        self.count = -1  # the operand count `header` was made for
        self.header: Any = 0
        self.header2: Any = ((len(prefix) + 5) << 16) | opcode  # op2's header word
        self.header3: Any = ((len(prefix) + 6) << 16) | opcode  # op3's header word

    def __call__(self, *operands: object) -> Any:
        block = self.block
        if not _all_words(operands):  # a string to encode or a non-word to refuse
            return block._op(self.opcode, self.result_type, (*self.prefix, *operands), 0)
        count = len(operands)
        if count != self.count:
            self.header = ((count + self.fixed) << 16) | self.opcode
            self.count = count
        ids = block.ids
        bound = ids.next
        ids.next = bound + 1
        result_id: Any = bound
        code = self.code
        code.append(self.header)
        code.append(self.result_type)
        code.append(result_id)
        code += self.prefix
        code += operands
        opcodes: dict[Any, None] = block.opcodes
        if self.opcode not in opcodes:
            opcodes[self.opcode] = None
        return result_id

    def op2(self, a: object, b: object) -> Any:
        """The call with two operands."""
        block = self.block
        if not (_is_word(a) and _is_word(b)):
            return block._op(self.opcode, self.result_type, (*self.prefix, a, b), 0)
        ids = block.ids
        bound = ids.next
        ids.next = bound + 1
        result_id: Any = bound
        code = self.code
        code.append(self.header2)
        code.append(self.result_type)
        code.append(result_id)
        code += self.prefix
        code.append(a)
        code.append(b)
        opcodes: dict[Any, None] = block.opcodes
        if self.opcode not in opcodes:
            opcodes[self.opcode] = None
        return result_id

    def op3(self, a: object, b: object, c: object) -> Any:
        """The call with three operands."""
        block = self.block
        if not (_is_word(a) and _is_word(b) and _is_word(c)):
            return block._op(self.opcode, self.result_type, (*self.prefix, a, b, c), 0)
        ids = block.ids
        bound = ids.next
        ids.next = bound + 1
        result_id: Any = bound
        code = self.code
        code.append(self.header3)
        code.append(self.result_type)
        code.append(result_id)
        code += self.prefix
        code.append(a)
        code.append(b)
        code.append(c)
        opcodes: dict[Any, None] = block.opcodes
        if self.opcode not in opcodes:
            opcodes[self.opcode] = None
        return result_id


class Function:
    """OpFunction with its parameters and blocks; OpFunctionEnd is added by the assembler."""

    __slots__ = ("ids", "id", "code", "blocks")

    def __init__(
        self, module: Module, return_type: int, function_type: int, control: int, id: int = 0
    ) -> None:
        """`id`: the function's id when it is known (a binary read back), else a new one."""
        self.ids = module.ids
        self.id = id or module.new_id()
        self.code = array("I")
        emit(self.code, Op.Function, return_type, self.id, control, function_type)
        self.blocks: list[Block] = []

    def add_parameter(self, type_id: int) -> int:
        """Append an OpFunctionParameter; parameters must be added in signature order."""
        param = self.ids.new_id()
        emit(self.code, Op.FunctionParameter, type_id, param)
        return param

    def add_block(self, label: int = 0) -> Block:
        """Append a block; `label` is an id from `new_id()` when branches already target it."""
        ids = self.ids
        block = Block(ids, label or ids.new_id())
        self.blocks.append(block)
        return block


class Module:
    """A SPIR-V module under construction; `assembler.assemble(module)` turns it into bytes.

    Section attributes (in the order SPIR-V requires) are `capabilities`, `extensions`,
    `ext_inst_imports`, the memory model, `entry_points`, `execution_modes`, `debug`
    (OpString/OpSource before OpName), `annotations`, `globals` (types, constants, global
    variables) and `functions`.
    """

    def __init__(
        self,
        version: tuple[int, int] = (1, 4),
        addressing_model: int = AddressingModel.Physical64,
        memory_model: int = MemoryModel.OpenCL,
    ) -> None:
        if version[0] != 1 or not 0 <= version[1] <= 6:
            raise ValueError(f"unsupported SPIR-V version {version}; expected 1.0 to 1.6")
        self.version = version
        self.addressing_model = addressing_model
        self.memory_model = memory_model
        self.capabilities: dict[int, None] = {}
        self.extensions: dict[str, None] = {}
        self.ext_inst_imports = array("I")
        self.entry_points = array("I")
        self.execution_modes = array("I")
        self.debug = array("I")
        self.annotations = array("I")
        self.globals = array("I")
        self.functions: list[Function] = []
        self.ids = Ids()
        self._unique: dict[tuple, int] = {}
        self._scalar_types: dict[int, tuple[int, ...]] = {}
        self._builtins: dict[int, int] = {}
        self._int_constants: dict[int, dict[int, int]] = {}  # type -> value -> id

    # ids -------------------------------------------------------------------------------------

    @property
    def bound(self) -> int:
        """One more than the largest id allocated so far (the header's bound)."""
        return self.ids.next

    def new_id(self) -> int:
        """Allocate an id, e.g. for a block that is branched to before it is created."""
        return self.ids.new_id()

    # mode setting and module-level annotations -------------------------------------------------

    def add_capability(self, capability: int) -> None:
        self.capabilities[capability] = None

    def add_extension(self, name: str) -> None:
        self.extensions[name] = None

    def ext_inst_import(self, name: str) -> int:
        """The id of OpExtInstImport `name` (e.g. "OpenCL.std"), created once."""
        key = (Op.ExtInstImport, name)
        result = self._unique.get(key)
        if result is None:
            result = self._unique[key] = self.new_id()
            emit(self.ext_inst_imports, Op.ExtInstImport, result, name)
        return result

    def add_entry_point(
        self,
        function: int,
        name: str,
        interface: Iterable[int] = (),
        model: int = ExecutionModel.Kernel,
    ) -> None:
        """OpEntryPoint; from SPIR-V 1.4 `interface` must list every global variable it uses."""
        _emit(self.entry_points, Op.EntryPoint, (model, function, name, *interface))

    def add_execution_mode(self, function: int, mode: int, *literals: int) -> None:
        _emit(self.execution_modes, Op.ExecutionMode, (function, mode, *literals))

    def name(self, target: int, text: str) -> None:
        """OpName (debug section); purely informative for dumps and driver messages."""
        emit(self.debug, Op.Name, target, text)

    def decorate(self, target: int, decoration: int, *literals: int | str) -> None:
        _emit(self.annotations, Op.Decorate, (target, decoration, *literals))

    # types, constants and global variables -----------------------------------------------------

    def declare(self, opcode: int, *operands: int | str) -> int:
        """Emit a new types/constants/globals instruction with a fresh result id.

        For opcodes with a result type, operands[0] is that type and the id goes after it;
        otherwise the id comes first. Use `unique` for anything that must exist only once.
        """
        return self._declare(opcode, operands)

    def _declare(self, opcode: int, operands: tuple[int | str, ...]) -> int:
        """`declare` with the operands as one tuple (see `_emit`)."""
        ids = self.ids
        result = ids.next
        ids.next = result + 1
        head = ((len(operands) + 2) << 16) | opcode
        if _kind(opcode) == _RESULT_AND_TYPE:
            words: list = [head, operands[0], result]
            words += operands[1:]
        else:
            words = [head, result]
            words += operands
        if _all_words(operands):
            self.globals.fromlist(words)
        else:
            self.globals.extend(_encode_slow(opcode, words[1:]))
        return result

    def unique(self, opcode: int, *operands: int | str) -> int:
        """Like `declare`, but equal (opcode, operands) return the first instruction's id."""
        return self._unique_of(opcode, operands)

    def _unique_of(self, opcode: int, operands: tuple[int | str, ...]) -> int:
        """`unique` with the operands as one tuple (see `_emit`)."""
        key = (opcode,) + operands
        result = self._unique.get(key)
        if result is None:
            result = self._unique[key] = self._declare(opcode, operands)
            if opcode in _SCALAR_TYPE_OPS:
                self._scalar_types[result] = key
        return result

    def type_void(self) -> int:
        return self.unique(Op.TypeVoid)

    def type_bool(self) -> int:
        return self.unique(Op.TypeBool)

    def type_int(self, width: int, signedness: int = 0) -> int:
        """OpTypeInt; OpenCL kernels use signedness 0 and pick signed/unsigned per instruction."""
        return self.unique(Op.TypeInt, width, signedness)

    def type_float(self, width: int) -> int:
        return self.unique(Op.TypeFloat, width)

    def type_vector(self, component: int, count: int) -> int:
        """OpTypeVector; counts other than 2, 3, 4, 8, 16 are invalid in OpenCL kernels."""
        if count not in VECTOR_LENGTHS:
            raise ValueError(f"vector of {count} components; OpenCL allows 2, 3, 4, 8, 16")
        return self.unique(Op.TypeVector, component, count)

    def type_array(self, element: int, length: int) -> int:
        """OpTypeArray of `length` elements (the length constant is an i32 made here)."""
        return self.unique(Op.TypeArray, element, self.constant(self.type_int(32), length))

    def type_pointer(self, storage_class: int, pointee: int, alignment: int = 0) -> int:
        """OpTypePointer; alignment > 0 adds `OpDecorate %ptr Alignment a` on the type."""
        key = (Op.TypePointer, storage_class, pointee, alignment)
        result = self._unique.get(key)
        if result is None:
            result = self._unique[key] = self.declare(Op.TypePointer, storage_class, pointee)
            if alignment:
                self.decorate(result, Decoration.Alignment, alignment)
        return result

    def type_function(self, return_type: int, parameter_types: Sequence[int] = ()) -> int:
        return self._unique_of(Op.TypeFunction, (return_type, *parameter_types))

    def constant(self, type_id: int, value: bool | int | float) -> int:
        """OpConstant of a scalar type made by this module (bool types give True/False).

        Integers accept signed or unsigned values that fit the width and are stored as the
        two's-complement bit pattern; floats are rounded to the type's width (overflow gives
        infinity, as a C conversion would). 64-bit values take two words, low word first;
        narrower ones one word, zero-extended (sign-extended for signed int types).

        The converter asks for the same int constants (indices, lanes, scopes) over and over,
        so those answers are remembered per type and value (one map per type, so that a request
        builds no key). Float values are not: 0.0 == -0.0 as keys, but their bits differ.
        """
        if type(value) is int:
            by_value = self._int_constants.get(type_id)
            if by_value is None:
                by_value = self._int_constants[type_id] = {}
            result = by_value.get(value)
            if result is None:
                result = by_value[value] = self._constant(type_id, value)
            return result
        return self._constant(type_id, value)

    def _constant(self, type_id: int, value: bool | int | float) -> int:
        key = self._scalar_types.get(type_id)
        if key is None:
            raise ValueError(f"%{type_id} is not a scalar int, float or bool type of this module")
        if key[0] == Op.TypeBool:
            return self.unique(Op.ConstantTrue if value else Op.ConstantFalse, type_id)
        if key[0] == Op.TypeFloat:
            bits = _float_bits(float(value), key[1])
        else:
            bits = _int_bits(int(value), key[1], key[2])
        if key[1] > 32:
            low, high = literal64(bits)
            return self._unique_of(Op.Constant, (type_id, low, high))
        return self._unique_of(Op.Constant, (type_id, bits))

    def constant_bool(self, value: bool) -> int:
        return self.unique(Op.ConstantTrue if value else Op.ConstantFalse, self.type_bool())

    def constant_null(self, type_id: int) -> int:
        return self.unique(Op.ConstantNull, type_id)

    def constant_composite(self, type_id: int, constituents: Sequence[int]) -> int:
        return self._unique_of(Op.ConstantComposite, (type_id, *constituents))

    def variable(self, pointer_type: int, storage_class: int, initializer: int = 0) -> int:
        """A module-scope OpVariable (e.g. the Workgroup SLM array); never uniqued."""
        if initializer:
            return self.declare(Op.Variable, pointer_type, storage_class, initializer)
        return self.declare(Op.Variable, pointer_type, storage_class)

    def builtin(self, builtin: int, pointer_type: int) -> int:
        """The Input variable decorated `BuiltIn builtin` and `Constant`, created once.

        `pointer_type` must be an Input pointer to the builtin's type. The caller lists the
        variable in the interface of every entry point that loads it.
        """
        result = self._builtins.get(builtin)
        if result is None:
            result = self._builtins[builtin] = self.variable(pointer_type, StorageClass.Input)
            self.decorate(result, Decoration.Constant)
            self.decorate(result, Decoration.BuiltIn, builtin)
        return result

    # functions ---------------------------------------------------------------------------------

    def add_function(
        self,
        return_type: int,
        function_type: int,
        name: str | None = None,
        control: int = FunctionControl.None_,
    ) -> Function:
        """Start a function; `name` adds an OpName (the entry point's name is separate)."""
        function = Function(self, return_type, function_type, control)
        self.functions.append(function)
        if name is not None:
            self.name(function.id, name)
        return function


def _int_bits(value: int, width: int, signedness: int) -> int:
    if (0 <= value < 0x80 and width >= 8) or (0 <= value < 0x8000_0000 and width >= 32):
        # below the sign bit: the bits are the value (the common case, and for 64 bits the
        # masks below are integers beyond a machine word)
        return value
    if not -(1 << (width - 1)) <= value < (1 << width):
        raise ValueError(f"{value} does not fit a {width}-bit integer")
    bits = value & ((1 << width) - 1)
    if signedness and width < 32 and bits >> (width - 1):
        bits |= 0xFFFF_FFFF ^ ((1 << width) - 1)
    return bits


def _float_bits(value: float, width: int) -> int:
    fmt = _FLOAT_FORMATS.get(width)
    if fmt is None:
        raise ValueError(f"no {width}-bit float format")
    try:
        packed = struct.pack(fmt, value)
    except OverflowError:
        packed = struct.pack(fmt, math.copysign(math.inf, value))
    return int.from_bytes(packed, "little")
