"""tinytc-emulate: GPU (pvc, bmg) binaries executed on the CPU OpenCL runtime against NumPy.

Representative shapes only (the CPU JIT of an emulated DPAS kernel takes 5-20 seconds on
this machine): the batched f32 GEMM example (2D block loads/stores), 16-bit and 8-bit
cooperative-matrix loads/stores (subgroup block IO), a 2D block load partly outside its
surface (zero fill, dropped writes) and f16, bf16 and i8 DPAS products (f32, i32 and f16
accumulators). A template with its pitch off by one element makes the results wrong, with
register files in work-group memory and in private copies; private copies see the lanes'
earlier stores, store from lane 0 only, and are bounded; register files leave room for the
kernel's own local memory; unsupported constructs are errors naming them.
"""

from __future__ import annotations

import collections

import numpy as np
import pytest

from tinytc_py.emulate import UnsupportedConstruct, emulate_spirv
from tinytc_py.errors import TinytcError

pytest.importorskip("pyopencl")
pytestmark = pytest.mark.timeout(600, method="thread")

GEMM = """
func @gemm(%alpha: f32, %A: memref<f32x32x32x?>, %B: memref<f32x32x32x?>, %beta: f32,
           %C: memref<f32x32x32x?>) attributes {subgroup_size=16} {
    %gid = group_id.x : index
    %a = subview %A[0:32,0:32,%gid] : memref<f32x32x32>
    %b = subview %B[0:32,0:32,%gid] : memref<f32x32x32>
    %c = subview %C[0:32,0:32,%gid] : memref<f32x32x32>
    gemm.n.n %alpha, %a, %b, %beta, %c
}
"""


def _compile(src: str, device: str, flags=()):
    import tinytc_py
    from tinytc_py.runtime import device as rt

    try:
        rt.default_device()
    except RuntimeError:
        pytest.skip("no OpenCL device")
    return tinytc_py.compile(src, emulate=device, flags=flags)


def _gpu_spirv(src: str, device: str) -> bytes:
    import tinytc_py

    return tinytc_py.compile(src, target=device, flags=["no-kernel-cache"]).spirv


def _run_gemm(prog, n=3):
    rng = np.random.default_rng(0)
    A, B, C = (np.asfortranarray(rng.standard_normal((32, 32, n)), np.float32) for _ in range(3))
    want = np.stack([1.5 * A[:, :, i] @ B[:, :, i] + 0.5 * C[:, :, i] for i in range(n)], 2)
    prog.kernel("gemm")(np.float32(1.5), A, B, np.float32(0.5), C, num_groups=n)
    return C, want


@pytest.mark.parametrize("device", ["pvc", "bmg"])
def test_gemm_2d_block_io(device):
    assert b"raw_sends" in _gpu_spirv(GEMM, device)  # the GPU path is taken
    got, want = _run_gemm(_compile(GEMM, device))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


def _load_store(ty: str, M: int, N: int, use: str) -> str:
    return f"""
func @ld(%A: memref<{ty}x{M}x{N}>, %B: memref<{ty}x{M}x{N}>)
        attributes {{subgroup_size=16, work_group_size=[16,1]}} {{
    parallel {{
        %c0 = constant 0 : index
        %a = cooperative_matrix_load %A[%c0,%c0] : coopmatrix<{ty}x{M}x{N},matrix_{use}>
        cooperative_matrix_store %a, %B[%c0,%c0]
    }}
}}
"""


def _block_io(ty: str, M: int, N: int, use: str) -> str:
    """@rd: block read of A, plain store at row 1 of B; @wr: plain load from row 1 of B,
    block write of A (B's odd row count rules the block IO out on its side)."""
    cm = f"coopmatrix<{ty}x{M}x{N},matrix_{use}>"
    attrs = "attributes {subgroup_size=16, work_group_size=[16,1]}"
    params = f"%A: memref<{ty}x{M}x{N}>, %B: memref<{ty}x{M + 1}x{N}>"
    return f"""
func @rd({params}) {attrs} {{
    parallel {{
        %c0 = constant 0 : index
        %c1 = constant 1 : index
        %a = cooperative_matrix_load %A[%c0,%c0] : {cm}
        cooperative_matrix_store %a, %B[%c1,%c0]
    }}
}}
func @wr({params}) {attrs} {{
    parallel {{
        %c0 = constant 0 : index
        %c1 = constant 1 : index
        %a = cooperative_matrix_load %B[%c1,%c0] : {cm}
        cooperative_matrix_store %a, %A[%c0,%c0]
    }}
}}
"""


def _ops_of(spirv: bytes, name: str) -> collections.Counter:
    from tinytc_py.emulate.reader import read_module
    from tinytc_py.spirv.module import iter_instructions

    mod = read_module(spirv)
    ids = {f.id: f for f in mod.functions}
    fn = next(ids[e] for e, n in _entry_names(mod) if n == name)
    return collections.Counter(op for op, _, _ in iter_instructions(fn.code))


def _entry_names(mod):
    from tinytc_py.emulate.reader import literal_string
    from tinytc_py.spirv.module import iter_instructions

    ep = mod.entry_points
    return [(ep[off + 2], literal_string(ep, off + 3)) for _, off, _ in iter_instructions(ep)]


@pytest.mark.parametrize("device", ["pvc", "bmg"])
@pytest.mark.parametrize(
    "ty,M,N,use,dtype",
    [
        ("f16", 16, 16, "acc", np.float16),
        ("i8", 32, 32, "a", np.int8),
        ("bf16", 16, 16, "b", np.uint16),
    ],
)
def test_subgroup_block_io_16_and_8_bit(device, ty, M, N, use, dtype):
    """Block read and block write each checked against NumPy on their own (with a plain
    access on the other side), on a pattern that no transpose or lane swap leaves alone."""
    from tinytc_py.spirv.tables import Op

    src = _block_io(ty, M, N, use)
    gpu = _gpu_spirv(src, device)
    rd, wr = _ops_of(gpu, "rd"), _ops_of(gpu, "wr")
    assert rd[Op.SubgroupBlockReadINTEL] and not rd[Op.SubgroupBlockWriteINTEL]
    assert wr[Op.SubgroupBlockWriteINTEL] and not wr[Op.SubgroupBlockReadINTEL]
    prog = _compile(src, device)
    i, j = np.indices((M, N))
    a = np.asfortranarray((7 * i + 3 * j * j + 1) % 120).astype(dtype)
    b = np.zeros((M + 1, N), dtype, order="F")
    prog.kernel("rd")(a, b)
    np.testing.assert_array_equal(b[1:], a)
    np.testing.assert_array_equal(b[0], 0)
    b = np.asfortranarray(np.vstack([np.zeros((1, N)), (5 * i * i + 11 * j + 2) % 120]))
    b = b.astype(dtype)
    out = np.zeros_like(a)
    prog.kernel("wr")(out, b)
    np.testing.assert_array_equal(out, b[1:])


EDGE = """
func @edge(%A: memref<f32x32x?>, %B: memref<f32x16x16>)
        attributes {subgroup_size=16, work_group_size=[16,1]} {
    parallel {
        %r = constant 16 : index
        %c = constant 8 : index
        %c0 = constant 0 : index
        %a = cooperative_matrix_load.n.both_checked %A[%r,%c] : coopmatrix<f32x16x16,matrix_acc>
        cooperative_matrix_store %a, %B[%c0,%c0]
        cooperative_matrix_store.n.both_checked %a, %A[%c0,%c]
    }
}
"""


@pytest.mark.parametrize("device", ["pvc", "bmg"])
def test_2d_block_load_outside_surface_reads_zero(device):
    assert b"raw_sends" in _gpu_spirv(EDGE, device)
    A = np.asfortranarray(np.arange(32 * 20).reshape(32, 20), np.float32)
    B = np.zeros((16, 16), np.float32, order="F")
    orig = A.copy()
    _compile(EDGE, device).kernel("edge")(A, B)
    want = np.zeros((16, 16), np.float32)
    want[:, :12] = orig[16:32, 8:20]
    np.testing.assert_array_equal(B, want)
    expect_a = orig.copy()
    expect_a[0:16, 8:20] = want[:, :12]  # columns 20.. are outside: not written
    np.testing.assert_array_equal(A, expect_a)


def _mma(ta: str, tc: str, M: int, K: int, N: int) -> str:
    return f"""
func @mma(%A: memref<{ta}x{M}x{K}>, %B: memref<{ta}x{K}x{N}>, %C: memref<{tc}x{M}x{N}>)
        attributes {{subgroup_size=16, work_group_size=[16,1]}} {{
    parallel {{
        %c0 = constant 0 : index
        %a = cooperative_matrix_load %A[%c0,%c0] : coopmatrix<{ta}x{M}x{K},matrix_a>
        %b = cooperative_matrix_load %B[%c0,%c0] : coopmatrix<{ta}x{K}x{N},matrix_b>
        %c = cooperative_matrix_load %C[%c0,%c0] : coopmatrix<{tc}x{M}x{N},matrix_acc>
        %d = cooperative_matrix_mul_add %a, %b, %c : coopmatrix<{tc}x{M}x{N},matrix_acc>
        cooperative_matrix_store %d, %C[%c0,%c0]
    }}
}}
"""


def _typed(x: np.ndarray, ty: str) -> np.ndarray:
    """Small integers or quarters as an array of type ty (bf16 as its bits; exact)."""
    if ty == "bf16":
        return np.asfortranarray((x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16))
    dtype = {"f16": np.float16, "f32": np.float32, "i8": np.int8, "i32": np.int32}[ty]
    return np.asfortranarray(x.astype(dtype))


def _value(x: np.ndarray) -> np.ndarray:
    if x.dtype == np.uint16:
        return (x.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return x.astype(np.float64)


# (A/B type, C type, M, K, N): the DPAS precisions hf, bf, s8 with f32/i32 and f16 accumulators
DPAS = [
    ("f16", "f32", 16, 16, 16),
    ("bf16", "f32", 16, 16, 16),
    ("i8", "i32", 16, 32, 16),
    ("f16", "f16", 16, 16, 16),
]


@pytest.mark.parametrize("device", ["pvc", "bmg"])
@pytest.mark.parametrize("ta,tc,M,K,N", DPAS)
def test_dpas(ta, tc, M, K, N, device):
    src = _mma(ta, tc, M, K, N)
    gpu = _gpu_spirv(src, device)
    assert b"dpas." in gpu
    rng = np.random.default_rng(1)
    scale = 1 if ta == "i8" else 4
    A, B = (_typed(rng.integers(-4, 4, s) / scale, ta) for s in ((M, K), (K, N)))
    C = _typed(rng.integers(-8, 8, (M, N)), tc)
    want = _value(A) @ _value(B) + _value(C)
    _compile(src, device).kernel("mma")(A, B, C)
    np.testing.assert_array_equal(_value(C), want)


@pytest.mark.parametrize("kernel", ["gemm", "private"])
def test_pitch_off_by_one_element_is_caught(monkeypatch, kernel):
    """A 2D block template whose pitch is one element short gives wrong results when
    emulated: the emulator follows the payload, not the compiler's intent. Both with the
    register files in work-group memory (the GEMM) and with private copies (a 64-subgroup
    work-group), where every lane runs the template and lane 0 alone stores."""
    from tinytc_py.spirv.convert import visa

    original = visa._payload

    def broken(p, q, ptr, w, h, pitch, cfg):
        lines = original(p, q, ptr, w, h, pitch, cfg)
        return [
            line.replace(f"{pitch}(0,0)<0;1,0> -1:d", f"{pitch}(0,0)<0;1,0> -5:d") for line in lines
        ]

    monkeypatch.setattr(visa, "_payload", broken)
    import tinytc_py

    src = GEMM if kernel == "gemm" else _lane_writes(64)
    gpu = tinytc_py.compile(src, target="pvc", flags=["no-kernel-cache"]).spirv
    assert b"-5:d" in gpu and b"-1:d" in gpu  # pitch broken, width and height not
    if kernel == "private":
        assert [s for s, _ in _register_storage(emulate_spirv(gpu))["probe"]] == ["Function"]
    prog = _compile(src, "pvc", flags=["no-kernel-cache"])
    if kernel == "gemm":
        got, want = _run_gemm(prog)
    else:
        got, want = _run_lane_writes(prog, 64)
    assert not np.allclose(got, want, rtol=1e-5, atol=1e-4)


def test_unsupported_instruction_is_named():
    data = _gpu_spirv(GEMM, "pvc").replace(b"raw_sends", b"raw_sendx")
    with pytest.raises(UnsupportedConstruct, match="vISA instruction 'raw_sendx'"):
        emulate_spirv(data)


def test_unsupported_extension_is_named():
    data = _gpu_spirv(GEMM, "pvc").replace(b"SPV_INTEL_subgroups", b"SPV_INTEL_subgroupz")
    with pytest.raises(UnsupportedConstruct, match="SPV_INTEL_subgroupz"):
        emulate_spirv(data)


def test_cli(tmp_path):
    from tinytc_py.cli.emulate import main
    from tinytc_py.spirv import validate

    src, out = tmp_path / "in.spv", tmp_path / "out.spv"
    src.write_bytes(_gpu_spirv(GEMM, "bmg"))
    assert main([str(src), "-o", str(out), "--device", "bmg"]) == 0
    validate(out.read_bytes())
    assert b"raw_sends" not in out.read_bytes()
    src.write_bytes(src.read_bytes().replace(b"raw_sends", b"raw_sendx"))
    assert main([str(src), "-o", str(out)]) == 1


def test_subgroup_size_of_another_device_is_an_error():
    import tinytc_py

    cpu = tinytc_py.compile(
        "func @k() attributes {subgroup_size=8} {}", target="cpu", flags=["no-kernel-cache"]
    ).spirv
    with pytest.raises(TinytcError, match="subgroup size 8, which bmg does not have"):
        emulate_spirv(cpu, "bmg")


def test_compile_emulate_names_a_gpu():
    import tinytc_py

    with pytest.raises(ValueError, match="emulate='cpu': expected 'pvc' or 'bmg'"):
        tinytc_py.compile("func @k() {}", emulate="cpu")


def test_kernels_with_different_subgroup_sizes():
    """GPU block reads (2D block at subgroup size 16, subgroup block IO at 32) are emulated
    for their kernel's subgroup size in one module. (The f32 GEMM at subgroup size 32 takes
    no GPU path at all: the 2D block/dpas path needs 16.)"""
    from tinytc_py.spirv.tables import Op

    sg16 = _block_io("f16", 32, 16, "acc")
    sg32 = sg16.replace("@rd", "@rd32").replace("@wr", "@wr32")
    sg32 = sg32.replace(
        "subgroup_size=16, work_group_size=[16,1]", "subgroup_size=32, work_group_size=[32,1]"
    )
    src = sg16 + sg32
    # each kernel takes its GPU path: 2D block (inline vISA) at 16, subgroup block IO at 32
    for one, name, path in (
        (sg16, "rd", Op.AsmCallINTEL),
        (sg32, "rd32", Op.SubgroupBlockReadINTEL),
    ):
        ops = _ops_of(_gpu_spirv(one, "pvc"), name)
        assert ops[path], name
    prog = _compile(src, "pvc")
    i, j = np.indices((32, 16))
    a = np.asfortranarray((7 * i + 3 * j * j + 1) % 120).astype(np.float16)
    for name in ("rd", "rd32"):
        b = np.zeros((33, 16), np.float16, order="F")
        prog.kernel(name)(a, b)
        np.testing.assert_array_equal(b[1:], a, err_msg=name)


def _batched_mma(name: str, wg: int, dpas: bool) -> str:
    """@name: subgroup y of a [16, wg] work-group computes C[:,:,y] += A[:,:,y] @ B[:,:,y] on
    32x32 f16/f32 cooperative matrices (dpas) or copies A[:,:,y] into C[:,:,y] (block IO
    only)."""
    body = (
        """%a = cooperative_matrix_load %a0[%c0,%c0] : coopmatrix<f16x32x32,matrix_a>
        %b = cooperative_matrix_load %b0[%c0,%c0] : coopmatrix<f16x32x32,matrix_b>
        %c = cooperative_matrix_load %c0v[%c0,%c0] : coopmatrix<f32x32x32,matrix_acc>
        %d = cooperative_matrix_mul_add %a, %b, %c : coopmatrix<f32x32x32,matrix_acc>"""
        if dpas
        else """%a = cooperative_matrix_load %a0[%c0,%c0] : coopmatrix<f16x32x32,matrix_acc>
        %d = cast %a : coopmatrix<f32x32x32,matrix_acc>"""
    )
    return f"""
func @{name}(%A: memref<f16x32x32x{wg}>, %B: memref<f16x32x32x{wg}>, %C: memref<f32x32x32x{wg}>)
        attributes {{subgroup_size=16, work_group_size=[16,{wg}]}} {{
    parallel {{
        %c0 = constant 0 : index
        %y = subgroup_id.y : i32
        %sg = cast %y : index
        %a0 = subview %A[0:32,0:32,%sg] : memref<f16x32x32>
        %b0 = subview %B[0:32,0:32,%sg] : memref<f16x32x32>
        %c0v = subview %C[0:32,0:32,%sg] : memref<f32x32x32>
        {body}
        cooperative_matrix_store %d, %c0v[%c0,%c0]
    }}
}}
"""


def _register_storage(spirv: bytes) -> dict[str, list[tuple[str, int]]]:
    """Per kernel name: the register-file arrays it uses, as (storage class, bytes)."""
    from tinytc_py.emulate.reader import read_module
    from tinytc_py.spirv.module import iter_instructions
    from tinytc_py.spirv.tables import Op, StorageClass

    mod = read_module(spirv)
    g = mod.globals
    sizes, consts, arrays, pointers, variables = {}, {}, {}, {}, {}
    for op, off, _ in iter_instructions(g):
        if op == Op.TypeInt:
            sizes[g[off + 1]] = g[off + 2] // 8
        elif op == Op.Constant:
            consts[g[off + 2]] = g[off + 3]
        elif op == Op.TypeFloat:
            sizes[g[off + 1]] = g[off + 2] // 8
        elif op == Op.TypeArray and g[off + 2] in sizes:
            arrays[g[off + 1]] = sizes[g[off + 2]] * consts[g[off + 3]]
        elif op == Op.TypePointer and g[off + 3] in arrays:
            pointers[g[off + 1]] = arrays[g[off + 3]]
        elif op == Op.Variable and g[off + 3] == StorageClass.Workgroup:
            variables[g[off + 2]] = ("Workgroup", pointers[g[off + 1]])
    ids = {f.id: f for f in mod.functions}
    out = {}
    for fid, name in _entry_names(mod):
        code = ids[fid].code
        used = {w for _, off, n in iter_instructions(code) for w in code[off + 1 : off + n]}
        found = [v for k, v in variables.items() if k in used]
        found += [
            ("Function", pointers[code[off + 1]])
            for op, off, _ in iter_instructions(code)
            if op == Op.Variable and code[off + 1] in pointers
        ]
        out[name] = found
    return out


def test_register_files_of_a_big_work_group():
    """64 subgroups of 32x32x32 f16 DPAS need 64 register files of 12 KiB, more than the CPU
    device's local memory (the launch failed with OUT_OF_RESOURCES): such a kernel keeps a
    copy per work-item. A kernel with smaller files in the same module gets a Workgroup
    array sized by its own files, not the module's largest."""
    big, copy = _batched_mma("big", 64, True), _batched_mma("copy", 8, False)
    emulated = emulate_spirv(_gpu_spirv(big + copy, "pvc"))
    storage = _register_storage(emulated)
    assert [s for s, _ in storage["big"]] == ["Function"]
    assert storage["big"][0][1] >= 12 * 1024
    ((space, size),) = storage["copy"]
    assert space == "Workgroup" and size < 8 * storage["big"][0][1] and size % (8 * 64) == 0
    prog = _compile(big + copy, "pvc")
    rng = np.random.default_rng(2)
    A, B = (np.asfortranarray(rng.integers(-4, 4, (32, 32, 64)) / 4, np.float16) for _ in "AB")
    C = np.asfortranarray(rng.integers(-8, 8, (32, 32, 64)), np.float32)
    want = np.einsum("ikb,kjb->ijb", A.astype(np.float64), B.astype(np.float64)) + C
    prog.kernel("big")(A, B, C)
    np.testing.assert_array_equal(C, want)
    C = np.zeros((32, 32, 8), np.float32, order="F")
    prog.kernel("copy")(A[:, :, :8].copy(order="F"), B[:, :, :8].copy(order="F"), C)
    np.testing.assert_array_equal(C, A[:, :, :8].astype(np.float32))


def _lane_writes(wg: int) -> str:
    """@probe: each lane of subgroup y adds 1 to its columns of A[:,:,y] (per-lane stores),
    then the subgroup block-loads A[:,:,y] as a 32x32 f16 matrix (asm with uniform inputs
    only) and stores it to C[:,:,y] as f32."""
    return f"""
func @probe(%A: memref<f16x32x32x{wg}>, %C: memref<f32x32x32x{wg}>)
        attributes {{subgroup_size=16, work_group_size=[16,{wg}]}} {{
    parallel {{
        %c0 = constant 0 : index
        %c16 = constant 16 : index
        %c32 = constant 32 : index
        %y = subgroup_id.y : i32
        %sg = cast %y : index
        %l = subgroup_local_id : i32
        %p = cast %l : index
        %a0 = subview %A[0:32,0:32,%sg] : memref<f16x32x32>
        %c0v = subview %C[0:32,0:32,%sg] : memref<f32x32x32>
        %one = constant 1.0 : f16
        for %j=%p,%c32,%c16 {{
            for %i=%c0,%c32 {{
                %x = load %a0[%i,%j] : f16
                %z = add %x, %one : f16
                store %z, %a0[%i,%j]
            }}
        }}
        %a = cooperative_matrix_load %a0[%c0,%c0] : coopmatrix<f16x32x32,matrix_acc>
        %d = cast %a : coopmatrix<f32x32x32,matrix_acc>
        cooperative_matrix_store %d, %c0v[%c0,%c0]
    }}
}}
"""


def _run_lane_writes(prog, wg: int):
    rng = np.random.default_rng(2)
    A = np.asfortranarray(rng.integers(-4, 4, (32, 32, wg)), np.float16)
    want = A.astype(np.float32) + 1
    C = np.zeros((32, 32, wg), np.float32, order="F")
    prog.kernel("probe")(A, C)
    return C, want


def test_private_copies_see_the_lanes_writes():
    """With private register files (64 subgroups), the lanes' own stores before an asm with
    uniform inputs only (a 2D block load) are visible to it; its stores come from lane 0
    only: every store of the program function is under the lane-0 condition."""
    from tinytc_py.emulate.reader import read_module
    from tinytc_py.spirv.module import iter_instructions
    from tinytc_py.spirv.tables import BuiltIn, Decoration, FunctionControl, Op

    emulated = emulate_spirv(_gpu_spirv(_lane_writes(64), "pvc"))
    assert [s for s, _ in _register_storage(emulated)["probe"]] == ["Function"]
    mod = read_module(emulated)
    an = mod.annotations
    lane_var = next(
        an[off + 1]
        for op, off, n in iter_instructions(an)
        if op == Op.Decorate
        and an[off + 2] == Decoration.BuiltIn
        and an[off + 3] == BuiltIn.SubgroupLocalInvocationId
    )
    zero = {
        mod.globals[off + 2]
        for op, off, n in iter_instructions(mod.globals)
        if op == Op.Constant and n == 4 and mod.globals[off + 3] == 0
    }
    programs = [f for f in mod.functions if f.code and f.code[3] & FunctionControl.DontInline]
    assert programs
    stores = 0
    for f in programs:
        code = f.code
        defs = {
            code[off + 2]: (op, list(code[off + 3 : off + n]))
            for op, off, n in iter_instructions(code)
            if n > 2
        }
        writer = {
            r
            for r, (op, args) in defs.items()
            if op == Op.IEqual and defs.get(args[0]) == (Op.Load, [lane_var]) and args[1] in zero
        }
        assert writer, "no lane-0 condition in the program function"
        guard, label = {}, 0
        for op, off, _n in iter_instructions(code):
            if op == Op.Label:
                label = code[off + 1]
            elif op == Op.BranchConditional:
                guard[code[off + 2]] = code[off + 1]
            elif op == Op.Store and defs.get(code[off + 1], (0,))[0] == Op.ConvertUToPtr:
                stores += 1
                cond = defs[guard[label]]
                assert cond[0] == Op.LogicalAnd and set(cond[1]) & writer
    assert stores
    prog = _compile(_lane_writes(64), "pvc")
    got, want = _run_lane_writes(prog, 64)
    np.testing.assert_array_equal(got, want)


def _own_local_memory(n: int, wg: int = 8) -> str:
    """@k: subgroup y copies A[:,:,y] (f16) to C[:,:,y] (f32) by 2D block IO, and the
    work-group reverses O (n f32) through its own local memory."""
    return f"""
func @k(%A: memref<f16x32x32x{wg}>, %C: memref<f32x32x32x{wg}>, %O: memref<f32x{n}>)
        attributes {{subgroup_size=16, work_group_size=[16,{wg}]}} {{
    %tmp = alloca : memref<f32x{n},local>
    parallel {{
        %c0 = constant 0 : index
        %c1 = constant 1 : index
        %c16 = constant 16 : index
        %step = constant {16 * wg} : index
        %y = subgroup_id.y : i32
        %sg = cast %y : index
        %a0 = subview %A[0:32,0:32,%sg] : memref<f16x32x32>
        %c0v = subview %C[0:32,0:32,%sg] : memref<f32x32x32>
        %a = cooperative_matrix_load %a0[%c0,%c0] : coopmatrix<f16x32x32,matrix_acc>
        %d = cast %a : coopmatrix<f32x32x32,matrix_acc>
        cooperative_matrix_store %d, %c0v[%c0,%c0]
        %l = subgroup_local_id : i32
        %p0 = cast %l : index
        %yy = mul %sg, %c16 : index
        %p = add %yy, %p0 : index
        %n = constant {n} : index
        for %i=%p,%n,%step {{
            %v = load %O[%i] : f32
            store %v, %tmp[%i]
        }}
        barrier.local
        for %i=%p,%n,%step {{
            %j = sub %n, %i : index
            %j1 = sub %j, %c1 : index
            %v = load %tmp[%j1] : f32
            store %v, %O[%i]
        }}
    }}
}}
"""


def test_register_files_leave_room_for_the_kernels_local_memory():
    """8 subgroups' register files fit the shared budget, but not beside 221 KiB of the
    kernel's own local memory in the device's 256 KiB (the launch failed with
    OUT_OF_RESOURCES): such a kernel keeps private copies, and runs correctly."""
    from tinytc_py.emulate import local_memory
    from tinytc_py.runtime import device as rt

    small, big = 1024, 221 * 256
    files = 8 * 4544  # 8 subgroups' register files of a 32x32 f16 block load and f32 store
    storage = _register_storage(emulate_spirv(_gpu_spirv(_own_local_memory(small), "pvc")))
    assert storage["k"] == [("Workgroup", 4 * small), ("Workgroup", files)]
    gpu = _gpu_spirv(_own_local_memory(big), "pvc")
    assert _register_storage(emulate_spirv(gpu))["k"] == [
        ("Workgroup", 4 * big),
        ("Function", files // 8),
    ]
    # on a device with more local memory the same kernel shares its files
    wide = _register_storage(emulate_spirv(gpu, local_memory=1 << 20))["k"]
    assert wide == [("Workgroup", 4 * big), ("Workgroup", files)]
    prog = _compile(_own_local_memory(big), "pvc")
    import tinytc_py

    assert local_memory(tinytc_py.Device("opencl", "cpu", rt.default_device())) >= 32 * 1024
    rng = np.random.default_rng(3)
    A = np.asfortranarray(rng.integers(-4, 4, (32, 32, 8)), np.float16)
    C = np.zeros((32, 32, 8), np.float32, order="F")
    O = np.arange(big, dtype=np.float32)
    prog.kernel("k")(A, C, O)
    np.testing.assert_array_equal(C, A.astype(np.float32))
    np.testing.assert_array_equal(O, np.arange(big, dtype=np.float32)[::-1])


def test_private_register_file_limit_is_named(monkeypatch):
    """A register file larger than a work-item's private copy may be, in a work-group whose
    files do not fit in local memory, is an error naming the kernel."""
    from tinytc_py.emulate import rewrite

    gpu = _gpu_spirv(_lane_writes(64), "pvc")
    monkeypatch.setattr(rewrite, "PRIVATE_REGISTER_LIMIT", 1024)
    with pytest.raises(UnsupportedConstruct, match=r"kernel 'probe'.* exceeds the 1024 bytes"):
        emulate_spirv(gpu)
