// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Runner for the ThreadSanitizer configuration (see criterion/criterion.h
 * beside this file for why Criterion itself cannot run under TSan).
 *
 * Each test runs in a forked child of the single-threaded runner: a
 * crash, a TSan report (halt_on_error=1) or a failed assertion ends only
 * that child.  The parent enforces the timeout, compares the way the
 * child ended with the expected signal/exit code, prints a Criterion-style
 * line per test and the synthesis line, and writes a JUnit report.
 */
#define _GNU_SOURCE
#include "criterion/criterion.h"

#include <errno.h>
#include <fnmatch.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static struct rk_cr_test *tests;
static int failed_expectations;	/* in the child */

void rk_cr_register(struct rk_cr_test *t)
{
	struct rk_cr_test **pp = &tests;

	/* Keep registration order stable: append. */
	while (*pp)
		pp = &(*pp)->next;
	t->next = NULL;
	*pp = t;
}

void rk_cr_report(bool fatal, const char *file, int line, const char *expr,
		  const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "[----] %s:%d: %s\n[----]   %s", file, line,
		fatal ? "Assertion Failed" : "Expectation Failed", expr);
	if (fmt && *fmt) {
		fputs(": ", stderr);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
	}
	fputc('\n', stderr);
	fflush(stderr);
	if (fatal)
		_exit(1);	/* from any thread: the whole test fails */
	__atomic_add_fetch(&failed_expectations, 1, __ATOMIC_RELAXED);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

enum outcome { PASSED, FAILED, CRASHED, TIMED_OUT };

static enum outcome run_one(struct rk_cr_test *t, double *secs, char *why,
			    size_t whylen)
{
	double start = now();
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		snprintf(why, whylen, "fork: %s", strerror(errno));
		return CRASHED;
	}
	if (pid == 0) {
		if (t->init)
			t->init();
		t->fn();
		if (t->fini)
			t->fini();
		fflush(NULL);
		_exit(__atomic_load_n(&failed_expectations, __ATOMIC_RELAXED)
		      ? 1 : 0);
	}
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (t->timeout > 0 && now() - start > t->timeout) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			*secs = now() - start;
			snprintf(why, whylen, "timed out after %.0f s",
				 t->timeout);
			return TIMED_OUT;
		}
		usleep(2000);
	}
	*secs = now() - start;
	if (WIFSIGNALED(status)) {
		if (t->signal && WTERMSIG(status) == t->signal)
			return PASSED;
		snprintf(why, whylen, "killed by signal %d (%s)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
		return CRASHED;
	}
	if (t->signal) {
		snprintf(why, whylen, "expected signal %d, exited %d",
			 t->signal, WEXITSTATUS(status));
		return FAILED;
	}
	if (WEXITSTATUS(status) != t->exit_code) {
		snprintf(why, whylen, "exit status %d", WEXITSTATUS(status));
		return FAILED;
	}
	return PASSED;
}

static void xml_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

int main(int argc, char **argv)
{
	static const char *names[] = { "PASSED", "FAILED", "CRASHED",
				       "TIMED_OUT" };
	const char *filter = NULL;
	const char *xml = getenv("XML_OUTPUT_FILE");
	int tested = 0, passing = 0, failing = 0, crashing = 0;
	FILE *x = NULL;

	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--filter=", 9))
			filter = argv[i] + 9;
		else if (!strcmp(argv[i], "--filter") && i + 1 < argc)
			filter = argv[++i];
	}
	if (xml && *xml) {
		x = fopen(xml, "w");
		if (x)
			fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			      "<!-- ridr-kit TSan runner (Criterion API) -->\n"
			      "<testsuites name=\"Criterion Tests\">\n", x);
	}
	for (struct rk_cr_test *t = tests; t; t = t->next) {
		char full[512], why[256] = "";
		double secs = 0;
		enum outcome o;

		snprintf(full, sizeof(full), "%s/%s", t->suite, t->name);
		if (t->disabled || (filter && fnmatch(filter, full, 0)))
			continue;
		tested++;
		o = run_one(t, &secs, why, sizeof(why));
		if (o == PASSED)
			passing++;
		else if (o == FAILED)
			failing++;
		else
			crashing++;
		fprintf(stderr, "[%s] %s::%s: (%.2fs)%s%s\n",
			o == PASSED ? "PASS" : "FAIL", t->suite, t->name, secs,
			*why ? " " : "", why);
		if (x) {
			fprintf(x, "  <testsuite name=\"%s\">\n"
				   "    <testcase name=\"%s\" status=\"%s\" "
				   "time=\"%.3f\">\n",
				t->suite, t->name, names[o], secs);
			if (o != PASSED) {
				fputs("      <failure message=\"", x);
				xml_escape(x, why);
				fputs("\"/>\n", x);
			}
			fputs("    </testcase>\n  </testsuite>\n", x);
		}
	}
	if (x) {
		fputs("</testsuites>\n", x);
		fclose(x);
	}
	fprintf(stderr, "[====] Synthesis: Tested: %d | Passing: %d | "
			"Failing: %d | Crashing: %d \n",
		tested, passing, failing, crashing);
	return failing || crashing ? 1 : 0;
}
