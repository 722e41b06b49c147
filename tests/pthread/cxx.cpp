// SPDX-License-Identifier: MIT
// C++'s std::mutex, std::recursive_mutex, std::shared_mutex and
// std::condition_variable call the pthread functions: a correct program
// using them is silent (run with exitcode=99: any report fails the test),
// and a std::mutex destroyed while held is reported.
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <queue>
#include <shared_mutex>
#include <thread>
#include <vector>

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "misuse")) {
		auto *m = new std::mutex;
		m->lock();
		delete m;	// "free active": a held std::mutex
		return 0;
	}
	std::mutex m;
	std::recursive_mutex rm;
	std::shared_mutex sm;
	std::condition_variable cv;
	std::queue<int> q;
	long total = 0, reads = 0;
	bool done = false;
	std::vector<std::thread> workers;

	for (int w = 0; w < 3; w++)
		workers.emplace_back([&] {
			for (;;) {
				std::unique_lock<std::mutex> l(m);
				cv.wait(l, [&] { return done || !q.empty(); });
				if (q.empty())
					return;
				int v = q.front();
				q.pop();
				l.unlock();
				std::lock_guard<std::recursive_mutex> a(rm), b(rm);
				{
					std::shared_lock<std::shared_mutex> s(sm);
					reads += v > 0;
				}
				std::unique_lock<std::shared_mutex> x(sm);
				total += v;
			}
		});
	for (int i = 1; i <= 20000; i++) {
		{
			std::lock_guard<std::mutex> l(m);
			q.push(i);
		}
		cv.notify_one();
	}
	{
		std::lock_guard<std::mutex> l(m);
		done = true;
	}
	cv.notify_all();
	for (auto &t : workers)
		t.join();
	std::printf("%ld %ld\n", total, reads);
	return total == 200010000L && reads == 20000 ? 0 : 1;
}
