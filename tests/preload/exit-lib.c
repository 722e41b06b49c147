/* SPDX-License-Identifier: MIT */
/*
 * A library whose destructor saves data to a file.  The
 * program depends on it, so under LD_PRELOAD it is initialised before
 * libodebug and its destructor runs after libodebug's: exitcode=N must not
 * skip it.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "odebug.h"

__attribute__((destructor)) static void save_on_exit(void)
{
	const char *path = getenv("EXIT_LIB_FILE");
	char line[64] = "saved by pid ";
	int fd;

	if (!path)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600);
	if (fd < 0)
		return;
	strcat(line, getpid() % 2 ? "odd\n" : "even\n");
	if (write(fd, line, strlen(line)) < 0)
		abort();
	close(fd);
}

/*
 * One report (an untracked object deactivated).  libodebug's symbols are
 * resolved from the preloaded library: no DT_NEEDED on it, so it does not
 * change the order of initialisation.
 */
void exit_lib_report(void);
void exit_lib_report(void)
{
	static const struct debug_obj_descr d = { .name = "exit_app" };
	static char obj[8];

	debug_object_deactivate(obj, &d);
}
