/* SPDX-License-Identifier: MIT */
/*
 * exitcode=N with other libraries' destructors and forked children (issue
 * 12 item 9), checked by check-exitcode.sh.  "report": one report, then a
 * clean forked child, then normal exit with stdout buffered.  "clean": no
 * report.  "child-reports": a clean parent whose child reports.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void exit_lib_report(void);

static void report(void)
{
	exit_lib_report();
}

static int child_status(int reports)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		if (reports)
			report();
		exit(0);	/* a normal exit: our destructor runs here too */
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";

	if (!strcmp(what, "report")) {
		report();
		printf("clean child exited %d; ", child_status(0));
	} else if (!strcmp(what, "child-reports")) {
		printf("reporting child exited %d; ", child_status(1));
	}
	printf("buffered, no newline");	/* stdout is a pipe: flushed at exit */
	return 0;
}
