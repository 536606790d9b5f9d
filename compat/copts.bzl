"""Compiler flags shared by every target of ridr-kit (one place)."""

# Our own code: C11 (GNU dialect for statement expressions and typeof, as
# the kernel), every warning an error.
RK_COPTS = [
    "-std=gnu11",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wshadow",
    "-Wstrict-prototypes",
    "-Wmissing-prototypes",
    "-Wno-unused-parameter",
]

# Tests and benchmarks: same checks; Criterion's macros need a relaxed
# prototype rule.
RK_TEST_COPTS = [
    "-std=gnu11",
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wno-unused-parameter",
    "-Wno-missing-field-initializers",
    "-Wno-format-zero-length",
]
