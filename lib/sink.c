/* SPDX-License-Identifier: MIT */
/*
 * sink.c - where reports go (log_path): stderr, a file per process, or
 * syslog.  Called with the report lock held.
 *
 * A log file PREFIX.<pid> is opened on the first report (O_APPEND,
 * O_CLOEXEC, O_NOFOLLOW, mode 0600), moved to a high descriptor so that a
 * daemon closing and reusing its low ones does not write into ours, checked
 * before each write, and opened anew in a forked child.  If it cannot be
 * opened, one line says so and reports go to stderr: nothing is lost.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "internal.h"

/* The log file's descriptor is moved at or above this, out of the way of
 * programs that assume small numbers (dup2 onto 3, select() sets). */
#define FD_FLOOR	512

static int log_fd = -1;
static pid_t log_pid;
static dev_t log_dev;
static ino_t log_ino;
static bool log_failed, syslog_open;

static bool to_syslog(void)
{
	return !strcmp(odebug_opt.log_path, "syslog");
}

static bool to_stderr(void)
{
	return !odebug_opt.log_path[0] || !strcmp(odebug_opt.log_path, "stderr");
}

static void open_log(void)
{
	char path[ODEBUG_OPT_STRLEN + 24];
	struct odebug_buf b;
	struct stat st;
	int fd, high;

	odebug_buf_init_mem(&b, path, sizeof(path) - 1);
	odebug_puts(&b, odebug_opt.log_path);
	odebug_putc(&b, '.');
	odebug_put_dec(&b, (unsigned long)getpid());
	path[b.len] = '\0';

	log_pid = getpid();
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		const char *why = strerrorname_np(errno);

		log_failed = true;
		odebug_message("cannot open log file ", path, " (", why ? why : "error",
			       "); reports go to stderr", (char *)NULL);
		return;
	}
	high = fcntl(fd, F_DUPFD_CLOEXEC, FD_FLOOR);
	if (high >= 0) {
		close(fd);
		fd = high;
	}
	if (fstat(fd, &st) == 0) {
		log_dev = st.st_dev;
		log_ino = st.st_ino;
	}
	log_fd = fd;
}

/* Our descriptor, if it is still the file we opened (and ours, not a parent's). */
static int log_file(void)
{
	struct stat st;

	if (log_fd >= 0 && log_pid != getpid()) {
		close(log_fd);		/* the parent's file: the child gets its own */
		log_fd = -1;
		log_failed = false;
	}
	if (log_fd >= 0 && (fstat(log_fd, &st) || st.st_dev != log_dev ||
			    st.st_ino != log_ino))
		log_fd = -1;		/* closed or reused by the host */
	if (log_fd < 0 && !log_failed)
		open_log();
	return log_fd >= 0 ? log_fd : 2;
}

static void syslog_lines(const char *text, size_t len)
{
	char line[1024];

	if (!syslog_open) {
		openlog(program_invocation_short_name, LOG_PID, LOG_USER);
		syslog_open = true;
	}
	while (len) {
		const char *nl = memchr(text, '\n', len);
		size_t n = nl ? (size_t)(nl - text) : len;
		size_t keep = n < sizeof(line) - 1 ? n : sizeof(line) - 1;

		memcpy(line, text, keep);
		line[keep] = '\0';
		syslog(LOG_ERR, "%s", line);
		if (!nl)
			break;
		text += n + 1;
		len -= n + 1;
	}
}

/**
 * odebug_sink_write - deliver one whole report (one or more lines)
 */
void odebug_sink_write(const char *text, size_t len)
{
	int saved = errno;

	odebug_guard_enter();
	if (to_stderr())
		odebug_write(2, text, len);
	else if (to_syslog())
		syslog_lines(text, len);
	else
		odebug_write(log_file(), text, len);
	odebug_guard_exit();
	errno = saved;
}
