/* SPDX-License-Identifier: MIT */
/*
 * watch.h - an event loop's file descriptor watches, annotated for
 * libodebug: a watch is ACTIVE while it is started (linked in the loop).
 */
#ifndef WATCH_H
#define WATCH_H

struct watch {
	struct watch *next;
	struct watch **pprev;		/* NULL when stopped */
	int fd;
	void (*callback)(struct watch *w);
	unsigned int magic;		/* WATCH_MAGIC while the watch is valid */
};

#define WATCH_MAGIC 0x77746368u

void watch_init(struct watch *w, int fd, void (*callback)(struct watch *w));
void watch_start(struct watch *w);
void watch_stop(struct watch *w);

/* One round of the loop: every started watch's callback runs once. */
void loop_poll(void);
unsigned long watches_started(void);

#endif
