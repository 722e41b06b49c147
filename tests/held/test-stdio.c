/* SPDX-License-Identifier: MIT */
/*
 * The stdio family of held memory (lib/checks/held/held-stdio.c): a buffer given to
 * a stream with setvbuf, setbuffer or setbuf and freed while the stream
 * is open is "free active" of type stdio_buffer, named at the free; the
 * fixup flushes and makes the stream unbuffered, so everything written
 * reaches the file and the reused block is left alone.  A buffer freed
 * after fclose, freopen or another setvbuf is silent.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "held-test.h"

#define BUFLEN 4096

static char path[64];

static int setup(void **state)
{
	(void)state;
	snprintf(path, sizeof(path), "/tmp/odebug-held-stdio-%d", (int)getpid());
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	return 0;
}

/* The culprit: frees a buffer its stream still uses. */
static __attribute__((noinline)) void buffer_free_open(char *buf)
{
	free(buf);
}

/* Lines @from..@to, as the program writes them. */
static void write_lines(FILE *f, int from, int to)
{
	for (int i = from; i < to; i++)
		fprintf(f, "line %05d of the log\n", i);
}

/* The file holds exactly lines 0..@n, in order. */
static void assert_file_complete(int n)
{
	FILE *f = fopen(path, "r");
	char line[64], want[64];
	int i = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		snprintf(want, sizeof(want), "line %05d of the log\n", i++);
		assert_string_equal(line, want);
	}
	fclose(f);
	assert_int_equal(i, n);
}

/*
 * setvbuf: reported at the free with the stream and its descriptor; the
 * fixup flushes what was buffered and unbuffers the stream, which writes
 * on; the file is complete and the block's new owner keeps its bytes.
 */
static void setvbuf_buffer_freed_open_is_reported_and_flushed(void **state)
{
	char *buf = malloc(BUFLEN), *again, holder[96];
	FILE *f = fopen(path, "w");

	(void)state;
	assert_non_null(f);
	assert_int_equal(setvbuf(f, buf, _IOFBF, BUFLEN), 0);
	write_lines(f, 0, 100);		/* 2.2 KiB: all still in the buffer */
	snprintf(holder, sizeof(holder), "holder: setvbuf buffer of stream %p (fd %d)",
		 (void *)f, fileno(f));
	EXPECT_HELD_REPORT("buffer_free_open", buffer_free_open(buf),
			   "object type: stdio_buffer", holder);
	again = malloc(BUFLEN);
	memset(again, 0x5a, BUFLEN);
	write_lines(f, 100, 1000);
	for (size_t i = 0; i < BUFLEN; i++)
		assert_int_equal((unsigned char)again[i], 0x5a);
	assert_int_equal(fclose(f), 0);
	assert_file_complete(1000);
	free(again);
}

/* setbuffer and setbuf hold the same way (glibc's own calls, not setvbuf). */
static void setbuffer_and_setbuf_are_reported(void **state)
{
	char *buf = malloc(BUFSIZ);
	FILE *f = fopen(path, "w");

	(void)state;
	setbuffer(f, buf, BUFSIZ);
	write_lines(f, 0, 10);
	EXPECT_HELD_REPORT("buffer_free_open", buffer_free_open(buf),
			   "object type: stdio_buffer", "holder: setbuffer buffer of stream");
	write_lines(f, 10, 20);
	fclose(f);
	assert_file_complete(20);

	buf = malloc(BUFSIZ);
	f = fopen(path, "w");
	setbuf(f, buf);
	write_lines(f, 0, 10);
	EXPECT_HELD_REPORT("buffer_free_open", buffer_free_open(buf),
			   "object type: stdio_buffer", "holder: setbuf buffer of stream");
	write_lines(f, 10, 20);
	fclose(f);
	assert_file_complete(20);
}

/* --- must not be reported ------------------------------------------- */

static void released_first_is_silent(void **state)
{
	(void)state;
	EXPECT_SILENT({	/* fclose, then free */
		char *buf = malloc(BUFLEN);
		FILE *f = fopen(path, "w");

		setvbuf(f, buf, _IOFBF, BUFLEN);
		write_lines(f, 0, 10);
		fclose(f);
		free(buf);
	});
	EXPECT_SILENT({	/* another buffer given, then the first freed */
		char *a = malloc(BUFLEN), *b = malloc(BUFLEN);
		FILE *f = fopen(path, "w");

		setvbuf(f, a, _IOFBF, BUFLEN);
		write_lines(f, 0, 10);
		setvbuf(f, b, _IOLBF, BUFLEN);
		free(a);
		fclose(f);
		free(b);
	});
	EXPECT_SILENT({	/* made unbuffered, then freed */
		char *a = malloc(BUFLEN);
		FILE *f = fopen(path, "w");

		setvbuf(f, a, _IOFBF, BUFLEN);
		setvbuf(f, NULL, _IONBF, 0);
		free(a);
		write_lines(f, 0, 10);
		fclose(f);
	});
	EXPECT_SILENT({	/* freopen, then freed */
		char *a = malloc(BUFLEN);
		FILE *f = fopen(path, "w");

		setvbuf(f, a, _IOFBF, BUFLEN);
		write_lines(f, 0, 10);
		f = freopen(path, "r", f);
		free(a);
		fclose(f);
	});
	EXPECT_SILENT({	/* pclose (not interposed: glibc's list says it is gone) */
		char *a = malloc(BUFLEN);
		FILE *f = popen("cat >/dev/null", "w");

		setvbuf(f, a, _IOFBF, BUFLEN);
		fputs("to cat\n", f);
		pclose(f);
		free(a);
	});
}

/* The same memory given again after a correct release, many times. */
static void reused_memory_held_again_is_silent(void **state)
{
	(void)state;
	EXPECT_SILENT({
		for (int i = 0; i < 50; i++) {
			char *buf = malloc(BUFLEN);
			FILE *f = fopen(path, "w");

			setvbuf(f, buf, i % 2 ? _IOLBF : _IOFBF, BUFLEN);
			write_lines(f, 0, 5);
			fclose(f);
			free(buf);
		}
	});
}

/* A fork child's free of its copy of the buffer: not its stream's record. */
static void fork_child_is_silent(void **state)
{
	char *buf = malloc(BUFLEN);
	FILE *f = fopen(path, "w");
	int status;
	pid_t pid;

	(void)state;
	setvbuf(f, buf, _IOFBF, BUFLEN);
	fflush(f);
	EXPECT_SILENT({
		pid = fork();
		if (pid == 0) {
			stats_mark();
			free(buf);
			_exit(stats_delta().warnings ? 1 : 0);
		}
		waitpid(pid, &status, 0);
	});
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_SILENT({
		fclose(f);
		free(buf);
	});
}

/*
 * fcloseall() closes every stream, the one given a buffer and never used
 * included: their buffers are the program's again (in a child, which
 * keeps the suite's own streams out of it).  What was written reaches
 * the file.
 */
static void fcloseall_ends_every_streams_hold(void **state)
{
	char line[8] = "";
	int status;
	pid_t pid;
	FILE *f;

	(void)state;
	EXPECT_SILENT({
		pid = fork();
		if (pid == 0) {
			char *used = malloc(BUFLEN), *unused = malloc(BUFLEN);
			FILE *w = fopen(path, "w"), *r = fopen("/dev/null", "r");

			setvbuf(w, used, _IOFBF, BUFLEN);
			setvbuf(r, unused, _IOFBF, BUFLEN);
			fputs("x\n", w);
			stats_mark();
			fcloseall();
			free(used);
			free(unused);
			_exit(stats_delta().warnings ? 1 : 0);
		}
		waitpid(pid, &status, 0);
	});
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof(line), f));
	fclose(f);
	assert_string_equal(line, "x\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(setvbuf_buffer_freed_open_is_reported_and_flushed),
		cmocka_unit_test(setbuffer_and_setbuf_are_reported),
		cmocka_unit_test(released_first_is_silent),
		cmocka_unit_test(reused_memory_held_again_is_silent),
		cmocka_unit_test(fork_child_is_silent),
		cmocka_unit_test(fcloseall_ends_every_streams_hold),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
