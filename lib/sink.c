/* SPDX-License-Identifier: MIT */
/*
 * sink.c - where reports go (log_path): stderr, a file per process, or
 * syslog.  Called with the report lock held, from any context a report
 * runs in (a signal handler, a loader callback): system calls only.
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "internal.h"

/* The log file's descriptor is moved at or above this, out of the way of
 * programs that assume small numbers (dup2 onto 3, select() sets). */
#define FD_FLOOR	512

static int log_fd = -1;
static pid_t log_pid;
static dev_t log_dev;
static ino_t log_ino;
static bool log_failed;
static int syslog_fd = -1;
static bool syslog_failed;
static enum { SINK_UNSET, SINK_STDERR, SINK_SYSLOG, SINK_FILE } sink;

/* log_path, read once. */
static void choose_sink(void)
{
	if (!odebug_opt.log_path[0] || !strcmp(odebug_opt.log_path, "stderr"))
		sink = SINK_STDERR;
	else if (!strcmp(odebug_opt.log_path, "syslog"))
		sink = SINK_SYSLOG;
	else
		sink = SINK_FILE;
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

/*
 * Our own syslog client: glibc's syslog() formats with stdio and may
 * allocate, and when nothing listens on /dev/log it drops the message
 * without a word.  A datagram per line, "<11>NAME[PID]: LINE" (LOG_USER,
 * LOG_ERR; the logger stamps the time).  When /dev/log cannot be reached,
 * one line says so and reports go to stderr.
 */
static bool syslog_connect(void)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX, .sun_path = "/dev/log" };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof(addr)) == 0) {
		syslog_fd = fd;
		return true;
	}
	if (!syslog_failed) {
		const char *why = strerrorname_np(errno);

		odebug_message("cannot reach syslog at /dev/log (", why ? why : "error",
			       "); reports go to stderr", (char *)NULL);
	}
	syslog_failed = true;
	if (fd >= 0)
		close(fd);
	return false;
}

static bool syslog_send(const char *msg, size_t len)
{
	int tries;

	for (tries = 0; tries < 2; tries++) {
		if (syslog_fd < 0 && !syslog_connect())
			return false;
		if (send(syslog_fd, msg, len, MSG_NOSIGNAL) == (ssize_t)len)
			return true;
		close(syslog_fd);	/* the logger restarted: connect again */
		syslog_fd = -1;
	}
	return false;
}

/* Each line its own message; a line longer than one is split, not cut. */
static bool syslog_lines(const char *text, size_t len)
{
	static char msg[4096];
	struct odebug_buf b;
	size_t head;

	odebug_buf_init_mem(&b, msg, sizeof(msg));
	odebug_puts(&b, "<11>");
	odebug_puts(&b, program_invocation_short_name);
	odebug_putc(&b, '[');
	odebug_put_dec(&b, (unsigned long)getpid());
	odebug_puts(&b, "]: ");
	head = b.len;
	while (len) {
		const char *nl = memchr(text, '\n', len);
		size_t n = nl ? (size_t)(nl - text) : len;

		if (n > sizeof(msg) - head)
			n = sizeof(msg) - head;
		memcpy(msg + head, text, n);
		if (!syslog_send(msg, head + n))
			return false;
		text += n;
		len -= n;
		if (len && *text == '\n') {
			text++;
			len--;
		}
	}
	return true;
}

/* The largest report a sink takes whole: a JSON report is one message. */
size_t odebug_sink_limit(void)
{
	if (sink == SINK_UNSET)
		choose_sink();
	if (sink == SINK_SYSLOG && !strcmp(odebug_opt.log_format, "json"))
		return 4096 - 64;	/* under a logger's usual message limit */
	return (size_t)-1;
}

/**
 * odebug_sink_write - deliver one whole report (one or more lines)
 */
void odebug_sink_write(const char *text, size_t len)
{
	int saved = errno;

	odebug_guard_enter();
	if (sink == SINK_UNSET)
		choose_sink();
	if (sink == SINK_SYSLOG && (syslog_failed || !syslog_lines(text, len)))
		odebug_write(2, text, len);
	else if (sink == SINK_FILE)
		odebug_write(log_file(), text, len);
	else if (sink != SINK_SYSLOG)
		odebug_write(2, text, len);
	odebug_guard_exit();
	errno = saved;
}
