/* SPDX-License-Identifier: MIT */
/*
 * notice-bug.c - a session used after its last put.
 *
 * A queued notice holds a reference to its session.  notice_deliver() drops
 * that reference before its last use of the session; when the user has
 * logged out meanwhile, it was the last reference: the session is destroyed
 * and its slot is back in the pool when the notice is written into it.
 * The write lands on the pool's free-list link.  Without libodebug the
 * output looks right, and the pool aborts two logins later, in code that
 * did nothing wrong.  With ODEBUG=1 the send is reported ("activate
 * destroyed", notice_deliver() in the backtrace) and refused, and the
 * program runs to its end.
 */
#include <stdio.h>
#include <stdlib.h>

#include "session.h"

struct notice {
	struct session *s;
	const char *text;
};

void print_notice(struct session *s, const char *text);
void print_notice(struct session *s, const char *text)
{
	printf("[%s, session %d] %s\n", s->user, s->id, text);
}

struct notice *notice_queue(struct session *s, const char *text);
struct notice *notice_queue(struct session *s, const char *text)
{
	struct notice *n = malloc(sizeof(*n));

	if (!n)
		abort();
	n->s = session_get(s);
	n->text = text;
	return n;
}

/* The bug: the reference goes before the last use of the session. */
void notice_deliver(struct notice *n);
void notice_deliver(struct notice *n)
{
	session_put(n->s);
	session_send(n->s, n->text);
	free(n);
}

int main(void)
{
	struct session *alice, *bob, *carol;
	struct notice *n;

	setvbuf(stdout, NULL, _IONBF, 0);
	alice = session_open("alice", print_notice);
	session_send(alice, "welcome");
	n = notice_queue(alice, "your export is ready");
	session_put(alice);		/* alice logs out */
	notice_deliver(n);

	bob = session_open("bob", print_notice);
	carol = session_open("carol", print_notice);
	if (!bob || !carol)
		return 1;
	session_send(bob, "welcome");
	session_send(carol, "welcome");
	session_put(bob);
	session_put(carol);
	printf("done\n");
	return 0;
}
