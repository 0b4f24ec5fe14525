#pragma once

// What changes when the tests run in an AIRLOCK_SANITIZE build (docs/testing.md,
// "Sanitizers"): AddressSanitizer maps terabytes of shadow memory and quarantines freed blocks,
// so memory figures (RSS growth, the gateway's RLIMIT_DATA, which that build does not set) say
// nothing about our code there, and it takes a crash signal for itself (a report, not a core).
// Those checks run in the normal build; the sanitized run skips them with this macro.

#include <QTest>

namespace airlock::test {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

/// Wall-clock bounds of tests grow by this factor in the sanitized build (-O1, checks on
/// every access): a bound there still says "promptly", just for slower code.
inline constexpr int kSanitizerSlowdown = kSanitized ? 6 : 1;

} // namespace airlock::test

/// Skips the rest of the test function in the sanitized build, saying why.
#define AIRLOCK_SKIP_WHEN_SANITIZED(why)                                                           \
    do {                                                                                           \
        if constexpr (airlock::test::kSanitized)                                                   \
            QSKIP(why);                                                                            \
    } while (false)
