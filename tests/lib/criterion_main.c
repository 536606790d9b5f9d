// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * main() for every Criterion suite: Criterion's own, plus a JUnit XML
 * report in $XML_OUTPUT_FILE when Bazel asks for one, so bazel-testlogs
 * holds one <testcase> per Criterion test and .ci/run can count them.
 */
#include <criterion/criterion.h>
#include <criterion/output.h>
#include <stdlib.h>

int main(int argc, char *argv[]);

int main(int argc, char *argv[])
{
	struct criterion_test_set *tests = criterion_initialize();
	const char *xml = getenv("XML_OUTPUT_FILE");
	int result = 0;

	if (xml && *xml)
		criterion_add_output("xml", xml);
	if (criterion_handle_args(argc, argv, true))
		result = !criterion_run_all_tests(tests);
	criterion_finalize(tests);
	return result;
}
