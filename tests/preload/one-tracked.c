/* SPDX-License-Identifier: MIT */
/*
 * free() with one object tracked in the whole process: its fast answers
 * (the span, then the chunk map and masks; lib/table/tracker.h, lib/table/table.c)
 * must still see the object at every position of the block freed, and
 * stay silent for the blocks beside it.  Each case runs in a child of its
 * own, so the object is the only one the process ever tracked and the
 * span is exactly its address.  TAP output, one line per block size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <odebug.h>

static unsigned long fixups;
static const struct debug_obj_descr descr;

static bool fixup_free(void *addr, enum debug_obj_state state)
{
	(void)state;
	fixups++;
	debug_object_deactivate(addr, &descr);
	return true;
}

static const struct debug_obj_descr descr = {
	.name = "one_tracked",
	.fixup_free = fixup_free,
};

static unsigned long warnings(void)
{
	struct debug_objects_stats s;

	debug_objects_get_stats(&s, sizeof(s));
	return s.warnings;
}

/* In a child: blocks before and after are freed silently, the tracked one is caught. */
static int one_case(size_t size, size_t pos)
{
	char *before = malloc(size), *block = malloc(size), *after = malloc(size);
	unsigned long w;

	if (!before || !block || !after)
		return 2;
	debug_object_init(block + pos, &descr);
	debug_object_activate(block + pos, &descr);
	w = warnings();
	free(before);
	free(after);
	if (warnings() != w)
		return 3;	/* a neighbour's free reported */
	free(block);
	if (warnings() != w + 1 || fixups != 1)
		return 4;	/* the object's free missed */
	return 0;
}

static int run(size_t size, size_t pos)
{
	pid_t pid = fork();
	int status;

	if (pid == 0)
		_exit(one_case(size, pos));
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(void)
{
	/* Within one 32-byte cell, one 4 KiB chunk, and over two or more chunks. */
	static const size_t sizes[] = { 24, 1100, 9000 };
	size_t i, pos, n = sizeof(sizes) / sizeof(sizes[0]);
	int fail = 0;

	warnings();	/* started here: the children track their object first */
	printf("1..%zu\n", n);
	for (i = 0; i < n; i++) {
		int rc = 0;

		/* Every byte of the small blocks; of the large one, a prime stride and its last. */
		for (pos = 0; pos < sizes[i] && !rc; pos += sizes[i] > 2048 ? 31 : 1)
			rc = run(sizes[i], pos);
		if (!rc)
			rc = run(sizes[i], sizes[i] - 1), pos = sizes[i];
		if (rc)
			printf("not ok %zu - %zu-byte block, object at byte %zu: status %d\n",
			       i + 1, sizes[i], pos - 1, rc);
		else
			printf("ok %zu - %zu-byte block, objects over the whole block\n",
			       i + 1, sizes[i]);
		fail |= rc;
	}
	return fail != 0;
}
