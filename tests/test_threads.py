"""Python threads compiling at once: eight threads parse, compile (with spirv-val) and print
different programs concurrently, each getting the binary a single-threaded compile gives."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from tinytc_py.compiler import compile_to_spirv
from tinytc_py.text.dialect import parse


def source(k: int) -> str:
    return (
        "func @k(%A: memref<f32x?x?>, %x: f32) {\n"
        f"    %c = constant {k}.5 : f32\n"
        "    %y = mul %x, %c : f32\n"
        "    %z = constant 0 : index\n"
        "    %m = size %A[0] : index\n"
        "    %n = size %A[1] : index\n"
        "    foreach (%i, %j) = (%z, %z), (%m, %n) {\n"
        "        store %y, %A[%i, %j]\n"
        "    }\n"
        "}\n"
    )


def compile_one(k: int) -> bytes:
    return compile_to_spirv(parse(source(k))).data


def test_eight_threads_compile_at_once():
    jobs = list(range(32))
    want = [compile_one(k) for k in jobs]
    with ThreadPoolExecutor(max_workers=8) as pool:
        got = list(pool.map(compile_one, jobs))
    assert got == want
    assert len(set(got)) == len(jobs)  # each program is its own
