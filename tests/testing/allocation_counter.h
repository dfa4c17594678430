// Counts the heap allocations the calling thread makes between Start and
// Stop. A test binary that links utilityd_allocation_counter has the
// global operator new replaced by one that counts (other threads, and this
// one outside Start/Stop, are not counted).
#ifndef UTILITYD_TESTS_TESTING_ALLOCATION_COUNTER_H_
#define UTILITYD_TESTS_TESTING_ALLOCATION_COUNTER_H_

namespace utilityd::testing {

void StartCountingAllocations();
// The allocations since StartCountingAllocations on this thread.
long StopCountingAllocations();

}  // namespace utilityd::testing

#endif  // UTILITYD_TESTS_TESTING_ALLOCATION_COUNTER_H_
