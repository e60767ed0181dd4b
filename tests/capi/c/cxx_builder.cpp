// The C++ API without a device: builder (region_builder, loops, branches, attributes), printing,
// the parser, passes, compilation to SPIR-V, exceptions carrying status and location, handle
// semantics, array views and host fp16/bf16. Prints the program text, then "ok".
#include "cxx_kernels.hpp"

#include <array>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

using namespace tinytc;

namespace {

std::vector<std::string> reported;

void collect(char const *what, const tinytc_location_t *, void *) { reported.emplace_back(what); }

void builder_and_compile() {
    auto ctx = create_compiler_context();
    set_error_reporter(ctx.get(), collect);
    auto prog = make_kernels(ctx.get());

    // branches: ifelse with a result and a one-armed if
    auto f32 = get<f32_type>(ctx.get());
    auto i32 = get<i32_type>(ctx.get());
    auto boolean = get<boolean_type>(ctx.get());
    auto fn = create_func("select", {i32, i32}, get<void_type>(ctx.get()));
    auto wgs = tinytc_named_attr_t{
        get<string_attr>(ctx.get(), "work_group_size"),
        get<array_attr>(ctx.get(), array_view{get<integer_attr>(ctx.get(), 32),
                                              get<integer_attr>(ctx.get(), 1)})};
    set_attr(fn.get(), get_dictionary_attr_with_sorted(ctx.get(), wgs));
    auto p = std::array<tinytc_value_t, 2u>{};
    CHECK(get_parameters(get_body(fn.get()), p) == 2);
    auto bb = region_builder{get_body(fn.get())};
    auto cond = bb.create<less_than_inst>(p[0], p[1], boolean);
    auto chosen = bb.ifelse(
        cond,
        [&](region_builder &then) { then.create<yield_inst>(array_view<tinytc_value_t>{p[0]}); },
        [&](region_builder &other) { other.create<yield_inst>(array_view<tinytc_value_t>{p[1]}); },
        {i32});
    CHECK(chosen.size() == 1 && get_type(chosen[0]) == i32);
    set_name(chosen[0], "smaller");
    CHECK(std::strcmp(get_name(chosen[0]), "smaller") == 0);
    bb.if_condition(cond, [&](region_builder &then) {
        then.create<constant_inst>(1.5, f32);
        then.create<barrier_inst>(tinytc_address_space_global);
    });
    add_function(prog.get(), std::move(fn));

    auto text = print_to_string(prog.get());
    auto printed = std::string(text.get());
    std::printf("%s", printed.c_str());
    for (char const *expected : {"func @axpy(%alpha: f32", "func @total(", "func @select(",
                                 "work_group_size", "for ", "if ", "%smaller"}) {
        CHECK(printed.find(expected) != std::string::npos);
    }

    // the printed text parses again, and both compile to a SPIR-V binary
    auto again = parse_string(printed, ctx.get());
    auto info = create_core_info_intel_from_arch(intel_gpu_architecture::pvc);
    CHECK(get_subgroup_sizes(info.get()).size() > 0);
    CHECK(get_register_space(info.get()) > 0);
    for (auto const &program : {prog, again}) {
        auto bin = compile_to_spirv_and_assemble(program.get(), info.get());
        auto raw = get_raw(bin.get());
        CHECK(raw.format == bundle_format::spirv);
        CHECK(raw.data_size > 20 && raw.data[0] == 0x03 && raw.data[3] == 0x07); // magic 0x07230203
        CHECK(get_compiler_context(bin.get()) == ctx);
    }
    auto mod = compile_to_spirv(prog.get(), info.get());
    auto spirv_text = print_to_string(mod.get());
    CHECK(std::string(spirv_text.get()).find("OpEntryPoint Kernel") != std::string::npos);

    std::size_t n = 0;
    char const *const *names = nullptr;
    list_function_passes(n, names);
    CHECK(n > 0);
    run_function_pass(names[0], again.get(), info.get());
    try {
        run_function_pass("no-such-pass", again.get(), info.get());
        CHECK(false);
    } catch (status s) {
        CHECK(s == status::unknown_pass_name);
    }
}

void errors() {
    auto ctx = create_compiler_context();
    set_error_reporter(ctx.get(), collect);
    reported.clear();
    try {
        parse_string("func @broken(%a: f32) { %b = add %a, %a : i32 \n", ctx.get());
        CHECK(false);
    } catch (status s) {
        CHECK(s == status::parse_error);
        CHECK(std::string(to_string(s)) == tinytc_status_to_string(tinytc_status_parse_error));
    }
    CHECK(!reported.empty());

    // a builder error carries the status and the location given to the creator
    auto f32 = get<f32_type>(ctx.get());
    auto i32 = get<i32_type>(ctx.get());
    auto fn = create_func("mismatch", {f32, i32}, get<void_type>(ctx.get()));
    auto p = std::array<tinytc_value_t, 2u>{};
    get_parameters(get_body(fn.get()), p);
    auto loc = location{{1, 7, 3}, {1, 7, 12}};
    try {
        create<add_inst>(p[0], p[1], f32, loc);
        CHECK(false);
    } catch (builder_error const &e) {
        CHECK(e.code() != status::success);
        CHECK(e.loc().begin.line == 7 && e.loc().begin.column == 3 && e.loc().end.column == 12);
        CHECK(std::string(e.what()) == to_string(e.code()));
    }
    try {
        get<memref_type>(f32, array_view<std::int64_t>{4, 4}, array_view<std::int64_t>{1},
                         address_space::global);
        CHECK(false);
    } catch (status s) {
        CHECK(s == status::ir_shape_stride_mismatch);
    }
}

void handles_and_views() {
    auto ctx = create_compiler_context();
    auto a = create_prog(ctx.get());
    auto b = a; // retain
    CHECK(a == b && a.get() != nullptr);
    auto c = std::move(b);
    CHECK(!b && c == a);
    c = shared_handle<tinytc_prog_t>{};
    CHECK(!c && a);
    CHECK(get_compiler_context(a.get()) == ctx);

    auto vec = std::vector<int>{1, 2, 3};
    auto arr = std::array<int, 3u>{1, 2, 3};
    CHECK(array_view<int>(vec) == array_view<int>(arr));
    CHECK(array_view<int>(vec).size() == 3 && array_view<int>(vec).back() == 3);
    auto mv = mutable_array_view<int>(vec);
    mv[0] = 7;
    CHECK(vec[0] == 7 && std::vector<int>(array_view<int>(vec)) == vec);
    CHECK(array_view<int>{}.empty());

    CHECK(half(1.5f).bits() == 0x3e00 && float(half::from_bits(0x3c00)) == 1.0f);
    CHECK(bfloat16(1.0f).bits() == 0x3f80 && float(bfloat16(-2.0f)) == -2.0f);
    auto h = half(0.5f);
    h += half(0.25f);
    CHECK(float(h) == 0.75f && h > half(0.5f) && -h == half(-0.75f));
    CHECK(float(half(65536.0f)) > 65504.0f); // rounds to infinity
    CHECK(is_dynamic_value(dynamic) && !is_dynamic_value(0));
    CHECK(std::string(to_string(transpose::T)) == tinytc_transpose_to_string(tinytc_transpose_T));
}

} // namespace

int main() {
    return run_test([] {
        builder_and_compile();
        errors();
        handles_and_views();
    });
}
