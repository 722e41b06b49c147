/* SPDX-License-Identifier: MIT */
/*
 * sink.c - where reports go (log_path): stderr, a file per process, or
 * syslog.  Called with the report lock held, from any context a report
 * runs in (a signal handler, a loader callback): system calls only.
 *
 * A log file PREFIX.<pid> is opened on the first report, moved to a high
 * descriptor so that a daemon closing and reusing its low ones does not
 * write into ours, checked before each write, and opened anew in a forked
 * child.  Opening never blocks and never follows a symbolic link: each
 * directory of the path is opened in turn with O_NOFOLLOW, the file itself
 * with O_NOFOLLOW | O_NONBLOCK (a FIFO without a reader fails at once, one
 * with a reader is refused below), created with mode 0600.  It must then be
 * a regular file owned by the effective user that no one else may read or
 * write, with no other name (a hard link planted as PREFIX.<pid> would make
 * us append to the file it names): a file planted beforehand is refused,
 * not appended to.  Whatever
 * is refused costs one line, and reports go to stderr: nothing is lost.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "report.h"

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
	if (!odebug_opt_str.log_path[0] || !strcmp(odebug_opt_str.log_path, "stderr"))
		sink = SINK_STDERR;
	else if (!strcmp(odebug_opt_str.log_path, "syslog"))
		sink = SINK_SYSLOG;
	else
		sink = SINK_FILE;
}

/*
 * Open the directory holding @path's last component, following no
 * symbolic link; *@leaf gets that component.  Returns a descriptor,
 * AT_FDCWD for a bare name, or -1 with errno set (ELOOP for a link).
 */
static int open_parent(char *path, char **leaf)
{
	int dir = AT_FDCWD;
	char *name = path, *slash;

	if (*name == '/') {
		dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dir < 0)
			return -1;
		while (*name == '/')
			name++;
	}
	while ((slash = strchr(name, '/'))) {
		int next;

		*slash = '\0';
		next = openat(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			struct stat st;
			int err = errno;

			if (err == ENOTDIR && !fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) &&
			    S_ISLNK(st.st_mode))
				err = ELOOP;
			*slash = '/';
			if (dir >= 0)
				close(dir);
			errno = err;
			return -1;
		}
		*slash = '/';
		if (dir >= 0)
			close(dir);
		dir = next;
		for (name = slash + 1; *name == '/'; name++)
			;
	}
	*leaf = name;
	return dir;
}

/* Why the opened file cannot be our log, or NULL when it can. */
static const char *refuse(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return strerrorname_np(errno);
	if (!S_ISREG(st.st_mode))
		return "not a regular file";
	if (st.st_uid != geteuid())
		return "owned by another user";
	if (st.st_mode & (S_IRWXG | S_IRWXO))
		return "open to other users";
	if (st.st_nlink > 1)	/* a link made to another file of ours */
		return "has other hard links";
	log_dev = st.st_dev;
	log_ino = st.st_ino;
	return NULL;
}

static void open_log(void)
{
	char path[ODEBUG_OPT_STRLEN + 24], *leaf = NULL;
	const char *why = NULL;
	struct odebug_buf b;
	int dir, fd = -1, high;

	odebug_buf_init_mem(&b, path, sizeof(path) - 1);
	odebug_puts(&b, odebug_opt_str.log_path);
	odebug_putc(&b, '.');
	odebug_put_dec(&b, (unsigned long)getpid());
	path[b.len] = '\0';

	log_pid = getpid();
	dir = open_parent(path, &leaf);
	if (dir >= 0 || dir == AT_FDCWD) {
		fd = openat(dir, leaf, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
			    O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0600);
		if (fd < 0)
			why = strerrorname_np(errno);
		if (dir >= 0)
			close(dir);
	} else {
		why = strerrorname_np(errno);
	}
	if (fd >= 0 && (why = refuse(fd))) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		static char quoted[ODEBUG_QUOTE_PATH_LEN];	/* under the report lock */

		log_failed = true;
		odebug_message("cannot open log file ",
			       odebug_quote_n(quoted, ODEBUG_QUOTE_PATH_KEEP, path, strlen(path)),
			       " (", why ? why : "error", "); reports go to stderr", (char *)NULL);
		return;
	}
	fcntl(fd, F_SETFL, O_APPEND);	/* a regular file: blocking writes again */
	high = fcntl(fd, F_DUPFD_CLOEXEC, FD_FLOOR);
	if (high >= 0) {
		close(fd);
		fd = high;
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
	static ODEBUG_LARGE char msg[4096];
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
	if (sink == SINK_SYSLOG && !strcmp(odebug_opt_str.log_format, "json"))
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
