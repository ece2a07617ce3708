// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * A time limit for the tests' spinning loops: threads waiting for a ring to
 * fill or drain give up when it passes, so that a broken protocol fails
 * the test instead of hanging it.
 */
#ifndef XIW_TEST_DEADLINE_H
#define XIW_TEST_DEADLINE_H

#include <chrono>

namespace xiw_test {

class Deadline {
public:
	explicit Deadline(std::chrono::seconds limit = std::chrono::seconds(30))
		: end_(std::chrono::steady_clock::now() + limit)
	{
	}

	[[nodiscard]] bool passed() const
	{
		return std::chrono::steady_clock::now() > end_;
	}

private:
	std::chrono::steady_clock::time_point end_;
};

} // namespace xiw_test

#endif // XIW_TEST_DEADLINE_H
