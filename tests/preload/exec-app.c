/* SPDX-License-Identifier: MIT */
/*
 * The end-of-run output before an exec, checked by check-exec.sh.
 *
 *   exec-app FUNCTION      one report, then FUNCTION (execve, execv, execvp,
 *                          execvpe, execl, execle, execlp, fexecve, execveat)
 *                          runs "exec-app target A B"
 *   exec-app fail          one report, an execve that fails, exit
 *   exec-app fail-report   one report, an execve that fails, one more
 *                          report (another cause), exit
 *   exec-app vfork         one report; a vfork()ed child execs the target;
 *                          the parent waits and exits
 *   exec-app fork          one report, an active object, then the same
 *                          with fork(); fork-report: the child reports too
 *                          before its exec
 *   exec-app target A B    prints "target: A B env=EXEC_ENV" and exits 0
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "odebug.h"

static const struct debug_obj_descr descr = { .name = "exec_app" };
static char obj[2][8];

/* One report per call site: deactivating an object never initialised. */
__attribute__((noinline)) static void report(int which)
{
	debug_object_deactivate(obj[which], &descr);
}

static char self[4096];
static char *const args[] = { "exec-app", "target", "a b", "c", NULL };
static char *const env[] = { "EXEC_ENV=explicit", NULL };

static int run(const char *f)
{
	static char path[sizeof(self) + 16];

	/* PATH: a directory without the program first, then its own. */
	snprintf(path, sizeof(path), "/nonexistent:%.*s", (int)(strrchr(self, '/') - self), self);
	setenv("PATH", path, 1);
	setenv("EXEC_ENV", "inherited", 1);
	if (!strcmp(f, "execve"))
		execve(self, args, env);
	else if (!strcmp(f, "execv"))
		execv(self, args);
	else if (!strcmp(f, "execvp"))
		execvp("exec-app", args);
	else if (!strcmp(f, "execvpe"))
		execvpe("exec-app", args, env);
	else if (!strcmp(f, "execl"))
		execl(self, "exec-app", "target", "a b", "c", (char *)NULL);
	else if (!strcmp(f, "execle"))
		execle(self, "exec-app", "target", "a b", "c", (char *)NULL, env);
	else if (!strcmp(f, "execlp"))
		execlp("exec-app", "exec-app", "target", "a b", "c", (char *)NULL);
	else if (!strcmp(f, "fexecve"))
		fexecve(open(self, O_RDONLY | O_CLOEXEC), args, env);
	else if (!strcmp(f, "execveat"))
		execveat(AT_FDCWD, self, args, env, 0);
	else
		return 2;
	printf("%s failed: %s\n", f, strerror(errno));
	return 1;
}

/* An exec that fails: glibc's result and errno, unchanged. */
static void fail(void)
{
	int r;

	errno = 0;
	r = execve("/nonexistent/exec-app", args, env);
	printf("failed exec: %d %s\n", r, strerrorname_np(errno));
	fflush(stdout);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	ssize_t n;
	pid_t pid;
	int status;

	if (!strcmp(what, "target")) {
		printf("target: %s %s env=%s\n", argc > 2 ? argv[2] : "",
		       argc > 3 ? argv[3] : "", getenv("EXEC_ENV"));
		fflush(stdout);		/* before this image's own exit output */
		return 0;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return 2;
	self[n] = '\0';
	report(0);
	if (!strcmp(what, "fail")) {
		fail();
		return 0;
	}
	if (!strcmp(what, "fail-report")) {
		fail();
		report(1);
		return 0;
	}
	if (!strncmp(what, "fork", 4)) {
		static char live[8];	/* active in parent and child */

		debug_object_init(live, &descr);
		debug_object_activate(live, &descr);
		pid = fork();
		if (pid == 0) {
			if (!strcmp(what, "fork-report"))
				report(1);
			execve(self, args, env);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid)
			return 2;
		printf("child exited %d\n", WEXITSTATUS(status));
		fflush(stdout);
		return 0;
	}
	if (!strcmp(what, "vfork")) {
		pid = vfork();
		if (pid == 0) {
			execve(self, args, env);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, &status, 0) != pid)
			return 2;
		printf("child exited %d\n", WEXITSTATUS(status));
		fflush(stdout);
		return 0;
	}
	return run(what);
}
