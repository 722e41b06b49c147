/* SPDX-License-Identifier: MIT */
/*
 * session.h - refcounted sessions from a fixed pool, annotated for
 * libodebug so that any use after the last put is reported.
 */
#ifndef SESSION_H
#define SESSION_H

struct session {
	union {
		struct session *next_free;	/* free: the pool's list, kept in the slot */
		const char *last_notice;	/* open: the last notice sent */
	} u;
	unsigned int refs;
	int id;
	char user[16];
	void (*deliver)(struct session *s, const char *text);
};

/* A new session with one reference, the caller's. */
struct session *session_open(const char *user,
			     void (*deliver)(struct session *s, const char *text));
/* Another reference; NULL when refused (a destroyed session, under ODEBUG). */
struct session *session_get(struct session *s);
/* Drop a reference; the last one destroys the session and frees its slot. */
void session_put(struct session *s);
/* Deliver a notice; -1 when refused. */
int session_send(struct session *s, const char *text);

#endif
