/* SPDX-License-Identifier: MIT */
/*
 * odebug-module.h - what an annotation module (modules/README.md) gives
 * libodebug: its name and its hooks, in one exported descriptor.
 *
 * libodebug loads libodebug-<name>.so when the library it serves is in the
 * process, resolves each hook's real function in that library, and points
 * every object's calls to the hooked functions at the wrappers (their GOT
 * slots).  Shared by lib/checks/modules.c and the modules; not installed.
 */
#ifndef ODEBUG_MODULE_H
#define ODEBUG_MODULE_H

/* Bumped on any change to the structures below. */
#define ODEBUG_MODULE_ABI	5

#define ODEBUG_MODULE_EXPORT	__attribute__((visibility("default")))

/*
 * One function of the served library.  @real is set to the library's own
 * definition before any call is redirected; @wrapper NULL: only resolved
 * (a function the module calls but does not wrap).
 */
struct odebug_hook {
	const char *symbol;
	void *wrapper;
	void **real;
};

/*
 * A kind of watch a module reports (odebug_services.watch_begin): the
 * served library polls a descriptor for the program (a GLib unix-fd
 * source, a libevent event, a libuv poll handle).  Static in the module.
 */
struct odebug_watch_type {
	const char *owner;	/* the holder line's name: "GLib fd source" */
	const char *how;	/* the call that began it: "g_unix_fd_add" */
	const char *remover;	/* what ends it: "g_source_remove()" */
	/*
	 * Asked at a close of @fd that meets a watch of @owner: does the
	 * library still poll @fd for it?  The library's own word, read now
	 * (a watch it ended unseen is not live); *@id may be refreshed (0:
	 * none, the holder line names @owner's address).  Same context as
	 * describe (reads only), from a close() anywhere in the program.
	 */
	bool (*live)(const void *owner, int fd, unsigned long *id);
	/*
	 * Optional: the served library's objects, by file name up to the
	 * version ("libgio-2.0.so"), NULL-terminated.  A close whose culprit
	 * frame (the first outside libc) is in one of them is the library's
	 * own (GIO closing a socket before it destroys the socket's source):
	 * made, not reported, and it ends the watches of that descriptor.
	 * Asked only at a close that meets a live watch.
	 */
	const char *const *own_code;
	/*
	 * Optional: for a library whose own code closes a descriptor and
	 * ends its watch right after (libevent's DNS server and HTTP
	 * connections), an order nothing at the close tells from a watch
	 * left live.  A close that meets a live watch of this type is made,
	 * its stack recorded, and judged at the closing thread's next poll
	 * made by @own_code while loop_here() says @owner's loop runs on
	 * this thread: a watch still live then is reported, with the
	 * close's stack.  (@own_code then names the code whose polls judge;
	 * no close is the library's own.)  Reads only.
	 */
	bool (*loop_here)(const void *owner);
	/*
	 * Optional, with loop_here: that report's fixup, called from the
	 * poll before it is made: the library stops polling for @owner
	 * (true: it did).
	 */
	bool (*stop)(const void *owner);
};

/*
 * What libodebug offers a module (odebug_module.services), fixed for the
 * process.  @version counts the members: a member added later comes with
 * a higher version, and a module reads only those its version has.
 */
#define ODEBUG_SERVICES_VERSION	1
struct odebug_services {
	unsigned int version;
	/*
	 * @owner (of @type, named by @id when not 0) now watches @fd: a
	 * close() of @fd while the type's live() says so is reported at that
	 * close, with the owner on the holder line, and not made.  Idempotent.
	 */
	void (*watch_begin)(int fd, const void *owner, unsigned long id,
			    const struct odebug_watch_type *type);
	/*
	 * @owner's watch of @fd ended; @fd -1: every descriptor @owner
	 * watches (its memory is going: from free()'s path, lockless).
	 */
	void (*watch_end)(int fd, const void *owner);
};

struct odebug_module {
	unsigned int abi;		/* ODEBUG_MODULE_ABI */
	const char *name;		/* "libevent": libodebug-libevent.so */
	const struct odebug_hook *hooks;	/* ends with a NULL symbol */
	/* Optional: called once the reals are set, before any redirection. */
	void (*attach)(void);
	/*
	 * Optional: the report's "ODEBUG: holder:" line for an object of one
	 * of the module's descriptors (who holds it, in what state), written
	 * into @buf (at most @cap bytes, terminated); false: not the module's
	 * descriptor, or nothing to say.  Called on the report path like
	 * debug_hint (no lock held, the object's memory not yet released):
	 * reads and string copies only, no allocation, no lock.
	 */
	bool (*describe)(const struct debug_obj_descr *descr, void *addr, char *buf,
			 size_t cap);
	/*
	 * Optional: asked before an ACTIVE object of one of the module's
	 * descriptors is reported (its memory released, its frame returned,
	 * its module unloaded, or at exit), so that liveness is the served
	 * library's word and not a mirror of it: true when the library no
	 * longer holds the object (the tracker then goes silently); false
	 * when it still does, or when @descr is not the module's.  With
	 * @gone true the object's bytes may already be reused or unmapped:
	 * nothing of them may be read, the module answers from its own
	 * record, and one with no record says true (where it cannot tell,
	 * nothing is reported).  Same context as describe: reads, and
	 * lockless stores to the module's own memory (forgetting the object).
	 */
	bool (*released)(const struct debug_obj_descr *descr, void *addr, bool gone);
	/*
	 * Optional: libodebug's services, given once before attach (only to a
	 * module libodebug loads itself; a preloaded variant gets none).
	 */
	void (*services)(const struct odebug_services *s);
};

#endif
