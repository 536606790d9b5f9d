/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A minimal Criterion-compatible runner, used ONLY in the ThreadSanitizer
 * configuration (--config=tsan).
 *
 * Why: Criterion 2.4's BoxFort sandbox maps an "inheritable arena" at
 * addresses ThreadSanitizer reserves for its shadow memory, so every
 * Criterion binary built with -fsanitize=thread aborts with "Could not
 * initialize inheritable arena" (Snaipe/Criterion issue #274, open).  The
 * test sources stay written against Criterion's API; under TSan this
 * header (found first via -isystem) provides the subset they use:
 * Test(suite, name, .init, .fini, .timeout, .signal, .disabled),
 * cr_assert*, cr_expect*,
 * and a runner that forks one child per test, enforces the timeout,
 * checks the expected signal, prints Criterion's synthesis line and writes
 * a JUnit report to $XML_OUTPUT_FILE.  Tests run one at a time.
 */
#ifndef RK_CRSHIM_CRITERION_H
#define RK_CRSHIM_CRITERION_H

#include <stdbool.h>
#include <stddef.h>

struct rk_cr_test {
	const char *suite;
	const char *name;
	void (*fn)(void);
	void (*init)(void);	/* fixture run before fn, in the child */
	void (*fini)(void);	/* fixture run after fn, in the child */
	double timeout;	/* seconds; 0 = none */
	int signal;	/* expected terminating signal; 0 = exit 0 */
	int exit_code;
	bool disabled;
	const char *description;
	struct rk_cr_test *next;
};

void rk_cr_register(struct rk_cr_test *t);
void rk_cr_report(bool fatal, const char *file, int line, const char *expr,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#define Test(S, N, ...)                                                      \
	static void S##_##N##_impl(void);                                    \
	static struct rk_cr_test S##_##N##_desc = {                          \
		.suite = #S, .name = #N, .fn = S##_##N##_impl, __VA_ARGS__   \
	};                                                                   \
	__attribute__((constructor)) static void S##_##N##_reg(void)         \
	{                                                                    \
		rk_cr_register(&S##_##N##_desc);                             \
	}                                                                    \
	static void S##_##N##_impl(void)

/* The optional trailing arguments are a printf format and its values;
 * "" fmt concatenates with the format literal when one is given. */
#define RK_CR_CHECK(fatal, cond, expr, ...)                                  \
	do {                                                                 \
		if (!(cond))                                                 \
			rk_cr_report((fatal), __FILE__, __LINE__, (expr),    \
				     "" __VA_ARGS__);                        \
	} while (0)

#define cr_assert(c, ...) RK_CR_CHECK(true, (c), #c, __VA_ARGS__)
#define cr_expect(c, ...) RK_CR_CHECK(false, (c), #c, __VA_ARGS__)
#define cr_assert_not(c, ...) RK_CR_CHECK(true, !(c), "!(" #c ")", __VA_ARGS__)
#define cr_expect_not(c, ...) RK_CR_CHECK(false, !(c), "!(" #c ")", __VA_ARGS__)
#define cr_assert_fail(...) RK_CR_CHECK(true, 0, "fail", __VA_ARGS__)
#define cr_expect_fail(...) RK_CR_CHECK(false, 0, "fail", __VA_ARGS__)

#define RK_CR_CMP(fatal, a, op, b, ...)                                      \
	RK_CR_CHECK((fatal), (a) op (b), #a " " #op " " #b, __VA_ARGS__)

#define cr_assert_eq(a, b, ...) RK_CR_CMP(true, a, ==, b, __VA_ARGS__)
#define cr_assert_neq(a, b, ...) RK_CR_CMP(true, a, !=, b, __VA_ARGS__)
#define cr_assert_lt(a, b, ...) RK_CR_CMP(true, a, <, b, __VA_ARGS__)
#define cr_assert_leq(a, b, ...) RK_CR_CMP(true, a, <=, b, __VA_ARGS__)
#define cr_assert_gt(a, b, ...) RK_CR_CMP(true, a, >, b, __VA_ARGS__)
#define cr_assert_geq(a, b, ...) RK_CR_CMP(true, a, >=, b, __VA_ARGS__)
#define cr_expect_eq(a, b, ...) RK_CR_CMP(false, a, ==, b, __VA_ARGS__)
#define cr_expect_neq(a, b, ...) RK_CR_CMP(false, a, !=, b, __VA_ARGS__)
#define cr_expect_lt(a, b, ...) RK_CR_CMP(false, a, <, b, __VA_ARGS__)
#define cr_expect_leq(a, b, ...) RK_CR_CMP(false, a, <=, b, __VA_ARGS__)
#define cr_expect_gt(a, b, ...) RK_CR_CMP(false, a, >, b, __VA_ARGS__)
#define cr_expect_geq(a, b, ...) RK_CR_CMP(false, a, >=, b, __VA_ARGS__)
#define cr_assert_null(p, ...) RK_CR_CHECK(true, (p) == NULL, #p " == NULL", __VA_ARGS__)
#define cr_expect_null(p, ...) RK_CR_CHECK(false, (p) == NULL, #p " == NULL", __VA_ARGS__)
#define cr_assert_not_null(p, ...) RK_CR_CHECK(true, (p) != NULL, #p " != NULL", __VA_ARGS__)
#define cr_expect_not_null(p, ...) RK_CR_CHECK(false, (p) != NULL, #p " != NULL", __VA_ARGS__)

#endif /* RK_CRSHIM_CRITERION_H */
