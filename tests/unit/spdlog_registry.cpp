// spdlog makes its registry (with the default logger) at its first use, inside libspdlog.so,
// which ThreadSanitizer does not see into: when that first use is a live pull's thread racing
// the test's own thread, the guard of the registry's static is taken where TSan cannot see it
// and every later log call reads like a data race. mlt's main makes it in setup_logging()
// before any thread starts; the unit tests make it here, before any test runs.
#include <spdlog/spdlog.h>

namespace {

const spdlog::logger* const kDefaultLogger = spdlog::default_logger_raw();

}  // namespace
