/* SPDX-License-Identifier: MIT */
/*
 * interpose.h - defining an interposer of a versioned libc function.
 *
 * INTERPOSE(ret, name, tag, version, at, params, args, impl) defines
 * odebug_i_<name>_<tag>, exported as <name><at> (at: "@@GLIBC_2.34" for
 * the default version, "@GLIBC_2.2.5" for an older one), whose body is
 * impl(next, args...): next is the same function at the same version in
 * the next object (glibc, or an interceptor before it: odebug_next_at()).
 * Until found, next is a stub that finds it; our constructor finds them
 * all, so that later calls (from a signal handler, say) never reach the
 * loader.
 */
#ifndef ODEBUG_INTERPOSE_H
#define ODEBUG_INTERPOSE_H

#include "builtin.h"
#include "next.h"	/* ODEBUG_V_BASE, glibc's baseline node */

/* glibc's version nodes on this architecture. */
#ifdef __x86_64__
#define ODEBUG_V_COND "GLIBC_2.3.2"	/* the pre-2.3.2 condvar ABI is left alone */
#else
#define ODEBUG_V_COND ODEBUG_V_BASE
#endif

struct odebug_next_entry {
	void **slot;
	const char *name, *version;
};
void odebug_next_resolve(const struct odebug_next_entry *e);

#define ODEBUG_ARGS(...) __VA_ARGS__
/* ", args" after next, or nothing for a function without parameters. */
#define ODEBUG_NEXT_ARGS(...) , ##__VA_ARGS__

#define INTERPOSE(ret, name, tag, version, at, params, args, impl)		\
	static ret stub_##name##_##tag params;					\
	static ret (*next_##name##_##tag) params = stub_##name##_##tag;		\
	static const struct odebug_next_entry entry_##name##_##tag		\
		__attribute__((used, section("odebug_next"), aligned(8))) =	\
		{ (void **)&next_##name##_##tag, #name, version };		\
	static ret stub_##name##_##tag params					\
	{									\
		odebug_next_resolve(&entry_##name##_##tag);			\
		return next_##name##_##tag args;				\
	}									\
	ret odebug_i_##name##_##tag params ODEBUG_EXPORT;			\
	ret odebug_i_##name##_##tag params					\
	{									\
		return impl(next_##name##_##tag ODEBUG_NEXT_ARGS args);	\
	}									\
	__asm__(".symver odebug_i_" #name "_" #tag "," #name at)

/* The usual pair: the baseline version and glibc 2.34's default. */
#define INTERPOSE_BASE_234(ret, name, params, args, impl)			\
	INTERPOSE(ret, name, base, ODEBUG_V_BASE, "@" ODEBUG_V_BASE, params, args, impl); \
	INTERPOSE(ret, name, 234, "GLIBC_2.34", "@@GLIBC_2.34", params, args, impl)

/* The clock variants: 2.30, and 2.34's default. */
#define INTERPOSE_230_234(ret, name, params, args, impl)			\
	INTERPOSE(ret, name, 230, "GLIBC_2.30", "@GLIBC_2.30", params, args, impl); \
	INTERPOSE(ret, name, 234, "GLIBC_2.34", "@@GLIBC_2.34", params, args, impl)

/* C11 threads: 2.28, and 2.34's default. */
#define INTERPOSE_228_234(ret, name, params, args, impl)			\
	INTERPOSE(ret, name, 228, "GLIBC_2.28", "@GLIBC_2.28", params, args, impl); \
	INTERPOSE(ret, name, 234, "GLIBC_2.34", "@@GLIBC_2.34", params, args, impl)

/* Only the baseline (the pthread_mutex_lock family). */
#define INTERPOSE_BASE(ret, name, params, args, impl)				\
	INTERPOSE(ret, name, base, ODEBUG_V_BASE, "@@" ODEBUG_V_BASE, params, args, impl)

#define ODEBUG_INLINE static inline __attribute__((always_inline))

/*
 * A condition variable's wake (pthread_cond_*, C11 cnd_*) of type @T
 * tracked as @descr: the step, errno kept, then glibc's call.  CHECKING
 * is the including file's test.
 */
#define ODEBUG_WAKE_FN(fn, T, descr, op, opname)				\
	ODEBUG_INLINE int fn(int (*next)(T *), T *c)				\
	{									\
		int saved;							\
										\
		if (likely(!CHECKING))						\
			return next(c);						\
		saved = errno;							\
		odebug_builtin_use(c, descr, op, 0, opname);			\
		errno = saved;							\
		return next(c);							\
	}

/*
 * "dlcaller.c": a dlopen()/dlmopen() searched as the code at return
 * address @ra would have it (its DT_RUNPATH, its $ORIGIN), made by @open
 * (the next definition, with @ctx: dlmopen's namespace).
 */
typedef void *odebug_open_fn(const char *file, int mode, void *ctx);
void *odebug_dlopen_as_caller(odebug_open_fn *open, void *ctx, const char *file, int mode,
			      const void *ra);

#endif /* ODEBUG_INTERPOSE_H */
