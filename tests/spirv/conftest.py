"""Shared fixtures for the SPIR-V layer tests: hand-built kernels and SPIRV-Tools runners.

The kernels are written with the public Module/Function/Block API exactly as the IR converter
will use it, so these tests double as its usage example.
"""

from __future__ import annotations

import subprocess

import pytest

from tinytc_py.spirv import Module, literal64
from tinytc_py.spirv.tables import (
    BuiltIn,
    Capability,
    ExecutionMode,
    FunctionControl,
    LoopControl,
    MemoryAccess,
    Op,
    OpenCLStd,
    SelectionControl,
    StorageClass,
)


def build_add_kernel(version: tuple[int, int] = (1, 4)) -> Module:
    """c[i] = a[i] + b[i] with i = GlobalInvocationId.x, over CrossWorkgroup f32 buffers."""
    mod = Module(version=version)
    for cap in (Capability.Addresses, Capability.Kernel, Capability.Int64):
        mod.add_capability(cap)
    void, f32, i64 = mod.type_void(), mod.type_float(32), mod.type_int(64)
    gid = mod.builtin(
        BuiltIn.GlobalInvocationId,
        mod.type_pointer(StorageClass.Input, mod.type_vector(i64, 3), alignment=32),
    )
    ptr = mod.type_pointer(StorageClass.CrossWorkgroup, f32)
    fn = mod.add_function(void, mod.type_function(void, [ptr, ptr, ptr]), name="add")
    a, b, c = (fn.add_parameter(ptr) for _ in range(3))
    blk = fn.add_block()
    ids = blk.op(Op.Load, mod.type_vector(i64, 3), gid, MemoryAccess.Aligned, 32)
    i = blk.op(Op.CompositeExtract, i64, ids, 0)
    x = blk.op(Op.Load, f32, blk.op(Op.InBoundsPtrAccessChain, ptr, a, i))
    y = blk.op(Op.Load, f32, blk.op(Op.InBoundsPtrAccessChain, ptr, b, i))
    blk.emit(Op.Store, blk.op(Op.InBoundsPtrAccessChain, ptr, c, i), blk.op(Op.FAdd, f32, x, y))
    blk.emit(Op.Return)
    mod.add_entry_point(fn.id, "add", [gid])
    mod.add_execution_mode(fn.id, ExecutionMode.LocalSize, 64, 1, 1)
    return mod


def build_control_flow_kernel() -> Module:
    """A loop with OpPhi/OpLoopMerge, an if and a 64-bit OpSwitch, plus assorted constants.

    Exercises forward references (ids allocated before the instruction that defines them),
    enum operands with parameters, masks, strings, OpExtInst and f16/f64/i8/i64 constants.
    """
    mod = Module()
    for cap in (
        Capability.Addresses,
        Capability.Kernel,
        Capability.Int64,
        Capability.Int8,
        Capability.Float16,
        Capability.Float64,
        Capability.SubgroupDispatch,
    ):
        mod.add_capability(cap)
    ocl = mod.ext_inst_import("OpenCL.std")
    void, f32, i64, f16 = mod.type_void(), mod.type_float(32), mod.type_int(64), mod.type_float(16)
    ptr = mod.type_pointer(StorageClass.CrossWorkgroup, f32)
    fn = mod.add_function(
        void, mod.type_function(void, [ptr, i64, ptr]), "sum", FunctionControl.DontInline
    )
    a, n, out = fn.add_parameter(ptr), fn.add_parameter(i64), fn.add_parameter(ptr)
    mod.name(n, 'n "count"\\')
    entry = fn.add_block()
    header, body, cont, merge = (mod.new_id() for _ in range(4))
    entry.emit(Op.Branch, header)

    i_next, acc_next = mod.new_id(), mod.new_id()
    hdr = fn.add_block(header)
    zero = mod.constant(f32, 0.0)
    i = hdr.op(Op.Phi, i64, mod.constant(i64, 0), entry.label, i_next, cont)
    acc = hdr.op(Op.Phi, f32, zero, entry.label, acc_next, cont)
    cond = hdr.op(Op.SLessThan, mod.type_bool(), i, n)
    hdr.emit(Op.LoopMerge, merge, cont, LoopControl.PartialCount, 4)
    hdr.emit(Op.BranchConditional, cond, body, merge)

    bdy = fn.add_block(body)
    value = bdy.op(
        Op.Load,
        f32,
        bdy.op(Op.InBoundsPtrAccessChain, ptr, a, i),
        MemoryAccess.Volatile | MemoryAccess.Aligned,
        4,
    )
    scaled = bdy.ext_inst(f32, ocl, OpenCLStd.fma, value, mod.constant(f32, 0.1), acc)
    bdy.op(Op.FAdd, f32, acc, scaled, result_id=acc_next)
    bdy.emit(Op.Branch, cont)

    cnt = fn.add_block(cont)
    cnt.op(Op.IAdd, i64, i, mod.constant(i64, 1), result_id=i_next)
    cnt.emit(Op.Branch, header)

    then, after = mod.new_id(), mod.new_id()
    mrg = fn.add_block(merge)
    positive = mrg.op(Op.FOrdGreaterThan, mod.type_bool(), acc, zero)
    mrg.emit(Op.SelectionMerge, after, SelectionControl.None_)
    mrg.emit(Op.BranchConditional, positive, then, after)
    thn = fn.add_block(then)
    half = thn.op(Op.FConvert, f16, acc)
    wide = thn.op(Op.FConvert, f32, thn.op(Op.FMul, f16, half, mod.constant(f16, -1.5)))
    thn.emit(Op.Store, out, wide)
    thn.emit(Op.Branch, after)

    case_a, case_b, done = mod.new_id(), mod.new_id(), mod.new_id()
    aft = fn.add_block(after)
    aft.emit(Op.SelectionMerge, done, SelectionControl.None_)
    aft.emit(Op.Switch, n, done, *literal64(5), case_a, *literal64(1 << 40), case_b)
    for label in (case_a, case_b):
        blk = fn.add_block(label)
        blk.emit(Op.Branch, done)
    end = fn.add_block(done)
    dbl = mod.type_float(64)
    end.op(
        Op.FConvert,
        f32,
        end.op(Op.FAdd, dbl, mod.constant(dbl, -2.5e-300), mod.constant(dbl, 1e300)),
    )
    end.op(Op.UConvert, mod.type_int(8), n)
    end.op(Op.IAdd, i64, n, mod.constant(i64, -7))
    end.emit(Op.Return)

    mod.add_entry_point(fn.id, "sum")
    mod.add_execution_mode(fn.id, ExecutionMode.LocalSize, 128, 2, 1)
    mod.add_execution_mode(fn.id, ExecutionMode.SubgroupSize, 16)
    return mod


def run_tool(*args: str, data: bytes = b"") -> subprocess.CompletedProcess:
    """Run a SPIRV-Tools program, failing the test with its output if it fails."""
    proc = subprocess.run(list(args), input=data, capture_output=True, timeout=120)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(args)} failed:\n{proc.stderr.decode()}{proc.stdout.decode()}")
    return proc


@pytest.fixture
def add_kernel():
    return build_add_kernel


@pytest.fixture
def control_flow_kernel():
    return build_control_flow_kernel


@pytest.fixture
def tool():
    return run_tool
