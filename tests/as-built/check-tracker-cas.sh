#!/bin/sh
# The tracker's lockless protocol lives in one header (lib/table/tracker.h): no
# other file in lib/ or preload/ compares-and-swaps, exchanges or ORs
# atomically, or touches a tracker's word field.  Every other atomic
# read-modify-write must be on the allowlist below, which says what it is on.
# usage: check-tracker-cas.sh SOURCE_ROOT
set -eu
root=$1
owner=lib/table/tracker.h

# file:text on the line.  None of these is a tracker's word.
allow='
lib/base/lock.h:atomic_compare_exchange_strong_explicit(&lock->v
lib/report/group.c:__atomic_compare_exchange_n(&g->key
lib/base/mode.c:__atomic_compare_exchange_n(&state
lib/report/report.c:__atomic_compare_exchange_n(&printed
lib/table/bucket.c:__atomic_compare_exchange_n(stat
lib/checks/held/held-store.c:__atomic_compare_exchange_n(&odebug_holds
lib/checks/held/held.c:__atomic_fetch_or(&odebug_held_fdbits
lib/base/trim.c:__atomic_fetch_or(&trim_state
lib/checks/builtin/builtin.c:__atomic_fetch_or(&odebug_builtin_on
lib/checks/builtin/rwlock-seal.c:__atomic_compare_exchange_n(&odebug_rwlock_seal
lib/base/glibc.h:__atomic_compare_exchange_n(&rw->__data.__pad2
lib/table/stack.c:__atomic_compare_exchange_n(&stacks[i].hi
lib/table/stack.c:!__atomic_compare_exchange_n(&stacks_used
lib/table/descr.c:__atomic_compare_exchange_n(&c->most
lib/report/unwind.c:__atomic_compare_exchange_n(&k->pc
lib/checks/fd/fd.c:__atomic_compare_exchange_n(&odebug_fd_tags
lib/checks/fd/fd.c:__atomic_compare_exchange_n(&odebug_fd_high
lib/checks/fd/fd.c:__atomic_compare_exchange_n(&t[fd]
lib/checks/fd/fdsan.c:__atomic_compare_exchange_n(&t[fd]
lib/checks/fd/watch.c:__atomic_compare_exchange_n(&watches
lib/checks/fd/watch.c:__atomic_compare_exchange_n(&r->owner
lib/checks/fd/watch.c:__atomic_compare_exchange_n(&s[i].owner
lib/checks/fd/watch.c:__atomic_compare_exchange_n(&e->state
lib/checks/fd/watch.c:__atomic_compare_exchange_n(&suspects[i].state
'
rmw='__atomic_compare_exchange|atomic_compare_exchange|cmpxchg|__sync_[a-z_]*compare_and_swap|__sync_lock_test_and_set|__atomic_fetch_or|atomic_fetch_or'

cd "$root"
bad=0
# Every atomic read-modify-write outside the owner: on the allowlist, or an error.
for f in $(find lib preload -name '*.[ch]' | sort); do
	[ "$f" = "$owner" ] && continue
	grep -nE "$rmw" "$f" | grep -vE '^[0-9]+:[[:space:]]*(/?\*|//)' |
	while IFS= read -r line; do
		text=${line#*:}
		ok=0
		for a in $allow; do
			case "$a" in
			"$f":*) case "$text" in *"${a#*:}"*) ok=1 ;; esac ;;
			esac
		done
		if [ $ok = 0 ]; then
			echo "$f:$line: atomic read-modify-write outside $owner" >&2
			echo x
		fi
	done
done | grep -q x && bad=1
# The word itself: only the owner names the field.
if grep -nE '(->|\.)word\b' $(find lib preload -name '*.[ch]' ! -path "$owner") >&2; then
	echo "a tracker's word touched outside $owner" >&2
	bad=1
fi
# The word's bits: only the owner names them.
if grep -nE 'ODEBUG_(WORD_(BUSY|FREED|RETIRED)|STATE_BITS|DESCR_SHIFT|ADDR_SHIFT)\b|odebug_word\(' \
	$(find lib preload -name '*.[ch]' ! -path "$owner") >&2; then
	echo "a tracker's word decoded outside $owner" >&2
	bad=1
fi
exit $bad
