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
