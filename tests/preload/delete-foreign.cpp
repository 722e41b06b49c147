// SPDX-License-Identifier: MIT
// C++ delete with an allocator that brings its own operator delete
// (jemalloc, tcmalloc preloaded after libodebug), in every form the
// compiler emits here: plain, sized, aligned, array.
//
//   delete-foreign silent N	N rounds of a correct program: condition
//				variables and mutexes made, used, destroyed
//				and deleted, their memory reused: no report
//   delete-foreign locked N	N deletes of an object holding a locked
//				std::mutex: N "free active" reports
// A watchdog (alarm) ends a hung run.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unistd.h>

struct Job {
	std::mutex m;
	std::condition_variable cv;
	bool done = false;
};

struct alignas(64) Aligned {
	std::mutex m;
	std::condition_variable cv;
};

__attribute__((noinline)) static void use(std::mutex &m, std::condition_variable &cv)
{
	std::unique_lock<std::mutex> lk(m);
	cv.wait_for(lk, std::chrono::microseconds(1));
	cv.notify_all();
}

static void silent(long rounds)
{
	for (long i = 0; i < rounds; i++) {
		Job *j = new Job;		// sized delete
		use(j->m, j->cv);
		delete j;
		Aligned *a = new Aligned;	// aligned (and sized) delete
		use(a->m, a->cv);
		delete a;
		auto *many = new std::condition_variable[3];	// array delete
		std::mutex m;
		use(m, many[i % 3]);
		delete[] many;
		auto *v = new Job[2];		// array of a class with a destructor
		use(v[1].m, v[1].cv);
		delete[] v;
	}
}

struct Holder {
	int id = 1;
	std::mutex m;
};

__attribute__((noinline)) static void drop(Holder *h)
{
	delete h;
	__asm__ volatile("" ::: "memory");
}

static void locked(long rounds)
{
	for (long i = 0; i < rounds; i++) {
		Holder *h = new Holder;

		h->m.lock();
		drop(h);
	}
}

int main(int argc, char **argv)
{
	long rounds = argc > 2 ? std::atol(argv[2]) : 20;

	alarm(60);	// a hang fails (SIGALRM) rather than blocks
	if (argc > 1 && !std::strcmp(argv[1], "silent"))
		silent(rounds);
	else if (argc > 1 && !std::strcmp(argv[1], "locked"))
		locked(rounds);
	else {
		std::printf("usage: delete-foreign silent|locked N\n");
		return 2;
	}
	std::printf("%s: %ld rounds\n", argv[1], rounds);
	return 0;
}
