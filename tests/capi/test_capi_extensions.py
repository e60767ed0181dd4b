"""The language extensions through libtinytc.so (tests/capi/c/extensions.c): global data, the
derived instruction creators, restrictions as status codes, valid SPIR-V, and the extensions
flag rejecting them with a located report."""

from __future__ import annotations

from .test_capi_core import spirv_val

PROGRAM = """\
global @tab : memref<f32x4> = dense<[0x1p+0, 0x1.4p+1, -0x1.8p+1, 0x1p-2]>
global @ctab : memref<c32x2> = dense<[[0x1p+0,-0x1p+1], [0x1p-1,0x0p+0]]>

func @k(%o: memref<f32x4>, %x: f32, %n: i32) {
    %0 = global_ref @tab : memref<f32x4>
    parallel {
        %1 = subgroup_local_id : i32
        %2 = subgroup_shuffle_xor %x, %n : f32
        %3 = sqrt %2 : f32
        %4 = work_group_reduce_add %3 : f32
        %5 = less_than %4, %x : bool
        %6 = select %5, %4, %3 : f32
        %7 = bitcast %6 : i32
        %8 = pow %6, %x : f32
        %9 = fma %8, %8, %6 : f32
        printf "lane %d: %f %d\\n", %1, %9, %7
        %10 = sqrt %x : f32
        %11 = rsqrt %x : f32
        %12 = tanh %x : f32
        %13 = erf %x : f32
        %14 = floor %x : f32
        %15 = ceil %x : f32
        %16 = round %x : f32
        %17 = trunc %x : f32
        %18 = work_group_exclusive_scan_add %x : f32
        %19 = work_group_exclusive_scan_max %x : f32
        %20 = work_group_exclusive_scan_min %x : f32
        %21 = work_group_inclusive_scan_add %x : f32
        %22 = work_group_inclusive_scan_max %x : f32
        %23 = work_group_inclusive_scan_min %x : f32
        %24 = work_group_reduce_add %x : f32
        %25 = work_group_reduce_max %x : f32
        %26 = work_group_reduce_min %x : f32
        %27 = subgroup_shuffle %x, %n : f32
        %28 = subgroup_shuffle_xor %x, %n : f32
        %29 = subgroup_shuffle_up %x, %n : f32
        %30 = subgroup_shuffle_down %x, %n : f32
        %31 = work_group_broadcast %x, %n : f32
    }
}
"""


def test_extensions_c_api(compile_c, tmp_path):
    spv = tmp_path / "ext.spv"
    result = compile_c("extensions.c").run(str(spv))
    program, _, report = result.stdout.partition("reported at ")
    assert program == PROGRAM
    spirv_val(spv)
    # the location given to tinytc_global_ref_inst_create (line 7, column 5)
    assert report.startswith(
        "7.5: 7.5-29: Language extension used while extensions are disabled ('global_ref' is a "
        "tinytc-py language extension, but extensions are disabled"
    ), report
