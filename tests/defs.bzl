"""Criterion test macro shared by the suites."""

load("//compat:copts.bzl", "RK_TEST_COPTS")

def rk_criterion_test(name, srcs, deps, size = "medium", tags = [], data = [], **kwargs):
    """A Criterion suite; TSAN_OPTIONS finds the suppressions in runfiles."""
    native.cc_test(
        name = name,
        data = data + ["//third_party:tsan.supp"],
        srcs = srcs,
        copts = RK_TEST_COPTS,
        size = size,
        tags = tags,
        deps = deps + ["//tests/lib:testutil"] + select({
            # Criterion cannot run under ThreadSanitizer (see
            # tests/lib/crshim/criterion/criterion.h): same API, own runner.
            "//third_party:tsan": ["//tests/lib/crshim"],
            "//conditions:default": [
                "//tests/lib:criterion_main",
                "//third_party:criterion",
            ],
        }),
        **kwargs
    )

# The C++ standards the public headers must compile as (issue 12).  g++ 12
# spells C++23 "c++2b".
RK_CXX_STDS = {
    "cxx11": "-std=c++11",
    "cxx14": "-std=c++14",
    "cxx17": "-std=c++17",
    "cxx20": "-std=c++20",
    "cxx23": "-std=c++2b",
}

def rk_cxx_std_tests(name, srcs, deps, size = "small", **kwargs):
    """One cc_test per C++ standard: NAME_cxx11 ... NAME_cxx23.

    Every warning fatal, ISO mode (-pedantic), so a C-only construct in a
    public header fails the build of the standard that rejects it.  A
    test_suite NAME runs them all.
    """
    tests = []
    for suffix, std in RK_CXX_STDS.items():
        native.cc_test(
            name = name + "_" + suffix,
            srcs = srcs,
            copts = [
                std,
                "-Wall",
                "-Wextra",
                "-pedantic",
                "-Werror",
            ],
            data = ["//third_party:tsan.supp"],
            size = size,
            deps = deps,
            **kwargs
        )
        tests.append(":" + name + "_" + suffix)
    native.test_suite(name = name, tests = tests)
