// Whether the test runs under AddressSanitizer, as GCC (__SANITIZE_ADDRESS__)
// and clang (__has_feature) each say it: the assertions on resident size
// are left out there, ASan's shadow memory and quarantine being none of the
// server's own.
#ifndef UTILITYD_TESTS_TESTING_SANITIZERS_H_
#define UTILITYD_TESTS_TESTING_SANITIZERS_H_

#if defined(__SANITIZE_ADDRESS__)
#define UTILITYD_TESTING_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UTILITYD_TESTING_ASAN 1
#endif
#endif

#endif  // UTILITYD_TESTS_TESTING_SANITIZERS_H_
