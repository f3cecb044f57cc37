#include "TestSupportStartup.h"

// Defined in TestSupport (Swift, `@_cdecl`): routes the library's log to the tests' capture.
extern void swift_defaults_tests_capture_logs(void);

// Runs when the test binary is loaded, before any test: Swift Testing has no hook that runs
// before every test of every target, and a log handler is chosen once per process.
__attribute__((constructor)) static void capture_logs_before_any_test(void) {
    swift_defaults_tests_capture_logs();
}
