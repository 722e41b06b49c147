/* SPDX-License-Identifier: MIT */
/*
 * Torture of the report path where the symboliser cannot run or answer
 * (RELIABILITY.md, "Sandboxes, symbolisers, sanitizers and debuggers";
 * cancellation: "Signal handlers, small stacks and cancellation").  Each scenario loops, bounded in count and time,
 * with a watchdog: a hang fails instead of blocking the suite.  Prints
 * "N passed, N failed".
 *
 *   torture-sandbox seccomp	fresh processes install a seccomp filter
 *				that kills on clone without CLONE_THREAD, fork
 *				and vfork (clone3 fails with ENOSYS), in one
 *				thread first, then in the main thread, and
 *				report from three threads: every report is
 *				printed with module+offset frames and the
 *				process exits normally
 *   torture-sandbox cancel	threads report (the symboliser is slow) and
 *				are cancelled; then another thread's report
 *				must complete
 *   torture-sandbox silent	a symboliser that never answers: 5 reports
 *				cost one timeout in all, and no process it
 *				started (nor its child) is left, not even a
 *				zombie
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TORTURE_TYPE "torture_sandbox"
#include "torture.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A run that hangs is a failure, not a stuck CI job. */
static void *watchdog(void *arg)
{
	sleep((unsigned int)(uintptr_t)arg);
	printf("FAIL: hung for %u s\n", (unsigned int)(uintptr_t)arg);
	printf("%d passed, %d failed\n", passed, failed + 1);
	fflush(stdout);
	_exit(1);
	return NULL;
}

static void start_watchdog(unsigned int seconds)
{
	pthread_t t;

	pthread_create(&t, NULL, watchdog, (void *)(uintptr_t)seconds);
	pthread_detach(t);
}

/* One "free active" report (fixed up): an active object in a freed block. */
static void free_active(void)
{
	char *p = malloc(64);

	debug_object_init(p, &descr);
	debug_object_activate(p, &descr);
	free(p);
}

/* --- a seccomp sandbox ---------------------------------------------------- */

#if defined(__x86_64__)
#define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define ARCH AUDIT_ARCH_AARCH64
#endif

#ifdef ARCH
#define KILL	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS)
#define ALLOW	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define IS(nr)	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1)

/*
 * The usual policy: threads yes, processes no.  clone3 fails with ENOSYS
 * (its flags are behind a pointer a filter cannot read), so glibc falls
 * back to clone, whose flags it can.  Arguments are read as the low word
 * of args[0] (little-endian targets only, as ARCH is).
 */
static int install_filter(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0),
		KILL,
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		IS(__NR_clone3),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
#ifdef __NR_fork
		IS(__NR_fork),
		KILL,
#endif
#ifdef __NR_vfork
		IS(__NR_vfork),
		KILL,
#endif
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 1, 0),
		ALLOW,
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1),
		ALLOW,
		KILL,
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

static void *report_thread(void *arg)
{
	(void)arg;
	free_active();
	return NULL;
}

/* A filter of this thread's only (no TSYNC): the main thread's status says 0. */
static void *filtered_thread(void *arg)
{
	if (install_filter())
		return (void *)1;
	return report_thread(arg);
}

/*
 * 1 report from a thread that filtered itself alone, then 3 from this
 * thread under its own filter, 1 from a thread started in the sandbox.
 */
static void sandboxed_child(int out)
{
	void *ret = NULL;
	pthread_t t;
	int i;

	dup2(out, 2);
	if (pthread_create(&t, NULL, filtered_thread, NULL) || pthread_join(t, &ret))
		_exit(5);
	if (ret || install_filter())
		_exit(77);
	for (i = 0; i < 3; i++)
		free_active();
	if (pthread_create(&t, NULL, report_thread, NULL) || pthread_join(t, NULL))
		_exit(5);
	_exit(0);
}

/* @text's lines holding @needle. */
static int count(const char *text, const char *needle)
{
	int n = 0;

	for (; (text = strstr(text, needle)); text += strlen(needle))
		n++;
	return n;
}

static void seccomp_sandbox(void)
{
	static char out[256 * 1024];
	double end = now() + 10;
	int i, ok = 0;

	start_watchdog(120);
	for (i = 0; i < 20 || (i < 50 && now() < end); i++) {
		int fd[2], status = 0;
		size_t len = 0;
		ssize_t n;
		pid_t pid;

		if (pipe(fd))
			abort();
		pid = fork();
		if (pid == 0) {
			close(fd[0]);
			sandboxed_child(fd[1]);
		}
		close(fd[1]);
		while (len < sizeof(out) - 1 &&
		       (n = read(fd[0], out + len, sizeof(out) - 1 - len)) > 0)
			len += (size_t)n;
		out[len] = '\0';
		close(fd[0]);
		waitpid(pid, &status, 0);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
			printf("seccomp: cannot install a filter here: skipped\n");
			exit(77);
		}
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "sandboxed process %d: status %#x (SIGSYS is %d)", i, status, SIGSYS);
		CHECK(count(out, "ODEBUG: free active") == 5,
		      "process %d printed %d reports of 5:\n%s", i,
		      count(out, "ODEBUG: free active"), out);
		/* module+offset: "#0 0x... in ?? (/path/torture-sandbox+0x...)" */
		CHECK(count(out, " in ?? (/") >= 5 && !strstr(out, "slow_symbolizer_frame"),
		      "process %d: frames not module+offset:\n%s", i, out);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			break;
		ok++;
	}
	printf("seccomp: %d sandboxed processes, 5 reports each, module+offset frames\n", ok);
}
#else
static void seccomp_sandbox(void)
{
	printf("seccomp: no filter for this architecture: skipped\n");
	exit(77);
}
#endif

/* --- cancellation during reports ------------------------------------------ */

static volatile long cancelled_reports;

static void *reporting_loop(void *arg)
{
	for (;;) {
		free_active();	/* no cancellation point outside the report */
		cancelled_reports++;
		pthread_testcancel();
	}
	return arg;
}

/*
 * With the asynchronous type a cancel acts wherever the thread is: it
 * reports on a static object (no malloc, which a cancel must not
 * interrupt), so nearly all its time is inside the report.
 */
static void *async_reporting_loop(void *arg)
{
	static char obj[64];

	pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
	for (;;) {
		debug_object_init(obj, &descr);
		debug_object_activate(obj, &descr);
		debug_check_no_obj_freed(obj, sizeof(obj));	/* fixed up */
		cancelled_reports++;
	}
	return arg;
}

/*
 * Each round a thread reports in a loop, sitting mostly in the wait for the
 * slow symboliser, and is cancelled there or wherever it is (deferred and
 * asynchronous types in turn); then this thread's report must complete,
 * which it cannot if the cancelled thread left the report lock held.
 */
static void cancel_reports(void)
{
	double end = now() + 10;
	int rounds;

	start_watchdog(60);
	free_active();		/* the symboliser is started */
	for (rounds = 0; rounds < 20 && now() < end; rounds++) {
		pthread_t t;
		void *ret = NULL;

		pthread_create(&t, NULL, rounds % 2 ? async_reporting_loop : reporting_loop, NULL);
		usleep(20000 + (unsigned int)(rounds * 7919) % 200000);
		pthread_cancel(t);
		pthread_join(t, &ret);
		CHECK(ret == PTHREAD_CANCELED, "round %d: the thread was not cancelled", rounds);
		free_active();
	}
	CHECK(rounds >= 5, "only %d rounds in 10 s", rounds);
	printf("cancel: %d threads cancelled while reporting (%ld reports), each followed "
	       "by a report from another thread\n", rounds, cancelled_reports);
}

/* --- a symboliser that never answers --------------------------------------- */

/* Children of this process, any thread's (zombies included). */
static int children(char *list, size_t cap)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	size_t len = 0;
	int n = 0;

	list[0] = '\0';
	while (d && (e = readdir(d))) {
		char path[300], buf[512];
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/children", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fscanf(f, "%511s", buf) == 1) {
			n++;
			len += (size_t)snprintf(list + len, len < cap ? cap - len : 0, " %s", buf);
		}
		fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

/* Is @pid a process that still runs (not gone, not a zombie)? */
static bool running(int pid)
{
	char path[64], stat[256], *p;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(stat, 1, sizeof(stat) - 1, f);
	fclose(f);
	stat[n] = '\0';
	p = strrchr(stat, ')');
	return p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

static void silent_symbolizer(void)
{
	char record[64], list[512];
	double t0, took;
	int i, pids = 0, left = 0, helper, child;
	FILE *f;

	start_watchdog(90);
	snprintf(record, sizeof(record), "/tmp/odebug-silent-symbolizer.%d", (int)getpid());
	unlink(record);
	t0 = now();
	for (i = 0; i < 5; i++)
		free_active();
	took = now() - t0;
	/* One timeout (20 s), not five. */
	CHECK(took < 30, "5 reports took %.1f s", took);
	CHECK(children(list, sizeof(list)) == 0, "children left:%s", list);
	f = fopen(record, "r");
	while (f && fscanf(f, "%d %d", &helper, &child) == 2) {
		/* SIGKILL acts when the killed process next runs: wait 2 s at most. */
		for (i = 0; i < 200 && (running(helper) || running(child)); i++)
			usleep(10000);
		pids++;
		left += running(helper) + running(child);
		CHECK(!running(helper) && !running(child),
		      "the symboliser %d or its child %d still runs", helper, child);
	}
	if (f)
		fclose(f);
	unlink(record);
	CHECK(pids == 1, "the symboliser was started %d times", pids);
	printf("silent: 5 reports in %.1f s, %d symboliser started, %d processes left\n",
	       took, pids, left);
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	int fd;

	if (!debug_objects_enabled()) {
		printf("run with ODEBUG=1\n");
		return 1;
	}
	if (!strcmp(what, "seccomp")) {
		seccomp_sandbox();
	} else {
		/* The reports themselves are not looked at. */
		fd = open("/dev/null", O_WRONLY);
		dup2(fd, 2);
		close(fd);
		if (!strcmp(what, "cancel")) {
			cancel_reports();
		} else if (!strcmp(what, "silent")) {
			silent_symbolizer();
		} else {
			printf("usage: torture-sandbox seccomp | cancel | silent\n");
			return 2;
		}
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed != 0;
}
