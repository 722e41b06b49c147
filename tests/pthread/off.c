/* SPDX-License-Identifier: MIT */
/* check_pthread=0 and check_sem=0: nothing built-in is tracked or reported. */
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>

#include "odebug.h"

int main(void)
{
	pthread_mutex_t *m = calloc(1, sizeof(*m));
	sem_t s;
	struct debug_objects_stats st;

	pthread_mutex_lock(m);
	sem_init(&s, 0, 0);
	if (debug_object_get_state(m) != ODEBUG_STATE_NOTAVAILABLE ||
	    debug_object_get_state(&s) != ODEBUG_STATE_NOTAVAILABLE)
		return 1;
	free(m);
	debug_objects_get_stats(&st, sizeof(st));
	return st.warnings == 0 && debug_objects_enabled() ? 0 : 1;
}
